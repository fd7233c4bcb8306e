//! The first-parent history: the tip, the walk and the ids of each commit it yields ([`CommitIds`]),
//! and the commits git cannot parse.
//!
//! libgit2 refuses a commit whose author (or committer) line it cannot parse, e.g. an author time
//! that is not a number or does not fit 64 bits. Such a commit's tree and parents still read
//! plainly, so the walk goes on through it: the commit itself is skipped (it has no date to place
//! it in the window, and no candidate could be written for it) and reported as [`Unreadable`],
//! while its neighbours are mined as usual (the next commit is diffed against its tree).

use std::sync::Arc;

use git2::{ObjectType, Oid, Repository};
use serde::Serialize;

use crate::MineError;

/// A commit with its tree and its first parent's: what stage 1 needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitIds {
    /// The commit.
    pub commit: Oid,
    /// Its tree.
    pub tree: Oid,
    /// Its first parent (`None` for a root commit).
    pub parent: Option<Oid>,
    /// The first parent's tree.
    pub parent_tree: Option<Oid>,
}

/// A commit of the walked history that git cannot parse, skipped by the miner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    /// Full SHA.
    pub sha: String,
    /// What is wrong with it: libgit2's error and the offending author line.
    pub problem: String,
}

/// The commit `rev` names. A revision libgit2 cannot resolve because the commit it names does not
/// parse (HEAD on a commit with a malformed author date) still resolves, through its reference or
/// its (full or abbreviated) SHA, so that the commit is reported for what it is.
pub(crate) fn resolve_commit(repo: &Repository, rev: &str) -> Result<Oid, git2::Error> {
    let err = match repo.revparse_single(rev).and_then(|o| o.peel_to_commit()) {
        Ok(c) => return Ok(c.id()),
        Err(e) => e,
    };
    let by_ref = repo
        .resolve_reference_from_short_name(rev)
        .and_then(|r| r.resolve())
        .ok()
        .and_then(|r| r.target());
    let by_sha = || {
        let hex = rev.len() >= 4 && rev.len() <= 40 && rev.bytes().all(|b| b.is_ascii_hexdigit());
        let short = Oid::from_str(rev).ok().filter(|_| hex)?;
        repo.odb().ok()?.exists_prefix(short, rev.len()).ok()
    };
    match by_ref.or_else(by_sha) {
        Some(oid) if is_commit(repo, oid) => Ok(oid),
        _ => Err(err),
    }
}

fn is_commit(repo: &Repository, oid: Oid) -> bool {
    repo.odb()
        .and_then(|odb| odb.read_header(oid))
        .is_ok_and(|(_, kind)| kind == ObjectType::Commit)
}

/// The tree of commit `oid`, also when libgit2 cannot parse the commit.
pub(crate) fn commit_tree(repo: &Repository, oid: Oid) -> Option<Oid> {
    if let Ok(c) = repo.find_commit(oid) {
        return Some(c.tree_id());
    }
    let odb = repo.odb().ok()?;
    let obj = odb.read(oid).ok()?;
    plain_ids(obj.data()).map(|(tree, _)| tree)
}

/// Why libgit2 cannot parse commit `oid`, or `None` when it can (or when `oid` is not a commit
/// whose tree and parents read plainly).
pub(crate) fn unreadable(repo: &Repository, oid: Oid) -> Option<Unreadable> {
    let e = repo.find_commit(oid).err()?;
    let odb = repo.odb().ok()?;
    let obj = odb.read(oid).ok()?;
    (obj.kind() == ObjectType::Commit && plain_ids(obj.data()).is_some()).then(|| Unreadable {
        sha: oid.to_string(),
        problem: problem(obj.data(), &e),
    })
}

