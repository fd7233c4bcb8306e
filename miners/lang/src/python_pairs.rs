//! Lexing two versions of a file together: [`lex_pair`] reuses the old version's tokens for the
//! new one before the first difference and after the last one ([`crate::python_windows`] lexes
//! only the statements around the changes).

use crate::bytes::common_ends;
use crate::python_layout::{Lexer, Tok};

/// The lexer's state at the end of a logical line that is no header (nothing after it was read).
#[derive(Debug, Clone, Default)]
struct Checkpoint {
    i: usize,
    toks: usize,
    last_end: usize,
    after_decorator: bool,
    indents: Vec<u32>,
    match_blocks: Vec<usize>,
}

impl Checkpoint {
    /// Takes the lexer's state (reusing this checkpoint's vectors).
    fn record(&mut self, lx: &Lexer) {
        self.i = lx.i;
        self.toks = lx.toks.len();
        self.last_end = lx.last_end;
        self.after_decorator = lx.after_decorator;
        self.indents.clear();
        self.indents.extend_from_slice(&lx.indents);
        self.match_blocks.clear();
        self.match_blocks.extend_from_slice(&lx.match_blocks);
    }
}

/// The end of a logical line of the old version inside the common suffix: where lexing the new
/// version may stop and take the rest of the old tokens (the stacks in [`Recorded::stacks`]).
struct LineEnd {
    i: usize,
    toks: usize,
    last_end: usize,
    after_decorator: bool,
    indents: std::ops::Range<usize>,
    match_blocks: std::ops::Range<usize>,
}

/// Lexes two versions of a file, as [`crate::python_layout::lex`] would each (`None` when either is refused). The new
/// version's tokens before the first difference are the old version's: its lexing starts at the
/// last logical line end before it, in the state the old version's lexing had there. After the last
/// difference, at the end of a logical line where the new version's lexing is in the state the old
/// version's was at the same place (counted from the end), the remaining tokens are the old
/// version's, shifted: both read the same bytes from the same state.
pub fn lex_pair(old: &[u8], new: &[u8]) -> Option<Lexed> {
    let (p, s) = common_ends(old, new);
    let old_lexed = lex_recording(old, p, old.len() - s)?;
    let old_toks = old_lexed.toks;
    let mut ln = Lexer::new(new)?;
    let resume = old_lexed.checkpoint;
    let shared_prefix = resume.as_ref().map_or(0, |cp| cp.toks);
    if let Some(cp) = resume {
        ln.toks.extend_from_slice(&old_toks[..cp.toks]);
        ln.i = cp.i;
        ln.last_end = cp.last_end;
        ln.after_decorator = cp.after_decorator;
        ln.indents = cp.indents;
        ln.match_blocks = cp.match_blocks;
    }
    let (ends, suffix_new) = (&old_lexed.ends, new.len() - s);
    let delta = new.len() as i64 - old.len() as i64;
    let shift = |x: u32| (i64::from(x) + delta) as u32;
    let mut shared_suffix = 0;
    ln.run(|lx| {
        if lx.i < suffix_new {
            return false;
        }
        let i_old = (lx.i as i64 - delta) as usize;
        let Ok(k) = ends.binary_search_by_key(&i_old, |e| e.i) else {
            return false;
        };
        let e = &ends[k];
        let stacks = &old_lexed.stacks;
        if e.after_decorator != lx.after_decorator
            || e.last_end as i64 + delta != lx.last_end as i64
            || stacks[e.indents.clone()] != lx.indents[..]
            || stacks[e.match_blocks.clone()]
                .iter()
                .map(|&x| x as usize)
                .ne(lx.match_blocks.iter().copied())
        {
            return false;
        }
        lx.toks.extend(old_toks[e.toks..].iter().map(|t| Tok {
            start: shift(t.start),
            end: shift(t.end),
            ..*t
        }));
        shared_suffix = old_toks.len() - e.toks;
        true
    })
    .ok()?;
    Some(Lexed {
        old: old_toks,
        new: ln.toks,
        shared_prefix,
        shared_suffix,
    })
}

/// The old version's tokens, the last checkpoint at or before `prefix` and every one from `suffix`
/// on (where lexing the new version may start and stop).
struct Recorded {
    toks: Vec<Tok>,
    checkpoint: Option<Checkpoint>,
    ends: Vec<LineEnd>,
    /// The indentation and `match` block stacks of the line ends, one after the other.
    stacks: Vec<u32>,
}

/// How many logical line ends after the start of the common suffix are recorded as places where
/// lexing the new version may stop: it stops at the first one where both lexers are in the same
/// state, which is nearly always the first or second (past the last, the new version is lexed to
/// its end: the same tokens, without the copying).
const SYNC_LINES: usize = 64;

fn lex_recording(src: &[u8], prefix: usize, suffix: usize) -> Option<Recorded> {
    let mut lx = Lexer::new(src)?;
    let mut cp = Checkpoint::default();
    let mut resume = false;
    let (mut ends, mut stacks) = (Vec::new(), Vec::new());
    lx.run(|lx| {
        if lx.i <= prefix {
            resume = true;
            cp.record(lx);
        }
        if lx.i >= suffix && ends.len() < SYNC_LINES {
            let start = stacks.len();
            stacks.extend_from_slice(&lx.indents);
            let middle = stacks.len();
            stacks.extend(lx.match_blocks.iter().map(|&d| d as u32));
            ends.push(LineEnd {
                i: lx.i,
                toks: lx.toks.len(),
                last_end: lx.last_end,
                after_decorator: lx.after_decorator,
                indents: start..middle,
                match_blocks: middle..stacks.len(),
            });
        }
        false
    })
    .ok()?;
    Some(Recorded {
        toks: lx.toks,
        checkpoint: resume.then_some(cp),
        ends,
        stacks,
    })
}

/// The tokens of two versions of a file ([`lex_pair`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lexed {
    /// Tokens of the old version.
    pub old: Vec<Tok>,
    /// Tokens of the new version.
    pub new: Vec<Tok>,
    /// How many leading tokens the versions share (same kinds, texts and offsets).
    pub shared_prefix: usize,
    /// How many trailing tokens they share (same kinds and texts, offsets shifted by the
    /// difference of the lengths).
    pub shared_suffix: usize,
}
