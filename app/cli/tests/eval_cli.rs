//! `etip eval` through the binary: bad input exits with code 2 before anything runs; patches
//! refused before anything runs (one that edits a test, one that is not a diff, none) get their
//! categories, a re-run skips what is done, and `etip score` reads the results directly. Timed
//! evaluations through the binary are in tests/e2e/demo.rs.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built by cargo test")
}

const STATUS: &str = "{\"id\":\"x\",\"language\":\"python\",\"outcome\":\"failed\",\"base_commit\":\"a\",\"patched_commit\":\"b\",\"original_dir\":\"/work/original\",\"patched_dir\":\"/work/patched\",\"build_secs\":1.0}\n";

#[test]
fn bad_predictions_and_arguments_exit_2_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let status = tmp.path().join("status.jsonl");
    std::fs::write(&status, STATUS).unwrap();
    let preds = tmp.path().join("preds.jsonl");
    let eval = |args: &[&str]| {
        let mut c = etip();
        c.arg("eval").args(args).arg("--etips").arg(&status);
        c.arg("--out").arg(tmp.path().join("out"));
        c
    };
    for (text, message) in [
        ("not json\n", "preds.jsonl: line 1: not a JSON object"),
        (
            "{\"instance_id\":\"x\",\"model_name_or_path\":\"m\",\"model_patch\":\"\"}\n{\"instance_id\":\"x\",\"model_name_or_path\":\"m\",\"model_patch\":\"\"}\n",
            "was already predicted on line 1",
        ),
        (
            "{\"instance_id\":\"y\",\"model_name_or_path\":\"m\",\"model_patch\":\"\"}\n",
            "no prediction names an instance of",
        ),
    ] {
        std::fs::write(&preds, text).unwrap();
        eval(&["--predictions", preds.to_str().unwrap()])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
    eval(&["--predictions", "gold", "--workers", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--workers must be at least 1"));
    eval(&["--predictions", "gold", "--rounds", "2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no outcome can be significant"));
    eval(&["--predictions", "missing.jsonl"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.jsonl"));
}

const EDITS_A_TEST: &str = "--- a/tests/test_trivial.py\n+++ b/tests/test_trivial.py\n@@ -1,2 +1,2 @@\n-\"\"\"Takes no measurable time: pytest reports it as time=\"0.000\" (or a millisecond).\"\"\"\n+\"\"\"Edited.\"\"\"\n from textutil import join\n";

fn line(model: &str, patch: &str) -> String {
    serde_json::json!({"instance_id": "x", "model_name_or_path": model, "model_patch": patch})
        .to_string()
}

fn results(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Patches refused before anything runs need no image: the instance's failed build is enough.
/// The timed categories, the labels and the scores of timed results are checked end to end by
/// tests/e2e/demo.rs.
#[test]
fn refused_patches_are_recorded_resumed_and_scored_without_running_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let status = tmp.path().join("status.jsonl");
    std::fs::write(&status, STATUS).unwrap();
    let out = tmp.path().join("eval");
    let preds = tmp.path().join("preds.jsonl");
    std::fs::write(
        &preds,
        [
            line("tests-edited", EDITS_A_TEST),
            line("not-a-diff", "make it faster please"),
            line("no-patch", ""),
        ]
        .join("\n"),
    )
    .unwrap();
    let eval = || {
        let mut c = etip();
        c.args(["eval", "--rounds", "8", "--predictions"])
            .arg(&preds)
            .arg("--etips")
            .arg(&status)
            .arg("--out")
            .arg(&out);
        c
    };
    let run = eval().args(["--format", "json"]).assert().success();
    let printed: serde_json::Value =
        serde_json::from_slice(&run.get_output().stdout).expect("--format json prints JSON");
    assert_eq!(printed.as_array().unwrap().len(), 3, "{printed}");
    let all = results(&out.join("results.jsonl"));
    let by = |m: &str| {
        all.iter()
            .find(|r| r["model"] == m)
            .unwrap_or_else(|| panic!("{m} in {all:?}"))
            .clone()
    };
    let edited = by("tests-edited");
    assert_eq!(edited["category"], "protected", "{edited}");
    assert_eq!(edited["check"], "protected");
    assert_eq!(edited["run_id"], "default");
    assert_eq!(by("not-a-diff")["category"], "malformed");
    assert_eq!(by("no-patch")["category"], "not_generated");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["models"]["tests-edited"]["categories"]["protected"], 1,
        "{summary}"
    );
    // Every prediction keeps its log folder with the patch and the result.
    let logs: Vec<_> = walk(&out.join("logs"));
    assert!(logs.iter().any(|p| p.ends_with("result.json")), "{logs:?}");
    // A re-run skips what is done.
    eval().assert().success().stderr(predicate::str::contains(
        "3 prediction(s) already evaluated",
    ));
    // `etip score` reads the results directly: refused patches are failures under every rule.
    for rule in ["jeto", "gso", "sweperf"] {
        let o = etip()
            .args(["score", "--format", "json", "--rule", rule])
            .arg(out.join("results.jsonl"))
            .assert()
            .success();
        let rows: serde_json::Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
        for r in rows.as_array().unwrap() {
            assert_eq!(r["score"], 0.0, "{rule}: {r}");
        }
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `etip eval-test` refuses, before anything runs, a generated test that changes non-test files
/// or names nothing to run; a file that is not generated tests is bad input.
#[test]
fn generated_tests_are_checked_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let status = tmp.path().join("status.jsonl");
    std::fs::write(&status, STATUS).unwrap();
    let out = tmp.path().join("eval-test");
    let tests = tmp.path().join("tests.jsonl");
    let source = "--- a/textutil/__init__.py\n+++ b/textutil/__init__.py\n@@ -1 +1 @@\n-a\n+b\n";
    let new_test = "--- /dev/null\n+++ b/tests/test_x.py\n@@ -0,0 +1 @@\n+def test_x(): pass\n";
    let rec = |model: &str, patch: &str, classes: serde_json::Value| {
        serde_json::json!({"instance_id": "x", "model_name_or_path": model,
                           "test_patch": patch, "test_classes": classes})
        .to_string()
    };
    std::fs::write(
        &tests,
        [
            rec(
                "touches-source",
                source,
                serde_json::json!(["tests/test_x.py"]),
            ),
            rec("names-nothing", new_test, serde_json::json!([])),
            rec("no-test", "", serde_json::json!("tests/test_x.py")),
        ]
        .join("\n"),
    )
    .unwrap();
    etip()
        .args(["eval-test", "--rounds", "8", "--tests"])
        .arg(&tests)
        .arg("--etips")
        .arg(&status)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let all = results(&out.join("results.jsonl"));
    let cat = |m: &str| {
        all.iter()
            .find(|r| r["model"] == m)
            .unwrap_or_else(|| panic!("{m} in {all:?}"))["category"]
            .clone()
    };
    assert_eq!(cat("touches-source"), "not_test_only");
    assert_eq!(cat("names-nothing"), "malformed");
    assert_eq!(cat("no-test"), "not_generated");
    std::fs::write(&tests, "{\"instance_id\": 1}\n").unwrap();
    etip()
        .args(["eval-test", "--tests"])
        .arg(&tests)
        .arg("--etips")
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("other"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("tests.jsonl: line 1"));
}

/// Below the free space the run needs, nothing is evaluated and the run fails (exit 1) naming
/// the folder and the flag.
#[test]
fn too_little_free_disk_stops_the_run_before_an_evaluation() {
    let tmp = tempfile::tempdir().unwrap();
    let status = tmp.path().join("status.jsonl");
    std::fs::write(&status, STATUS).unwrap();
    let preds = tmp.path().join("preds.jsonl");
    std::fs::write(&preds, line("m", "not a diff") + "\n").unwrap();
    etip()
        .args([
            "eval",
            "--rounds",
            "8",
            "--min-free-gb",
            "100000000",
            "--predictions",
        ])
        .arg(&preds)
        .arg("--etips")
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("eval"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--min-free-gb"))
        .stderr(predicate::str::contains("the output folder"));
    let results = std::fs::read_to_string(tmp.path().join("eval/results.jsonl")).unwrap();
    assert!(results.trim().is_empty(), "nothing evaluated: {results}");
}
