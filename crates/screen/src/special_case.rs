//! `input_special_case`: a new branch that compares an input (or a value derived from one)
//! with a literal and returns or leaves early — a fast path for exactly the benchmark's input.
//!
//! Comparing with a trivial value (0, ±1, 2, an empty or one-character string, `None`) is a base
//! case, not a special case. A comparison with any other literal is a finding when one of these
//! holds: the value is one of the ETIP's workload or test values; the value is a number and the
//! branch returns a constant (a precomputed answer) or writes out a literal list of three values
//! or more; or the value is
//! a number that is specific (|v| ≥ 10, or with a fraction) and new to the file — the original
//! never wrote it. A string new to the file is no finding by itself (option values and error
//! messages are compared with strings all the time); membership in a string (`c in "iuf"`) and a
//! key looked up in a container (`"zero" in d`) compare no input with a value.

use crate::literals::{Literals, Value, collection, value};
use crate::source::{Binding, Source, walk};
use etip_core::Language;
use etip_core::hack::{Finding, HackKind};
use std::collections::BTreeMap;
use tree_sitter::Node;

/// A comparison with literals found in a condition.
struct Compared<'a> {
    /// The side that is not a literal.
    operand: Node<'a>,
    values: Vec<Value>,
}

/// The values of `n` if it is a literal, a literal collection, or a name bound at module,
/// class or `static` level to one.
fn literal_values<'a>(
    s: &Source<'a>,
    statics: &BTreeMap<&'a str, Binding<'a>>,
    n: Node<'a>,
) -> Option<Vec<Value>> {
    if let Some(v) = value(n, &s.cand.text) {
        return Some(vec![v]);
    }
    if let Some(vs) = collection(s.syntax, n, &s.cand.text) {
        return Some(vs);
    }
    if n.kind() == "identifier"
        && let Some(bound) = statics.get(s.text(n)).and_then(|b| b.value)
    {
        return value(bound, &s.cand.text)
            .map(|v| vec![v])
            .or_else(|| collection(s.syntax, bound, &s.cand.text));
    }
    None
}

/// Comparisons for equality or membership with literals in a condition.
fn comparisons<'a>(
    s: &Source<'a>,
    statics: &BTreeMap<&'a str, Binding<'a>>,
    cond: Node<'a>,
) -> Vec<Compared<'a>> {
    let mut out = Vec::new();
    walk(cond, &mut |n| {
        let pair = match (s.lang, n.kind()) {
            (Language::Python, "comparison_operator") => {
                let mut cursor = n.walk();
                let ops: Vec<&str> = n
                    .children_by_field_name("operators", &mut cursor)
                    .map(|o| s.text(o))
                    .collect();
                let equality = ops.len() == 1 && matches!(ops[0], "==" | "in" | "is");
                match (equality, n.named_child(0), n.named_child(1)) {
                    (true, Some(a), Some(b)) => Some((a, b)),
                    _ => None,
                }
            }
            (Language::Java, "binary_expression") => {
                let op = n.child_by_field_name("operator").map(|o| s.text(o));
                match (
                    op,
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ) {
                    (Some("=="), Some(a), Some(b)) => Some((a, b)),
                    _ => None,
                }
            }
            (Language::Java, "method_invocation") => {
                let name = n.child_by_field_name("name").map(|m| s.text(m));
                let object = n.child_by_field_name("object");
                let arg = n
                    .child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0));
                match (name, object, arg) {
                    (Some("equals" | "equalsIgnoreCase" | "contentEquals"), Some(o), Some(a)) => {
                        Some((o, a))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let Some((a, b)) = pair else { return };
        let membership = s.lang == Language::Python
            && n.kind() == "comparison_operator"
            && n.child_by_field_name("operators")
                .is_some_and(|o| s.text(o) == "in");
        match (literal_values(s, statics, a), literal_values(s, statics, b)) {
            // `x in "iuf"` is a substring test, `"key" in d` a lookup: neither compares the
            // input with a value.
            _ if membership
                && (s.syntax.strings.contains(&b.kind()) || value(a, &s.cand.text).is_some()) => {}
            (Some(values), None) => out.push(Compared { operand: b, values }),
            (None, Some(values)) => out.push(Compared { operand: a, values }),
            _ => {}
        }
    });
    out
}

/// The statement that leaves early, if `consequence` (a block or one statement) has one at
/// its top level.
fn early_exit<'a>(s: &Source<'a>, consequence: Node<'a>) -> Option<Node<'a>> {
    if s.syntax.exits.contains(&consequence.kind()) {
        return Some(consequence);
    }
    (0..consequence.named_child_count())
        .filter_map(|i| consequence.named_child(i as u32))
        .find(|c| s.syntax.exits.contains(&c.kind()))
}

/// The branch writes out its answer: a literal collection of three values or more (yielded or
/// returned element by element).
fn holds_answer(s: &Source, consequence: Node) -> bool {
    let mut found = false;
    walk(consequence, &mut |n| {
        if !found && let Some(values) = collection(s.syntax, n, &s.cand.text) {
            found = values.len() >= 3;
        }
    });
    found
}

/// The exit returns a literal value or a literal collection.
fn returns_constant(s: &Source, exit: Node) -> bool {
    exit.kind() == "return_statement"
        && exit.named_child(0).is_some_and(|v| {
            value(v, &s.cand.text).is_some() || collection(s.syntax, v, &s.cand.text).is_some()
        })
}

/// The parts of a branch: (condition, what runs when it holds, whether that part is a value
/// rather than statements).
fn branch_parts<'a>(s: &Source<'a>, n: Node<'a>) -> Option<(Node<'a>, Node<'a>, bool)> {
    if s.syntax.branches.contains(&n.kind()) {
        return Some((
            n.child_by_field_name("condition")?,
            n.child_by_field_name("consequence")?,
            false,
        ));
    }
    if s.syntax.conditional_expressions.contains(&n.kind()) {
        return match s.lang {
            // `body if condition else alternative`
            Language::Python => Some((n.named_child(1)?, n.named_child(0)?, true)),
            Language::Java => Some((
                n.child_by_field_name("condition")?,
                n.child_by_field_name("consequence")?,
                true,
            )),
        };
    }
    None
}

