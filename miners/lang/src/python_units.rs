//! The statements and semantic units of a Python file, read from its tokens ([`crate::python_layout`])
//! the way [`crate::semantic`] reads them from a tree-sitter tree.
//!
//! [`Module::parse`] groups the tokens into statements: simple statements (split at `;`, which
//! stays an item of its own, as it is a child of the module or block in the tree, and so do line
//! continuations that end a statement), and compound statements from their first decorator or
//! keyword to the `Dedent` that closes their last clause. It marks docstrings — a statement of one
//! or more strings (and an optional trailing comma) that comes first in the module or in a
//! function or class body, wherever that function or class is — which every token stream leaves
//! out, as tree-sitter's walk does. [`Module::units`] then lists the units of [`crate::semantic`]'s
//! `python_block` with the same keys, names and spans, and [`Module::pieces`] gives a unit's (or a
//! module-level item's) token stream: leaf texts and the layout marks that stand for the tree's
//! structure. Two such streams are equal exactly when tree-sitter's token streams of the two nodes
//! are (see [`crate::python_window`]).

use std::collections::HashMap;
use std::ops::Range;

use crate::python_layout::{Kind, Tok, Window, lex_or_offset, lex_pair, lex_window};
use crate::python_tokens::{
    F_ASSIGN, F_AT, F_CLOSE, F_COLON, F_COMPOUND, F_KEYWORD, F_OPEN, F_SEMI, F_STARTS, is_keyword,
};

/// What a statement is, as far as units and file hashes are concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StmtKind {
    /// `import ...`, `from ... import ...`.
    Import,
    /// The docstring of the module, a function or a class.
    Docstring,
    /// `target: Type` without a value.
    BareAnnotation,
    /// A function definition (decorated or not); `name` is the index of its name token.
    Def {
        /// Index of the name token.
        name: u32,
    },
    /// A class definition; `body` indexes [`Module::items`] (filled for classes at the module
    /// level or in such a class's body only).
    Class {
        /// Index of the name token.
        name: u32,
        /// The body's items.
        body: Range<u32>,
    },
    /// Any other statement; `target` is the index of the identifier it assigns, if any.
    Other {
        /// Index of the assigned identifier token (`x = ...`, `x: T = ...`, `x += ...`).
        target: Option<u32>,
    },
}

/// A statement: token index range (a compound statement's ends after its last `Dedent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stmt {
    /// First token.
    pub first: u32,
    /// One past the last token.
    pub end: u32,
    /// Kind.
    pub kind: StmtKind,
}

/// A child of the module or of a class body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A statement.
    Stmt(Stmt),
    /// A `;` between statements, or a line continuation after one (token index).
    Leaf(u32),
}

/// A lexed and grouped Python source.
#[derive(Debug, Clone)]
pub struct Module {
    /// Tokens (see [`crate::python_layout`]).
    pub tokens: Vec<Tok>,
    /// Items of the module and of the class bodies units are taken from.
    pub items: Vec<Item>,
    /// The module's items in [`Module::items`].
    pub top: Range<u32>,
    /// Token ranges of docstrings (with their line's `Newline`), in order.
    pub skips: Vec<Range<u32>>,
}

/// One semantic unit, as [`crate::semantic::Unit`] has it. Its key is its base key (in
/// [`Units::text`]) and its number among the units with that base key: `compare`'s key is the base
/// key, then `~N` when `N > 0` (a base key never holds `~`, so the pair is the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyUnit {
    /// Base key in [`Units::text`] (`Class.method`, `<module>`, `Class.<body>`).
    pub base: Range<u32>,
    /// Length of the display name, a prefix of the base key (`Class.method`, empty for
    /// `<module>`, `Class` for `Class.<body>`).
    pub name_len: u32,
    /// Units with the same base key before this one.
    pub repeat: u32,
    /// First byte: the node's start (its rows start at this byte's).
    pub start: u32,
    /// End byte (exclusive): the node's end (its rows end at this offset's).
    pub end: u32,
    /// Token range.
    pub tokens: Range<u32>,
    /// The name token left out of the unit's stream (function definitions).
    pub skip_name: Option<u32>,
}

