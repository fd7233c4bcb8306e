//! Blob, tree and commit reads straight from the repository's pack files (commits for the
//! first-parent walk and the merged-branch walks of [`crate::merged`]).
//!
//! Reading the changed files' blobs was a fifth of the miner's time, and almost all of it was
//! inflating pack data: libgit2 inflates with the system zlib and rebuilds each delta chain through
//! its own caches. This reader does the same work with libdeflate and a cache of the objects it
//! inflated last (old and new versions of a file are usually deltas of each other; a commit's
//! parent tree is the next commit's tree). On the blobs of every modified `.py` file of scipy since
//! 2015 it takes 0.42–0.46× libgit2's time with the miner's 16 MiB cache, 0.18× with 96 MiB
//! (`examples/pack_read_bench.rs`). Each entry is read with one `pread` of exactly its length, up
//! to the next object in pack order (git's reverse index `.rev` gives that order when present and
//! sound; otherwise the reader sorts the offsets once).
//!
//! Its scope is deliberately narrow, and libgit2 stays the authority: the reader answers only for
//! objects it finds in a version-2 pack index of the repository's own object directory, and returns
//! `Ok(None)` otherwise (loose objects, objects of alternates, SHA-256 repositories, packs that
//! appeared after it opened the index). Any inconsistency it meets (a truncated pack, a bad delta, a
//! zlib stream that does not inflate to the size its header says) is an error the caller answers by
//! reading the same object through libgit2. A pack that disappears while the miner runs (a
//! concurrent `git gc`) stays readable through the open file; the reader never writes anything.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use git2::{Oid, Repository};

/// Why an object could not be read from a pack (the caller falls back to libgit2).
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// Reading the pack file failed.
    #[error("reading {path}: {source}")]
    Io {
        /// The pack file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The pack's data is not what its index and headers say.
    #[error("{path} at offset {offset}: {what}")]
    Corrupt {
        /// The pack file.
        path: PathBuf,
        /// Offset of the object.
        offset: u64,
        /// What was wrong.
        what: &'static str,
    },
    /// The object exists but is not of the type asked for.
    #[error("object {0} is not of the type asked for")]
    WrongType(Oid),
}

/// Objects larger than this are left to libgit2 (as are delta chains longer than [`MAX_CHAIN`]).
const MAX_OBJECT: usize = 1 << 30;
/// Longest delta chain followed (git writes at most 50 by default, 250 with `--aggressive`).
const MAX_CHAIN: usize = 10_000;
/// Bytes of inflated objects kept for the next reads, per reader (the miner's default). The miner
/// reads few versions of each file, far apart: 48 MiB made it 1–3% faster on scipy and sympy for
/// 22–36 MiB more peak memory (a benchmark that reads every modified file needs more: see
/// `examples/pack_read_bench.rs`).
pub const CACHE_BYTES: usize = 16 << 20;
/// Objects larger than this are not kept.
const CACHE_MAX_OBJECT: usize = 16 << 20;

/// One pack: its index (kept as read) and where its object data ends.
struct Pack {
    path: PathBuf,
    file: File,
    idx: Vec<u8>,
    count: usize,
    /// End of the object data (the pack's length minus its 20-byte trailer).
    data_end: u64,
    /// Every object's offset, ascending: an entry ends where the next one starts, so it is read
    /// with one `pread` of exactly its length.
    starts: Vec<u64>,
}

/// Indexes larger than this leave their pack to libgit2 (which maps them instead of reading them):
/// the reader keeps each worker's copy in memory, 28 bytes per object (9.6 million objects).
const MAX_INDEX: u64 = 256 << 20;

const IDX_MAGIC: &[u8; 8] = b"\xfftOc\0\0\0\x02";
const FANOUT: usize = 8;
const IDS: usize = FANOUT + 256 * 4;

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let w = b.get(at..at + 4)?;
    Some(u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
}

