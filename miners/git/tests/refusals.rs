//! What [`mine`] refuses before mining, through the library API: an empty date window, a
//! candidates path that is not a regular file, a shallow clone, a state file another run holds.

use std::path::{Path, PathBuf};

use etip_core::candidate::Language;
use etip_mine_git::{MineConfig, MineError, NoProgress, mine};
use etip_store::{Store, StoreError};
use git2::{Repository, Signature, Time};

/// A repository with two commits of one Java file.
fn repo(dir: &Path) -> PathBuf {
    let path = dir.join("repo");
    let repo = Repository::init(&path).unwrap();
    let mut parent = None;
    for v in 0..2 {
        let blob = repo
            .blob(
                format!("class A {{\n    int f() {{\n        return {v};\n    }}\n}}\n").as_bytes(),
            )
            .unwrap();
        let mut tb = repo.treebuilder(None).unwrap();
        tb.insert("A.java", blob, 0o100644).unwrap();
        let tree = repo.find_tree(tb.write().unwrap()).unwrap();
        let sig = Signature::new("D", "d@x", &Time::new(1_600_000_000 + v, 0)).unwrap();
        let parents: Vec<git2::Commit> = parent
            .iter()
            .map(|p| repo.find_commit(*p).unwrap())
            .collect();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        parent = Some(
            repo.commit(Some("HEAD"), &sig, &sig, "m", &tree, &refs)
                .unwrap(),
        );
    }
    path
}

fn config(repo: &Path, out: PathBuf) -> MineConfig {
    let mut cfg = MineConfig::new(repo.to_path_buf(), Language::Java, out);
    cfg.since = None;
    cfg.jobs = 1;
    cfg
}

#[test]
fn an_empty_window_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let mut cfg = config(&repo, dir.path().join("c.jsonl"));
    cfg.since = Some(1_600_000_000);
    cfg.until = Some(1_600_000_000);
    let e = mine(&cfg, &mut NoProgress).unwrap_err();
    assert!(matches!(e, MineError::EmptyWindow { .. }), "{e}");
    assert!(!cfg.state_path().exists());
    cfg.until = Some(1_600_000_001);
    assert_eq!(mine(&cfg, &mut NoProgress).unwrap().commits_scanned, 1);
}

#[test]
fn a_folder_as_output_is_refused_before_mining() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let cfg = config(&repo, dir.path().to_path_buf());
    let e = mine(&cfg, &mut NoProgress).unwrap_err();
    assert!(matches!(e, MineError::Output { .. }), "{e}");
    assert!(!cfg.state_path().exists());
}

#[test]
fn a_state_file_held_by_another_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let cfg = config(&repo, dir.path().join("c.jsonl"));
    let held = Store::open_exclusive(&cfg.state_path()).unwrap();
    let e = mine(&cfg, &mut NoProgress).unwrap_err();
    assert!(
        matches!(e, MineError::Store(StoreError::Locked { .. })),
        "{e}"
    );
    assert!(!cfg.out.exists());
    drop(held);
    assert_eq!(mine(&cfg, &mut NoProgress).unwrap().candidates, 2);
}

#[test]
fn a_shallow_clone_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let tip = Repository::open(&repo)
        .unwrap()
        .head()
        .unwrap()
        .target()
        .unwrap();
    // What `git clone --depth 1` leaves: the cut commits listed in `.git/shallow`.
    std::fs::write(repo.join(".git/shallow"), format!("{tip}\n")).unwrap();
    let cfg = config(&repo, dir.path().join("c.jsonl"));
    let e = mine(&cfg, &mut NoProgress).unwrap_err();
    assert!(matches!(e, MineError::Shallow { .. }), "{e}");
    assert!(e.to_string().contains("git fetch --unshallow"), "{e}");
}