/// The semantic units of a module, in source order, and the text of their keys.
#[derive(Debug, Clone, Default)]
pub struct Units {
    /// The units.
    pub list: Vec<PyUnit>,
    /// Base keys, one after the other.
    pub text: String,
}

impl Units {
    /// The key of unit `i`: base key and repeat count.
    pub fn key(&self, i: usize) -> (&str, u32) {
        let u = &self.list[i];
        (
            &self.text[u.base.start as usize..u.base.end as usize],
            u.repeat,
        )
    }

    /// The display name of unit `i`.
    pub fn name(&self, i: usize) -> &str {
        let u = &self.list[i];
        &self.text[u.base.start as usize..(u.base.start + u.name_len) as usize]
    }
}

/// A fast hasher for short keys (FxHash's multiply-rotate; not for untrusted inputs' sake but for
/// speed: keys here come from one file).
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
}

/// Hash maps keyed by unit keys.
pub type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;

/// A piece of a token stream: a leaf's text or a layout mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'s> {
    /// A leaf.
    Text(&'s [u8]),
    /// End of a logical line (not after `;`), start and end of a block.
    Mark(u8),
}

/// Where a block is: docstrings are looked for in the module and in definitions' bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    Module,
    Def,
    Class,
    Other,
}

/// Groups tokens into statements (syntax checks in [`crate::python_syntax`]).
pub(crate) struct Parser<'a> {
    pub(crate) src: &'a [u8],
    pub(crate) toks: &'a [Tok],
    items: Vec<Item>,
    skips: Vec<Range<u32>>,
    /// The last statement start seen (where a refusal happened, for diagnostics).
    last_stmt: usize,
    /// The tokens start at the module's first statement (which may be its docstring).
    module_first: bool,
    /// The tokens may end inside a block (a window's): its end closes every open block.
    open_end: bool,
}

