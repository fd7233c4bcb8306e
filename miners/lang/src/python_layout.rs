//! A Python lexer that makes the token and layout decisions tree-sitter-python makes, for deciding
//! most changes without parsing whole files (see [`crate::python_window`]).
//!
//! [`lex`] turns a source into the tokens tree-sitter's leaves are made of (names, numbers, whole
//! string literals, operators, `line_continuation` leaves: see [`crate::python_tokens`]) plus the
//! layout tokens of its external scanner: `Newline` at the end of a logical line, `Indent` after a
//! header's `:`, `Dedent` where a block ends. A suite on its header's line (`if a: x`) gets an
//! `Indent` and a `Dedent` too: tree-sitter gives it the same `block` node as the indented form.
//!
//! The scanner's rules are followed where they decide the tree or a node's rows. Indentation counts
//! a space as 1 and a tab as 8, a form feed or a carriage return resets it; a line indented more
//! than its block (not after a header), or dedented to a level between two open ones, gets no
//! `Indent` and belongs to the current block (Python would reject it; tree-sitter does not). A `Dedent` needs both
//! the next code line and the first comment before it to be indented less than the block: so a
//! block that the next code line closes ends before the first comment indented less than it, and
//! the comments before that one belong to it (and to the span of the definition that ends there),
//! while comments between the statements of a block never close it. A backslash-newline followed
//! by a string is padding of the string's start; any other is a leaf, and one that ends a
//! statement is a child of the block after it (after a blank line, of the block the next line is
//! in). After `from`, dots are single tokens even when
//! three are adjacent.
//!
//! [`lex_pair`] lexes two versions of a file and reuses the old version's tokens for the new one
//! before the first difference and after the last one, and [`lex_window`] lexes only the
//! module-level statements around the change.
//!
//! Whatever the lexer does not fully reproduce makes it refuse (`None`), and callers then parse the
//! whole file: unterminated strings or brackets, an empty block (tree-sitter makes a leaf of it), a comment less indented than the block
//! between a decorator and its definition, a bracketed line less indented than the block where no
//! closing bracket may follow (the scanner would close the block there), a backslash at a logical
//! line's start, before a blank line where a block starts, or where blocks end after comments, or
//! before another backslash, NUL bytes, lone
//! carriage returns, non-ASCII characters outside strings and comments other than letters and
//! digits in identifiers, backticks, `$`, `?`, a lone `!`, a logical line starting with an operator
//! other than a bracket, `-`, `+`, `~`, `*`, `...` or `@` (merge-conflict markers), `;` in
//! brackets, in a decorator or in a header, `async` other than before `def`, `for` or `with`,
//! `lambda` in a compound statement's header, a compound statement in a one-line suite, lines
//! ending with `:` that open no known statement, `match` and `case` used as keywords elsewhere
//! than in a `match` statement's header and clauses, the token pairs that
//! [`crate::python_tokens`] takes for syntax errors, and string literals it does not end exactly.

use memchr::memchr;

pub use crate::python_pairs::{Lexed, lex_pair};
use crate::python_tokens::{
    CLASS, F_AT, F_CLOSE, F_COLON, F_COMPOUND, F_NEEDS, F_OPEN, F_SEMI, F_STARTS, F_UNARY,
    NAME_START, at, ends_operand, is_keyword, name_end, number_end, op, pair_ok, starts_operand,
    starts_string, string_end, unicode_name_end, word_flags,
};
pub use crate::python_tokens::{Kind, Tok};
pub use crate::python_windows::{Window, lex_window};

/// Tokenises `src` as tree-sitter-python does (see the module docs); `None` when the source is
/// outside what the lexer reproduces exactly.
pub fn lex(src: &[u8]) -> Option<Vec<Tok>> {
    lex_or_offset(src).ok()
}

/// Like [`lex`], with the byte offset where the lexer gave up on refusal (for diagnostics).
pub fn lex_or_offset(src: &[u8]) -> Result<Vec<Tok>, usize> {
    let mut lx = Lexer::new(src).ok_or(0usize)?;
    lx.run(|_| false)?;
    Ok(lx.toks)
}

