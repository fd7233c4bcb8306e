//! `etip import` through the binary. Without an engine: bad files and refused tasks exit 2 with
//! the task and the field named, and the good tasks are written. With the Docker engine: a
//! SWE-fficiency-format dataset made here from the Python fixture (base commit, gold patch,
//! correctness tests, workload) is imported, built (the gold patch applied in etip's own clone),
//! and the gold and the empty patch are evaluated on the task's tests and workload; the
//! SWE-fficiency speedup ratio `etip score` gives agrees with the results' speedups, and each
//! result's figures under SWE-fficiency's and GSO's rules agree with numpy/scipy's computation
//! of its runs. A patch for another base fails the build as `patch_does_not_apply` with git's
//! message. A GSO-format task's equivalence check passes the gold patch and fails a fast patch
//! whose results differ.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built by cargo test")
}

/// SWE-fficiency's workload shape: the fixture's quadratic `dedup` on 6,000 values.
const WORKLOAD: &str = "import timeit\n\nfrom textutil import dedup\n\nvalues = [(i * 7919) % 3000 for i in range(6000)]\n\n\ndef workload():\n    dedup(values)\n\n\nruntimes = timeit.repeat(workload, number=1, repeat=5)\nprint(\"Mean:\", sum(runtimes) / len(runtimes))\n";

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `etip import --format FORMAT FILE --source REPO [--specs SPECS] --out OUT`, which must succeed.
fn import(format: &str, file: &Path, repo: &Path, specs: Option<&Path>, out: &Path) {
    let mut c = etip();
    c.args(["import", "--format", format])
        .arg(file)
        .arg("--source")
        .arg(repo);
    if let Some(specs) = specs {
        c.arg("--specs").arg(specs);
    }
    c.arg("--out").arg(out).assert().success();
}

/// `etip build` of `etips` into `out` in namespace `ns`, which must succeed; the statuses.
fn build(ns: &str, etips: &Path, out: &Path) -> Vec<Value> {
    etip()
        .args(["build", "--namespace", ns, "--etips"])
        .arg(etips)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    lines(&out.join("status.jsonl"))
}

/// `etip eval --tests task` of `predictions` on `status` in `rounds` rounds into `out`, which
/// must succeed; the result of `id` and the results file.
fn eval(status: &Path, predictions: &str, rounds: u32, out: &Path, id: &str) -> (Value, PathBuf) {
    etip()
        .args(["eval", "--tests", "task", "--reuse-containers", "--rounds"])
        .arg(rounds.to_string())
        .args(["--predictions", predictions, "--etips"])
        .arg(status)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    let file = out.join("results.jsonl");
    let r = lines(&file)
        .into_iter()
        .find(|r| r["instance_id"] == id)
        .unwrap_or_else(|| panic!("{id} in {}", file.display()));
    (r, file)
}

