//! SWE-Perf, JETO, SWE-fficiency and GSO rules on etip task-result files, against reference scores
//! computed independently with numpy/scipy by `scripts/gen_rule_vectors.py`.

use etip_score::input;
use etip_score::rules::{self, Params, Rule};
use etip_stats::SignTestConfig;
use std::io::Write;

#[test]
fn rules_match_the_scipy_reference() {
    let text = include_str!("data/rule_vectors.json");
    let vectors: serde_json::Value = serde_json::from_str(text).expect("vector file is JSON");
    let dir = tempfile::tempdir().expect("temp dir");
    let subs = vectors["submissions"].as_array().expect("submissions");
    assert_eq!(subs.len(), 3);
    for s in subs {
        let name = s["name"].as_str().expect("name");
        let path = dir.path().join(format!("{name}.jsonl"));
        let mut f = std::fs::File::create(&path).expect("create");
        for task in s["tasks"].as_array().expect("tasks") {
            writeln!(f, "{}", serde_json::to_string(task).expect("task")).expect("write");
        }
        drop(f);
        let sub = input::load_file(&path, None).expect("etip JSONL loads");
        let expected = &s["expected"];
        let score =
            |rule: Rule, params: &Params| rules::score(&sub, rule, params).expect("scores").score;
        let p = Params::default();
        let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * b.abs().max(1e-12);
        let sweperf = score(Rule::Sweperf, &p);
        assert!(
            close(
                sweperf,
                expected["sweperf"].as_f64().expect("sweperf"),
                1e-9
            ),
            "{name}: sweperf {sweperf} vs {}",
            expected["sweperf"]
        );
        assert_eq!(
            score(Rule::Jeto, &p),
            expected["jeto"].as_f64().expect("jeto"),
            "{name}"
        );
        let conservative = Params {
            sign: SignTestConfig::conservative(),
            ..Params::default()
        };
        assert_eq!(
            score(Rule::Jeto, &conservative),
            expected["jeto_conservative"].as_f64().expect("jeto"),
            "{name}"
        );
        let hm = score(Rule::Swefficiency, &p);
        assert!(
            close(hm, expected["swefficiency"].as_f64().expect("hm"), 1e-12),
            "{name}: {hm}"
        );
        assert_eq!(
            score(Rule::Gso, &p),
            expected["gso"].as_f64().expect("gso"),
            "{name}"
        );
    }
}

#[test]
fn benchmark_size_counts_unsubmitted_tasks_as_failures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("two.jsonl");
    let runs = |x: f64| {
        (0..30)
            .map(|k| x * (1.0 + 0.001 * k as f64))
            .collect::<Vec<_>>()
    };
    let task = |id: &str, factor: f64| {
        serde_json::json!({"instance_id": id, "correct": true, "tests": [
            {"name": "T", "base": runs(1.0), "patched": runs(factor), "reference": runs(0.5)}
        ]})
    };
    std::fs::write(&path, format!("{}\n{}\n", task("a", 0.5), task("b", 1.0))).expect("write");
    let sub = input::load_file(&path, None).expect("loads");
    let jeto = rules::score(&sub, Rule::Jeto, &Params::default()).expect("scores");
    assert_eq!((jeto.n_success, jeto.score), (1, 50.0));
    let jeto10 = rules::score(
        &sub,
        Rule::Jeto,
        &Params {
            total_instances: Some(10),
            ..Params::default()
        },
    )
    .expect("scores");
    assert_eq!((jeto10.total_instances, jeto10.score), (10, 10.0));
    let too_small = rules::score(
        &sub,
        Rule::Jeto,
        &Params {
            total_instances: Some(1),
            ..Params::default()
        },
    );
    assert!(too_small.is_err());
}
