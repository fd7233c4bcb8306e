//! A run stopped by a signal (Ctrl-C, `kill`) removes the containers it started and exits with
//! 128 + the signal's number; what it finished stays on disk.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn containers(ns: &str) -> usize {
    let out = Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=etip.namespace={ns}"),
        ])
        .output()
        .expect("docker runs");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn a_signal_stops_an_evaluation_and_removes_its_containers() {
    let tmp = tempfile::tempdir().unwrap();
    let ns = format!("etiptest-signal-{}", std::process::id());
    let status = common::build_python(tmp.path(), "sig-py", &ns);
    let log = tmp.path().join("stderr.txt");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("etip"))
        .args(["eval", "--predictions", "gold", "--rounds", "30"])
        .args(["--namespace", &ns, "--etips"])
        .arg(&status)
        .arg("--out")
        .arg(tmp.path().join("eval"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("etip starts");
    // Wait until the evaluation has containers (the candidate's, then the rounds').
    let deadline = Instant::now() + Duration::from_secs(180);
    while containers(&ns) == 0 {
        assert!(
            Instant::now() < deadline,
            "no container started: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        assert!(child.try_wait().unwrap().is_none(), "etip ended early");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        assert!(Instant::now() < deadline, "etip did not stop within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    };
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(code, Some(143), "{stderr}");
    assert!(
        stderr.contains("interrupted: removing this run's containers"),
        "{stderr}"
    );
    assert_eq!(containers(&ns), 0, "containers left: {stderr}");
    let _ = Command::new(assert_cmd::cargo::cargo_bin("etip"))
        .args(["clean", "--namespace", &ns])
        .output();
}