/// Follows first parents from `tip`, newest first, calling `visit` with each commit's ids, author
/// time and subject (its message's first line, as stored) until it returns `false`. Each commit
/// is read once: its first parent's tree is known when the parent is read, so each commit is
/// handed on one step later. A commit git cannot parse is handed on with no time, and reported in
/// `skipped` (newest first). `raw` reads a stored commit when it can (the miner's pack reader);
/// libgit2 reads the others.
pub(crate) fn walk(
    repo: &Repository,
    tip: Oid,
    skipped: &mut Vec<Unreadable>,
    mut raw: impl FnMut(Oid) -> Option<Arc<Vec<u8>>>,
    mut visit: impl FnMut(CommitIds, Option<i64>, &[u8]) -> bool,
) -> Result<(), MineError> {
    let git = |oid: Oid| {
        move |source| MineError::Git {
            what: "read commit",
            sha: oid.to_string(),
            source,
        }
    };
    let odb = repo.odb().map_err(git(tip))?;
    // The header of the stored commit is enough (tree, first parent, author time); libgit2's parser
    // decides the commits whose header does not read plainly.
    // The subject of the commit read last, kept until it is handed on.
    let mut subject: Vec<u8> = Vec::new();
    let mut held_subject: Vec<u8> = Vec::new();
    let mut read =
        |oid: Oid, subject: &mut Vec<u8>| -> Result<(Oid, Option<Oid>, Option<i64>), MineError> {
            if let Some(data) = raw(oid) {
                subject.clear();
                subject.extend_from_slice(subject_of(&data));
                if let Some((tree, parent, time)) = commit_header(&data) {
                    return Ok((tree, parent, Some(time)));
                }
            }
            let obj = odb.read(oid).map_err(git(oid))?;
            subject.clear();
            subject.extend_from_slice(subject_of(obj.data()));
            let is_commit = obj.kind() == ObjectType::Commit;
            if is_commit && let Some((tree, parent, time)) = commit_header(obj.data()) {
                return Ok((tree, parent, Some(time)));
            }
            match repo.find_commit(oid) {
                Ok(c) => Ok((
                    c.tree_id(),
                    c.parent_id(0).ok(),
                    Some(c.author().when().seconds()),
                )),
                Err(e) => {
                    let Some((tree, parent)) = plain_ids(obj.data()).filter(|_| is_commit) else {
                        return Err(git(oid)(e));
                    };
                    skipped.push(Unreadable {
                        sha: oid.to_string(),
                        problem: problem(obj.data(), &e),
                    });
                    Ok((tree, parent, None))
                }
            }
        };
    let mut held: Option<(CommitIds, Option<i64>)> = None;
    let mut next = Some(tip);
    while let Some(oid) = next {
        let (tree, parent, time) = read(oid, &mut subject)?;
        if let Some((mut ids, time)) = held.take() {
            ids.parent_tree = Some(tree);
            if !visit(ids, time, &held_subject) {
                return Ok(());
            }
        }
        std::mem::swap(&mut subject, &mut held_subject);
        next = parent;
        let ids = CommitIds {
            commit: oid,
            tree,
            parent,
            parent_tree: None,
        };
        held = Some((ids, time));
    }
    if let Some((ids, time)) = held {
        visit(ids, time, &held_subject);
    }
    Ok(())
}

/// The first line of a stored commit's message (empty when it has none).
fn subject_of(data: &[u8]) -> &[u8] {
    let msg = raw_message(data).unwrap_or_default();
    &msg[..memchr::memchr(b'\n', msg).unwrap_or(msg.len())]
}

/// A stored commit's message as libgit2's `message_raw` gives it: everything after the blank line
/// that ends the header (`None` when there is none).
pub(crate) fn raw_message(data: &[u8]) -> Option<&[u8]> {
    memchr::memmem::find(data, b"\n\n").map(|at| &data[at + 2..])
}

/// The first-parent history from `tip`, oldest first, with each commit's author time (`None` for
/// the commits git cannot parse, which are also returned, oldest first).
pub(crate) type Chain = (Vec<(Oid, Option<i64>)>, Vec<Unreadable>);

