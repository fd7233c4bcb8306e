//! A table of formatted cells and its text, CSV and Markdown renderings.

use crate::ReportError;

/// Horizontal alignment of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Left-aligned (names).
    Left,
    /// Right-aligned (numbers).
    Right,
}

impl Align {
    /// CSS class used by the HTML exporter.
    pub(crate) fn css(self) -> &'static str {
        match self {
            Align::Left => "l",
            Align::Right => "r",
        }
    }
}

/// Column headers and rows of formatted cells.
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with the given columns.
    pub fn new(columns: Vec<(&str, Align)>) -> Self {
        Table {
            headers: columns.iter().map(|(h, _)| (*h).to_owned()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; missing cells are empty. A row with more cells than columns is a mistake of
    /// the caller (a column without a header): debug builds panic, release builds drop the extra
    /// cells.
    pub fn push(&mut self, mut row: Vec<String>) {
        debug_assert!(
            row.len() <= self.headers.len(),
            "a row of {} cells for the {} columns {:?}: {row:?}",
            row.len(),
            self.headers.len(),
            self.headers
        );
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }

    /// Column headers.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    /// Column alignments.
    pub fn aligns(&self) -> &[Align] {
        &self.align
    }

    /// Rows of cells.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Aligned plain text with a rule under the header.
    pub fn to_text(&self) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.headers[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(c, cell)| match self.align[c] {
                    Align::Left => format!("{cell:<w$}", w = widths[c]),
                    Align::Right => format!("{cell:>w$}", w = widths[c]),
                })
                .collect();
            parts.join("  ").trim_end().to_owned() + "\n"
        };
        let mut out = line(&self.headers);
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        out.push_str(&(rule.join("  ") + "\n"));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }

    /// CSV with a header row.
    pub fn to_csv(&self) -> Result<String, ReportError> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&self.headers)?;
        for r in &self.rows {
            w.write_record(r)?;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| ReportError::Csv(e.into_error().into()))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// GitHub-flavoured Markdown; `|` in cells is escaped.
    pub fn to_markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = format!(
            "| {} |\n",
            self.headers
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let rule: Vec<&str> = self
            .align
            .iter()
            .map(|a| match a {
                Align::Left => ":---",
                Align::Right => "---:",
            })
            .collect();
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for r in &self.rows {
            out.push_str(&format!(
                "| {} |\n",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(vec![("name", Align::Left), ("score", Align::Right)]);
        t.push(vec!["a|b".into(), "0.1".into()]);
        t.push(vec!["long-name".into(), "12.25".into()]);
        t
    }

    #[test]
    fn text_is_aligned() {
        assert_eq!(
            sample().to_text(),
            "name       score\n---------  -----\na|b          0.1\nlong-name  12.25\n"
        );
    }

    #[test]
    fn csv_quotes_and_markdown_escapes() {
        assert_eq!(
            sample().to_csv().expect("in-memory"),
            "name,score\na|b,0.1\nlong-name,12.25\n"
        );
        assert_eq!(
            sample().to_markdown(),
            "| name | score |\n|:---|---:|\n| a\\|b | 0.1 |\n| long-name | 12.25 |\n"
        );
    }
}