/// State of the logical line being lexed.
#[derive(Default)]
struct Line {
    /// Real tokens so far.
    count: usize,
    /// The first token opens a compound statement (`if`, `def`, ...).
    compound: bool,
    /// The first token is `async`: the second decides.
    pending_async: bool,
    /// The header's `:` has been seen.
    colon: bool,
    /// Tokens follow the header's `:` on the same line (a virtual `Indent` was pushed).
    same_line: bool,
    /// The current simple statement starts with `from` (dots are single tokens).
    from: bool,
    /// The next real token starts a simple statement.
    at_stmt_start: bool,
    /// The last real token is `:`.
    ends_with_colon: bool,
    /// The first token is `@`.
    decorator: bool,
    /// The last real token, and whether it started a simple statement.
    prev: Option<Tok>,
    prev_starts_stmt: bool,
    /// `not` after an operand: `in` must follow.
    need_in: bool,
    /// The first token is `match` or `case` and an operand follows: a soft keyword, so the line
    /// must be a `match` header or a `case` clause.
    soft_keyword: bool,
    /// Index of the line's first token.
    first: usize,
}

pub(crate) struct Lexer<'s> {
    src: &'s [u8],
    pub(crate) i: usize,
    pub(crate) toks: Vec<Tok>,
    /// The scanner's indentation stack.
    pub(crate) indents: Vec<u32>,
    depth: u32,
    /// End of the last token or comment that belongs to the current block: where a `Dedent` goes.
    pub(crate) last_end: usize,
    line: Line,
    /// The last logical line was a decorator.
    pub(crate) after_decorator: bool,
    /// Depths of the indentation stack whose top block is a `match` statement's (its lines are
    /// `case` clauses).
    pub(crate) match_blocks: Vec<usize>,
    /// A line continuation that comes after the `Dedent`s at the next code line.
    pub(crate) pending_cont: Option<(usize, usize)>,
    /// [`Lexer::run`] stops at the first line at or after this offset at the level `stop_levels`
    /// allows, before lexing it, when the previous logical line is no decorator.
    pub(crate) stop_top: usize,
    /// How deep the indentation stack may be where [`Lexer::run`] stops: 1 (the module's block), or
    /// 2 (also the body of the class a window starts in, until the module level is reached).
    pub(crate) stop_levels: usize,
    /// [`Lexer::run`] stopped at a line's code, its start already read.
    pub(crate) stopped: bool,
}

impl<'s> Lexer<'s> {
    /// A lexer at the start of `src`; `None` for sources with NUL bytes or over 4 GiB.
    pub(crate) fn new(src: &'s [u8]) -> Option<Self> {
        if src.len() >= u32::MAX as usize || memchr(0, src).is_some() {
            return None;
        }
        Some(Lexer {
            src,
            i: if src.starts_with(b"\xef\xbb\xbf") {
                3
            } else {
                0
            },
            toks: Vec::with_capacity(src.len() / 4),
            indents: vec![0],
            depth: 0,
            last_end: 0,
            line: Line::default(),
            after_decorator: false,
            match_blocks: Vec::new(),
            pending_cont: None,
            stop_top: usize::MAX,
            stop_levels: 1,
            stopped: false,
        })
    }

    /// Lexes logical lines to the end of the source, or until `at_line_end` (called after each
    /// logical line that opens no block) says to stop; the offset where it gave up on refusal.
    pub(crate) fn run(
        &mut self,
        mut at_line_end: impl FnMut(&mut Self) -> bool,
    ) -> Result<(), usize> {
        // Lexing stopped at a line's code resumes there, without reading its indentation again.
        let mut resume = std::mem::take(&mut self.stopped);
        loop {
            if !resume {
                let decorated = self.after_decorator;
                match self.line_start() {
                    Some(true) => {}
                    Some(false) => return Ok(()),
                    None => return Err(self.i),
                }
                if self.indents.len() == 1 {
                    self.stop_levels = 1;
                }
                if self.i >= self.stop_top
                    && self.indents.len() <= self.stop_levels
                    && self.match_blocks.is_empty()
                    && !decorated
                {
                    self.stopped = true;
                    return Ok(());
                }
            }
            resume = false;
            if self.logical_line().is_none() {
                return Err(self.i);
            }
            // After a header, the lexer looked ahead; a pending continuation is state too.
            let header = self.line.compound && !self.line.same_line;
            if !header && self.pending_cont.is_none() && at_line_end(self) {
                return Ok(());
            }
        }
    }

