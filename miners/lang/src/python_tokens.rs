//! The tokens of Python sources as tree-sitter-python's leaves are, for [`crate::python_layout`].
//!
//! Names; numbers by tree-sitter's `integer` and `float` patterns (maximal munch, as its lexer
//! reads them); whole string literals, ended the way its external scanner ends them — any run of
//! prefix letters, raw strings (a backslash steps over a quote, a backslash and a newline), bytes
//! (`\N`, `\u`, `\U` are no escapes there), triple quotes, f-strings with `{{`/`}}`, `\N{...}`,
//! and interpolations holding nested strings (any quotes, as Python 3.12 allows), conversions and
//! format specifications, and Python 2's backticks, which the scanner reads as quotes — since
//! tree-sitter's `string` node is hashed as one text; operators by
//! maximal munch. Names and operators carry flags (the `F_` constants) that the lexer's checks and
//! the statement grouping read instead of comparing texts.
//!
//! A string is refused when it is not ended exactly that way: a single-quoted string running into
//! a newline, a lone `}` in an f-string, an interpolation holding a comment, a backslash, a newline,
//! `lambda` or `:=` at its top level, or quotes in a format specification.
//!
//! `pair_ok` refuses the token pairs that are syntax errors edits usually make — an operand right
//! after another, a keyword that cannot follow an operand (`x def`, `import a import b`), a closing
//! bracket or separator right after an operator, `(,` and `,,`, a `.` not followed by a name —, on
//! which tree-sitter would recover in ways a token scan cannot follow.

use memchr::{memchr, memchr3};

/// Kind of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Identifier or keyword.
    Name,
    /// Integer or float literal.
    Number,
    /// A whole string literal, prefix and quotes included.
    Str,
    /// Operator or delimiter.
    Op,
    /// A backslash-newline that tree-sitter keeps as a `line_continuation` leaf.
    Cont,
    /// End of a logical line (zero width).
    Newline,
    /// Start of a block (zero width).
    Indent,
    /// End of a block (zero width), placed where tree-sitter ends the block.
    Dedent,
    /// In a window that starts in a class body ([`crate::python_layout::lex_window`]): the class
    /// name, standing for the class header left out of the window.
    Scope,
}

/// One token: its kind and byte range (layout tokens are empty ranges).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tok {
    /// First byte.
    pub start: u32,
    /// End byte (exclusive).
    pub end: u32,
    /// Kind.
    pub kind: Kind,
    /// What a name or an operator is, for syntax checks and grouping (the `F_` constants).
    pub flags: u16,
}

impl Tok {
    /// The token's text.
    pub fn text<'s>(&self, src: &'s [u8]) -> &'s [u8] {
        &src[self.start as usize..self.end as usize]
    }
}

/// Byte classes: identifier start, identifier continuation, string prefix letter.
pub(crate) const NAME_START: u8 = 1;
pub(crate) const NAME: u8 = 2;
pub(crate) const PREFIX: u8 = 4;
pub(crate) static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphabetic() || c == b'_' {
            t[b] = NAME_START | NAME;
        } else if c.is_ascii_digit() {
            t[b] = NAME;
        }
        if matches!(
            c,
            b'r' | b'R' | b'b' | b'B' | b'u' | b'U' | b'f' | b'F' | b't' | b'T'
        ) {
            t[b] |= PREFIX;
        }
        b += 1;
    }
    t
};

pub(crate) fn at(src: &[u8], i: usize) -> u8 {
    src.get(i).copied().unwrap_or(0)
}

pub(crate) fn name_end(src: &[u8], mut i: usize) -> usize {
    while i < src.len() && CLASS[src[i] as usize] & NAME != 0 {
        i += 1;
    }
    i
}

/// End of an identifier with non-ASCII letters from `i`; `None` at a character that is neither
/// an ASCII identifier byte nor a letter or digit (tree-sitter would read it otherwise: `\u{200b}`
/// is whitespace to it).
pub(crate) fn unicode_name_end(src: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let c = at(src, i);
        if CLASS[c as usize] & NAME != 0 {
            i += 1;
        } else if c >= 0x80 {
            let len = match c {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => return None,
            };
            let ch = std::str::from_utf8(src.get(i..i + len)?)
                .ok()?
                .chars()
                .next()?;
            if !ch.is_alphanumeric() {
                return None;
            }
            i += len;
        } else {
            return Some(i);
        }
    }
}

