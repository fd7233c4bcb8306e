//! libgit2's line diff, ported: the changed rows libgit2 reports for two file versions with its
//! default options (xdiff's Myers algorithm with its cost heuristics, exact line comparison, no
//! indent heuristic, 0 context lines), without handing libgit2 the buffers.
//!
//! Why a port: the miner reads blobs itself ([`crate::pack`]) and libgit2 can only diff buffers
//! through `git_patch_from_buffers`, which first hashes both versions with SHA-1 (collision
//! detecting, slow) to fill in ids the miner already has. That hashing cost more than the pack
//! reader saved. The port follows libgit2's vendored xdiff (`deps/xdiff/xprepare.c`, `xdiffi.c`)
//! step by step, with the same constants, so that its answer is libgit2's answer, not merely a
//! minimal diff: the tests compare it with libgit2 on generated inputs, and
//! `examples/xdiff_check.rs` on every modified file of whole histories.
//!
//! The steps, as in xdiff:
//! 1. **Records and classes.** Each version is split into lines (newline included; the last line
//!    may lack one). Lines with the same bytes share a class; each class counts its lines in each
//!    version.
//! 2. **Trim and discard.** Common leading and trailing lines are set aside. Of the rest, a line
//!    whose class never occurs in the other version is changed outright; a line whose class occurs
//!    very often in the other version (at least √n, at most 1024 times) is changed outright too
//!    when it sits in a run of such lines dominated by unmatched ones (`xdl_clean_mmatch`). The
//!    remaining lines go to the diff.
//! 3. **Divide and conquer** (`xdl_recs_cmp`, `xdl_split`): Myers' middle snake with xdiff's
//!    heuristics (a good snake of 20 lines past cost 256; the furthest reaching path past a cost
//!    of √(n+m)).
//! 4. **Compaction** (`xdl_change_compact`): each group of changed lines slides up as far as it
//!    can, then down as far as it can, merging with the groups it meets, and back up to line up
//!    with a group of the other version if it passed one.
//! 5. **Script**: the changes in order, each the old rows removed and the new rows added.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

const MAX_COST_MIN: isize = 256;
const HEUR_MIN_COST: isize = 256;
const SNAKE_CNT: isize = 20;
const K_HEUR: isize = 4;
const KPDIS_RUN: isize = 4;
const MAX_EQLIMIT: isize = 1024;
const SIMSCAN_WINDOW: isize = 100;
const LINE_MAX: isize = isize::MAX;

/// One change: the old rows it removes and the new rows it adds (0-based, end exclusive), at
/// least one of them non-empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Rows of the old version.
    pub old: Range<usize>,
    /// Rows of the new version.
    pub new: Range<usize>,
}

/// The lines of a text as xdiff splits it: each ends with its newline, except perhaps the last.
pub fn records(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(text.len() / 32 + 1);
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', text) {
        out.push(&text[start..=nl]);
        start = nl + 1;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The changes libgit2 reports between the lines `old` and `new` (see [`records`]), in order.
pub fn diff(old: &[&[u8]], new: &[&[u8]]) -> Vec<Change> {
    let (mut f1, mut f2) = classify(old, new);
    let mut work = Work::new(&f1, &f2);
    trim_and_discard(&mut f1, &mut f2, &work.counts);
    work.compare(&mut f1, &mut f2);
    compact(&mut f1, &f2);
    compact(&mut f2, &f1);
    script(&f1, &f2)
}

/// FxHash over the bytes of a line: the classifier's table needs speed, not resistance to
/// crafted collisions (the equality check stays exact).
#[derive(Default)]
struct LineHasher(u64);

impl Hasher for LineHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            h = (h.rotate_left(5) ^ w).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// One version: its lines' classes, which lines are changed, the trimmed range and the lines left
/// for the diff (`rindex`, with their classes in `rha`).
struct Side {
    ha: Vec<usize>,
    /// Changed flags with a false sentinel on each side: line `i` is at `i + 1`.
    rchg: Vec<bool>,
    nrec: isize,
    dstart: isize,
    dend: isize,
    rindex: Vec<isize>,
    rha: Vec<usize>,
}

impl Side {
    fn new(ha: Vec<usize>) -> Side {
        let n = ha.len();
        Side {
            ha,
            rchg: vec![false; n + 2],
            nrec: n as isize,
            dstart: 0,
            dend: n as isize - 1,
            rindex: Vec::new(),
            rha: Vec::new(),
        }
    }

    fn chg(&self, i: isize) -> bool {
        self.rchg[(i + 1) as usize]
    }

    fn set(&mut self, i: isize, v: bool) {
        self.rchg[(i + 1) as usize] = v;
    }

    fn class(&self, i: isize) -> usize {
        self.ha[i as usize]
    }
}

/// Step 1: classes of both versions' lines, and each class's count in each version.
fn classify<'a>(old: &[&'a [u8]], new: &[&'a [u8]]) -> (Side, Side) {
    let mut classes: HashMap<&'a [u8], usize, BuildHasherDefault<LineHasher>> =
        HashMap::with_capacity_and_hasher(old.len() + new.len(), Default::default());
    let mut class_of = |lines: &[&'a [u8]]| -> Vec<usize> {
        lines
            .iter()
            .map(|&line| {
                let next = classes.len();
                *classes.entry(line).or_insert(next)
            })
            .collect()
    };
    let ha1 = class_of(old);
    let ha2 = class_of(new);
    (Side::new(ha1), Side::new(ha2))
}

