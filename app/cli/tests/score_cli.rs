//! `etip score` and `etip audit` as a user runs them: outputs, formats, and bad input (exit code 2 with
//! a message that names the file and the line).

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built")
}

fn leaderboards() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../datasets/leaderboards");
    assert!(
        d.is_dir(),
        "official leaderboard data missing at {} (datasets/leaderboards in the repository)",
        d.display()
    );
    d
}

const HEADER: &str = "instance_id,raw_pred_speedup_ratio,pred_speedup_ratio,gold_speedup_ratio,\
human_speedup_ratio,correctness,correctness_pct,pre_edit_runtime,patch_length";

/// The official reports in `datasets/leaderboards`: every SWE-fficiency `eval_report_*.csv`, and
/// with `gso` every GSO report (not the manifest), sorted.
fn official_reports(gso: bool) -> Vec<PathBuf> {
    let d = leaderboards();
    let mut files = Vec::new();
    for sub in ["swefficiency", "gso"] {
        if sub == "gso" && !gso {
            continue;
        }
        for e in std::fs::read_dir(d.join(sub)).expect("dir") {
            let p = e.expect("entry").path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let ok = match sub {
                "swefficiency" => name.starts_with("eval_report_") && name.ends_with(".csv"),
                _ => name.ends_with(".json") && name != "manifest.json",
            };
            if ok {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Runs `cmd`, which must succeed, and returns its standard output.
fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).expect("utf-8")
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).expect("temp file");
    p
}

fn bad_input(args: &[&str], needle: &str) {
    etip()
        .args(args)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(needle));
}

#[test]
fn score_json_has_one_object_per_submission() {
    let d = leaderboards().join("swefficiency");
    let out = etip()
        .args(["score", "--rule", "swefficiency", "--format", "json"])
        .arg(d.join("eval_report_claude-opus-4-5-20251101_maxiter_100_N_v0.61.0-no-hint-run_1.csv"))
        .arg(d.join("eval_report_claude-opus-4-6_maxiter_100_N_v0.61.0-no-hint-run_1.csv"))
        .args(["--name", "opus-4.5", "--name", "opus-4.6"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = v.as_array().expect("array");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["submission"], "opus-4.5");
    assert_eq!(rows[0]["rule"], "swefficiency");
    assert_eq!(rows[0]["n_tasks"], 498);
    let s = rows[1]["score"].as_f64().expect("score");
    assert_eq!(format!("{s:.4}"), "0.1553");
    assert_eq!(rows[1]["matches_official"], true);
}

#[test]
fn score_formats_table_csv_markdown() {
    let report = leaderboards().join("gso/claude-opus-4.6-high.json");
    etip()
        .args(["score", "--rule", "gso"])
        .arg(&report)
        .assert()
        .success()
        .stdout(
            predicate::str::contains("claude-opus-4.6-high").and(predicate::str::contains("41.18")),
        );
    etip()
        .args(["score", "--rule", "gso", "--format", "csv"])
        .arg(&report)
        .assert()
        .success()
        .stdout(predicate::str::starts_with("submission,rule,score,").and(
            predicate::str::contains("claude-opus-4.6-high,gso,41.18,99,102,85,42,41.18,yes"),
        ));
    etip()
        .args(["score", "--rule", "gso", "--format", "markdown"])
        .arg(&report)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "| claude-opus-4.6-high | gso | 41.18 |",
        ));
}

#[test]
fn audit_json_shape() {
    let d = leaderboards();
    let out = etip()
        .args(["audit", "--format", "json"])
        .arg(d.join("swefficiency/eval_report_claude-opus-4-5-20251101_maxiter_100_N_v0.61.0-no-hint-run_1.csv"))
        .arg(d.join("swefficiency/eval_report_claude-opus-4-6_maxiter_100_N_v0.61.0-no-hint-run_1.csv"))
        .arg(d.join("gso/gpt-5.json"))
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let subs = v["submissions"].as_array().expect("submissions");
    assert_eq!(subs.len(), 3);
    for key in [
        "submission",
        "hm",
        "floor",
        "median_sr",
        "n_sr_above_1",
        "worst_1_share",
        "worst_5_share",
        "worst_10_share",
    ] {
        assert!(subs[0].get(key).is_some(), "missing {key}");
    }
    assert_eq!(subs[0]["floor"], 0.001);
    assert!(subs[2]["hm"].is_null(), "GSO reports carry no SR");
    assert!(v["rankings"].as_array().is_some_and(|r| !r.is_empty()));
    assert_eq!(v["coverage"].as_array().map(Vec::len), Some(2));
    let boards = v["boards"].as_array().expect("boards");
    assert_eq!(boards.len(), 2);
    assert_eq!(boards[0]["metrics"][0]["label"], "HM of SR");
    assert_eq!(boards[1]["metrics"][0]["key"], "opt_at_1");
    assert_eq!(subs[0]["role"], "ranked");
}