/// Whether a string literal (prefix letters, then a quote) starts at `i`.
pub(crate) fn starts_string(src: &[u8], mut i: usize) -> bool {
    while i < src.len() && CLASS[src[i] as usize] & PREFIX != 0 {
        i += 1;
    }
    matches!(src.get(i), Some(b'"' | b'\'' | b'`'))
}

/// How a string literal ends and what its escapes do.
#[derive(Clone, Copy)]
struct Delim {
    quote: u8,
    triple: bool,
    raw: bool,
    format: bool,
    bytes: bool,
}

/// End of the string literal whose prefix (or opening quote) is at `s`; `None` when it does not
/// end the way tree-sitter's scanner ends it on valid code.
pub(crate) fn string_end(src: &[u8], s: usize, nest: u32) -> Option<usize> {
    if nest > 6 {
        return None;
    }
    let mut i = s;
    let mut d = Delim {
        quote: 0,
        triple: false,
        raw: false,
        format: false,
        bytes: false,
    };
    while CLASS[at(src, i) as usize] & PREFIX != 0 {
        match src[i] {
            b'r' | b'R' => d.raw = true,
            b'f' | b'F' | b't' | b'T' => d.format = true,
            b'b' | b'B' => d.bytes = true,
            _ => {}
        }
        i += 1;
    }
    d.quote = at(src, i);
    if !matches!(d.quote, b'"' | b'\'' | b'`') {
        return None;
    }
    // Python 2's backticks are strings to the scanner (never triple).
    d.triple = d.quote != b'`' && at(src, i + 1) == d.quote && at(src, i + 2) == d.quote;
    i += if d.triple { 3 } else { 1 };
    string_body(src, i, &d, nest)
}

fn string_body(src: &[u8], mut i: usize, d: &Delim, nest: u32) -> Option<usize> {
    loop {
        let rest = src.get(i..)?;
        let k = if d.format {
            rest.iter()
                .position(|&c| matches!(c, b'\\' | b'\n' | b'{' | b'}') || c == d.quote)?
        } else {
            memchr3(d.quote, b'\\', b'\n', rest)?
        };
        i += k;
        match src[i] {
            b'\n' if !d.triple => return None,
            b'\n' => i += 1,
            b'\\' => i = escape_end(src, i, d)?,
            b'{' if at(src, i + 1) == b'{' => i += 2,
            b'{' => i = interpolation_end(src, i + 1, nest)?,
            b'}' if at(src, i + 1) == b'}' => i += 2,
            b'}' => return None,
            _ if !d.triple => return Some(i + 1),
            _ if at(src, i + 1) == d.quote && at(src, i + 2) == d.quote => return Some(i + 3),
            _ => i += 1,
        }
    }
}

/// Where the string scanner resumes after the backslash at `i`.
fn escape_end(src: &[u8], i: usize, d: &Delim) -> Option<usize> {
    let next = at(src, i + 1);
    if d.raw {
        // The scanner steps over the backslash, an escaped quote or backslash, then a newline.
        let mut j = i + 1;
        if next == d.quote || next == b'\\' {
            j += 1;
        }
        match at(src, j) {
            b'\r' if at(src, j + 1) == b'\n' => j += 2,
            b'\r' => return None,
            b'\n' => j += 1,
            _ => {}
        }
        return Some(j);
    }
    if d.bytes && matches!(next, b'N' | b'u' | b'U') {
        return Some(i + 2);
    }
    match next {
        0 if i + 1 >= src.len() => None,
        b'\\' | b'\'' | b'"' | b'\n' => Some(i + 2),
        b'\r' if at(src, i + 2) == b'\n' => Some(i + 3),
        b'\r' => None,
        // `\N{NAME}` is one escape sequence: its braces are no interpolation.
        b'N' if d.format && at(src, i + 2) == b'{' => {
            let close = memchr(b'}', src.get(i + 3..)?)?;
            if close == 0 {
                return None;
            }
            Some(i + 3 + close + 1)
        }
        _ => Some(i + 1),
    }
}

