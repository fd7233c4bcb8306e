//! `etip select` and `etip measure --tests covering` through the binary against the real Docker
//! engine: the Python fixture's dedup ETIP selects its one covering test, a second run reuses the
//! stored selection, and measure times only that test; bad input exits with code 2.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built by cargo test")
}

#[test]
fn covering_without_a_selection_and_a_malformed_selection_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let status = tmp.path().join("status.jsonl");
    std::fs::write(
        &status,
        "{\"id\":\"x\",\"language\":\"python\",\"outcome\":\"failed\",\"base_commit\":\"a\",\"patched_commit\":\"b\",\"original_dir\":\"/work/original\",\"patched_dir\":\"/work/patched\",\"build_secs\":1.0}\n",
    )
    .unwrap();
    etip()
        .args(["measure", "--tests", "covering", "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("m"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--tests covering needs --selection",
        ));
    let sel = tmp.path().join("selection.jsonl");
    std::fs::write(&sel, "{\"id\":\"x\"}\n").unwrap();
    etip()
        .args(["measure", "--tests", "covering", "--selection"])
        .arg(&sel)
        .arg("--etips")
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("m"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "selection.jsonl:1: not a line of `etip select`",
        ));
    etip()
        .args(["select", "--timeout", "0", "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("s"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--timeout must be positive"));
}

#[test]
fn select_then_measure_times_only_the_covering_test() {
    let tmp = tempfile::tempdir().unwrap();
    let ns = format!("etiptest-selectcli-{}", std::process::id());
    let status = common::build_python(tmp.path(), "sel-py", &ns);
    let sel = tmp.path().join("sel");
    let first = etip()
        .args(["select", "--namespace", &ns, "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(&sel)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&first.get_output().stdout).to_string();
    assert!(
        stdout.contains("sel-py") && stdout.contains("selected"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(sel.join("selection.jsonl")).unwrap();
    let s: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(s["outcome"], "selected", "{s}");
    assert_eq!(
        s["covering"][0]["test"],
        "tests/test_text_dedup.py::test_dedup_keeps_first_seen_order"
    );
    assert_eq!(s["not_covering"], 2);
    assert!(
        sel.read_dir().unwrap().count() >= 2,
        "a folder per ETIP beside selection.jsonl"
    );
    // Again: the stored selection is reused.
    etip()
        .args(["select", "--namespace", &ns, "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(&sel)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "sel-py: selected (stored selection reused)",
        ));
    let out = tmp.path().join("m");
    etip()
        .args([
            "measure",
            "--rounds",
            "5",
            "--tests",
            "covering",
            "--namespace",
            &ns,
        ])
        .arg("--selection")
        .arg(&sel)
        .arg("--etips")
        .arg(&status)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let m: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(out.join("measurements.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(m["executable"], true, "{m}");
    let classes: Vec<&str> = m["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(classes, ["tests.test_text_dedup"], "{m}");
    assert!(
        m["protocol"]["tests"]
            .as_str()
            .unwrap()
            .starts_with("covering (1 tests"),
        "{m}"
    );
    etip()
        .args(["clean", "--namespace", &ns])
        .assert()
        .success();
}
