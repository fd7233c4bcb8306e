//! The semantic rule for a modified Python file without parsing it.
//!
//! [`judge_python`] gives exactly the answer of [`crate::semantic::compare`] on whole-file
//! tree-sitter summaries of both versions, or says that it cannot ([`Windowed::NeedsFullParse`]),
//! in which case the caller parses the whole files. No tree-sitter parse is involved: both versions
//! are lexed together ([`crate::python_layout::lex_pair`]: the new version's tokens before the first
//! and after the last difference are the old version's) and grouped into statements and units
//! ([`crate::python_units`]), and `compare`'s decision is replayed on them:
//!
//! 1. **Units.** The module's statements and, recursively, the bodies of the classes among them
//!    give the units `python_block` gives — function definitions (decorators included) keyed
//!    `Class.name`, other statements keyed by the identifier they assign or `<module>` /
//!    `Class.<body>` (a line continuation between two statements too: tree-sitter's
//!    `line_continuation` is a named node), imports, docstrings and bare annotations left out,
//!    `~N` for repeats — with the rows tree-sitter gives the nodes: from the first token (the first
//!    decorator) to the last one, or for a compound statement to where the scanner puts the
//!    `Dedent` that closes it (after the comments that belong to its last block).
//! 2. **Changed units.** A unit touched by a changed row changed when its counterpart with the same
//!    key has another token stream, or, without one, when no unit of the other version without a
//!    same-key counterpart has its stream (a rename); the names are qualified with the module path
//!    of the side `compare` takes them from.
//! 3. **File streams.** Without a changed unit, the module-level items (statements, `;` and line
//!    continuations; the module docstring an empty stream) with and without imports tell a
//!    whitespace or comment change, an import-only change, or a declaration-only change apart, as
//!    `compare`'s `all_hash` and `code_hash` do. Items made of tokens the versions share are the
//!    same on both sides; only the items between are compared.
//!
//! Why the streams decide like tree-sitter's hashes: a hash covers the node's leaves (a string
//! literal as one text, comments and docstrings left out, `line_continuation` leaves kept) and its
//! named nodes' openings and closings. The lexer's tokens are those leaves, and for valid code the
//! tree is a function of the leaves and the layout — `Newline` between statements, `Indent` and
//! `Dedent` around blocks — up to what tree-sitter does not tell apart: a one-line suite and an
//! indented one give the same `block` (the lexer gives both the same marks) and a `Newline` after
//! `;` adds nothing (the streams leave it out). So equal streams mean equal trees, and unequal
//! streams differ in a leaf or in where statements and blocks start and end, which the tree shows.
//! The streams are compared directly, and hashed (64-bit FNV) only to look for renames.
//!
//! **Windows.** Most files are not lexed whole: [`crate::python_layout::lex_window`] lexes both
//! versions only around the changes — from the last module-level statement (or statement of a
//! module-level class's body) before the first difference, skipping the long stretches both
//! versions share between changes, to the first line after the last difference where both lexers
//! agree — and [`Module::parse_window`] groups those statements (a window in a class body is
//! grouped as the body of that class, after a token standing for its header). Everything outside
//! the windows is the same text in both versions, lexed from the same state: its units have the
//! same tokens on both sides, and the same keys when every base key is held as many times by both
//! versions' windows or by no unit outside them (a base key whose counts differ must have a last
//! name that occurs nowhere outside the windows as a word; otherwise the files are lexed whole).
//! Then every unit outside has its own counterpart, with the same stream, so none of them changed
//! (and none is a rename candidate): the windows' units decide. The module-level items outside
//! are the same on both sides, so the windows' items decide the file streams, window by window:
//! the whole files' items are equal exactly when each window's are, if each window holds as many
//! items in both versions; when the totals differ, neither are; in the case left (a statement
//! moved across a skipped stretch) the files are lexed whole. A class cut by a window is the same
//! class in both versions outside it, so its part in the window stands for it.
//!
//! [`PythonPair::judge`] asks for the changed rows only when a unit changed somewhere: when no unit
//! changed anywhere, no touched one did either, so the rejection it then gives is exactly the one
//! the rows would give (the miner skips the file's line diff unless another file keeps the commit);
//! a unit that changed somewhere needs the rows to tell whether a changed row touches it. Units
//! made of the tokens the versions share are not compared at all.
//!
//! The argument holds for sources tree-sitter parses without errors. The lexer refuses what would
//! make it recover from one in most cases (see [`crate::python_layout`]), and the grouping refuses
//! clauses out of place, decorators before no definition, compound statements after `;`, headers
//! that do not read as headers (`else x:`, `for x:`, parameter lists that are no parameters),
//! assignment targets that are no targets (`"a": 1`), assignments to keywords, and a line
//! continuation after a docstring. An error of another kind inside a statement (`f(a + if)`) could
//! still make tree-sitter group the statements otherwise. Checked by `tests/python_window.rs`
//! (random edits against whole-file parses) and on real history by
//! `examples/python_history_check.rs`.