/// End of an f-string interpolation whose expression starts at `i` (after the `{`).
fn interpolation_end(src: &[u8], mut i: usize, nest: u32) -> Option<usize> {
    let mut depth = 0u32;
    loop {
        let c = *src.get(i)?;
        match c {
            b' ' | b'\t' => i += 1,
            b'"' | b'\'' => i = string_end(src, i, nest + 1)?,
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            b'}' if depth == 0 => return Some(i + 1),
            b'}' => {
                depth -= 1;
                i += 1;
            }
            b':' if depth == 0 => {
                if at(src, i + 1) == b'=' {
                    return None;
                }
                return format_spec_end(src, i + 1, nest);
            }
            b'!' if depth == 0 => match at(src, i + 1) {
                b'=' => i += 2,
                b'a'..=b'z' => i += 2,
                _ => return None,
            },
            _ if CLASS[c as usize] & NAME_START != 0 => {
                if starts_string(src, i) {
                    i = string_end(src, i, nest + 1)?;
                } else {
                    let e = name_end(src, i);
                    if depth == 0 && &src[i..e] == b"lambda" {
                        return None;
                    }
                    i = e;
                }
            }
            b'\n' | b'\r' | b'#' | b'\\' | b'`' | 0x80..=0xff => return None,
            _ => i += 1,
        }
    }
}

/// End of a format specification starting at `i` (after the `:`), nested interpolations included.
fn format_spec_end(src: &[u8], mut i: usize, nest: u32) -> Option<usize> {
    loop {
        match *src.get(i)? {
            b'{' if at(src, i + 1) == b'{' => return None,
            b'{' => i = interpolation_end(src, i + 1, nest + 1)?,
            b'}' => return Some(i + 1),
            b'\n' | b'\r' | b'"' | b'\'' | b'\\' => return None,
            _ => i += 1,
        }
    }
}

/// End of `[0-9]+_?` repeated (tree-sitter's digit groups), if a digit is at `i`.
fn digits_end(src: &[u8], mut i: usize) -> Option<usize> {
    if !at(src, i).is_ascii_digit() {
        return None;
    }
    while at(src, i).is_ascii_digit() {
        while at(src, i).is_ascii_digit() {
            i += 1;
        }
        if at(src, i) == b'_' {
            i += 1;
        }
    }
    Some(i)
}

/// End of an exponent (`e`, optional sign, digits) at `i`.
fn exponent_end(src: &[u8], i: usize) -> Option<usize> {
    if !matches!(at(src, i), b'e' | b'E') {
        return None;
    }
    let j = if matches!(at(src, i + 1), b'+' | b'-') {
        i + 2
    } else {
        i + 1
    };
    digits_end(src, j)
}

/// End of the number at `i`: the longest match of tree-sitter's `integer` and `float` tokens.
pub(crate) fn number_end(src: &[u8], i: usize) -> usize {
    if at(src, i) == b'0' {
        let radix: Option<fn(u8) -> bool> = match at(src, i + 1) | 0x20 {
            b'x' => Some(|c: u8| c.is_ascii_hexdigit()),
            b'o' => Some(|c: u8| (b'0'..=b'7').contains(&c)),
            b'b' => Some(|c: u8| c == b'0' || c == b'1'),
            _ => None,
        };
        if let Some(digit) = radix {
            let mut j = i + 2;
            loop {
                let k = if at(src, j) == b'_' { j + 1 } else { j };
                if !digit(at(src, k)) {
                    break;
                }
                j = k;
                while digit(at(src, j)) {
                    j += 1;
                }
            }
            if j > i + 2 {
                return j + usize::from(matches!(at(src, j), b'l' | b'L'));
            }
        }
    }
    let complex = |e: usize| e + usize::from(matches!(at(src, e), b'j' | b'J'));
    let mut best = i;
    let fraction = |dot: usize| {
        let e = digits_end(src, dot + 1).unwrap_or(dot + 1);
        complex(exponent_end(src, e).unwrap_or(e))
    };
    match digits_end(src, i) {
        Some(d) => {
            best = d + usize::from(matches!(at(src, d), b'l' | b'L' | b'j' | b'J'));
            if at(src, d) == b'.' {
                best = best.max(fraction(d));
            }
            if let Some(e) = exponent_end(src, d) {
                best = best.max(complex(e));
            }
        }
        None if digits_end(src, i + 1).is_some() => best = fraction(i),
        None => {}
    }
    best
}

