//! The semantic rule for a modified Java file without parsing the whole file.
//!
//! [`judge_java`] gives exactly the answer of [`crate::semantic::compare`] on full parses of both
//! versions, or says that it cannot ([`Windowed::NeedsFullParse`]), in which case the caller parses
//! the whole files. It works cheapest first:
//!
//! 1. **Tokens.** Both versions are tokenised ([`Layout`]; `>>` and `>>>` are read as `>`s, as
//!    tree-sitter reads generics, and literals follow Java's maximal munch, so equal token lists are
//!    equal leaves for tree-sitter). Equal lists: only whitespace or comments changed. Equal lists
//!    once the `package` and `import` declarations (with their annotations) are left out: an
//!    import-only change, a rename when the package changed.
//! 2. **Windows.** Files in which two methods or constructors of one type share a signature are
//!    parsed whole (see below). Each version's member segments touched by its changed rows are
//!    selected and then, until nothing changes: the member types enclosing a selected segment, the
//!    constant list of an enum in the window (without it the first member would read as a
//!    constant), the initializer blocks of a type in the window that has several of one kind (they
//!    share a key), and the segments that the line diff aligns with a selected segment of the other
//!    version. The segments left out (those of types in the window) must then pair up exactly: the
//!    same number on both sides, in the same order, byte-identical, in types with the same names and
//!    kinds all the way up; otherwise the file is parsed whole.
//! 3. **Bodies from tokens.** When every selected segment pairs up in order with one of the other
//!    version — member types and method or constructor declarations with the same header tokens
//!    (hence the same key), the rest token-identical — no parser is needed: a method changed exactly
//!    when a changed row falls in its body on either side and the body's tokens differ.
//! 4. **Parse the windows.** Otherwise tree-sitter parses only the type headers, the selected
//!    segments and the closing braces, member types again segment by segment (included ranges; node
//!    positions stay those of the whole file), and [`crate::semantic::compare`] runs on the two
//!    partial summaries; a window with syntax errors sends the file to whole-file parses.
//!
//! Why the windows equal the full comparison: a left-out segment is byte-identical on both sides
//! and Java parses a member independently of its neighbours, so its units have the same keys and
//! token hashes in both versions, and none of its rows changed. A touched unit's counterpart by key
//! is therefore never a left-out unit (that would give its own side two units with one key), and a
//! left-out unit always has a counterpart, so the units without one — the rename candidates — all
//! lie in the windows. When the windows show no changed unit, the kind of non-semantic change
//! follows from step 1: token lists that differ with and without imports mean whole-file token
//! hashes that differ too, which leaves a declaration-only change.
//!
//! The argument assumes that no two members of a type share a key. Files that declare two methods
//! or constructors with the same name and parameter types in one type (a bad merge in old history,
//! or generic overloads that differ only in their type parameters) are parsed whole, and the scan
//! refuses records at the top level, conflict markers, unbalanced brackets and type headers that do
//! not read as modifiers and a keyword. A syntax error of another kind outside the parsed windows,
//! or two fields of one name in one type, could still make the windows judge differently from a
//! whole-file parse. Checked by `tests/window.rs` (random edits against whole-file parses) and, on
//! real history, by `examples/window_check.rs`.

use etip_core::candidate::Language;
use tree_sitter::{Point, Range as TsRange};

use crate::LangError;
use crate::java_layout::{Layout, TokKind, code_tokens};
use crate::semantic::{Analyzer, FileChange, NonSemantic, Side, compare};

/// One modified file (Java for [`judge_java`], Python for
/// [`crate::python_window::judge_python`]): both versions, their paths and their changed rows
/// (0-based, sorted).
#[derive(Debug, Clone, Copy)]
pub struct Modified<'a> {
    /// Old version.
    pub old: &'a [u8],
    /// New version.
    pub new: &'a [u8],
    /// Path of the old version.
    pub old_path: &'a str,
    /// Path of the new version.
    pub new_path: &'a str,
    /// Rows removed from the old version.
    pub deleted: &'a [usize],
    /// Rows added in the new version.
    pub added: &'a [usize],
}

