//! Hand-written SVG charts for the HTML report: no scripts, no external resources, every label
//! escaped, every coordinate finite (non-finite inputs are skipped, never written as `NaN`).
//!
//! - [`rounds_plot`]: per-round times of two versions (markers joined by thin lines, filled or hollow
//!   per point, e.g. to show which version ran first in a round), y from 0 in a unit chosen from the
//!   data (s, ms or µs).
//! - [`ratio_plot`]: the per-round ratio patched/original as a stacked dot plot (a histogram when the
//!   dots would not fit), with the regions in which the sign test counts a win for either version
//!   shaded, a line at 1, and the median ratio with its confidence interval.
//! - [`rank_chart`], [`rank_scatter`], [`heatmap`], [`weight_bars`], [`sr_histogram`]: the
//!   leaderboard figures of `etip audit` (ranks across rules, ranks on two benchmarks, which tasks
//!   carry each run's harmonic mean, each run's SR distribution).
//! - [`replay_strips`]: `etip replay`'s runtime change of each task in each replay, by profile.
//!
//! Why hand-written SVG rather than a plotting crate (`plotters`' SVG backend was the candidate):
//! these figures need per-element tooltips (`<title>`), accessible labels, rotated and
//! right-aligned text, and a guarantee that user-supplied names are escaped and no non-finite
//! number reaches the file; a plotting crate would be wrapped at every one of those points, and
//! the whole chart layer stays about a thousand lines with one set of axes, colours and number
//! formats (see [`Axis`], [`format_seconds`], [`board::sr_text`]).
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

/// Horizontal grid lines at `axis`'s ticks across a plot area whose left edge is `ml`, top `mt`,
/// with the tick labels right-aligned left of it.
fn y_grid(axis: &Axis, ml: f64, mt: f64, plot_w: f64, plot_h: f64) -> String {
    let mut svg = String::new();
    for &t in &axis.ticks {
        let y = mt + plot_h - axis.frac(t) * plot_h;
        let _ = write!(
            svg,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{GRID}\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            c(ml),
            c(ml + plot_w),
            c(ml - 6.0),
            c(y + 4.0),
            axis.label(t),
            y = c(y)
        );
    }
    svg
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

mod board;
mod ratio;
mod replay;
mod rounds;
#[cfg(test)]
mod tests;

pub use board::{WeightBar, heatmap, rank_chart, rank_scatter, sr_histogram, sr_text, weight_bars};
pub use ratio::ratio_plot;
pub use replay::{ReplayStrip, replay_strips};
pub use rounds::rounds_plot;
