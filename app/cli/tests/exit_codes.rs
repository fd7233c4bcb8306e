//! The one exit-code rule of every command, as the README states it: 0 success, 2 bad input or
//! arguments (the user can fix the command line or the files), 1 a failure of the run itself (the
//! engine, the disk, a process that died). Each case runs the real binary.

use std::path::Path;
use std::process::{Command, Stdio};

const ETIP: &str = env!("CARGO_BIN_EXE_etip");

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("the workspace root")
}

/// Runs `etip args...` in `dir` and returns (exit code, stderr).
fn etip(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(ETIP)
        .args(args)
        .current_dir(dir)
        .env_remove("ETIP_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("running etip");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[track_caller]
fn expect(dir: &Path, args: &[&str], code: i32, says: &str) {
    let (got, stderr) = etip(dir, args);
    assert_eq!(
        got, code,
        "etip {args:?}: exit {got}, expected {code}; stderr:\n{stderr}"
    );
    assert!(
        stderr.to_lowercase().contains(&says.to_lowercase()),
        "etip {args:?}: stderr should mention {says:?}:\n{stderr}"
    );
    assert!(
        !stderr.contains("panicked"),
        "etip {args:?} panicked:\n{stderr}"
    );
}

#[test]
fn unknown_flags_and_bad_flag_values_exit_2_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for cmd in [
        "score",
        "audit",
        "mine",
        "build",
        "measure",
        "clean",
        "base-image",
    ] {
        expect(d, &[cmd, "--no-such-flag"], 2, "--no-such-flag");
    }
    expect(d, &["score", "--rule", "nope", "x.csv"], 2, "nope");
    expect(
        d,
        &["score", "--rule", "jeto", "--format", "yaml", "x"],
        2,
        "yaml",
    );
}

#[test]
fn missing_or_unreadable_inputs_exit_2_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let missing = d.join("missing.csv");
    let missing = missing.to_str().unwrap();
    expect(
        d,
        &["score", "--rule", "swefficiency", missing],
        2,
        "missing.csv",
    );
    expect(d, &["audit", missing], 2, "missing.csv");
    let sample = repo_root().join("datasets/leaderboards/swefficiency");
    let csv = std::fs::read_dir(&sample)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "csv"))
        .expect("a vendored SWE-fficiency report");
    let csv = csv.to_str().unwrap();
    let aliases = d.join("no-aliases.toml");
    expect(
        d,
        &["audit", "--aliases", aliases.to_str().unwrap(), csv],
        2,
        "no-aliases.toml",
    );
    expect(
        d,
        &[
            "mine",
            "local",
            "--repo",
            d.join("no-repo").to_str().unwrap(),
            "--lang",
            "java",
            "--out",
            "c.jsonl",
        ],
        2,
        "no-repo",
    );
    expect(
        d,
        &[
            "build",
            "--etips",
            d.join("no-etips.jsonl").to_str().unwrap(),
            "--out",
            "o",
        ],
        2,
        "no-etips.jsonl",
    );
    let etips = d.join("etips.jsonl");
    std::fs::write(&etips, "").unwrap();
    expect(
        d,
        &[
            "build",
            "--etips",
            etips.to_str().unwrap(),
            "--config",
            d.join("no.toml").to_str().unwrap(),
            "--out",
            "o",
        ],
        2,
        "no.toml",
    );
    expect(
        d,
        &[
            "measure",
            "--etips",
            d.join("no-etips.jsonl").to_str().unwrap(),
            "--out",
            "m",
        ],
        2,
        "no-etips.jsonl",
    );
}

#[test]
fn malformed_inputs_exit_2_and_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bad = d.join("bad.json");
    std::fs::write(&bad, "{\"summary\": ").unwrap();
    let bad = bad.to_str().unwrap();
    expect(d, &["score", "--rule", "gso", bad], 2, "bad.json");
    expect(d, &["audit", bad], 2, "bad.json");
    let config = d.join("etip.toml");
    std::fs::write(&config, "timeout_secs = \"soon\"\n").unwrap();
    let etips = d.join("etips.jsonl");
    std::fs::write(&etips, "{\"id\": 1}\n").unwrap();
    expect(
        d,
        &[
            "build",
            "--etips",
            etips.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--out",
            "o",
        ],
        2,
        "etip.toml",
    );
}

#[test]
fn endless_inputs_are_refused_at_a_limit_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    expect(
        d,
        &["measure", "--etips", "/dev/zero", "--out", "m"],
        2,
        "/dev/zero",
    );
    expect(d, &["score", "--rule", "jeto", "/dev/zero"], 2, "/dev/zero");
    expect(
        d,
        &["build", "--etips", "/dev/zero", "--out", "o"],
        2,
        "/dev/zero",
    );
}

#[test]
fn a_failure_to_write_the_output_is_a_failed_run_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("results.jsonl");
    std::fs::write(
        &jsonl,
        "{\"instance_id\": \"a\", \"correct\": true, \"speedup\": 2.0, \"gold_speedup\": 2.0}\n",
    )
    .unwrap();
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("no /dev/full on this machine: the disk-full case is not checked");
        return;
    };
    let out = Command::new(ETIP)
        .args(["score", "--rule", "swefficiency", jsonl.to_str().unwrap()])
        .stdout(full)
        .output()
        .expect("running etip");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(stderr.contains("error"), "stderr:\n{stderr}");
}
