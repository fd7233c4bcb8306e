//! Tests of the `etip measure` HTML report.

use super::*;
use etip_records::measure::{Environment, NotExecutable, Protocol};
use etip_stats::{Alternative, MwuMethod, SignTestConfig, TimerRule};
use etip_stats::{EffectRecord, MannWhitneyRecord, SignTestRecord};

/// Deterministic noise in [-1, 1).
fn noise(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

/// A class's verdicts computed the way `etip measure` does.
fn judge(name: &str, o: &[f64], p: &[f64], min_impr: f64, p_val: f64) -> ClassRecord {
    let res = 0.001;
    let cfg = SignTestConfig { min_impr, p_val };
    let v = etip_stats::sign_test_with(o, p, &cfg, TimerRule::Resolution(res)).expect("sign");
    let g = etip_stats::mann_whitney_u(o, p, Alternative::Greater, MwuMethod::Auto).expect("mw");
    let l = etip_stats::mann_whitney_u(o, p, Alternative::Less, MwuMethod::Auto).expect("mw");
    let ci = etip_stats::paired_ratio_ci(o, p, 0.95, 2000, 7);
    let direction = match v.direction {
        etip_stats::Direction::PatchedFaster => Direction::PatchedFaster,
        etip_stats::Direction::OriginalFaster => Direction::OriginalFaster,
        etip_stats::Direction::NotSignificant => Direction::NotSignificant,
    };
    ClassRecord {
        kind: Default::default(),
        own: None,
        name: name.into(),
        eligible: true,
        excluded: None,
        sign_test: Some(SignTestRecord {
            direction,
            n: o.len(),
            wins_patched: v.wins_patched,
            p_patched: v.p_patched,
            wins_original: v.wins_original,
            p_original: v.p_original,
            ties: o
                .iter()
                .zip(p)
                .filter(|(a, b)| **a <= res && **b <= res)
                .count(),
            median_ratio: v.median_ratio,
            improvement: v.improvement,
            stopped_at: None,
        }),
        mann_whitney: Some(MannWhitneyRecord {
            u: g.u,
            p_patched_faster: g.p_value,
            p_original_faster: l.p_value,
            method: "exact".into(),
        }),
        effect: Some(EffectRecord {
            median_ratio: ci.estimate,
            ratio_ci: [ci.lower, ci.upper],
            cliffs_delta: etip_stats::cliffs_delta(o, p).expect("delta"),
        }),
        original: o.to_vec(),
        patched: p.to_vec(),
    }
}

/// Per-round times around `base` seconds, `factor` times as long for the patched version, with a
/// small penalty for the version that runs first (a cold cache).
fn series(
    base: f64,
    factor: f64,
    order: &[Version],
    seed: &mut u64,
    ms: bool,
) -> (Vec<f64>, Vec<f64>) {
    let round = |v: f64| if ms { (v * 1000.0).round() / 1000.0 } else { v };
    order
        .iter()
        .map(|f| {
            let cold = |v: Version| if *f == v { 1.04 } else { 1.0 };
            let o = base * cold(Version::Original) * (1.0 + 0.08 * noise(seed));
            let p = base * factor * cold(Version::Patched) * (1.0 + 0.08 * noise(seed));
            (round(o), round(p))
        })
        .unzip()
}

fn measurement(id: &str, rounds: usize, aa: bool) -> Measurement {
    let order: Vec<Version> = (0..rounds)
        .map(|k| {
            if k % 2 == 0 {
                Version::Patched
            } else {
                Version::Original
            }
        })
        .collect();
    Measurement {
        schema_version: 1,
        id: id.into(),
        executable: true,
        reason: None,
        detail: None,
        rounds,
        warmup: 1,
        order,
        aa,
        executor: "docker".into(),
        cpus: vec!["2,3".into(), "2,3".into()],
        protocol: Protocol {
            rounds,
            warmup: 1,
            max_rounds: None,
            order: "alternate".into(),
            seed: None,
            min_impr: 0.05,
            p_val: 0.1,
            timer_rule: "resolution".into(),
            min_class_secs: 0.01,
            tests: "modules".into(),
        },
        environment: Environment {
            executor: "docker".into(),
            cpu_model: Some("AMD EPYC 7B13".into()),
            kernel: Some("6.1.0-18-amd64".into()),
            engine: Some("Docker 24.0.7".into()),
            cpus: vec!["2,3".into(), "2,3".into()],
            notes: vec![
                "both versions' sessions share one CPU set: they never run at the same time".into(),
            ],
        },
        modules: vec![".".into(), "core".into()],
        resolution: Some(0.001),
        classes: Vec::new(),
        overall: None,
        detectors: Vec::new(),
        round_log: Vec::new(),
        timing: None,
        node: None,
    }
}

fn with_classes(mut m: Measurement, specs: &[(&str, f64, f64)], seed: u64) -> Measurement {
    let mut seed = seed;
    let (min_impr, p_val) = (m.protocol.min_impr, m.protocol.p_val);
    let n = m.rounds;
    let (mut to, mut tp) = (vec![0.0; n], vec![0.0; n]);
    for &(name, base, factor) in specs {
        let (o, p) = series(base, factor, &m.order, &mut seed, true);
        let mut c = judge(name, &o, &p, min_impr, p_val);
        if base < m.protocol.min_class_secs {
            c = ClassRecord {
                eligible: false,
                excluded: Some("too_fast".into()),
                sign_test: None,
                mann_whitney: None,
                effect: None,
                ..c
            };
        } else {
            for k in 0..n {
                to[k] += o[k];
                tp[k] += p[k];
            }
            if c.sign_test.as_ref().map(|s| s.direction) == Some(Direction::PatchedFaster) {
                m.detectors.push(name.into());
            }
        }
        m.classes.push(c);
    }
    m.overall = Some(judge("overall", &to, &tp, min_impr, p_val));
    m
}

/// A realistic sample: an executable ETIP with a faster class, an unchanged one (with a name to
/// escape), a too_fast and a failed class; a not-executable ETIP; an A/A run.
fn sample() -> Vec<Measurement> {
    let mut fast = with_classes(
        measurement("mvn-fast-join", 12, false),
        &[
            ("demo.JoinTest", 0.84, 0.62),
            ("demo.Weird<&>Test", 0.31, 1.0),
            ("demo.TinyTest", 0.002, 1.0),
        ],
        42,
    );
    fast.classes.push(ClassRecord {
        kind: Default::default(),
        own: None,
        name: "demo.FlakyTest".into(),
        eligible: false,
        excluded: Some("failed".into()),
        sign_test: None,
        mann_whitney: None,
        effect: None,
        original: Vec::new(),
        patched: Vec::new(),
    });
    let mut broken = measurement("gradle-broken", 2, false);
    broken.executable = false;
    broken.reason = Some(NotExecutable::TestFailed);
    broken.detail = Some(
        "round 2, patched, class demo.ParserTest: expected:<3> but was:<4>\n\
         \tat demo.ParserTest.parses(ParserTest.java:42)"
            .into(),
    );
    broken.order.truncate(2);
    let aa = with_classes(
        measurement("mvn-fast-join (A/A)", 10, true),
        &[("demo.JoinTest", 0.84, 1.0), ("demo.SortTest", 2.3, 1.0)],
        7,
    );
    vec![fast, broken, aa]
}

fn svg_count(html: &str) -> usize {
    html.matches("<svg").count()
}

#[test]
fn sample_report_is_self_contained_escaped_and_plots_eligible_classes() {
    let results = sample();
    let html = report(&results);
    std::fs::create_dir_all(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target"))
        .expect("target dir");
    std::fs::write(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/measure-report-sample.html"
        ),
        &html,
    )
    .expect("write sample");

    assert!(!html.contains("<script"));
    assert!(!html.contains("http"));
    assert!(!html.contains("src=") && !html.contains("<link") && !html.contains("url("));
    assert!(html.contains("demo.Weird&lt;&amp;&gt;Test"));
    assert!(!html.contains("Weird<&>"));
    // Two plots (times, ratios) per plotted class: fast has overall + 2 eligible classes, the
    // not-executable one none, the A/A one overall + 2.
    assert_eq!(svg_count(&html), 2 * (3 + 3));
    for (a, _) in html.match_indices("<svg") {
        let end = a + html[a..].find("</svg>").expect("closed");
        let svg = &html[a..end];
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }
    assert!(html.contains("not executable: test_failed"));
    assert!(html.contains("expected:&lt;3&gt; but was:&lt;4&gt;"));
    assert!(html.contains("A/A run"));
    assert!(html.contains("patched / original per round"));
    for term in [
        "too_fast",
        "resolution tie",
        "Cliff&#39;s δ",
        "Mann–Whitney",
        "A/A",
    ] {
        assert!(html.contains(term), "{term}");
    }
}

#[test]
fn many_classes_plot_the_most_significant_thirty() {
    let specs: Vec<(String, f64, f64)> = (0..40)
        .map(|k| {
            (
                format!("demo.C{k:02}Test"),
                0.2,
                if k < 5 { 0.6 } else { 1.0 },
            )
        })
        .collect();
    let specs: Vec<(&str, f64, f64)> = specs.iter().map(|(n, b, f)| (n.as_str(), *b, *f)).collect();
    let m = with_classes(measurement("many", 10, false), &specs, 3);
    let html = report(&[m]);
    std::fs::write(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/measure-report-many.html"
        ),
        &html,
    )
    .expect("write");
    assert_eq!(svg_count(&html), 2 * (MAX_PLOTTED + 1));
    assert!(html.contains("40 eligible classes: plots below only for overall and the 30"));
    // The five faster classes have the smallest p and are plotted.
    for k in 0..5 {
        assert!(html.contains(&format!("<h3>many · demo.C{k:02}Test</h3>")));
    }
}

