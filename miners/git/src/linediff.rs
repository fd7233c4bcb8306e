//! The line diff of two file versions for the shapes of change whose answer is forced, without
//! libgit2 — with exactly libgit2's answer.
//!
//! libgit2 diffs blobs with xdiff. Lines are compared whole, newline included. The common leading
//! and trailing lines are trimmed first. After the diff, each block of changes is slid over
//! identical lines (no indent heuristic by default): as far down as it goes, or back to where it
//! lines up with a block of the other version. What is left between the common lines (the middle)
//! decides two shapes whose answer does not depend on the diff algorithm:
//! - **[`single_block`]: one version's middle is empty.** The change is a single block of the other
//!   version's middle lines. Sliding it down is then the whole of xdiff's post-processing.
//! - **[`disjoint_blocks`]: both middles are non-empty and share no line.** No line of one can match
//!   a line of the other, so every middle line is changed: one block on each side, lined up with
//!   each other, which the sliding leaves where they are.
//!
//! Either way the rows come out without hashing every line of both versions. Binary blobs (a NUL
//! byte in the first 8,000 bytes, as libgit2 decides: no lines) and every other shape of change are
//! left to the caller, which runs [`crate::xdiff`] (the port of libgit2's xdiff). Added and deleted
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

/// End of the line record starting at `at` (after its newline, or the end of the data).
fn record_end(data: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |k| at + k + 1)
}

/// A fast hash for lines of one file (FNV-1a, eight bytes at a time); no protection against
/// crafted collisions is needed for a set that lives for one file pair.
#[derive(Clone, Copy, Default)]
struct LineHash;

impl std::hash::BuildHasher for LineHash {
    type Hasher = LineHasher;
    fn build_hasher(&self) -> LineHasher {
        LineHasher(0xcbf2_9ce4_8422_2325)
    }
}

struct LineHasher(u64);

impl std::hash::Hasher for LineHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = (self.0 ^ u64::from_le_bytes(w)).wrapping_mul(0x0100_0000_01b3);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

/// The common leading and trailing lines of two versions: `(lead, tail_old, tail_new)`, byte
/// offsets such that `old[..lead] == new[..lead]` and `old[tail_old..] == new[tail_new..]` are whole
/// lines, as many as xdiff trims (leading ones first).
fn trim(old: &[u8], new: &[u8]) -> (usize, usize, usize) {
    // Common leading records: the common bytes up to the last newline in them.
    let p = etip_lang::bytes::common_prefix(old, new);
    let lead = memchr::memrchr(b'\n', &old[..p]).map_or(0, |k| k + 1);
    // Common trailing records, not overlapping the leading ones in either version: the common
    // bytes from the first record start in them (a record starts after a newline).
    let limit = old.len().min(new.len()) - lead;
    let q = etip_lang::bytes::common_suffix(old, new, limit);
    let (mut tail_a, mut tail_b) = (old.len() - q, new.len() - q);
    let at_start = |data: &[u8], at: usize| at == 0 || data[at - 1] == b'\n';
    if !(at_start(old, tail_a) && at_start(new, tail_b)) {
        let skip = record_end(old, tail_a) - tail_a;
        tail_a += skip;
        tail_b += skip;
    }
    (lead, tail_a, tail_b)
}

/// The line records of `data[start..end]`.
fn records(data: &[u8], start: usize, end: usize) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut at = start;
    while at < end {
        let e = record_end(data, at);
        lines.push(&data[at..e]);
        at = e;
    }
    lines
}

/// Row of the line starting at byte `at`.
fn row_of(data: &[u8], at: usize) -> usize {
    memchr::memchr_iter(b'\n', &data[..at]).count()
}

/// The change from `old` to `new` when it is a single block of added or removed lines (`None`
/// otherwise, or for binary blobs, or for identical contents).
pub fn single_block<'a>(old: &'a [u8], new: &'a [u8]) -> Option<Block<'a>> {
    middles(old, new).and_then(|m| single_in(old, new, m))
}

/// The change from `old` to `new` when the middles of both versions are non-empty and share no line:
/// `(removed, added)`, libgit2's single hunk (`None` for every other shape, and for binary blobs).
pub fn disjoint_blocks<'a>(old: &'a [u8], new: &'a [u8]) -> Option<(Block<'a>, Block<'a>)> {
    middles(old, new).and_then(|m| disjoint_in(old, new, m))
}

/// A change whose rows are forced: one block of added or removed lines, or a block of removed
/// lines replaced by unrelated added ones (in libgit2's order: removed first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forced<'a> {
    /// [`single_block`]'s shape.
    One(Block<'a>),
    /// [`disjoint_blocks`]'s shape: removed, then added.
    Two(Block<'a>, Block<'a>),
}

/// Either forced shape, trimming the common lines once (`None`: libgit2 must decide).
pub fn forced<'a>(old: &'a [u8], new: &'a [u8]) -> Option<Forced<'a>> {
    let m = middles(old, new)?;
    single_in(old, new, m)
        .map(Forced::One)
        .or_else(|| disjoint_in(old, new, m).map(|(removed, added)| Forced::Two(removed, added)))
}

/// The trimmed middles `(lead, tail_old, tail_new)` of two different text versions.
fn middles(old: &[u8], new: &[u8]) -> Option<(usize, usize, usize)> {
    if old == new || is_binary(old) || is_binary(new) {
        return None;
    }
    Some(trim(old, new))
}

fn single_in<'a>(
    old: &'a [u8],
    new: &'a [u8],
    (lead, tail_a, tail_b): (usize, usize, usize),
) -> Option<Block<'a>> {
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
    let lines = records(data, start, end);
    let row0 = row_of(data, start);
    Some(Block {
        side,
        rows: row0..row0 + lines.len(),
        lines,
    })
}