#[test]
fn unknown_and_missing_columns() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = write(
        t.path(),
        "a.csv",
        &format!("{HEADER},extra\nx,1,1,1,1,1,1,1,1,1\n"),
    );
    bad_input(
        &["score", "--rule", "swefficiency", f.to_str().expect("utf8")],
        "a.csv:1: unknown column \"extra\"",
    );
    let header = HEADER.replace(",patch_length", "");
    let f = write(t.path(), "b.csv", &format!("{header}\nx,1,1,1,1,1,1,1\n"));
    bad_input(
        &["score", "--rule", "swefficiency", f.to_str().expect("utf8")],
        "b.csv:1: missing column \"patch_length\"",
    );
}

#[test]
fn nan_empty_duplicates() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = write(
        t.path(),
        "nan.csv",
        &format!("{HEADER}\nx,1,1,2,0.5,1,1,1,1\ny,NaN,1,2,0.5,1,1,1,1\n"),
    );
    bad_input(
        &["score", "--rule", "swefficiency", f.to_str().expect("utf8")],
        "nan.csv:3: raw_pred_speedup_ratio is NaN",
    );
    let f = write(t.path(), "empty.csv", "");
    bad_input(
        &["score", "--rule", "swefficiency", f.to_str().expect("utf8")],
        "empty.csv: the file holds no task results",
    );
    let f = write(t.path(), "header-only.csv", &format!("{HEADER}\n"));
    bad_input(
        &["audit", f.to_str().expect("utf8")],
        "header-only.csv: the file holds no task results",
    );
    let f = write(
        t.path(),
        "dup.csv",
        &format!("{HEADER}\nx,1,1,2,0.5,1,1,1,1\ny,1,1,2,0.5,1,1,1,1\nx,1,1,2,0.5,1,1,1,1\n"),
    );
    bad_input(
        &["score", "--rule", "swefficiency", f.to_str().expect("utf8")],
        "dup.csv:4: duplicate instance_id \"x\" (first seen on line 2)",
    );
    let f = write(
        t.path(),
        "dup.jsonl",
        "{\"instance_id\":\"a\",\"correct\":true}\n{\"instance_id\":\"a\",\"correct\":false}\n",
    );
    bad_input(
        &["score", "--rule", "jeto", f.to_str().expect("utf8")],
        "dup.jsonl:2: duplicate instance_id \"a\"",
    );
    let f = write(
        t.path(),
        "typo.jsonl",
        "{\"instance_id\":\"a\",\"corect\":true}\n",
    );
    bad_input(
        &["score", "--rule", "jeto", f.to_str().expect("utf8")],
        "typo.jsonl:1: not an etip task result: unknown field `corect`",
    );
}

#[test]
fn mixed_benchmarks_and_missing_files() {
    let t = tempfile::tempdir().expect("temp dir");
    let csv = write(
        t.path(),
        "s.csv",
        &format!("{HEADER}\nx,1,1,2,0.5,1,1,1,1\n"),
    );
    let gso = leaderboards().join("gso/o3.json");
    etip()
        .args(["score", "--rule", "gso"])
        .arg(&csv)
        .arg(&gso)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("results of different benchmarks in one call")
                .and(predicate::str::contains("o3.json is a GSO report")),
        );
    bad_input(
        &["score", "--rule", "gso", "/nonexistent/results.csv"],
        "/nonexistent/results.csv: cannot read the file",
    );
    bad_input(
        &["score", "--rule", "sweperf", csv.to_str().expect("utf8")],
        "cannot score s with the sweperf rule",
    );
}

#[test]
fn broken_gso_report() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = write(
        t.path(),
        "cut.json",
        "{\"summary\": {\"total_instances\": 102,\n \"score\": 1.0}, \"instance_sets\": {\"passed_ids\": [\"a\"\n",
    );
    bad_input(
        &["score", "--rule", "gso", f.to_str().expect("utf8")],
        "cut.json:3: invalid JSON",
    );
}