impl Pack {
    /// Opens a pack through its `.idx`; `None` when the index is not a well-formed version-2
    /// index of SHA-1 ids or the pack file does not start as a pack.
    fn open(idx_path: &Path) -> Option<Pack> {
        if std::fs::metadata(idx_path).ok()?.len() > MAX_INDEX {
            return None;
        }
        let idx = std::fs::read(idx_path).ok()?;
        if idx.get(..8)? != IDX_MAGIC {
            return None;
        }
        let count = be32(&idx, FANOUT + 255 * 4)? as usize;
        let offs = IDS + count * 24;
        let big = offs + count * 4;
        let large = (0..count)
            .filter(|&k| be32(&idx, offs + k * 4).is_some_and(|o| o & 0x8000_0000 != 0))
            .count();
        // Index trailer: the pack's checksum and the index's own.
        if idx.len() != big + large * 8 + 40 {
            return None;
        }
        let path = idx_path.with_extension("pack");
        let file = File::open(&path).ok()?;
        let len = file.metadata().ok()?.len();
        let mut head = [0u8; 12];
        read_at(&file, &mut head, 0).ok()?;
        let version = u32::from_be_bytes([head[4], head[5], head[6], head[7]]);
        if &head[..4] != b"PACK" || !(version == 2 || version == 3) || len < 32 {
            return None;
        }
        let mut pack = Pack {
            path,
            file,
            idx,
            count,
            data_end: len - 20,
            starts: Vec::new(),
        };
        let starts = match pack.starts_from_rev(&idx_path.with_extension("rev")) {
            Some(starts) => starts,
            None => pack.starts_sorted()?,
        };
        // Every object must lie between the pack's header and its trailer.
        if starts.first().is_some_and(|&o| o < 12)
            || starts.last().is_some_and(|&o| o >= pack.data_end)
        {
            return None;
        }
        pack.starts = starts;
        Some(pack)
    }

    /// The objects' offsets in pack order from git's reverse index (`.rev`, written by default
    /// since git 2.41): the index positions sorted by offset. `None` when there is none, or it
    /// is not a version-1 SHA-1 reverse index of this pack listing strictly ascending offsets.
    fn starts_from_rev(&self, rev_path: &Path) -> Option<Vec<u64>> {
        let rev = std::fs::read(rev_path).ok()?;
        let n = self.count;
        let body = 12 + n * 4;
        if rev.len() != body + 40
            || &rev[..4] != b"RIDX"
            || be32(&rev, 4)? != 1
            || be32(&rev, 8)? != 1
        {
            return None;
        }
        // Both trailers start with the pack's checksum.
        let pack_sum = self.idx.len().checked_sub(40)?;
        if rev[body..body + 20] != self.idx[pack_sum..pack_sum + 20] {
            return None;
        }
        let mut starts: Vec<u64> = Vec::with_capacity(n);
        for j in 0..n {
            let k = be32(&rev, 12 + j * 4)? as usize;
            if k >= n {
                return None;
            }
            let o = self.offset(k)?;
            // Strictly ascending: every object once, in pack order.
            if starts.last().is_some_and(|&last| o <= last) {
                return None;
            }
            starts.push(o);
        }
        Some(starts)
    }

    /// The objects' offsets, sorted (no reverse index); `None` when two objects share one.
    fn starts_sorted(&self) -> Option<Vec<u64>> {
        let mut starts = (0..self.count)
            .map(|k| self.offset(k))
            .collect::<Option<Vec<u64>>>()?;
        starts.sort_unstable();
        if starts.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
        Some(starts)
    }

    /// Where the entry at `at` ends: the next object's offset, or the end of the object data.
    fn entry_end(&self, at: u64) -> u64 {
        let next = self.starts.partition_point(|&o| o <= at);
        self.starts.get(next).copied().unwrap_or(self.data_end)
    }

    fn id(&self, k: usize) -> &[u8] {
        &self.idx[IDS + k * 20..IDS + k * 20 + 20]
    }

    fn offset(&self, k: usize) -> Option<u64> {
        let offs = IDS + self.count * 24;
        let o = be32(&self.idx, offs + k * 4)?;
        if o & 0x8000_0000 == 0 {
            return Some(u64::from(o));
        }
        let at = offs + self.count * 4 + (o & 0x7fff_ffff) as usize * 8;
        Some(u64::from_be_bytes(
            self.idx.get(at..at + 8)?.try_into().ok()?,
        ))
    }

