//! How fast could the miner read blobs without libgit2? A measurement for the next step of the
//! mining speed work, not a reader the miner uses:
//!
//! `cargo run --release -p etip-mine-git --example pack_read_bench -- REPO [SINCE] [EXT]`
//!
//! Collects the old and new blobs of the `EXT` files (default `py`) that the first-parent commits
//! since `SINCE` (default 2015-01-01, as seconds or `YYYY-MM-DD`) modify, in the order the miner
//! reads them (newest commit first), then reads them all three ways in the same run, each twice:
//! libgit2 (`find_blob`, what `etip mine` does), and a minimal pack reader (pack index v2 lookup,
//! `pread` of each object, offset and reference deltas resolved through an LRU cache of every
//! object it inflated, up to 96 MiB as git's delta base cache) inflating with flate2 and with
//! libdeflate. Every blob read by the pack reader is compared byte for byte with libgit2's.
//! Loose objects, alternates and packs without a `.idx` are out of its scope (the repository is
//! expected to be packed, as mirrors are). Prints the best time of each and the ratios to libgit2.
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::rc::Rc;
use std::time::Instant;

use git2::{Oid, Repository};

/// One pack: its index (sorted ids, offsets) and each object's end (the next object's offset).
struct Pack {
    file: File,
    ids: Vec<[u8; 20]>,
    offsets: Vec<u64>,
    ends: HashMap<u64, u64>,
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn load(idx_path: &std::path::Path) -> Pack {
    let i = std::fs::read(idx_path).expect("read the pack index");
    assert_eq!(&i[..8], b"\xfftOc\0\0\0\x02", "pack index version 2");
    let n = be32(&i[8 + 255 * 4..]) as usize;
    let (shas, offs) = (8 + 256 * 4, 8 + 256 * 4 + n * 24);
    let big = offs + n * 4;
    let ids = (0..n)
        .map(|k| {
            let mut id = [0u8; 20];
            id.copy_from_slice(&i[shas + k * 20..shas + k * 20 + 20]);
            id
        })
        .collect();
    let offsets: Vec<u64> = (0..n)
        .map(|k| {
            let o = be32(&i[offs + k * 4..]);
            if o & 0x8000_0000 == 0 {
                u64::from(o)
            } else {
                let j = big + (o & 0x7fff_ffff) as usize * 8;
                u64::from_be_bytes(i[j..j + 8].try_into().expect("8 bytes"))
            }
        })
        .collect();
    let file = File::open(idx_path.with_extension("pack")).expect("open the pack");
    let len = file.metadata().expect("pack size").len();
    let mut sorted = offsets.clone();
    sorted.sort_unstable();
    let mut ends: HashMap<u64, u64> = sorted.windows(2).map(|w| (w[0], w[1])).collect();
    if let Some(&last) = sorted.last() {
        ends.insert(last, len - 20);
    }
    Pack {
        file,
        ids,
        offsets,
        ends,
    }
}

impl Pack {
    fn find(&self, id: &[u8]) -> Option<u64> {
        self.ids
            .binary_search_by(|x| x.as_slice().cmp(id))
            .ok()
            .map(|k| self.offsets[k])
    }
}

#[derive(Clone, Copy)]
enum Inflater {
    Flate2,
    Libdeflate,
}

struct Reader<'p> {
    pack: &'p Pack,
    how: Inflater,
    deflate: libdeflater::Decompressor,
    cache: HashMap<u64, Rc<Vec<u8>>>,
    order: VecDeque<u64>,
    cached: usize,
}

impl Reader<'_> {
    fn new(pack: &Pack, how: Inflater) -> Reader<'_> {
        Reader {
            pack,
            how,
            deflate: libdeflater::Decompressor::new(),
            cache: HashMap::new(),
            order: VecDeque::new(),
            cached: 0,
        }
    }

    fn inflate(&mut self, input: &[u8], size: usize) -> Vec<u8> {
        let mut out = vec![0u8; size];
        match self.how {
            Inflater::Flate2 => {
                let mut d = flate2::Decompress::new(true);
                d.decompress(input, &mut out, flate2::FlushDecompress::Finish)
                    .expect("inflate");
                assert_eq!(d.total_out() as usize, size);
            }
            Inflater::Libdeflate => {
                let n = self
                    .deflate
                    .zlib_decompress(input, &mut out)
                    .expect("inflate");
                assert_eq!(n, size);
            }
        }
        out
    }

    fn read(&mut self, at: u64) -> Rc<Vec<u8>> {
        if let Some(v) = self.cache.get(&at) {
            return Rc::clone(v);
        }
        let end = self.pack.ends[&at];
        let mut raw = vec![0u8; (end - at) as usize];
        self.pack
            .file
            .read_exact_at(&mut raw, at)
            .expect("read the pack");
        let mut i = 1;
        let (kind, mut size) = ((raw[0] >> 4) & 7, usize::from(raw[0] & 15));
        let (mut c, mut shift) = (raw[0], 4);
        while c & 0x80 != 0 {
            c = raw[i];
            i += 1;
            size |= usize::from(c & 0x7f) << shift;
            shift += 7;
        }
        let out = match kind {
            1..=4 => self.inflate(&raw[i..], size),
            6 => {
                let mut c = raw[i];
                i += 1;
                let mut back = u64::from(c & 0x7f);
                while c & 0x80 != 0 {
                    c = raw[i];
                    i += 1;
                    back = ((back + 1) << 7) | u64::from(c & 0x7f);
                }
                let base = self.read(at - back);
                let delta = self.inflate(&raw[i..], size);
                apply(&base, &delta)
            }
            7 => {
                let base_at = self
                    .pack
                    .find(&raw[i..i + 20])
                    .expect("base in the same pack");
                let base = self.read(base_at);
                let delta = self.inflate(&raw[i + 20..], size);
                apply(&base, &delta)
            }
            k => panic!("object type {k}"),
        };
        let out = Rc::new(out);
        if out.len() <= 16 << 20 {
            self.cached += out.len();
            self.cache.insert(at, Rc::clone(&out));
            self.order.push_back(at);
            while self.cached > 96 << 20 {
                let Some(old) = self.order.pop_front() else {
                    break;
                };
                if let Some(v) = self.cache.remove(&old) {
                    self.cached -= v.len();
                }
            }
        }
        out
    }
}