impl<'a> Parser<'a> {
    pub(crate) fn text(&self, p: usize) -> &'a [u8] {
        self.toks.get(p).map_or(&[][..], |t| t.text(self.src))
    }

    pub(crate) fn kind(&self, p: usize) -> Option<Kind> {
        self.toks.get(p).map(|t| t.kind)
    }

    pub(crate) fn is_op(&self, p: usize, op: &[u8]) -> bool {
        self.kind(p) == Some(Kind::Op) && self.text(p) == op
    }

    pub(crate) fn flags(&self, p: usize) -> u16 {
        self.toks.get(p).map_or(0, |t| t.flags)
    }

    /// Whether a compound statement (or a clause out of place) starts at `p`.
    fn starts_compound(&self, p: usize) -> bool {
        self.flags(p) & (F_COMPOUND | F_AT) != 0
            || (self.kind(p) == Some(Kind::Name) && self.text(p) == b"async")
    }

    /// Parses the statements of a block from token `p` to its `Dedent` (or the end of the module);
    /// returns the position after it and the block's items when `collect`.
    fn block(&mut self, p: usize, owner: Owner, collect: bool) -> Option<(usize, Range<u32>)> {
        let first = owner != Owner::Module || self.module_first;
        self.block_from(p, owner, collect, first)
    }

    /// [`Parser::block`], `first` telling whether the statement at `p` is the block's first.
    fn block_from(
        &mut self,
        mut p: usize,
        owner: Owner,
        collect: bool,
        mut first: bool,
    ) -> Option<(usize, Range<u32>)> {
        let mut local = Vec::new();
        loop {
            match self.kind(p) {
                None if owner == Owner::Module || self.open_end => break,
                Some(Kind::Dedent) if owner != Owner::Module => {
                    p += 1;
                    break;
                }
                // A line continuation after the `Dedent`s that close blocks: a child of this one.
                Some(Kind::Cont) => {
                    local.push(Item::Leaf(p as u32));
                    p += 1;
                    first = false;
                    continue;
                }
                // A window's class part: the rest of the class body in the window.
                Some(Kind::Scope) if owner == Owner::Module => {
                    let (end, body) = self.block_from(p + 1, Owner::Class, collect, false)?;
                    let name = p as u32;
                    local.push(Item::Stmt(Stmt {
                        first: name,
                        end: end as u32,
                        kind: StmtKind::Class { name, body },
                    }));
                    p = end;
                    first = false;
                    continue;
                }
                None | Some(Kind::Dedent | Kind::Indent | Kind::Newline | Kind::Scope) => {
                    return None;
                }
                _ => {}
            }
            self.last_stmt = p;
            if self.starts_compound(p) {
                let stmt = self.compound(p, collect)?;
                p = stmt.end as usize;
                local.push(Item::Stmt(stmt));
            } else {
                p = self.simple_line(p, owner, first, &mut local)?;
            }
            if !collect {
                // Only the statements' checks and docstrings matter here.
                local.clear();
            }
            first = false;
        }
        let start = self.items.len() as u32;
        if collect {
            self.items.extend(local);
        }
        Some((p, start..self.items.len() as u32))
    }

    /// The `Indent` that ends the header starting at `p`.
    fn header_end(&self, mut p: usize) -> Option<usize> {
        loop {
            match self.kind(p)? {
                Kind::Indent => return Some(p),
                Kind::Newline | Kind::Dedent => return None,
                _ => p += 1,
            }
        }
    }

    /// A clause (header and block) starting at `p`; the position after its `Dedent`.
    fn clause(&mut self, p: usize) -> Option<usize> {
        let indent = self.header_end(p)?;
        if !self.header_ok(p, indent) {
            return None;
        }
        self.block(indent + 1, Owner::Other, false).map(|(e, _)| e)
    }

    /// A compound statement starting at `p`, decorators included.
    fn compound(&mut self, p: usize, collect: bool) -> Option<Stmt> {
        let mut q = p;
        while self.is_op(q, b"@") {
            while self.kind(q)? != Kind::Newline {
                q += 1;
            }
            q += 1;
        }
        let decorated = q > p;
        let kw_at = if self.text(q) == b"async" { q + 1 } else { q };
        let kw = self.text(kw_at);
        let kind = match kw {
            b"def" | b"class" => {
                let name = kw_at + 1;
                if self.kind(name) != Some(Kind::Name) || is_keyword(self.text(name)) {
                    return None;
                }
                let indent = self.header_end(name)?;
                let is_class = kw == b"class";
                let header_ok = if is_class {
                    self.class_header_ok(name + 1, indent)
                } else {
                    self.parameters_ok(name + 1, indent)
                };
                if !header_ok {
                    return None;
                }
                let owner = if is_class { Owner::Class } else { Owner::Def };
                let (end, body) = self.block(indent + 1, owner, collect && is_class)?;
                let name = name as u32;
                let kind = if is_class {
                    StmtKind::Class { name, body }
                } else {
                    StmtKind::Def { name }
                };
                return Some(Stmt {
                    first: p as u32,
                    end: end as u32,
                    kind,
                });
            }
            _ if decorated => return None,
            b"if" => &[&b"elif"[..], b"else"][..],
            b"while" | b"for" => &[&b"else"[..]][..],
            b"try" => &[&b"except"[..], b"else", b"finally"][..],
            b"with" | b"match" | b"case" => &[][..],
            _ => return None,
        };
        let mut end = self.clause(kw_at)?;
        while self.kind(end) == Some(Kind::Name) && kind.contains(&self.text(end)) {
            end = self.clause(end)?;
        }
        Some(Stmt {
            first: p as u32,
            end: end as u32,
            kind: StmtKind::Other { target: None },
        })
    }

    /// The `;` or `Newline` that ends the simple statement starting at `p`.
    fn simple_end(&self, mut p: usize) -> Option<usize> {
        // The lexer refuses `;` inside brackets: the first `;` ends the statement.
        loop {
            let t = self.toks.get(p)?;
            match t.kind {
                Kind::Newline => return Some(p),
                Kind::Indent | Kind::Dedent => return None,
                Kind::Op if t.flags & F_SEMI != 0 => return Some(p),
                _ => {}
            }
            p += 1;
        }
    }

    /// The simple statements of one logical line, from `p`; the position after its `Newline`.
    fn simple_line(
        &mut self,
        mut p: usize,
        owner: Owner,
        mut first: bool,
        out: &mut Vec<Item>,
    ) -> Option<usize> {
        loop {
            let end = self.simple_end(p)?;
            // Line continuations before the `;` or the end of the line are the block's children.
            let mut e = end;
            while e > p && self.kind(e - 1) == Some(Kind::Cont) {
                e -= 1;
            }
            if e == p {
                return None;
            }
            let kind = self.classify(p, e, owner, first)?;
            if kind == StmtKind::Docstring {
                if e < end {
                    return None;
                }
                let skip_end = if self.kind(e) == Some(Kind::Newline) {
                    e + 1
                } else {
                    e
                };
                self.skips.push(p as u32..skip_end as u32);
            }
            out.push(Item::Stmt(Stmt {
                first: p as u32,
                end: e as u32,
                kind,
            }));
            out.extend((e..end).map(|k| Item::Leaf(k as u32)));
            first = false;
            if self.kind(end) == Some(Kind::Newline) {
                return Some(end + 1);
            }
            out.push(Item::Leaf(end as u32));
            p = end + 1;
            match self.kind(p) {
                Some(Kind::Newline) => return Some(p + 1),
                Some(Kind::Cont) => return None,
                _ if self.starts_compound(p) => return None,
                _ => {}
            }
        }
    }

    /// What the simple statement `p..e` is.
    fn classify(&self, p: usize, e: usize, owner: Owner, first: bool) -> Option<StmtKind> {
        let first_tok = &self.toks[p];
        if first_tok.flags & F_KEYWORD != 0 && matches!(self.text(p), b"import" | b"from") {
            return Some(StmtKind::Import);
        }
        if first_tok.kind == Kind::Str {
            let strings = &self.toks[p..e];
            if strings
                .iter()
                .all(|t| matches!(t.kind, Kind::Str | Kind::Cont))
            {
                if strings.iter().any(|t| t.kind == Kind::Cont) {
                    return None;
                }
                if first && owner != Owner::Other {
                    return Some(StmtKind::Docstring);
                }
            }
            if first
                && owner != Owner::Other
                && e - p >= 2
                && self.is_op(e - 1, b",")
                && self.toks[p..e - 1].iter().all(|t| t.kind == Kind::Str)
            {
                return Some(StmtKind::Docstring);
            }
        }
        // The first `=`, augmented operator or `:` outside brackets (a `lambda` before it means
        // neither an assignment nor an annotation).
        let mut depth = 0u32;
        let mut found = None;
        for (k, t) in self.toks[p..e].iter().enumerate() {
            let f = t.flags;
            if t.kind == Kind::Op {
                if f & F_OPEN != 0 {
                    depth += 1;
                } else if f & F_CLOSE != 0 {
                    depth = depth.saturating_sub(1);
                } else if depth == 0 && f & (F_ASSIGN | F_COLON) != 0 {
                    found = Some(p + k);
                    break;
                }
            } else if depth == 0 && f & F_STARTS != 0 && t.text(self.src) == b"lambda" {
                break;
            }
        }
        let Some(k) = found else {
            return Some(StmtKind::Other { target: None });
        };
        if !self.target_ok(p, k) {
            return None;
        }
        if self.text(k) == b":" && !self.has_top_level_eq(k + 1, e) {
            return Some(StmtKind::BareAnnotation);
        }
        let target = if k == p + 1 && self.kind(p) == Some(Kind::Name) {
            if is_keyword(self.text(p)) {
                return None;
            }
            Some(p as u32)
        } else {
            None
        };
        Some(StmtKind::Other { target })
    }
}