/// The names of a result's timed tests.
fn timed(result: &Value) -> Vec<String> {
    result["tests"]
        .as_array()
        .unwrap_or_else(|| panic!("timed tests in {result}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// The fixture repository in `tmp/repo` and a SWE-fficiency task of its dedup change.
fn task(tmp: &Path) -> (Value, Vec<String>) {
    let repo = tmp.join("repo");
    let c = common::python_fixture(&repo);
    let patch = etip_testkit::git(&repo, &["diff", &c[0], &c[1]]) + "\n";
    let t = json!({
        "instance_id": "org__textutil-1",
        "repo": "org/textutil",
        "base_commit": c[0],
        "patch": patch,
        "test_patch": "",
        "problem_statement": "dedup is quadratic",
        "hints_text": "",
        "created_at": "2024-01-01T00:00:00Z",
        "version": "0.1",
        "FAIL_TO_PASS": [],
        "PASS_TO_PASS": ["tests/test_join.py::test_join_many_parts"],
        "environment_setup_commit": c[0],
        "workload": WORKLOAD,
        "speedup": 20.0,
        "covering_tests": ["tests/test_join.py"],
        "single_thread_tests": [],
        "test_cmd": "pytest -rA",
        "rebuild_cmd": "",
        "image_name": "",
    });
    (t, c)
}

#[test]
fn refused_tasks_exit_2_naming_the_task_and_the_field_and_the_others_are_written() {
    let tmp = tempfile::tempdir().unwrap();
    let (good, _) = task(tmp.path());
    let mut missing = good.clone();
    missing["instance_id"] = json!("org__textutil-2");
    missing.as_object_mut().unwrap().remove("workload");
    let file = tmp.path().join("tasks.jsonl");
    std::fs::write(&file, format!("{good}\n{missing}\n")).unwrap();
    let out = tmp.path().join("etips.jsonl");
    let run = |format: &str| {
        let mut c = etip();
        c.args(["import", "--format", format])
            .arg(&file)
            .arg("--source")
            .arg(tmp.path().join("repo"))
            .arg("--out")
            .arg(&out);
        c
    };
    run("swefficiency")
        .assert()
        .code(2)
        .stdout(
            predicate::str::contains("org__textutil-2")
                .and(predicate::str::contains("workload is missing")),
        )
        .stderr(predicate::str::contains("1 task(s) of"));
    let etips = lines(&out);
    assert_eq!(etips.len(), 1);
    assert_eq!(etips[0]["id"], "org__textutil-1");
    assert_eq!(etips[0]["task"]["expert_speedup"], 20.0);
    assert_eq!(etips[0]["workloads"][0]["name"], "workload");
    run("humaneval")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown format"));
    std::fs::write(&file, "{not json\n").unwrap();
    run("swebench")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("line 1"));
    // The written file is not replaced by a run that imports nothing.
    assert_eq!(lines(&out).len(), 1);
}

#[test]
fn an_imported_swefficiency_task_builds_from_its_gold_patch_and_is_evaluated_and_scored() {
    let tmp = tempfile::tempdir().unwrap();
    let (good, c) = task(tmp.path());
    let mut other_base = good.clone();
    other_base["instance_id"] = json!("org__textutil-3");
    other_base["patch"] = json!(
        good["patch"]
            .as_str()
            .unwrap()
            .replace("def dedup", "def dedupe")
    );
    let file = tmp.path().join("tasks.json");
    std::fs::write(&file, json!([good, other_base]).to_string()).unwrap();
    // The benchmark's environment spec of the repository's version, in SWE-bench's shape: the
    // Python, the pre-install command and the extra package are applied (pytest is in the base
    // image: nothing to fetch), the install command recorded as not run.
    let specs = tmp.path().join("specs.json");
    std::fs::write(
        &specs,
        json!({"org/textutil": {"0.1": {
            "python": "3.11", "pip_packages": ["pytest"],
            "pre_install": ["touch /opt/etip/pre-install-ran"],
            "install": "python -m pip install -e .", "test_cmd": "pytest -rA"}}})
        .to_string(),
    )
    .unwrap();
    let etips = tmp.path().join("etips.jsonl");
    let repo = tmp.path().join("repo");
    import("swefficiency", &file, &repo, Some(&specs), &etips);
    let ns = format!("etiptest-import-{}", std::process::id());
    let _clean = Clean(ns.clone());
    let statuses = build(&ns, &etips, &tmp.path().join("build"));
    let build_dir = tmp.path().join("build");
    let by = |id: &str| statuses.iter().find(|s| s["id"] == id).unwrap().clone();
    let built = by("org__textutil-1");
    assert!(built["image"].is_string(), "{built}");
    assert_eq!(built["base_commit"], c[0]);
    assert_ne!(
        built["patched_commit"], c[1],
        "the patch's own commit, in etip's clone"
    );
    assert_eq!(built["task"]["format"], "swefficiency");
    assert!(built["patch"]["sha256"].is_string());
    // Each environment setting with its source.
    let tc = &built["toolchain"];
    assert_eq!(tc["version"], "3.11");
    assert!(
        tc["why"]
            .as_str()
            .unwrap()
            .contains("environment spec sets it (specs.json: org/textutil 0.1)"),
        "{tc}"
    );
    let setting = |name: &str| {
        tc["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["setting"] == name)
            .unwrap_or_else(|| panic!("{name} in {tc}"))
            .clone()
    };
    assert_eq!(
        setting("python")["source"],
        "spec (specs.json: org/textutil 0.1)"
    );
    assert_eq!(setting("packages")["value"], "pytest");
    assert!(
        setting("dependencies")["source"]
            .as_str()
            .unwrap()
            .starts_with("inferred")
    );
    assert!(
        setting("pre_install")["source"]
            .as_str()
            .unwrap()
            .contains("run in the env layer"),
        "{tc}"
    );
    let ran = std::process::Command::new("docker")
        .args(["run", "--rm", "--network", "none"])
        .arg(built["image"].as_str().unwrap())
        .args(["test", "-f", "/opt/etip/pre-install-ran"])
        .status()
        .unwrap();
    assert!(
        ran.success(),
        "the pre-install command ran in the env layer"
    );
    assert!(
        setting("install")["source"]
            .as_str()
            .unwrap()
            .contains("not run"),
        "{tc}"
    );
    assert_eq!(setting("other")["value"], r#"test_cmd: "pytest -rA""#);
    // The env layer's script adds the spec's package to the requirements it installs.
    let scripts: Vec<String> = std::fs::read_dir(build_dir.join("logs"))
        .unwrap()
        .filter_map(|d| std::fs::read_to_string(d.ok()?.path().join("env.sh")).ok())
        .collect();
    assert!(
        scripts
            .iter()
            .any(|s| s.contains("pytest >> /opt/etip/requirements.txt")),
        "the spec's package in an env.sh of {}",
        build_dir.join("logs").display()
    );
    let failed = by("org__textutil-3");
    assert_eq!(failed["failure"], "patch_does_not_apply", "{failed}");
    assert!(
        failed["detail"]
            .as_str()
            .unwrap()
            .contains("textutil/__init__.py"),
        "{failed}"
    );
    // The user's repository holds only its own commits.
    assert!(
        std::process::Command::new("git")
            .arg("-C")
            .arg(tmp.path().join("repo"))
            .args(["cat-file", "-e", built["patched_commit"].as_str().unwrap()])
            .status()
            .map(|s| !s.success())
            .unwrap()
    );
    // Gold and empty, on the task's correctness tests; speed judged on its workload (the
    // instance that did not build is left out: an evaluation of it is the harness's error).
    let status = tmp.path().join("built.jsonl");
    std::fs::write(&status, format!("{built}\n")).unwrap();
    let id = "org__textutil-1";
    let (gold, gold_file) = eval(&status, "gold", 8, &tmp.path().join("eval-gold"), id);
    assert_eq!(gold["category"], "correct_faster", "{gold}");
    assert_eq!(timed(&gold), ["workload:workload"], "{gold}");
    // Labelled against the patched commit the build made (again in etip's clone: the user's
    // repository never holds it).
    assert_eq!(gold["exact_match"], true, "{gold}");
    assert_eq!(gold["same_location"], true, "{gold}");
    let speedup = gold["speedup"].as_f64().unwrap();
    let gold_speedup = gold["gold_speedup"].as_f64().unwrap();
    assert!(speedup > 3.0 && gold_speedup > 3.0, "{gold}");
    let (empty, _) = eval(&status, "empty", 8, &tmp.path().join("eval-empty"), id);
    assert_eq!(empty["category"], "correct_not_faster", "{empty}");
    // SWE-fficiency's SR of the gold patch is its speedup over the expert's, as `etip score`
    // computes it from the results.
    let o = etip()
        .args(["score", "--format", "json", "--rule", "swefficiency"])
        .arg(&gold_file)
        .assert()
        .success();
    let rows: Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
    let score = rows[0]["score"].as_f64().unwrap();
    assert!((score - speedup / gold_speedup).abs() < 1e-9, "{rows}");
    benchmark_figures(&gold, &gold_file);

    // The same change as a SWE-bench task (no workload): its PASS_TO_PASS test is what `--tests
    // task` times, and it sees the gold patch's improvement.
    let mut swebench = good.clone();
    let o = swebench.as_object_mut().unwrap();
    for k in [
        "workload",
        "speedup",
        "covering_tests",
        "single_thread_tests",
        "test_cmd",
        "rebuild_cmd",
        "image_name",
    ] {
        o.remove(k);
    }
    o.insert("instance_id".into(), json!("org__textutil-4"));
    o.insert(
        "PASS_TO_PASS".into(),
        json!(["tests/test_text_dedup.py::test_dedup_keeps_first_seen_order"]),
    );
    let file = tmp.path().join("swebench.jsonl");
    std::fs::write(&file, format!("{swebench}\n")).unwrap();
    let etips = tmp.path().join("swebench-etips.jsonl");
    import("swebench", &file, &repo, None, &etips);
    let build_dir = tmp.path().join("build-swebench");
    build(&ns, &etips, &build_dir);
    let status = build_dir.join("status.jsonl");
    let id = "org__textutil-4";
    let (r, _) = eval(&status, "gold", 10, &tmp.path().join("eval-swebench"), id);
    assert_eq!(r["category"], "correct_faster", "{r}");
    assert_eq!(timed(&r), ["tests.test_text_dedup"], "{r}");
}

/// A GSO performance test of the fixture's `dedup`, in the shape of GSO's generated tests
/// (`run_test(eqcheck, reference, prefix)`, results stored with `--reference` and compared with
/// `--eqcheck`, the time appended to the output file).
const GSO_TEST: &str = r#"import argparse
import json
import time

from textutil import dedup


def setup():
    return [(i * 7919) % 3000 for i in range(6000)]


def experiment(values):
    return dedup(values)


def run_test(eqcheck=False, reference=False, prefix=''):
    values = setup()
    start = time.perf_counter()
    result = experiment(values)
    elapsed = time.perf_counter() - start
    if reference:
        with open(f'{prefix}_result.json', 'w') as f:
            json.dump(result, f)
    if eqcheck:
        with open(f'{prefix}_result.json') as f:
            assert json.load(f) == result, 'the result differs from the reference'
    return elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('output_file')
    parser.add_argument('--eqcheck', action='store_true')
    parser.add_argument('--reference', action='store_true')
    parser.add_argument('--file_prefix', type=str)
    args = parser.parse_args()
    t = run_test(args.eqcheck, args.reference, args.file_prefix)
    with open(args.output_file, 'a') as f:
        f.write(f'Execution time: {t:.6f}s\n')


if __name__ == '__main__':
    main()
"#;

/// A GSO task of the fixture's dedup change: the gold patch passes GSO's equivalence check and
/// is opt; a fast patch that sorts the values passes the fixture's own tests it does not run,
/// but fails the check (`tests_fail`, GSO's "Tests Errored"), and no rule credits it.
#[test]
fn an_imported_gso_task_checks_equivalence_as_gsos_harness_does() {
    let tmp = tempfile::tempdir().unwrap();
    let (good, c) = task(tmp.path());
    let gso = json!({
        "instance_id": "org__textutil-gso-1",
        "repo": "org/textutil",
        "base_commit": c[0],
        "opt_commit": c[1],
        "api": "textutil.dedup",
        "prob_script": "",
        "tests": [GSO_TEST],
        "hints_text": "",
        "setup_commands": [],
        "install_commands": [],
        "created_at": "2024-01-01T00:00:00Z",
        "gt_commit_message": "dedup in linear time",
        "arch": "x86_64",
        "instance_image_tag": "",
    });
    let file = tmp.path().join("gso.jsonl");
    std::fs::write(&file, format!("{gso}\n")).unwrap();
    let repo = tmp.path().join("repo");
    let etips = tmp.path().join("gso-etips.jsonl");
    import("gso", &file, &repo, None, &etips);
    let ns = format!("etiptest-import-gso-{}", std::process::id());
    let _clean = Clean(ns.clone());
    let build_dir = tmp.path().join("build");
    let statuses = build(&ns, &etips, &build_dir);
    assert!(statuses[0]["image"].is_string(), "{}", statuses[0]);
    let status = build_dir.join("status.jsonl");
    let id = "org__textutil-gso-1";
    let (gold, _) = eval(&status, "gold", 8, &tmp.path().join("eval-gold"), id);
    assert_eq!(gold["category"], "correct_faster", "{gold}");
    assert_eq!(timed(&gold), ["workload:gso_test_0"], "{gold}");
    assert_eq!(gold["figures"]["gso_opt_base"], true, "{gold}");
    // Fast, but its results are not the original's.
    let sorting = good["patch"]
        .as_str()
        .unwrap()
        .replace("list(dict.fromkeys(values))", "sorted(set(values))");
    assert_ne!(
        sorting,
        good["patch"].as_str().unwrap(),
        "the gold patch's line"
    );
    let preds = tmp.path().join("preds.jsonl");
    let pred = json!({"instance_id": id, "model_name_or_path": "sorter", "model_patch": sorting});
    std::fs::write(&preds, format!("{pred}\n")).unwrap();
    let (wrong, _) = eval(
        &status,
        preds.to_str().unwrap(),
        4,
        &tmp.path().join("eval-wrong"),
        id,
    );
    assert_eq!(wrong["category"], "tests_fail", "{wrong}");
    let detail = wrong["detail"].as_str().unwrap();
    assert!(
        detail.contains("GSO's equivalence check of gso_test_0 failed")
            && detail.contains("the result differs from the reference"),
        "{wrong}"
    );
    assert_eq!(wrong["figures"]["gso_opt_base"], false, "{wrong}");
    let log = tmp
        .path()
        .join("eval-wrong/logs")
        .read_dir()
        .unwrap()
        .flatten()
        .flat_map(|d| d.path().read_dir().unwrap().flatten())
        .map(|d| d.path().join("gso-check-gso_test_0.log"))
        .find(|p| p.exists())
        .expect("the check's log");
    let log = std::fs::read_to_string(log).unwrap();
    assert!(log.contains("original --reference: exit Some(0)"), "{log}");
}

/// GSO's and SWE-fficiency's per-instance figures of the same timings, as their harnesses
/// compute them (numpy means, scipy's `gmean`/`hmean`, Python's `round`).
const BENCHMARK_FIGURES: &str = r#"
import json, sys
import numpy as np
from scipy.stats import gmean, hmean
r = json.loads(sys.argv[1])
base = np.array([np.mean(t["base"]) for t in r["tests"]])
patch = np.array([np.mean(t["patched"]) for t in r["tests"]])
commit = np.array([np.mean(t["reference"]) for t in r["tests"]])
gm, hm = float(gmean(base / patch)), float(hmean(commit / patch))
opt_base = bool(r["correct"] and np.mean(base) > np.mean(patch) and round(gm, 1) >= 1.2)
sr = (base.sum() / patch.sum() if r["correct"] else 1.0) / (base.sum() / commit.sum())
print(json.dumps({"swefficiency_sr": float(sr), "gso_speedup_base": gm, "gso_speedup_commit": hm,
                  "gso_opt_base": opt_base, "gso_opt_commit": bool(opt_base and hm > 0.95)}))
"#;

/// The result's `figures` agree with the benchmarks' own computation of its runs, and with
/// `etip score` under each rule on the results file (one task: the score is its figure).
fn benchmark_figures(result: &Value, file: &Path) {
    let figures = &result["figures"];
    let text = result.to_string();
    let want: Value = serde_json::from_str(&etip_testkit::python(
        BENCHMARK_FIGURES,
        &[std::ffi::OsStr::new(&text)],
    ))
    .unwrap();
    for (k, v) in want.as_object().unwrap() {
        match v {
            Value::Bool(_) => assert_eq!(&figures[k], v, "{k}: {figures} vs {want}"),
            _ => {
                let (a, b) = (figures[k].as_f64().unwrap(), v.as_f64().unwrap());
                assert!((a - b).abs() <= 1e-9 * b.abs(), "{k}: {a} vs {b}");
            }
        }
    }
    let score = |rule: &str| {
        let o = etip()
            .args(["score", "--format", "json", "--rule", rule])
            .arg(file)
            .assert()
            .success();
        let rows: Value = serde_json::from_slice(&o.get_output().stdout).unwrap();
        rows[0]["score"].as_f64().unwrap()
    };
    let opt = if figures["gso_opt_commit"] == true {
        100.0
    } else {
        0.0
    };
    assert_eq!(score("gso"), opt, "{figures}");
    let delta = figures["sweperf_delta"].as_f64().unwrap();
    assert!((score("sweperf") - 100.0 * delta).abs() < 1e-9, "{figures}");
    assert!(
        delta > 0.0,
        "the gold patch's gain on the workload: {figures}"
    );
}

/// Removes the namespace's images and containers, also when an assertion fails.
struct Clean(String);

impl Drop for Clean {
    fn drop(&mut self) {
        let _ = etip().args(["clean", "--namespace", &self.0]).output();
    }
}
