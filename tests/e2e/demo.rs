//! End to end through the binary: `etip demo --lang python` writes the Python fixture repository,
//! mines it, builds its candidates with the real Docker engine, measures them, evaluates the gold
//! patch and the five sample agent patches, scores them under every rule, and evaluates three
//! sample generated tests (`etip eval-test`). The categories,
//! verdicts, labels and scores are checked against what each patch is (and the SWE-fficiency
//! scores against their definition, computed here from the results); a re-run resumes; nothing is
//! left running and the images are removed. The demo's ETIPs are then exported, imported back
//! and started as an agent's sandbox (`export.rs`). Without an engine (`DOCKER_HOST` pointing nowhere)
//! the same demo runs on the local executor, and the same checks hold.

mod export;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// The demos time tests: they take turns, so that neither disturbs the other's rounds.
static TIMING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn etip() -> Command {
    Command::new(env!("CARGO_BIN_EXE_etip"))
}

/// Removes the namespace's images and containers, also when an assertion fails.
struct Clean(String);

impl Drop for Clean {
    fn drop(&mut self) {
        let _ = etip().args(["clean", "--namespace", &self.0]).output();
    }
}

fn demo(out: &Path, ns: &str) -> Output {
    let o = etip()
        .args([
            "demo", "--lang", "python", "--rounds", "10", "--format", "json",
        ])
        // Fresh containers per round are checked by harness/eval's containment test; here the
        // rounds share containers, which halves the evaluation time.
        .arg("--reuse-containers")
        .args(["--namespace", ns, "--out"])
        .arg(out)
        .output()
        .expect("etip runs");
    assert!(
        o.status.success(),
        "etip demo failed ({:?}); a Docker engine must be running.\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_demo_refuses_a_folder_it_did_not_make_and_too_few_rounds() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "the user's").unwrap();
    let o = etip()
        .args(["demo", "--out"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a demo folder"));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("notes.txt")).unwrap(),
        "the user's"
    );
    let o = etip()
        .args(["demo", "--rounds", "3", "--out"])
        .arg(tmp.path().join("new"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        !tmp.path().join("new").exists(),
        "nothing written on bad input"
    );
    // The Java fixture without a Docker engine: a failed run (exit 1) that says why, before
    // anything is written.
    let o = etip()
        .args(["demo", "--lang", "java", "--out"])
        .arg(tmp.path().join("new"))
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no Docker engine answered") && err.contains("--lang python"),
        "{err}"
    );
    assert!(!tmp.path().join("new").exists(), "nothing written");
}

/// Without a Docker engine the demo runs the Python fixture on the local executor and says so;
/// every verdict, category and score is what it is with containers; the candidates' private
/// copies of the local builds are gone afterwards.
#[test]
fn without_an_engine_the_python_demo_runs_on_the_local_executor() {
    let _turn = TIMING.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("demo");
    let o = etip()
        .args(["demo", "--rounds", "6", "--format", "json", "--out"])
        .arg(&out)
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .expect("etip runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "etip demo failed ({:?})\n{err}",
        o.status.code()
    );
    assert!(
        err.contains("no Docker engine answered") && err.contains("local executor"),
        "{err}"
    );
    let summary: Value = serde_json::from_slice(&o.stdout).expect("--format json prints JSON");
    assert_eq!(summary["executor"], "local");
    check(&summary, &out);
    for s in lines(&out.join("build/status.jsonl")) {
        assert!(s.get("image").is_none(), "{s}");
        if s["outcome"] == "failed" {
            continue;
        }
        let root = s["local_root"].as_str().unwrap();
        assert!(s["original_dir"].as_str().unwrap().starts_with(root), "{s}");
        // Only the build's own folder is left: every candidate's copy was removed.
        let slug_dir = Path::new(root).parent().unwrap();
        let left: Vec<_> = std::fs::read_dir(slug_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["base"], "{}", slug_dir.display());
    }
    let measured = lines(&out.join("measure/measurements.jsonl"));
    assert!(
        measured.iter().all(|m| m["executor"] == "local"),
        "{measured:?}"
    );
}

#[test]
fn the_python_demo_mines_builds_measures_evaluates_and_scores() {
    let _turn = TIMING.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("demo");
    let ns = format!("etiptest-e2e-{}", std::process::id());
    let _clean = Clean(ns.clone());
    let run = demo(&out, &ns);
    let summary: Value = serde_json::from_slice(&run.stdout).expect("--format json prints JSON");
    assert_eq!(summary["executor"], "docker");
    check(&summary, &out);

    // A re-run resumes: nothing is built, measured or evaluated again.
    let again = demo(&out, &ns);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("0 built, 2 reused, 1 failed"), "{err}");
    assert!(err.contains("5 prediction(s) already evaluated"), "{err}");
    assert!(err.contains("3 prediction(s) already evaluated"), "{err}");
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["results"], summary["results"]);

    // The demo's benchmark exported and imported back; a sandbox on one of its ETIPs.
    let rows = export::export_and_reimport(&out);
    let (id, row) = rows.iter().next().expect("an exported ETIP");
    export::sandbox(&out, &ns, id, row["patch"].as_str().unwrap());

    let left = Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=etip.namespace={ns}"),
        ])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "containers left");
}

