//! Per-round times of the two versions.

use super::*;

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
    svg.push_str(&y_grid(&y_axis, ml, mt, plot_w, plot_h));
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