/// Scratch state of one diff: each class's line counts and the K vectors of the Myers search.
struct Work {
    /// Lines of each class in the old and the new version.
    counts: Vec<(isize, isize)>,
    kvd: Vec<isize>,
    kvdf: isize,
    kvdb: isize,
    mxcost: isize,
}

fn bogosqrt(mut n: isize) -> isize {
    let mut i = 1;
    while n > 0 {
        i <<= 1;
        n >>= 2;
    }
    i
}

/// Step 2 (`xdl_trim_ends`, `xdl_cleanup_records`).
fn trim_and_discard(f1: &mut Side, f2: &mut Side, counts: &[(isize, isize)]) {
    let lim = f1.nrec.min(f2.nrec);
    let mut i = 0;
    while i < lim && f1.class(i) == f2.class(i) {
        i += 1;
    }
    f1.dstart = i;
    f2.dstart = i;
    let lim = lim - i;
    let mut j = 0;
    while j < lim && f1.class(f1.nrec - 1 - j) == f2.class(f2.nrec - 1 - j) {
        j += 1;
    }
    f1.dend = f1.nrec - j - 1;
    f2.dend = f2.nrec - j - 1;
    let dis1 = discards(f1, |c| counts[c].1);
    let dis2 = discards(f2, |c| counts[c].0);
    keep(f1, &dis1);
    keep(f2, &dis2);
}

/// Each line's standing in the trimmed range: 0 no match in the other version, 1 some, 2 many.
fn discards(f: &Side, other_count: impl Fn(usize) -> isize) -> Vec<u8> {
    let mlim = bogosqrt(f.nrec).min(MAX_EQLIMIT);
    let mut dis = vec![0u8; f.nrec.max(0) as usize + 1];
    for i in f.dstart..=f.dend {
        let nm = other_count(f.class(i));
        dis[i as usize] = if nm == 0 {
            0
        } else if nm >= mlim {
            2
        } else {
            1
        };
    }
    dis
}

fn keep(f: &mut Side, dis: &[u8]) {
    f.rindex.clear();
    f.rha.clear();
    for i in f.dstart..=f.dend {
        let d = dis[i as usize];
        if d == 1 || (d == 2 && !clean_mmatch(dis, i, f.dstart, f.dend)) {
            f.rindex.push(i);
            f.rha.push(f.class(i));
        } else {
            f.set(i, true);
        }
    }
}

/// Whether a line with many matches sits among lines without one (`xdl_clean_mmatch`).
fn clean_mmatch(dis: &[u8], i: isize, s: isize, e: isize) -> bool {
    let s = if i - s > SIMSCAN_WINDOW {
        i - SIMSCAN_WINDOW
    } else {
        s
    };
    let e = if e - i > SIMSCAN_WINDOW {
        i + SIMSCAN_WINDOW
    } else {
        e
    };
    let (mut rdis0, mut rpdis0) = (0, 1);
    let mut r = 1;
    while i - r >= s {
        match dis[(i - r) as usize] {
            0 => rdis0 += 1,
            2 => rpdis0 += 1,
            _ => break,
        }
        r += 1;
    }
    if rdis0 == 0 {
        return false;
    }
    let (mut rdis1, mut rpdis1) = (0, 1);
    r = 1;
    while i + r <= e {
        match dis[(i + r) as usize] {
            0 => rdis1 += 1,
            2 => rpdis1 += 1,
            _ => break,
        }
        r += 1;
    }
    if rdis1 == 0 {
        return false;
    }
    rdis1 += rdis0;
    rpdis1 += rpdis0;
    rpdis1 * KPDIS_RUN < rpdis1 + rdis1
}

