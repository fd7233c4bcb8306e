//! The `--format` flag shared by commands that print results.

use etip_report::OutputFormat;

/// How a command prints its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FormatArg {
    /// Aligned text table.
    #[default]
    Table,
    /// JSON, full precision.
    Json,
    /// CSV with a header row.
    Csv,
    /// Markdown table.
    Markdown,
}

impl From<FormatArg> for OutputFormat {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Table => OutputFormat::Table,
            FormatArg::Json => OutputFormat::Json,
            FormatArg::Csv => OutputFormat::Csv,
            FormatArg::Markdown => OutputFormat::Markdown,
        }
    }
}

pub use etip_report::cell::{first_line, num};

/// Renders a table in a non-JSON format.
pub fn render(table: &etip_report::Table, format: OutputFormat) -> anyhow::Result<String> {
    Ok(etip_report::render(table, format)?)
}
