//! `etip build` exit codes when the Docker engine fails: ETIPs that fail to build are data
//! (exit 0), but a build that the engine prevented is a failed run (exit 1). The engine here is
//! a fake one on a Unix socket that answers the version handshake and fails every other call.

use assert_cmd::Command;
use predicates::prelude::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

mod common;

/// Answers one HTTP request: `/version` and `/_ping` as an engine would, anything else 500.
fn answer(stream: UnixStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    let path = request.split_whitespace().nth(1).unwrap_or("");
    let (status, kind, text) = if path.ends_with("/_ping") {
        ("200 OK", "text/plain", "OK".to_string())
    } else if path.ends_with("/version") {
        (
            "200 OK",
            "application/json",
            r#"{"ApiVersion":"1.41","MinAPIVersion":"1.12","Version":"20.10.0","Os":"linux","Arch":"amd64"}"#.to_string(),
        )
    } else {
        (
            "500 Internal Server Error",
            "application/json",
            r#"{"message":"fake engine: storage driver failed"}"#.to_string(),
        )
    };
    let mut w = stream;
    write!(
        w,
        "HTTP/1.1 {status}\r\nApi-Version: 1.41\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )?;
    w.flush()
}

/// A fake engine listening on `socket` until the test process ends.
fn fake_engine(socket: &Path) {
    let listener = UnixListener::bind(socket).expect("binding the fake engine's socket");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = answer(stream);
            });
        }
    });
}

#[test]
fn an_engine_error_fails_the_run_after_recording_every_instance() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let c = common::python_fixture(&repo);
    let etips = tmp.path().join("etips.jsonl");
    let line = |id: &str| {
        serde_json::json!({
            "id": id, "language": "python", "base_commit": c[0], "patched_commit": c[1],
            "source": repo.to_str().unwrap(),
        })
        .to_string()
    };
    std::fs::write(&etips, format!("{}\n{}\n", line("e1"), line("e2"))).unwrap();
    let socket = tmp.path().join("docker.sock");
    fake_engine(&socket);
    let out = tmp.path().join("out");
    let run = Command::cargo_bin("etip")
        .unwrap()
        .env("DOCKER_HOST", format!("unix://{}", socket.display()))
        .args(["build", "--namespace", "etiptest-fake", "--etips"])
        .arg(&etips)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "2 of 2 ETIPs could not be built because of a Docker engine error",
        ));
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).to_string();
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    for l in stdout.lines() {
        let status: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(status["failure"], "engine", "{l}");
        assert!(
            status["detail"]
                .as_str()
                .unwrap()
                .contains("storage driver failed"),
            "{l}"
        );
    }
    let recorded = std::fs::read_to_string(out.join("status.jsonl")).unwrap();
    assert_eq!(recorded.lines().count(), 2);
}
