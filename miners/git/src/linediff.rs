//! The line diff of two file versions when the change is one block of added or removed lines,
//! without libgit2 — with exactly libgit2's answer.
//!
//! libgit2 diffs blobs with xdiff: lines are compared whole (newline included), the common leading
//! and trailing lines are trimmed first, and after the diff a block of changes is slid as far down
//! as it can go over identical lines (no indent heuristic by default). When the trimmed middle of one
//! version is empty, the change is a single block of the other version's middle lines, whatever the
//! diff algorithm; sliding it down is then the whole of xdiff's post-processing, so [`single_block`]
//! gives libgit2's rows without hashing every line. Binary blobs (a NUL byte in the first 8,000
//! bytes, as libgit2 decides) and every other shape of change are left to libgit2. Added and deleted
//! files are single blocks too.

/// Which version a block of changed lines belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Lines removed from the old version.
    Old,
    /// Lines added in the new version.
    New,
}

/// The one block of changed lines: its side and its rows (0-based, end exclusive), with the line
/// records of that side (newline included) to read the lines from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block<'a> {
    /// Side of the block.
    pub side: Side,
    /// Rows of the block.
    pub rows: std::ops::Range<usize>,
    /// The block's lines.
    pub lines: Vec<&'a [u8]>,
}

/// How libgit2 decides that a blob is binary: a NUL byte among its first 8,000 bytes.
pub fn is_binary(data: &[u8]) -> bool {
    memchr::memchr(0, &data[..data.len().min(8000)]).is_some()
}

/// Length of the common prefix of two byte strings (compared eight bytes at a time).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n && a[i..i + 8] == b[i..i + 8] {
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Length of the common suffix of two byte strings, at most `limit`.
fn common_suffix(a: &[u8], b: &[u8], limit: usize) -> usize {
    let (la, lb) = (a.len(), b.len());
    let mut i = 0;
    while i + 8 <= limit && a[la - i - 8..la - i] == b[lb - i - 8..lb - i] {
        i += 8;
    }
    while i < limit && a[la - i - 1] == b[lb - i - 1] {
        i += 1;
    }
    i
}

/// End of the line record starting at `at` (after its newline, or the end of the data).
fn record_end(data: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |k| at + k + 1)
}