    fn top(&self) -> u32 {
        *self.indents.last().unwrap_or(&0)
    }

    fn push_layout(&mut self, kind: Kind) {
        let at = self.last_end as u32;
        self.toks.push(Tok {
            start: at,
            end: at,
            kind,
            flags: 0,
        });
    }

    /// The scanner's indentation of the line starting at `i`, and where its content starts.
    fn indentation(&self, mut i: usize) -> Option<(u32, usize)> {
        let start = i;
        while at(self.src, i) == b' ' {
            i += 1;
        }
        let mut indent = (i - start) as u32;
        loop {
            match at(self.src, i) {
                b' ' => indent += 1,
                b'\t' => indent += 8,
                0x0c => indent = 0,
                b'\r' if at(self.src, i + 1) == b'\n' => return Some((0, i + 1)),
                b'\r' => return None,
                _ => return Some((indent, i)),
            }
            i += 1;
        }
    }

    fn dedent_to(&mut self, indent: u32) {
        while indent < self.top() {
            self.dedent();
        }
    }

    fn dedent(&mut self) {
        self.push_layout(Kind::Dedent);
        self.indents.pop();
        if self.match_blocks.last() == Some(&(self.indents.len() + 1)) {
            self.match_blocks.pop();
        }
    }

    /// Whether the current block is a `match` statement's.
    fn in_match(&self) -> bool {
        self.match_blocks.last() == Some(&self.indents.len())
    }

    /// Skips blank and comment lines up to the next logical line, closing the blocks that line's
    /// indentation closes; `false` at the end of the file. The scanner closes a block before the
    /// first comment indented less than the block when the next code line is too (a `Dedent` needs
    /// both), so the comments before that one belong to the block.
    fn line_start(&mut self) -> Option<bool> {
        let (indent, code, comments) = self.next_code(self.i)?;
        while comments && let Some(j) = self.next_comment(code) {
            let (c, hash) = self.indentation(j)?;
            // After a decorator no `Dedent` is expected, and the scanner sees a comment's own
            // indentation: a less indented one closes the block there, an error.
            if self.after_decorator && c < self.top() {
                return None;
            }
            while indent < self.top() && c < self.top() {
                self.dedent();
            }
            let e = memchr(b'\n', &self.src[hash..]).map_or(self.src.len(), |k| hash + k);
            self.last_end = e;
            self.i = (e + 1).min(self.src.len());
        }
        self.after_decorator = false;
        self.dedent_to(indent);
        let Some(code) = code else {
            self.i = self.src.len();
            return Some(false);
        };
        // A line indented more than the block (not after a header), or to a level between two
        // open ones, gets no `Indent`: tree-sitter reads it as a statement of the current block.
        if let Some((s, e)) = self.pending_cont.take() {
            self.push_cont(s, e);
        }
        self.i = code;
        Some(true)
    }

    /// The start of the next comment line from `self.i`, if it comes before `code` (skipping blank
    /// lines).
    fn next_comment(&mut self, code: Option<usize>) -> Option<usize> {
        loop {
            if code.is_some_and(|c| self.i >= c) || self.i >= self.src.len() {
                return None;
            }
            let (_, j) = self.indentation(self.i)?;
            match self.src.get(j) {
                Some(b'\n') => self.i = j + 1,
                Some(b'#') => return Some(self.i),
                _ => return None,
            }
        }
    }

