//! Hand-written SVG charts for the HTML report: no scripts, no external resources, every label
//! escaped, every coordinate finite (non-finite inputs are skipped, never written as `NaN`).
//!
//! - [`rounds_plot`]: per-round times of two versions (markers joined by thin lines, filled or hollow
//!   per point, e.g. to show which version ran first in a round), y from 0 in a unit chosen from the
//!   data (s, ms or µs).
//! - [`ratio_plot`]: the per-round ratio patched/original as a stacked dot plot (a histogram when the
//!   dots would not fit), with the regions in which the sign test counts a win for either version
//!   shaded, a line at 1, and the median ratio with its confidence interval.
//! - [`bar_chart`], [`histogram`]: the simpler charts of `etip audit`.
//!
//! The SVG elements are meant to be inlined in HTML (no `xmlns`, which HTML does not need).
//!
//! The two versions keep the same colours everywhere ([`ORIGINAL_COLOR`], [`PATCHED_COLOR`]: blue and
//! vermillion of the Okabe–Ito palette, told apart by readers with any common colour-vision
//! deficiency), and always also differ by marker shape (circle, square).

use crate::html::escape;
use std::fmt::Write;

/// Colour of the original version (Okabe–Ito blue).
pub const ORIGINAL_COLOR: &str = "#0072B2";
/// Colour of the patched version (Okabe–Ito vermillion).
pub const PATCHED_COLOR: &str = "#D55E00";
/// Colour of neutral marks (lines at 1, dots of ratios).
const INK: &str = "#333333";
const GRID: &str = "#e4e4e4";
const FONT: &str = "font-family=\"system-ui,'DejaVu Sans',sans-serif\"";

/// Shape of a marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A circle.
    Circle,
    /// A square.
    Square,
}

/// One series of a [`rounds_plot`]: `values[k]` is the value of round `k + 1`.
#[derive(Debug, Clone)]
pub struct Series<'a> {
    /// Name in the legend.
    pub label: &'a str,
    /// CSS colour of markers and line.
    pub color: &'a str,
    /// Marker shape.
    pub marker: Marker,
    /// Values in seconds, one per round; non-finite values are not drawn.
    pub values: &'a [f64],
    /// Per point: filled (`true`) or hollow; missing entries are filled.
    pub filled: Vec<bool>,
    /// Per point: text appended to its tooltip (e.g. "ran first"); missing entries add nothing.
    pub notes: Vec<String>,
}

/// A plot of per-round times.
#[derive(Debug, Clone)]
pub struct RoundsPlot<'a> {
    /// The series, drawn in order (later ones on top).
    pub series: Vec<Series<'a>>,
    /// Legend entries for filled and hollow markers, e.g. `("ran first", "ran second")`.
    pub fill_key: Option<(&'a str, &'a str)>,
    /// Title of the y axis without its unit (e.g. "time"); the unit is appended.
    pub y_title: &'a str,
    /// Title of the x axis (e.g. "timed round").
    pub x_title: &'a str,
    /// A vertical marker after round `k` with a label (e.g. where a sequential test stopped).
    pub cut: Option<(usize, &'a str)>,
}

/// The per-round ratio patched/original of one series, for [`ratio_plot`].
#[derive(Debug, Clone)]
pub struct RatioPlot<'a> {
    /// Ratios in round order; non-finite or non-positive values are not drawn.
    pub ratios: &'a [f64],
    /// The sign test's threshold: a round is a win for the patched version when the ratio is at most
    /// `1 − min_impr`, for the original when it is at least `1 / (1 − min_impr)`.
    pub min_impr: f64,
    /// Median ratio and its confidence interval, drawn under the dots.
    pub median_ci: Option<(f64, [f64; 2])>,
    /// Title of the x axis.
    pub x_title: &'a str,
    /// Names of the two versions in the legend: `[original, patched]`.
    pub names: [&'a str; 2],
    /// Rounds the verdict is based on (the first `judged`); later rounds are drawn hollow or light.
    /// `None`: all.
    pub judged: Option<usize>,
}

const W: f64 = 580.0;
const CHAR_W: f64 = 6.3; // mean advance of an 11 px sans-serif character, for layout only
const LEGEND_ROW: f64 = 17.0;

/// A finite coordinate with one decimal (0 for non-finite input, so no `NaN` reaches the SVG).
fn c(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}")
    } else {
        "0".to_owned()
    }
}

