//! A self-contained HTML report: headings, paragraphs, tables and inline SVG charts, no scripts and no
//! external resources, so the file can be mailed, archived or opened offline.

use crate::Table;
use std::fmt::Write;

pub use crate::chart::{WeightBar, heatmap, rank_chart, rank_scatter, sr_histogram, weight_bars};

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A visual style of a table row or cell, or of a callout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Greyed out (e.g. rows left out of the verdicts).
    Muted,
    /// Bold (e.g. significant p-values).
    Strong,
    /// A total row, set off from the rows above it.
    Total,
    /// In the colour of the original version ([`crate::chart::ORIGINAL_COLOR`]).
    Original,
    /// In the colour of the patched version ([`crate::chart::PATCHED_COLOR`]).
    Patched,
    /// A warning (callouts).
    Warning,
    /// Kept on one line.
    NoWrap,
}

impl Style {
    fn css(self) -> &'static str {
        match self {
            Style::Muted => "muted",
            Style::Strong => "strong",
            Style::Total => "total",
            Style::Original => "orig",
            Style::Patched => "pat",
            Style::Warning => "warn",
            Style::NoWrap => "nw",
        }
    }
}

/// An anchor name made of ASCII letters, digits, `-` and `_` only.
fn anchor(id: &str) -> String {
    let a: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("s-{a}")
}

/// An HTML document built section by section.
#[derive(Debug, Clone)]
pub struct HtmlReport {
    title: String,
    body: String,
}

impl HtmlReport {
    /// A new report with a title (shown as the page title and the first heading).
    pub fn new(title: &str) -> Self {
        HtmlReport {
            title: title.to_owned(),
            body: String::new(),
        }
    }

    /// Adds a heading of level 2 or 3.
    pub fn heading(&mut self, level: u8, text: &str) {
        let level = level.clamp(2, 3);
        let _ = writeln!(self.body, "<h{level}>{}</h{level}>", escape(text));
    }

    /// Adds a paragraph of plain text.
    pub fn paragraph(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
    }

    /// Adds a table.
    pub fn table(&mut self, table: &Table) {
        self.table_styled(table, |_| None, |_, _| None);
    }

