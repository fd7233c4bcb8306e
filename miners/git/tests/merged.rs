//! The merged-branch walk replayed on the worker's commit graph against libgit2's own walk, on
//! random histories of merges: branches that start far back, branches merged twice, merges of
//! merges, criss-cross merges, equal commit times and clocks that go backwards (which the walk's
//! slop is about).

use git2::{Oid, Repository, Signature, Time};
use std::sync::Arc;

use etip_mine_git::merged::Graph;

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Commits a random history: a main line and branches forked from random older commits (of the
/// main line or of other branches), merged back into the main line, some more than once. Returns
/// the merge commits with their two parents.
fn history(repo: &Repository, seed: u64) -> Vec<(Oid, Oid, Oid)> {
    let mut rng = Rng(seed);
    let tree = {
        let mut b = repo.treebuilder(None).unwrap();
        let blob = repo.blob(b"x\n").unwrap();
        b.insert("f", blob, 0o100644).unwrap();
        repo.find_tree(b.write().unwrap()).unwrap()
    };
    let mut clock = 1_600_000_000i64;
    let mut commit = |parents: &[Oid], rng: &mut Rng| -> Oid {
        // Mostly forward, sometimes equal or backwards (rebased or skewed clocks).
        clock += rng.next(7) as i64 * 60 - 60;
        let sig = Signature::new("A", "a@example.com", &Time::new(clock, 0)).unwrap();
        let parents: Vec<_> = parents
            .iter()
            .map(|p| repo.find_commit(*p).unwrap())
            .collect();
        let refs: Vec<_> = parents.iter().collect();
        repo.commit(None, &sig, &sig, "m", &tree, &refs).unwrap()
    };
    let mut all = vec![commit(&[], &mut rng)];
    let mut main = all[0];
    let mut branches: Vec<Oid> = Vec::new();
    let mut merges = Vec::new();
    for _ in 0..400 {
        match rng.next(6) {
            0 | 1 => {
                main = commit(&[main], &mut rng);
                all.push(main);
            }
            2 => {
                // A new branch from any earlier commit.
                let base = all[rng.next(all.len() as u64) as usize];
                let tip = commit(&[base], &mut rng);
                all.push(tip);
                branches.push(tip);
            }
            3 if !branches.is_empty() => {
                let k = rng.next(branches.len() as u64) as usize;
                branches[k] = commit(&[branches[k]], &mut rng);
                all.push(branches[k]);
            }
            4 if !branches.is_empty() => {
                // A branch merges the main line (or another branch) in.
                let k = rng.next(branches.len() as u64) as usize;
                let other = if rng.next(2) == 0 {
                    main
                } else {
                    branches[rng.next(branches.len() as u64) as usize]
                };
                if other != branches[k] {
                    branches[k] = commit(&[branches[k], other], &mut rng);
                    all.push(branches[k]);
                }
            }
            _ if !branches.is_empty() => {
                // The main line merges a branch (which may go on and be merged again).
                let k = rng.next(branches.len() as u64) as usize;
                let merged = branches[k];
                let m = commit(&[main, merged], &mut rng);
                merges.push((m, main, merged));
                main = m;
                all.push(m);
                if rng.next(2) == 0 {
                    branches.swap_remove(k);
                }
            }
            _ => {}
        }
    }
    merges
}

fn libgit2_walk(repo: &Repository, merged: Oid, first: Oid, limit: usize) -> Vec<Oid> {
    let mut walk = repo.revwalk().unwrap();
    walk.push(merged).unwrap();
    walk.hide(first).unwrap();
    walk.take(limit).map(Result::unwrap).collect()
}

#[test]
fn replayed_walks_list_what_libgit2_lists() {
    let mut walks = 0;
    for seed in 1..=12u64 {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let merges = history(&repo, seed * 7919);
        let odb = repo.odb().unwrap();
        let mut graph = Graph::default();
        // Half the seeds start from a graph that knows the merges and their first parents, as
        // the miner's does after its first-parent walk.
        if seed % 2 == 0 {
            for &(m, first, _) in &merges {
                for id in [m, first] {
                    graph.load(id, odb.read(id).unwrap().data());
                }
            }
        }
        // Newest first, as the miner meets them, and again oldest first.
        for pass in 0..2 {
            let order: Vec<_> = if pass == 0 {
                merges.iter().rev().collect()
            } else {
                merges.iter().collect()
            };
            for &&(m, first, merged) in &order {
                for limit in [100, 3] {
                    let read = |id: Oid| odb.read(id).ok().map(|o| Arc::new(o.data().to_vec()));
                    let got = graph.merged(merged, first, limit, read).unwrap();
                    let want = libgit2_walk(&repo, merged, first, limit);
                    assert_eq!(got, want, "seed {seed}, merge {m}, limit {limit}");
                    walks += 1;
                }
            }
        }
    }
    assert!(walks > 1000, "only {walks} walks");
}

#[test]
fn unreadable_commits_leave_the_walk_to_libgit2() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init_bare(dir.path()).unwrap();
    let merges = history(&repo, 5);
    let &(_, first, merged) = merges.last().unwrap();
    let mut graph = Graph::default();
    assert!(graph.merged(merged, first, 100, |_| None).is_err());
    // A commit whose committer line is not in git's standard form.
    let odb = repo.odb().unwrap();
    let odd = |id: Oid| {
        let data = odb.read(id).ok()?.data().to_vec();
        let text = String::from_utf8(data).ok()?;
        Some(Arc::new(
            text.replacen(" +0000\n", " +00\n", 2).into_bytes(),
        ))
    };
    assert!(Graph::default().merged(merged, first, 100, odd).is_err());
}