/// A "nice" step (1, 2, 2.5 or 5 times a power of ten) giving about `target` intervals over `span`.
fn nice_step(span: f64, target: usize) -> f64 {
    let span = if span.is_finite() && span > 0.0 {
        span
    } else {
        1.0
    };
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

/// A linear axis: `[lo, hi]` widened to multiples of a nice step, and its ticks.
#[derive(Debug, Clone)]
struct Axis {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    decimals: usize,
}

impl Axis {
    fn linear(lo: f64, hi: f64, target: usize) -> Axis {
        let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi > lo {
            (lo, hi)
        } else if lo.is_finite() {
            (lo - 0.5, lo + 0.5)
        } else {
            (0.0, 1.0)
        };
        // Of the nice steps giving between 4 and target + 3 intervals, the one that wastes the least
        // room beyond the data (the larger step on a tie).
        let base = nice_step(hi - lo, target);
        let mut best: Option<(f64, f64)> = None;
        for mag in [base / 10.0, base, base * 10.0] {
            let mag = 10f64.powf(mag.log10().floor());
            for m in [1.0, 2.0, 2.5, 5.0] {
                let step = m * mag;
                let n = ((hi / step).ceil() - (lo / step).floor()).round();
                if n < 4.0 || n > (target + 3) as f64 {
                    continue;
                }
                let waste = n * step;
                if best.is_none_or(|(w, _)| waste <= w * (1.0 + 1e-9)) {
                    best = Some((waste, step));
                }
            }
        }
        let step = best.map_or(base, |b| b.1);
        let lo = (lo / step).floor() * step;
        let hi = (hi / step).ceil() * step;
        let n = ((hi - lo) / step).round() as usize;
        let ticks = (0..=n).map(|k| lo + k as f64 * step).collect();
        let k = step.log10().floor();
        let half = ((step / 10f64.powf(k)) - 2.5).abs() < 1e-9;
        let decimals = (-k + if half { 1.0 } else { 0.0 }).clamp(0.0, 6.0) as usize;
        Axis {
            lo,
            hi,
            ticks,
            decimals,
        }
    }

    /// Position of `v` in `[0, 1]` along the axis.
    fn frac(&self, v: f64) -> f64 {
        (v - self.lo) / (self.hi - self.lo)
    }

    fn label(&self, v: f64) -> String {
        let d = self.decimals;
        let s = format!("{v:.d$}");
        if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
            s[1..].to_owned()
        } else {
            s
        }
    }
}

/// A unit for seconds suited to values up to `max`: `("s", 1)`, `("ms", 1e3)` or `("µs", 1e6)`.
pub fn time_unit(max: f64) -> (&'static str, f64) {
    if !(max.is_finite()) || max >= 1.0 {
        ("s", 1.0)
    } else if max >= 1e-3 {
        ("ms", 1e3)
    } else {
        ("µs", 1e6)
    }
}

/// A time in seconds with up to three significant digits and a unit: `1.84 s`, `139 ms`, `850 µs`,
/// `1 ms` (trailing zeros dropped).
pub fn format_seconds(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_owned();
    }
    if v == 0.0 {
        return "0 s".to_owned();
    }
    let (unit, f) = time_unit(v.abs());
    let x = v * f;
    let d = (2 - x.abs().log10().floor() as i32).clamp(0, 3) as usize;
    let s = format!("{x:.d$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    format!("{s} {unit}")
}