/// The [`Chain`] from `tip` (the miner keeps the walk it prepared the run with).
#[cfg(test)]
pub(crate) fn chain(repo: &Repository, tip: Oid) -> Result<Chain, MineError> {
    let mut chain = Vec::new();
    let mut skipped = Vec::new();
    walk(
        repo,
        tip,
        &mut skipped,
        |_| None,
        |ids, time, _| {
            chain.push((ids.commit, time));
            true
        },
    )?;
    chain.reverse();
    skipped.reverse();
    Ok((chain, skipped))
}

/// Tree, first parent and author time from a stored commit whose header reads plainly:
/// `tree <hex>`, `parent <hex>` lines, then `author … <email> <seconds> <±hhmm>`.
pub(crate) fn commit_header(data: &[u8]) -> Option<(Oid, Option<Oid>, i64)> {
    let mut lines = data.split(|b| *b == b'\n');
    let tree = hex_id(lines.next()?.strip_prefix(b"tree ")?)?;
    let mut parent = None;
    for line in lines {
        if let Some(p) = line.strip_prefix(b"parent ") {
            let p = hex_id(p)?;
            parent.get_or_insert(p);
        } else {
            let author = line.strip_prefix(b"author ")?;
            let gt = memchr::memrchr(b'>', author)?;
            let mut tail = author[gt + 1..].split(|b| *b == b' ');
            let (empty, secs, tz) = (tail.next()?, tail.next()?, tail.next()?);
            let tz_ok = tz.len() == 5
                && (tz[0] == b'+' || tz[0] == b'-')
                && tz[1..].iter().all(u8::is_ascii_digit);
            if !empty.is_empty() || tail.next().is_some() || !tz_ok || secs.is_empty() {
                return None;
            }
            if !secs.iter().all(u8::is_ascii_digit) || secs.len() > 15 {
                return None;
            }
            let time: i64 = std::str::from_utf8(secs).ok()?.parse().ok()?;
            return Some((tree, parent, time));
        }
    }
    None
}

fn hex_id(s: &[u8]) -> Option<Oid> {
    (s.len() == 40)
        .then(|| std::str::from_utf8(s).ok())
        .flatten()
        .and_then(|s| Oid::from_str(s).ok())
}

/// Tree and first parent of a stored commit, whatever its other header lines hold.
fn plain_ids(data: &[u8]) -> Option<(Oid, Option<Oid>)> {
    let mut lines = data.split(|b| *b == b'\n');
    let tree = hex_id(lines.next()?.strip_prefix(b"tree ")?)?;
    let mut parent = None;
    for line in lines {
        let Some(p) = line.strip_prefix(b"parent ") else {
            break;
        };
        parent.get_or_insert(hex_id(p)?);
    }
    Some((tree, parent))
}

