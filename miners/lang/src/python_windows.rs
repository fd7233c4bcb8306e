//! Lexing only the statements around the changes of a modified Python file ([`lex_window`]).

use std::ops::Range;

use crate::bytes::common_ends;
use crate::python_layout::{Kind, Lexer, Tok};
use crate::python_skim::{Start, window_start};
use crate::python_units::FxMap;

/// The tokens of the statements around the changes ([`lex_window`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The windows' byte ranges in the old version, in order (the new version's are at the same
    /// offsets before the first difference, inside shared stretches at the stretch's offset, and
    /// at the same distance from the end after the last difference).
    pub old_ranges: Vec<Range<usize>>,
    /// Where the second and later windows start in the token lists (old, new).
    pub splits: Vec<(u32, u32)>,
    /// Tokens of the old version's windows, one after the other (offsets in the whole source). A
    /// window that starts in the body of a module-level class begins with a [`Kind::Scope`] token
    /// over the class name, standing for the header left out.
    pub old: Vec<Tok>,
    /// Tokens of the new version's windows.
    pub new: Vec<Tok>,
}

/// How long a stretch both versions share between two changes must be for the windows to skip
/// it.
const MIN_GAP: usize = 2048;

/// Stretches of whole lines that both versions share between their first and last difference, as
/// (old start, new start, length) in order: lines that occur once in each version's changed region
/// anchor them (as in a patience diff, greedily in order), extended while the lines are equal;
/// only stretches of at least [`MIN_GAP`] bytes.
fn shared_stretches(old: &[u8], new: &[u8], p: usize, s: usize) -> Vec<(usize, usize, usize)> {
    let from = old[..p]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |k| k + 1);
    let (old_end, new_end) = (old.len() - s, new.len() - s);
    if old_end.min(new_end) < from + 2 * MIN_GAP {
        return Vec::new();
    }
    let lines = |src: &[u8], to: usize| {
        let mut out: Vec<(usize, usize)> = Vec::new();
        let mut i = from;
        while i < to {
            let e = memchr::memchr(b'\n', &src[i..to]).map_or(to, |k| i + k + 1);
            out.push((i, e));
            i = e;
        }
        out
    };
    let (lo, ln) = (lines(old, old_end), lines(new, new_end));
    // Per line text: occurrences in each version and the new version's index.
    let mut seen: FxMap<&[u8], (u32, u32, u32)> =
        FxMap::with_capacity_and_hasher(lo.len(), Default::default());
    for &(a, b) in &lo {
        seen.entry(&old[a..b]).or_insert((0, 0, 0)).0 += 1;
    }
    for (j, &(a, b)) in ln.iter().enumerate() {
        if let Some(e) = seen.get_mut(&new[a..b]) {
            e.1 += 1;
            e.2 = j as u32;
        }
    }
    let same = |i: usize, j: usize| old[lo[i].0..lo[i].1] == new[ln[j].0..ln[j].1];
    let mut out = Vec::new();
    let (mut next_i, mut next_j) = (0usize, 0usize);
    for i in 0..lo.len() {
        if i < next_i {
            continue;
        }
        let Some(&(1, 1, j)) = seen.get(&old[lo[i].0..lo[i].1]) else {
            continue;
        };
        let j = j as usize;
        if j < next_j {
            continue;
        }
        let (mut i0, mut j0) = (i, j);
        while i0 > next_i && j0 > next_j && same(i0 - 1, j0 - 1) {
            i0 -= 1;
            j0 -= 1;
        }
        let (mut i1, mut j1) = (i + 1, j + 1);
        while i1 < lo.len() && j1 < ln.len() && same(i1, j1) {
            i1 += 1;
            j1 += 1;
        }
        let len = lo[i1 - 1].1 - lo[i0].0;
        if len >= MIN_GAP {
            out.push((lo[i0].0, ln[j0].0, len));
        }
        (next_i, next_j) = (i1, j1);
    }
    out
}

/// Whether a stopped lexer may end a window: a window from the file's start holds at least one
/// statement, so that the first statement after it is the module's first (which may be its
/// docstring) in neither version.
fn may_end(lx: &Lexer, from_start: bool) -> bool {
    !(from_start && lx.toks.is_empty())
}

/// Starts a window at `start` (shifted by `shift` bytes): a fresh lexer state there, in the body
/// of a class (a [`Kind::Scope`] token first) when the skim found one.
fn enter(lx: &mut Lexer, start: &Start, shift: isize) {
    let at = |x: usize| (x as isize + shift) as usize;
    if start.line > 0 {
        lx.i = at(start.line);
        lx.last_end = at(start.line);
    }
    lx.stopped = false;
    lx.indents.truncate(1);
    lx.stop_levels = 1;
    if let Some((k, name)) = &start.class {
        lx.toks.push(Tok {
            start: at(name.start) as u32,
            end: at(name.end) as u32,
            kind: Kind::Scope,
            flags: 0,
        });
        lx.indents.push(*k);
        lx.stop_levels = 2;
    }
}

