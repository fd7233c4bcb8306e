//! A self-contained HTML report: headings, paragraphs, tables and inline SVG charts, no scripts and no
//! external resources, so the file can be mailed, archived or opened offline.

use crate::Table;
use std::fmt::Write;

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
        self.body.push_str("<table>\n<tr>");
        for (h, a) in table.headers().iter().zip(table.aligns()) {
            let _ = write!(self.body, "<th class=\"{}\">{}</th>", a.css(), escape(h));
        }
        self.body.push_str("</tr>\n");
        for row in table.rows() {
            self.body.push_str("<tr>");
            for (cell, a) in row.iter().zip(table.aligns()) {
                let _ = write!(self.body, "<td class=\"{}\">{}</td>", a.css(), escape(cell));
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</table>\n");
    }

    /// Adds an SVG figure (as produced by [`bar_chart`] or [`histogram`]) with a caption.
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

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}\
table{border-collapse:collapse;font-size:13px;margin:1em 0}\
th,td{border-bottom:1px solid #ddd;padding:3px 8px}th{background:#f4f4f4}\
.r{text-align:right;font-variant-numeric:tabular-nums}.l{text-align:left}\
figure{display:inline-block;margin:0.5em 1em 0.5em 0;vertical-align:top}\
figcaption{font-size:12px;color:#555;max-width:460px}.row{display:flex;flex-wrap:wrap}\
svg text{font-family:system-ui,sans-serif}";

/// Horizontal bar chart: one labelled bar per item, value in [0, max]; values are shown as percents when
/// `percent` is true.
pub fn bar_chart(items: &[(String, f64)], percent: bool) -> String {
    let (w, bar_h, gap, label_w) = (460.0, 16.0, 4.0, 230.0);
    let h = items.len() as f64 * (bar_h + gap) + 10.0;
    let max = items
        .iter()
        .map(|i| i.1)
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">"
    );
    for (i, (label, v)) in items.iter().enumerate() {
        let y = 5.0 + i as f64 * (bar_h + gap);
        let bw = (w - label_w - 60.0) * (v / max);
        let shown: String = if label.chars().count() > 34 {
            let tail: String = label
                .chars()
                .rev()
                .take(33)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            format!("…{tail}")
        } else {
            label.clone()
        };
        let value = if percent {
            format!("{:.1}%", 100.0 * v)
        } else {
            format!("{v:.3}")
        };
        let _ = write!(
            svg,
            "<text x=\"{lx}\" y=\"{ty}\" font-size=\"11\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_w}\" y=\"{y}\" width=\"{bw:.1}\" height=\"{bar_h}\" fill=\"#c0504d\"/>\
             <text x=\"{vx:.1}\" y=\"{ty}\" font-size=\"11\">{value}</text>",
            escape(&shown),
            lx = label_w - 4.0,
            ty = y + bar_h - 4.0,
            vx = label_w + bw + 4.0,
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Histogram of `values` on a log10 axis between 10^lo and 10^hi (values outside are clamped into the
/// edge bins), with a marker line at `marker` (e.g. SR = 1).
pub fn histogram(values: &[f64], lo: f64, hi: f64, bins: usize, marker: Option<f64>) -> String {
    let (w, h, pad_l, pad_b) = (460.0, 200.0, 36.0, 30.0);
    let bins = bins.max(1);
    let mut counts = vec![0usize; bins];
    for &v in values {
        let x = if v > 0.0 { v.log10() } else { lo };
        let k = (((x - lo) / (hi - lo)) * bins as f64).floor();
        let k = (k.max(0.0) as usize).min(bins - 1);
        counts[k] += 1;
    }
    let max = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let plot_w = w - pad_l - 10.0;
    let plot_h = h - pad_b - 10.0;
    let bw = plot_w / bins as f64;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\
         <line x1=\"{pad_l}\" y1=\"{base}\" x2=\"{x2}\" y2=\"{base}\" stroke=\"#888\"/>",
        base = 10.0 + plot_h,
        x2 = w - 10.0
    );
    for (k, &c) in counts.iter().enumerate() {
        let bh = plot_h * c as f64 / max;
        let _ = write!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"#4f81bd\"><title>{c}</title></rect>",
            pad_l + k as f64 * bw + 0.5,
            10.0 + plot_h - bh,
            (bw - 1.0).max(0.5)
        );
    }
    let mut e = lo.ceil() as i32;
    while f64::from(e) <= hi {
        let x = pad_l + (f64::from(e) - lo) / (hi - lo) * plot_w;
        let label = match e {
            0 => "1".to_owned(),
            1 => "10".to_owned(),
            _ => format!("1e{e}"),
        };
        let _ = write!(
            svg,
            "<text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">{label}</text>",
            h - 12.0
        );
        e += 1;
    }
    if let Some(m) = marker.filter(|m| *m > 0.0) {
        let x = pad_l + (m.log10() - lo) / (hi - lo) * plot_w;
        let _ = write!(
            svg,
            "<line x1=\"{x:.1}\" y1=\"10\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#c0504d\" stroke-dasharray=\"4 3\"/>",
            10.0 + plot_h
        );
    }
    let _ = write!(
        svg,
        "<text x=\"4\" y=\"18\" font-size=\"10\">{}</text></svg>",
        max as usize
    );
    svg
}

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
        r.figure(&bar_chart(&[("<i>".into(), 0.5)], true), "\"c\"");
        let html = r.finish();
        assert!(html.contains("<title>a&lt;b</title>"));
        assert!(html.contains("<th class=\"l\">x&amp;y</th>"));
        assert!(html.contains("<td class=\"l\">&lt;script&gt;</td>"));
        assert!(html.contains("&lt;i&gt;") && html.contains("50.0%"));
        assert!(!html.contains("<script>"));
    }

    #[test]
    fn histogram_counts_every_value_once() {
        let svg = histogram(&[0.001, 0.5, 1.0, 2.0, 1e9, 0.0], -3.0, 3.0, 6, Some(1.0));
        let total: usize = svg
            .match_indices("<title>")
            .map(|(i, _)| {
                let rest = &svg[i + 7..];
                rest[..rest.find('<').expect("closing tag")]
                    .parse::<usize>()
                    .expect("count")
            })
            .sum();
        assert_eq!(total, 6);
        assert!(svg.contains("stroke-dasharray"));
    }
}