/// An entry of a legend.
enum Key<'a> {
    Marker(Marker, &'a str, bool, String),
    Line(&'a str, bool, String),
    Band(&'a str, String),
    Bar(&'a str, f64, String),
    Interval(String),
    Offscale(String),
}

/// Lays out legend entries in rows across `width` from `(x0, y0)`; returns the SVG and the height.
fn legend(keys: &[Key<'_>], x0: f64, y0: f64, width: f64) -> (String, f64) {
    let mut svg = String::new();
    let (mut x, mut y) = (x0, y0);
    for k in keys {
        let label = match k {
            Key::Marker(.., l)
            | Key::Line(_, _, l)
            | Key::Band(_, l)
            | Key::Bar(_, _, l)
            | Key::Interval(l)
            | Key::Offscale(l) => l,
        };
        let w = 22.0 + label.chars().count() as f64 * CHAR_W + 14.0;
        if x > x0 && x + w > x0 + width {
            x = x0;
            y += LEGEND_ROW;
        }
        let cy = y + 6.0;
        match k {
            Key::Marker(m, color, filled, _) => {
                svg.push_str(&marker(*m, x + 8.0, cy, 4.5, color, *filled, None));
            }
            Key::Line(color, dashed, _) => {
                let _ = write!(
                    svg,
                    "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"1.6\"{}/>",
                    c(x),
                    c(cy),
                    c(x + 16.0),
                    c(cy),
                    if *dashed {
                        " stroke-dasharray=\"4 3\""
                    } else {
                        ""
                    }
                );
            }
            Key::Band(color, _) => {
                let _ = write!(
                    svg,
                    "<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"10\" fill=\"{color}\" fill-opacity=\"0.16\" stroke=\"{color}\" stroke-opacity=\"0.5\"/>",
                    c(x),
                    c(cy - 5.0)
                );
            }
            Key::Bar(color, opacity, _) => {
                let _ = write!(
                    svg,
                    "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{color}\" fill-opacity=\"{opacity}\"/>",
                    c(x + 2.0),
                    c(cy - 6.0)
                );
            }
            Key::Offscale(_) => svg.push_str(&triangle(x + 8.0, cy, 5.0, true, INK, None)),
            Key::Interval(_) => {
                let _ = write!(
                    svg,
                    "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{INK}\" stroke-width=\"2\"/>{}",
                    c(x),
                    c(x + 16.0),
                    diamond(x + 8.0, cy, 4.5),
                    y = c(cy)
                );
            }
        }
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>",
            c(x + 22.0),
            c(cy + 4.0),
            escape(label)
        );
        x += w;
    }
    (svg, y - y0 + LEGEND_ROW)
}

fn diamond(x: f64, y: f64, r: f64) -> String {
    format!(
        "<path d=\"M{} {}L{} {}L{} {}L{} {}Z\" fill=\"{INK}\"/>",
        c(x),
        c(y - r),
        c(x + r),
        c(y),
        c(x),
        c(y + r),
        c(x - r),
        c(y)
    )
}

fn marker(
    m: Marker,
    x: f64,
    y: f64,
    r: f64,
    color: &str,
    filled: bool,
    title: Option<&str>,
) -> String {
    let fill = if filled { color } else { "#fff" };
    let style = format!("fill=\"{fill}\" stroke=\"{color}\" stroke-width=\"1.6\"");
    let title = title.map_or(String::new(), |t| format!("<title>{}</title>", escape(t)));
    let close = |tag: &str| {
        if title.is_empty() {
            "/>".to_owned()
        } else {
            format!(">{title}</{tag}>")
        }
    };
    match m {
        Marker::Circle => format!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" {style}{}",
            c(x),
            c(y),
            c(r),
            close("circle")
        ),
        Marker::Square => {
            let s = r * 0.9;
            format!(
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {style}{}",
                c(x - s),
                c(y - s),
                c(2.0 * s),
                c(2.0 * s),
                close("rect")
            )
        }
    }
}

fn svg_open(w: f64, h: f64, label: &str) -> String {
    format!(
        "<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         {FONT} role=\"img\" aria-label=\"{}\"><rect width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>",
        escape(label),
        w = c(w),
        h = c(h)
    )
}

/// Per-round times of several series: x is the round (1..n), y the time from 0, in the unit that
/// suits the largest value. Each point has a tooltip with its round and value.
pub fn rounds_plot(p: &RoundsPlot<'_>) -> String {
    let n = p.series.iter().map(|s| s.values.len()).max().unwrap_or(0);
    let max = p
        .series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let (unit, factor) = time_unit(max);
    let y_axis = Axis::linear(0.0, if max > 0.0 { max * factor * 1.04 } else { 1.0 }, 5);

    let (ml, mr, mb) = (62.0, 14.0, 44.0);
    let mut keys: Vec<Key<'_>> = p
        .series
        .iter()
        .map(|s| Key::Marker(s.marker, s.color, true, s.label.to_owned()))
        .collect();
    if let Some((filled, hollow)) = p.fill_key {
        keys.push(Key::Marker(Marker::Circle, INK, true, filled.to_owned()));
        keys.push(Key::Marker(Marker::Circle, INK, false, hollow.to_owned()));
    }
    if let Some((_, label)) = p.cut {
        keys.push(Key::Line(INK, true, label.to_owned()));
    }
    let (legend_svg, legend_h) = legend(&keys, ml, 8.0, W - ml - mr);
    let mt = 8.0 + legend_h + 8.0;
    let plot_h = 210.0;
    let h = mt + plot_h + mb;
    let plot_w = W - ml - mr;
    let x_of = |round: f64| ml + (round - 0.5) / n.max(1) as f64 * plot_w;
    let y_of = |v: f64| mt + plot_h - y_axis.frac(v * factor).clamp(0.0, 1.0) * plot_h;

    let mut svg = svg_open(W, h, &format!("{} per {}", p.y_title, p.x_title));
    svg.push_str(&legend_svg);
    // Grid and y ticks.
    for &t in &y_axis.ticks {
        let y = mt + plot_h - y_axis.frac(t) * plot_h;
        let _ = write!(
            svg,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{GRID}\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            c(ml),
            c(ml + plot_w),
            c(ml - 6.0),
            c(y + 4.0),
            y_axis.label(t),
            y = c(y)
        );
    }
    // x ticks: every round when few, else a nice step.
    let step = if n <= 20 {
        1
    } else {
        nice_step(n as f64, 10).round().max(1.0) as usize
    };
    let mut k = if step == 1 { 1 } else { step };
    let mut xticks = vec![];
    if step > 1 {
        xticks.push(1);
    }
    while k <= n {
        xticks.push(k);
        k += step;
    }
    for k in xticks {
        let x = x_of(k as f64);
        let _ = write!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#888\"/>\
             <text x=\"{x}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{k}</text>",
            c(mt + plot_h),
            c(mt + plot_h + 4.0),
            c(mt + plot_h + 17.0),
            x = c(x)
        );
    }
    // Axes and titles.
    let _ = write!(
        svg,
        "<path d=\"M{l} {t}V{b}H{r}\" fill=\"none\" stroke=\"#888\"/>\
         <text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\
         <text transform=\"translate(16 {}) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">{} ({unit})</text>",
        c(ml + plot_w / 2.0),
        c(h - 8.0),
        escape(p.x_title),
        c(mt + plot_h / 2.0),
        escape(p.y_title),
        l = c(ml),
        t = c(mt),
        b = c(mt + plot_h),
        r = c(ml + plot_w),
    );
    if let Some((k, _)) = p.cut.filter(|(k, _)| *k >= 1 && *k < n) {
        let x = x_of(k as f64 + 0.5);
        let _ = write!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{INK}\" stroke-dasharray=\"4 3\"/>",
            c(mt),
            c(mt + plot_h),
            x = c(x)
        );
    }
    // Series: a thin line through consecutive finite points, then the markers.
    let r = if n <= 30 {
        4.5
    } else if n <= 80 {
        3.5
    } else {
        2.5
    };
    for s in &p.series {
        let mut d = String::new();
        let mut pen_down = false;
        for (i, &v) in s.values.iter().enumerate() {
            if v.is_finite() {
                let _ = write!(
                    d,
                    "{}{} {}",
                    if pen_down { "L" } else { "M" },
                    c(x_of(i as f64 + 1.0)),
                    c(y_of(v))
                );
                pen_down = true;
            } else {
                pen_down = false;
            }
        }
        if !d.is_empty() {
            let _ = write!(
                svg,
                "<path d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.3\" stroke-opacity=\"0.7\"/>",
                s.color
            );
        }
    }
    for s in &p.series {
        for (i, &v) in s.values.iter().enumerate() {
            if !v.is_finite() {
                continue;
            }
            let note = s.notes.get(i).map_or(String::new(), |n| format!(", {n}"));
            let title = format!("round {}, {}: {}{note}", i + 1, s.label, format_seconds(v));
            svg.push_str(&marker(
                s.marker,
                x_of(i as f64 + 1.0),
                y_of(v),
                r,
                s.color,
                s.filled.get(i).copied().unwrap_or(true),
                Some(&title),
            ));
        }
    }
    svg.push_str("</svg>");
    svg
}

