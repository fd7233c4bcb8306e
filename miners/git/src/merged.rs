//! The commits a merge brought in, as libgit2's revision walk lists them, over commits read once
//! per worker.
//!
//! A merge commit that links no issue takes the links of its merged branch: the commits reachable
//! from its second parent and not from its first, newest first ([`crate::analyze`]). libgit2's
//! revwalk (push the second parent, hide the first, default sorting) answers that, but a new walk
//! reads and parses every commit it visits again, and a branch forked long ago makes it visit the
//! first parent's history back to the fork: on a history of pull-request merges this was a
//! twentieth of the mining time. [`Graph`] keeps each commit's parents and committer time for the
//! worker's lifetime, and [`Graph::merged`] replays libgit2's walk on them step by step
//! (`prepare_walk`, `limit_list` with its slop of 5, `add_parents_to_list`,
//! `mark_parents_uninteresting`, `still_interesting`, insertion by date), including what depends on
//! which commits that walk has parsed, so the list and its order are libgit2's; the tests compare
//! both on random histories with equal and skewed commit times.

use std::collections::{HashMap, VecDeque};

use git2::{Oid, Repository};

/// libgit2's `SLOP`: how many more commits a limited walk takes once only hidden ones are left.
const SLOP: u32 = 5;

/// A commit's parents and committer time.
struct Parsed {
    parents: Vec<Oid>,
    time: i64,
}

/// The commits read so far (by any walk of this worker).
#[derive(Default)]
pub struct Graph {
    commits: HashMap<Oid, Parsed>,
}

/// A commit's state in one walk (libgit2's `git_commit_list_node` flags).
struct Node {
    id: Oid,
    /// Parsed in this walk: parents and time known (node indices).
    parents: Option<Vec<usize>>,
    time: i64,
    seen: bool,
    added: bool,
    uninteresting: bool,
}

/// One walk's nodes.
struct Walk<'g> {
    repo: &'g Repository,
    graph: &'g mut Graph,
    nodes: Vec<Node>,
    index: HashMap<Oid, usize>,
}

impl Graph {
    /// Up to `limit` commits reachable from `tip` and not from `hidden`, in the order of libgit2's
    /// revwalk with `push(tip)`, `hide(hidden)` and the default sorting.
    pub fn merged(
        &mut self,
        repo: &Repository,
        tip: Oid,
        hidden: Oid,
        limit: usize,
    ) -> Result<Vec<Oid>, git2::Error> {
        let mut walk = Walk {
            repo,
            graph: self,
            nodes: Vec::new(),
            index: HashMap::new(),
        };
        // git_revwalk_push, then git_revwalk_hide: each inserts at the head of the input list.
        let mut input = Vec::new();
        let t = walk.lookup(tip)?;
        input.insert(0, t);
        let h = walk.lookup(hidden)?;
        if !walk.nodes[h].uninteresting {
            walk.nodes[h].uninteresting = true;
            input.insert(0, h);
        }
        // prepare_walk
        let mut commits = Vec::new();
        for c in input {
            walk.parse(c)?;
            if walk.nodes[c].uninteresting {
                walk.mark_parents_uninteresting(c);
            }
            if !walk.nodes[c].seen {
                walk.nodes[c].seen = true;
                commits.push(c);
            }
        }
        let listed = walk.limit_list(commits)?;
        Ok(listed
            .into_iter()
            .filter(|&c| !walk.nodes[c].uninteresting)
            .take(limit)
            .map(|c| walk.nodes[c].id)
            .collect())
    }
}

