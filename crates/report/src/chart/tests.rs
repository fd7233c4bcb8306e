//! Tests of the charts.
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

#[test]
fn leaderboard_figures_escape_names_and_write_no_bad_numbers() {
    let runs = vec!["<a>".to_owned(), "b&c".to_owned(), "d".to_owned()];
    let rules = vec!["HM".to_owned(), "HM@0.5".to_owned()];
    let ranks = vec![
        vec![Some(1), Some(3)],
        vec![Some(2), None],
        vec![Some(3), Some(1)],
    ];
    let svg = rank_chart(&runs, &rules, &ranks);
    no_bad_numbers(&svg);
    assert!(svg.contains("&lt;a&gt; 1") && svg.contains("b&amp;c 2"));
    // The two runs that move are coloured and named on the right too; the one with a gap is grey.
    assert!(svg.contains(">3 &lt;a&gt;</text>") && svg.contains(">1 d</text>"));

    let pts = vec![
        ("x<".to_owned(), 1.0, 2.0),
        ("y".to_owned(), f64::NAN, 1.0),
        ("z".to_owned(), 2.0, 2.0),
    ];
    let svg = rank_scatter(&pts, "GSO", "SWE-fficiency");
    no_bad_numbers(&svg);
    assert_eq!(
        svg.matches("<circle").count(),
        2,
        "the point without a rank is left out"
    );
    assert!(svg.contains("x&lt;"));

    let svg = heatmap(
        &["r1".to_owned(), "r2".to_owned()],
        &["t<1>".to_owned()],
        &[vec![0.5], vec![f64::NAN]],
    );
    no_bad_numbers(&svg);
    assert!(svg.contains("r1 · t&lt;1&gt;: 50.0% of the weight"));
    assert!(svg.contains("r2 · t&lt;1&gt;: 0.0% of the weight"));
}

#[test]
fn weight_bars_share_one_scale() {
    let bar = |share: f64| WeightBar {
        task: "t".into(),
        share,
        sr: 0.01,
    };
    // The width of the first bar (the rectangles 14 px high).
    let width = |svg: &str| -> f64 {
        let bars: Vec<f64> = svg
            .match_indices("height=\"14\"")
            .map(|(i, _)| {
                let before = &svg[..i];
                let w = &before[before.rfind("width=\"").expect("w") + 7..];
                w[..w.find('"').expect("quote")].parse().expect("number")
            })
            .collect();
        bars[0]
    };
    let small = weight_bars(&[bar(0.01)], 0.3);
    let large = weight_bars(&[bar(0.3)], 0.3);
    no_bad_numbers(&small);
    assert!(
        width(&large) > 20.0 * width(&small).max(1.0) / 2.0,
        "same scale"
    );
    assert!(small.contains("1.0% · SR 0.0100"));
    assert_eq!(sr_text(8.7e-4), "8.7e-4");
    assert_eq!(sr_text(1.006), "1.01");
    assert_eq!(sr_text(50872.0), "5.1e4");
}