impl Module {
    /// Lexes and groups `src`; `None` when the lexer refuses it or the statements do not read as
    /// Python (a clause out of place, a decorator before no definition, ...).
    pub fn parse(src: &[u8]) -> Option<Module> {
        Self::parse_or_offset(src).ok()
    }

    /// Like [`Module::parse`], with the byte offset near which the lexer or the grouping gave up
    /// on refusal (for diagnostics).
    pub fn parse_or_offset(src: &[u8]) -> Result<Module, usize> {
        Self::from_tokens(src, lex_or_offset(src)?)
    }

    /// Both versions of a modified file, lexed together ([`crate::python_layout::lex_pair`]):
    /// the modules and how many leading and trailing tokens they share; `None` when either is
    /// refused.
    pub fn parse_pair(old: &[u8], new: &[u8]) -> Option<(Module, Module, usize, usize)> {
        let l = lex_pair(old, new)?;
        let (p, s) = (l.shared_prefix, l.shared_suffix);
        Some((
            Self::from_tokens(old, l.old).ok()?,
            Self::from_tokens(new, l.new).ok()?,
            p,
            s,
        ))
    }

    /// Both versions' windows ([`crate::python_layout::lex_window`]) grouped: modules holding the
    /// statements of the windows only, one window after the other (a window ends and starts
    /// between module-level statements, or in a class body: a [`Kind::Scope`] token then stands for
    /// the class header, and the class's statements in the window are its body), and the windows;
    /// `None` when either is refused.
    pub fn parse_window(old: &[u8], new: &[u8]) -> Option<(Module, Module, Window)> {
        let mut w = lex_window(old, new)?;
        let first = w.old_ranges.first().is_some_and(|r| r.start == 0);
        let ma = Self::from_tokens_in(old, std::mem::take(&mut w.old), first, true).ok()?;
        let mb = Self::from_tokens_in(new, std::mem::take(&mut w.new), first, true).ok()?;
        Some((ma, mb, w))
    }