#[test]
fn the_audit_table_explains_every_column_with_the_parameters_used() {
    let d = leaderboards().join("swefficiency");
    let out = etip()
        .arg("audit")
        .arg(d.join("eval_report_gpt-5_maxiter_100_N_v0.51.1-no-hint-run_1.csv"))
        .args(["--floor", "0.01", "--tolerance", "0.001"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).expect("utf-8");
    let legend = text
        .split("How to read these tables:")
        .nth(1)
        .expect("a legend under the tables");
    for term in [
        "SR:",
        "HM of SR:",
        "HM@0.01:",
        "worst 1/5/10:",
        "HM@0.5:",
        "median SR:",
        "HM tol:",
        "gate≥0.95:",
        "at floor:",
        "Spearman ρ:",
        "coverage:",
    ] {
        assert!(legend.contains(term), "legend lacks {term:?}:\n{legend}");
    }
    assert!(legend.contains("1 - 0.001 of their tests"), "{legend}");
    let header = text.lines().nth(1).expect("a header row");
    for column in [
        "HM of SR",
        "HM@0.01",
        "HM@0.5",
        "median SR",
        "HM tol",
        "gate≥0.95 %",
    ] {
        assert!(header.contains(column), "{column} not in {header}");
    }
    // Every column a table shows is defined.
    assert!(text.contains("at floor") && text.contains("worst 10"));
}

/// The audit over every official report: one ranked board per benchmark with short names, the
/// expert's patches and the older copy of a run set apart and left out of every ranking, and text
/// tables within 120 columns.
#[test]
fn the_official_leaderboards_rank_with_short_names_and_set_gold_apart() {
    let files = official_reports(true);
    let aliases = leaderboards().join("../aliases/swefficiency-gso.toml");
    let text = stdout_of(
        etip()
            .arg("audit")
            .arg("--aliases")
            .arg(&aliases)
            .args(&files),
    );
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 120, "{widest} columns:\n{text}");
    assert!(
        text.contains("SWE-fficiency: 23 runs ranked by HM of SR"),
        "{text}"
    );
    assert!(text.contains("GSO: 21 runs ranked by opt@1"), "{text}");
    assert!(
        text.contains(" 1  claude-opus-4.5 "),
        "aliases name the runs:\n{text}"
    );
    assert!(!text.contains("eval_report_"), "no raw file names:\n{text}");
    let unranked = text
        .split("SWE-fficiency: not ranked")
        .nth(1)
        .expect("a not-ranked table");
    assert!(unranked.contains("gold ") && unranked.contains("the expert's patches"));
    assert!(unranked.contains("older copy of qwen3-coder-plus-2025-09-23"));
    // GSO against SWE-fficiency over the 11 shared models, and coverage without gold.
    assert!(
        text.contains("GSO opt@1  SWE-fficiency HM of SR    11       0.683"),
        "{text}"
    );
    assert!(text.contains("SWE-fficiency    23    498"), "{text}");

    let json = stdout_of(
        etip()
            .args(["audit", "--format", "json", "--aliases"])
            .arg(&aliases)
            .args(&files),
    );
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let boards = v["boards"].as_array().expect("boards");
    let swe = &boards[0];
    assert_eq!(swe["benchmark"], "swefficiency");
    let rows = swe["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 23);
    assert!(rows.iter().all(|r| r["name"] != "gold"));
    assert_eq!(rows[0]["name"], "claude-opus-4.5");
    assert_eq!(rows[0]["ranks"][0], 1);
    let roles: Vec<&str> = swe["unranked"]
        .as_array()
        .expect("unranked")
        .iter()
        .map(|u| u["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(roles, ["gold", "duplicate"]);
}

#[test]
fn audit_writes_an_html_report_with_plots() {
    let t = tempfile::tempdir().expect("temp dir");
    let html = t.path().join("audit.html");
    let d = leaderboards().join("swefficiency");
    etip()
        .arg("audit")
        .arg(d.join("eval_report_claude-opus-4-6_maxiter_100_N_v0.61.0-no-hint-run_1.csv"))
        .arg(d.join("eval_report_gpt-5_maxiter_100_N_v0.51.1-no-hint-run_1.csv"))
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).expect("report written");
    assert!(page.starts_with("<!DOCTYPE html>"));
    // The rank chart and the task heatmap across runs, then two plots per run: task weights on
    // a common scale and the SR distribution.
    assert_eq!(page.matches("<svg").count(), 6);
    assert!(page.contains("aria-label=\"ranks of the runs under each rule\""));
    assert!(page.contains("aria-label=\"weight of each task in each run&#39;s harmonic mean\""));
    assert!(page.contains("pandas-dev__pandas-29134"));
    assert!(page.contains("31.2%"), "the near-miss's weight is shown");
    assert!(page.contains(">tasks</text>") && page.contains("SR (log scale"));
    for heading in ["Figures across runs", "Each run", "Glossary"] {
        assert!(page.contains(&format!(">{heading}</h2>")), "{heading}");
    }
    for term in [
        "<dt>HM of SR</dt>",
        "<dt>weight</dt>",
        "<dt>at floor</dt>",
        "<dt>Spearman ρ</dt>",
    ] {
        assert!(page.contains(term), "glossary lacks {term}");
    }
    assert!(!page.contains("NaN") && !page.contains("inf\""));
    assert!(!page.contains("<script"), "self-contained, no scripts");
}

/// The audit page over every official report, drawn by headless Chromium: the tables, the rank
/// chart and the per-run figures are on the page in the report's colours (the screenshot is kept
/// next to the page for a person to look at).
#[test]
fn the_audit_page_renders_in_a_browser() {
    let t = tempfile::tempdir().expect("temp dir");
    let html = t.path().join("audit.html");
    let d = leaderboards();
    let files = official_reports(false);
    etip()
        .arg("audit")
        .arg("--aliases")
        .arg(d.join("../aliases/swefficiency-gso.toml"))
        .args(&files)
        .arg(d.join("gso/gpt-5.json"))
        .arg(d.join("gso/claude-opus-4.5.json"))
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let shot = etip_testkit::render_html(&html, 1400, 6000);
    assert_eq!(shot.size, (1400, 6000), "{}", shot.png.display());
    let ink = shot.ink();
    assert!(
        ink > 0.05 && ink < 0.6,
        "ink {ink:.3}: {}",
        shot.png.display()
    );
    // Gains in blue and losses in vermillion in the ranked table, the bars and histograms of the
    // runs, the highlighted lines of the rank chart (bluish green).
    for colour in ["#0072B2", "#D55E00", "#009E73"] {
        let n = shot.pixels_of(colour, 12);
        assert!(n > 500, "{n} pixels of {colour} in {}", shot.png.display());
    }
}

#[test]
fn bad_audit_parameters_and_aliases() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = write(
        t.path(),
        "s.csv",
        &format!("{HEADER}\nx,1,1,2,0.5,1,1,1,1\ny,2,2,2,1,1,1,1,1\n"),
    );
    let aliases = write(t.path(), "aliases.toml", "not toml at all = = =\n");
    etip()
        .args(["audit", "--aliases"])
        .arg(&aliases)
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "aliases.toml: not an aliases file",
        ));
    etip()
        .args(["audit", "--floor", "0"])
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "invalid value '0' for '--floor <FLOOR>': expected a finite number in (0, 1]",
        ));
    etip()
        .args(["audit", "--tolerance", "2"])
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "invalid value '2' for '--tolerance <TOLERANCE>': expected a finite number in [0, 1]",
        ));
}

