//! Helpers shared by the binary's tests that need real repositories: git and the fixtures of
//! `harness/build`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "etip")
        .env("GIT_AUTHOR_EMAIL", "etip@example.invalid")
        .env("GIT_COMMITTER_NAME", "etip")
        .env("GIT_COMMITTER_EMAIL", "etip@example.invalid")
        .output()
        .expect("git must be installed");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// The Python fixture of harness/build as a git repository; returns its commits.
pub fn python_fixture(dir: &Path) -> Vec<String> {
    let fixtures =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../harness/build/tests/fixtures/python");
    git(dir, &["init", "-q", "-b", "main"]);
    let mut steps: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    steps.sort();
    let mut commits = Vec::new();
    for s in steps {
        copy_tree(&s, dir);
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "step"]);
        commits.push(git(dir, &["rev-parse", "HEAD"]));
    }
    commits
}
