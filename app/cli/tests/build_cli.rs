//! `etip build` and `etip clean` through the binary, against the real Docker engine (these tests
//! fail with a clear message when it is unreachable).

use assert_cmd::Command;
use predicates::prelude::*;
mod common;

use common::python_fixture;

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built by cargo test")
}

#[test]
fn unreachable_engine_is_reported() {
    etip()
        .args(["clean", "--namespace", "nothing-here"])
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("Docker engine is unreachable"));
}

#[test]
fn bad_input_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("e.jsonl");
    std::fs::write(&f, "{\"id\":\"x\"}\n").unwrap();
    etip()
        .args(["build", "--etips"])
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a valid ETIP"));
}

#[test]
fn build_then_clean_leaves_nothing_labelled() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let c = python_fixture(&repo);
    let etips = tmp.path().join("etips.jsonl");
    // Extra fields (as in the miner's candidates.jsonl) are ignored; --id selects one; a relative
    // source is resolved against the file's folder.
    std::fs::write(
        &etips,
        format!(
            "{{\"id\":\"cli-py\",\"language\":\"python\",\"base_commit\":\"{}\",\"patched_commit\":\"{}\",\"source\":\"repo\",\"score\":0.9}}\n\
             {{\"id\":\"cli-other\",\"language\":\"python\",\"base_commit\":\"{}\",\"patched_commit\":\"{}\",\"source\":\"repo\"}}\n",
            c[0], c[1], c[2], c[3]
        ),
    )
    .unwrap();
    let ns = format!("etiptest-cli-{}", std::process::id());
    let out = etip()
        .args(["build", "--id", "cli-py", "--namespace", &ns, "--etips"])
        .arg(&etips)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let status: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(status["outcome"], "built", "{stdout}");
    assert_eq!(status["layers"].as_array().unwrap().len(), 3);
    assert!(
        tmp.path()
            .join("out/logs")
            .join(etip_build::instance::log_slug("cli-py"))
            .join("status.json")
            .is_file()
    );

    let cleaned = etip()
        .args(["clean", "--namespace", &ns])
        .assert()
        .success();
    let removed = String::from_utf8_lossy(&cleaned.get_output().stdout).to_string();
    assert_eq!(
        removed.lines().filter(|l| l.starts_with("image ")).count(),
        2,
        "{removed}"
    );
    etip()
        .args(["clean", "--namespace", &ns])
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains(
            "removed 0 containers and 0 images",
        ));
}