/// Outcome of [`judge_java`] and [`crate::python_window::judge_python`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Windowed {
    /// The answer [`compare`] gives on whole-file parses.
    Decided(FileChange),
    /// Not decidable from tokens and windows: parse both versions whole.
    NeedsFullParse,
}

/// Work a window judgement did, for statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowStats {
    /// Bytes of the two versions.
    pub file_bytes: u64,
    /// Bytes handed to tree-sitter.
    pub parsed_bytes: u64,
    /// Files decided from their tokens alone.
    pub by_tokens: u64,
    /// Files decided from their windows, from tokens (method and constructor bodies).
    pub by_body_tokens: u64,
    /// Files decided from their windows, parsed.
    pub by_windows: u64,
    /// Files whose windows showed no changed unit (declaration-only changes).
    pub no_unit_changed: u64,
    /// Files left to whole-file parses: the layout scan refused a version, the left-out segments did
    /// not pair up, or a window had syntax errors.
    pub refused_scan: u64,
    /// See `refused_scan`.
    pub refused_pairing: u64,
    /// See `refused_scan`.
    pub refused_errors: u64,
    /// Python files decided from the module-level statements around the change alone.
    pub python_windows: u64,
    /// Bytes of those files' windows (both versions).
    pub python_window_bytes: u64,
    /// Python files lexed whole after their windows: a unit added, removed or renamed whose name
    /// occurs outside the windows, or module-level items that could line up across a skipped
    /// stretch.
    pub python_window_keys: u64,
}

/// Runs of unchanged rows: (first old row, first new row, length).
fn unchanged_runs(
    old_rows: usize,
    new_rows: usize,
    deleted: &[usize],
    added: &[usize],
) -> Vec<(usize, usize, usize)> {
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    let (mut i, mut j, mut d, mut a) = (0, 0, 0, 0);
    while i < old_rows && j < new_rows {
        if d < deleted.len() && deleted[d] == i {
            d += 1;
            i += 1;
        } else if a < added.len() && added[a] == j {
            a += 1;
            j += 1;
        } else {
            match runs.last_mut() {
                Some(r) if r.0 + r.2 == i && r.1 + r.2 == j => r.2 += 1,
                _ => runs.push((i, j, 1)),
            }
            i += 1;
            j += 1;
        }
    }
    runs
}

/// The rows of the other version that rows `s..=e` of this version align with: from the image of the
/// first unchanged row at or after `s` to that of the last at or before `e`, widened over changed
/// rows at either end (`lo > hi` when the rows are all inserted ones).
fn map_rows(
    runs: &[(usize, usize, usize)],
    s: usize,
    e: usize,
    other_rows: usize,
) -> (usize, usize) {
    // Runs as (this start, other start, len) for the direction asked.
    let lo = match runs.iter().rev().find(|r| r.0 <= s) {
        Some(r) if s < r.0 + r.2 => r.1 + (s - r.0),
        Some(r) => r.1 + r.2,
        None => 0,
    };
    let hi = match runs.iter().find(|r| r.0 + r.2 > e) {
        Some(r) if r.0 <= e => r.1 + (e - r.0),
        Some(r) => r.1.saturating_sub(1),
        None => other_rows.saturating_sub(1),
    };
    (lo, hi)
}

/// For each type, the segment that declares it (`None` for top-level types).
fn declaring_segments(layout: &Layout) -> Vec<Option<usize>> {
    let mut decl = vec![None; layout.types.len()];
    for (k, seg) in layout.segments.iter().enumerate() {
        if let Some(t) = seg.nested {
            decl[t] = Some(k);
        }
    }
    decl
}

