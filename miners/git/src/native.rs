//! The semantic rule for compiled-extension sources (`--compiled-extensions`): Cython, C and C++
//! files and their build descriptors have no tree-sitter grammar in etip, so a change to one of them
//! is semantic unless it only touches comments and whitespace.
//!
//! - C and C++ (`.c`, `.h`, `.cpp`, ..., `.c.src` templates): the text with `//` and `/* */`
//!   comments removed and every run of whitespace read as one space, except that the end of a
//!   preprocessor line (`#...`) stays a line end;
//! - Cython and build descriptors (`.pyx`, `.pxd`, `.pxi`, `meson.build`, `CMakeLists.txt`): line by
//!   line, `#` comments removed, trailing whitespace and blank lines dropped, indentation kept
//!   (Cython blocks are indented);
//!
//! both outside string literals. Equal normal forms mean a whitespace- or comment-only change; any
//! other difference is semantic, without function names (the rule cannot see functions there).

/// Whether two versions of a compiled-extension file differ only in comments and whitespace.
pub fn same_code(path: &str, old: &[u8], new: &[u8]) -> bool {
    if is_c_like(path) {
        c_normal(old) == c_normal(new)
    } else {
        hash_comment_lines(old) == hash_comment_lines(new)
    }
}

fn is_c_like(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    let base = file
        .strip_suffix(".src")
        .or_else(|| file.strip_suffix(".in"))
        .unwrap_or(file);
    [".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"]
        .iter()
        .any(|s| base.ends_with(s))
}

/// Length of the one-line string or character literal starting at `src[i]` (a quote), escapes
/// honoured; an unterminated literal ends at its line's end.
fn quoted_len(src: &[u8], i: usize, quote: u8) -> usize {
    let mut j = i + 1;
    while j < src.len() {
        match src[j] {
            b'\\' => j += 2,
            b if b == quote => return j + 1 - i,
            b'\n' => return j - i,
            _ => j += 1,
        }
    }
    src.len() - i
}

/// C/C++ normal form (module docs).
fn c_normal(src: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len());
    let mut i = 0;
    let mut pending_space = false;
    let mut line_start = true;
    let mut directive = false;
    while i < src.len() {
        let b = src[i];
        let next = src.get(i + 1).copied();
        if b == b'/' && next == Some(b'/') {
            i += memchr::memchr(b'\n', &src[i..]).unwrap_or(src.len() - i);
            continue;
        }
        if b == b'/' && next == Some(b'*') {
            i += memchr::memmem::find(&src[i + 2..], b"*/").map_or(src.len() - i, |k| k + 4);
            pending_space = true;
            continue;
        }
        if b == b'\n' {
            if directive && src.get(i.wrapping_sub(1)) != Some(&b'\\') {
                out.push(b'\n');
                directive = false;
                pending_space = false;
            } else {
                pending_space = true;
            }
            line_start = true;
            i += 1;
            continue;
        }
        if b.is_ascii_whitespace() {
            pending_space = true;
            i += 1;
            continue;
        }
        if pending_space && !out.is_empty() && out.last() != Some(&b'\n') {
            out.push(b' ');
        }
        pending_space = false;
        if line_start && b == b'#' {
            directive = true;
        }
        line_start = false;
        let len = if b == b'"' || b == b'\'' {
            quoted_len(src, i, b)
        } else {
            1
        };
        out.extend_from_slice(&src[i..i + len]);
        i += len;
    }
    out
}

/// Cython / build-descriptor normal form (module docs): the code lines without `#` comments.
fn hash_comment_lines(src: &[u8]) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    let mut line = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let b = src[i];
        match b {
            b'#' => i += memchr::memchr(b'\n', &src[i..]).unwrap_or(src.len() - i),
            b'"' | b'\'' => {
                let triple = src[i..].starts_with(&[b; 3]);
                let len = if triple {
                    let close = [b; 3];
                    memchr::memmem::find(&src[i + 3..], &close).map_or(src.len() - i, |k| k + 6)
                } else {
                    quoted_len(src, i, b)
                };
                line.extend_from_slice(&src[i..i + len]);
                i += len;
            }
            b'\n' => {
                push_line(&mut lines, &mut line);
                i += 1;
            }
            _ => {
                line.push(b);
                i += 1;
            }
        }
    }
    push_line(&mut lines, &mut line);
    lines
}

fn push_line(lines: &mut Vec<Vec<u8>>, line: &mut Vec<u8>) {
    while line.last().is_some_and(u8::is_ascii_whitespace) {
        line.pop();
    }
    if !line.is_empty() {
        lines.push(std::mem::take(line));
    }
    line.clear();
}

#[cfg(test)]
mod tests {
    use super::same_code;

    #[test]
    fn c_comments_and_spacing_are_not_code() {
        let a = b"#include <x.h>\n/* doc */\nint f(int a) {\n  return a + 1; // one\n}\n";
        let b = b"#include <x.h>\nint f(int a)\n{\n    return a + 1;\n}\n";
        assert!(same_code("scipy/a.c", a, b));
        let c = b"#include <x.h>\nint f(int a) { return a + 2; }\n";
        assert!(!same_code("scipy/a.c", a, c));
        let s1 = b"const char *s = \"a  // b\";\n";
        let s2 = b"const char *s = \"a // b\";\n";
        assert!(!same_code("x.h", s1, s2), "string contents are code");
        let d1 = b"#define N 1\nint x;\n";
        let d2 = b"#define N 1 int x;\n";
        assert!(!same_code("x.c", d1, d2), "a directive ends at its line");
        assert!(same_code("loops.c.src", b"int  x;", b"int x;"));
    }

    #[test]
    fn cython_indentation_is_code() {
        let a = b"def f(x):\n    # why\n    if x:\n        return 1\n    return 2\n";
        let b = b"def f(x):\n    if x:  # trailing\n        return 1\n\n    return 2\n";
        assert!(same_code("a.pyx", a, b));
        let c = b"def f(x):\n    if x:\n        return 1\n        return 2\n";
        assert!(!same_code("a.pyx", a, c));
        assert!(!same_code("a.pyx", b"s = '#'\n", b"s = ''\n"));
        assert!(same_code(
            "meson.build",
            b"py.extension_module('a', # c\n  'a.pyx')\n",
            b"py.extension_module('a',\n  'a.pyx')\n"
        ));
    }
}
