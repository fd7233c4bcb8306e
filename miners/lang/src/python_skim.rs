//! Where a module-level statement starts before a change, found without lexing the file.
//!
//! [`window_start`] reads a source up to a byte offset the way [`crate::python_layout`]'s lexer
//! reads it as far as strings, comments, brackets and line continuations are concerned (string
//! literals end where [`crate::python_tokens::string_end`] ends them), without making tokens or
//! checking their order. It returns the start of the last logical line before the offset that
//! begins at column 0 with a name, a keyword or a decorator's `@`, outside brackets and strings,
//! whose previous logical line is neither a decorator nor a header ending with `:` and is not
//! continued by a backslash before blank lines (or such a line of a module-level class's body, at
//! the body's indentation). At such a line the lexer is at the module level with nothing pending —
//! its indentation stack is `[0]` (or `[0, body]`), no bracket is open, no `Dedent` or line
//! continuation is owed — so lexing can start there, in a fresh state, and give the tokens that
//! lexing the whole file gives from there on ([`crate::python_windows::lex_window`]: where the
//! first window starts, and where the next one does after a stretch both versions share).
//!
//! The skim does not check what the lexer refuses; what it skips is the same in both versions of
//! a file (it only reads their common prefix).

use crate::python_tokens::{CLASS, NAME, NAME_START, PREFIX, name_end, string_end};

/// Bytes the skim stops at: quotes, `#`, backslash, newline and brackets.
static STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = matches!(
            b as u8,
            b'"' | b'\'' | b'`' | b'#' | b'\\' | b'\n' | b'(' | b')' | b'[' | b']' | b'{' | b'}'
        );
        b += 1;
    }
    t
};

/// Where a window starts ([`window_start`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Start {
    /// Start of the line (0: the file's start).
    pub line: usize,
    /// For a line in the body of a module-level class: the body's indentation and the class
    /// name's bytes.
    pub class: Option<(u32, std::ops::Range<usize>)>,
}

/// The module-level class whose body the skim is in.
struct Class {
    name: std::ops::Range<usize>,
    /// Indentation of the body's first line, once seen.
    indent: Option<u32>,
    /// The last line of the body that may start a window.
    best: Option<usize>,
}

/// The class name after `class` at `i` when the logical line there opens a class (`None` for
/// names the skim does not read: non-ASCII ones).
fn class_name(src: &[u8], i: usize) -> Option<std::ops::Range<usize>> {
    let rest = src.get(i..)?;
    if !rest.starts_with(b"class") || !matches!(rest.get(5), Some(b' ' | b'\t')) {
        return None;
    }
    let mut j = i + 5;
    while matches!(src.get(j), Some(b' ' | b'\t')) {
        j += 1;
    }
    let e = name_end(src, j);
    (e > j && CLASS[src[j] as usize] & NAME_START != 0 && src.get(e).is_some_and(|&c| c < 0x80))
        .then_some(j..e)
}

/// What the skim found: the class body's start when there is one, else the module-level one.
fn start(best: usize, class: Option<Class>) -> Start {
    match class {
        Some(Class {
            name,
            indent: Some(k),
            best: Some(line),
        }) => Start {
            line,
            class: Some((k, name)),
        },
        _ => Start {
            line: best,
            class: None,
        },
    }
}

/// Where a window before `limit` may start: the last module-level logical line that starts
/// before it (see the module docs) or, when that line opens a class and `limit` is in its body,
/// the last logical line of the body at the body's indentation that is not its first statement,
/// with every line between at that indentation or deeper (then the lexer's indentation stack is
/// `[0, body]`). Line 0 when there is no module-level line but the first statement (the module's
/// first statement, which a window must start at the file's start to see as such).
///
/// `from` is 0 (the file's start) or a module-level line where the lexer stands with nothing
/// pending, from which the skim goes on (line 0 is then returned when no later line qualifies).
pub(crate) fn window_start(src: &[u8], from: usize, limit: usize) -> Start {
    let limit = limit.min(src.len());
    let mut i = if from > 0 {
        from
    } else if src.starts_with(b"\xef\xbb\xbf") {
        3
    } else {
        0
    };
    let mut best = 0;
    let mut class: Option<Class> = None;
    let mut seen_code = from > 0;
    // State of the previous logical line.
    let (mut prev_decorator, mut prev_header, mut cont_pending) = (false, false, false);
    while i < limit {
        // At the start of a logical line: skip blank and comment lines.
        let line = i;
        let mut indent = 0u32;
        while matches!(src[i], b' ' | b'\t' | 0x0c | b'\r') {
            indent = match src[i] {
                b' ' => indent + 1,
                b'\t' => indent + 8,
                _ => 0,
            };
            i += 1;
            if i >= limit {
                return start(best, class);
            }
        }
        match src[i] {
            b'\n' => {
                i += 1;
                continue;
            }
            b'#' => {
                i = memchr::memchr(b'\n', &src[i..limit]).map_or(limit, |k| i + k + 1);
                continue;
            }
            c => {
                let may_start = (CLASS[c as usize] & NAME_START != 0 || c == b'@')
                    && !prev_decorator
                    && !prev_header
                    && !cont_pending;
                if i == line {
                    if may_start && seen_code {
                        best = line;
                    }
                    class = class_name(src, i).map(|name| Class {
                        name,
                        indent: None,
                        best: None,
                    });
                } else if let Some(cl) = &mut class {
                    match cl.indent {
                        None if prev_header => cl.indent = Some(indent),
                        None => class = None,
                        Some(k) if indent < k => class = None,
                        Some(k) if indent == k && may_start => cl.best = Some(line),
                        Some(_) => {}
                    }
                }
                seen_code = true;
                prev_decorator = c == b'@';
            }
        }
        let Some(end) = logical_line(src, i, limit) else {
            return start(best, class);
        };
        (i, cont_pending) = (end.next, end.cont_pending);
        let code_end = end.code_end;
        // The last byte of the line's code (a string's closing quote for a string).
        let mut e = code_end;
        while e > line && matches!(src[e - 1], b' ' | b'\t' | b'\r' | 0x0c) {
            e -= 1;
        }
        let last = if e > line { src[e - 1] } else { 0 };
        prev_header = last == b':';
        // A class whose header line is no header (`class A: pass`) has no body lines.
        if let Some(cl) = &class
            && cl.indent.is_none()
            && !prev_header
        {
            class = None;
        }
    }
    start(best, class)
}

