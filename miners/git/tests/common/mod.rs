//! The fixture repository the miner's integration tests build commit by commit.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use etip_core::candidate::{Candidate, Language};
use etip_mine_git::{MineConfig, NoProgress, RejectReason, Summary, explain, mine};
use git2::{Oid, Repository, Signature, Time};

/// A repository with a work tree whose commits get increasing, fixed author dates.
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
    pub repo: Repository,
    pub files: BTreeMap<String, String>,
    pub clock: i64,
    /// (commit, expected decision: None = kept)
    pub expect: Vec<(Oid, Option<RejectReason>, &'static str)>,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("demo");
        let repo = Repository::init(&path).unwrap();
        repo.remote("origin", "https://github.com/acme/demo.git")
            .unwrap();
        Self {
            _dir: dir,
            path,
            repo,
            files: BTreeMap::new(),
            clock: 1_704_067_200, // 2024-01-01
            expect: Vec::new(),
        }
    }

    pub fn sig(&mut self) -> Signature<'static> {
        self.clock += 3600;
        Signature::new("Dev", "dev@example.com", &Time::new(self.clock, 60)).unwrap()
    }

    pub fn write_tree(&self) -> Oid {
        let mut index = self.repo.index().unwrap();
        index.clear().unwrap();
        let root = self.path.clone();
        // Mirror `files` on disk, then index everything.
        for entry in walk(&root) {
            let rel = entry
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if !self.files.contains_key(&rel) {
                std::fs::remove_file(&entry).unwrap();
            }
        }
        for (p, c) in &self.files {
            let full = root.join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, c).unwrap();
            index.add_path(Path::new(p)).unwrap();
        }
        index.write().unwrap();
        index.write_tree().unwrap()
    }

    pub fn commit_with_parents(&mut self, msg: &str, parents: &[Oid], update_head: bool) -> Oid {
        let tree_id = self.write_tree();
        let sig = self.sig();
        let tree = self.repo.find_tree(tree_id).unwrap();
        let parents: Vec<git2::Commit> = parents
            .iter()
            .map(|p| self.repo.find_commit(*p).unwrap())
            .collect();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        let head = if update_head { Some("HEAD") } else { None };
        self.repo
            .commit(head, &sig, &sig, msg, &tree, &refs)
            .unwrap()
    }

    pub fn head(&self) -> Option<Oid> {
        self.repo.head().ok().and_then(|h| h.target())
    }

    /// Applies `changes` (path → Some(content) or None to delete) and commits on HEAD.
    pub fn commit(
        &mut self,
        changes: &[(&str, Option<&str>)],
        msg: &str,
        expect: Option<RejectReason>,
        label: &'static str,
    ) -> Oid {
        for (p, c) in changes {
            match c {
                Some(c) => self.files.insert(p.to_string(), c.to_string()),
                None => self.files.remove(*p),
            };
        }
        let parents: Vec<Oid> = self.head().into_iter().collect();
        let oid = self.commit_with_parents(msg, &parents, true);
        self.expect.push((oid, expect, label));
        oid
    }

    pub fn mv(&mut self, from: &str, to: &str, content: Option<String>) -> (String, String) {
        let c = self.files.remove(from).unwrap();
        let c = content.unwrap_or(c);
        self.files.insert(to.to_string(), c.clone());
        (from.to_string(), c)
    }

    pub fn config(&self, lang: Language, out: &Path) -> MineConfig {
        let mut cfg = MineConfig::new(self.path.clone(), lang, out.to_path_buf());
        cfg.jobs = 2;
        cfg
    }
}

pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.file_name().is_some_and(|n| n == ".git") {
            continue;
        }
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

pub fn java_class(pkg: &str, name: &str, body: &str) -> String {
    format!("package {pkg};\n\nimport java.util.List;\n\npublic class {name} {{\n{body}\n}}\n")
}

pub fn read_candidates(path: &Path) -> Vec<Candidate> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn check_explanations(fx: &Fixture, cfg: &MineConfig) {
    for (oid, expect, label) in &fx.expect {
        let e = explain(cfg, &oid.to_string()).unwrap();
        assert_eq!(e.reason, *expect, "{label}: {e:?}");
        assert!(e.in_first_parent_history, "{label}");
    }
}

/// Packs the fixture's objects with git (`gc --aggressive`: deep delta chains, no loose objects
/// left), mines it again and checks that every decision and candidate is the same as the loose
/// repository's (`first`, `cands`): the blobs then come from etip's own pack reader instead of
/// libgit2.
pub fn check_same_when_packed(
    fx: &Fixture,
    cfg: &MineConfig,
    first: &Summary,
    cands: &[Candidate],
) {
    etip_testkit::git(&fx.path, &["gc", "--aggressive", "--prune=now", "--quiet"]);
    let loose = std::fs::read_dir(fx.path.join(".git/objects"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().len() == 2)
        .count();
    assert_eq!(loose, 0, "git gc left loose objects");
    let out_dir = tempfile::tempdir().unwrap();
    let mut packed = cfg.clone();
    packed.out = out_dir.path().join("packed.jsonl");
    packed.state = None;
    let again = mine(&packed, &mut NoProgress).unwrap();
    assert_eq!(again.rejected, first.rejected);
    assert_eq!(again.commits_scanned, first.commits_scanned);
    assert_eq!(read_candidates(&packed.out), cands);
}
