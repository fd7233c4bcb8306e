//! The commits a merge brings in, listed exactly as libgit2's revision walk lists them, without
//! parsing a commit twice.
//!
//! A merge commit that links no issue takes the links of the branch it merged: the commits
//! reachable from its second parent and not from its first, newest first as libgit2 gives them
//! (`push(second)`, `hide(first)`, no sorting). libgit2 builds a fresh walk for every merge and
//! inflates and parses every commit it visits again — on histories of pull-request merges, whose
//! branches start far back, that was a sixth of the miner's time. [`Graph`] keeps each commit's
//! parents and committer time once per run (in the miner's parent process, which links the
//! candidates, starting with the first-parent commits its history walk read) and replays libgit2
//! 1.9's algorithm
//! (`prepare_walk`, `limit_list` with its slop of 5, `add_parents_to_list`,
//! `mark_parents_uninteresting`, `still_interesting`, the insertion by date) on them, with the
//! walk's own flags (seen, added, uninteresting, parsed) kept per walk.
//!
//! Commits are parsed as libgit2's quick parse reads them (the parent lines, then the author and
//! committer lines) when every such line has git's standard form; a commit that does not, an
//! object that cannot be read, and repositories with grafts or a shallow boundary (which libgit2
//! applies to parents) make [`Graph::merged`] return [`Unsupported`], and the caller walks with
//! libgit2 as before.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use git2::Oid;

/// libgit2's `SLOP`: how many uninteresting commits in a row end the walk once nothing
/// interesting is left.
const SLOP: i32 = 5;

const SEEN: u8 = 1;
const UNINTERESTING: u8 = 2;
const ADDED: u8 = 4;
const PARSED: u8 = 8;

/// A commit of the graph.
struct Node {
    oid: Oid,
    /// Committer time (libgit2 orders by it).
    time: i64,
    /// Parents, as a range of [`Graph::parents`].
    parents: (u32, u32),
    /// Parents and time have been read.
    loaded: bool,
    /// The walk the flags belong to.
    walk: u32,
    flags: u8,
}

/// The walk cannot be replayed here (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported;

/// Commits read so far, with the flags of the current walk.
#[derive(Default)]
pub struct Graph {
    index: HashMap<Oid, u32>,
    nodes: Vec<Node>,
    parents: Vec<u32>,
    walk: u32,
}

impl Graph {
    fn lookup(&mut self, oid: Oid) -> u32 {
        let next = self.nodes.len() as u32;
        let n = *self.index.entry(oid).or_insert(next);
        if n == next {
            self.nodes.push(Node {
                oid,
                time: 0,
                parents: (0, 0),
                loaded: false,
                walk: 0,
                flags: 0,
            });
        }
        n
    }

    fn has(&self, n: u32, flag: u8) -> bool {
        let node = &self.nodes[n as usize];
        node.walk == self.walk && node.flags & flag != 0
    }

    fn set(&mut self, n: u32, flag: u8) {
        let walk = self.walk;
        let node = &mut self.nodes[n as usize];
        if node.walk != walk {
            node.walk = walk;
            node.flags = 0;
        }
        node.flags |= flag;
    }

    fn parents(&self, n: u32) -> &[u32] {
        let (s, e) = self.nodes[n as usize].parents;
        &self.parents[s as usize..e as usize]
    }

    /// Takes the parents and time of commit `oid` from its stored object `data`, read for
    /// another purpose (a commit the quick parse does not read is left to [`Graph::merged`]).
    pub fn load(&mut self, oid: Oid, data: &[u8]) {
        let n = self.lookup(oid);
        if !self.nodes[n as usize].loaded {
            self.fill(n, data);
        }
    }

    /// Sets node `n`'s parents and time from its stored object; `false` when the quick parse
    /// does not read it.
    fn fill(&mut self, n: u32, data: &[u8]) -> bool {
        let Some((time, parent_ids)) = quick_parse(data) else {
            return false;
        };
        let start = self.parents.len() as u32;
        for id in parent_ids {
            let p = self.lookup(id);
            self.parents.push(p);
        }
        let node = &mut self.nodes[n as usize];
        node.time = time;
        node.parents = (start, self.parents.len() as u32);
        node.loaded = true;
        true
    }

