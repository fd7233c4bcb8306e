//! Line diffs of a commit's files, computed when first needed, and its diff statistics and
//! normalised diff hash (stage 4 of [`super`]).

use sha2::{Digest, Sha256};

use super::{BlobData, FileDiff, content};
use etip_core::candidate::DiffStats;

/// Line-level view of one file change.
pub(super) struct Lines {
    pub(super) deleted: Vec<usize>,
    pub(super) added: Vec<usize>,
    insertions: u32,
    deletions: u32,
    /// The changed lines in libgit2's output order (each change's removed lines, then its added
    /// ones): `-` or `+` and where the line's text is, for the diff hash.
    spans: Vec<(u8, Span)>,
    /// Text of lines that were not found in their blob (see [`Span::Own`]).
    own: Vec<u8>,
}

/// Where a changed line's text is.
enum Span {
    /// Bytes of its version's blob (both the forced shapes and the xdiff port slice the blob).
    Blob(std::ops::Range<usize>),
    /// Bytes of [`Lines::own`], for a line that is not a slice of its version's bytes (no diff
    /// source gives one today; the copy keeps the diff hash right if one ever does).
    Own(std::ops::Range<usize>),
}

impl Lines {
    /// Records a changed line of `text` (the blob of its version).
    fn push_span(&mut self, sign: u8, text: &[u8], line: &[u8]) {
        let start = (line.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
        let span = if start <= text.len() && line.len() <= text.len() - start {
            Span::Blob(start..start + line.len())
        } else {
            let at = self.own.len();
            self.own.extend_from_slice(line);
            Span::Own(at..self.own.len())
        };
        self.spans.push((sign, span));
    }

    /// Text of a changed line.
    fn text<'t>(&'t self, span: &Span, blob: &'t [u8]) -> &'t [u8] {
        match span {
            Span::Blob(r) => &blob[r.clone()],
            Span::Own(r) => &self.own[r.clone()],
        }
    }
}

/// The line diffs of a commit's files, each computed when first needed.
pub(super) struct LazyLines<'c> {
    pub(super) files: &'c [FileDiff],
    pub(super) blobs: &'c [(Option<BlobData>, Option<BlobData>)],
    lines: Vec<Option<Lines>>,
}

impl<'c> LazyLines<'c> {
    pub(super) fn new(
        files: &'c [FileDiff],
        blobs: &'c [(Option<BlobData>, Option<BlobData>)],
    ) -> Self {
        LazyLines {
            files,
            blobs,
            lines: files.iter().map(|_| None).collect(),
        }
    }

    /// The line diff of file `i`.
    pub(super) fn get(&mut self, i: usize) -> &Lines {
        if self.lines[i].is_none() {
            let (old, new) = &self.blobs[i];
            self.lines[i] = Some(line_diff(content(old), content(new)));
        }
        self.lines[i].as_ref().expect("computed above")
    }
}

/// The diff statistics and the normalised diff hash of a commit's files (in path order): per file
/// `F <old path> <new path>`, then its `+`/`-` lines with leading and trailing whitespace trimmed,
/// inner runs of whitespace collapsed and blank lines dropped.
pub(super) fn diff_stats_and_hash(lines: &mut LazyLines) -> (DiffStats, String) {
    let mut stats = DiffStats {
        files: u32::try_from(lines.files.len()).unwrap_or(u32::MAX),
        ..DiffStats::default()
    };
    let mut hasher = Sha256::new();
    let mut norm = String::new();
    for i in 0..lines.files.len() {
        let (f, (old, new)) = (&lines.files[i], &lines.blobs[i]);
        let (old, new) = (content(old), content(new));
        hasher.update(b"F ");
        hasher.update(f.old_path.as_deref().unwrap_or("/dev/null").as_bytes());
        hasher.update(b" ");
        hasher.update(f.new_path.as_deref().unwrap_or("/dev/null").as_bytes());
        hasher.update(b"\n");
        let l = lines.get(i);
        stats.insertions += l.insertions;
        stats.deletions += l.deletions;
        for (sign, span) in &l.spans {
            let text = l.text(span, if *sign == b'-' { old } else { new });
            norm.clear();
            for word in String::from_utf8_lossy(text).split_whitespace() {
                if !norm.is_empty() {
                    norm.push(' ');
                }
                norm.push_str(word);
            }
            if !norm.is_empty() {
                hasher.update([*sign]);
                hasher.update(norm.as_bytes());
                hasher.update(b"\n");
            }
        }
    }
    (stats, hex::encode(hasher.finalize()))
}

/// Line diff of two file versions (0 context lines; an absent version is empty), as libgit2
/// computes it.
pub(super) fn line_diff(old_bytes: &[u8], new_bytes: &[u8]) -> Lines {
    let mut out = Lines {
        deleted: Vec::new(),
        added: Vec::new(),
        insertions: 0,
        deletions: 0,
        spans: Vec::new(),
        own: Vec::new(),
    };
    // The shapes of change whose rows are forced (one block of added or removed lines, added and
    // deleted files among them; one block replaced by unrelated lines): libgit2's exact answer
    // without hashing every line of both versions.
    let take = |out: &mut Lines, block: crate::linediff::Block| {
        let (sign, rows, count, text) = match block.side {
            crate::linediff::Side::Old => (b'-', &mut out.deleted, &mut out.deletions, old_bytes),
            crate::linediff::Side::New => (b'+', &mut out.added, &mut out.insertions, new_bytes),
        };
        *count = u32::try_from(block.lines.len()).unwrap_or(u32::MAX);
        rows.extend(block.rows);
        for line in &block.lines {
            out.push_span(sign, text, line);
        }
    };
    match crate::linediff::forced(old_bytes, new_bytes) {
        Some(crate::linediff::Forced::One(block)) => {
            take(&mut out, block);
            return out;
        }
        // libgit2's one hunk: removed lines first.
        Some(crate::linediff::Forced::Two(removed, added)) => {
            take(&mut out, removed);
            take(&mut out, added);
            return out;
        }
        None => {}
    }
    // libgit2 reports no lines for a binary version (or one over its 512 MiB limit).
    let too_big = |b: &[u8]| b.len() > 512 << 20;
    if crate::linediff::is_binary(old_bytes)
        || crate::linediff::is_binary(new_bytes)
        || too_big(old_bytes)
        || too_big(new_bytes)
    {
        return out;
    }
    let (old_recs, new_recs) = (
        crate::xdiff::records(old_bytes),
        crate::xdiff::records(new_bytes),
    );
    for change in crate::xdiff::diff(&old_recs, &new_recs) {
        out.deletions += change.old.len() as u32;
        out.insertions += change.new.len() as u32;
        for row in change.old {
            out.deleted.push(row);
            out.push_span(b'-', old_bytes, old_recs[row]);
        }
        for row in change.new {
            out.added.push(row);
            out.push_span(b'+', new_bytes, new_recs[row]);
        }
    }
    out.added.sort_unstable();
    out.deleted.sort_unstable();
    out
}