use std::cell::OnceCell;
use std::hash::Hasher;

use crate::python_units::{FxMap, Item, Module, Piece, PyUnit, StmtKind, Units};
use crate::semantic::{FileChange, Fnv, NonSemantic};
use crate::window::{Modified, WindowStats, Windowed};

/// One version of the file, with its units and their stream hashes (computed on demand).
struct Version<'a> {
    module: &'a Module,
    src: &'a [u8],
    path: &'a str,
    /// Byte spans of the changed rows: from the row's start to the next row's; `None` takes every
    /// unit as touched.
    rows: Option<Vec<(usize, usize)>>,
    units: &'a Units,
    hashes: Vec<OnceCell<u64>>,
    keys: FxMap<(&'a str, u32), usize>,
}

impl<'a> Version<'a> {
    fn new(
        module: &'a Module,
        units: &'a Units,
        src: &'a [u8],
        path: &'a str,
        rows: Option<&[usize]>,
    ) -> Self {
        Version {
            module,
            src,
            path,
            rows: rows.map(|rows| row_spans(src, rows)),
            units,
            hashes: units.list.iter().map(|_| OnceCell::new()).collect(),
            keys: (0..units.list.len()).map(|i| (units.key(i), i)).collect(),
        }
    }

    fn stream(&self, i: usize) -> impl Iterator<Item = Piece<'a>> + 'a {
        let u = &self.units.list[i];
        self.module.pieces(self.src, u.tokens.clone(), u.skip_name)
    }

    fn hash(&self, i: usize) -> u64 {
        *self.hashes[i].get_or_init(|| {
            let mut h = Fnv::default();
            for piece in self.stream(i) {
                match piece {
                    Piece::Text(t) => {
                        h.write_u8(0x10);
                        h.write_u32(t.len() as u32);
                        h.write(t);
                    }
                    Piece::Mark(m) => h.write_u8(m),
                }
            }
            h.finish()
        })
    }

    /// Indices of the units a changed row falls in: a row from the unit's first to its last, that
    /// is a row that ends after the unit's start and starts no later than its end offset.
    /// Every unit when the rows are not known.
    fn touched(&self) -> impl Iterator<Item = usize> + '_ {
        self.units.list.iter().enumerate().filter_map(|(i, u)| {
            let Some(rows) = &self.rows else {
                return Some(i);
            };
            let k = rows.partition_point(|r| r.1 <= u.start as usize);
            (k < rows.len() && rows[k].0 <= u.end as usize).then_some(i)
        })
    }

    /// `compare`'s qualified name of unit `i`.
    fn qualified(&self, i: usize) -> String {
        let prefix = crate::profile::python_module_path(self.path);
        let name = self.units.name(i);
        match (prefix.is_empty(), name.is_empty()) {
            (true, _) => name.to_string(),
            (false, true) => prefix,
            (false, false) => format!("{prefix}.{name}"),
        }
    }

    /// Hashes of the units whose key `other` does not have (rename candidates).
    fn unmatched(&self, other: &Version) -> Vec<u64> {
        (0..self.units.list.len())
            .filter(|&i| !other.keys.contains_key(&self.units.key(i)))
            .map(|i| self.hash(i))
            .collect()
    }
}