/// The end of the logical line whose code starts at `i`.
struct LineEnd {
    /// Where the next line starts.
    next: usize,
    /// Where the line's code ends (before its comment, its newline or its final backslash).
    code_end: usize,
    /// The line ends with a backslash before blank lines (owed to the next code line).
    cont_pending: bool,
}

/// Reads the logical line whose code starts at `i` to its end outside brackets; `None` at `limit`
/// or where the skim cannot follow the lexer (a string the lexer does not end, a backslash that
/// continues nothing).
fn logical_line(src: &[u8], mut i: usize, limit: usize) -> Option<LineEnd> {
    let mut depth = 0u32;
    // Where the last physical line's comment starts: the line's code ends before it.
    let mut comment: Option<usize> = None;
    let mut cont_pending = false;
    let code_end = loop {
        while i < limit && !STOP[src[i] as usize] {
            i += 1;
        }
        if i >= limit {
            return None;
        }
        let c = src[i];
        match c {
            b'\n' if depth == 0 => {
                i += 1;
                break comment.unwrap_or(i - 1);
            }
            b'\n' => {
                comment = None;
                i += 1;
            }
            b'#' => {
                comment = Some(i);
                i = memchr::memchr(b'\n', &src[i..limit]).map_or(limit, |k| i + k);
            }
            b'\\' => {
                // A continuation; followed by a blank line outside brackets it ends the line
                // and is owed to the next one.
                let at = i;
                let mut j = i + 1;
                if src.get(j) == Some(&b'\r') {
                    j += 1;
                }
                if src.get(j) != Some(&b'\n') {
                    return None;
                }
                j += 1;
                while matches!(src.get(j), Some(b' ' | b'\t' | 0x0c | b'\r')) {
                    j += 1;
                }
                i = j;
                comment = None;
                if depth == 0 && matches!(src.get(j), Some(b'\n')) {
                    cont_pending = true;
                    break at;
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => {
                // A quote: the string starts at the prefix letters before it, unless they
                // end a longer name.
                let mut k = i;
                while k > 0 && CLASS[src[k - 1] as usize] & PREFIX != 0 {
                    k -= 1;
                }
                if k < i && k > 0 && (CLASS[src[k - 1] as usize] & NAME != 0 || src[k - 1] >= 0x80)
                {
                    k = i;
                }
                i = string_end(src, k, 0)?;
            }
        }
    };
    Some(LineEnd {
        next: i,
        code_end,
        cont_pending,
    })
}

#[cfg(test)]
mod tests {
    use super::window_start;

    fn start(src: &str) -> &str {
        let limit = src.find('^').expect("a ^ marks the limit");
        &src[window_start(src.as_bytes(), 0, limit).line..]
    }

    #[test]
    fn finds_the_last_module_level_statement_before_the_limit() {
        assert_eq!(
            start("import a\n\ndef f():\n    return 1\n\ndef g():\n    ^"),
            "def g():\n    ^"
        );
        assert_eq!(start("def f():\n    x = 1^\n"), "def f():\n    x = 1^\n");
        // The first statement: the window starts at the file's start.
        assert_eq!(start("# c\n\nx = 1^"), "# c\n\nx = 1^");
    }

    #[test]
    fn skips_lines_in_strings_brackets_decorated_and_continued() {
        assert_eq!(
            start("x = 1\ns = '''\ndef f():\n  ^'''"),
            "s = '''\ndef f():\n  ^'''"
        );
        assert_eq!(start("x = 1\ns = '''\ndef f():\n'''\ny^"), "y^");
        assert_eq!(start("x = 1\ny = (1,\nz)\nw^"), "w^");
        assert_eq!(start("x = 1\ny = (1,\nz)^"), "y = (1,\nz)^");
        assert_eq!(start("x = 1\n@d\ndef f():\n  ^"), "@d\ndef f():\n  ^");
        assert_eq!(start("x = 1\nif a:\nb = 1^"), "if a:\nb = 1^");
        assert_eq!(start("x = 1\ny = 2 \\\n\nz = 3^"), "y = 2 \\\n\nz = 3^");
        assert_eq!(start("x = 1\ny = 2 \\\nz = 3\nw^"), "w^");
        assert_eq!(start("x = 1\nf = rf'''\ndef'''\ng^"), "g^");
        assert_eq!(start("x = 1\n  y = 2\nz^"), "z^");
        // Prefix letters start the string unless they end a longer name.
        assert_eq!(
            start("x = 1\ny = Rb'''\ndef f():\n  ^'''"),
            "y = Rb'''\ndef f():\n  ^'''"
        );
        assert_eq!(start("x = 1\ny = (bar'''\nz = 2\n''')\nw^"), "w^");
        assert_eq!(start("x = 1\nif a:  # c:\nb = 1^"), "if a:  # c:\nb = 1^");
        assert_eq!(start("x = 1\ny = 'a:'\nb = 1^"), "b = 1^");
    }
}
