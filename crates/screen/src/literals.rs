//! Literal values, normalised so that the same value written two ways compares equal
//! (`100_000`, `100000`, `1e5`, `10**5` and Java's `100000L` are all the number 100000; a
//! string is its content without prefix and quotes), and the values of an ETIP's workloads and
//! tests, which a special case that tests for exactly them gives away.
//!
//! ```
//! use etip_core::Language;
//! use etip_screen::literals::Literals;
//! let w = Literals::of_script(Language::Python, "def workload():\n    fib(100_000)\n    parse('2024-01-01T00:00:00')\n").unwrap();
//! assert!(w.contains_number(100000.0));
//! assert!(w.contains_string("2024-01-01T00:00:00"));
//! ```

use crate::ScreenError;
use crate::source::{parse, walk};
use crate::syntax::Syntax;
use etip_core::Language;
use std::collections::BTreeSet;
use tree_sitter::Node;

/// One literal value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Number(f64),
    Str(String),
    /// `None`, `null`, `True`, `False`.
    Constant(String),
}

impl Value {
    /// The key the value is compared by.
    pub fn key(&self) -> String {
        match self {
            Value::Number(v) => format!("n:{}", number_text(*v)),
            Value::Str(s) => format!("s:{s}"),
            Value::Constant(c) => format!("c:{c}"),
        }
    }

    /// The value as a reader would write it.
    pub fn display(&self) -> String {
        match self {
            Value::Number(v) => number_text(*v),
            Value::Str(s) => format!("{s:?}"),
            Value::Constant(c) => c.clone(),
        }
    }

    /// A value every program compares with (base cases, empty strings, single characters,
    /// `None`): comparing with it is no special case.
    pub fn is_trivial(&self) -> bool {
        match self {
            Value::Number(v) => v.fract() == 0.0 && v.abs() <= 2.0,
            Value::Str(s) => s.chars().count() <= 1,
            Value::Constant(_) => true,
        }
    }

    /// A value specific enough that only a benchmark's input would be compared with it: a
    /// number of magnitude 10 or more or with a fraction, a string of three characters or more.
    pub fn is_specific(&self) -> bool {
        match self {
            Value::Number(v) => v.abs() >= 10.0 || v.fract() != 0.0,
            Value::Str(s) => s.chars().count() >= 3,
            Value::Constant(_) => false,
        }
    }
}

fn number_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn parse_int(t: &str) -> Option<f64> {
    let t: String = t.chars().filter(|c| *c != '_').collect();
    let t = t.trim_end_matches(['l', 'L', 'j', 'J']);
    let (digits, radix) = match t.get(..2).map(str::to_ascii_lowercase).as_deref() {
        Some("0x") => (&t[2..], 16),
        Some("0o") => (&t[2..], 8),
        Some("0b") => (&t[2..], 2),
        _ => (t, 10),
    };
    u128::from_str_radix(digits, radix).ok().map(|v| v as f64)
}

fn parse_float(t: &str) -> Option<f64> {
    let t: String = t.chars().filter(|c| *c != '_').collect();
    t.trim_end_matches(['f', 'F', 'd', 'D']).parse().ok()
}

