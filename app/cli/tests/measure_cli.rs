//! `etip measure` through the binary against the real Docker engine: a run SIGKILLed mid-way and
//! started again resumes from its stored rounds; a second run on the same state is refused while
//! the first holds it; bad input and infeasible settings exit with code 2 before anything runs.

mod common;

use assert_cmd::Command;
use common::python_fixture;
use predicates::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built by cargo test")
}

fn measurement(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("measurements.jsonl")).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

#[test]
fn infeasible_rounds_and_bad_input_exit_2_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let status = tmp.path().join("status.jsonl");
    std::fs::write(&status, "{\"id\":\"x\",\"language\":\"java\"}\n").unwrap();
    etip()
        .args(["measure", "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "status.jsonl:1: not a status line",
        ));
    std::fs::write(
        &status,
        "{\"id\":\"x\",\"language\":\"java\",\"outcome\":\"failed\",\"base_commit\":\"a\",\"patched_commit\":\"b\",\"original_dir\":\"/work/original\",\"patched_dir\":\"/work/patched\",\"build_secs\":1.0}\n",
    )
    .unwrap();
    // With 2 rounds the smallest sign-test p-value is 0.25: nothing could ever be significant.
    etip()
        .args(["measure", "--rounds", "2", "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "smallest sign-test p-value of 2 rounds is 0.2500",
        ));
    etip()
        .args(["measure", "--min-impr", "-0.1", "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--min-impr").and(predicate::str::contains("[0, 1)")));
    etip()
        .args(["measure", "--id", "nope", "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no ETIP with id nope"));
    // A build runs on the executor it was made for: an image on Docker, a local build on the
    // local executor; eval runs a local build only for patches declared trusted.
    let built = |extra: &str| {
        format!(
            "{{\"id\":\"x\",\"language\":\"python\",\"outcome\":\"built\",\"base_commit\":\"a\",\"patched_commit\":\"b\",\"original_dir\":\"/l/base/work/original\",\"patched_dir\":\"/l/base/work/patched\",\"build_secs\":1.0,{extra}}}\n"
        )
    };
    std::fs::write(&status, built("\"image\":\"etip/instance:x-1\"")).unwrap();
    etip()
        .args(["measure", "--executor", "local", "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("was built as an image"));
    std::fs::write(&status, built("\"local_root\":\"/l/base\"")).unwrap();
    etip()
        .args(["measure", "--executor", "docker", "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("run it with --executor local"));
    etip()
        .args(["eval", "--predictions", "empty", "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("eval"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--local-trusted"));
}

#[test]
fn a_killed_run_resumes_from_its_stored_rounds() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let c = python_fixture(&repo);
    let etips = tmp.path().join("etips.jsonl");
    std::fs::write(
        &etips,
        format!(
            "{{\"id\":\"kill-py\",\"language\":\"python\",\"base_commit\":\"{}\",\"patched_commit\":\"{}\",\"source\":\"repo\"}}\n",
            c[0], c[1]
        ),
    )
    .unwrap();
    let ns = format!("etiptest-measurecli-{}", std::process::id());
    let build = tmp.path().join("build");
    etip()
        .args(["build", "--namespace", &ns, "--etips"])
        .arg(&etips)
        .arg("--out")
        .arg(&build)
        .assert()
        .success();
    let out = tmp.path().join("m");
    let status = build.join("status.jsonl");
    let args = |cmd: &mut std::process::Command| {
        cmd.args(["measure", "--rounds", "12", "--namespace", &ns, "--etips"])
            .arg(&status)
            .arg("--out")
            .arg(&out);
    };
    let bin = assert_cmd::cargo::cargo_bin("etip");
    let mut first = std::process::Command::new(&bin);
    args(&mut first);
    let mut child = first
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the warm-up and a few timed rounds are stored, then kill it without warning.
    let state = out.join("state.sqlite");
    let t = Instant::now();
    let stored = loop {
        assert!(
            t.elapsed() < Duration::from_secs(240),
            "no rounds were stored"
        );
        if state.exists()
            && let Ok(s) = etip_store::Store::open(&state)
        {
            let n = s.stored_rounds("kill-py").unwrap_or(0);
            if n >= 4 {
                break n;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    // While it runs, a second run on the same output folder (and state) is refused.
    let mut second = Command::new(&bin);
    second
        .args(["measure", "--rounds", "12", "--namespace", &ns, "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "another etip run is writing to the output folder",
        ));
    let killed_at = time::OffsetDateTime::now_utc();
    sigkill(child.id());
    child.wait().unwrap();
    // The killed run's session containers stay behind; `etip clean --containers` removes them
    // and keeps the images.
    let cleaned = etip()
        .args(["clean", "--containers", "--namespace", &ns])
        .assert()
        .success();
    let removed = String::from_utf8_lossy(&cleaned.get_output().stdout).to_string();
    assert_eq!(
        removed
            .lines()
            .filter(|l| l.starts_with("container "))
            .count(),
        2,
        "{removed}"
    );
    assert!(!removed.contains("image "), "{removed}");

    let mut again = std::process::Command::new(&bin);
    args(&mut again);
    let done = Command::from_std(again).assert().success();
    let stdout = String::from_utf8_lossy(&done.get_output().stdout).to_string();
    assert!(stdout.contains("kill-py"), "{stdout}");
    let m = measurement(&out);
    assert_eq!(m["executable"], true, "{m}");
    assert_eq!(m["rounds"], 12);
    assert_eq!(m["detectors"], serde_json::json!(["tests.test_text_dedup"]));
    // The rounds stored before the kill were kept, not measured again.
    let log = m["round_log"].as_array().unwrap();
    let before: Vec<&serde_json::Value> = log
        .iter()
        .filter(|r| {
            let started = time::OffsetDateTime::parse(
                r["started"].as_str().unwrap(),
                &time::format_description::well_known::Rfc3339,
            )
            .unwrap();
            started < killed_at
        })
        .collect();
    assert!(
        before.len() >= stored,
        "{} rounds before the kill, {stored} stored",
        before.len()
    );
    assert_eq!(
        log.iter()
            .map(|r| r["round"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        (0..=12).collect::<Vec<_>>()
    );
    etip()
        .args(["clean", "--namespace", &ns])
        .assert()
        .success();
}

/// SIGKILL, with the `kill` program (no libc binding needed).
fn sigkill(pid: u32) {
    let ok = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -KILL {pid}");
}