    fn from_tokens(src: &[u8], tokens: Vec<Tok>) -> Result<Module, usize> {
        Self::from_tokens_in(src, tokens, true, false)
    }

    /// Groups `tokens`, the module's statements from its first one when `module_first`, ending
    /// anywhere when `open_end` (windows).
    fn from_tokens_in(
        src: &[u8],
        tokens: Vec<Tok>,
        module_first: bool,
        open_end: bool,
    ) -> Result<Module, usize> {
        let mut parser = Parser {
            src,
            toks: &tokens,
            items: Vec::new(),
            skips: Vec::new(),
            last_stmt: 0,
            module_first,
            open_end,
        };
        let Some((_, top)) = parser.block(0, Owner::Module, true) else {
            return Err(tokens.get(parser.last_stmt).map_or(0, |t| t.start as usize));
        };
        let (items, skips) = (parser.items, parser.skips);
        Ok(Module {
            tokens,
            items,
            top,
            skips,
        })
    }

    /// The unit of a statement (its key left empty).
    fn unit_of(&self, s: &Stmt) -> PyUnit {
        let first = self.tokens[s.first as usize];
        let last = self.tokens[s.end as usize - 1];
        PyUnit {
            base: 0..0,
            name_len: 0,
            repeat: 0,
            start: first.start,
            end: last.end,
            tokens: s.first..s.end,
            skip_name: match s.kind {
                StmtKind::Def { name } => Some(name),
                _ => None,
            },
        }
    }

    /// The semantic units, in source order, keyed as `python_block` keys them.
    pub fn units(&self, src: &[u8]) -> Units {
        let mut units = Units::default();
        let mut scope = String::new();
        self.block_units(src, self.top.clone(), &mut scope, &mut units);
        // Number the repeats of each base key, in source order.
        let mut seen: FxMap<&str, u32> = FxMap::default();
        for u in &mut units.list {
            let n = seen
                .entry(&units.text[u.base.start as usize..u.base.end as usize])
                .or_insert(0);
            u.repeat = *n;
            *n += 1;
        }
        units
    }

