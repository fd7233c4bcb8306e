//! A small Java lexer and the member layout of a file, for deciding most changes without parsing
//! whole files.
//!
//! [`Layout::scan`] splits a Java source into maximal-munch tokens (whitespace and comments dropped;
//! string, character and text-block literals are single tokens) and finds the top-level type
//! declarations and the *segments* of their bodies: one per member declaration (field, method,
//! constructor, initializer block, nested type), and one for an enum's constant list. Every
//! semantic unit of the file (see [`crate::semantic`]) lies inside exactly one segment, and Java
//! parses a member independently of its neighbours, so a parser given only the type headers and
//! some segments builds the same subtrees for those members as for the whole file.
//!
//! The scan is deliberately conservative: anything it does not fully understand (records at the
//! top level, unbalanced brackets, unterminated literals or comments, merge-conflict markers, a
//! comment inside the package name) makes it return `None`, and callers then parse the whole file.

use std::ops::Range;

/// Kind of a token (only what the layout and the token comparison need).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    /// Identifier or keyword.
    Word,
    /// Numeric literal.
    Number,
    /// String, character or text-block literal.
    Literal,
    /// Operator or separator (maximal munch).
    Punct,
}

/// One token: its kind and byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// Kind.
    pub kind: TokKind,
    /// Start byte.
    pub start: u32,
    /// End byte (exclusive).
    pub end: u32,
    /// +1 for an opening bracket (`(`, `[`, `{`), -1 for a closing one, else 0.
    pub bracket: i8,
}

/// Kind of a top-level type declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeKind {
    /// `class`.
    Class,
    /// `interface`.
    Interface,
    /// `enum`.
    Enum,
    /// `@interface`.
    Annotation,
}

/// A type declaration: top-level, or a member of another type's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeDecl {
    /// Kind.
    pub kind: TypeKind,
    /// Simple name.
    pub name: String,
    /// Bytes from the declaration's first token (modifiers, annotations) to its body's `{` inclusive.
    pub header: Range<usize>,
    /// The body's closing `}`.
    pub close: Range<usize>,
    /// Indices of this type's segments in [`Layout::segments`] (its nested types' segments included).
    pub segments: Range<usize>,
    /// The enclosing type of a member type.
    pub parent: Option<usize>,
}

/// A member declaration of a type body (or an enum's constant list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Index of the enclosing type in [`Layout::types`].
    pub ty: usize,
    /// From the member's first token to its terminator (`;` or `}`) inclusive.
    pub bytes: Range<usize>,
    /// Rows (0-based, inclusive) of the first and last byte.
    pub rows: (usize, usize),
    /// An initializer block (`{ ... }` or `static { ... }`): several of one kind in a type share a
    /// key (`<instinit>`, `<clinit>`, numbered `~N`).
    pub initializer: bool,
    /// A `static` initializer block.
    pub static_initializer: bool,
    /// An enum's constant list.
    pub constants: bool,
    /// The type this member declares, when it is a class, interface, enum or annotation type
    /// (its body is segmented in turn).
    pub nested: Option<usize>,
}

/// Tokens and member layout of one Java source.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Tokens in source order.
    pub tokens: Vec<Token>,
    /// `package` name with whitespace removed, if declared.
    pub package: Option<String>,
    /// Token index ranges of the `package` and `import` declarations (from keyword to `;`).
    pub imports: Vec<Range<usize>>,
    /// Types in source order (an enclosing type before its members).
    pub types: Vec<TypeDecl>,
    /// Segments of all type bodies, in source order (a member type's segment before its own).
    pub segments: Vec<Segment>,
    line_starts: Vec<usize>,
}