    /// Offset of object `id` in this pack.
    fn find(&self, id: &[u8]) -> Option<u64> {
        let first = usize::from(*id.first()?);
        let lo = if first == 0 {
            0
        } else {
            be32(&self.idx, FANOUT + (first - 1) * 4)? as usize
        };
        let hi = (be32(&self.idx, FANOUT + first * 4)? as usize).min(self.count);
        let (mut lo, mut hi) = (lo.min(hi), hi);
        // Most comparisons are decided by the first eight bytes, compared as one number.
        let head = |b: &[u8]| {
            b.get(..8)
                .and_then(|h| h.try_into().ok())
                .map(u64::from_be_bytes)
        };
        let want = head(id)?;
        let cmp = |k: usize| {
            let have = self.id(k);
            Some(head(have)?.cmp(&want).then_with(|| have[8..].cmp(&id[8..])))
        };
        // Ids are uniformly distributed: guess the position from the first eight bytes while the
        // range is wide (a few probes instead of a dozen), then bisect.
        while hi - lo > 16 {
            let (a, b) = (head(self.id(lo))?, head(self.id(hi - 1))?);
            if want < a || want > b {
                return None;
            }
            let span = u128::from((b - a).max(1));
            let k = lo + ((u128::from(want - a) * (hi - 1 - lo) as u128) / span) as usize;
            let k = k.min(hi - 1);
            match cmp(k)? {
                std::cmp::Ordering::Less => lo = k + 1,
                std::cmp::Ordering::Greater => hi = k,
                std::cmp::Ordering::Equal => return self.offset(k),
            }
        }
        while lo < hi {
            let mid = (lo + hi) / 2;
            match cmp(mid)? {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.offset(mid),
            }
        }
        None
    }

    fn corrupt(&self, offset: u64, what: &'static str) -> PackError {
        PackError::Corrupt {
            path: self.path.clone(),
            offset,
            what,
        }
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}

/// An inflated object.
type Object = (u8, Arc<Vec<u8>>);

/// The most recently inflated objects, up to `limit` bytes, oldest dropped first.
struct Cache {
    objects: HashMap<(usize, u64), Object>,
    order: VecDeque<(usize, u64)>,
    bytes: usize,
    limit: usize,
}

impl Cache {
    fn get(&self, key: (usize, u64)) -> Option<Object> {
        self.objects.get(&key).map(|(k, d)| (*k, Arc::clone(d)))
    }

    fn insert(&mut self, key: (usize, u64), kind: u8, data: &Arc<Vec<u8>>) {
        if data.len() > CACHE_MAX_OBJECT || self.objects.contains_key(&key) {
            return;
        }
        self.bytes += data.len();
        self.objects.insert(key, (kind, Arc::clone(data)));
        self.order.push_back(key);
        while self.bytes > self.limit {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some((_, d)) = self.objects.remove(&old) {
                self.bytes -= d.len();
            }
        }
    }
}

/// Reads blobs from a repository's packs (one per mining worker).
pub struct PackReader {
    packs: Vec<Pack>,
    cache: Cache,
    inflater: libdeflater::Decompressor,
    raw: Vec<u8>,
}

const COMMIT: u8 = 1;
const TREE: u8 = 2;
const BLOB: u8 = 3;
const OFS_DELTA: u8 = 6;
const REF_DELTA: u8 = 7;

/// An object's entry in a pack: its type, inflated size and where its zlib data starts.
struct Entry {
    kind: u8,
    size: usize,
    /// Start of the compressed data in `raw` (after the header and the delta base reference).
    data: usize,
    /// For an offset delta, the base's offset; for a reference delta, the base's index.
    base: Option<Base>,
}

enum Base {
    Offset(u64),
    Id([u8; 20]),
}

impl PackReader {
    /// The packs of `repo`'s object directory, with a cache of [`CACHE_BYTES`]; an empty reader
    /// (every answer `None`) for a repository whose objects are not SHA-1.
    pub fn open(repo: &Repository) -> PackReader {
        PackReader::with_cache(repo, CACHE_BYTES)
    }