/// Flags of names: a keyword (which cannot name anything) ...
pub const F_KEYWORD: u16 = 1;
/// ... `True`, `False`, `None` (operands) ...
pub const F_LITERAL: u16 = 2;
/// ... a keyword that starts an operand (`lambda`, `await`, `yield`) ...
pub const F_STARTS: u16 = 4;
/// ... a keyword that opens a compound statement or one of its clauses.
pub const F_COMPOUND: u16 = 8;
/// Flags of operators: `(`, `[`, `{` ...
pub const F_OPEN: u16 = 1 << 4;
/// ... `)`, `]`, `}` ...
pub const F_CLOSE: u16 = 1 << 5;
/// ... `,` ...
pub const F_COMMA: u16 = 1 << 6;
/// ... `;` ...
pub const F_SEMI: u16 = 1 << 7;
/// ... `:` ...
pub const F_COLON: u16 = 1 << 8;
/// ... `=` and the augmented assignments ...
pub const F_ASSIGN: u16 = 1 << 9;
/// ... an operator an operand must follow (binary, assignment, `~`, `.`; not `*` and `/`, which may
/// end a parameter list: `def f(a, *, b, /)`) ...
pub const F_NEEDS: u16 = 1 << 10;
/// ... one that ends an operand (closing brackets, `...`) ...
pub const F_ENDS: u16 = 1 << 11;
/// ... one that starts an operand and cannot follow one (`{`, `...`, `~`) ...
pub const F_OPSTART: u16 = 1 << 12;
/// ... a unary operator (`-`, `+`, `~`) ...
pub const F_UNARY: u16 = 1 << 13;
/// ... `.` ...
pub const F_DOT: u16 = 1 << 14;
/// ... `@`.
pub const F_AT: u16 = 1 << 15;

/// The operator at `i`: its length and flags; `None` for a byte that is no Python operator.
#[inline]
pub(crate) fn op(src: &[u8], i: usize, single_dots: bool) -> Option<(usize, u16)> {
    let (c1, c2) = (at(src, i + 1), at(src, i + 2));
    const AN: u16 = F_ASSIGN | F_NEEDS;
    // `X=` is an augmented assignment, `X` a binary operator.
    let binary = |extra: u16| {
        if c1 == b'=' {
            (2, AN)
        } else {
            (1, F_NEEDS | extra)
        }
    };
    Some(match src[i] {
        b'(' => (1, F_OPEN),
        b'[' => (1, F_OPEN),
        b'{' => (1, F_OPEN | F_OPSTART),
        b')' | b']' | b'}' => (1, F_CLOSE | F_ENDS),
        b',' => (1, F_COMMA),
        b';' => (1, F_SEMI),
        b'~' => (1, F_NEEDS | F_OPSTART | F_UNARY),
        b':' if c1 == b'=' => (2, F_NEEDS),
        b':' => (1, F_COLON),
        b'.' if !single_dots && c1 == b'.' && c2 == b'.' => (3, F_ENDS | F_OPSTART),
        b'.' => (1, F_DOT | F_NEEDS),
        // `**=`, `//=`, `<<=`, `>>=`; `**`, `//`, `<<`, `>>`.
        b'*' | b'/' | b'<' | b'>' if c1 == src[i] => {
            if c2 == b'=' {
                (3, AN)
            } else {
                (2, F_NEEDS)
            }
        }
        b'*' | b'/' if c1 == b'=' => (2, AN),
        b'*' | b'/' => (1, 0),
        b'<' if c1 == b'>' || c1 == b'=' => (2, F_NEEDS),
        b'>' | b'=' | b'!' if c1 == b'=' => (2, F_NEEDS),
        b'<' | b'>' => (1, F_NEEDS),
        b'=' => (1, AN),
        b'-' if c1 == b'>' => (2, F_NEEDS),
        b'-' | b'+' => binary(F_UNARY),
        b'@' => binary(F_AT),
        b'%' | b'&' | b'|' | b'^' => binary(0),
        _ => return None,
    })
}

/// Up to 8 bytes packed into a `u64` (0 for longer words: no keyword or operator is longer).
pub(crate) const fn pack(w: &[u8]) -> u64 {
    if w.len() > 8 {
        return 0;
    }
    let mut v = 0u64;
    let mut i = 0;
    while i < w.len() {
        v |= (w[i] as u64) << (8 * i);
        i += 1;
    }
    v
}

const KEYWORD: u16 = F_KEYWORD;
const LITERAL: u16 = F_LITERAL;
const STARTS: u16 = F_STARTS;
const COMPOUND: u16 = F_COMPOUND;