/// Whether `word` occurs in `text` as an identifier (not inside a longer one).
fn has_word(text: &[u8], word: &[u8]) -> bool {
    let is_name =
        |c: Option<&u8>| c.is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80);
    memchr::memmem::find_iter(text, word).any(|k| {
        !is_name(k.checked_sub(1).and_then(|j| text.get(j))) && !is_name(text.get(k + word.len()))
    })
}

/// The start of the line `n` lines after the one starting at `pos` (past the end when the source
/// has fewer lines), counting newlines 64 bytes at a time.
fn skip_lines(src: &[u8], mut pos: usize, mut n: usize) -> usize {
    while n > 0 {
        let Some(chunk) = src.get(pos..pos + 64) else {
            return match memchr::memchr_iter(b'\n', &src[pos.min(src.len())..]).nth(n - 1) {
                Some(k) => pos + k + 1,
                None => src.len() + 1,
            };
        };
        let count = chunk.iter().filter(|b| **b == b'\n').count();
        if count < n {
            n -= count;
            pos += 64;
        } else {
            let k = memchr::memchr_iter(b'\n', chunk).nth(n - 1).unwrap_or(63);
            return pos + k + 1;
        }
    }
    pos
}

/// Byte spans of the (sorted) rows: each row's start and the next row's start (`usize::MAX` for
/// the last row).
fn row_spans(src: &[u8], rows: &[usize]) -> Vec<(usize, usize)> {
    let (mut pos, mut row) = (0, 0);
    rows.iter()
        .map(|&r| {
            pos = skip_lines(src, pos, r - row);
            row = r;
            let next = src
                .get(pos..)
                .and_then(|rest| memchr::memchr(b'\n', rest))
                .map_or(usize::MAX, |k| pos + k + 1);
            (pos, next)
        })
        .collect()
}

fn same_pieces<'s>(
    mut a: impl Iterator<Item = Piece<'s>>,
    mut b: impl Iterator<Item = Piece<'s>>,
) -> bool {
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) if x == y => {}
            _ => return false,
        }
    }
}

/// Whether unit `i` of `side` changed: its same-key counterpart in `other` has another stream, or
/// (without one) no rename candidate of `other` has its stream.
fn changed(
    side: &Version,
    i: usize,
    other: &Version,
    other_unmatched: &OnceCell<Vec<u64>>,
) -> bool {
    match other.keys.get(&side.units.key(i)) {
        Some(&j) => !same_pieces(side.stream(i), other.stream(j)),
        None => !other_unmatched
            .get_or_init(|| other.unmatched(side))
            .contains(&side.hash(i)),
    }
}