    /// The indentation and start of the next line with code from `i` (0 and `None` at the end of
    /// the file), and whether comment lines come before it.
    fn next_code(&self, mut i: usize) -> Option<(u32, Option<usize>, bool)> {
        let mut comments = false;
        loop {
            let (indent, j) = self.indentation(i)?;
            match self.src.get(j) {
                None => return Some((0, None, comments)),
                Some(b'\n') => i = j + 1,
                Some(b'#') => {
                    comments = true;
                    i = memchr(b'\n', &self.src[j..]).map_or(self.src.len(), |k| j + k + 1);
                }
                Some(b'\\') => return None,
                Some(_) => return Some((indent, Some(j), comments)),
            }
        }
    }

    /// Lexes one logical line and ends it.
    fn logical_line(&mut self) -> Option<()> {
        self.line = Line {
            at_stmt_start: true,
            ..Line::default()
        };
        while let Some(&c) = self.src.get(self.i) {
            match c {
                b' ' | b'\t' | 0x0c => self.i += 1,
                b'\r' if at(self.src, self.i + 1) == b'\n' => self.i += 1,
                b'\n' if self.depth > 0 => {
                    self.i += 1;
                    self.bracketed_line()?;
                }
                b'\n' => {
                    self.i += 1;
                    break;
                }
                b'#' => {
                    let e =
                        memchr(b'\n', &self.src[self.i..]).map_or(self.src.len(), |k| self.i + k);
                    self.last_end = e;
                    self.i = e;
                }
                b'\\' => self.continuation()?,
                _ => self.token()?,
            }
        }
        if self.depth > 0 {
            return None;
        }
        self.end_line()
    }

    /// A new physical line inside brackets. The scanner closes a block there when the line is
    /// indented less than the block and no closing bracket could come next: refused.
    fn bracketed_line(&mut self) -> Option<()> {
        loop {
            let (indent, j) = self.indentation(self.i)?;
            match self.src.get(j) {
                None => return None,
                Some(b'\n') => self.i = j + 1,
                Some(&c) => {
                    if indent < self.top() && !self.closer_may_follow(c) {
                        return None;
                    }
                    self.i = j;
                    return Some(());
                }
            }
        }
    }

    /// Whether, after the last token, tree-sitter sees a closing bracket as possible (or a string
    /// as possible and the line starts with a quote): then a less indented line closes no block.
    fn closer_may_follow(&self, first: u8) -> bool {
        let ends_value = |t: Option<&Tok>| {
            t.is_some_and(|t| {
                let text = t.text(self.src);
                match t.kind {
                    Kind::Str | Kind::Number => true,
                    Kind::Op => matches!(text, b")" | b"]" | b"}"),
                    Kind::Name => !is_keyword(text) || matches!(text, b"True" | b"False" | b"None"),
                    _ => false,
                }
            })
        };
        let n = self.toks.len();
        let Some(last) = self.toks.last() else {
            return false;
        };
        let quote = matches!(first, b'"' | b'\'' | b'`');
        match (last.kind, last.text(self.src)) {
            // An empty call, tuple, list, dict or set may close; an empty subscript may not.
            (Kind::Op, b"(" | b"{" | b",") => true,
            (Kind::Op, b"[") => {
                quote || !ends_value(n.checked_sub(2).and_then(|k| self.toks.get(k)))
            }
            _ => quote || ends_value(Some(last)),
        }
    }