    /// Adds the units of a block's `items` (`scope`: the enclosing classes, dotted).
    fn block_units(&self, src: &[u8], items: Range<u32>, scope: &mut String, out: &mut Units) {
        let name_of =
            |t: u32| std::str::from_utf8(self.tokens[t as usize].text(src)).unwrap_or("?");
        let cont = StmtKind::Other { target: None };
        for item in &self.items[items.start as usize..items.end as usize] {
            let (mut unit, kind) = match item {
                Item::Stmt(s) => (self.unit_of(s), &s.kind),
                // A line continuation between statements is a named child: a unit too.
                Item::Leaf(t) if self.tokens[*t as usize].kind == Kind::Cont => {
                    let tok = self.tokens[*t as usize];
                    let s = Stmt {
                        first: *t,
                        end: t + 1,
                        kind: StmtKind::Other { target: None },
                    };
                    (
                        PyUnit {
                            start: tok.start,
                            end: tok.end,
                            ..self.unit_of(&s)
                        },
                        &cont,
                    )
                }
                Item::Leaf(_) => continue,
            };
            let start = out.text.len();
            out.text.push_str(scope);
            match kind {
                StmtKind::Import | StmtKind::Docstring | StmtKind::BareAnnotation => {
                    out.text.truncate(start);
                    continue;
                }
                StmtKind::Class { name, body } => {
                    out.text.truncate(start);
                    let outer = scope.len();
                    if !scope.is_empty() {
                        scope.push('.');
                    }
                    scope.push_str(name_of(*name));
                    self.block_units(src, body.clone(), scope, out);
                    scope.truncate(outer);
                    continue;
                }
                StmtKind::Def { name } | StmtKind::Other { target: Some(name) } => {
                    if !scope.is_empty() {
                        out.text.push('.');
                    }
                    out.text.push_str(name_of(*name));
                    unit.name_len = (out.text.len() - start) as u32;
                }
                StmtKind::Other { target: None } if scope.is_empty() => {
                    out.text.push_str("<module>");
                }
                StmtKind::Other { target: None } => {
                    unit.name_len = scope.len() as u32;
                    out.text.push_str(".<body>");
                }
            }
            unit.base = start as u32..out.text.len() as u32;
            out.list.push(unit);
        }
    }

    /// The token stream of tokens `range` (docstrings and `skip` left out): leaf texts, and marks
    /// for the ends of logical lines (not after `;`, which tree-sitter does not tell apart from
    /// none) and for the starts and ends of blocks.
    pub fn pieces<'s>(
        &'s self,
        src: &'s [u8],
        range: Range<u32>,
        skip: Option<u32>,
    ) -> impl Iterator<Item = Piece<'s>> + 's {
        let mut next_skip = self.skips.partition_point(|s| s.end <= range.start);
        range.filter_map(move |k| {
            while next_skip < self.skips.len() && self.skips[next_skip].end <= k {
                next_skip += 1;
            }
            if self.skips.get(next_skip).is_some_and(|s| s.start <= k) || skip == Some(k) {
                return None;
            }
            let t = self.tokens[k as usize];
            Some(match t.kind {
                Kind::Name | Kind::Number | Kind::Str | Kind::Op | Kind::Cont | Kind::Scope => {
                    Piece::Text(t.text(src))
                }
                Kind::Newline => {
                    let prev = self.tokens[k as usize - 1];
                    if prev.kind == Kind::Op && prev.text(src) == b";" {
                        return None;
                    }
                    Piece::Mark(1)
                }
                Kind::Indent => Piece::Mark(2),
                Kind::Dedent => Piece::Mark(3),
            })
        })
    }

    /// The token stream of a module-level item (empty for the module docstring).
    pub fn item_pieces<'s>(
        &'s self,
        src: &'s [u8],
        item: &Item,
    ) -> impl Iterator<Item = Piece<'s>> + 's {
        let range = match item {
            Item::Stmt(s) => s.first..s.end,
            Item::Leaf(t) => *t..*t + 1,
        };
        self.pieces(src, range, None)
    }
}
