//! Helpers of the `mine_*` tests: small repositories whose commits are written object by object,
//! so that a test can give a commit any author line (out-of-range or malformed dates included),
//! and a runner of the real `etip mine local`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use git2::{ObjectType, Oid, Repository};

/// A repository on `refs/heads/main` (HEAD) with one Java file whose method body every commit
/// changes, so that every commit with a readable date is kept.
pub struct JavaRepo {
    pub path: PathBuf,
    repo: Repository,
    tip: Option<Oid>,
    commits: usize,
}

impl JavaRepo {
    /// A new repository at `dir/name`.
    pub fn new(dir: &Path, name: &str) -> Self {
        let path = dir.join(name);
        let repo = Repository::init(&path).expect("git init");
        repo.set_head("refs/heads/main").expect("HEAD -> main");
        Self {
            path,
            repo,
            tip: None,
            commits: 0,
        }
    }

    /// Appends a commit whose author line ends with `when` (`<seconds> <±hhmm>` for a good one;
    /// anything else for a malformed one). Returns its id.
    pub fn commit(&mut self, when: &str) -> Oid {
        let n = self.commits;
        self.commits += 1;
        let java = format!(
            "package demo;\n\npublic class A {{\n    int f(int x) {{\n        return x * {};\n    }}\n}}\n",
            n + 2
        );
        let mut index = self.repo.index().expect("index");
        index
            .add_frombuffer(
                &etip_testkit::index_entry("src/main/java/demo/A.java"),
                java.as_bytes(),
            )
            .expect("stage");
        if n == 0 {
            index
                .add_frombuffer(&etip_testkit::index_entry("pom.xml"), b"<project/>")
                .expect("stage");
        }
        let tree = index.write_tree().expect("tree");
        let mut text = format!("tree {tree}\n");
        if let Some(p) = self.tip {
            text.push_str(&format!("parent {p}\n"));
        }
        text.push_str(&format!(
            "author Dev <dev@example.com> {when}\ncommitter Dev <dev@example.com> 1600000000 +0000\n\nFaster f, step {n}\n"
        ));
        let oid = self
            .repo
            .odb()
            .expect("odb")
            .write(ObjectType::Commit, text.as_bytes())
            .expect("write commit");
        self.repo
            .reference("refs/heads/main", oid, true, "test")
            .expect("update main");
        self.tip = Some(oid);
        oid
    }

    /// `count` commits with good dates, an hour apart from 2020-09-13.
    pub fn good_commits(&mut self, count: usize) -> Vec<Oid> {
        (0..count)
            .map(|i| self.commit(&format!("{} +0000", 1_600_000_000 + 3600 * i as i64)))
            .collect()
    }
}

/// `etip mine local --lang java --format json --since none --repo REPO` plus `extra`.
pub fn mine(repo: &Path, extra: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_etip"))
        .args(["mine", "local", "--lang", "java", "--format", "json"])
        .args(["--since", "none", "--repo"])
        .arg(repo)
        .args(extra)
        .output()
        .expect("etip runs")
}

/// `mine` with `--out OUT`.
pub fn mine_to(repo: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["--out".as_ref(), out.as_os_str()];
    args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
    mine(repo, &args)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON summary of a successful run (panics with its stderr otherwise).
pub fn summary(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "etip failed: {}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("a JSON summary")
}

/// The candidates of a JSONL file.
pub fn candidates(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("the candidates file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}