/// What libgit2 said about a commit it cannot parse, with its author line (shortened).
fn problem(data: &[u8], e: &git2::Error) -> String {
    let author = data
        .split(|b| *b == b'\n')
        .take_while(|l| !l.is_empty())
        .find_map(|l| l.strip_prefix(b"author "));
    match author {
        Some(line) => {
            let text: String = String::from_utf8_lossy(line).chars().take(200).collect();
            format!(
                "git cannot parse it ({}); its author line is {text:?}",
                e.message()
            )
        }
        None => format!(
            "git cannot parse it ({}); it has no author line",
            e.message()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain-header reader agrees with libgit2's commit parser, and leaves odd headers to it;
    /// the commits libgit2 refuses are skipped by the walk and reported.
    #[test]
    fn commit_headers_read_like_libgit2() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let tree = repo.treebuilder(None).unwrap().write().unwrap();
        let odb = repo.odb().unwrap();
        let t = tree.to_string();
        let mut parents: Vec<Oid> = Vec::new();
        let mut raw_commits = vec![
            format!(
                "tree {t}\nauthor A <a@x> 1420070400 +0000\ncommitter A <a@x> 1 +0000\n\nroot\n"
            ),
            format!("tree {t}\nauthor Odd > Name <a@x> 0 -0530\ncommitter C <c@x> 5 +0100\n\nm\n"),
            format!(
                "tree {t}\nauthor N <n@x> 1700000000 +1400\ncommitter C <c@x> 5 +0100\nencoding ISO-8859-1\n\nm\n"
            ),
            // Odd headers: no time zone, a negative time, no author line at all, an author time
            // that is not a number.
            format!("tree {t}\nauthor N <n@x> 1700000000\ncommitter C <c@x> 5 +0100\n\nm\n"),
            format!("tree {t}\nauthor N <n@x> -5 +0000\ncommitter C <c@x> 5 +0100\n\nm\n"),
            format!("tree {t}\ncommitter C <c@x> 5 +0100\n\nm\n"),
            format!("tree {t}\nauthor N <n@x> soon +0000\ncommitter C <c@x> 5 +0100\n\nm\n"),
        ];
        for (k, raw) in raw_commits.drain(..).enumerate() {
            // Chain them: every commit but the first gets the previous one (and a second parent).
            let mut text = raw.clone();
            if let Some(p) = parents.last() {
                let mut extra = format!("parent {p}\n");
                if k % 2 == 0 {
                    extra.push_str(&format!("parent {}\n", parents[0]));
                }
                let at = raw.find('\n').unwrap() + 1;
                text = format!("{}{extra}{}", &raw[..at], &raw[at..]);
            }
            let oid = odb
                .write(git2::ObjectType::Commit, text.as_bytes())
                .unwrap();
            let stored = odb.read(oid).unwrap();
            let plain = commit_header(stored.data());
            match repo.find_commit(oid) {
                Ok(c) => {
                    if let Some((tree_id, parent, time)) = plain {
                        assert_eq!(tree_id, c.tree_id(), "{text}");
                        assert_eq!(parent, c.parent_id(0).ok(), "{text}");
                        assert_eq!(time, c.author().when().seconds(), "{text}");
                    }
                    assert_eq!(unreadable(&repo, oid), None);
                }
                Err(_) => {
                    assert_eq!(plain, None, "{text}");
                    assert!(unreadable(&repo, oid).is_some(), "{text}");
                }
            }
            assert_eq!(plain.is_some(), k < 3, "{text}");
            assert_eq!(commit_tree(&repo, oid), Some(tree));
            parents.push(oid);
        }
        // The walk reads the plain headers itself, the odd ones through libgit2, and skips those
        // libgit2 refuses (no author line, a time that is not a number).
        let tip = *parents.last().unwrap();
        let (walked, skipped) = chain(&repo, tip).unwrap();
        assert_eq!(walked.len(), parents.len());
        for ((oid, time), p) in walked.iter().zip(&parents) {
            assert_eq!(oid, p);
            match repo.find_commit(*oid) {
                Ok(c) => assert_eq!(*time, Some(c.author().when().seconds())),
                Err(_) => assert_eq!(*time, None),
            }
        }
        let skipped_shas: Vec<String> = skipped.iter().map(|u| u.sha.clone()).collect();
        assert_eq!(skipped_shas, [parents[5].to_string(), tip.to_string()]);
        assert!(skipped[0].problem.contains("no author line"), "{skipped:?}");
        assert!(
            skipped[1]
                .problem
                .contains(r#"its author line is "N <n@x> soon +0000""#),
            "{skipped:?}"
        );
        // HEAD-like names and SHAs of the unparsable tip still resolve to it.
        repo.reference("refs/heads/main", tip, true, "t").unwrap();
        repo.set_head("refs/heads/main").unwrap();
        for rev in ["HEAD", "main", &tip.to_string(), &tip.to_string()[..10]] {
            assert_eq!(resolve_commit(&repo, rev).unwrap(), tip, "{rev}");
        }
        assert!(resolve_commit(&repo, "nope").is_err());
        assert!(resolve_commit(&repo, &tree.to_string()).is_err());
    }
}