/// Whether type `ty` is in the window: top-level types always, member types when their declaring
/// segment is selected.
fn type_in_window(decl: &[Option<usize>], sel: &[bool], ty: usize) -> bool {
    decl[ty].is_none_or(|k| sel[k])
}

/// Selects the enclosing member types of selected segments and every initializer block of a type in
/// the window; whether anything was new.
fn close_over_types(layout: &Layout, decl: &[Option<usize>], sel: &mut [bool]) -> bool {
    let mut grew = false;
    // Segments come after the segment that declares their type: one backward pass reaches the top.
    for k in (0..layout.segments.len()).rev() {
        if sel[k]
            && let Some(d) = decl[layout.segments[k].ty]
            && !sel[d]
        {
            sel[d] = true;
            grew = true;
        }
    }
    // Initializer blocks of one kind share a key only when a type has several of them.
    let mut count: std::collections::HashMap<(usize, bool), usize> =
        std::collections::HashMap::new();
    for seg in layout.segments.iter().filter(|s| s.initializer) {
        *count.entry((seg.ty, seg.static_initializer)).or_default() += 1;
    }
    for k in 0..layout.segments.len() {
        let seg = &layout.segments[k];
        // An enum's constant list is structure: without it the first member in the window would
        // be read as a constant (`E() { }` parses as one).
        let needed =
            seg.constants || (seg.initializer && count[&(seg.ty, seg.static_initializer)] > 1);
        if !sel[k] && needed && type_in_window(decl, sel, seg.ty) {
            sel[k] = true;
            grew = true;
        }
    }
    grew
}

/// The segments left out of the window whose type is in it (a left-out member type covers its own
/// segments), in source order.
fn left_out(layout: &Layout, decl: &[Option<usize>], sel: &[bool]) -> Vec<usize> {
    (0..layout.segments.len())
        .filter(|&k| !sel[k] && type_in_window(decl, sel, layout.segments[k].ty))
        .collect()
}

/// Names and kinds of the types enclosing `ty`, outermost first, with `ty` itself.
fn type_path(layout: &Layout, ty: usize) -> Vec<(&str, crate::java_layout::TypeKind)> {
    let mut path = Vec::new();
    let mut t = Some(ty);
    while let Some(i) = t {
        let d = &layout.types[i];
        path.push((d.name.as_str(), d.kind));
        t = d.parent;
    }
    path.reverse();
    path
}

/// The rows of each segment that belong to it alone: all of them, except for a member type, whose
/// body rows belong to its own segments: its header and its closing brace.
fn own_spans(layout: &Layout) -> Vec<[(usize, usize); 2]> {
    layout
        .segments
        .iter()
        .map(|seg| match seg.nested {
            Some(t) => {
                let d = &layout.types[t];
                let close = layout.row(d.close.start);
                [
                    (layout.row(d.header.start), layout.row(d.header.end - 1)),
                    (close, close),
                ]
            }
            None => [seg.rows, seg.rows],
        })
        .collect()
}

/// Selects the segments of `to` that the selected segments of `from` align with; whether any was new.
fn spread(
    from: &[[(usize, usize); 2]],
    sel_from: &[bool],
    runs: &[(usize, usize, usize)],
    other_rows: usize,
    to: &[[(usize, usize); 2]],
    sel_to: &mut [bool],
) -> bool {
    let mut grew = false;
    for (spans, _) in from.iter().zip(sel_from).filter(|(_, s)| **s) {
        for span in spans {
            let (lo, hi) = map_rows(runs, span.0, span.1, other_rows);
            for (k, other) in to.iter().enumerate() {
                if !sel_to[k] && other.iter().any(|r| overlaps(*r, lo, hi)) {
                    sel_to[k] = true;
                    grew = true;
                }
            }
        }
    }
    grew
}

fn touched(rows: (usize, usize), changed: &[usize]) -> bool {
    let i = changed.partition_point(|r| *r < rows.0);
    i < changed.len() && changed[i] <= rows.1
}