    /// [`PackReader::open`] with a cache of `cache_bytes`.
    pub fn with_cache(repo: &Repository, cache_bytes: usize) -> PackReader {
        let sha1 = repo
            .config()
            .and_then(|c| c.get_string("extensions.objectformat"))
            .ok()
            .is_none_or(|f| f.eq_ignore_ascii_case("sha1"));
        let dir = repo.commondir().join("objects").join("pack");
        let mut packs = Vec::new();
        if sha1 && let Ok(entries) = std::fs::read_dir(&dir) {
            let mut idx: Vec<(std::time::SystemTime, PathBuf)> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "idx"))
                .map(|p| {
                    let t = std::fs::metadata(&p).and_then(|m| m.modified());
                    (t.unwrap_or(std::time::UNIX_EPOCH), p)
                })
                .collect();
            // Newest first, as git looks them up: recent objects are in recent packs.
            idx.sort_by(|a, b| b.cmp(a));
            for (_, p) in idx {
                match Pack::open(&p) {
                    Some(pack) => packs.push(pack),
                    None => tracing::debug!(index = %p.display(), "pack left to libgit2"),
                }
            }
        }
        PackReader {
            packs,
            cache: Cache {
                objects: HashMap::new(),
                order: VecDeque::new(),
                bytes: 0,
                limit: cache_bytes,
            },
            inflater: libdeflater::Decompressor::new(),
            raw: Vec::new(),
        }
    }

    /// Number of packs the reader answers from.
    pub fn packs(&self) -> usize {
        self.packs.len()
    }

    /// The content of blob `id`: `Ok(None)` when it is in none of the packs.
    pub fn blob(&mut self, id: Oid) -> Result<Option<Arc<Vec<u8>>>, PackError> {
        self.read(id, BLOB)
    }

    /// The content of tree `id` (git's binary tree format): `Ok(None)` when it is in none of the
    /// packs.
    pub fn tree(&mut self, id: Oid) -> Result<Option<Arc<Vec<u8>>>, PackError> {
        self.read(id, TREE)
    }

    /// The raw object of commit `id`: `Ok(None)` when it is in none of the packs.
    pub fn commit(&mut self, id: Oid) -> Result<Option<Arc<Vec<u8>>>, PackError> {
        self.read(id, COMMIT)
    }

    fn read(&mut self, id: Oid, kind: u8) -> Result<Option<Arc<Vec<u8>>>, PackError> {
        let Some((p, at)) = self
            .packs
            .iter()
            .enumerate()
            .find_map(|(p, pack)| pack.find(id.as_bytes()).map(|at| (p, at)))
        else {
            return Ok(None);
        };
        match self.object(p, at)? {
            (k, data) if k == kind => Ok(Some(data)),
            _ => Err(PackError::WrongType(id)),
        }
    }

    /// The object at `at` in pack `p`, its delta chain resolved.
    fn object(&mut self, p: usize, at: u64) -> Result<Object, PackError> {
        let mut chain: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut cur = at;
        let (kind, mut data) = loop {
            if let Some(hit) = self.cache.get((p, cur)) {
                break hit;
            }
            if chain.len() > MAX_CHAIN {
                return Err(self.packs[p].corrupt(at, "delta chain too long"));
            }
            let e = self.entry(p, cur)?;
            let body = self.inflate(p, cur, e.data, e.size)?;
            match e.base {
                None => {
                    let obj = Arc::new(body);
                    // Commits (read once, by the merged-branch walks) would only push the blobs
                    // and trees that deltas are made of out of the cache.
                    if e.kind != COMMIT {
                        self.cache.insert((p, cur), e.kind, &obj);
                    }
                    break (e.kind, obj);
                }
                Some(base) => {
                    chain.push((cur, body));
                    cur = match base {
                        Base::Offset(o) => o,
                        Base::Id(id) => self.packs[p].find(&id).ok_or_else(|| {
                            self.packs[p].corrupt(cur, "delta base not in the pack")
                        })?,
                    };
                }
            }
        };
        for (off, delta) in chain.into_iter().rev() {
            let out =
                apply(&data, &delta).ok_or_else(|| self.packs[p].corrupt(off, "bad delta"))?;
            data = Arc::new(out);
            if kind != COMMIT {
                self.cache.insert((p, off), kind, &data);
            }
        }
        Ok((kind, data))
    }

    /// Reads the entry at `at` of pack `p` into `raw` and parses its header.
    fn entry(&mut self, p: usize, at: u64) -> Result<Entry, PackError> {
        let pack = &self.packs[p];
        let bad = |what| pack.corrupt(at, what);
        let io = |source| PackError::Io {
            path: pack.path.clone(),
            source,
        };
        // The entry (header, delta base, zlib data) up to the next object, in one read.
        let len = usize::try_from(pack.entry_end(at).saturating_sub(at)).unwrap_or(usize::MAX);
        if len > 32 + bound(MAX_OBJECT) {
            return Err(bad("entry larger than any object the reader inflates"));
        }
        self.raw.resize(len, 0);
        read_at(&pack.file, &mut self.raw, at).map_err(io)?;
        let raw = &self.raw[..];
        let byte = |i: usize| raw.get(i).copied().ok_or_else(|| bad("truncated header"));
        let mut c = byte(0)?;
        let kind = (c >> 4) & 7;
        let mut size = usize::from(c & 15);
        let (mut i, mut shift) = (1, 4);
        while c & 0x80 != 0 {
            c = byte(i)?;
            i += 1;
            if shift > 57 {
                return Err(bad("size header too long"));
            }
            size |= usize::from(c & 0x7f) << shift;
            shift += 7;
        }
        if size > MAX_OBJECT {
            return Err(bad("object too large"));
        }
        let base = match kind {
            1..=4 => None,
            OFS_DELTA => {
                let mut c = byte(i)?;
                i += 1;
                let mut back = u64::from(c & 0x7f);
                while c & 0x80 != 0 {
                    c = byte(i)?;
                    i += 1;
                    back = back
                        .checked_add(1)
                        .and_then(|b| b.checked_mul(128))
                        .ok_or_else(|| bad("delta base offset overflows"))?
                        | u64::from(c & 0x7f);
                }
                if back == 0 || back > at {
                    return Err(bad("delta base offset out of the pack"));
                }
                Some(Base::Offset(at - back))
            }
            REF_DELTA => {
                let id: [u8; 20] = raw
                    .get(i..i + 20)
                    .and_then(|s| s.try_into().ok())
                    .ok_or_else(|| bad("truncated delta base id"))?;
                i += 20;
                Some(Base::Id(id))
            }
            _ => return Err(bad("unknown object type")),
        };
        Ok(Entry {
            kind,
            size,
            data: i,
            base,
        })
    }

    /// Inflates the zlib data of the entry last read, which must be exactly `size` bytes.
    fn inflate(
        &mut self,
        p: usize,
        at: u64,
        from: usize,
        size: usize,
    ) -> Result<Vec<u8>, PackError> {
        let mut out = vec![0u8; size];
        let input = self.raw.get(from..).unwrap_or(&[]);
        match self.inflater.zlib_decompress(input, &mut out) {
            Ok(n) if n == size => Ok(out),
            _ => Err(self.packs[p].corrupt(at, "zlib data does not inflate to its size")),
        }
    }
}

