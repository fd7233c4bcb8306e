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

/// Formats a number with `decimals` places, or `-` when absent.
pub fn num(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

/// The first line of a detail, at most `chars` characters (empty when absent): a table cell.
pub fn first_line(detail: Option<&str>, chars: usize) -> String {
    detail
        .and_then(|d| d.lines().next())
        .map(|l| l.chars().take(chars).collect())
        .unwrap_or_default()
}

/// Renders a table in a non-JSON format.
pub fn render(table: &etip_report::Table, format: OutputFormat) -> anyhow::Result<String> {
    Ok(match format {
        OutputFormat::Table | OutputFormat::Json => table.to_text(),
        OutputFormat::Csv => table.to_csv()?,
        OutputFormat::Markdown => table.to_markdown(),
    })
}
