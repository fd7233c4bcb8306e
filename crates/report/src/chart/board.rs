//! The leaderboard figures of `etip audit`: ranks across rules, ranks on two benchmarks, which
//! tasks carry each run's harmonic mean, and each run's distribution of speedup ratios.

use super::*;

/// Okabe–Ito colours for the runs a figure highlights (after blue and vermillion, which stand for
/// the two versions elsewhere): bluish green, reddish purple, orange, sky blue, yellow.
const HIGHLIGHT: [&str; 5] = ["#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#B8A000"];
const MUTED: &str = "#b5b5b5";

/// Ranks of the same runs under several rules (a "bump chart"): one column per rule, one line per
/// run from rank 1 (top) down. The runs whose rank moves most are coloured and named on both sides;
/// the others are grey, named on the left only.
///
/// `ranks[i][k]` is run `i`'s rank under rule `k` (1 = best); `None` leaves a gap.
pub fn rank_chart(runs: &[String], rules: &[String], ranks: &[Vec<Option<usize>>]) -> String {
    let n = runs.len().max(1);
    let k = rules.len().max(1);
    let label_w = runs.iter().map(|r| r.chars().count()).max().unwrap_or(4) as f64 * CHAR_W;
    let (ml, mr, mt, row) = (label_w + 34.0, label_w + 34.0, 44.0, 20.0);
    let col_w = 120.0;
    let w = ml + col_w * (k.saturating_sub(1)) as f64 + mr;
    let h = mt + row * n as f64 + 12.0;
    let x_of = |j: usize| ml + col_w * j as f64;
    let y_of = |r: usize| mt + row * (r as f64 - 0.5);
    // The largest moves get colours.
    let moves: Vec<usize> = ranks
        .iter()
        .map(|rs| {
            let v: Vec<usize> = rs.iter().flatten().copied().collect();
            v.iter().max().unwrap_or(&0) - v.iter().min().unwrap_or(&0)
        })
        .collect();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|a, b| moves[*b].cmp(&moves[*a]).then(a.cmp(b)));
    let colour_of = |i: usize| -> Option<&str> {
        order
            .iter()
            .take(HIGHLIGHT.len())
            .position(|&j| j == i)
            .filter(|_| moves[i] > 0)
            .map(|p| HIGHLIGHT[p])
    };
    let mut svg = svg_open(w, h, "ranks of the runs under each rule");
    for (j, rule) in rules.iter().enumerate() {
        let _ = write!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{GRID}\"/>\
             <text x=\"{x}\" y=\"{}\" font-size=\"11\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>",
            c(mt - 6.0),
            c(h - 8.0),
            c(mt - 16.0),
            escape(rule),
            x = c(x_of(j)),
        );
    }
    let _ = write!(
        svg,
        "<text x=\"{}\" y=\"14\" font-size=\"11\" text-anchor=\"middle\">rank (1 = best)</text>",
        c(ml - 18.0)
    );
    // Grey lines first, coloured on top.
    let mut draw = order.clone();
    draw.reverse();
    for i in draw {
        let colour = colour_of(i);
        let stroke = colour.unwrap_or(MUTED);
        let width = if colour.is_some() { 2.4 } else { 1.2 };
        let pts: Vec<(usize, usize)> = ranks[i]
            .iter()
            .enumerate()
            .filter_map(|(j, r)| r.map(|r| (j, r)))
            .collect();
        let path: Vec<String> = pts
            .iter()
            .enumerate()
            .map(|(m, (j, r))| {
                format!(
                    "{}{} {}",
                    if m == 0 { "M" } else { "L" },
                    c(x_of(*j)),
                    c(y_of(*r))
                )
            })
            .collect();
        let tip: Vec<String> = rules
            .iter()
            .zip(&ranks[i])
            .map(|(rule, r)| format!("{rule}: {}", r.map_or("-".into(), |r| r.to_string())))
            .collect();
        let _ = write!(
            svg,
            "<g><title>{}</title><path d=\"{}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"{width}\"/>",
            escape(&format!("{} — {}", runs[i], tip.join(", "))),
            path.join("")
        );
        for (j, r) in &pts {
            let _ = write!(
                svg,
                "<circle cx=\"{}\" cy=\"{}\" r=\"3.2\" fill=\"{stroke}\"/>",
                c(x_of(*j)),
                c(y_of(*r))
            );
        }
        svg.push_str("</g>");
        let ink = colour.unwrap_or(INK);
        if let Some((j, r)) = pts.first() {
            let _ = write!(
                svg,
                "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"{ink}\">{} {}</text>",
                c(x_of(*j) - 8.0),
                c(y_of(*r) + 4.0),
                escape(&runs[i]),
                r
            );
        }
        if let (Some(colour), Some((j, r))) = (colour, pts.last()) {
            let _ = write!(
                svg,
                "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{colour}\">{r} {}</text>",
                c(x_of(*j) + 8.0),
                c(y_of(*r) + 4.0),
                escape(&runs[i])
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

/// The same models ranked by two benchmarks: one labelled point per model at (rank on the first,
/// rank on the second), the diagonal where both agree, rank 1 at the top left.
pub fn rank_scatter(points: &[(String, f64, f64)], x_title: &str, y_title: &str) -> String {
    let n = points
        .iter()
        .map(|p| p.1.max(p.2))
        .filter(|v| v.is_finite())
        .fold(1.0_f64, f64::max)
        .ceil();
    let (ml, mr, mt, mb) = (54.0, 150.0, 16.0, 46.0);
    let side = (n * 28.0).clamp(320.0, 440.0);
    let (w, h) = (ml + side + mr, mt + side + mb);
    let pos = |r: f64| (r - 0.5) / n * side;
    let mut svg = svg_open(w, h, &format!("{y_title} against {x_title}"));
    let _ = write!(
        svg,
        "<rect x=\"{ml}\" y=\"{mt}\" width=\"{s}\" height=\"{s}\" fill=\"none\" stroke=\"{GRID}\"/>\
         <line x1=\"{ml}\" y1=\"{mt}\" x2=\"{}\" y2=\"{}\" stroke=\"{INK}\" stroke-dasharray=\"4 3\"/>",
        c(ml + side),
        c(mt + side),
        s = c(side),
    );
    let step = if n > 12.0 { 2 } else { 1 };
    for r in (1..=n as usize).step_by(step) {
        let p = pos(r as f64);
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{r}</text>\
             <text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">{r}</text>",
            c(ml + p),
            c(mt + side + 14.0),
            c(ml - 6.0),
            c(mt + p + 3.5)
        );
    }
    let _ = write!(
        svg,
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\
         <text x=\"14\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">{}</text>",
        c(ml + side / 2.0),
        c(h - 10.0),
        escape(x_title),
        c(mt + side / 2.0),
        c(mt + side / 2.0),
        escape(y_title)
    );
    for (name, x, y) in points {
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        let (px, py) = (ml + pos(*x), mt + pos(*y));
        let off = (y - x).abs() >= 2.0;
        let colour = if off { PATCHED_COLOR } else { ORIGINAL_COLOR };
        let _ = write!(
            svg,
            "<circle cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"{colour}\"><title>{}</title></circle>\
             <text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"{INK}\">{}</text>",
            c(px),
            c(py),
            escape(&format!("{name}: {x_title} {x}, {y_title} {y}")),
            c(px + 7.0),
            c(py + 3.5),
            escape(name)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Weight of each task (column) in each run's harmonic mean (row), as a share of that run's
/// total: white for none, darker blue for more, with the share in each cell's tooltip. The colour
/// scale is shared by all cells, with its key under the grid.
pub fn heatmap(rows: &[String], cols: &[String], shares: &[Vec<f64>]) -> String {
    let label_w = rows.iter().map(|r| r.chars().count()).max().unwrap_or(4) as f64 * CHAR_W;
    let col_label_h = cols.iter().map(|r| r.chars().count()).max().unwrap_or(4) as f64 * 5.4;
    let cell = 16.0;
    let (ml, mt) = (label_w + 12.0, col_label_h + 12.0);
    // Column labels run up and to the right at 60°: room for the last one's run.
    let w = ml + cell * cols.len() as f64 + col_label_h * 0.55 + 12.0;
    let grid_h = cell * rows.len() as f64;
    let h = mt + grid_h + 56.0;
    let max = shares
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max)
        .max(1e-12);
    // White to Okabe–Ito blue.
    let shade = |v: f64| {
        let t = (v / max).clamp(0.0, 1.0).sqrt();
        let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
        format!(
            "#{:02x}{:02x}{:02x}",
            mix(255.0, 0.0),
            mix(255.0, 114.0),
            mix(255.0, 178.0)
        )
    };
    let mut svg = svg_open(
        w.max(360.0),
        h,
        "weight of each task in each run's harmonic mean",
    );
    for (j, col) in cols.iter().enumerate() {
        let x = ml + cell * (j as f64 + 0.5);
        let _ = write!(
            svg,
            "<text x=\"{x}\" y=\"{y}\" font-size=\"9\" transform=\"rotate(-60 {x} {y})\">{}</text>",
            escape(col),
            x = c(x + 3.0),
            y = c(mt - 4.0),
        );
    }
    for (i, row) in rows.iter().enumerate() {
        let y = mt + cell * i as f64;
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            c(ml - 6.0),
            c(y + cell - 4.0),
            escape(row)
        );
        for (j, col) in cols.iter().enumerate() {
            let v = shares
                .get(i)
                .and_then(|r| r.get(j))
                .copied()
                .filter(|v| v.is_finite())
                .unwrap_or(0.0);
            let _ = write!(
                svg,
                "<rect x=\"{}\" y=\"{}\" width=\"{cell}\" height=\"{cell}\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"1\"><title>{}</title></rect>",
                c(ml + cell * j as f64),
                c(y),
                shade(v),
                escape(&format!("{row} · {col}: {:.1}% of the weight", 100.0 * v))
            );
        }
    }
    // Colour key.
    let ky = mt + grid_h + 18.0;
    let steps = 6;
    for s in 0..=steps {
        let v = max * (s as f64 / steps as f64).powi(2);
        let x = ml + 44.0 * s as f64;
        let _ = write!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"40\" height=\"12\" fill=\"{}\" stroke=\"{GRID}\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{:.1}%</text>",
            c(x),
            c(ky),
            shade(v),
            c(x + 20.0),
            c(ky + 24.0),
            100.0 * v
        );
    }
    let _ = write!(
        svg,
        "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">share of the run's weight</text>",
        c(ml - 6.0),
        c(ky + 10.0)
    );
    svg.push_str("</svg>");
    svg
}

/// One bar of [`weight_bars`].
#[derive(Debug, Clone)]
pub struct WeightBar {
    /// Task (instance id).
    pub task: String,
    /// Its share of the run's harmonic-mean weight, in [0, 1].
    pub share: f64,
    /// Its SR.
    pub sr: f64,
}

/// The heaviest tasks of one run as horizontal bars on a scale from 0 to `scale` (the same for
/// every run, so that bars compare across runs), each labelled with its share and its SR.
pub fn weight_bars(bars: &[WeightBar], scale: f64) -> String {
    let label_w = 34.0 * CHAR_W;
    let (w, bar_h, gap, mt, mb) = (520.0, 14.0, 4.0, 6.0, 30.0);
    let plot_w = w - label_w - 118.0;
    let h = mt + bars.len() as f64 * (bar_h + gap) + mb;
    let scale = if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    };
    let axis = Axis::linear(0.0, 100.0 * scale, 4);
    let x_of = |share: f64| label_w + plot_w * (100.0 * share / axis.hi).clamp(0.0, 1.0);
    let mut svg = svg_open(w, h, "share of the harmonic mean's weight per task");
    let base = mt + bars.len() as f64 * (bar_h + gap);
    for &t in &axis.ticks {
        let x = x_of(t / 100.0);
        let _ = write!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{GRID}\"/>\
             <text x=\"{x}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{}%</text>",
            c(mt),
            c(base),
            c(base + 12.0),
            axis.label(t),
            x = c(x)
        );
    }
    let _ = write!(
        svg,
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">share of the run's weight</text>",
        c(label_w + plot_w / 2.0),
        c(base + 26.0)
    );
    for (i, b) in bars.iter().enumerate() {
        let y = mt + i as f64 * (bar_h + gap);
        let shown = ellipsis(&b.task, 34);
        let colour = if b.sr < 1.0 {
            PATCHED_COLOR
        } else {
            ORIGINAL_COLOR
        };
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{ty}\" font-size=\"11\" text-anchor=\"end\">{}</text>\
             <rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{bar_h}\" fill=\"{colour}\"><title>{}</title></rect>\
             <text x=\"{}\" y=\"{ty}\" font-size=\"11\">{:.1}% · SR {}</text>",
            c(label_w - 4.0),
            escape(&shown),
            c(label_w),
            c(y),
            c((x_of(b.share) - label_w).max(1.0)),
            escape(&format!(
                "{}: {:.2}% of the weight, SR {}",
                b.task,
                100.0 * b.share,
                sr_text(b.sr)
            )),
            c(x_of(b.share) + 4.0),
            100.0 * b.share,
            sr_text(b.sr),
            ty = c(y + bar_h - 3.0),
        );
    }
    svg.push_str("</svg>");
    svg
}