/// Quantile `q` of sorted values, linear between order statistics.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (i, f) = (pos.floor() as usize, pos.fract());
    if i + 1 < sorted.len() {
        sorted[i] * (1.0 - f) + sorted[i + 1] * f
    } else {
        sorted[i]
    }
}

/// Stacks dots of radius `r` at the given x positions: each goes to the lowest level where it
/// overlaps no dot already placed (values in ascending order). Returns the level of each.
fn stack(xs: &[f64], r: f64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|a, b| xs[*a].total_cmp(&xs[*b]));
    let mut levels = vec![0; xs.len()];
    // Right-most x per level so far: dots come in ascending x, so only the last one can overlap.
    let mut last: Vec<f64> = Vec::new();
    for i in order {
        let level = last
            .iter()
            .position(|&lx| xs[i] - lx >= 2.0 * r)
            .unwrap_or(last.len());
        if level == last.len() {
            last.push(xs[i]);
        } else {
            last[level] = xs[i];
        }
        levels[i] = level;
    }
    levels
}

/// The per-round ratios as a stacked dot plot (one dot per round, dots that would overlap stacked
/// upwards), or as a histogram of rounds when there are too many to stack, over the shaded regions
/// where the sign test counts a win for either version, with a solid line at 1, dashed lines at
/// `1 − min_impr` and `1 / (1 − min_impr)`, and the median with its interval in a lane under the
/// dots. The x axis is linear; it covers the bulk of the ratios (3 interquartile ranges beyond the
/// quartiles), and rounds beyond are drawn at its edge as triangles pointing outwards.
pub fn ratio_plot(p: &RatioPlot<'_>) -> String {
    let judged = p.judged.unwrap_or(p.ratios.len());
    let vals: Vec<(usize, f64)> = p
        .ratios
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, v)| v.is_finite() && *v > 0.0)
        .collect();
    let m = if p.min_impr.is_finite() {
        p.min_impr.clamp(0.0, 0.9)
    } else {
        0.0
    };
    let (win_p, win_o) = (1.0 - m, 1.0 / (1.0 - m));
    let ci = p.median_ci.filter(|(med, ci)| {
        med.is_finite() && ci[0].is_finite() && ci[1].is_finite() && ci[0] <= ci[1]
    });
    // Range: the reference lines, the interval, and the ratios within the fences.
    let mut sorted: Vec<f64> = vals.iter().map(|v| v.1).collect();
    sorted.sort_by(f64::total_cmp);
    let (fence_lo, fence_hi) = if sorted.is_empty() {
        (f64::NEG_INFINITY, f64::INFINITY)
    } else {
        let (q1, q3) = (quantile(&sorted, 0.25), quantile(&sorted, 0.75));
        let spread = (3.0 * (q3 - q1)).max(0.1 * quantile(&sorted, 0.5));
        (q1 - spread, q3 + spread)
    };
    let inside = |v: f64| v >= fence_lo && v <= fence_hi;
    let mut lo = win_p.min(1.0);
    let mut hi = win_o.max(1.0);
    for &v in sorted.iter().filter(|v| inside(**v)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if let Some((med, ci)) = ci {
        lo = lo.min(ci[0].max(fence_lo)).min(med);
        hi = hi.max(ci[1].min(fence_hi)).max(med);
    }
    let pad = ((hi - lo) * 0.06).max(0.02);
    let axis = Axis::linear((lo - pad).max(0.0), hi + pad, 6);
    let off_lo = vals.iter().filter(|v| v.1 < axis.lo).count();
    let off_hi = vals.iter().filter(|v| v.1 > axis.hi).count();
    let later = vals.iter().filter(|v| v.0 >= judged).count();

    // Dots when they fit with a radius of at least 2.5 px, else a histogram.
    let dots_h = 150.0;
    let plot_w_dots = W - 40.0;
    let fracs: Vec<f64> = vals
        .iter()
        .map(|v| axis.frac(v.1).clamp(0.0, 1.0))
        .collect();
    let mut dots: Option<(f64, Vec<usize>)> = None;
    for r in [5.0, 4.5, 4.0, 3.5, 3.0, 2.5] {
        let xs: Vec<f64> = fracs.iter().map(|f| f * plot_w_dots).collect();
        let levels = stack(&xs, r);
        let top = levels
            .iter()
            .max()
            .map_or(0.0, |l| (*l + 1) as f64 * 2.0 * r);
        if top <= dots_h - 6.0 {
            dots = Some((r, levels));
            break;
        }
    }
    let (ml, mr, mb) = if dots.is_some() {
        (20.0, 20.0, 44.0)
    } else {
        (56.0, 20.0, 44.0)
    };
    let plot_w = W - ml - mr;

    let mut keys = vec![
        Key::Band(
            PATCHED_COLOR,
            format!("{} win: ratio ≤ {} (1 − min_impr)", p.names[1], trim(win_p)),
        ),
        Key::Band(
            ORIGINAL_COLOR,
            format!("{} win: ratio ≥ {}", p.names[0], trim(win_o)),
        ),
        Key::Line(INK, false, "1: same time".to_owned()),
    ];
    if dots.is_some() {
        keys.push(Key::Marker(
            Marker::Circle,
            INK,
            true,
            "one timed round".to_owned(),
        ));
        if later > 0 {
            keys.push(Key::Marker(
                Marker::Circle,
                INK,
                false,
                "round after the verdict".to_owned(),
            ));
        }
    } else {
        keys.push(Key::Bar(INK, 0.75, "rounds per bin".to_owned()));
        if later > 0 {
            keys.push(Key::Bar(INK, 0.3, "rounds after the verdict".to_owned()));
        }
    }
    if ci.is_some() {
        keys.push(Key::Interval("median ratio, 95% CI".to_owned()));
    }
    if off_lo + off_hi > 0 {
        keys.push(Key::Offscale(format!(
            "{} round(s) off scale, at the edge",
            off_lo + off_hi
        )));
    }
    let (legend_svg, legend_h) = legend(&keys, ml, 8.0, plot_w);
    let mt = 8.0 + legend_h + 8.0;
    let lane = 22.0; // median/CI lane at the bottom of the plot area
    let plot_h = dots_h + lane;
    let h = mt + plot_h + mb;
    let x_of = |v: f64| ml + axis.frac(v).clamp(0.0, 1.0) * plot_w;
    let (top, bottom) = (mt, mt + plot_h);

    let mut svg = svg_open(W, h, p.x_title);
    svg.push_str(&legend_svg);
    // Win regions.
    let xp = x_of(win_p);
    let xo = x_of(win_o);
    let _ = write!(
        svg,
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{PATCHED_COLOR}\" fill-opacity=\"0.10\"/>\
         <rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{ORIGINAL_COLOR}\" fill-opacity=\"0.10\"/>",
        c(ml),
        c(top),
        c((xp - ml).max(0.0)),
        c(plot_h),
        c(xo),
        c(top),
        c((ml + plot_w - xo).max(0.0)),
        c(plot_h),
    );
    // Ticks and grid.
    for &t in &axis.ticks {
        let x = x_of(t);
        let _ = write!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{GRID}\"/>\
             <line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#888\"/>\
             <text x=\"{x}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            c(top),
            c(bottom),
            c(bottom),
            c(bottom + 4.0),
            c(bottom + 17.0),
            axis.label(t),
            x = c(x)
        );
    }
    let _ = write!(
        svg,
        "<line x1=\"{}\" y1=\"{b}\" x2=\"{}\" y2=\"{b}\" stroke=\"#888\"/>\
         <line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#ccc\" stroke-dasharray=\"2 2\"/>\
         <text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
        c(ml),
        c(ml + plot_w),
        c(ml),
        c(bottom - lane),
        c(ml + plot_w),
        c(bottom - lane),
        c(ml + plot_w / 2.0),
        c(h - 8.0),
        escape(p.x_title),
        b = c(bottom)
    );
    // Reference lines.
    let vline = |x: f64, color: &str, dash: bool| {
        format!(
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"1.5\"{}/>",
            c(top),
            c(bottom),
            if dash {
                " stroke-dasharray=\"5 3\""
            } else {
                ""
            },
            x = c(x)
        )
    };
    svg.push_str(&vline(xp, PATCHED_COLOR, true));
    svg.push_str(&vline(xo, ORIGINAL_COLOR, true));
    svg.push_str(&vline(x_of(1.0), INK, false));
    // Median and interval.
    if let Some((med, ci)) = ci {
        let y = bottom - lane / 2.0;
        let (x0, x1) = (x_of(ci[0]), x_of(ci[1]));
        let _ = write!(
            svg,
            "<g><title>median ratio {} (95% CI {} to {})</title>\
             <line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{INK}\" stroke-width=\"2\"/>\
             <line x1=\"{x0}\" y1=\"{}\" x2=\"{x0}\" y2=\"{}\" stroke=\"{INK}\" stroke-width=\"2\"/>\
             <line x1=\"{x1}\" y1=\"{}\" x2=\"{x1}\" y2=\"{}\" stroke=\"{INK}\" stroke-width=\"2\"/>{}</g>",
            trim(med),
            trim(ci[0]),
            trim(ci[1]),
            c(x0),
            c(x1),
            c(y - 5.0),
            c(y + 5.0),
            c(y - 5.0),
            c(y + 5.0),
            diamond(x_of(med), y, 5.0),
            y = c(y),
            x0 = c(x0),
            x1 = c(x1),
        );
    }
    let floor = bottom - lane - 3.0;
    match dots {
        Some((r, levels)) => {
            for (k, &(i, v)) in vals.iter().enumerate() {
                let x = ml + fracs[k] * plot_w;
                let y = floor - r - levels[k] as f64 * 2.0 * r;
                let after = i >= judged;
                let title = format!(
                    "round {}: {}{}{}",
                    i + 1,
                    trim(v),
                    if after { ", after the verdict" } else { "" },
                    if v < axis.lo || v > axis.hi {
                        ", off scale"
                    } else {
                        ""
                    }
                );
                let fill = if after { "#fff" } else { INK };
                if v < axis.lo || v > axis.hi {
                    svg.push_str(&triangle(x, y, r + 1.0, v > axis.hi, fill, Some(&title)));
                } else {
                    let _ = write!(
                        svg,
                        "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{fill}\" fill-opacity=\"{}\" \
                         stroke=\"{}\" stroke-width=\"{}\"><title>{}</title></circle>",
                        c(x),
                        c(y),
                        c(r - 0.4),
                        if after { "1" } else { "0.8" },
                        if after { INK } else { "#fff" },
                        if after { "1.2" } else { "0.6" },
                        escape(&title)
                    );
                }
            }
        }
        None => {
            // Histogram: bins of equal width across the axis, judged rounds solid, later ones light.
            let bins = 40usize;
            let mut counts = vec![[0usize; 2]; bins];
            for (k, &(i, _)) in vals.iter().enumerate() {
                let b = ((fracs[k] * bins as f64).floor() as usize).min(bins - 1);
                counts[b][usize::from(i >= judged)] += 1;
            }
            let max = counts.iter().map(|c| c[0] + c[1]).max().unwrap_or(1).max(1);
            let y_axis = Axis::linear(0.0, max as f64, 4);
            let hist_h = dots_h - 6.0;
            let y_of = |n: f64| floor - y_axis.frac(n) * hist_h;
            for &t in y_axis.ticks.iter().filter(|t| t.fract() == 0.0) {
                let _ = write!(
                    svg,
                    "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>\
                     <line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#888\"/>",
                    c(ml - 6.0),
                    c(y_of(t) + 4.0),
                    y_axis.label(t),
                    c(ml - 3.0),
                    c(ml),
                    y = c(y_of(t))
                );
            }
            let _ = write!(
                svg,
                "<line x1=\"{l}\" y1=\"{}\" x2=\"{l}\" y2=\"{}\" stroke=\"#888\"/>\
                 <text transform=\"translate(16 {}) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">rounds</text>",
                c(floor - hist_h),
                c(floor),
                c(floor - hist_h / 2.0),
                l = c(ml)
            );
            let bw = plot_w / bins as f64;
            for (b, cnt) in counts.iter().enumerate() {
                let x = ml + b as f64 * bw + 0.5;
                let (lo_v, hi_v) = (
                    axis.lo + (axis.hi - axis.lo) * b as f64 / bins as f64,
                    axis.lo + (axis.hi - axis.lo) * (b + 1) as f64 / bins as f64,
                );
                let mut base = 0usize;
                for (part, opacity) in [(0, "0.75"), (1, "0.3")] {
                    let n = cnt[part];
                    if n == 0 {
                        continue;
                    }
                    let (y0, y1) = (y_of((base + n) as f64), y_of(base as f64));
                    let _ = write!(
                        svg,
                        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{INK}\" fill-opacity=\"{opacity}\">\
                         <title>{n} round(s){} with ratio {}–{}</title></rect>",
                        c(x),
                        c(y0),
                        c((bw - 1.0).max(0.5)),
                        c(y1 - y0),
                        if part == 1 { " after the verdict" } else { "" },
                        trim(lo_v),
                        trim(hi_v)
                    );
                    base += n;
                }
            }
            for (n, right) in [(off_lo, false), (off_hi, true)] {
                if n > 0 {
                    let x = if right { ml + plot_w - 6.0 } else { ml + 6.0 };
                    let title = format!("{n} round(s) off scale, counted in the edge bin");
                    svg.push_str(&triangle(
                        x,
                        floor - hist_h + 6.0,
                        6.0,
                        right,
                        INK,
                        Some(&title),
                    ));
                }
            }
        }
    }
    svg.push_str("</svg>");
    svg
}