    /// `git_commit_list_parse`: reads the commit once per graph, marks it parsed in this walk.
    fn parse(
        &mut self,
        n: u32,
        read: &mut impl FnMut(Oid) -> Option<Arc<Vec<u8>>>,
    ) -> Result<(), Unsupported> {
        if self.has(n, PARSED) {
            return Ok(());
        }
        if !self.nodes[n as usize].loaded {
            let data = read(self.nodes[n as usize].oid).ok_or(Unsupported)?;
            if !self.fill(n, &data) {
                return Err(Unsupported);
            }
        }
        self.set(n, PARSED);
        Ok(())
    }

    /// The commits reachable from `merged` and not from `first`, at most `limit`, in the order
    /// libgit2's walk gives them; `read` gives a commit's raw object.
    pub fn merged(
        &mut self,
        merged: Oid,
        first: Oid,
        limit: usize,
        mut read: impl FnMut(Oid) -> Option<Arc<Vec<u8>>>,
    ) -> Result<Vec<Oid>, Unsupported> {
        self.walk += 1;
        let (m, f) = (self.lookup(merged), self.lookup(first));
        // `push(merged)` then `hide(first)`: the user input list is [first, merged].
        self.set(f, UNINTERESTING);
        let mut commits = Vec::new();
        for n in [f, m] {
            self.parse(n, &mut read)?;
            if self.has(n, UNINTERESTING) {
                self.mark_parents_uninteresting(n);
            }
            if !self.has(n, SEEN) {
                self.set(n, SEEN);
                commits.push(n);
            }
        }
        let listed = self.limit_list(commits.into(), &mut read)?;
        Ok(listed
            .into_iter()
            .filter(|&n| !self.has(n, UNINTERESTING))
            .take(limit)
            .map(|n| self.nodes[n as usize].oid)
            .collect())
    }

    /// `limit_list`.
    fn limit_list(
        &mut self,
        mut list: VecDeque<u32>,
        read: &mut impl FnMut(Oid) -> Option<Arc<Vec<u8>>>,
    ) -> Result<Vec<u32>, Unsupported> {
        let mut slop = SLOP;
        let mut time = i64::MAX;
        let mut out = Vec::new();
        while let Some(c) = list.pop_front() {
            self.add_parents_to_list(c, &mut list, read)?;
            if self.has(c, UNINTERESTING) {
                self.mark_parents_uninteresting(c);
                slop = self.still_interesting(&list, time, slop);
                if slop != 0 {
                    continue;
                }
                break;
            }
            time = self.nodes[c as usize].time;
            out.push(c);
        }
        Ok(out)
    }

    /// `git_commit_list_insert_by_date`: after every commit at least as recent.
    fn insert_by_date(&self, n: u32, list: &mut VecDeque<u32>) {
        let t = self.nodes[n as usize].time;
        let at = list
            .iter()
            .position(|&x| self.nodes[x as usize].time < t)
            .unwrap_or(list.len());
        list.insert(at, n);
    }

    /// `add_parents_to_list` (no first-parent mode, no hide callback).
    fn add_parents_to_list(
        &mut self,
        c: u32,
        list: &mut VecDeque<u32>,
        read: &mut impl FnMut(Oid) -> Option<Arc<Vec<u8>>>,
    ) -> Result<(), Unsupported> {
        if self.has(c, ADDED) {
            return Ok(());
        }
        self.set(c, ADDED);
        let (s, e) = self.nodes[c as usize].parents;
        if self.has(c, UNINTERESTING) {
            for k in s..e {
                let p = self.parents[k as usize];
                self.set(p, UNINTERESTING);
                self.parse(p, read)?;
                self.mark_parents_uninteresting(p);
                self.set(p, SEEN);
                self.insert_by_date(p, list);
            }
            return Ok(());
        }
        for k in s..e {
            let p = self.parents[k as usize];
            self.parse(p, read)?;
            if !self.has(p, SEEN) {
                self.set(p, SEEN);
                self.insert_by_date(p, list);
            }
        }
        Ok(())
    }

