//! `etip eval` through the binary: bad input exits with code 2 before anything runs; with the real
//! Docker engine, the Python fixture's ETIP evaluates its gold patch and a submission's patches
//! (an equivalent rewrite, one that edits a test, one that is not a diff) with their categories and
//! labels, a re-run skips what is done, and `etip score` reads the results directly.

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

const EQUIVALENT: &str = "--- a/textutil/__init__.py\n+++ b/textutil/__init__.py\n@@ -3,9 +3,11 @@\n \n def dedup(values):\n     \"\"\"The distinct values, in first-seen order.\"\"\"\n+    seen = set()\n     out = []\n     for v in values:\n-        if v not in out:\n+        if v not in seen:\n+            seen.add(v)\n             out.append(v)\n     return out\n \n";

const EDITS_A_TEST: &str = "--- a/tests/test_trivial.py\n+++ b/tests/test_trivial.py\n@@ -1,2 +1,2 @@\n-\"\"\"Takes no measurable time: pytest reports it as time=\"0.000\" (or a millisecond).\"\"\"\n+\"\"\"Edited.\"\"\"\n from textutil import join\n";

fn line(model: &str, patch: &str) -> String {
    serde_json::json!({"instance_id": "ev-py", "model_name_or_path": model, "model_patch": patch})
        .to_string()
}

fn results(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn gold_and_a_submission_are_evaluated_resumed_and_scored() {
    let tmp = tempfile::tempdir().unwrap();
    let ns = format!("etiptest-evalcli-{}", std::process::id());
    let status = common::build_python(tmp.path(), "ev-py", &ns);
    let out = tmp.path().join("eval");
    let eval = |predictions: &str| {
        let mut c = etip();
        // The changed test only: the unchanged, noisier join test would make 8 rounds flaky.
        c.args([
            "eval",
            "--rounds",
            "8",
            "--tests",
            "tests/test_text_dedup.py",
        ])
        .args(["--namespace", &ns, "--predictions"])
        .arg(predictions)
        .arg("--etips")
        .arg(&status)
        .arg("--out")
        .arg(&out);
        c
    };
    eval("gold").assert().success();
    let preds = tmp.path().join("preds.jsonl");
    std::fs::write(
        &preds,
        [
            line("agent", EQUIVALENT),
            line("tests-edited", EDITS_A_TEST),
            line("not-a-diff", "make it faster please"),
        ]
        .join("\n"),
    )
    .unwrap();
    let run = eval(preds.to_str().unwrap())
        .args(["--format", "json"])
        .assert()
        .success();
    let printed: serde_json::Value =
        serde_json::from_slice(&run.get_output().stdout).expect("--format json prints JSON");
    // The table shows this call's predictions; results.jsonl the whole run's.
    assert_eq!(printed.as_array().unwrap().len(), 3, "{printed}");
    let all = results(&out.join("results.jsonl"));
    assert_eq!(all.len(), 4, "{all:?}");
    let by = |m: &str| {
        all.iter()
            .find(|r| r["model"] == m)
            .unwrap_or_else(|| panic!("{m} in {all:?}"))
            .clone()
    };
    let gold = by("gold");
    assert_eq!(gold["category"], "correct_faster", "{gold}");
    assert_eq!(gold["exact_match"], true, "{gold}");
    assert_eq!(gold["same_location"], true, "{gold}");
    assert_eq!(gold["run_id"], "default");
    let agent = by("agent");
    assert_eq!(agent["category"], "correct_faster", "{agent}");
    assert_eq!(agent["exact_match"], false, "{agent}");
    assert_eq!(agent["same_location"], true, "{agent}");
    assert_eq!(agent["apply"], "git_apply");
    let edited = by("tests-edited");
    assert_eq!(edited["category"], "protected", "{edited}");
    assert_eq!(edited["check"], "protected");
    assert_eq!(by("not-a-diff")["category"], "malformed");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["models"]["agent"]["categories"]["correct_faster"],
        1
    );
    // Every prediction keeps its log folder: the patch, the logs, the rounds, the result.
    let logs: Vec<_> = walk(&out.join("logs"));
    assert!(logs.iter().any(|p| p.ends_with("rounds.jsonl")), "{logs:?}");
    assert!(logs.iter().any(|p| p.ends_with("result.json")), "{logs:?}");
    // A re-run skips what is done.
    eval(preds.to_str().unwrap())
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "3 prediction(s) already evaluated",
        ));
    // `etip score` reads the results directly.
    for rule in ["jeto", "swefficiency", "gso", "sweperf"] {
        etip()
            .args(["score", "--rule", rule])
            .arg(out.join("results.jsonl"))
            .assert()
            .success();
    }
    let leftover = std::process::Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=etip.namespace={ns}"),
        ])
        .output()
        .unwrap();
    assert!(leftover.stdout.is_empty(), "containers left");
    etip()
        .args(["clean", "--namespace", &ns])
        .assert()
        .success();
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
