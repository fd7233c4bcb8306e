//! GSO's opt@k over runs (`etip score --rule gso --k K`): GSO's `opt_at_k.py` takes the first k
//! prediction runs in natural order and counts an instance when it is in any run's
//! `opt_commit_ids`, over the benchmark's N. Checked here on runs built to tell natural from
//! lexicographic order, and, for k = 1, against every official GSO score vendored in
//! `datasets/leaderboards/gso`.

use etip_records::results::{TaskResult, TestRuns};
use etip_score::input::{self, Format, Submission};
use etip_score::rules::{self, Params, Rule};
use std::path::PathBuf;

/// A task whose patch is opt_commit (2x faster than base, as fast as the reference) or not
/// (as slow as base).
fn task(id: &str, model: &str, run: &str, opt: bool) -> TaskResult {
    let patched = if opt { 1.0 } else { 2.0 };
    TaskResult {
        instance_id: id.into(),
        correct: Some(true),
        model: Some(model.into()),
        run_id: Some(run.into()),
        tests: vec![TestRuns {
            name: "t".into(),
            base: vec![2.0, 2.0],
            patched: vec![patched, patched],
            reference: vec![1.0, 1.0],
            passed: true,
        }],
        ..TaskResult::default()
    }
}

fn run(model: &str, label: &str, opt: &[&str]) -> Submission {
    Submission {
        name: format!("{model}@{label}"),
        path: PathBuf::from(format!("{label}.jsonl")),
        format: Format::EtipJsonl,
        tasks: ["a", "b", "c"]
            .iter()
            .map(|id| task(id, model, label, opt.contains(id)))
            .collect(),
        lines: vec![1, 2, 3],
        total_instances: None,
        official_score: None,
        official_summary: Default::default(),
        measurements: Vec::new(),
    }
}

#[test]
fn the_first_k_runs_in_natural_order_count_an_instance_opt_in_any_of_them() {
    // Natural order: run1, run2, run10. Lexicographic order would take run1 and run10 for k = 2.
    let subs = vec![
        run("m", "run10", &["a"]),
        run("m", "run1", &["a"]),
        run("m", "run2", &["b"]),
        run("other", "1", &["c"]),
    ];
    let groups = rules::runs_by_model(&subs);
    assert_eq!(groups.len(), 2);
    let (model, runs) = &groups[0];
    assert_eq!(model, "m");
    let p = Params::default();
    let at = |k| rules::opt_at_k(model, runs, k, &p).unwrap();
    assert_eq!(at(1).score, 33.33);
    assert_eq!(at(2).score, 66.67, "run1 and run2: a and b");
    assert_eq!(at(2).details["runs"], serde_json::json!(["run1", "run2"]));
    assert_eq!(at(3).score, 66.67);
    // opt@k never decreases with k.
    assert!(at(1).score <= at(2).score && at(2).score <= at(3).score);
    // More runs than there are is refused, naming the runs.
    let err = rules::opt_at_k(model, runs, 4, &p).unwrap_err().to_string();
    assert!(
        err.contains("needs 4 runs") && err.contains("run10"),
        "{err}"
    );
    // N from --total-instances: unsubmitted instances count as failures.
    let p102 = Params {
        total_instances: Some(102),
        ..Params::default()
    };
    assert_eq!(rules::opt_at_k(model, runs, 2, &p102).unwrap().score, 1.96);
}

#[test]
fn opt_at_1_of_one_run_is_the_official_gso_score_of_every_vendored_report() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../datasets/leaderboards/gso");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the vendored GSO reports at {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let loaded = input::load_files(&paths, &[]).unwrap();
    assert!(loaded.submissions.len() >= 21);
    for sub in &loaded.submissions {
        let official = rules::score(sub, Rule::Gso, &Params::default()).unwrap();
        assert_eq!(official.matches_official, Some(true), "{}", sub.name);
        let one =
            rules::opt_at_k(&sub.name, &[(sub.name.clone(), sub)], 1, &Params::default()).unwrap();
        assert_eq!(one.score, official.score, "{}", sub.name);
        assert_eq!(one.n_success, official.n_success, "{}", sub.name);
        assert_eq!(one.total_instances, 102, "{}", sub.name);
    }
}