    /// `mark_parents_uninteresting`: a stack (pushed at its head), following first parents.
    fn mark_parents_uninteresting(&mut self, c: u32) {
        let mut stack: Vec<u32> = self.parents(c).to_vec();
        while let Some(top) = stack.pop() {
            let mut cur = Some(top);
            while let Some(x) = cur {
                if self.has(x, UNINTERESTING) {
                    break;
                }
                self.set(x, UNINTERESTING);
                // Parents are known only when the commit was parsed in this walk.
                if !self.has(x, PARSED) {
                    break;
                }
                let parents = self.parents(x);
                stack.extend(parents.iter());
                cur = parents.first().copied();
            }
        }
    }

    /// `still_interesting`.
    fn still_interesting(&self, list: &VecDeque<u32>, time: i64, slop: i32) -> i32 {
        let Some(&head) = list.front() else {
            return 0;
        };
        if time <= self.nodes[head as usize].time {
            return SLOP;
        }
        let interesting = list
            .iter()
            .any(|&x| !self.has(x, UNINTERESTING) || self.nodes[x as usize].time > time);
        if interesting { SLOP } else { slop - 1 }
    }
}

/// libgit2's quick parse of a commit object in git's standard form: the committer time and the
/// parents; `None` for anything else.
fn quick_parse(data: &[u8]) -> Option<(i64, Vec<Oid>)> {
    // `tree <40 hex>\n` is skipped unread by the quick parse.
    let mut rest = data.get(46..)?;
    let mut parents = Vec::new();
    while let Some(line) = rest.strip_prefix(b"parent ") {
        let hex = std::str::from_utf8(line.get(..40)?).ok()?;
        if line.get(40) != Some(&b'\n') {
            return None;
        }
        parents.push(Oid::from_str(hex).ok()?);
        rest = &line[41..];
    }
    while let Some(line) = rest.strip_prefix(b"author ") {
        let (_, after) = signature(line)?;
        rest = after;
    }
    let (time, _) = signature(rest.strip_prefix(b"committer ")?)?;
    Some((time, parents))
}

/// A signature line's time, `NAME <EMAIL> TIME +HHMM\n` (what follows the last `>`), and the rest
/// after its newline; `None` for any other form.
fn signature(line: &[u8]) -> Option<(i64, &[u8])> {
    let end = memchr::memchr(b'\n', line)?;
    let (sig, rest) = (&line[..end], &line[end + 1..]);
    let lt = memchr::memrchr(b'<', sig)?;
    let gt = memchr::memrchr(b'>', sig)?;
    if gt < lt {
        return None;
    }
    let tail = sig[gt + 1..].strip_prefix(b" ")?;
    let space = memchr::memchr(b' ', tail)?;
    let (digits, tz) = (&tail[..space], &tail[space + 1..]);
    let tz_ok =
        tz.len() == 5 && matches!(tz[0], b'+' | b'-') && tz[1..].iter().all(u8::is_ascii_digit);
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) || !tz_ok {
        return None;
    }
    let time = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some((time, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_parse_reads_standard_commits_only() {
        let tree = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n";
        let p = "parent 1111111111111111111111111111111111111111\n";
        let sig = "A U Thor <a@example.com> 1700000000 +0100\n";
        let c = format!("{tree}{p}{p}author {sig}committer {sig}\nmessage\n");
        let (time, parents) = quick_parse(c.as_bytes()).unwrap();
        assert_eq!(time, 1_700_000_000);
        assert_eq!(parents.len(), 2);
        let odd = format!("{tree}author {sig}committer A <a> 17x +0100\n\nm\n");
        assert!(quick_parse(odd.as_bytes()).is_none());
        let no_tz = format!("{tree}author {sig}committer A <a> 17\n\nm\n");
        assert!(quick_parse(no_tz.as_bytes()).is_none());
    }
}