/// Where a box is split: the point and whether each half must be diffed minimally.
struct Split {
    i1: isize,
    i2: isize,
    min_lo: bool,
    min_hi: bool,
}

impl Work {
    fn new(f1: &Side, f2: &Side) -> Work {
        let classes = f1.ha.iter().chain(&f2.ha).max().map_or(0, |m| m + 1);
        let mut counts = vec![(0, 0); classes];
        for &c in &f1.ha {
            counts[c].0 += 1;
        }
        for &c in &f2.ha {
            counts[c].1 += 1;
        }
        Work {
            counts,
            kvd: Vec::new(),
            kvdf: 0,
            kvdb: 0,
            mxcost: 0,
        }
    }

    /// Step 3 over the lines left by step 2 (`xdl_do_diff`, `xdl_recs_cmp`), with a stack of boxes
    /// instead of recursion (each box's answer does not depend on the order they are done in).
    fn compare(&mut self, f1: &mut Side, f2: &mut Side) {
        let (n1, n2) = (f1.rha.len() as isize, f2.rha.len() as isize);
        let ndiags = n1 + n2 + 3;
        self.kvd = vec![0; (2 * ndiags + 2) as usize];
        self.kvdf = n2 + 1;
        self.kvdb = ndiags + n2 + 1;
        self.mxcost = bogosqrt(ndiags).max(MAX_COST_MIN);
        let mut boxes = vec![(0, n1, 0, n2, false)];
        while let Some((mut off1, mut lim1, mut off2, mut lim2, need_min)) = boxes.pop() {
            let (ha1, ha2) = (&f1.rha, &f2.rha);
            while off1 < lim1 && off2 < lim2 && ha1[off1 as usize] == ha2[off2 as usize] {
                off1 += 1;
                off2 += 1;
            }
            while off1 < lim1 && off2 < lim2 && ha1[lim1 as usize - 1] == ha2[lim2 as usize - 1] {
                lim1 -= 1;
                lim2 -= 1;
            }
            if off1 == lim1 {
                for k in off2..lim2 {
                    let i = f2.rindex[k as usize];
                    f2.set(i, true);
                }
            } else if off2 == lim2 {
                for k in off1..lim1 {
                    let i = f1.rindex[k as usize];
                    f1.set(i, true);
                }
            } else {
                let spl = self.split(ha1, off1, lim1, ha2, off2, lim2, need_min);
                boxes.push((spl.i1, lim1, spl.i2, lim2, spl.min_hi));
                boxes.push((off1, spl.i1, off2, spl.i2, spl.min_lo));
            }
        }
    }

    fn f(&self, d: isize) -> isize {
        self.kvd[(self.kvdf + d) as usize]
    }

    fn set_f(&mut self, d: isize, v: isize) {
        self.kvd[(self.kvdf + d) as usize] = v;
    }

    fn b(&self, d: isize) -> isize {
        self.kvd[(self.kvdb + d) as usize]
    }

    fn set_b(&mut self, d: isize, v: isize) {
        self.kvd[(self.kvdb + d) as usize] = v;
    }