fn overlaps(rows: (usize, usize), lo: usize, hi: usize) -> bool {
    rows.0 <= hi && rows.1 >= lo
}

fn row_count(src: &[u8]) -> usize {
    src.iter().filter(|b| **b == b'\n').count() + 1
}

/// Decides a modified Java file (see the module docs). `stats` accumulates the work done.
pub fn judge_java(
    analyzer: &mut Analyzer,
    change: &Modified,
    stats: &mut WindowStats,
) -> Result<Windowed, LangError> {
    if analyzer.language() != Language::Java {
        return Ok(Windowed::NeedsFullParse);
    }
    stats.file_bytes += (change.old.len() + change.new.len()) as u64;
    let (Some(la), Some(lb)) = (Layout::scan(change.old), Layout::scan(change.new)) else {
        stats.refused_scan += 1;
        return Ok(Windowed::NeedsFullParse);
    };
    // 1. Tokens (`>>` read as two `>`, as tree-sitter reads generics).
    let all = |l: &Layout| 0..l.tokens.len();
    if same_token_lists((&la, change.old, all(&la)), (&lb, change.new, all(&lb))) {
        stats.by_tokens += 1;
        return Ok(Windowed::Decided(FileChange::NotSemantic(
            NonSemantic::WhitespaceOrComment,
        )));
    }
    if same_token_lists(
        (&la, change.old, code_tokens(&la)),
        (&lb, change.new, code_tokens(&lb)),
    ) {
        stats.by_tokens += 1;
        return Ok(Windowed::Decided(FileChange::NotSemantic(
            if la.package != lb.package {
                NonSemantic::RenameOnly
            } else {
                NonSemantic::ImportOnly
            },
        )));
    }
    // 2. Windows.
    if duplicate_signatures(&la, change.old) || duplicate_signatures(&lb, change.new) {
        stats.refused_pairing += 1;
        return Ok(Windowed::NeedsFullParse);
    }
    let (rows_a, rows_b) = (row_count(change.old), row_count(change.new));
    let runs_ab = unchanged_runs(rows_a, rows_b, change.deleted, change.added);
    let runs_ba: Vec<(usize, usize, usize)> = runs_ab.iter().map(|r| (r.1, r.0, r.2)).collect();
    let (spans_a, spans_b) = (own_spans(&la), own_spans(&lb));
    let mut sel_a: Vec<bool> = spans_a
        .iter()
        .map(|sp| sp.iter().any(|r| touched(*r, change.deleted)))
        .collect();
    let mut sel_b: Vec<bool> = spans_b
        .iter()
        .map(|sp| sp.iter().any(|r| touched(*r, change.added)))
        .collect();
    let (decl_a, decl_b) = (declaring_segments(&la), declaring_segments(&lb));
    loop {
        let mut grew = close_over_types(&la, &decl_a, &mut sel_a);
        grew |= close_over_types(&lb, &decl_b, &mut sel_b);
        grew |= spread(&spans_a, &sel_a, &runs_ab, rows_b, &spans_b, &mut sel_b);
        grew |= spread(&spans_b, &sel_b, &runs_ba, rows_a, &spans_a, &mut sel_a);
        if !grew {
            break;
        }
    }
    let left_a = left_out(&la, &decl_a, &sel_a);
    let left_b = left_out(&lb, &decl_b, &sel_b);
    if left_a.len() != left_b.len()
        || left_a.iter().zip(&left_b).any(|(&a, &b)| {
            let (x, y) = (&la.segments[a], &lb.segments[b]);
            x.constants != y.constants
                || change.old[x.bytes.clone()] != change.new[y.bytes.clone()]
                || type_path(&la, x.ty) != type_path(&lb, y.ty)
        })
    {
        stats.refused_pairing += 1;
        return Ok(Windowed::NeedsFullParse);
    }
    // 2b. Bodies from tokens.
    if let Some(names) = bodies_from_tokens(
        (&la, change.old, &sel_a, change.deleted),
        (&lb, change.new, &sel_b, change.added),
    ) {
        stats.by_body_tokens += 1;
        return Ok(if names.is_empty() {
            stats.no_unit_changed += 1;
            no_unit_changed()
        } else {
            Windowed::Decided(FileChange::Semantic(names))
        });
    }
    // 3. Parse the windows.
    let mut summaries = Vec::with_capacity(2);
    for (layout, sel, src) in [(&la, &sel_a, change.old), (&lb, &sel_b, change.new)] {
        let ranges = window_ranges(layout, sel);
        stats.parsed_bytes += ranges
            .iter()
            .map(|r| (r.end_byte - r.start_byte) as u64)
            .sum::<u64>();
        let tree = analyzer.parse_included(src, &ranges)?;
        if tree.root_node().has_error() {
            stats.refused_errors += 1;
            return Ok(Windowed::NeedsFullParse);
        }
        let mut summary = analyzer.summary_from_tree(tree, src);
        summary.package = layout.package.clone();
        summaries.push(summary);
    }
    let result = compare(
        Language::Java,
        Some(Side {
            summary: &summaries[0],
            path: change.old_path,
            rows: change.deleted,
        }),
        Some(Side {
            summary: &summaries[1],
            path: change.new_path,
            rows: change.added,
        }),
    );
    Ok(match result {
        FileChange::Semantic(_) => {
            stats.by_windows += 1;
            Windowed::Decided(result)
        }
        FileChange::NotSemantic(_) => {
            stats.no_unit_changed += 1;
            no_unit_changed()
        }
    })
}