    /// A backslash outside strings: a line continuation. The scanner skips it (it becomes the
    /// padding of a string's start) when a string follows, else tree-sitter keeps it as a
    /// `line_continuation` leaf. Followed by a blank line outside brackets, it comes after the
    /// `Newline`, and after the `Dedent`s when the next code line closes blocks (refused when
    /// comments come before that line: they decide where the `Dedent`s go).
    fn continuation(&mut self) -> Option<()> {
        let s = self.i;
        let mut e = s + 1;
        if at(self.src, e) == b'\r' {
            e += 1;
        }
        if at(self.src, e) != b'\n' || self.line.count == 0 {
            return None;
        }
        e += 1;
        let mut j = e;
        while matches!(at(self.src, j), b' ' | b'\t' | 0x0c) {
            j += 1;
        }
        let blank = at(self.src, j) == b'\n' || self.src[j..].starts_with(b"\r\n");
        match at(self.src, j) {
            _ if blank && self.depth > 0 => self.push_cont(s, e),
            // After the `Newline`, between this statement and the next one when no block ends
            // there (the `Dedent`s would come first) and no block starts.
            _ if blank && !self.line.compound => {
                let (indent, code, comments) = self.next_code(j)?;
                if code.is_none() || (indent < self.top() && comments) {
                    return None;
                }
                if indent < self.top() {
                    // After the `Dedent`s: a child of the block the next line is in.
                    self.pending_cont = Some((s, e));
                } else {
                    self.push_cont(s, e);
                }
            }
            0 | b'\n' | b'\r' | b'\\' => return None,
            _ if starts_string(self.src, j) => {}
            _ => self.push_cont(s, e),
        }
        self.i = j;
        Some(())
    }

    fn push_cont(&mut self, s: usize, e: usize) {
        self.toks.push(Tok {
            start: s as u32,
            end: e as u32,
            kind: Kind::Cont,
            flags: 0,
        });
    }

    /// Lexes the token at `self.i`.
    fn token(&mut self) -> Option<()> {
        let (src, s) = (self.src, self.i);
        let c = src[s];
        let (kind, e, flags) = if CLASS[c as usize] & NAME_START != 0 {
            if starts_string(src, s) {
                (Kind::Str, string_end(src, s, 0)?, 0)
            } else {
                let mut e = name_end(src, s);
                if at(src, e) >= 0x80 {
                    e = unicode_name_end(src, e)?;
                }
                (Kind::Name, e, word_flags(&src[s..e]))
            }
        } else if c >= 0x80 {
            (Kind::Name, unicode_name_end(src, s)?, 0)
        } else if matches!(c, b'"' | b'\'' | b'`') {
            (Kind::Str, string_end(src, s, 0)?, 0)
        } else if c.is_ascii_digit() || (c == b'.' && at(src, s + 1).is_ascii_digit()) {
            (Kind::Number, number_end(src, s), 0)
        } else {
            let (len, flags) = op(src, s, self.line.from)?;
            (Kind::Op, s + len, flags)
        };
        self.i = e;
        self.push_real(Tok {
            start: s as u32,
            end: e as u32,
            kind,
            flags,
        })
    }

    /// Records a real token, with the layout decisions it implies.
    fn push_real(&mut self, tok: Tok) -> Option<()> {
        let (kind, flags) = (tok.kind, tok.flags);
        let text = tok.text(self.src);
        if self.line.colon && !self.line.same_line {
            // A suite on the header's line: the same `block` as an indented one.
            if flags & F_COMPOUND != 0 || (kind == Kind::Name && text == b"async") {
                return None;
            }
            self.line.same_line = true;
            self.line.at_stmt_start = true;
            self.push_layout(Kind::Indent);
        }
        self.line_start_token(&tok)?;
        let line = &mut self.line;
        let starts_stmt = line.at_stmt_start;
        if starts_stmt {
            line.from = text == b"from";
            line.at_stmt_start = false;
        }
        if let Some(prev) = &line.prev {
            if (line.need_in && text != b"in")
                || !pair_ok(self.src, prev, &tok, line.prev_starts_stmt, line.from)
            {
                return None;
            }
            line.need_in = kind == Kind::Name && text == b"not" && ends_operand(prev);
            line.soft_keyword |= line.count == 1
                && matches!(prev.text(self.src), b"match" | b"case")
                && ends_operand(prev)
                && starts_operand(&tok, prev.kind);
        }
        line.prev = Some(tok);
        line.prev_starts_stmt = starts_stmt;
        self.brackets_and_separators(&tok)?;
        self.line.count += 1;
        self.line.ends_with_colon = flags & F_COLON != 0;
        self.toks.push(tok);
        self.last_end = tok.end as usize;
        Some(())
    }

