//! `etip build` refuses bad input, configuration and output folders with exit code 2, before it
//! contacts the Docker engine: every test points DOCKER_HOST at a socket that does not exist, so
//! an engine call would end with exit code 1 ("unreachable") instead.

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

const NO_ENGINE: &str = "unix:///nonexistent/etip-test/docker.sock";
const C1: &str = "1111111111111111111111111111111111111111";
const C2: &str = "2222222222222222222222222222222222222222";

fn etip() -> Command {
    let mut cmd = Command::cargo_bin("etip").expect("the etip binary is built by cargo test");
    cmd.env("DOCKER_HOST", NO_ENGINE);
    cmd
}

fn line(id: &str, base: &str, patched: &str, source: &str) -> String {
    serde_json::json!({
        "id": id,
        "language": "python",
        "base_commit": base,
        "patched_commit": patched,
        "source": source,
    })
    .to_string()
}

/// A folder with `etips.jsonl` holding `lines`; returns the guard and the file.
fn etips(lines: &[String]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("etips.jsonl");
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(&f, text).unwrap();
    (tmp, f)
}

fn build(file: &Path, out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    etip()
        .args(["build", "--etips"])
        .arg(file)
        .arg("--out")
        .arg(out)
        .args(extra)
        .assert()
}

fn usage_error(file: &Path, out: &Path, extra: &[&str], message: &str) {
    build(file, out, extra)
        .code(2)
        .stderr(predicate::str::contains(message));
}

#[test]
fn a_root_commit_is_refused_before_the_engine() {
    let zeros = "0".repeat(40);
    let (tmp, f) = etips(&[line("root", &zeros, C2, "/src")]);
    usage_error(
        &f,
        &tmp.path().join("out"),
        &[],
        "root commit has no original version",
    );
    assert!(!tmp.path().join("out/logs").exists());
}

#[test]
fn duplicate_ids_are_refused_naming_both_lines() {
    let (tmp, f) = etips(&[
        line("a", C1, C2, "/src"),
        line("b", C1, C2, "/src"),
        line("a", C2, C1, "/src"),
    ]);
    build(&f, &tmp.path().join("out"), &[])
        .code(2)
        .stderr(predicate::str::contains("etips.jsonl:3"))
        .stderr(predicate::str::contains("line 1"))
        .stderr(predicate::str::contains("\"a\""));
}

#[test]
fn an_empty_etips_file_is_refused() {
    let (tmp, f) = etips(&["".into(), "   ".into()]);
    usage_error(&f, &tmp.path().join("out"), &[], "no ETIPs in");
}

#[test]
fn a_commit_that_looks_like_an_option_is_refused() {
    let (tmp, f) = etips(&[line("opt", "--output=/tmp/x", C2, "/src")]);
    usage_error(&f, &tmp.path().join("out"), &[], "base_commit");
}

#[test]
fn the_output_folder_must_be_a_writable_folder() {
    let (tmp, f) = etips(&[line("a", C1, C2, "/src")]);
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "mine\n").unwrap();
    usage_error(&f, &file, &[], "is not a folder");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
    usage_error(
        &f,
        &file.join("sub"),
        &[],
        "cannot create the output folder",
    );
    // Root may write anywhere on disk, not in procfs.
    usage_error(&f, Path::new("/proc/self/fdinfo"), &[], "is not writable");
}

#[test]
fn the_output_folder_must_not_hold_foreign_files_where_etip_writes() {
    let (tmp, f) = etips(&[line("a", C1, C2, "/src")]);
    let mine = tmp.path().join("mine.txt");
    std::fs::write(&mine, "precious\n").unwrap();
    // status.jsonl as a link to a file of the user's: appending would write there.
    let out = tmp.path().join("out1");
    std::fs::create_dir_all(&out).unwrap();
    std::os::unix::fs::symlink(&mine, out.join("status.jsonl")).unwrap();
    usage_error(&f, &out, &[], "status.jsonl");
    // A log file of the instance as a link.
    let out = tmp.path().join("out2");
    let logs = out.join("logs").join(etip_build::instance::log_slug("a"));
    std::fs::create_dir_all(&logs).unwrap();
    std::os::unix::fs::symlink(&mine, logs.join("build.log")).unwrap();
    usage_error(&f, &out, &[], "build.log");
    // The log folder as a file.
    let out = tmp.path().join("out3");
    std::fs::create_dir_all(out.join("logs")).unwrap();
    std::fs::write(
        out.join("logs").join(etip_build::instance::log_slug("a")),
        "x",
    )
    .unwrap();
    usage_error(&f, &out, &[], "is not a folder");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "precious\n");
}

#[test]
fn an_invalid_namespace_is_refused_before_the_engine() {
    let (tmp, f) = etips(&[line("a", C1, C2, "/src")]);
    let out = tmp.path().join("out");
    usage_error(&f, &out, &["--namespace", "Bad_NS"], "namespace \"Bad_NS\"");
    let cfg = tmp.path().join("etip.toml");
    std::fs::write(&cfg, "namespace = \"etip//x\"\n").unwrap();
    usage_error(
        &f,
        &out,
        &["--config", cfg.to_str().unwrap()],
        "namespace \"etip//x\"",
    );
    // --print-config shows only a usable configuration.
    etip()
        .args(["build", "--print-config", "--namespace", "UPPER"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("namespace \"UPPER\""));
}

#[test]
fn configuration_values_are_validated() {
    let (tmp, f) = etips(&[line("a", C1, C2, "/src")]);
    let out = tmp.path().join("out");
    let cfg = tmp.path().join("etip.toml");
    for (text, message) in [
        ("env_network = \"None\"\n", "`none` or `bridge`"),
        ("env_network = \"off\"\n", "`none` or `bridge`"),
        ("timeout_secs = 0\n", "timeout_secs"),
        ("build_cpus = -1.0\n", "build_cpus"),
        ("build_cpus = nan\n", "build_cpus"),
        ("[bootstrap]\nsuite = \"--foreign\"\n", "bootstrap.suite"),
        ("namespace = \"ok\"\ntimeout_secs = = 1\n", "line 2, column"),
    ] {
        std::fs::write(&cfg, text).unwrap();
        usage_error(&f, &out, &["--config", cfg.to_str().unwrap()], message);
    }
    usage_error(
        &f,
        &out,
        &[
            "--config",
            tmp.path().join("missing.toml").to_str().unwrap(),
        ],
        "missing.toml",
    );
}