/// One eval result line: instance `id` of `model` in run `run`, opt_commit or not.
fn eval_line(id: &str, model: &str, run: &str, opt: bool) -> String {
    let p = if opt { 1.0 } else { 2.0 };
    serde_json::json!({
        "instance_id": id, "model": model, "run_id": run, "correct": true,
        "tests": [{"name": "t", "base": [2.0, 2.0], "patched": [p, p], "reference": [1.0, 1.0], "passed": true}]
    })
    .to_string()
}

#[test]
fn gso_opt_at_k_groups_an_eval_output_by_model_over_its_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let lines = [
        eval_line("a", "m", "1", true),
        eval_line("b", "m", "1", false),
        eval_line("a", "m", "2", false),
        eval_line("b", "m", "2", true),
    ];
    let f = write(tmp.path(), "results.jsonl", &(lines.join("\n") + "\n"));
    let out = etip()
        .args(["score", "--rule", "gso", "--k", "2", "--format", "json"])
        .arg(&f)
        .assert()
        .success();
    let rows: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(rows[0]["submission"], "m");
    assert_eq!(rows[0]["score"], 100.0, "{rows}");
    // Without --k, each run is its own submission at opt@1.
    let out = etip()
        .args(["score", "--rule", "gso", "--format", "json"])
        .arg(&f)
        .assert()
        .success();
    let rows: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(rows[0]["submission"], "m@1");
    assert_eq!(rows[0]["score"], 50.0);
    bad_input(
        &["score", "--rule", "gso", "--k", "3", f.to_str().unwrap()],
        "needs 3 runs",
    );
    bad_input(
        &["score", "--rule", "jeto", "--k", "2", f.to_str().unwrap()],
        "--k is GSO's opt@k",
    );
}