fn varint(d: &[u8], i: &mut usize) -> usize {
    let (mut v, mut s) = (0, 0);
    loop {
        let c = d[*i];
        *i += 1;
        v |= usize::from(c & 0x7f) << s;
        s += 7;
        if c & 0x80 == 0 {
            return v;
        }
    }
}

/// Applies a git delta to its base.
fn apply(base: &[u8], delta: &[u8]) -> Vec<u8> {
    let mut i = 0;
    assert_eq!(varint(delta, &mut i), base.len(), "delta base size");
    let size = varint(delta, &mut i);
    let mut out = Vec::with_capacity(size);
    while i < delta.len() {
        let op = delta[i];
        i += 1;
        if op & 0x80 != 0 {
            let (mut off, mut len) = (0usize, 0usize);
            for b in 0..4 {
                if op & (1 << b) != 0 {
                    off |= usize::from(delta[i]) << (8 * b);
                    i += 1;
                }
            }
            for b in 0..3 {
                if op & (0x10 << b) != 0 {
                    len |= usize::from(delta[i]) << (8 * b);
                    i += 1;
                }
            }
            if len == 0 {
                len = 0x10000;
            }
            out.extend_from_slice(&base[off..off + len]);
        } else {
            out.extend_from_slice(&delta[i..i + usize::from(op)]);
            i += usize::from(op);
        }
    }
    assert_eq!(out.len(), size, "delta result size");
    out
}

/// The blobs the miner would read: old and new versions of modified `ext` files, newest first.
fn blobs(repo: &Repository, since: i64, ext: &str) -> Vec<Oid> {
    let mut walk = repo.revwalk().expect("revwalk");
    walk.push_head().expect("HEAD");
    walk.simplify_first_parent().expect("first parent");
    let mut out = Vec::new();
    for id in walk {
        let c = repo.find_commit(id.expect("commit id")).expect("commit");
        if c.time().seconds() < since {
            break;
        }
        let Ok(parent) = c.parent(0) else { continue };
        let (Ok(old), Ok(new)) = (parent.tree(), c.tree()) else {
            continue;
        };
        let diff = repo
            .diff_tree_to_tree(Some(&old), Some(&new), None)
            .expect("diff");
        for d in diff.deltas() {
            let path = d
                .new_file()
                .path()
                .map(|p| p.to_string_lossy().into_owned());
            if d.status() == git2::Delta::Modified
                && path.is_some_and(|p| p.ends_with(&format!(".{ext}")))
            {
                out.extend([d.old_file().id(), d.new_file().id()]);
            }
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let repo_path = args
        .first()
        .expect("usage: pack_read_bench REPO [SINCE] [EXT]");
    let since = args.get(1).map_or(1_420_070_400, |s| {
        s.parse().unwrap_or_else(|_| {
            etip_mine_git::dates::parse_date(s, false).expect("SINCE as seconds or YYYY-MM-DD")
        })
    });
    let ext = args.get(2).map_or("py", String::as_str);
    git2::opts::strict_hash_verification(false);
    let repo = Repository::open(repo_path).expect("open the repository");
    let ids = blobs(&repo, since, ext);
    let packs: Vec<Pack> = std::fs::read_dir(repo.path().join("objects/pack"))
        .expect("objects/pack")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "idx"))
        .map(|p| load(&p))
        .collect();
    let located: Vec<(usize, u64)> = ids
        .iter()
        .map(|id| {
            packs
                .iter()
                .enumerate()
                .find_map(|(k, p)| p.find(id.as_bytes()).map(|o| (k, o)))
                .expect("every blob in a pack")
        })
        .collect();

    let mut bytes = 0usize;
    let mut libgit2 = f64::MAX;
    for _ in 0..2 {
        let t = Instant::now();
        bytes = ids
            .iter()
            .map(|id| repo.find_blob(*id).expect("blob").content().len())
            .sum();
        libgit2 = libgit2.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{} blob reads ({:.0} MB) of modified .{ext} files; libgit2 find_blob: {libgit2:.3} s",
        ids.len(),
        bytes as f64 / 1e6
    );
    for (how, name) in [
        (Inflater::Flate2, "flate2"),
        (Inflater::Libdeflate, "libdeflate"),
    ] {
        let mut best = f64::MAX;
        for round in 0..2 {
            let mut readers: Vec<Reader> = packs.iter().map(|p| Reader::new(p, how)).collect();
            let t = Instant::now();
            let got: Vec<Rc<Vec<u8>>> =
                located.iter().map(|&(k, at)| readers[k].read(at)).collect();
            best = best.min(t.elapsed().as_secs_f64());
            if round == 0 {
                for (id, blob) in ids.iter().zip(&got) {
                    let expected = repo.find_blob(*id).expect("blob");
                    assert_eq!(expected.content(), blob.as_slice(), "blob {id}");
                }
            }
        }
        println!(
            "pack reader with {name}: {best:.3} s = {:.2}x libgit2 (every blob equal to libgit2's)",
            best / libgit2
        );
    }
}