/// The qualified names of the changed units touched by changed rows, as `compare` lists them.
fn changed_names(old: &Version, new: &Version) -> Vec<String> {
    let old_unmatched = OnceCell::new();
    let new_unmatched = OnceCell::new();
    let mut names = Vec::new();
    for i in new.touched() {
        if changed(new, i, old, &old_unmatched) {
            names.push(new.qualified(i));
        }
    }
    for i in old.touched() {
        if changed(old, i, new, &new_unmatched) {
            // The new version's name when the unit still exists there.
            names.push(match new.keys.get(&old.units.key(i)) {
                Some(&j) => new.qualified(j),
                None => old.qualified(i),
            });
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Whether the module-level items of both versions have the same streams (imports left out when
/// `code_only`): `compare`'s `all_hash` and `code_hash`. Items made of shared leading tokens, and
/// items of the same kind made of shared trailing tokens, are the same in both versions (a
/// statement parses the same wherever it is, but for being the module's docstring, which its kind
/// tells); only the items between are compared.
fn same_items(old: &Version, new: &Version, shared: (usize, usize), code_only: bool) -> bool {
    fn items(m: &Module) -> &[Item] {
        &m.items[m.top.start as usize..m.top.end as usize]
    }
    fn range(item: &Item) -> (usize, usize) {
        match item {
            Item::Stmt(s) => (s.first as usize, s.end as usize),
            Item::Leaf(t) => (*t as usize, *t as usize + 1),
        }
    }
    let kind = |item: &Item| match item {
        Item::Stmt(s) => Some(std::mem::discriminant(&s.kind)),
        Item::Leaf(_) => None,
    };
    let (a, b) = (items(old.module), items(new.module));
    let (na, nb) = (old.module.tokens.len(), new.module.tokens.len());
    let (prefix, suffix) = shared;
    let head = a
        .iter()
        .zip(b)
        .take_while(|(x, y)| range(x).1 <= prefix && range(x) == range(y))
        .count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| {
            let (rx, ry) = (range(x), range(y));
            rx.0 + suffix >= na
                && ry.0 + suffix >= nb
                && na - rx.0 == nb - ry.0
                && kind(x) == kind(y)
        })
        .count();
    let keep =
        |item: &&Item| !(code_only && matches!(item, Item::Stmt(s) if s.kind == StmtKind::Import));
    let mid_a: Vec<&Item> = a[head..a.len() - tail].iter().filter(keep).collect();
    let mid_b: Vec<&Item> = b[head..b.len() - tail].iter().filter(keep).collect();
    mid_a.len() == mid_b.len()
        && mid_a.iter().zip(&mid_b).all(|(x, y)| {
            same_pieces(
                old.module.item_pieces(old.src, x),
                new.module.item_pieces(new.src, y),
            )
        })
}

/// The module-level items of each window of `m` (`splits`: where the second and later windows
/// start), imports left out when `code_only`.
fn window_items<'m>(m: &'m Module, splits: &[u32], code_only: bool) -> Vec<Vec<&'m Item>> {
    let mut groups = vec![Vec::new(); splits.len() + 1];
    for item in &m.items[m.top.start as usize..m.top.end as usize] {
        let first = match item {
            Item::Stmt(s) => s.first,
            Item::Leaf(t) => *t,
        };
        if code_only && matches!(item, Item::Stmt(s) if s.kind == StmtKind::Import) {
            continue;
        }
        groups[splits.partition_point(|&s| s <= first)].push(item);
    }
    groups
}

/// Both versions of a modified Python file, lexed together and grouped into units: what
/// [`PythonPair::judge`] decides on, with or without the changed rows.
pub struct PythonPair {
    old: Module,
    new: Module,
    old_units: Units,
    new_units: Units,
    /// Tokens the versions share at the start and at the end.
    shared: (usize, usize),
    /// For pairs lexed in windows: the token indices where the second and later windows start,
    /// in each version.
    splits: Option<(Vec<u32>, Vec<u32>)>,
}

impl PythonPair {
    /// Lexes and groups both versions; `None` (counted in `stats.refused_scan`) when either is
    /// outside what the lexer and the grouping reproduce, and the whole files must be parsed.
    pub fn parse(old: &[u8], new: &[u8], stats: &mut WindowStats) -> Option<Self> {
        stats.file_bytes += (old.len() + new.len()) as u64;
        if let Some(pair) = Self::parse_window(old, new, stats) {
            return Some(pair);
        }
        let Some((ma, mb, shared_prefix, shared_suffix)) = Module::parse_pair(old, new) else {
            stats.refused_scan += 1;
            return None;
        };
        let (old_units, new_units) = (ma.units(old), mb.units(new));
        Some(PythonPair {
            old: ma,
            new: mb,
            old_units,
            new_units,
            shared: (shared_prefix, shared_suffix),
            splits: None,
        })
    }

    /// The module-level statements around the change only ([`Module::parse_window`]). Every unit
    /// of the whole files outside the windows has the same tokens in both versions; it also has the
    /// same key, and a counterpart, when each base key is held as many times by both windows or is
    /// held by no unit outside them: so the units and module-level items of the windows decide as
    /// the whole files' do, and the rename candidates are theirs. A base key whose counts differ
    /// (a unit added, removed or renamed) is known to be held by no unit outside the windows when
    /// its last name does not occur outside them as a word; `<module>` and `.<body>` keys are not
    /// looked for. `None` when a window is refused or a key is not shown to be the windows' own.
    fn parse_window(old: &[u8], new: &[u8], stats: &mut WindowStats) -> Option<Self> {
        let (ma, mb, window) = Module::parse_window(old, new)?;
        let (old_units, new_units) = (ma.units(old), mb.units(new));
        let mut counts: FxMap<&str, i64> = FxMap::default();
        for (units, step) in [(&old_units, 1), (&new_units, -1)] {
            for i in 0..units.list.len() {
                *counts.entry(units.key(i).0).or_insert(0) += step;
            }
        }
        let ranges = &window.old_ranges;
        let mut outside: Vec<&[u8]> = Vec::with_capacity(ranges.len() + 1);
        let mut at = 0;
        for r in ranges {
            outside.push(&old[at..r.start]);
            at = r.end;
        }
        outside.push(&old[at..]);
        let own = |key: &str| {
            let name = key.rsplit('.').next().unwrap_or(key);
            !name.starts_with('<') && !outside.iter().any(|text| has_word(text, name.as_bytes()))
        };
        if !counts.iter().all(|(key, &n)| n == 0 || own(key)) {
            stats.python_window_keys += 1;
            return None;
        }
        let splits = (
            window.splits.iter().map(|s| s.0).collect::<Vec<_>>(),
            window.splits.iter().map(|s| s.1).collect::<Vec<_>>(),
        );
        // With several windows, the module-level items compare window by window: exactly the
        // whole files' comparison when each window holds as many items in both versions, or when
        // the totals differ (then so do the whole files'); otherwise items could line up across a
        // skipped stretch, which only the whole files tell.
        for code_only in [false, true] {
            let (a, b) = (
                window_items(&ma, &splits.0, code_only),
                window_items(&mb, &splits.1, code_only),
            );
            let total = |g: &[Vec<&Item>]| g.iter().map(Vec::len).sum::<usize>();
            if total(&a) == total(&b) && a.iter().zip(&b).any(|(x, y)| x.len() != y.len()) {
                stats.python_window_keys += 1;
                return None;
            }
        }
        stats.python_windows += 1;
        let lens: usize = ranges.iter().map(|r| r.len()).sum();
        stats.python_window_bytes += (2 * lens + new.len() - old.len()) as u64;
        Some(PythonPair {
            old: ma,
            new: mb,
            old_units,
            new_units,
            shared: (0, 0),
            splits: Some(splits),
        })
    }

    /// Whether the module-level items of both versions have the same streams ([`same_items`];
    /// window by window for pairs lexed in windows).
    fn same_items(&self, old: &Version, new: &Version, code_only: bool) -> bool {
        let Some((sa, sb)) = &self.splits else {
            return same_items(old, new, self.shared, code_only);
        };
        let (a, b) = (
            window_items(old.module, sa, code_only),
            window_items(new.module, sb, code_only),
        );
        a.iter().zip(&b).all(|(x, y)| {
            x.len() == y.len()
                && x.iter().zip(y).all(|(p, q)| {
                    same_pieces(
                        old.module.item_pieces(old.src, p),
                        new.module.item_pieces(new.src, q),
                    )
                })
        })
    }

    /// The decision of [`judge_python`] on `change` (the sources this pair was parsed from), with
    /// the changed rows (`change.deleted` and `change.added` are not read) asked from `rows` only
    /// when a unit changed somewhere: when none did, none that a changed row touches did either,
    /// and the answer is the one the rows would give. An error of `rows` is returned as is.
    pub fn judge<'r, E>(
        &self,
        change: &Modified,
        rows: impl FnOnce() -> Result<(&'r [usize], &'r [usize]), E>,
        stats: &mut WindowStats,
    ) -> Result<FileChange, E> {
        let mut old = Version::new(
            &self.old,
            &self.old_units,
            change.old,
            change.old_path,
            None,
        );
        let mut new = Version::new(
            &self.new,
            &self.new_units,
            change.new,
            change.new_path,
            None,
        );
        if any_changed(&old, &new, self.shared) {
            let (deleted, added) = rows()?;
            old.rows = Some(row_spans(change.old, deleted));
            new.rows = Some(row_spans(change.new, added));
            let names = changed_names(&old, &new);
            if !names.is_empty() {
                stats.by_body_tokens += 1;
                return Ok(FileChange::Semantic(names));
            }
        }
        let reason = if self.same_items(&old, &new, false) {
            NonSemantic::WhitespaceOrComment
        } else if self.same_items(&old, &new, true) {
            NonSemantic::ImportOnly
        } else {
            NonSemantic::NoBodyChange
        };
        if reason == NonSemantic::NoBodyChange {
            stats.no_unit_changed += 1;
        } else {
            stats.by_tokens += 1;
        }
        Ok(FileChange::NotSemantic(reason))
    }
}

