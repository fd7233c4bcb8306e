//! Shared helpers of the engine tests: fixture repositories (real git) and builders in a
//! test-specific namespace, cleaned up on drop.

#![allow(dead_code)]

use etip_build::config::BuildConfig;
use etip_build::{Builder, EtipInput};
use etip_core::instance::Language;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "etip")
        .env("GIT_AUTHOR_EMAIL", "etip@example.invalid")
        .env("GIT_COMMITTER_NAME", "etip")
        .env("GIT_COMMITTER_EMAIL", "etip@example.invalid")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .output()
        .expect("git must be installed for the fixture repositories");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// A fixture repository: one commit per step folder of `tests/fixtures/<kind>/` (each step's files
/// overwrite the previous tree). Returns the repo dir guard and the commit ids in step order.
pub fn fixture_repo(kind: &str) -> (tempfile::TempDir, PathBuf, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join(kind);
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let mut steps: Vec<PathBuf> = std::fs::read_dir(fixtures().join(kind))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    steps.sort();
    let mut commits = Vec::new();
    for step in steps {
        copy_tree(&step, &repo);
        git(&repo, &["add", "-A"]);
        let name = step.file_name().unwrap().to_string_lossy().to_string();
        git(&repo, &["commit", "-q", "-m", &name]);
        commits.push(git(&repo, &["rev-parse", "HEAD"]));
    }
    (tmp, repo, commits)
}

pub fn etip(id: &str, lang: Language, repo: &Path, base: &str, patched: &str) -> EtipInput {
    EtipInput {
        id: id.into(),
        language: lang,
        base_commit: base.into(),
        patched_commit: patched.into(),
        source: Some(repo.to_string_lossy().into_owned()),
        repo: None,
        changed_modules: None,
    }
}

/// A builder in its own namespace; its containers and images are removed on drop.
pub struct TestBuilder {
    pub builder: Builder,
    /// The runtime the builder's engine calls run on (tests own theirs, as the binary does).
    pub rt: tokio::runtime::Runtime,
    pub ns: String,
    pub out: tempfile::TempDir,
}

impl Drop for TestBuilder {
    fn drop(&mut self) {
        let _ = self.builder.clean(Some(&self.ns), false);
    }
}

pub fn builder(name: &str) -> TestBuilder {
    let ns = format!("etiptest-{name}-{}", std::process::id());
    let out = tempfile::tempdir().unwrap();
    let cfg = BuildConfig {
        namespace: ns.clone(),
        ..BuildConfig::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let builder =
        Builder::new(cfg, out.path().to_path_buf(), rt.handle().clone()).unwrap_or_else(|e| {
            panic!("these tests need the real Docker engine, and it is not usable: {e}")
        });
    TestBuilder {
        builder,
        rt,
        ns,
        out,
    }
}
