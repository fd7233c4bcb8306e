//! The figure of `etip replay`: each task's runtime change `1/s − 1` in every replay, one row per
//! task, one colour per machine profile, a line at 0 (no change) and the median of each row.

use super::*;

/// Okabe–Ito colours for the profiles, in order.
const PROFILE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#B8A000",
];

/// One task's row: its name, each replay's (profile, change in percent), its median.
#[derive(Debug, Clone)]
pub struct ReplayStrip<'a> {
    pub task: &'a str,
    pub changes: &'a [(String, f64)],
    pub median: Option<f64>,
    /// Valid by the benchmark's rule in every replay (a filled median mark).
    pub valid: bool,
}

/// The strip plot of `rows` for `profiles` (colour order).
pub fn replay_strips(rows: &[ReplayStrip<'_>], profiles: &[String]) -> String {
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|r| r.changes.iter().map(|(_, v)| *v))
        .filter(|v| v.is_finite())
        .collect();
    let lo = values.iter().cloned().fold(0.0_f64, f64::min);
    let hi = values.iter().cloned().fold(0.0_f64, f64::max);
    // Whole tens of percent around the data and 0.
    let lo = (lo / 10.0).floor() * 10.0 - if lo < 0.0 { 0.0 } else { 10.0 };
    let hi = (hi / 10.0).ceil() * 10.0 + if hi > 0.0 { 0.0 } else { 10.0 };
    let label_w = rows
        .iter()
        .map(|r| r.task.chars().count())
        .max()
        .unwrap_or(4) as f64
        * CHAR_W;
    let (ml, mr, mt, row) = (label_w + 16.0, 24.0, 30.0, 22.0);
    let plot_w = 420.0;
    let legend_h = LEGEND_ROW * profiles.len().div_ceil(4).max(1) as f64;
    let h = mt + row * rows.len().max(1) as f64 + 40.0 + legend_h;
    let w = ml + plot_w + mr;
    let x_of = |v: f64| ml + (v - lo) / (hi - lo) * plot_w;
    let mut svg = svg_open(w, h, "runtime change of each task in each replay");
    let bottom = mt + row * rows.len().max(1) as f64;
    let mut tick = lo;
    let step = ((hi - lo) / 6.0 / 10.0).ceil().max(1.0) * 10.0;
    while tick <= hi + 1e-9 {
        let _ = write!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{}\"/>\
             <text x=\"{x}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{}%</text>",
            c(mt - 4.0),
            c(bottom),
            if tick.abs() < 1e-9 { INK } else { GRID },
            c(bottom + 14.0),
            tick,
            x = c(x_of(tick)),
        );
        tick += step;
    }
    let _ = write!(
        svg,
        "<text x=\"{}\" y=\"16\" font-size=\"11\" text-anchor=\"middle\">runtime change 1/s − 1 (negative: faster than the original)</text>",
        c(ml + plot_w / 2.0)
    );
    let colour = |p: &str| {
        profiles
            .iter()
            .position(|q| q == p)
            .map_or(INK, |i| PROFILE[i % PROFILE.len()])
    };
    for (i, r) in rows.iter().enumerate() {
        let y = mt + row * (i as f64 + 0.5);
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            c(ml - 8.0),
            c(y + 3.5),
            escape(r.task)
        );
        for (k, (p, v)) in r.changes.iter().enumerate() {
            if !v.is_finite() {
                continue;
            }
            // A small vertical jitter by replay keeps equal values apart.
            let dy = ((k % 5) as f64 - 2.0) * 2.0;
            let _ = write!(
                svg,
                "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\" fill-opacity=\"0.85\"><title>{}</title></circle>",
                c(x_of(*v)),
                c(y + dy),
                colour(p),
                escape(&format!("{}: {p}: {v:+.1}%", r.task))
            );
        }
        if let Some(m) = r.median.filter(|m| m.is_finite()) {
            let _ = write!(
                svg,
                "<rect x=\"{}\" y=\"{}\" width=\"3\" height=\"14\" fill=\"{}\" stroke=\"{INK}\"><title>{}</title></rect>",
                c(x_of(m) - 1.5),
                c(y - 7.0),
                if r.valid { INK } else { "#fff" },
                escape(&format!(
                    "{}: median {m:+.1}%{}",
                    r.task,
                    if r.valid {
                        ", valid in every replay"
                    } else {
                        ""
                    }
                ))
            );
        }
    }
    for (i, p) in profiles.iter().enumerate() {
        let (col, line) = (i % 4, i / 4);
        let x = ml + col as f64 * 110.0;
        let y = bottom + 32.0 + line as f64 * LEGEND_ROW;
        let _ = write!(
            svg,
            "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>",
            c(x),
            c(y - 3.5),
            PROFILE[i % PROFILE.len()],
            c(x + 8.0),
            c(y),
            escape(p)
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_replay_is_a_dot_and_names_are_escaped() {
        let a = vec![("small".to_string(), -40.0), ("large".to_string(), -35.5)];
        let b = vec![("small".to_string(), 5.0), ("large".to_string(), f64::NAN)];
        let rows = [
            ReplayStrip {
                task: "dedup<1>",
                changes: &a,
                median: Some(-37.75),
                valid: true,
            },
            ReplayStrip {
                task: "join",
                changes: &b,
                median: Some(5.0),
                valid: false,
            },
        ];
        let svg = replay_strips(&rows, &["small".into(), "large".into()]);
        assert_eq!(
            svg.matches("<circle").count(),
            3 + 2,
            "3 finite dots, 2 legend marks"
        );
        assert!(svg.contains("dedup&lt;1&gt;"));
        assert!(!svg.contains("NaN"));
        assert!(svg.contains("-40%"), "an axis tick at -40%");
    }
}
