//! Table cells every report and command formats the same way: a number with a benchmark's
//! decimals (or `-`), and the first line of a detail.

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