    /// Adds a table with a style per row (`row(r)`) and per cell (`cell(r, c)`), row and column
    /// indices from 0 (header excluded).
    pub fn table_styled(
        &mut self,
        table: &Table,
        row: impl Fn(usize) -> Option<Style>,
        cell: impl Fn(usize, usize) -> Option<Style>,
    ) {
        self.body.push_str("<div class=\"scroll\"><table>\n<tr>");
        for (h, a) in table.headers().iter().zip(table.aligns()) {
            let _ = write!(self.body, "<th class=\"{}\">{}</th>", a.css(), escape(h));
        }
        self.body.push_str("</tr>\n");
        for (r, cells) in table.rows().iter().enumerate() {
            match row(r) {
                Some(s) => {
                    let _ = write!(self.body, "<tr class=\"{}\">", s.css());
                }
                None => self.body.push_str("<tr>"),
            }
            for (k, (text, a)) in cells.iter().zip(table.aligns()).enumerate() {
                let extra = cell(r, k).map_or("", |s| s.css());
                let _ = write!(
                    self.body,
                    "<td class=\"{}{}{extra}\">{}</td>",
                    a.css(),
                    if extra.is_empty() { "" } else { " " },
                    escape(text)
                );
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</table></div>\n");
    }

    /// Adds a heading of level 2 or 3 with an anchor (characters other than ASCII letters, digits,
    /// `-` and `_` are replaced by `-`), the target of [`HtmlReport::links`].
    pub fn heading_id(&mut self, level: u8, text: &str, id: &str) {
        let level = level.clamp(2, 3);
        let _ = writeln!(
            self.body,
            "<h{level} id=\"{}\">{}</h{level}>",
            anchor(id),
            escape(text)
        );
    }

    /// Adds a paragraph of links to anchors of this document (`(anchor, text)`), after a lead text.
    pub fn links(&mut self, lead: &str, links: &[(String, String)]) {
        let _ = write!(self.body, "<p class=\"links\">{}", escape(lead));
        for (i, (id, text)) in links.iter().enumerate() {
            let _ = write!(
                self.body,
                "{}<a href=\"#{}\">{}</a>",
                if i == 0 { " " } else { " · " },
                anchor(id),
                escape(text)
            );
        }
        self.body.push_str("</p>\n");
    }

    /// Adds a glossary: terms and their definitions.
    pub fn definitions(&mut self, items: &[(&str, &str)]) {
        self.body.push_str("<dl class=\"glossary\">\n");
        for (term, def) in items {
            let _ = writeln!(
                self.body,
                "<dt>{}</dt><dd>{}</dd>",
                escape(term),
                escape(def)
            );
        }
        self.body.push_str("</dl>\n");
    }

    /// Adds key–value facts in a compact two-column grid.
    pub fn facts(&mut self, items: &[(String, String)]) {
        self.body.push_str("<dl class=\"facts\">");
        for (k, v) in items {
            let _ = write!(self.body, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
        }
        self.body.push_str("</dl>\n");
    }

    /// Adds a highlighted paragraph.
    pub fn callout(&mut self, style: Style, text: &str) {
        let _ = writeln!(
            self.body,
            "<p class=\"callout {}\">{}</p>",
            style.css(),
            escape(text)
        );
    }

    /// Adds preformatted text (e.g. an error message), scrollable when long.
    pub fn preformatted(&mut self, text: &str) {
        let _ = writeln!(self.body, "<pre>{}</pre>", escape(text));
    }

    /// Adds an SVG figure (as produced by [`crate::chart`]) with a caption.
    pub fn figure(&mut self, svg: &str, caption: &str) {
        let _ = writeln!(
            self.body,
            "<figure>{svg}<figcaption>{}</figcaption></figure>",
            escape(caption)
        );
    }

    /// Opens a row of side-by-side figures; close it with [`HtmlReport::end_row`].
    pub fn begin_row(&mut self) {
        self.body.push_str("<div class=\"row\">\n");
    }

    /// Closes a row of figures.
    pub fn end_row(&mut self) {
        self.body.push_str("</div>\n");
    }

    /// The complete document.
    pub fn finish(&self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n\
             <style>{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n{}</body>\n</html>\n",
            self.body,
            t = escape(&self.title)
        )
    }
}

const STYLE: &str = concat!(
    "body{font-family:system-ui,'DejaVu Sans',sans-serif;margin:2em;color:#222;max-width:1400px;line-height:1.4}",
    "h2{margin-top:2em;border-bottom:2px solid #ddd;padding-bottom:.2em}h3{margin:1.4em 0 .3em;font-size:15px;",
    "font-family:ui-monospace,'DejaVu Sans Mono',monospace;overflow-wrap:anywhere}",
    ".scroll{overflow-x:auto}table{border-collapse:collapse;font-size:13px;margin:1em 0}",
    "th,td{border-bottom:1px solid #ddd;padding:3px 7px;vertical-align:top}",
    "th{background:#f4f4f4;vertical-align:bottom}",
    ".r{text-align:right;font-variant-numeric:tabular-nums}td.r{white-space:nowrap}.l{text-align:left}",
    "td.l:first-child{min-width:14em;max-width:26em;overflow-wrap:anywhere}",
    "tr.total td{font-weight:600;background:#f7f7f7;border-bottom:2px solid #bbb}",
    "tr.muted td,td.muted{color:#888}td.strong{font-weight:700}.nw{white-space:nowrap}",
    ".orig{color:#0072B2;font-weight:600;white-space:nowrap}.pat{color:#D55E00;font-weight:600;white-space:nowrap}",
    "figure{display:inline-block;margin:.5em 1.5em .5em 0;vertical-align:top}",
    "figure svg{max-width:100%;height:auto}",
    "figcaption{font-size:12px;color:#555;max-width:580px}.row{display:flex;flex-wrap:wrap}",
    "dl.glossary{display:grid;grid-template-columns:max-content 1fr;gap:.25em 1em;font-size:13px;",
    "max-width:1100px}dl.glossary dt{font-weight:600}dl.glossary dd{margin:0}",
    "dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em;font-size:13px;",
    "background:#f7f7f7;padding:.6em 1em;border-radius:4px}",
    "dl.facts dt{color:#555}dl.facts dd{margin:0;overflow-wrap:anywhere}",
    ".callout{padding:.5em 1em;border-left:4px solid #888;background:#f4f4f4}",
    ".callout.warn{border-color:#D55E00;background:#fdf1ea}",
    "pre{font-size:12px;background:#f7f7f7;padding:.6em 1em;max-height:18em;overflow:auto;",
    "white-space:pre-wrap;overflow-wrap:anywhere}",
    ".links a{color:#0b5cad}svg text{font-family:system-ui,'DejaVu Sans',sans-serif}"
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Align;

    #[test]
    fn escapes_everything_user_supplied() {
        let mut r = HtmlReport::new("a<b");
        let mut t = Table::new(vec![("x&y", Align::Left)]);
        t.push(vec!["<script>".into()]);
        r.table(&t);
        let bar = WeightBar {
            task: "<i>".into(),
            share: 0.5,
            sr: 0.2,
        };
        r.figure(&weight_bars(&[bar], 0.5), "\"c\"");
        let html = r.finish();
        assert!(html.contains("<title>a&lt;b</title>"));
        assert!(html.contains("<th class=\"l\">x&amp;y</th>"));
        assert!(html.contains("<td class=\"l\">&lt;script&gt;</td>"));
        assert!(html.contains("&lt;i&gt;") && html.contains("50.0%"));
        assert!(!html.contains("<script>"));
    }

    #[test]
    fn styled_tables_anchors_and_facts_are_escaped() {
        let mut r = HtmlReport::new("t");
        let mut t = Table::new(vec![("a", Align::Left), ("b", Align::Right)]);
        t.push(vec!["<x>".into(), "1".into()]);
        t.push(vec!["y".into(), "2".into()]);
        r.table_styled(
            &t,
            |row| (row == 0).then_some(Style::Total),
            |row, col| (row == 1 && col == 1).then_some(Style::Strong),
        );
        r.heading_id(2, "a\"b", "id \"<x>");
        r.links("go:", &[("id \"<x>".into(), "<x>".into())]);
        r.facts(&[("k&".into(), "<v>".into())]);
        r.definitions(&[("<t>", "d&")]);
        r.callout(Style::Warning, "<w>");
        r.preformatted("<pre>");
        let html = r.finish();
        assert!(html.contains("<tr class=\"total\"><td class=\"l\">&lt;x&gt;</td>"));
        assert!(html.contains("<td class=\"r strong\">2</td>"));
        assert!(html.contains("<h2 id=\"s-id---x-\">a&quot;b</h2>"));
        assert!(html.contains("<a href=\"#s-id---x-\">&lt;x&gt;</a>"));
        assert!(html.contains("<dt>k&amp;</dt><dd>&lt;v&gt;</dd>"));
        assert!(html.contains("<dt>&lt;t&gt;</dt><dd>d&amp;</dd>"));
        assert!(html.contains("&lt;w&gt;") && html.contains("<pre>&lt;pre&gt;</pre>"));
    }

    #[test]
    fn histogram_counts_every_value_once_with_an_edge_at_one() {
        let values = [0.001, 0.5, 0.99, 1.0, 2.0, 1e9, 0.0, f64::NAN];
        let svg = sr_histogram(&values, -3, 3, 4);
        let counts: Vec<(usize, String)> = svg
            .match_indices("<title>")
            .map(|(i, _)| {
                let rest = &svg[i + 7..];
                let t = &rest[..rest.find('<').expect("closing tag")];
                let n = t.split(' ').next().expect("count").parse().expect("count");
                (n, t.to_owned())
            })
            .collect();
        assert_eq!(counts.iter().map(|c| c.0).sum::<usize>(), values.len());
        // 0.99 and 1.0 fall on either side of the edge at 1.
        assert!(
            counts.iter().any(|c| c.1.ends_with("[0.562, 1.00)")),
            "{counts:?}"
        );
        assert!(
            counts.iter().any(|c| c.1.ends_with("[1.00, 1.78)")),
            "{counts:?}"
        );
        assert!(svg.contains("stroke-dasharray") && svg.contains(">tasks</text>"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }
}
