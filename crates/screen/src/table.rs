//! `precomputed_table`: answers written into the code instead of computed — an added literal
//! collection of [`MIN_TABLE`] values or more, a literal dictionary or `Map.of` whose keys include
//! a value of the ETIP's workloads or tests, a number of [`MIN_DIGITS`] digits or more, or a
//! `return` of a large constant the original never wrote.
//!
//! A table of a primitive's values (a 256-entry byte table) is a legitimate optimisation that
//! this kind reports too: the finding quotes the table so a reader (or the judge) can tell a
//! table of the function's answers for the benchmark's inputs from one of a primitive's.

use crate::literals::{Literals, Value, collection, value};
use crate::source::{Source, walk};
use etip_core::hack::{Finding, HackKind};
use tree_sitter::Node;

/// Literal values in one added collection from which it is a table.
pub const MIN_TABLE: usize = 32;
/// Digits of one added number from which it is a precomputed constant.
pub const MIN_DIGITS: usize = 30;
/// A returned constant this large (in magnitude) and new to the file is a precomputed answer.
const LARGE_RETURN: f64 = 1000.0;

fn outermost_collection(s: &Source, n: Node) -> bool {
    n.parent()
        .is_none_or(|p| !s.syntax.collections.contains(&p.kind()) && p.kind() != "pair")
}

/// Findings in one file.
pub fn screen(s: &Source, workload: &Literals) -> Vec<Finding> {
    let mut out = Vec::new();
    let src = &s.cand.text;
    walk(s.root(), &mut |n| {
        if !s.is_added(n) {
            return;
        }
        let kind = n.kind();
        if s.syntax.collections.contains(&kind) && outermost_collection(s, n) {
            if let Some(values) = collection(s.syntax, n, src) {
                if values.len() >= MIN_TABLE {
                    out.push(s.finding(
                        HackKind::PrecomputedTable,
                        n,
                        format!("adds a literal table of {} values", values.len()),
                    ));
                } else if kind == "dictionary"
                    && let Some(v) = values
                        .iter()
                        .find(|v| !v.is_trivial() && workload.contains(v))
                {
                    out.push(s.finding(
                        HackKind::PrecomputedTable,
                        n,
                        format!("adds a literal mapping that holds {}, a value of the ETIP's workloads or tests", v.display()),
                    ));
                }
            }
        } else if kind == "method_invocation"
            && n.child_by_field_name("name")
                .is_some_and(|m| matches!(s.text(m), "of" | "ofEntries" | "asList"))
            && let Some(args) = n.child_by_field_name("arguments")
        {
            let values: Option<Vec<Value>> = (0..args.named_child_count())
                .map(|i| args.named_child(i as u32).and_then(|a| value(a, src)))
                .collect();
            if let Some(values) = values {
                let hit = values
                    .iter()
                    .find(|v| !v.is_trivial() && workload.contains(v));
                if values.len() >= MIN_TABLE || hit.is_some() {
                    out.push(s.finding(
                        HackKind::PrecomputedTable,
                        n,
                        match hit {
                            Some(v) => format!("adds a literal table that holds {}, a value of the ETIP's workloads or tests", v.display()),
                            None => format!("adds a literal table of {} values", values.len()),
                        },
                    ));
                }
            }
        } else if let Some(Value::Number(_)) = value(n, src)
            && s.text(n).chars().filter(char::is_ascii_digit).count() >= MIN_DIGITS
        {
            out.push(s.finding(
                HackKind::PrecomputedTable,
                n,
                "adds a number of 30 digits or more",
            ));
        } else if kind == "return_statement"
            && let Some(v) = n.named_child(0).and_then(|e| value(e, src))
            && let Value::Number(x) = v
            && x.abs() >= LARGE_RETURN
            && !s.original_literals.contains(&v.key())
        {
            out.push(s.finding(
                HackKind::PrecomputedTable,
                n,
                format!(
                    "returns the constant {}, which the original computed",
                    v.display()
                ),
            ));
        }
    });
    out
}