/// Length of the operator or separator at `src[i..]` (maximal munch over Java's operators).
fn op_len(src: &[u8], i: usize) -> usize {
    let at = |k: usize| src.get(i + k).copied().unwrap_or(0);
    match (src[i], at(1), at(2), at(3)) {
        (b'>', b'>', b'>', b'=') => 4,
        (b'>', b'>', b'>' | b'=', _) | (b'<', b'<', b'=', _) | (b'.', b'.', b'.', _) => 3,
        (b'-', b'>' | b'-' | b'=', _, _)
        | (b':', b':', _, _)
        | (b'+', b'+' | b'=', _, _)
        | (b'&', b'&' | b'=', _, _)
        | (b'|', b'|' | b'=', _, _)
        | (b'<', b'<' | b'=', _, _)
        | (b'>', b'>' | b'=', _, _)
        | (b'=' | b'!' | b'*' | b'/' | b'%' | b'^', b'=', _, _) => 2,
        _ => 1,
    }
}

/// Modifiers a type declaration may carry (`non-sealed` is three tokens: such files are parsed
/// whole).
const TYPE_MODIFIERS: [&[u8]; 8] = [
    b"public",
    b"protected",
    b"private",
    b"abstract",
    b"static",
    b"final",
    b"strictfp",
    b"sealed",
];

/// Byte classes of the lexer: whitespace, identifier bytes, anything else.
const WS: u8 = 1;
const WORD: u8 = 2;
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c == b' ' || c == b'\t' || c == b'\n' || c == b'\r' || c == 0x0c {
            WS
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 {
            WORD
        } else {
            0
        };
        b += 1;
    }
    t
};

fn is_word_byte(b: u8) -> bool {
    CLASS[b as usize] == WORD
}

/// Tokenises `src`; `None` on an unterminated comment or literal.
fn lex(src: &[u8]) -> Option<Vec<Token>> {
    let mut out = Vec::with_capacity(src.len() / 5);
    let n = src.len();
    let close_comment = memchr::memmem::Finder::new(b"*/");
    let mut i = 0;
    while i < n {
        let c = src[i];
        if CLASS[c as usize] == WS {
            i += 1;
            while i < n && CLASS[src[i] as usize] == WS {
                i += 1;
            }
            continue;
        }
        let start = i;
        let kind = match c {
            b'/' if src.get(i + 1) == Some(&b'/') => {
                i = memchr::memchr(b'\n', &src[i..]).map_or(n, |k| i + k);
                continue;
            }
            b'/' if src.get(i + 1) == Some(&b'*') => {
                let end = close_comment.find(&src[i + 2..])?;
                i += 2 + end + 2;
                continue;
            }
            b'"' if src[i..].starts_with(b"\"\"\"") => {
                // Text block: ends at the next `"""` not escaped by a backslash.
                i += 3;
                loop {
                    match src.get(i)? {
                        b'\\' => i += 2,
                        b'"' if src[i..].starts_with(b"\"\"\"") => {
                            i += 3;
                            break;
                        }
                        _ => i += 1,
                    }
                }
                TokKind::Literal
            }
            b'"' | b'\'' => {
                i += 1;
                loop {
                    match *src.get(i)? {
                        b'\\' => i += 2,
                        b'\n' => return None,
                        q if q == c => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
                TokKind::Literal
            }
            b'0'..=b'9' => {
                i = number_end(src, i);
                TokKind::Number
            }
            b'.' if src.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i = number_end(src, i);
                TokKind::Number
            }
            _ if is_word_byte(c) => {
                while i < n && is_word_byte(src[i]) {
                    i += 1;
                }
                TokKind::Word
            }
            _ => {
                i += op_len(src, i);
                TokKind::Punct
            }
        };
        let (Ok(s), Ok(e)) = (u32::try_from(start), u32::try_from(i.min(n))) else {
            return None;
        };
        if i > n {
            return None;
        }
        let bracket = match (kind, c) {
            (TokKind::Punct, b'(' | b'[' | b'{') => 1,
            (TokKind::Punct, b')' | b']' | b'}') => -1,
            _ => 0,
        };
        out.push(Token {
            kind,
            start: s,
            end: e,
            bracket,
        });
    }
    Some(out)
}

/// End of a numeric literal starting at `i`: digits, letters, `_`, `.`, and a sign after an exponent
/// letter — Java's maximal munch for every valid literal, so that equal token lists mean the same
/// tokens for tree-sitter too.
fn number_end(src: &[u8], mut i: usize) -> usize {
    let n = src.len();
    // A sign continues a literal only after its exponent letter: `p` in hexadecimal floating-point
    // literals (where `e` is a digit: `0x1e+3` is a sum), `e` in decimal ones.
    let hex = src[i] == b'0' && matches!(src.get(i + 1), Some(b'x' | b'X'));
    while i < n {
        let b = src[i];
        let exponent = |prev: u8| {
            if hex {
                matches!(prev, b'p' | b'P')
            } else {
                matches!(prev, b'e' | b'E')
            }
        };
        let sign = (b == b'+' || b == b'-') && exponent(src[i - 1]);
        if !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || sign) {
            break;
        }
        i += 1;
    }
    i
}