/// Whether any unit of either version changed (every unit touched): the units of `old` with a
/// same-key counterpart were compared from `new`'s side already. A unit and its counterpart made of
/// the same shared tokens (`shared`: how many leading and trailing tokens the versions share) have
/// the same stream without comparing it: a unit's stream is a function of its own tokens.
fn any_changed(old: &Version, new: &Version, (prefix, suffix): (usize, usize)) -> bool {
    let (na, nb) = (old.module.tokens.len(), new.module.tokens.len());
    let same_tokens = |a: &PyUnit, b: &PyUnit| {
        let (ra, rb) = (&a.tokens, &b.tokens);
        let from_end = |n: usize, k: u32| n - k as usize;
        let skip_from_end = |n: usize, k: Option<u32>| k.map(|k| from_end(n, k));
        (rb.end as usize <= prefix && ra == rb && a.skip_name == b.skip_name)
            || (from_end(na, ra.start) <= suffix
                && from_end(nb, rb.start) <= suffix
                && from_end(na, ra.start) == from_end(nb, rb.start)
                && from_end(na, ra.end) == from_end(nb, rb.end)
                && skip_from_end(na, a.skip_name) == skip_from_end(nb, b.skip_name))
    };
    let old_unmatched = OnceCell::new();
    let new_unmatched = OnceCell::new();
    (0..new.units.list.len()).any(|i| match old.keys.get(&new.units.key(i)) {
        Some(&j) if same_tokens(&old.units.list[j], &new.units.list[i]) => false,
        _ => changed(new, i, old, &old_unmatched),
    }) || (0..old.units.list.len())
        .any(|i| !new.keys.contains_key(&old.units.key(i)) && changed(old, i, new, &new_unmatched))
}

/// Decides a modified Python file (see the module docs). `stats` accumulates the work done:
/// `by_body_tokens` counts files with a changed unit, `by_tokens` whitespace, comment and import
/// changes, `no_unit_changed` declaration-only changes, `refused_scan` files left to whole-file
/// parses.
pub fn judge_python(change: &Modified, stats: &mut WindowStats) -> Windowed {
    match PythonPair::parse(change.old, change.new, stats) {
        Some(pair) => {
            let rows = || Ok::<_, std::convert::Infallible>((change.deleted, change.added));
            match pair.judge(change, rows, stats) {
                Ok(decided) => Windowed::Decided(decided),
                Err(never) => match never {},
            }
        }
        None => Windowed::NeedsFullParse,
    }
}
