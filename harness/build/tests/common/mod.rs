//! Shared helpers of the engine tests: fixture repositories (real git) and builders in a
//! test-specific namespace, cleaned up on drop.

#![allow(dead_code)]

use etip_build::config::BuildConfig;
use etip_build::{Builder, EtipInput};
use etip_core::instance::Language;
use std::path::{Path, PathBuf};

/// A fixture repository (see `etip_testkit::fixture_repo`) in a temporary folder: the folder's
/// guard, the repository and the commit ids in step order.
pub fn fixture_repo(kind: &str) -> (tempfile::TempDir, PathBuf, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join(kind);
    let commits = etip_testkit::fixture_repo(kind, &repo);
    (tmp, repo, commits)
}

pub fn etip(id: &str, lang: Language, repo: &Path, base: &str, patched: &str) -> EtipInput {
    EtipInput {
        id: id.into(),
        language: lang,
        base_commit: base.into(),
        patched_commit: patched.into(),
        patch: None,
        task: None,
        source: Some(repo.to_string_lossy().into_owned()),
        repo: None,
        changed_modules: None,
        extension_files: Vec::new(),
        workloads: Vec::new(),
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
    builder_with(name, |_| {})
}

/// [`builder`] with the configuration changed by `adjust` (the namespace is the test's own).
pub fn builder_with(name: &str, adjust: impl FnOnce(&mut BuildConfig)) -> TestBuilder {
    let ns = format!("etiptest-{name}-{}", std::process::id());
    let out = tempfile::tempdir().unwrap();
    let mut cfg = BuildConfig {
        namespace: ns.clone(),
        ..BuildConfig::default()
    };
    adjust(&mut cfg);
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

/// Writes `files` into `repo` (created and `git init`-ed when new) and commits them as of `when`
/// (ISO 8601); the commit id.
pub fn commit_at(repo: &Path, when: &str, files: &[(&str, &str)], message: &str) -> String {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(args)
            .env("GIT_AUTHOR_NAME", "etip")
            .env("GIT_AUTHOR_EMAIL", "etip@example.invalid")
            .env("GIT_COMMITTER_NAME", "etip")
            .env("GIT_COMMITTER_EMAIL", "etip@example.invalid")
            .env("GIT_AUTHOR_DATE", when)
            .env("GIT_COMMITTER_DATE", when)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    if !repo.join(".git").exists() {
        std::fs::create_dir_all(repo).unwrap();
        git(&["init", "-q", "-b", "main"]);
    }
    for (path, content) in files {
        let path = repo.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", message]);
    git(&["rev-parse", "HEAD"])
}
