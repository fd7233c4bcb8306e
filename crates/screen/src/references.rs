//! The names a patch's added lines refer to, as dotted text (`time.perf_counter`,
//! `Thread.currentThread().getStackTrace`, an import's `time.perf_counter`), and the string
//! literals they hold: what the introspection, timing and cache kinds match their name lists
//! against. Comments are no references; a name in a string is matched by the kinds that look
//! at strings.

use crate::literals::{Value, value};
use crate::source::{Source, walk};
use tree_sitter::Node;

/// A name an added line refers to.
pub struct Reference<'a> {
    pub node: Node<'a>,
    /// The dotted name with whitespace and call arguments removed.
    pub dotted: String,
    /// The reference is (inside) the target of an assignment.
    pub assigned: bool,
}

fn compact(text: &str) -> String {
    // Arguments of calls inside a chain are not part of the name: `a.b(x).c` → `a.b().c`.
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for ch in text.chars() {
        match ch {
            '(' => {
                if depth == 0 {
                    out.push('(');
                }
                depth += 1;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    out.push(')');
                }
            }
            c if depth == 0 && !c.is_whitespace() => out.push(c),
            _ => {}
        }
    }
    out
}

fn assigned(n: Node) -> bool {
    let mut child = n;
    let mut cur = n.parent();
    while let Some(p) = cur {
        if matches!(
            p.kind(),
            "assignment" | "assignment_expression" | "augmented_assignment"
        ) {
            return p.child_by_field_name("left").is_some_and(|l| {
                l.start_byte() <= child.start_byte() && child.end_byte() <= l.end_byte()
            });
        }
        if matches!(
            p.kind(),
            "attribute" | "field_access" | "subscript" | "pattern_list" | "tuple_pattern"
        ) {
            child = p;
            cur = p.parent();
            continue;
        }
        return false;
    }
    false
}

/// The names added lines refer to.
pub fn names<'a>(s: &Source<'a>) -> Vec<Reference<'a>> {
    let mut out = Vec::new();
    walk(s.root(), &mut |n| {
        if !s.is_added(n) {
            return;
        }
        let dotted = match n.kind() {
            "attribute" | "field_access" | "identifier" | "scoped_identifier" => compact(s.text(n)),
            "method_invocation" => {
                let name = n
                    .child_by_field_name("name")
                    .map(|m| s.text(m))
                    .unwrap_or_default();
                match n.child_by_field_name("object") {
                    Some(o) => format!("{}.{name}", compact(s.text(o))),
                    None => name.to_string(),
                }
            }
            "import_from_statement" => {
                let module = n
                    .child_by_field_name("module_name")
                    .map(|m| compact(s.text(m)))
                    .unwrap_or_default();
                let mut names = Vec::new();
                let mut cursor = n.walk();
                for c in n.children_by_field_name("name", &mut cursor) {
                    let c = c.child_by_field_name("name").unwrap_or(c);
                    names.push(format!("{module}.{}", compact(s.text(c))));
                }
                for d in names {
                    out.push(Reference {
                        node: n,
                        dotted: d,
                        assigned: false,
                    });
                }
                return;
            }
            "dotted_name" if n.parent().is_some_and(|p| p.kind() == "import_statement") => {
                compact(s.text(n))
            }
            _ => return,
        };
        out.push(Reference {
            node: n,
            dotted,
            assigned: assigned(n),
        });
    });
    out
}

/// The string literals of added lines, with their content.
pub fn strings<'a>(s: &Source<'a>) -> Vec<(Node<'a>, String)> {
    let mut out = Vec::new();
    walk(s.root(), &mut |n| {
        if s.is_added(n)
            && s.syntax.strings.contains(&n.kind())
            && n.parent().is_none_or(|p| p.kind() != "concatenated_string")
            && let Some(Value::Str(content)) = value(n, &s.cand.text)
        {
            out.push((n, content));
        }
    });
    out
}

/// `dotted` is `name` or ends with `.name` (a name list entry may itself be dotted).
pub fn matches(dotted: &str, name: &str) -> bool {
    dotted == name
        || dotted
            .strip_suffix(name)
            .is_some_and(|head| head.ends_with('.'))
        || dotted.strip_suffix("()").is_some_and(|d| matches(d, name))
}

/// The first entry of `list` that `dotted` matches.
pub fn first_match(dotted: &str, list: &[&'static str]) -> Option<&'static str> {
    list.iter().copied().find(|name| matches(dotted, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_names_match_at_a_segment_boundary() {
        assert!(matches("time.perf_counter", "perf_counter"));
        assert!(matches("time.perf_counter", "time.perf_counter"));
        assert!(!matches("my_perf_counter", "perf_counter"));
        assert!(matches(
            "Thread.currentThread().getStackTrace",
            "getStackTrace"
        ));
        assert_eq!(compact("a.b(x, y).c"), "a.b().c");
    }
}