/// Findings in one file.
pub fn screen(s: &Source, workload: &Literals) -> Vec<Finding> {
    let statics = s.static_bindings();
    let mut out = Vec::new();
    walk(s.root(), &mut |n| {
        if !s.is_added(n) {
            return;
        }
        let Some((cond, consequence, is_value)) = branch_parts(s, n) else {
            return;
        };
        let (exits, constant) = if is_value {
            let constant = value(consequence, &s.cand.text).is_some()
                || collection(s.syntax, consequence, &s.cand.text).is_some();
            (true, constant)
        } else {
            match early_exit(s, consequence) {
                Some(exit) => (
                    true,
                    returns_constant(s, exit) || holds_answer(s, consequence),
                ),
                None => (false, false),
            }
        };
        if !exits {
            return;
        }
        for c in comparisons(s, &statics, cond) {
            let values: Vec<&Value> = c.values.iter().filter(|v| !v.is_trivial()).collect();
            if values.is_empty() {
                continue;
            }
            let in_workload = values.iter().find(|v| workload.contains(v));
            // Strings new to a file are option values and messages as often as inputs: only a
            // number counts here; a string counts when the workload uses it.
            let new_specific = values.iter().find(|v| {
                matches!(v, Value::Number(_))
                    && v.is_specific()
                    && !s.original_literals.contains(&v.key())
            });
            // A constant chosen for a string (an option's name) is dispatch, not an answer.
            let number = values.iter().find(|v| matches!(v, Value::Number(_)));
            let why = if let Some(v) = in_workload {
                format!("{}, a value of the ETIP's workloads or tests", v.display())
            } else if let (true, Some(v)) = (constant, number) {
                v.display()
            } else if let Some(v) = new_specific {
                format!("{}, a value new to the file", v.display())
            } else {
                continue;
            };
            let then = if constant {
                "returns a constant"
            } else if is_value {
                "chooses another value"
            } else {
                "leaves early"
            };
            out.push(s.finding(
                HackKind::InputSpecialCase,
                n,
                format!(
                    "compares `{}` with {why} and {then}",
                    clip(s.text(c.operand))
                ),
            ));
            break;
        }
    });
    out
}

fn clip(t: &str) -> String {
    let t: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    match t.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t,
    }
}