fn disjoint_in<'a>(
    old: &'a [u8],
    new: &'a [u8],
    (lead, tail_a, tail_b): (usize, usize, usize),
) -> Option<(Block<'a>, Block<'a>)> {
    if tail_a == lead || tail_b == lead {
        return None;
    }
    let removed = records(old, lead, tail_a);
    let added = records(new, lead, tail_b);
    let (small, large) = if removed.len() <= added.len() {
        (&removed, &added)
    } else {
        (&added, &removed)
    };
    // A handful of lines: compare them all; more: through a set.
    if small.len() <= 8 {
        if large.iter().any(|l| small.contains(l)) {
            return None;
        }
    } else {
        let mut set: std::collections::HashSet<&[u8], LineHash> =
            std::collections::HashSet::with_capacity_and_hasher(small.len(), LineHash);
        set.extend(small.iter().copied());
        if large.iter().any(|l| set.contains(l)) {
            return None;
        }
    }
    let row_old = row_of(old, lead);
    let row_new = row_of(new, lead);
    Some((
        Block {
            side: Side::Old,
            rows: row_old..row_old + removed.len(),
            lines: removed,
        },
        Block {
            side: Side::New,
            rows: row_new..row_new + added.len(),
            lines: added,
        },
    ))
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

    /// A small linear congruential generator: `next(n)` draws from `0..n`.
    fn lcg(mut state: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) as usize) % n
        }
    }

    /// `rows` are libgit2's removed and added rows for `old` → `new`.
    fn assert_agrees(old: &[u8], new: &[u8], rows: (Vec<usize>, Vec<usize>)) {
        assert_eq!(
            rows,
            libgit2(old, new),
            "old {:?} new {:?}",
            String::from_utf8_lossy(old),
            String::from_utf8_lossy(new)
        );
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
        let mut next = lcg(0x9e37_79b9_7f4a_7c15u64);
        let (mut checked, mut fast) = (0, 0);
        for _ in 0..3000 {
            let len = next(12);
            let mut lines: Vec<Vec<u8>> = (0..len).map(|_| alphabet[next(4)].to_vec()).collect();
            if next(4) == 0
                && let Some(last) = lines.last_mut()
            {
                last.pop(); // no newline at the end
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
                assert_agrees(&old, &new, rows);
            }
        }
        assert!(fast * 2 > checked, "{fast} of {checked}");
    }

    fn mine_disjoint(old: &[u8], new: &[u8]) -> Option<(Vec<usize>, Vec<usize>)> {
        disjoint_blocks(old, new).map(|(r, a)| (r.rows.collect(), a.rows.collect()))
    }

    #[test]
    fn agrees_with_libgit2_on_disjoint_blocks() {
        // Tiny alphabets so that blocks can slide over repeated lines and middles often share lines.
        let alphabet: [&[u8]; 6] = [b"a\n", b"}\n", b"\n", b"    x++;\n", b"b\n", b"a"];
        let mut next = lcg(0x2545_f491_4f6c_dd1du64);
        let (mut checked, mut fast) = (0, 0);
        for _ in 0..6000 {
            let len = next(14);
            let line = |k: usize| alphabet[k % 5].to_vec();
            let mut lines: Vec<Vec<u8>> = (0..len).map(|_| line(next(5))).collect();
            if next(4) == 0
                && let Some(last) = lines.last_mut()
            {
                last.pop(); // no newline at the end
            }
            let old: Vec<u8> = lines.concat();
            // Replace a run of lines somewhere by other lines, at one or two places.
            let mut edited = lines.clone();
            for _ in 0..1 + usize::from(next(3) == 0) {
                let at = next(edited.len() + 1);
                let n = next(4).min(edited.len() - at);
                let with: Vec<Vec<u8>> = (0..1 + next(3)).map(|_| line(next(6))).collect();
                edited.splice(at..at + n, with);
            }
            if next(6) == 0 {
                edited.push(alphabet[5].to_vec()); // a last line without newline
            }
            let new: Vec<u8> = edited.concat();
            if old == new {
                continue;
            }
            checked += 1;
            if let Some(rows) = mine_disjoint(&old, &new) {
                fast += 1;
                assert_agrees(&old, &new, rows);
            }
        }
        assert!(fast * 5 > checked, "{fast} of {checked}");
    }

    #[test]
    fn disjoint_shapes() {
        // One line changed: the most common edit.
        assert_eq!(
            mine_disjoint(b"a\nb\nc\n", b"a\nx\nc\n"),
            Some((vec![1], vec![1]))
        );
        // The last line gains its newline.
        assert_eq!(mine_disjoint(b"a\nb", b"a\nb\n"), Some((vec![1], vec![1])));
        // Middles sharing a line, pure insertions, binary blobs: not this shape.
        assert_eq!(mine_disjoint(b"a\nb\nc\n", b"a\nc\nb\n"), None);
        assert_eq!(mine_disjoint(b"a\n", b"a\nb\n"), None);
        assert_eq!(mine_disjoint(b"a\n", b"b\0\n"), None);
        // Many lines go through the set.
        let old: Vec<u8> = (0..40)
            .flat_map(|i| format!("old {i}\n").into_bytes())
            .collect();
        let new: Vec<u8> = (0..30)
            .flat_map(|i| format!("new {i}\n").into_bytes())
            .collect();
        assert_eq!(
            mine_disjoint(&old, &new),
            Some(((0..40).collect(), (0..30).collect()))
        );
        assert_eq!(mine_disjoint(&old, &new), Some(libgit2(&old, &new)));
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
