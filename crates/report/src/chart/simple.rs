//! The simpler charts of `etip audit`: horizontal bars and a histogram.

use super::*;

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
    let mut svg = format!("<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">");
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
        "<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\
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