    /// `xdl_split`: the middle snake of a box, or a heuristic split point when the search is
    /// costly.
    #[allow(clippy::too_many_arguments)]
    fn split(
        &mut self,
        ha1: &[usize],
        off1: isize,
        lim1: isize,
        ha2: &[usize],
        off2: isize,
        lim2: isize,
        need_min: bool,
    ) -> Split {
        let (dmin, dmax) = (off1 - lim2, lim1 - off2);
        let (fmid, bmid) = (off1 - off2, lim1 - lim2);
        let odd = (fmid - bmid) & 1 != 0;
        let (mut fmin, mut fmax, mut bmin, mut bmax) = (fmid, fmid, bmid, bmid);
        let h1 = |i: isize| ha1[i as usize];
        let h2 = |i: isize| ha2[i as usize];
        self.set_f(fmid, off1);
        self.set_b(bmid, lim1);
        let mut ec: isize = 1;
        loop {
            let mut got_snake = false;
            if fmin > dmin {
                fmin -= 1;
                self.set_f(fmin - 1, -1);
            } else {
                fmin += 1;
            }
            if fmax < dmax {
                fmax += 1;
                self.set_f(fmax + 1, -1);
            } else {
                fmax -= 1;
            }
            let mut d = fmax;
            while d >= fmin {
                let mut i1 = if self.f(d - 1) >= self.f(d + 1) {
                    self.f(d - 1) + 1
                } else {
                    self.f(d + 1)
                };
                let prev1 = i1;
                let mut i2 = i1 - d;
                while i1 < lim1 && i2 < lim2 && h1(i1) == h2(i2) {
                    i1 += 1;
                    i2 += 1;
                }
                if i1 - prev1 > SNAKE_CNT {
                    got_snake = true;
                }
                self.set_f(d, i1);
                if odd && bmin <= d && d <= bmax && self.b(d) <= i1 {
                    return Split {
                        i1,
                        i2,
                        min_lo: true,
                        min_hi: true,
                    };
                }
                d -= 2;
            }
            if bmin > dmin {
                bmin -= 1;
                self.set_b(bmin - 1, LINE_MAX);
            } else {
                bmin += 1;
            }
            if bmax < dmax {
                bmax += 1;
                self.set_b(bmax + 1, LINE_MAX);
            } else {
                bmax -= 1;
            }
            let mut d = bmax;
            while d >= bmin {
                let mut i1 = if self.b(d - 1) < self.b(d + 1) {
                    self.b(d - 1)
                } else {
                    self.b(d + 1) - 1
                };
                let prev1 = i1;
                let mut i2 = i1 - d;
                while i1 > off1 && i2 > off2 && h1(i1 - 1) == h2(i2 - 1) {
                    i1 -= 1;
                    i2 -= 1;
                }
                if prev1 - i1 > SNAKE_CNT {
                    got_snake = true;
                }
                self.set_b(d, i1);
                if !odd && fmin <= d && d <= fmax && i1 <= self.f(d) {
                    return Split {
                        i1,
                        i2,
                        min_lo: true,
                        min_hi: true,
                    };
                }
                d -= 2;
            }
            if need_min {
                ec += 1;
                continue;
            }
            if got_snake && ec > HEUR_MIN_COST {
                let mut best = 0;
                let mut spl = Split {
                    i1: 0,
                    i2: 0,
                    min_lo: true,
                    min_hi: false,
                };
                let mut d = fmax;
                while d >= fmin {
                    let dd = if d > fmid { d - fmid } else { fmid - d };
                    let i1 = self.f(d);
                    let i2 = i1 - d;
                    let v = (i1 - off1) + (i2 - off2) - dd;
                    if v > K_HEUR * ec
                        && v > best
                        && off1 + SNAKE_CNT <= i1
                        && i1 < lim1
                        && off2 + SNAKE_CNT <= i2
                        && i2 < lim2
                    {
                        let mut k = 1;
                        while h1(i1 - k) == h2(i2 - k) {
                            if k == SNAKE_CNT {
                                best = v;
                                spl.i1 = i1;
                                spl.i2 = i2;
                                break;
                            }
                            k += 1;
                        }
                    }
                    d -= 2;
                }
                if best > 0 {
                    return spl;
                }
                let mut spl = Split {
                    i1: 0,
                    i2: 0,
                    min_lo: false,
                    min_hi: true,
                };
                let mut d = bmax;
                while d >= bmin {
                    let dd = if d > bmid { d - bmid } else { bmid - d };
                    let i1 = self.b(d);
                    let i2 = i1 - d;
                    let v = (lim1 - i1) + (lim2 - i2) - dd;
                    if v > K_HEUR * ec
                        && v > best
                        && off1 < i1
                        && i1 <= lim1 - SNAKE_CNT
                        && off2 < i2
                        && i2 <= lim2 - SNAKE_CNT
                    {
                        let mut k = 0;
                        while h1(i1 + k) == h2(i2 + k) {
                            if k == SNAKE_CNT - 1 {
                                best = v;
                                spl.i1 = i1;
                                spl.i2 = i2;
                                break;
                            }
                            k += 1;
                        }
                    }
                    d -= 2;
                }
                if best > 0 {
                    return spl;
                }
            }
            if ec >= self.mxcost {
                return self.furthest(off1, lim1, off2, lim2, (fmin, fmax, bmin, bmax));
            }
            ec += 1;
        }
    }

