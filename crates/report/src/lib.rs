//! Exporters: one [`Table`] of results rendered as aligned text, CSV, Markdown, JSON or a
//! self-contained HTML report ([`html`]) with SVG charts ([`chart`]).
//!
//! The stage reports live here too, one module per report: [`measure`] (`etip measure`'s
//! `report.html`), [`eval`] (`etip eval` and `etip eval-test`) and [`demo`] (`etip demo`).
//!
//! Commands build a [`Table`] (column headers and rows of already formatted cells) for human-readable
//! formats and serialise their own result types for JSON, so that JSON keeps full precision while tables
//! show the precision a benchmark publishes.
//!
//! One module per report built on them: [`audit`] (the tables and the HTML page of `etip audit`).
//!
//! ```
//! use etip_report::{Align, Table};
//! let mut t = Table::new(vec![("submission", Align::Left), ("score", Align::Right)]);
//! t.push(vec!["model-a".into(), "0.2250".into()]);
//! assert_eq!(t.to_markdown(), "| submission | score |\n|:---|---:|\n| model-a | 0.2250 |\n");
//! ```

pub mod audit;
pub mod cell;
pub mod chart;
pub mod demo;
pub mod eval;
pub mod html;
pub mod measure;
mod table;

pub use html::{HtmlReport, Style};
pub use table::{Align, Table};

/// Output formats shared by etip's commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// Aligned plain-text table (the default on a terminal).
    #[default]
    Table,
    /// JSON (full precision).
    Json,
    /// CSV with a header row.
    Csv,
    /// GitHub-flavoured Markdown table.
    Markdown,
}

/// Errors while writing a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// CSV writer failure.
    #[error("cannot write CSV: {0}")]
    Csv(#[from] csv::Error),
    /// JSON serialisation failure.
    #[error("cannot write JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Serialises a value as pretty JSON followed by a newline.
pub fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, ReportError> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    Ok(s)
}

/// Renders a table in a non-JSON format (JSON: the aligned text; commands serialise their own
/// records for JSON).
pub fn render(table: &Table, format: OutputFormat) -> Result<String, ReportError> {
    Ok(match format {
        OutputFormat::Table | OutputFormat::Json => table.to_text(),
        OutputFormat::Csv => table.to_csv()?,
        OutputFormat::Markdown => table.to_markdown(),
    })
}