/// An SR for labels: three significant digits, scientific beyond 1e4 or below 1e-3.
pub fn sr_text(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v != 0.0 && (v.abs() >= 1e4 || v.abs() < 1e-3) {
        return format!("{v:.1e}");
    }
    let d = (2 - v.abs().max(1e-12).log10().floor() as i32).clamp(0, 4) as usize;
    format!("{v:.d$}")
}

fn ellipsis(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let tail: Vec<char> = s.chars().rev().take(max - 1).collect();
    format!("…{}", tail.into_iter().rev().collect::<String>())
}

/// The distribution of one run's SRs on a log axis with `per_decade` bins per decade, so that 1 is
/// a bin edge: bars below 1 (slower than the expert) in vermillion, from 1 on (at least as fast) in
/// blue. The axis spans the decades from 10^`lo` to 10^`hi` (values beyond fall in the end bins);
/// a bar with any task is at least 3 px tall and its count is written above it when small, so that
/// single outliers stay visible. Counts on a linear y axis, labelled.
pub fn sr_histogram(values: &[f64], lo: i32, hi: i32, per_decade: usize) -> String {
    let per = per_decade.max(1);
    let (lo, hi) = (lo.min(0), hi.max(lo.min(0) + 1).max(1));
    let bins = (hi - lo) as usize * per;
    let mut counts = vec![0usize; bins];
    for &v in values {
        let x = if v > 0.0 && v.is_finite() {
            v.log10()
        } else if v.is_infinite() && v > 0.0 {
            f64::from(hi)
        } else {
            f64::from(lo)
        };
        let k = ((x - f64::from(lo)) * per as f64).floor();
        counts[(k.max(0.0) as usize).min(bins - 1)] += 1;
    }
    let (w, ml, mr, mt, mb) = (520.0, 48.0, 12.0, 26.0, 44.0);
    let plot_w = w - ml - mr;
    let plot_h = 170.0;
    let h = mt + plot_h + mb;
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let y_axis = Axis::linear(0.0, max as f64, 4);
    let bw = plot_w / bins as f64;
    let below = values.iter().filter(|v| **v < 1.0).count();
    let mut svg = svg_open(w, h, "distribution of SR");
    let (legend_svg, _) = legend(
        &[
            Key::Bar(PATCHED_COLOR, 1.0, format!("SR < 1: {below} tasks")),
            Key::Bar(
                ORIGINAL_COLOR,
                1.0,
                format!("SR ≥ 1: {} tasks", values.len() - below),
            ),
        ],
        ml,
        4.0,
        plot_w,
    );
    svg.push_str(&legend_svg);
    svg.push_str(&y_grid(&y_axis, ml, mt, plot_w, plot_h));
    for (k, &n) in counts.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let bh = (plot_h * y_axis.frac(n as f64)).max(3.0);
        let x = ml + k as f64 * bw;
        let left = f64::from(lo) + k as f64 / per as f64;
        let colour = if left < 0.0 {
            PATCHED_COLOR
        } else {
            ORIGINAL_COLOR
        };
        let _ = write!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{colour}\"><title>{}</title></rect>",
            c(x + 0.5),
            c(mt + plot_h - bh),
            c((bw - 1.0).max(0.5)),
            c(bh),
            escape(&format!(
                "{n} tasks with SR in [{}, {})",
                sr_text(10f64.powf(left)),
                sr_text(10f64.powf(left + 1.0 / per as f64))
            ))
        );
        if bh < 14.0 {
            let _ = write!(
                svg,
                "<text x=\"{}\" y=\"{}\" font-size=\"9\" text-anchor=\"middle\">{n}</text>",
                c(x + bw / 2.0),
                c(mt + plot_h - bh - 3.0)
            );
        }
    }
    // Decade ticks, and the line at SR = 1 drawn over the bars.
    for e in lo..=hi {
        let x = ml + f64::from(e - lo) * per as f64 * bw;
        let label = match e {
            0 => "1".to_owned(),
            1 => "10".to_owned(),
            -1 => "0.1".to_owned(),
            _ => format!("1e{e}"),
        };
        let _ = write!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{INK}\"/>\
             <text x=\"{x}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{label}</text>",
            c(mt + plot_h),
            c(mt + plot_h + 4.0),
            c(mt + plot_h + 15.0),
            x = c(x)
        );
    }
    let one = ml + f64::from(-lo) * per as f64 * bw;
    let _ = write!(
        svg,
        "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{INK}\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>\
         <line x1=\"{}\" y1=\"{b}\" x2=\"{}\" y2=\"{b}\" stroke=\"{INK}\"/>\
         <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">SR (log scale; dashed line: SR = 1, the expert's speedup)</text>\
         <text x=\"12\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 12 {})\">tasks</text>",
        c(mt - 4.0),
        c(mt + plot_h),
        c(ml),
        c(ml + plot_w),
        c(ml + plot_w / 2.0),
        c(h - 8.0),
        c(mt + plot_h / 2.0),
        c(mt + plot_h / 2.0),
        x = c(one),
        b = c(mt + plot_h),
    );
    svg.push_str("</svg>");
    svg
}