impl Layout {
    /// Scans `src`; `None` when the file is outside what the layout understands (see the module docs).
    pub fn scan(src: &[u8]) -> Option<Layout> {
        if has_conflict_markers(src) {
            return None;
        }
        let tokens = lex(src)?;
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', src).map(|i| i + 1));
        let mut layout = Layout {
            tokens,
            package: None,
            imports: Vec::new(),
            types: Vec::new(),
            segments: Vec::new(),
            line_starts,
        };
        layout.structure(src)?;
        Some(layout)
    }

    /// Indices of the tokens inside `bytes` (token boundaries).
    pub fn tokens_in(&self, bytes: &Range<usize>) -> Range<usize> {
        let start = self
            .tokens
            .partition_point(|t| (t.start as usize) < bytes.start);
        let end = self
            .tokens
            .partition_point(|t| (t.end as usize) <= bytes.end);
        start..end.max(start)
    }

    /// Text of token `t`.
    pub fn token_text<'s>(&self, src: &'s [u8], t: usize) -> &'s [u8] {
        self.text(src, t)
    }

    /// The 0-based row of byte `at`.
    pub fn row(&self, at: usize) -> usize {
        self.line_starts.partition_point(|s| *s <= at) - 1
    }

    /// Row and column (bytes) of byte `at`.
    pub fn point(&self, at: usize) -> (usize, usize) {
        let row = self.row(at);
        (row, at - self.line_starts[row])
    }

    fn text<'s>(&self, src: &'s [u8], t: usize) -> &'s [u8] {
        let tok = self.tokens[t];
        &src[tok.start as usize..tok.end as usize]
    }

    fn is(&self, src: &[u8], t: usize, text: &[u8]) -> bool {
        t < self.tokens.len() && self.text(src, t) == text
    }

    /// Index of the token after the bracket that closes the one opened at `t`.
    fn skip_group(&self, src: &[u8], t: usize) -> Option<usize> {
        self.skip_group_before(src, t, self.tokens.len())
    }

    /// Index of the token after the bracket that closes the one opened at token `t`, looking no
    /// further than token `end`; `None` when it is not closed there.
    pub fn skip_group_before(&self, src: &[u8], t: usize, end: usize) -> Option<usize> {
        let _ = src;
        let mut depth = 0i64;
        for (k, tok) in self.tokens[..end.min(self.tokens.len())]
            .iter()
            .enumerate()
            .skip(t)
        {
            depth += i64::from(tok.bracket);
            if depth < 0 {
                return None;
            }
            if depth == 0 && tok.bracket < 0 {
                return Some(k + 1);
            }
        }
        None
    }

    fn structure(&mut self, src: &[u8]) -> Option<()> {
        let n = self.tokens.len();
        let mut t = 0;
        while t < n {
            let first = t;
            if self.is(src, t, b";") {
                t += 1;
                continue;
            }
            // Annotations and modifiers, then `package`, `import` or a type keyword.
            let mut k = t;
            let mut kind = None;
            loop {
                if k >= n {
                    return None;
                }
                if self.is(src, k, b"@") {
                    if self.is(src, k + 1, b"interface") {
                        kind = Some(TypeKind::Annotation);
                        k += 2;
                        break;
                    }
                    k = self.skip_annotation(src, k, n)?;
                    continue;
                }
                if self.tokens[k].kind != TokKind::Word {
                    return None;
                }
                match self.text(src, k) {
                    b"package" | b"import" => break,
                    b"class" => kind = Some(TypeKind::Class),
                    b"interface" => kind = Some(TypeKind::Interface),
                    b"enum" => kind = Some(TypeKind::Enum),
                    // Records (and anything unknown at the top level): parse whole files.
                    w if TYPE_MODIFIERS.contains(&w) => {}
                    // Records, modules and anything that is not a modifier (a syntax error):
                    // parse whole files.
                    _ => return None,
                }
                k += 1;
                if kind.is_some() {
                    break;
                }
            }
            let Some(kind) = kind else {
                // package / import declaration up to `;`.
                let is_package = self.is(src, k, b"package");
                let mut e = k;
                while e < n && !self.is(src, e, b";") {
                    e += 1;
                }
                if e >= n {
                    return None;
                }
                if is_package {
                    if self.package.is_some() {
                        return None;
                    }
                    let name_bytes =
                        &src[self.tokens[k].end as usize..self.tokens[e].start as usize];
                    let name: String = String::from_utf8_lossy(name_bytes)
                        .split_whitespace()
                        .collect();
                    if name.contains('/') || name.is_empty() {
                        return None;
                    }
                    self.package = Some(name);
                }
                // Annotations before `package` belong to the declaration (package-info.java).
                self.imports.push(first..e + 1);
                t = e + 1;
                continue;
            };
            if k >= n || self.tokens[k].kind != TokKind::Word {
                return None;
            }
            let name = String::from_utf8_lossy(self.text(src, k)).into_owned();
            // Up to the body's `{` at bracket depth 0 (type parameters use `<>`, not brackets).
            let b = self.scan_until(src, k + 1, &[b"{"], &[b";"])?;
            let close = self.type_decl(src, kind, name, first, b, None)?;
            t = close + 1;
        }
        Some(())
    }

    fn push_segment(
        &mut self,
        ty: usize,
        from: usize,
        to: usize,
        initializer: bool,
        constants: bool,
    ) -> usize {
        let s = self.tokens[from].start as usize;
        let e = self.tokens[to].end as usize;
        self.segments.push(Segment {
            ty,
            bytes: s..e,
            rows: (self.row(s), self.row(e - 1)),
            initializer,
            static_initializer: false,
            constants,
            nested: None,
        });
        self.segments.len() - 1
    }

    /// Index of the token after the annotation whose `@` is token `at` (a qualified name and
    /// optional arguments), looking no further than token `end`; `None` when its arguments do not
    /// close there.
    pub fn skip_annotation(&self, src: &[u8], at: usize, end: usize) -> Option<usize> {
        let end = end.min(self.tokens.len());
        let mut k = at + 2;
        while k < end && self.text(src, k) == b"." {
            k += 2;
        }
        if k < end && self.text(src, k) == b"(" {
            k = self.skip_group_before(src, k, end)?;
        }
        Some(k)
    }

    /// Index of the first token from `from` on that is one of `stop`, skipping bracket groups;
    /// `None` at one of `fail`, at an unmatched closing bracket or at the end.
    fn scan_until(&self, src: &[u8], from: usize, stop: &[&[u8]], fail: &[&[u8]]) -> Option<usize> {
        let mut t = from;
        while t < self.tokens.len() {
            let text = self.text(src, t);
            if stop.contains(&text) {
                return Some(t);
            }
            match self.tokens[t].bracket {
                _ if fail.contains(&text) => return None,
                1 => t = self.skip_group(src, t)?,
                -1 => return None,
                _ => t += 1,
            }
        }
        None
    }

    /// Records a type whose declaration starts at token `first` and whose body opens at token
    /// `open`, segments its body and returns the index of the closing `}`.
    fn type_decl(
        &mut self,
        src: &[u8],
        kind: TypeKind,
        name: String,
        first: usize,
        open: usize,
        parent: Option<usize>,
    ) -> Option<usize> {
        let ty = self.types.len();
        let seg_start = self.segments.len();
        self.types.push(TypeDecl {
            kind,
            name,
            header: self.tokens[first].start as usize..self.tokens[open].end as usize,
            close: 0..0,
            segments: seg_start..seg_start,
            parent,
        });
        let close = self.body(src, ty, open, kind == TypeKind::Enum)?;
        let decl = &mut self.types[ty];
        decl.close = self.tokens[close].start as usize..self.tokens[close].end as usize;
        decl.segments = seg_start..self.segments.len();
        Some(close)
    }

    /// The kind and name of a member type declared by tokens `from..to` (its header), if any.
    /// Only annotations and modifiers may come before the keyword; anything else is not read as a
    /// member type (a method, or a syntax error that whole-file parses will meet).
    fn member_type(&self, src: &[u8], from: usize, to: usize) -> Option<(TypeKind, String)> {
        let mut k = from;
        while k < to {
            let kind = match self.text(src, k) {
                b"class" => Some(TypeKind::Class),
                b"@" if self.is(src, k + 1, b"interface") => {
                    k += 1;
                    Some(TypeKind::Annotation)
                }
                b"interface" => Some(TypeKind::Interface),
                b"enum" => Some(TypeKind::Enum),
                b"@" => {
                    k = self.skip_annotation(src, k, self.tokens.len())?;
                    continue;
                }
                w if TYPE_MODIFIERS.contains(&w) => None,
                _ => return None,
            };
            if let Some(kind) = kind {
                let name = self.tokens.get(k + 1).filter(|t| t.kind == TokKind::Word)?;
                let name = &src[name.start as usize..name.end as usize];
                return Some((kind, String::from_utf8_lossy(name).into_owned()));
            }
            k += 1;
        }
        None
    }

    /// Segments the body opened by the `{` at token `open`; returns the index of its closing `}`.
    fn body(&mut self, src: &[u8], ty: usize, open: usize, is_enum: bool) -> Option<usize> {
        let n = self.tokens.len();
        let mut t = open + 1;
        if is_enum {
            // Constants up to the first `;` at this level, or to the closing brace.
            let start = t;
            t = self.scan_until(src, t, &[b";", b"}"], &[])?;
            if self.is(src, t, b";") {
                self.push_segment(ty, start, t, false, true);
                t += 1;
            } else if t > start {
                self.push_segment(ty, start, t - 1, false, true);
            }
        }
        'members: loop {
            if t >= n {
                return None;
            }
            if self.is(src, t, b"}") {
                return Some(t);
            }
            if self.is(src, t, b";") {
                // An empty declaration: its own segment keeps the layout total.
                self.push_segment(ty, t, t, false, false);
                t += 1;
                continue;
            }
            let start = t;
            // `=` (a field's initialiser) or `default` after a parameter list (an annotation
            // element's default value) seen: braces belong to a value, the member ends at `;`.
            let mut expression = false;
            let mut parameters = false;
            let mut k = t;
            let end = loop {
                if k >= n {
                    return None;
                }
                if self.tokens[k].kind == TokKind::Punct {
                    match self.text(src, k) {
                        b";" => break k,
                        b"=" => expression = true,
                        b"(" | b"[" => {
                            parameters |= self.is(src, k, b"(");
                            k = self.skip_group(src, k)?;
                            continue;
                        }
                        b"{" if expression => {
                            k = self.skip_group(src, k)?;
                            continue;
                        }
                        b"{" => {
                            if let Some((kind, name)) = self.member_type(src, start, k) {
                                // A member type: its own body is segmented too.
                                let seg = self.push_segment(ty, start, k, false, false);
                                let nested = self.types.len();
                                let close = self.type_decl(src, kind, name, start, k, Some(ty))?;
                                let e = self.tokens[close].end as usize;
                                let rows_end = self.row(e - 1);
                                let segment = &mut self.segments[seg];
                                segment.bytes.end = e;
                                segment.rows.1 = rows_end;
                                segment.nested = Some(nested);
                                t = close + 1;
                                continue 'members;
                            }
                            break self.skip_group(src, k)? - 1;
                        }
                        b"}" | b")" | b"]" => return None,
                        _ => {}
                    }
                } else if parameters && self.is(src, k, b"default") {
                    expression = true;
                }
                k += 1;
            };
            let is_static = self.is(src, start, b"static") && self.is(src, start + 1, b"{");
            let initializer = is_static || self.is(src, start, b"{");
            let seg = self.push_segment(ty, start, end, initializer, false);
            self.segments[seg].static_initializer = is_static;
            t = end + 1;
        }
    }

    /// Token texts (without whitespace and comments) equal in both sources: the files are the same
    /// program, only whitespace or comments changed.
    pub fn same_tokens(&self, src: &[u8], other: &Layout, other_src: &[u8]) -> bool {
        self.tokens.len() == other.tokens.len()
            && self.tokens.iter().zip(&other.tokens).all(|(a, b)| {
                src[a.start as usize..a.end as usize] == other_src[b.start as usize..b.end as usize]
            })
    }

    /// Like [`Layout::same_tokens`] with the `package` and `import` declarations left out.
    pub fn same_code(&self, src: &[u8], other: &Layout, other_src: &[u8]) -> bool {
        let count = |l: &Layout| l.tokens.len() - l.imports.iter().map(|r| r.len()).sum::<usize>();
        if count(self) != count(other) {
            return false;
        }
        code_tokens(self).zip(code_tokens(other)).all(|(x, y)| {
            let (x, y) = (self.tokens[x], other.tokens[y]);
            src[x.start as usize..x.end as usize] == other_src[y.start as usize..y.end as usize]
        })
    }
}