    /// What the first tokens of a logical line tell: a decorator, a compound statement (`async`
    /// decided by the next token; in a `match` block, `case` clauses only), or a statement that
    /// cannot start with this operator (merge-conflict markers).
    fn line_start_token(&mut self, tok: &Tok) -> Option<()> {
        let (kind, flags, text) = (tok.kind, tok.flags, tok.text(self.src));
        let in_match = self.in_match();
        let line = &mut self.line;
        if line.count == 0 {
            // A name, a literal, a bracket, a unary operator, `*`, `...` or a decorator's `@`.
            if kind == Kind::Op
                && flags & (F_OPEN | F_UNARY | F_AT) == 0
                && !matches!(text, b"*" | b"...")
            {
                return None;
            }
            line.decorator = flags & F_AT != 0;
            line.compound = flags & F_COMPOUND != 0;
            line.pending_async = kind == Kind::Name && text == b"async";
            line.first = self.toks.len();
            if in_match {
                if text != b"case" {
                    return None;
                }
                line.compound = true;
            }
        } else if line.pending_async {
            if !matches!(text, b"def" | b"for" | b"with") {
                return None;
            }
            line.pending_async = false;
            line.compound = true;
        } else if kind == Kind::Name && text == b"async" {
            return None;
        }
        Some(())
    }

    /// Bracket depth, a header's `:`, and `;` (which separates simple statements only: not in
    /// decorators, headers or brackets); `lambda` in a header before its `:` is refused.
    fn brackets_and_separators(&mut self, tok: &Tok) -> Option<()> {
        let (flags, line) = (tok.flags, &mut self.line);
        if flags & F_OPEN != 0 {
            self.depth += 1;
        } else if flags & F_CLOSE != 0 {
            self.depth = self.depth.checked_sub(1)?;
        } else if flags & F_COLON != 0 && self.depth == 0 && line.compound && !line.colon {
            line.colon = true;
        } else if flags & F_SEMI != 0 {
            if line.decorator || (line.compound && !line.colon) || self.depth > 0 {
                return None;
            }
            line.at_stmt_start = true;
        } else if flags & F_STARTS != 0
            && tok.text(self.src) == b"lambda"
            && self.depth == 0
            && line.compound
            && !line.colon
        {
            return None;
        }
        Some(())
    }

    /// Ends a logical line: `Newline` (and the `Dedent` of a one-line suite), or the `Indent` of the
    /// block a header opens.
    fn end_line(&mut self) -> Option<()> {
        let line = &self.line;
        if line.count == 0 || line.pending_async || line.need_in {
            return None;
        }
        if line.prev.is_some_and(|t| t.flags & F_NEEDS != 0) {
            return None;
        }
        let first = line.first;
        if !line.compound {
            if line.ends_with_colon && self.toks[first].text(self.src) == b"match" {
                // A `match` statement: its block holds `case` clauses.
                self.toks[first].flags |= F_COMPOUND;
                self.line.compound = true;
                self.open_block()?;
                self.match_blocks.push(self.indents.len());
                return Some(());
            }
            // A line ending with `:` that opens no known statement, a soft keyword used as one.
            if line.ends_with_colon || line.soft_keyword {
                return None;
            }
            self.after_decorator = line.decorator;
            self.push_layout(Kind::Newline);
            return Some(());
        }
        if self.toks[first].text(self.src) == b"case" {
            self.toks[first].flags |= F_COMPOUND;
        } else if line.soft_keyword {
            return None;
        }
        if !line.colon {
            return None;
        }
        if line.same_line {
            self.push_layout(Kind::Newline);
            self.push_layout(Kind::Dedent);
            return Some(());
        }
        self.open_block()
    }

    /// The `Indent` of the block a header opens (refused when the next code line is not indented
    /// more: tree-sitter makes a leaf of the empty block).
    fn open_block(&mut self) -> Option<()> {
        let (indent, _, _) = self.next_code(self.i)?;
        if indent <= self.top() {
            return None;
        }
        self.push_layout(Kind::Indent);
        self.indents.push(indent);
        Some(())
    }
}
