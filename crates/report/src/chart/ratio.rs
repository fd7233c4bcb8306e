//! The distribution of the per-round ratio patched/original.

use super::*;

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