/// The answer when no unit changed and step 1 found the token lists different, with and without
/// imports: the whole-file comparison then finds the token hashes different too (tree-sitter's
/// leaves are these tokens, `>>` split in generics), so the change touched declarations only.
fn no_unit_changed() -> Windowed {
    Windowed::Decided(FileChange::NotSemantic(NonSemantic::NoBodyChange))
}

/// Token `t`'s text with `>>` and `>>>` as repeated `>`: (repeats, text).
fn split_shift<'s>(l: &Layout, src: &'s [u8], t: usize) -> (usize, &'s [u8]) {
    let text = l.token_text(src, t);
    match text {
        b">>" => (2, &b">"[..]),
        b">>>" => (3, &b">"[..]),
        _ => (1, text),
    }
}

/// Whether two token lists read the same, `>>` and `>>>` split into `>`s.
fn same_token_lists(
    (la, sa, ta): (&Layout, &[u8], impl Iterator<Item = usize>),
    (lb, sb, tb): (&Layout, &[u8], impl Iterator<Item = usize>),
) -> bool {
    let mut a = ta.flat_map(|t| {
        let (n, text) = split_shift(la, sa, t);
        std::iter::repeat_n(text, n)
    });
    let mut b = tb.flat_map(|t| {
        let (n, text) = split_shift(lb, sb, t);
        std::iter::repeat_n(text, n)
    });
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) if x == y => {}
            _ => return false,
        }
    }
}

/// One side of [`bodies_from_tokens`]: layout, source, selected segments, changed rows.
type TokenSide<'a> = (&'a Layout, &'a [u8], &'a [bool], &'a [usize]);

/// Java modifiers that may precede a member's type or name.
const MODIFIERS: [&[u8]; 13] = [
    b"public",
    b"protected",
    b"private",
    b"static",
    b"final",
    b"abstract",
    b"synchronized",
    b"native",
    b"strictfp",
    b"default",
    b"transient",
    b"volatile",
    b"sealed",
];