/// `--hacks`: a hack-adjusted row after each plain one. Three tasks under SWE-fficiency's rule
/// (gold speedup 2): SR 1 (clean), SR 2 (a cache the screen flagged), an incorrect one (SR 1/2).
/// Plain: HM(1, 2, 0.5) = 6/7; excluded: HM(1, 0.5) = 2/3; counted failed: HM(1, 0.5, 0.5) = 3/5.
#[test]
fn hack_adjusted_scores_follow_the_plain_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let finding = serde_json::json!({"kind": "cross_call_cache", "file": "m.py", "line": 3, "code": "@lru_cache", "detail": "memoises"});
    let lines = [
        serde_json::json!({"instance_id": "a", "correct": true, "speedup": 2.0, "gold_speedup": 2.0, "hack": {"verdict": "clean"}}),
        serde_json::json!({"instance_id": "b", "correct": true, "speedup": 4.0, "gold_speedup": 2.0, "hack": {"verdict": "suspected", "findings": [finding]}}),
        serde_json::json!({"instance_id": "c", "correct": false, "speedup": 1.0, "gold_speedup": 2.0}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let f = write(tmp.path(), "model.jsonl", &text);
    for (policy, adjusted) in [("exclude", 2.0 / 3.0), ("count-as-failed", 0.6)] {
        let out = etip()
            .args([
                "score",
                "--rule",
                "swefficiency",
                "--format",
                "json",
                "--hacks",
                policy,
            ])
            .arg(&f)
            .assert()
            .success();
        let rows: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert_eq!(rows.as_array().unwrap().len(), 2, "{rows}");
        assert_eq!(rows[0]["submission"], "model");
        assert!(
            (rows[0]["score"].as_f64().unwrap() - 6.0 / 7.0).abs() < 1e-12,
            "{rows}"
        );
        assert_eq!(rows[1]["submission"], format!("model [hacks {policy}]"));
        assert!(
            (rows[1]["score"].as_f64().unwrap() - adjusted).abs() < 1e-12,
            "{policy}: {rows}"
        );
        assert_eq!(rows[1]["details"]["hacks_flagged"], 1);
        assert_eq!(rows[1]["details"]["hack_policy"], policy);
    }
    bad_input(
        &[
            "score",
            "--rule",
            "swefficiency",
            "--hacks",
            "ignore",
            f.to_str().unwrap(),
        ],
        "unknown policy \"ignore\": exclude or count-as-failed",
    );
}

/// `audit` on etip results with hack verdicts: each board gets a "hacks failed" column and the
/// rankings a comparison with it. Model a: SR 2 (a flagged cache) and 1 → HM 4/3, flagged
/// counted failed (SR 1/2) → 2/3; model b: SR 1.2 twice, clean → 1.2. Plain a > b; hacks failed
/// b > a.
#[test]
fn the_audit_ranks_with_the_hacks_counted_failed_beside_the_official_ranking() {
    let tmp = tempfile::tempdir().unwrap();
    let finding = serde_json::json!({"kind": "cross_call_cache", "file": "m.py", "line": 3, "code": "@lru_cache", "detail": "memoises"});
    let task = |id: &str, speedup: f64, hack: serde_json::Value| {
        serde_json::json!({"instance_id": id, "correct": true, "speedup": speedup, "gold_speedup": 2.0, "hack": hack}).to_string()
    };
    let clean = serde_json::json!({"verdict": "clean"});
    let a = [
        task(
            "t1",
            4.0,
            serde_json::json!({"verdict": "suspected", "findings": [finding]}),
        ),
        task("t2", 2.0, clean.clone()),
    ];
    let b = [task("t1", 2.4, clean.clone()), task("t2", 2.4, clean)];
    let fa = write(tmp.path(), "a.jsonl", &(a.join("\n") + "\n"));
    let fb = write(tmp.path(), "b.jsonl", &(b.join("\n") + "\n"));
    let out = etip()
        .args(["audit", "--format", "json"])
        .arg(&fa)
        .arg(&fb)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let subs = v["submissions"].as_array().unwrap();
    assert_eq!(subs[0]["n_hacks"], 1, "{}", subs[0]);
    assert!((subs[0]["score_hacks_failed"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(subs[1]["n_hacks"], 0);
    let board = &v["boards"][0];
    let labels: Vec<&str> = board["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.last(), Some(&"hacks failed"), "{labels:?}");
    let cmp = v["rankings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["alternative"] == "hacks_count_as_failed")
        .unwrap_or_else(|| panic!("{}", v["rankings"]));
    assert_eq!(cmp["baseline_order"], serde_json::json!(["a", "b"]));
    assert_eq!(cmp["alternative_order"], serde_json::json!(["b", "a"]));
    // The text table shows the column and its legend.
    let text = stdout_of(etip().arg("audit").arg(&fa).arg(&fb));
    assert!(text.contains("hacks failed"), "{text}");
}