/// The change from `old` to `new` when it is a single block of added or removed lines (`None`
/// otherwise, or for binary blobs, or for identical contents).
pub fn single_block<'a>(old: &'a [u8], new: &'a [u8]) -> Option<Block<'a>> {
    if old == new || is_binary(old) || is_binary(new) {
        return None;
    }
    // Common leading records: the common bytes up to the last newline in them.
    let p = common_prefix(old, new);
    let lead = memchr::memrchr(b'\n', &old[..p]).map_or(0, |k| k + 1);
    // Common trailing records, not overlapping the leading ones in either version: the common
    // bytes from the first record start in them (a record starts after a newline).
    let limit = old.len().min(new.len()) - lead;
    let q = common_suffix(old, new, limit);
    let (mut tail_a, mut tail_b) = (old.len() - q, new.len() - q);
    let at_start = |data: &[u8], at: usize| at == 0 || data[at - 1] == b'\n';
    if !(at_start(old, tail_a) && at_start(new, tail_b)) {
        let skip = record_end(old, tail_a) - tail_a;
        tail_a += skip;
        tail_b += skip;
    }
    let (side, data, start, end) = match (tail_a == lead, tail_b == lead) {
        (true, false) => (Side::New, new, lead, tail_b),
        (false, true) => (Side::Old, old, lead, tail_a),
        _ => return None,
    };
    // Slide the block down over identical lines, as xdiff's compaction leaves it: while the line
    // after the block equals its first line.
    let (mut start, mut end) = (start, end);
    while end < data.len() {
        let first_end = record_end(data, start);
        let next_end = record_end(data, end);
        if data[start..first_end] != data[end..next_end] {
            break;
        }
        start = first_end;
        end = next_end;
    }
    let row0 = memchr::memchr_iter(b'\n', &data[..start]).count();
    let mut lines = Vec::new();
    let mut at = start;
    while at < end {
        let e = record_end(data, at);
        lines.push(&data[at..e]);
        at = e;
    }
    Some(Block {
        side,
        rows: row0..row0 + lines.len(),
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libgit2's rows for the same two versions (the reference).
    fn libgit2(old: &[u8], new: &[u8]) -> (Vec<usize>, Vec<usize>) {
        thread_local! {
            static REPO: (tempfile::TempDir, git2::Repository) = {
                let dir = tempfile::tempdir().unwrap();
                let repo = git2::Repository::init(dir.path()).unwrap();
                (dir, repo)
            };
        }
        REPO.with(|(_, repo)| libgit2_in(repo, old, new))
    }

    fn libgit2_in(repo: &git2::Repository, old: &[u8], new: &[u8]) -> (Vec<usize>, Vec<usize>) {
        let (ob, nb) = (
            repo.find_blob(repo.blob(old).unwrap()).unwrap(),
            repo.find_blob(repo.blob(new).unwrap()).unwrap(),
        );
        let mut opts = git2::DiffOptions::new();
        opts.context_lines(0);
        let (mut del, mut add) = (Vec::new(), Vec::new());
        let mut cb = |_: git2::DiffDelta, _: Option<git2::DiffHunk>, l: git2::DiffLine| {
            match l.origin() {
                '+' => add.push(l.new_lineno().unwrap() as usize - 1),
                '-' => del.push(l.old_lineno().unwrap() as usize - 1),
                _ => {}
            }
            true
        };
        repo.diff_blobs(
            Some(&ob),
            Some(""),
            Some(&nb),
            Some(""),
            Some(&mut opts),
            None,
            None,
            None,
            Some(&mut cb),
        )
        .unwrap();
        (del, add)
    }

    fn mine(old: &[u8], new: &[u8]) -> Option<(Vec<usize>, Vec<usize>)> {
        single_block(old, new).map(|b| match b.side {
            Side::Old => (b.rows.collect(), vec![]),
            Side::New => (vec![], b.rows.collect()),
        })
    }

    #[test]
    fn agrees_with_libgit2_on_single_blocks() {
        // Lines drawn from a tiny alphabet so that blocks can slide over repeated lines.
        let alphabet: [&[u8]; 4] = [b"a\n", b"}\n", b"\n", b"    x++;\n"];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) as usize) % n
        };
        let (mut checked, mut fast) = (0, 0);
        for _ in 0..3000 {
            let len = next(12);
            let mut lines: Vec<Vec<u8>> = (0..len).map(|_| alphabet[next(4)].to_vec()).collect();
            if next(4) == 0 {
                if let Some(last) = lines.last_mut() {
                    last.pop(); // no newline at the end
                }
            }
            let old: Vec<u8> = lines.concat();
            // Insert or remove a run of lines somewhere.
            let at = next(lines.len() + 1);
            let mut edited = lines.clone();
            if next(2) == 0 || lines.is_empty() {
                for k in 0..1 + next(3) {
                    edited.insert(at.min(edited.len()), alphabet[(k + next(4)) % 4].to_vec());
                }
            } else {
                let n = (1 + next(3)).min(lines.len() - at.min(lines.len() - 1));
                let from = at.min(lines.len() - 1);
                edited.drain(from..from + n);
            }
            let new: Vec<u8> = edited.concat();
            if old == new {
                continue;
            }
            checked += 1;
            if let Some(rows) = mine(&old, &new) {
                fast += 1;
                assert_eq!(
                    rows,
                    libgit2(&old, &new),
                    "old {:?} new {:?}",
                    String::from_utf8_lossy(&old),
                    String::from_utf8_lossy(&new)
                );
            }
        }
        assert!(fast * 2 > checked, "{fast} of {checked}");
    }

    #[test]
    fn added_deleted_and_binary_files() {
        assert_eq!(mine(b"", b"a\nb"), Some((vec![], vec![0, 1])));
        assert_eq!(mine(b"a\nb\n", b""), Some((vec![0, 1], vec![])));
        assert_eq!(mine(b"a\n", b"a\0\n"), None);
        assert_eq!(mine(b"a\nb\n", b"a\nc\n"), None);
        // The last line gains its newline: a modification, left to libgit2.
        assert_eq!(mine(b"a\nb", b"a\nb\n"), None);
        assert_eq!(libgit2(b"a\nb", b"a\nb\n"), (vec![1], vec![1]));
    }
}