/// A method or constructor declaration with a body, seen through its tokens.
struct BodyMember {
    /// Tokens before the body's `{`.
    header: std::ops::Range<usize>,
    /// Tokens of the body, braces included.
    body: std::ops::Range<usize>,
    /// `<init>` for a constructor, else the method's name.
    member: String,
    /// Tokens of the parameter list, parentheses included.
    params: std::ops::Range<usize>,
}

/// Reads a segment as a method or constructor declaration with a body; `None` for anything else
/// (fields, initializers, member types, records, odd headers).
fn body_member(layout: &Layout, src: &[u8], seg: usize) -> Option<BodyMember> {
    let s = &layout.segments[seg];
    if s.nested.is_some() || s.initializer || s.constants {
        return None;
    }
    let toks = layout.tokens_in(&s.bytes);
    let text = |t: usize| layout.token_text(src, t);
    if toks.is_empty() || text(toks.end - 1) != b"}" {
        return None;
    }
    // Skip annotations and modifiers, then an optional type-parameter list.
    let mut t = toks.start;
    let mut rest_start = None;
    while t < toks.end {
        match text(t) {
            b"@" => t = layout.skip_annotation(src, t, toks.end)?,
            w if MODIFIERS.contains(&w) => t += 1,
            _ => {
                rest_start = Some(t);
                break;
            }
        }
    }
    let mut t = rest_start?;
    if text(t) == b"<" {
        let mut depth = 0i32;
        while t < toks.end {
            match text(t) {
                b"<" => depth += 1,
                b">" => depth -= 1,
                b">>" => depth -= 2,
                b">>>" => depth -= 3,
                b"(" | b"{" | b";" => return None,
                _ => {}
            }
            t += 1;
            if depth <= 0 {
                break;
            }
        }
        if depth != 0 {
            return None;
        }
    }
    let type_start = t;
    // The name is the word before the parameter list: the first `(`.
    while t < toks.end && text(t) != b"(" {
        match text(t) {
            b"{" | b"}" | b";" | b"=" | b"@" | b"class" | b"interface" | b"enum" | b"record" => {
                return None;
            }
            _ => t += 1,
        }
    }
    if t >= toks.end || t == type_start || layout.tokens[t - 1].kind != TokKind::Word {
        return None;
    }
    let name_tok = t - 1;
    let after_params = layout.skip_group_before(src, t, toks.end)?;
    // Then only `throws` clauses or array dimensions up to the body.
    let mut b = after_params;
    while b < toks.end && text(b) != b"{" {
        match layout.tokens[b].kind {
            TokKind::Word => {}
            TokKind::Punct if matches!(text(b), b"." | b"," | b"[" | b"]" | b"<" | b">" | b"?") => {
            }
            _ => return None,
        }
        b += 1;
    }
    if b >= toks.end || layout.skip_group_before(src, b, toks.end)? != toks.end {
        return None;
    }
    let constructor = name_tok == type_start;
    let name = String::from_utf8_lossy(text(name_tok)).into_owned();
    let member = if constructor {
        if name != layout.types[s.ty].name {
            return None;
        }
        "<init>".to_string()
    } else {
        name
    };
    Some(BodyMember {
        header: toks.start..b,
        body: b..toks.end,
        member,
        params: t..after_params,
    })
}