/// What every demo run shows: the mined candidates, the builds, the measured ETIPs, each sample
/// patch's category and scores, the generated tests' categories and the report.
fn check(summary: &Value, out: &Path) {
    // Mined: the three source commits after the first (the first adds tests and the build file).
    assert_eq!(summary["repos"][0][2], 3, "{}", summary["repos"]);
    // Built: the two ETIPs; the broken commit fails to compile, as data.
    let statuses = lines(&out.join("build/status.jsonl"));
    let outcomes: Vec<&str> = statuses
        .iter()
        .map(|s| s["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == "failed").count(),
        1,
        "{outcomes:?}"
    );
    let failed = statuses.iter().find(|s| s["outcome"] == "failed").unwrap();
    assert!(
        failed["reason"]
            .as_str()
            .unwrap()
            .contains("does not compile"),
        "{failed}"
    );
    // Measured: both executable, each detected by the test of the function it changed.
    let ms = summary["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 2);
    for (m, class) in ms.iter().zip(["tests.test_text_dedup", "tests.test_join"]) {
        assert_eq!(m["executable"], true, "{m}");
        let c = m["classes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == class)
            .unwrap_or_else(|| panic!("{class} in {m}"));
        assert_eq!(c["sign_test"]["direction"], "patched_faster", "{c}");
    }

    // Evaluated: every patch gets the category of what it is.
    let results = summary["results"].as_array().unwrap();
    let by = |model: &str| {
        results
            .iter()
            .find(|r| r["model"] == model)
            .unwrap_or_else(|| panic!("{model} in {results:?}"))
    };
    let gold = by("gold");
    assert_eq!(gold["category"], "correct_faster", "{gold}");
    assert_eq!(gold["exact_match"], true);
    for sample in etip_fixtures::SAMPLES {
        let r = by(sample.model);
        assert_eq!(r["category"], sample.expected, "{}: {r}", sample.model);
        // Every sample that applied was read by the reward-hack screen, and none is a hack.
        if sample.expected != "does_not_apply" {
            assert_eq!(r["hack"]["verdict"], "clean", "{}: {r}", sample.model);
        }
    }
    assert_eq!(gold["hack"]["verdict"], "clean", "{gold}");
    let exact = by("sample-exact-match");
    assert_eq!(
        exact["exact_match"], true,
        "a comment does not change the tree: {exact}"
    );
    let equivalent = by("sample-equivalent");
    assert_eq!(equivalent["exact_match"], false);
    assert_eq!(equivalent["same_location"], true);
    assert!(by("sample-slower")["speedup"].as_f64().unwrap() < 1.0);
    let broken = by("sample-breaks-a-test");
    let f = broken["pass_fraction"].as_f64().unwrap();
    assert!(f > 0.0 && f < 1.0, "{broken}");

    // Scored under every rule.
    let scores = summary["scores"].as_array().unwrap();
    let score = |rule: &str, model: &str| {
        scores
            .iter()
            .find(|s| s["rule"] == rule && s["submission"] == model)
            .unwrap_or_else(|| panic!("{rule}/{model} in {scores:?}"))["score"]
            .as_f64()
            .unwrap()
    };
    for sample in etip_fixtures::SAMPLES {
        let success = if sample.expected == "correct_faster" {
            100.0
        } else {
            0.0
        };
        assert_eq!(score("jeto", sample.model), success, "{}", sample.model);
    }
    assert_eq!(score("jeto", "gold"), 100.0);
    // SWE-fficiency over one task is that task's SR: an incorrect patch is credited speedup 1
    // (SR = 1 / gold speedup), a correct one its own speedup over the gold speedup.
    let g = broken["gold_speedup"].as_f64().unwrap();
    assert!((score("swefficiency", "sample-breaks-a-test") - 1.0 / g).abs() < 1e-9);
    let slower = by("sample-slower");
    let sr = slower["speedup"].as_f64().unwrap() / slower["gold_speedup"].as_f64().unwrap();
    assert!((score("swefficiency", "sample-slower") - sr).abs() < 1e-9);
    assert_eq!(score("gso", "sample-slower"), 0.0);
    assert_eq!(score("sweperf", "sample-does-not-apply"), 0.0);

    // The report shows every step, with one plot per timed evaluation.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for s in etip_fixtures::SAMPLES {
        assert!(html.contains(s.model), "{} in the report", s.model);
    }
    // Generated tests: the dedup test detects the ETIP, the join test does not, the wrong one fails.
    let generated = summary["generated_tests"].as_array().unwrap();
    for t in etip_fixtures::TEST_SAMPLES {
        let r = generated
            .iter()
            .find(|r| r["model"] == t.model)
            .unwrap_or_else(|| panic!("{} in {generated:?}", t.model));
        assert_eq!(r["category"], t.expected, "{}: {r}", t.model);
    }
    let timed = |rs: &[Value]| {
        rs.iter()
            .filter(|r| r["tests"].as_array().is_some_and(|t| !t.is_empty()))
            .count()
    };
    assert_eq!(
        html.matches("<svg").count(),
        timed(results) + timed(generated),
        "one plot per timed evaluation"
    );
    assert!(out.join("measure/report.html").is_file());
    let eval_html = std::fs::read_to_string(out.join("eval/report.html")).unwrap();
    assert!(eval_html.contains("does_not_apply") && eval_html.contains("opt@1"));

    // The three pages as headless Chromium draws them (screenshots kept next to the pages): not
    // blank, and the measure page's plots in the two versions' colours.
    for page in ["report.html", "measure/report.html", "eval/report.html"] {
        let shot = etip_testkit::render_html(&out.join(page), 1400, 3000);
        let ink = shot.ink();
        assert!(
            ink > 0.03 && ink < 0.6,
            "{page}: ink {ink:.3}, see {}",
            shot.png.display()
        );
        if page.starts_with("measure") {
            for colour in ["#0072B2", "#D55E00"] {
                let n = shot.pixels_of(colour, 12);
                assert!(
                    n > 300,
                    "{page}: {n} pixels of {colour}, see {}",
                    shot.png.display()
                );
            }
        }
    }
}