/// Runs both lexers to a line where they stand at the same offset of the stretch of `old[ga..]`
/// and `new[ha..]` of length `len` (the common suffix: `len` up to the ends), in the same state;
/// `Ok(false)` when they leave it (or reach the end) first, `Err` when the lexer refuses.
fn align<'s>(
    a: &mut Lexer<'s>,
    b: &mut Lexer<'s>,
    (ga, ha, len): (usize, usize, usize),
    from_start: bool,
) -> Result<bool, ()> {
    for (lx, g) in [(&mut *a, ga), (&mut *b, ha)] {
        lx.stop_top = g;
        if !lx.stopped || lx.i < g {
            lx.run(|_| false).map_err(|_| ())?;
        }
    }
    loop {
        let done = |lx: &Lexer, g: usize| !lx.stopped || lx.i >= g + len;
        if done(a, ga) || done(b, ha) {
            return Ok(false);
        }
        let (ra, rb) = (a.i - ga, b.i - ha);
        if ra == rb && a.indents == b.indents && may_end(a, from_start) && may_end(b, from_start) {
            return Ok(true);
        }
        let lx = if ra <= rb { &mut *a } else { &mut *b };
        lx.stop_top = lx.i + 1;
        lx.run(|_| false).map_err(|_| ())?;
    }
}

/// Lexes, in both versions of a file, only the statements around the changes. The first window
/// starts at the last module-level statement before the first difference, or at the last statement
/// of a module-level class's body at the body's indentation (found by a skim that reads strings,
/// comments and brackets only); a window ends at a module-level line inside a long stretch both
/// versions share (the next one then starts at the last module-level or class-body line of the
/// stretch the skim finds from there), or at the first line after the last difference, at the
/// module level (or in the class body the window started in), where both lexers stand at the same
/// distance from the end in the same state. Gives the tokens [`crate::python_layout::lex`] gives
/// those statements in each whole file; `None` when a window is refused by the lexer.
///
/// Why the windows hold the whole-file tokens: where a window starts, the lexer of the whole file
/// is at a line with its indentation stack `[0]` (or `[0, body]`), no bracket open and nothing owed
/// (the skim checks what makes a line one), which is the state a lexer started there is in; where a
/// window ends, both lexers are in the same such state at the same place of text both versions
/// share, so what each version's lexer reads from there to the next window (or to the end) is the
/// same text from the same state.
pub fn lex_window<'s>(old: &'s [u8], new: &'s [u8]) -> Option<Window> {
    let (p, s) = common_ends(old, new);
    let first = window_start(old, 0, p);
    let from_start = first.line == 0;
    let mut a = Lexer::new(old)?;
    let mut b = Lexer::new(new)?;
    enter(&mut a, &first, 0);
    enter(&mut b, &first, 0);
    let mut out = Window {
        old_ranges: Vec::new(),
        splits: Vec::new(),
        old: Vec::new(),
        new: Vec::new(),
    };
    let mut window_start_at = first.line;
    for (ga, ha, len) in shared_stretches(old, new, p, s) {
        if a.i >= ga + len || b.i >= ha + len {
            continue;
        }
        // Windows are cut at the module level only.
        let levels = (a.stop_levels, b.stop_levels);
        (a.stop_levels, b.stop_levels) = (1, 1);
        if !align(&mut a, &mut b, (ga, ha, len), from_start).ok()? {
            (a.stop_levels, b.stop_levels) = levels;
            continue;
        }
        let x = a.i;
        let next = window_start(old, x, ga + len);
        if next.line <= x {
            (a.stop_levels, b.stop_levels) = levels;
            continue;
        }
        out.old_ranges.push(window_start_at..x);
        window_start_at = next.line;
        out.splits.push((a.toks.len() as u32, b.toks.len() as u32));
        enter(&mut a, &next, 0);
        enter(&mut b, &next, ha as isize - ga as isize);
    }
    let suffix = (old.len() - s, new.len() - s, s);
    if !align(&mut a, &mut b, suffix, from_start).ok()? {
        // Both at the end.
        for lx in [&mut a, &mut b] {
            lx.stop_top = usize::MAX;
            lx.run(|_| false).ok()?;
        }
    }
    out.old_ranges.push(window_start_at..a.i);
    out.old = a.toks;
    out.new = b.toks;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretches_are_long_shared_runs_between_the_changes() {
        let body: String = (0..600).map(|i| format!("x{i} = {i}\n")).collect();
        let old = format!("import a\n{body}y = 1\n");
        for (new, at) in [
            (format!("import b\n{body}y = 2\n"), 9),
            (format!("import b\nz = 0\n{body}y = 2\n"), 15),
        ] {
            let (p, s) = common_ends(old.as_bytes(), new.as_bytes());
            let got = shared_stretches(old.as_bytes(), new.as_bytes(), p, s);
            assert_eq!(got, vec![(9, at, body.len())]);
        }
        let short = format!("import b\n{}y = 2\n", &body[..1000]);
        let (p, s) = common_ends(old.as_bytes(), short.as_bytes());
        assert!(shared_stretches(old.as_bytes(), short.as_bytes(), p, s).is_empty());
    }
}