/// Edge cases to look at: 100 rounds in random order with a sequential stop, a long class name,
/// times of ~10 ms at 1 ms resolution (ratio histogram), an outlier round (off the ratio axis),
/// an original time of 0.
#[test]
fn stress_sample_renders() {
    let mut m = measurement("stress", 100, false);
    let mut seed = 11u64;
    m.order = (0..100)
        .map(|_| {
            if noise(&mut seed) < 0.0 {
                Version::Original
            } else {
                Version::Patched
            }
        })
        .collect();
    m.protocol.order = "random".into();
    m.protocol.seed = Some(11);
    m.protocol.max_rounds = Some(100);
    m.protocol.rounds = 20;
    let long = "org.apache.commons.collections4.map.AbstractReferenceMapConcurrentModificationTest";
    let mut m = with_classes(
        m,
        &[
            (long, 3.2, 0.97),
            ("demo.MicroTest", 0.012, 0.8),
            ("demo.OutlierTest", 0.05, 1.0),
        ],
        5,
    );
    // An outlier round and a zero original time.
    let c = &mut m.classes[2];
    c.patched[7] = c.original[7] * 9.0;
    c.original[9] = 0.0;
    if let Some(st) = m.classes[0].sign_test.as_mut() {
        st.stopped_at = Some(60);
        st.n = 60;
    }
    let html = report(&[m]);
    for (a, _) in html.match_indices("<svg") {
        let end = a + html[a..].find("</svg>").expect("closed");
        assert!(!html[a..end].contains("NaN") && !html[a..end].contains("inf"));
    }
    assert!(html.contains("off scale"));
    assert!(html.contains("1 round(s) not shown"));
    std::fs::write(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/measure-report-stress.html"
        ),
        html,
    )
    .expect("write");
}

/// Renders the report of a real run when its measurements exist (`ETIP_MEASUREMENTS`, default
/// `/tmp/try/m1/measurements.jsonl`) into `target/measure-report-real.html`.
#[test]
fn real_run_renders_when_present() {
    let path = std::env::var("ETIP_MEASUREMENTS")
        .unwrap_or_else(|_| "/tmp/try/m1/measurements.jsonl".into());
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    let results: Vec<Measurement> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("measurement"))
        .collect();
    let html = report(&results);
    assert!(!html.contains("NaN") && !html.contains("<script"));
    std::fs::write(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/measure-report-real.html"
        ),
        html,
    )
    .expect("write");
}