/// Indices of the tokens outside `package` and `import` declarations.
pub(crate) fn code_tokens(l: &Layout) -> impl Iterator<Item = usize> + '_ {
    let mut next = 0usize;
    let imports = &l.imports;
    (0..l.tokens.len()).filter(move |&t| {
        while next < imports.len() && imports[next].end <= t {
            next += 1;
        }
        !(next < imports.len() && imports[next].contains(&t))
    })
}

fn has_conflict_markers(src: &[u8]) -> bool {
    let at_line_start = |i: usize| i == 0 || src[i - 1] == b'\n';
    memchr::memmem::find_iter(src, b"<<<<<<< ").any(at_line_start)
        || memchr::memmem::find_iter(src, b">>>>>>> ").any(at_line_start)
        || memchr::memmem::find_iter(src, b"=======")
            .any(|i| at_line_start(i) && matches!(src.get(i + 7), None | Some(b'\n' | b'\r')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<String> {
        lex(src.as_bytes())
            .unwrap()
            .iter()
            .map(|t| src[t.start as usize..t.end as usize].to_string())
            .collect()
    }

    #[test]
    fn lexes_like_java() {
        assert_eq!(
            texts("a>>>=b; x-- - -y; // c\n s = \"a\\\"b\" + 'c' + '\\'';"),
            vec![
                "a",
                ">>>=",
                "b",
                ";",
                "x",
                "--",
                "-",
                "-",
                "y",
                ";",
                "s",
                "=",
                "\"a\\\"b\"",
                "+",
                "'c'",
                "+",
                "'\\''",
                ";"
            ]
        );
        assert_eq!(
            texts("1.5e+3f 0x1F .5 a.b 0x1e+3 0x1p-3"),
            vec![
                "1.5e+3f", "0x1F", ".5", "a", ".", "b", "0x1e", "+", "3", "0x1p-3"
            ]
        );
        assert_eq!(
            texts("String s = \"\"\"\n  a \"\" \\\"\"\" b\n  \"\"\"; /* x */ y"),
            vec![
                "String",
                "s",
                "=",
                "\"\"\"\n  a \"\" \\\"\"\" b\n  \"\"\"",
                ";",
                "y"
            ]
        );
        assert!(lex(b"/* open").is_none());
        assert!(lex(b"\"open\n\"").is_none());
    }

    const SRC: &str = r#"/* license */
package io.netty . buffer;

import java.util.List;

@Deprecated(since = "4")
public final class A<T extends List<?>> extends B implements C {
    private static final int X = 1, Y = new int[] {1}.length;
    static { init(); }
    { count = 0; }
    /** docs */
    @Override
    public int m(int a) {
        Runnable r = () -> { };
        return a;
    }
    ;
    Object o = new Object() {
        public String toString() { return "}"; }
    };
    interface I { void f(); }
}

enum E {
    ONE(1) { int g() { return 1; } }, TWO(2);
    E(int v) {}
}
"#;

    #[test]
    fn finds_members() {
        let l = Layout::scan(SRC.as_bytes()).unwrap();
        assert_eq!(l.package.as_deref(), Some("io.netty.buffer"));
        assert_eq!(l.imports.len(), 2);
        assert_eq!(l.types.len(), 3);
        assert_eq!(l.types[0].name, "A");
        assert_eq!(l.types[2].kind, TypeKind::Enum);
        let segs: Vec<&str> = l.segments.iter().map(|s| &SRC[s.bytes.clone()]).collect();
        assert_eq!(
            segs[0],
            "private static final int X = 1, Y = new int[] {1}.length;"
        );
        assert_eq!(segs[1], "static { init(); }");
        assert!(l.segments[1].initializer && l.segments[2].initializer);
        assert!(segs[3].starts_with("@Override") && segs[3].ends_with("return a;\n    }"));
        assert_eq!(segs[4], ";");
        assert!(segs[5].starts_with("Object o") && segs[5].ends_with("};"));
        assert_eq!(segs[6], "interface I { void f(); }");
        assert_eq!(l.segments[6].nested, Some(1));
        assert_eq!(segs[7], "void f();");
        assert_eq!(l.types[1].name, "I");
        assert_eq!(l.types[1].parent, Some(0));
        assert_eq!(segs[8], "ONE(1) { int g() { return 1; } }, TWO(2);");
        assert!(l.segments[8].constants);
        assert_eq!(segs[9], "E(int v) {}");
        assert_eq!(l.types[0].segments, 0..8);
        assert_eq!(l.types[1].segments, 7..8);
        assert_eq!(l.types[2].segments, 8..10);
        assert_eq!(&SRC[l.types[0].header.clone()][..11], "@Deprecated");
        assert_eq!(&SRC[l.types[2].close.clone()], "}");
        let (r0, r1) = l.segments[3].rows;
        assert_eq!((r0, r1), (11, 15));
    }

    #[test]
    fn refuses_what_it_does_not_understand() {
        assert!(Layout::scan(b"record R(int a) { }").is_none());
        assert!(Layout::scan(b"class A { void f() { }").is_none());
        assert!(Layout::scan(b"class A { }\n<<<<<<< HEAD\n").is_none());
        assert!(Layout::scan(b"package a./*x*/b; class A {}").is_none());
        assert!(Layout::scan(b"class A { int x = 1 }").is_none());
    }

    #[test]
    fn compares_tokens() {
        let a = b"package p;\nimport x.Y;\nclass A { int f() { return 1+2; } }";
        let b = b"package p;\n\nclass A {\n  // c\n  int f() { return 1 + 2; }\n}\n";
        let c = b"package q;\nimport x.Z;\nclass A { int f() { return 1+2; } }";
        let (la, lb, lc) = (
            Layout::scan(a).unwrap(),
            Layout::scan(b).unwrap(),
            Layout::scan(c).unwrap(),
        );
        assert!(!la.same_tokens(a, &lb, b));
        assert!(la.same_code(a, &lb, b));
        assert!(la.same_code(a, &lc, c));
        let d = b"package p;\nimport x.Y;\nclass A { int f() { return 1 + 2 ; } }";
        assert!(la.same_tokens(a, &Layout::scan(d).unwrap(), d));
        let e = b"package p;\nimport x.Y;\nclass A { int f() { return 1 - -2; } }";
        let f = b"package p;\nimport x.Y;\nclass A { int f() { return 1 --2; } }";
        assert!(
            !Layout::scan(e)
                .unwrap()
                .same_tokens(e, &Layout::scan(f).unwrap(), f)
        );
    }
}