impl Walk<'_> {
    /// The walk's node of a commit (git_revwalk__commit_lookup), unparsed when new. Push and hide
    /// look the object up first: a missing one is an error.
    fn lookup(&mut self, id: Oid) -> Result<usize, git2::Error> {
        if let Some(&i) = self.index.get(&id) {
            return Ok(i);
        }
        let i = self.nodes.len();
        self.nodes.push(Node {
            id,
            parents: None,
            time: 0,
            seen: false,
            added: false,
            uninteresting: false,
        });
        self.index.insert(id, i);
        Ok(i)
    }

    /// git_commit_list_parse: parents and committer time, read once per worker.
    fn parse(&mut self, i: usize) -> Result<(), git2::Error> {
        if self.nodes[i].parents.is_some() {
            return Ok(());
        }
        let id = self.nodes[i].id;
        if !self.graph.commits.contains_key(&id) {
            let c = self.repo.find_commit(id)?;
            let parsed = Parsed {
                parents: c.parent_ids().collect(),
                time: c.time().seconds(),
            };
            self.graph.commits.insert(id, parsed);
        }
        let (parent_ids, time) = match self.graph.commits.get(&id) {
            Some(p) => (p.parents.clone(), p.time),
            None => (Vec::new(), 0),
        };
        let mut parents = Vec::with_capacity(parent_ids.len());
        for p in parent_ids {
            parents.push(self.lookup(p)?);
        }
        self.nodes[i].parents = Some(parents);
        self.nodes[i].time = time;
        Ok(())
    }

    fn parents(&self, i: usize) -> Vec<usize> {
        self.nodes[i].parents.clone().unwrap_or_default()
    }

    /// Marks the ancestors of `i` uninteresting, through commits this walk has parsed, stopping at
    /// those already marked.
    fn mark_parents_uninteresting(&mut self, i: usize) {
        let mut stack: Vec<usize> = self.parents(i);
        while let Some(mut c) = stack.pop() {
            loop {
                if self.nodes[c].uninteresting {
                    break;
                }
                self.nodes[c].uninteresting = true;
                let Some(parents) = self.nodes[c].parents.clone() else {
                    break;
                };
                stack.extend(&parents);
                match parents.first() {
                    Some(&p) => c = p,
                    None => break,
                }
            }
        }
    }

    /// git_commit_list_insert_by_date: before the first commit with an earlier time.
    fn insert_by_date(&self, c: usize, list: &mut VecDeque<usize>) {
        let t = self.nodes[c].time;
        let at = list
            .iter()
            .position(|&x| self.nodes[x].time < t)
            .unwrap_or(list.len());
        list.insert(at, c);
    }

    fn add_parents_to_list(
        &mut self,
        c: usize,
        list: &mut VecDeque<usize>,
    ) -> Result<(), git2::Error> {
        if self.nodes[c].added {
            return Ok(());
        }
        self.nodes[c].added = true;
        let parents = self.parents(c);
        if self.nodes[c].uninteresting {
            for p in parents {
                self.nodes[p].uninteresting = true;
                self.parse(p)?;
                self.mark_parents_uninteresting(p);
                self.nodes[p].seen = true;
                self.insert_by_date(p, list);
            }
            return Ok(());
        }
        for p in parents {
            self.parse(p)?;
            if !self.nodes[p].seen {
                self.nodes[p].seen = true;
                self.insert_by_date(p, list);
            }
        }
        Ok(())
    }

    fn still_interesting(&self, list: &VecDeque<usize>, time: i64, slop: u32) -> u32 {
        let Some(&head) = list.front() else {
            return 0;
        };
        if time <= self.nodes[head].time {
            return SLOP;
        }
        if list
            .iter()
            .any(|&x| !self.nodes[x].uninteresting || self.nodes[x].time > time)
        {
            return SLOP;
        }
        slop - 1
    }

    /// limit_list: the interesting commits in the order the walk pops them.
    fn limit_list(&mut self, commits: Vec<usize>) -> Result<Vec<usize>, git2::Error> {
        let (mut slop, mut time) = (SLOP, i64::MAX);
        let mut list = VecDeque::from(commits);
        let mut out = Vec::new();
        while let Some(c) = list.pop_front() {
            self.add_parents_to_list(c, &mut list)?;
            if self.nodes[c].uninteresting {
                self.mark_parents_uninteresting(c);
                slop = self.still_interesting(&list, time, slop);
                if slop > 0 {
                    continue;
                }
                break;
            }
            time = self.nodes[c].time;
            out.push(c);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{Signature, Time};

    /// xorshift64*.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
        }
    }

    /// A history of `n` commits: mostly a line with branches forked from older commits and merged
    /// back, committer times that repeat and go backwards now and then.
    fn history(repo: &Repository, n: usize, rng: &mut Rng) -> Vec<Oid> {
        let tree = {
            let mut b = repo.treebuilder(None).unwrap();
            let blob = repo.blob(b"x").unwrap();
            b.insert("f", blob, 0o100644).unwrap();
            b.write().unwrap()
        };
        let tree = repo.find_tree(tree).unwrap();
        let mut ids: Vec<Oid> = Vec::new();
        let mut time = 1_600_000_000i64;
        for k in 0..n {
            time += match rng.next(10) {
                0 => 0,
                1 => -(rng.next(5000) as i64),
                _ => rng.next(3000) as i64,
            };
            let sig = Signature::new("a", "a@x", &Time::new(time, 0)).unwrap();
            let mut parents = Vec::new();
            if let Some(&last) = ids.last() {
                // The tip of the line, or (a fork) an older commit.
                let first = if rng.next(4) == 0 {
                    ids[ids.len() - 1 - rng.next(ids.len().min(30) as u64) as usize]
                } else {
                    last
                };
                parents.push(first);
                if k > 2 && rng.next(3) == 0 {
                    let other = ids[ids.len() - 1 - rng.next(ids.len().min(40) as u64) as usize];
                    if other != first {
                        parents.push(other);
                    }
                }
            }
            let parents: Vec<git2::Commit> = parents
                .iter()
                .map(|p| repo.find_commit(*p).unwrap())
                .collect();
            let refs: Vec<&git2::Commit> = parents.iter().collect();
            let id = repo
                .commit(None, &sig, &sig, &format!("c{k}"), &tree, &refs)
                .unwrap();
            ids.push(id);
        }
        ids
    }

    fn libgit2(repo: &Repository, tip: Oid, hidden: Oid, limit: usize) -> Vec<Oid> {
        let mut walk = repo.revwalk().unwrap();
        walk.push(tip).unwrap();
        walk.hide(hidden).unwrap();
        walk.take(limit).map(Result::unwrap).collect()
    }

    #[test]
    fn lists_what_libgit2_lists_in_its_order() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let seed = std::env::var("ETIP_MERGED_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x6d65_7267_6564u64);
        let mut rng = Rng(seed);
        let ids = history(&repo, 400, &mut rng);
        // One graph for every walk, as a worker keeps it.
        let mut graph = Graph::default();
        let (mut nonempty, mut long) = (0, 0);
        for _ in 0..600 {
            let tip = ids[rng.next(ids.len() as u64) as usize];
            let hidden = ids[rng.next(ids.len() as u64) as usize];
            let limit = [3, 20, 100][rng.next(3) as usize];
            let expected = libgit2(&repo, tip, hidden, limit);
            let got = graph.merged(&repo, tip, hidden, limit).unwrap();
            assert_eq!(got, expected, "push {tip} hide {hidden} limit {limit}");
            nonempty += usize::from(!got.is_empty());
            long += usize::from(got.len() > 10);
        }
        eprintln!("nonempty {nonempty} long {long}");
        assert!(nonempty > 200 && long > 50, "{nonempty} {long}");
        // The merges of the history: second parent pushed, first hidden.
        for id in &ids {
            let c = repo.find_commit(*id).unwrap();
            if let (Ok(first), Ok(second)) = (c.parent_id(0), c.parent_id(1)) {
                assert_eq!(
                    graph.merged(&repo, second, first, 100).unwrap(),
                    libgit2(&repo, second, first, 100)
                );
            }
        }
    }

    #[test]
    fn a_missing_commit_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let ids = history(&repo, 5, &mut Rng(7));
        let missing = Oid::from_str("1234567890123456789012345678901234567890").unwrap();
        assert!(Graph::default().merged(&repo, missing, ids[0], 10).is_err());
        assert!(Graph::default().merged(&repo, ids[4], missing, 10).is_err());
    }
}