    /// "Enough is enough": the furthest reaching path of either search, by `i1 + i2`.
    fn furthest(
        &self,
        off1: isize,
        lim1: isize,
        off2: isize,
        lim2: isize,
        (fmin, fmax, bmin, bmax): (isize, isize, isize, isize),
    ) -> Split {
        let (mut fbest, mut fbest1) = (-1, -1);
        let mut d = fmax;
        while d >= fmin {
            let mut i1 = self.f(d).min(lim1);
            let mut i2 = i1 - d;
            if lim2 < i2 {
                i1 = lim2 + d;
                i2 = lim2;
            }
            if fbest < i1 + i2 {
                fbest = i1 + i2;
                fbest1 = i1;
            }
            d -= 2;
        }
        let (mut bbest, mut bbest1) = (LINE_MAX, LINE_MAX);
        let mut d = bmax;
        while d >= bmin {
            let mut i1 = off1.max(self.b(d));
            let mut i2 = i1 - d;
            if i2 < off2 {
                i1 = off2 + d;
                i2 = off2;
            }
            if i1 + i2 < bbest {
                bbest = i1 + i2;
                bbest1 = i1;
            }
            d -= 2;
        }
        if (lim1 + lim2) - bbest < fbest - (off1 + off2) {
            Split {
                i1: fbest1,
                i2: fbest - fbest1,
                min_lo: true,
                min_hi: false,
            }
        } else {
            Split {
                i1: bbest1,
                i2: bbest - bbest1,
                min_lo: false,
                min_hi: true,
            }
        }
    }
}

/// A group of changed lines: `start..end` (empty: the position above line `start`).
#[derive(Clone, Copy)]
struct Group {
    start: isize,
    end: isize,
}

impl Group {
    fn first(f: &Side) -> Group {
        let mut g = Group { start: 0, end: 0 };
        while f.chg(g.end) {
            g.end += 1;
        }
        g
    }

    fn next(&mut self, f: &Side) -> bool {
        if self.end == f.nrec {
            return false;
        }
        self.start = self.end + 1;
        self.end = self.start;
        while f.chg(self.end) {
            self.end += 1;
        }
        true
    }

    fn previous(&mut self, f: &Side) -> bool {
        if self.start == 0 {
            return false;
        }
        self.end = self.start - 1;
        self.start = self.end;
        while f.chg(self.start - 1) {
            self.start -= 1;
        }
        true
    }

    fn slide_down(&mut self, f: &mut Side) -> bool {
        if self.end < f.nrec && f.class(self.start) == f.class(self.end) {
            f.set(self.start, false);
            f.set(self.end, true);
            self.start += 1;
            self.end += 1;
            while f.chg(self.end) {
                self.end += 1;
            }
            true
        } else {
            false
        }
    }

    fn slide_up(&mut self, f: &mut Side) -> bool {
        if self.start > 0 && f.class(self.start - 1) == f.class(self.end - 1) {
            self.start -= 1;
            self.end -= 1;
            f.set(self.start, true);
            f.set(self.end, false);
            while f.chg(self.start - 1) {
                self.start -= 1;
            }
            true
        } else {
            false
        }
    }
}

/// Step 4 (`xdl_change_compact` without the indent heuristic). The other version's groups move
/// in step; xdiff's consistency checks (`XDL_BUG`) hold by construction and are not repeated.
fn compact(f: &mut Side, other: &Side) {
    let mut g = Group::first(f);
    let mut go = Group::first(other);
    loop {
        if g.end != g.start {
            let mut earliest_end;
            let mut end_matching_other;
            loop {
                let size = g.end - g.start;
                end_matching_other = -1;
                while g.slide_up(f) {
                    go.previous(other);
                }
                earliest_end = g.end;
                if go.end > go.start {
                    end_matching_other = g.end;
                }
                while g.slide_down(f) {
                    go.next(other);
                    if go.end > go.start {
                        end_matching_other = g.end;
                    }
                }
                if size == g.end - g.start {
                    break;
                }
            }
            if g.end != earliest_end && end_matching_other != -1 {
                while go.end == go.start {
                    g.slide_up(f);
                    go.previous(other);
                }
            }
        }
        if !g.next(f) {
            break;
        }
        go.next(other);
    }
}

/// Step 5 (`xdl_build_script`): the changes in order.
fn script(f1: &Side, f2: &Side) -> Vec<Change> {
    let mut out = Vec::new();
    let (mut i1, mut i2) = (f1.nrec, f2.nrec);
    while i1 >= 0 || i2 >= 0 {
        let c1 = i1 >= 0 && f1.chg(i1 - 1);
        let c2 = i2 >= 0 && f2.chg(i2 - 1);
        if c1 || c2 {
            let (l1, l2) = (i1, i2);
            while i1 >= 0 && f1.chg(i1 - 1) {
                i1 -= 1;
            }
            while i2 >= 0 && f2.chg(i2 - 1) {
                i2 -= 1;
            }
            out.push(Change {
                old: i1 as usize..l1 as usize,
                new: i2 as usize..l2 as usize,
            });
        }
        i1 -= 1;
        i2 -= 1;
    }
    out.reverse();
    out
}