/// zlib's `compressBound`: the longest zlib stream of `size` bytes.
fn bound(size: usize) -> usize {
    size + (size >> 12) + (size >> 14) + 64
}

fn varint(d: &[u8], i: &mut usize) -> Option<usize> {
    let (mut v, mut s) = (0usize, 0u32);
    loop {
        let c = *d.get(*i)?;
        *i += 1;
        if s > 63 {
            return None;
        }
        v |= usize::from(c & 0x7f).checked_shl(s)?;
        s += 7;
        if c & 0x80 == 0 {
            return Some(v);
        }
    }
}

/// Applies a git delta to its base; `None` when the delta does not fit the base.
fn apply(base: &[u8], delta: &[u8]) -> Option<Vec<u8>> {
    let mut i = 0;
    if varint(delta, &mut i)? != base.len() {
        return None;
    }
    let size = varint(delta, &mut i)?;
    if size > MAX_OBJECT {
        return None;
    }
    let mut out = Vec::with_capacity(size);
    while i < delta.len() {
        let op = delta[i];
        i += 1;
        if op & 0x80 != 0 {
            let (mut off, mut len) = (0usize, 0usize);
            for b in 0..4 {
                if op & (1 << b) != 0 {
                    off |= usize::from(*delta.get(i)?) << (8 * b);
                    i += 1;
                }
            }
            for b in 0..3 {
                if op & (0x10 << b) != 0 {
                    len |= usize::from(*delta.get(i)?) << (8 * b);
                    i += 1;
                }
            }
            if len == 0 {
                len = 0x10000;
            }
            out.extend_from_slice(base.get(off..off.checked_add(len)?)?);
        } else if op != 0 {
            let n = usize::from(op);
            out.extend_from_slice(delta.get(i..i + n)?);
            i += n;
        } else {
            // Opcode 0 is reserved.
            return None;
        }
        if out.len() > size {
            return None;
        }
    }
    (out.len() == size).then_some(out)
}