macro_rules! words {
    ($($name:ident = $word:literal => $flags:expr;)*) => {
        $(const $name: u64 = pack($word);)*
        /// The flags of a name token's text.
        pub(crate) fn word_flags(w: &[u8]) -> u16 {
            match pack(w) {
                $($name => $flags,)*
                _ => 0,
            }
        }
    };
}

words! {
    W_FALSE = b"False" => KEYWORD | LITERAL;
    W_NONE = b"None" => KEYWORD | LITERAL;
    W_TRUE = b"True" => KEYWORD | LITERAL;
    W_AND = b"and" => KEYWORD;
    W_AS = b"as" => KEYWORD;
    W_ASSERT = b"assert" => KEYWORD;
    W_ASYNC = b"async" => KEYWORD;
    W_AWAIT = b"await" => KEYWORD | STARTS;
    W_BREAK = b"break" => KEYWORD;
    W_CLASS = b"class" => KEYWORD | COMPOUND;
    W_CONTINUE = b"continue" => KEYWORD;
    W_DEF = b"def" => KEYWORD | COMPOUND;
    W_DEL = b"del" => KEYWORD;
    W_ELIF = b"elif" => KEYWORD | COMPOUND;
    W_ELSE = b"else" => KEYWORD | COMPOUND;
    W_EXCEPT = b"except" => KEYWORD | COMPOUND;
    W_FINALLY = b"finally" => KEYWORD | COMPOUND;
    W_FOR = b"for" => KEYWORD | COMPOUND;
    W_FROM = b"from" => KEYWORD;
    W_GLOBAL = b"global" => KEYWORD;
    W_IF = b"if" => KEYWORD | COMPOUND;
    W_IMPORT = b"import" => KEYWORD;
    W_IN = b"in" => KEYWORD;
    W_IS = b"is" => KEYWORD;
    W_LAMBDA = b"lambda" => KEYWORD | STARTS;
    W_NONLOCAL = b"nonlocal" => KEYWORD;
    W_NOT = b"not" => KEYWORD;
    W_OR = b"or" => KEYWORD;
    W_PASS = b"pass" => KEYWORD;
    W_RAISE = b"raise" => KEYWORD;
    W_RETURN = b"return" => KEYWORD;
    W_TRY = b"try" => KEYWORD | COMPOUND;
    W_WHILE = b"while" => KEYWORD | COMPOUND;
    W_WITH = b"with" => KEYWORD | COMPOUND;
    W_YIELD = b"yield" => KEYWORD | STARTS;
}

/// Whether a name is a Python keyword (it cannot name anything).
pub(crate) fn is_keyword(w: &[u8]) -> bool {
    word_flags(w) & KEYWORD != 0
}

/// Whether a token ends an operand (a name, a literal, a closing bracket).
#[inline]
pub(crate) fn ends_operand(t: &Tok) -> bool {
    match t.kind {
        Kind::Number | Kind::Str => true,
        Kind::Name => t.flags & KEYWORD == 0 || t.flags & LITERAL != 0,
        Kind::Op => t.flags & F_ENDS != 0,
        _ => false,
    }
}

/// Whether a token starts an operand that cannot follow another one (`a b`, `1 "s"`, `x {}`).
#[inline]
pub(crate) fn starts_operand(t: &Tok, prev: Kind) -> bool {
    match t.kind {
        Kind::Number => true,
        // Adjacent strings are one concatenated string.
        Kind::Str => prev != Kind::Str,
        Kind::Name => t.flags & KEYWORD == 0 || t.flags & (LITERAL | STARTS) != 0,
        Kind::Op => t.flags & F_OPSTART != 0,
        _ => false,
    }
}