/// A triangle pointing right (or left) centred at `(x, y)`.
fn triangle(x: f64, y: f64, r: f64, right: bool, fill: &str, title: Option<&str>) -> String {
    let (tip, back) = if right {
        (x + r, x - r)
    } else {
        (x - r, x + r)
    };
    let title = title.map_or(String::new(), |t| format!("<title>{}</title>", escape(t)));
    format!(
        "<path d=\"M{} {}L{} {}L{} {}Z\" fill=\"{fill}\" stroke=\"{INK}\" stroke-width=\"1\">{title}</path>",
        c(tip),
        c(y),
        c(back),
        c(y - r),
        c(back),
        c(y + r)
    )
}

/// A ratio with three decimals, trailing zeros dropped (`0.95`, `1.053`, `1`).
fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_owned()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn no_bad_numbers(svg: &str) {
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }

    #[test]
    fn nice_axes() {
        let a = Axis::linear(0.0, 645.0 * 1.04, 5);
        assert_eq!(a.lo, 0.0);
        assert_eq!(a.hi, 700.0);
        assert_eq!(a.label(a.ticks[1]), "100");
        let a = Axis::linear(0.0, 1.9, 5);
        assert_eq!(
            a.ticks.iter().map(|t| a.label(*t)).collect::<Vec<_>>(),
            ["0.0", "0.5", "1.0", "1.5", "2.0"]
        );
        let a = Axis::linear(0.2, 1.3, 6);
        assert_eq!(a.label(a.ticks[1]), "0.4");
        let a = Axis::linear(0.9, 1.1, 6);
        assert!(a.ticks.iter().any(|t| a.label(*t) == "0.95"));
    }

    #[test]
    fn seconds_with_units() {
        assert_eq!(format_seconds(1.842), "1.84 s");
        assert_eq!(format_seconds(0.139), "139 ms");
        assert_eq!(format_seconds(0.0139), "13.9 ms");
        assert_eq!(format_seconds(0.00085), "850 µs");
        assert_eq!(format_seconds(0.0), "0 s");
        assert_eq!(format_seconds(0.001), "1 ms");
        assert_eq!(format_seconds(1.1), "1.1 s");
        assert_eq!(format_seconds(250.0), "250 s");
        assert_eq!(format_seconds(123.4), "123 s");
        assert_eq!(format_seconds(f64::NAN), "-");
    }

    #[test]
    fn rounds_plot_skips_non_finite_values_and_escapes() {
        let o = [0.5, f64::NAN, 0.4];
        let p = [0.3, 0.2, f64::INFINITY];
        let svg = rounds_plot(&RoundsPlot {
            series: vec![
                Series {
                    label: "original <a>",
                    color: ORIGINAL_COLOR,
                    marker: Marker::Circle,
                    values: &o,
                    filled: vec![true, false, true],
                    notes: vec![],
                },
                Series {
                    label: "patched",
                    color: PATCHED_COLOR,
                    marker: Marker::Square,
                    values: &p,
                    filled: vec![],
                    notes: vec!["ran first".into()],
                },
            ],
            fill_key: Some(("ran first", "ran second")),
            y_title: "time",
            x_title: "timed round",
            cut: Some((2, "verdict here")),
        });
        no_bad_numbers(&svg);
        assert!(svg.contains("original &lt;a&gt;"));
        assert!(svg.contains("time (ms)"));
        assert_eq!(svg.matches("<title>").count(), 4);
        assert!(svg.contains("round 1, patched: 300 ms, ran first"));
    }

    #[test]
    fn ratio_plot_draws_every_finite_ratio_once() {
        let ratios = [0.5, 0.52, 0.5, 0.9, f64::NAN, 2.0, 0.0, f64::INFINITY];
        let svg = ratio_plot(&RatioPlot {
            ratios: &ratios,
            min_impr: 0.05,
            median_ci: Some((0.6, [0.5, f64::NAN])),
            x_title: "patched / original per round",
            names: ["original", "patched"],
            judged: None,
        });
        no_bad_numbers(&svg);
        assert_eq!(svg.matches("<circle").count(), 5 + 1); // 5 rounds + the legend's dot
        assert!(svg.contains("ratio ≤ 0.95"));
        assert!(
            !svg.contains("median ratio 0.6"),
            "CI with NaN is not drawn"
        );
        // Many equal ratios: a histogram instead of dots, every round counted once.
        let many: Vec<f64> = (0..500).map(|k| 1.0 + f64::from(k % 3) * 0.01).collect();
        let svg = ratio_plot(&RatioPlot {
            ratios: &many,
            min_impr: 0.05,
            median_ci: Some((1.0, [1.0, 1.0])),
            x_title: "x",
            names: ["a", "b"],
            judged: Some(400),
        });
        no_bad_numbers(&svg);
        assert!(svg.contains("rounds per bin") && svg.contains("rounds after the verdict"));
        let counted: usize = svg
            .match_indices("<title>")
            .filter_map(|(i, _)| {
                let rest = &svg[i + 7..];
                rest.find(" round(s)")
                    .and_then(|e| rest[..e].parse::<usize>().ok())
            })
            .sum();
        assert_eq!(counted, 500);
        // An outlier far off: drawn at the edge, the axis stays on the bulk.
        let svg = ratio_plot(&RatioPlot {
            ratios: &[0.9, 0.92, 0.95, 1.0, 1.01, 9.0],
            min_impr: 0.1,
            median_ci: None,
            x_title: "x",
            names: ["a", "b"],
            judged: None,
        });
        no_bad_numbers(&svg);
        assert!(svg.contains("round 6: 9, off scale"));
        assert!(svg.contains("1 round(s) off scale, at the edge"));
        assert!(
            !svg.contains(">9.0<") && !svg.contains(">8<"),
            "axis not stretched"
        );
    }
}