/// A method's signature as tree-sitter's unit key sees it: its name and the tokens of its parameter
/// types (annotations, `final` and parameter names left out).
fn signature(layout: &Layout, src: &[u8], m: &BodyMember) -> Vec<u8> {
    let text = |t: usize| layout.token_text(src, t);
    let mut key = m.member.as_bytes().to_vec();
    key.push(b'(');
    // Split the parameters at commas outside generics.
    let inner = m.params.start + 1..m.params.end.saturating_sub(1);
    let mut params: Vec<Vec<usize>> = vec![Vec::new()];
    let mut angle = 0i32;
    for t in inner {
        match text(t) {
            b"<" => angle += 1,
            b">" => angle -= 1,
            b">>" => angle -= 2,
            b">>>" => angle -= 3,
            b"," if angle == 0 => {
                params.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(p) = params.last_mut() {
            p.push(t);
        }
    }
    for p in params.iter().filter(|p| !p.is_empty()) {
        let mut toks: &[usize] = p;
        // Trailing dimensions after the name, then the name itself.
        while toks.len() >= 2
            && text(toks[toks.len() - 1]) == b"]"
            && text(toks[toks.len() - 2]) == b"["
        {
            toks = &toks[..toks.len() - 2];
        }
        if let Some((_, ty)) = toks.split_last() {
            let mut k = 0;
            while k < ty.len() {
                match text(ty[k]) {
                    b"final" => k += 1,
                    b"@" => {
                        // `ty` holds consecutive token indices.
                        let end = ty[ty.len() - 1] + 1;
                        k = layout
                            .skip_annotation(src, ty[k], end)
                            .map_or(ty.len(), |after| k + (after - ty[k]));
                    }
                    w => {
                        key.extend_from_slice(w);
                        key.push(b' ');
                        k += 1;
                    }
                }
            }
        }
        key.push(b',');
    }
    key
}

/// Whether some type declares two methods or constructors with the same signature as the unit keys
/// see it — a file that does not compile (bad merges in old history), or generic overloads such as
/// `<T extends List<?>> T m(T x)` beside `<T extends Map<?, ?>> T m(T x)`: such units share a key,
/// which only a whole-file parse numbers right.
fn duplicate_signatures(layout: &Layout, src: &[u8]) -> bool {
    let mut seen = std::collections::HashSet::new();
    (0..layout.segments.len()).any(|k| {
        body_member(layout, src, k)
            .is_some_and(|m| !seen.insert((layout.segments[k].ty, signature(layout, src, &m))))
    })
}

fn same_tokens(
    (la, sa): (&Layout, &[u8]),
    ra: std::ops::Range<usize>,
    (lb, sb): (&Layout, &[u8]),
    rb: std::ops::Range<usize>,
) -> bool {
    same_token_lists((la, sa, ra), (lb, sb, rb))
}

/// The window comparison without a parser, when every selected segment pairs up in order with one
/// of the other version of the same kind and type: member types with the same header tokens,
/// method and constructor declarations with the same header tokens (so the same key), anything
/// else token-identical. A method or constructor then changed exactly when a changed row falls in
/// its body on either side and the body's tokens differ. Returns the changed members' qualified
/// names (sorted; empty when none changed), or `None` when the segments do not pair up this way.
fn bodies_from_tokens(a: TokenSide, b: TokenSide) -> Option<Vec<String>> {
    let (la, sa, sel_a, rows_a) = a;
    let (lb, sb, sel_b, rows_b) = b;
    let picked_a: Vec<usize> = (0..la.segments.len()).filter(|k| sel_a[*k]).collect();
    let picked_b: Vec<usize> = (0..lb.segments.len()).filter(|k| sel_b[*k]).collect();
    if picked_a.len() != picked_b.len() || la.package != lb.package {
        return None;
    }
    let mut names = Vec::new();
    for (&x, &y) in picked_a.iter().zip(&picked_b) {
        let (gx, gy) = (&la.segments[x], &lb.segments[y]);
        if gx.constants != gy.constants
            || gx.initializer != gy.initializer
            || gx.nested.is_some() != gy.nested.is_some()
            || type_path(la, gx.ty) != type_path(lb, gy.ty)
        {
            return None;
        }
        if let (Some(tx), Some(ty)) = (gx.nested, gy.nested) {
            let hx = la.tokens_in(&la.types[tx].header);
            let hy = lb.tokens_in(&lb.types[ty].header);
            if !same_tokens((la, sa), hx, (lb, sb), hy) {
                return None;
            }
            continue;
        }
        let (rx, ry) = (la.tokens_in(&gx.bytes), lb.tokens_in(&gy.bytes));
        if same_tokens((la, sa), rx.clone(), (lb, sb), ry.clone()) {
            continue; // same units, same hashes
        }
        let (Some(mx), Some(my)) = (body_member(la, sa, x), body_member(lb, sb, y)) else {
            return None;
        };
        if mx.member != my.member || !same_tokens((la, sa), mx.header, (lb, sb), my.header) {
            return None;
        }
        let span = |l: &Layout, body: &std::ops::Range<usize>| {
            (
                l.row(l.tokens[body.start].start as usize),
                l.row(l.tokens[body.end - 1].start as usize),
            )
        };
        let touched_here =
            touched(span(la, &mx.body), rows_a) || touched(span(lb, &my.body), rows_b);
        if touched_here && !same_tokens((la, sa), mx.body, (lb, sb), my.body) {
            let owner: Vec<&str> = type_path(lb, gy.ty).iter().map(|(n, _)| *n).collect();
            let unit = format!("{}#{}", owner.join("."), my.member);
            names.push(match &lb.package {
                Some(p) if !p.is_empty() => format!("{p}.{unit}"),
                _ => unit,
            });
        }
    }
    names.sort();
    names.dedup();
    Some(names)
}

/// Included ranges of a window: each top-level type's header, its selected segments (a selected
/// member type contributes its header, its own selected segments and its closing brace), its closing
/// brace.
fn window_ranges(layout: &Layout, sel: &[bool]) -> Vec<TsRange> {
    let range = |s: usize, e: usize| {
        let (r0, c0) = layout.point(s);
        let (r1, c1) = layout.point(e);
        TsRange {
            start_byte: s,
            end_byte: e,
            start_point: Point {
                row: r0,
                column: c0,
            },
            end_point: Point {
                row: r1,
                column: c1,
            },
        }
    };
    fn add_type(
        layout: &Layout,
        sel: &[bool],
        ty: usize,
        range: &dyn Fn(usize, usize) -> TsRange,
        out: &mut Vec<TsRange>,
    ) {
        let decl = &layout.types[ty];
        out.push(range(decl.header.start, decl.header.end));
        let mut k = decl.segments.start;
        while k < decl.segments.end {
            let seg = &layout.segments[k];
            match seg.nested {
                Some(inner) => {
                    if sel[k] {
                        add_type(layout, sel, inner, range, out);
                    }
                    // Skip the member type's own segments.
                    k = layout.types[inner].segments.end;
                    continue;
                }
                None if sel[k] => out.push(range(seg.bytes.start, seg.bytes.end)),
                None => {}
            }
            k += 1;
        }
        out.push(range(decl.close.start, decl.close.end));
    }
    let mut out = Vec::new();
    for ty in (0..layout.types.len()).filter(|t| layout.types[*t].parent.is_none()) {
        add_type(layout, sel, ty, &range, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_mapping() {
        // old: 0 1 2 3 4 ; row 2 replaced by two rows, row 4 deleted.
        let runs = unchanged_runs(5, 5, &[2, 4], &[2, 3]);
        assert_eq!(runs, vec![(0, 0, 2), (3, 4, 1)]);
        assert_eq!(map_rows(&runs, 0, 1, 5), (0, 1));
        assert_eq!(map_rows(&runs, 2, 2, 5), (2, 3));
        assert_eq!(map_rows(&runs, 1, 3, 5), (1, 4));
        assert_eq!(map_rows(&runs, 4, 4, 5), (5, 4));
        // Rows 2 and 3 of the new version replace row 2 of the old one.
        let back: Vec<_> = runs.iter().map(|r| (r.1, r.0, r.2)).collect();
        assert_eq!(map_rows(&back, 2, 3, 5), (2, 2));
        // Pure insertions align with nothing.
        let inserted = [(0, 0, 2), (4, 2, 3)];
        assert_eq!(map_rows(&inserted, 2, 3, 5), (2, 1));
    }
}