/// Whether `cur` may follow `prev` on a logical line: no operand right after another (but for
/// Python 2's `print x` and `exec code`, and `type X = ...`, at a statement's start), nothing that
/// closes or separates right after an operator, no empty item before a comma, and a name after a
/// `.` (outside `from` imports). These are the syntax errors edits usually make; tree-sitter would
/// recover from them in ways a token scan cannot follow.
#[inline]
pub(crate) fn pair_ok(
    src: &[u8],
    prev: &Tok,
    cur: &Tok,
    prev_starts_stmt: bool,
    in_from: bool,
) -> bool {
    if ends_operand(prev) && starts_operand(cur, prev.kind) {
        // (`match` and `case` too: the lexer then requires a `match` header or a `case` clause.)
        return prev_starts_stmt
            && prev.kind == Kind::Name
            && (matches!(prev.text(src), b"print" | b"exec" | b"match" | b"case")
                || (prev.text(src) == b"type" && cur.kind == Kind::Name));
    }
    if ends_operand(prev) && cur.kind == Kind::Name && cur.flags & KEYWORD != 0 {
        // Keywords that may follow an operand (`import` in `from x import y` only).
        let text = cur.text(src);
        return matches!(
            text,
            b"if" | b"else" | b"for" | b"in" | b"is" | b"and" | b"or" | b"not" | b"as" | b"from"
        ) || (text == b"import" && in_from);
    }
    if prev.kind != Kind::Op {
        return true;
    }
    let (pf, cf) = (prev.flags, if cur.kind == Kind::Op { cur.flags } else { 0 });
    if pf & F_DOT != 0 {
        return in_from || cur.kind == Kind::Name;
    }
    // After an operator: no closing bracket, separator or binary-only operator.
    if pf & F_NEEDS != 0
        && (cf & (F_CLOSE | F_COMMA | F_SEMI) != 0 || (cf & F_NEEDS != 0 && cf & F_UNARY == 0))
    {
        return false;
    }
    !(pf & (F_OPEN | F_COMMA) != 0 && cf & F_COMMA != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(s: &str) -> &str {
        &s[..number_end(s.as_bytes(), 0)]
    }

    fn string(s: &str) -> Option<&str> {
        string_end(s.as_bytes(), 0, 0).map(|e| &s[..e])
    }

    #[test]
    fn numbers_end_where_tree_sitter_ends_them() {
        for (src, token) in [
            ("1_000.5e-3j+", "1_000.5e-3j"),
            ("0x_1fL.", "0x_1fL"),
            ("0xg", "0"),
            ("1e+", "1"),
            ("1.e5", "1.e5"),
            ("1..2", "1."),
            (".5j", ".5j"),
            ("1if", "1"),
            ("0777L", "0777L"),
            ("1__0", "1_"),
        ] {
            assert_eq!(number(src), token, "{src}");
        }
    }

    #[test]
    fn strings_end_where_the_scanner_ends_them() {
        assert_eq!(string(r#"'a\'b' x"#), Some(r#"'a\'b'"#));
        assert_eq!(string(r#"r"a\"b" x"#), Some(r#"r"a\"b""#));
        assert_eq!(
            string("\"\"\"a\"\"b\\\"\"\"\" x"),
            Some("\"\"\"a\"\"b\\\"\"\"\"")
        );
        assert_eq!(string("\"\"\"a\"\"\"\" x"), Some("\"\"\"a\"\"\""));
        assert_eq!(
            string(r#"f"{x["a"]!r:>{w}} {{y}}" z"#),
            Some(r#"f"{x["a"]!r:>{w}} {{y}}""#)
        );
        assert_eq!(string(r#"f"\N{DASH}{a}" z"#), Some(r#"f"\N{DASH}{a}""#));
        assert_eq!(string(r#"Rb'\N{' z"#), Some(r#"Rb'\N{'"#));
        assert_eq!(string("'a\\\nb' x"), Some("'a\\\nb'"));
        assert_eq!(string("'a\nb'"), None);
        assert_eq!(string("f'}'"), None);
        assert_eq!(string("f'{a # c}'"), None);
        assert_eq!(string("f'{lambda: 1}'"), None);
        assert_eq!(string("'open"), None);
    }

    #[test]
    fn operators_munch_and_carry_flags() {
        fn ops(s: &str) -> Vec<&str> {
            let b = s.as_bytes();
            let mut i = 0;
            let mut out = Vec::new();
            while i < b.len() {
                let (n, _) = op(b, i, false).unwrap();
                out.push(&s[i..i + n]);
                i += n;
            }
            out
        }
        assert_eq!(
            ops("**=//<>->:=...."),
            ["**=", "//", "<>", "->", ":=", "...", "."]
        );
        assert_eq!(op(b"...", 0, true), Some((1, F_DOT | F_NEEDS)));
        assert!(op(b"!", 0, false).is_none() && op(b"$", 0, false).is_none());
        assert_eq!(word_flags(b"lambda"), F_KEYWORD | F_STARTS);
        assert_eq!(word_flags(b"print"), 0);
        assert!(is_keyword(b"None") && !is_keyword(b"nonlocals"));
    }
}