/// The content of a string literal's text (prefixes and quotes removed, escapes kept).
fn string_content(t: &str) -> String {
    let t = t.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    for q in ["\"\"\"", "'''", "\"", "'"] {
        if let Some(inner) = t.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    t.to_string()
}

/// The value of a literal node, if `n` is one (a sign and Python's `a ** b` of two integers
/// included).
pub fn value(n: Node, src: &str) -> Option<Value> {
    let text = n.utf8_text(src.as_bytes()).ok()?;
    match n.kind() {
        "integer"
        | "decimal_integer_literal"
        | "hex_integer_literal"
        | "octal_integer_literal"
        | "binary_integer_literal" => parse_int(text).map(Value::Number),
        "float" | "decimal_floating_point_literal" => parse_float(text).map(Value::Number),
        "string" | "string_literal" | "character_literal" | "text_block" => {
            // An f-string with interpolations is no constant.
            if (0..n.named_child_count()).any(|i| {
                n.named_child(i as u32)
                    .is_some_and(|c| c.kind() == "interpolation")
            }) {
                return None;
            }
            Some(Value::Str(string_content(text)))
        }
        "concatenated_string" => {
            let mut s = String::new();
            for i in 0..n.named_child_count() {
                match value(n.named_child(i as u32)?, src)? {
                    Value::Str(part) => s.push_str(&part),
                    _ => return None,
                }
            }
            Some(Value::Str(s))
        }
        "true" | "false" | "none" | "null_literal" => Some(Value::Constant(text.to_string())),
        "unary_operator" | "unary_expression" => {
            let op = n.child_by_field_name("operator")?;
            let arg = n
                .child_by_field_name("argument")
                .or_else(|| n.child_by_field_name("operand"))?;
            match (op.utf8_text(src.as_bytes()).ok()?, value(arg, src)?) {
                ("-", Value::Number(v)) => Some(Value::Number(-v)),
                ("+", Value::Number(v)) => Some(Value::Number(v)),
                _ => None,
            }
        }
        "binary_operator" => {
            let op = n
                .child_by_field_name("operator")?
                .utf8_text(src.as_bytes())
                .ok()?;
            let l = value(n.child_by_field_name("left")?, src)?;
            let r = value(n.child_by_field_name("right")?, src)?;
            match (op, l, r) {
                ("**", Value::Number(a), Value::Number(b)) if b.abs() <= 64.0 => {
                    Some(Value::Number(a.powf(b)))
                }
                ("*", Value::Number(a), Value::Number(b)) => Some(Value::Number(a * b)),
                _ => None,
            }
        }
        "parenthesized_expression" => value(n.named_child(0)?, src),
        _ => None,
    }
}

/// The values of a literal collection whose every element is a literal (nested collections
/// flattened; a dictionary's keys and values), or `None` when some element is not.
pub fn collection(syntax: &Syntax, n: Node, src: &str) -> Option<Vec<Value>> {
    if !syntax.collections.contains(&n.kind()) {
        return None;
    }
    let mut out = Vec::new();
    for i in 0..n.named_child_count() {
        let c = n.named_child(i as u32)?;
        if syntax.comments.contains(&c.kind()) {
            continue;
        }
        if c.kind() == "pair" {
            for side in ["key", "value"] {
                let part = c.child_by_field_name(side)?;
                out.extend(element(syntax, part, src)?);
            }
        } else {
            out.extend(element(syntax, c, src)?);
        }
    }
    Some(out)
}

fn element(syntax: &Syntax, n: Node, src: &str) -> Option<Vec<Value>> {
    match value(n, src) {
        Some(v) => Some(vec![v]),
        None => collection(syntax, n, src),
    }
}

/// Literal values of a whole tree, by key (see [`Value::key`]).
pub fn of_tree(root: Node, src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(root, &mut |n| {
        if let Some(v) = value(n, src) {
            out.insert(v.key());
        }
    });
    out
}

/// The non-trivial literal values of an ETIP's workloads and tests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Literals {
    keys: BTreeSet<String>,
}

impl Literals {
    /// The literals of one script or test source of `lang`.
    pub fn of_script(lang: Language, text: &str) -> Result<Literals, ScreenError> {
        let mut l = Literals::default();
        l.add_script(lang, text)?;
        Ok(l)
    }

    /// Adds the non-trivial literals of `text`.
    pub fn add_script(&mut self, lang: Language, text: &str) -> Result<(), ScreenError> {
        let parsed = parse(lang, text)?;
        walk(parsed.tree.root_node(), &mut |n| {
            if let Some(v) = value(n, text)
                && !v.is_trivial()
            {
                self.keys.insert(v.key());
            }
        });
        Ok(())
    }

    pub fn contains(&self, v: &Value) -> bool {
        self.keys.contains(&v.key())
    }

    pub fn contains_number(&self, v: f64) -> bool {
        self.contains(&Value::Number(v))
    }

    pub fn contains_string(&self, s: &str) -> bool {
        self.contains(&Value::Str(s.to_string()))
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(expr: &str) -> Option<Value> {
        let text = format!("x = {expr}\n");
        let p = parse(Language::Python, &text).unwrap();
        let root = p.tree.root_node();
        let right = root
            .named_child(0)
            .and_then(|s| s.named_child(0))
            .and_then(|a| a.child_by_field_name("right"))
            .unwrap();
        value(right, &text)
    }

    #[test]
    fn one_number_written_many_ways_is_one_value() {
        for e in ["100000", "100_000", "1e5", "10**5", "0x186A0", "100000.0"] {
            assert_eq!(py(e).map(|v| v.key()), Some("n:100000".into()), "{e}");
        }
        assert_eq!(py("-3").unwrap().key(), "n:-3");
        assert_eq!(py("r'a\\d'").unwrap(), Value::Str("a\\d".into()));
        assert_eq!(py("'ab' 'cd'").unwrap(), Value::Str("abcd".into()));
        assert_eq!(py("f'{x}'"), None);
        assert_eq!(py("n + 1"), None);
    }

    #[test]
    fn java_literals_lose_their_suffixes() {
        let text = "class A { long a = 100_000L; float b = 2.5f; String c = \"xyz\"; }";
        let p = parse(Language::Java, text).unwrap();
        let keys = of_tree(p.tree.root_node(), text);
        for k in ["n:100000", "n:2.5", "s:xyz"] {
            assert!(keys.contains(k), "{k} in {keys:?}");
        }
    }

    #[test]
    fn trivial_and_specific_values() {
        assert!(py("0").unwrap().is_trivial() && py("None").unwrap().is_trivial());
        assert!(py("''").unwrap().is_trivial() && py("'\\n'").is_some());
        assert!(!py("5").unwrap().is_trivial() && !py("5").unwrap().is_specific());
        assert!(py("1000").unwrap().is_specific() && py("0.5").unwrap().is_specific());
        assert!(py("'utf-8'").unwrap().is_specific());
    }
}
