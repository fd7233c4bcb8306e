//! `etip score` and `etip audit` on bad arguments and bad inputs (issue 10, sections 3 and 4): every
//! numeric flag is checked against its one range (negative numbers parse, so that the range check
//! reports them), every input that cannot be opened or read is bad input (exit code 2), and errors
//! name the file at fault and quote little of it.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built")
}

fn leaderboards() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../datasets/leaderboards")
}

const HEADER: &str = "instance_id,raw_pred_speedup_ratio,pred_speedup_ratio,gold_speedup_ratio,\
human_speedup_ratio,correctness,correctness_pct,pre_edit_runtime,patch_length";

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).expect("temp file");
    p
}

fn csv(dir: &Path) -> PathBuf {
    write(
        dir,
        "s.csv",
        &format!("{HEADER}\nx,1,1,2,0.5,1,1,1,1\ny,2,2,2,1,1,1,1,1\n"),
    )
}

/// Runs etip and expects exit code 2 with all of `needles` on stderr; returns stderr.
fn exit_2(args: &[&str], files: &[&Path], needles: &[&str]) -> String {
    let out = etip().args(args).args(files).output().expect("etip runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{args:?}: {stderr:?} lacks {n:?}");
    }
    assert!(
        !stderr.contains("unexpected argument"),
        "{args:?}: {stderr}"
    );
    stderr
}

#[test]
fn score_flags_out_of_range_exit_2_naming_flag_and_range() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = csv(t.path());
    for v in ["inf", "nan", "0", "-1", "1.5", "-inf"] {
        let args = ["score", "--rule", "swefficiency", "--floor", v];
        exit_2(&args, &[&f], &["--floor", "(0, 1]"]);
    }
    for v in ["nan", "inf", "0", "-1"] {
        let args = ["score", "--rule", "gso", "--gso-threshold", v];
        exit_2(&args, &[&f], &["--gso-threshold", "> 0"]);
    }
    for v in ["nan", "-0.1", "1", "inf"] {
        let args = ["score", "--rule", "jeto", "--min-impr", v];
        exit_2(&args, &[&f], &["--min-impr", "[0, 1)"]);
    }
    for v in ["nan", "0", "-0.5", "0.6", "1.5"] {
        let args = ["score", "--rule", "jeto", "--p-val", v];
        exit_2(&args, &[&f], &["--p-val", "(0, 0.5]"]);
    }
    for v in ["-1", "0", "1.5", "1e30"] {
        let args = ["score", "--rule", "jeto", "--total-instances", v];
        exit_2(&args, &[&f], &["--total-instances", ">= 1"]);
    }
    // The values that are in range still work, the boundaries included.
    etip()
        .args(["score", "--rule", "swefficiency", "--floor", "1"])
        .arg(&f)
        .assert()
        .success();
}

#[test]
fn audit_flags_out_of_range_exit_2_naming_flag_and_range() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = csv(t.path());
    for (flag, v, range) in [
        ("--floor", "-1", "(0, 1]"),
        ("--floor", "inf", "(0, 1]"),
        ("--bounded-floor", "inf", "(0, 1]"),
        ("--bounded-floor", "-0.5", "(0, 1]"),
        ("--tolerance", "nan", "[0, 1]"),
        ("--tolerance", "-1", "[0, 1]"),
        ("--tolerance", "2", "[0, 1]"),
        ("--gso-threshold", "-1", "> 0"),
        ("--gso-threshold", "nan", "> 0"),
    ] {
        exit_2(&["audit", flag, v], &[&f], &[flag, range]);
    }
}

#[test]
fn audit_of_a_manifest_alone_is_refused_like_score() {
    let manifest = leaderboards().join("gso/manifest.json");
    for args in [&["audit"][..], &["score", "--rule", "gso"][..]] {
        exit_2(args, &[&manifest], &["no submission", "manifest.json"]);
    }
}

#[test]
fn aliases_files_that_cannot_be_used_exit_2() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = csv(t.path());
    let missing = t.path().join("missing.toml");
    exit_2(&["audit", "--aliases"], &[&missing, &f], &["missing.toml"]);
    exit_2(&["audit", "--aliases"], &[t.path(), &f], &["cannot read"]);
    let unknown = write(
        t.path(),
        "unknown.toml",
        "\"no-such-submission\" = \"model\"\n",
    );
    exit_2(
        &["audit", "--aliases"],
        &[&unknown, &f],
        &["unknown.toml", "\"no-such-submission\"", "no submission"],
    );
    let two = write(t.path(), "two.toml", "\"s\" = \"m\"\n\"t\" = \"m\"\n");
    let g = write(
        t.path(),
        "t.csv",
        &format!("{HEADER}\nx,1,1,2,0.5,1,1,1,1\n"),
    );
    exit_2(
        &["audit", "--aliases"],
        &[&two, &f, &g],
        &["two.toml", "\"s\"", "\"t\"", "\"m\""],
    );
    let huge_key = format!("\"{}\" = = \"m\"\n", "k".repeat(100_000));
    let bad = write(t.path(), "bad.toml", &huge_key);
    let stderr = exit_2(&["audit", "--aliases"], &[&bad, &f], &["bad.toml"]);
    assert!(stderr.len() < 2_000, "{} bytes", stderr.len());
}

#[test]
fn inputs_that_cannot_be_opened_exit_2() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = csv(t.path());
    let under_a_file = f.join("x.csv");
    let long_name = t.path().join(format!("{}.csv", "n".repeat(300)));
    for path in [t.path(), under_a_file.as_path(), long_name.as_path()] {
        exit_2(
            &["score", "--rule", "swefficiency"],
            &[path],
            &["cannot read"],
        );
        exit_2(&["audit"], &[path], &["cannot read"]);
    }
}

#[test]
fn endless_and_huge_inputs_are_refused_briefly() {
    let zero = Path::new("/dev/zero");
    if zero.exists() {
        exit_2(
            &["score", "--rule", "swefficiency"],
            &[zero],
            &["line 1 of /dev/zero is longer than 64 MiB"],
        );
    }
    let t = tempfile::tempdir().expect("temp dir");
    let header = format!(
        "{HEADER},{}\nx,1,1,2,0.5,1,1,1,1,1\n",
        "h".repeat(5_000_000)
    );
    let f = write(t.path(), "huge-header.csv", &header);
    let stderr = exit_2(
        &["score", "--rule", "swefficiency"],
        &[&f],
        &["huge-header.csv:1: unknown column"],
    );
    assert!(stderr.len() < 2_000, "{} bytes of stderr", stderr.len());
}

#[test]
fn a_bad_summary_beside_the_csv_is_the_file_named() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = csv(t.path());
    let summary = write(
        t.path(),
        "s.json",
        "{\"overall_score\": 0.5, \"total_instances\": 1}",
    );
    exit_2(
        &["score", "--rule", "swefficiency"],
        &[&f],
        &[&format!("{}", summary.display()), "total_instances"],
    );
}
