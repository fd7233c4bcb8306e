//! Syntax checks the statement grouping ([`crate::python_units`]) runs on headers and assignment
//! targets: where tree-sitter would meet a syntax error and recover from it in ways the grouping
//! cannot follow, the file is refused (whole-file parses decide it).
//!
//! A clause header reads as one (`else`, `try` and `finally` have nothing before their `:`, `for`
//! has an `in`, the others a condition or items); a class header is a name, optional type
//! parameters, optional bases and `:`; a function header is a parameter list whose parameters are
//! names with optional annotations and defaults, `*`, `/`, `*name`, `**name` or (Python 2) tuples,
//! and an optional return annotation; an assignment's or annotation's target holds names,
//! attributes, subscripts, `*` and commas (no literal, no operator). Line continuations inside
//! headers are ignored.

use crate::python_layout::Kind;
use crate::python_tokens::{F_ASSIGN, F_CLOSE, F_OPEN, is_keyword};
use crate::python_units::Parser;

impl Parser<'_> {
    /// The index of the `:` that ends the header before the `Indent` at `indent` (line
    /// continuations before the `Indent` skipped), if it is one.
    pub(crate) fn header_colon(&self, indent: usize) -> Option<usize> {
        let mut b = indent;
        while b > 0 && self.kind(b - 1) == Some(Kind::Cont) {
            b -= 1;
        }
        (b > 0 && self.is_op(b - 1, b":")).then(|| b - 1)
    }

    /// Whether the header of the clause whose keyword is at `p` reads as one: `else`, `try` and
    /// `finally` have nothing before their `:`, `for` an `in`, the others a condition or items
    /// (`except` may have nothing).
    pub(crate) fn header_ok(&self, p: usize, indent: usize) -> bool {
        let Some(colon) = self.header_colon(indent).filter(|c| *c > p) else {
            return false;
        };
        let inner = || (p + 1..colon).filter(|&k| self.kind(k) != Some(Kind::Cont));
        match self.text(p) {
            b"else" | b"try" | b"finally" => inner().next().is_none(),
            b"except" => true,
            b"for" => {
                let mut depth = 0i32;
                inner().any(|k| {
                    let f = self.flags(k);
                    depth += i32::from(f & F_OPEN != 0) - i32::from(f & F_CLOSE != 0);
                    depth == 0 && self.kind(k) == Some(Kind::Name) && self.text(k) == b"in"
                })
            }
            _ => inner().next().is_some(),
        }
    }

    /// Whether a class header from `p` (after the name) to its `Indent` reads as optional type
    /// parameters, optional bases and `:`.
    pub(crate) fn class_header_ok(&self, mut p: usize, indent: usize) -> bool {
        for open in [&b"["[..], b"("] {
            if self.is_op(p, open) {
                match self.group_end(p, indent) {
                    Some(e) => p = e,
                    None => return false,
                }
            }
        }
        self.header_colon(indent) == Some(p)
    }

    /// The index after the bracket group opened at `p` (before `end`).
    pub(crate) fn group_end(&self, p: usize, end: usize) -> Option<usize> {
        let mut depth = 0u32;
        for k in p..end {
            if self.kind(k) == Some(Kind::Op) {
                match self.text(k) {
                    b"(" | b"[" | b"{" => depth += 1,
                    b")" | b"]" | b"}" => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(k + 1);
                        }
                    }
                    _ => {}
                }
            }
        }
        None
    }

    /// Whether a function header from `p` (after the name) to its `Indent` reads as optional type
    /// parameters, a parameter list and an optional return annotation, each parameter a name with
    /// an optional annotation and default, `*`, `/`, `*name`, `**name` or a (Python 2) tuple.
    pub(crate) fn parameters_ok(&self, mut p: usize, indent: usize) -> bool {
        if self.is_op(p, b"[") {
            let Some(e) = self.group_end(p, indent) else {
                return false;
            };
            p = e;
        }
        let Some(close) = self
            .is_op(p, b"(")
            .then(|| self.group_end(p, indent))
            .flatten()
        else {
            return false;
        };
        // Then `:` or `-> annotation :` (line continuations around them ignored).
        let (mut a, mut b) = (close, indent);
        while a < b && self.kind(a) == Some(Kind::Cont) {
            a += 1;
        }
        while b > a && self.kind(b - 1) == Some(Kind::Cont) {
            b -= 1;
        }
        if b == a
            || !self.is_op(b - 1, b":")
            || (b - 1 > a && !(self.is_op(a, b"->") && b - 1 > a + 1))
        {
            return false;
        }
        // Split at the commas outside brackets (`close - 1` is the `)`).
        let close = close - 1;
        let (mut start, mut k, mut depth) = (p + 1, p + 1, 0u32);
        while k < close {
            match (self.kind(k), self.text(k)) {
                (Some(Kind::Op), b"(" | b"[" | b"{") => depth += 1,
                (Some(Kind::Op), b")" | b"]" | b"}") => depth = depth.saturating_sub(1),
                (Some(Kind::Op), b",") if depth == 0 => {
                    if !self.parameter_ok(start, k) {
                        return false;
                    }
                    start = k + 1;
                }
                _ => {}
            }
            k += 1;
        }
        // A trailing comma leaves an empty last part (so does an empty list).
        (start..close).all(|k| self.kind(k) == Some(Kind::Cont)) || self.parameter_ok(start, close)
    }

    /// Whether tokens `p..e` read as one parameter (line continuations around it ignored).
    pub(crate) fn parameter_ok(&self, mut p: usize, mut e: usize) -> bool {
        while p < e && self.kind(p) == Some(Kind::Cont) {
            p += 1;
        }
        while e > p && self.kind(e - 1) == Some(Kind::Cont) {
            e -= 1;
        }
        let rest = |k: usize| {
            // Then nothing, `: type`, `= default` or `: type = default`, each non-empty.
            let eq = (k..e).find(|&j| self.is_op(j, b"="));
            let (ann, default) = match eq {
                Some(j) => (k..j, Some(j + 1..e)),
                None => (k..e, None),
            };
            (ann.is_empty() || (self.is_op(ann.start, b":") && ann.len() > 1))
                && default.is_none_or(|d| !d.is_empty())
        };
        let name = |k: usize| self.kind(k) == Some(Kind::Name) && !is_keyword(self.text(k));
        match (self.kind(p), self.text(p)) {
            _ if e == p => false,
            (Some(Kind::Op), b"*" | b"/") if e == p + 1 => true,
            (Some(Kind::Op), b"*" | b"**") => name(p + 1) && rest(p + 2),
            (Some(Kind::Op), b"(") => self.group_end(p, e).is_some_and(rest),
            _ => name(p) && rest(p + 1),
        }
    }

    /// Whether tokens `p..e` hold an `=` outside brackets.
    pub(crate) fn has_top_level_eq(&self, p: usize, e: usize) -> bool {
        let mut depth = 0u32;
        self.toks[p..e].iter().any(|t| {
            if t.kind == Kind::Op {
                if t.flags & F_OPEN != 0 {
                    depth += 1;
                } else if t.flags & F_CLOSE != 0 {
                    depth = depth.saturating_sub(1);
                } else if t.flags & F_ASSIGN != 0 && t.end - t.start == 1 {
                    return depth == 0;
                }
            }
            false
        })
    }

    /// Whether tokens `p..k` read as an assignment's or annotation's target: names, attributes,
    /// subscripts, calls' attributes, `*` and commas, brackets (not a literal or an operator).
    pub(crate) fn target_ok(&self, p: usize, k: usize) -> bool {
        if k == p || matches!(self.kind(p), Some(Kind::Str | Kind::Number)) {
            return false;
        }
        let mut depth = 0u32;
        self.toks[p..k].iter().all(|t| {
            let f = t.flags;
            if f & F_OPEN != 0 {
                depth += 1;
            } else if f & F_CLOSE != 0 {
                depth = depth.saturating_sub(1);
            } else if depth == 0 && t.kind == Kind::Op {
                return matches!(t.text(self.src), b"." | b"," | b"*");
            }
            true
        })
    }
}
