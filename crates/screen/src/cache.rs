//! `cross_call_cache`: memoisation added on the changed path whose key is the function's input
//! and which outlives one call — so a benchmark that repeats the same call in one process times
//! a dictionary lookup.
//!
//! Found three ways: a cache decorator added to a function (`functools.lru_cache`/`cache`,
//! `cached_property`, sympy's `cacheit`, any decorator named `*cache*`/`*memo*`); a cache
//! library named (`lru_cache(...)(f)`, Guava's `CacheBuilder`, Caffeine); or an added write, from
//! inside a function, into a container bound for the life of the process (a module- or
//! class-level `dict`/`list`/`set`, a mutable default argument, a Java `static` map, list, set or
//! array) whose key is a parameter or a value computed from one. A cache can be the optimisation:
//! the finding says the speed may not survive a fresh process, which the dynamic check measures.
//! A cache local to one call (a memo dict in the function's own scope) is no finding.

use crate::references::{first_match, names};
use crate::source::{Binding, Source, walk};
use etip_core::Language;
use etip_core::hack::{Finding, HackKind};
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// Decorator or library names that memoise.
fn cache_names(lang: Language) -> &'static [&'static str] {
    match lang {
        Language::Python => &[
            "functools.lru_cache",
            "lru_cache",
            "functools.cache",
            "cachetools",
            "cacheit",
            "memoize",
        ],
        Language::Java => &["CacheBuilder", "Caffeine", "computeIfAbsent"],
    }
}

/// Methods that write into a container.
fn writers(lang: Language) -> &'static [&'static str] {
    match lang {
        Language::Python => &[
            "setdefault",
            "update",
            "append",
            "add",
            "insert",
            "extend",
            "__setitem__",
            "appendleft",
        ],
        Language::Java => &[
            "put",
            "putIfAbsent",
            "computeIfAbsent",
            "compute",
            "merge",
            "add",
            "putAll",
            "addAll",
            "set",
        ],
    }
}

/// The binding holds a container (a cache can be written into it).
fn is_container(s: &Source, b: &Binding) -> bool {
    match s.lang {
        Language::Python => b.value.is_some_and(|v| match v.kind() {
            "dictionary" | "list" | "set" => true,
            "call" => v.child_by_field_name("function").is_some_and(|f| {
                let name = s.text(f).rsplit('.').next().unwrap_or_default();
                matches!(
                    name,
                    "dict"
                        | "list"
                        | "set"
                        | "OrderedDict"
                        | "defaultdict"
                        | "WeakKeyDictionary"
                        | "WeakValueDictionary"
                        | "Counter"
                        | "deque"
                )
            }),
            _ => false,
        }),
        Language::Java => {
            let ty = b
                .declaration
                .child_by_field_name("type")
                .map(|t| s.text(t))
                .unwrap_or_default();
            ["Map", "List", "Set", "Cache", "Table", "[]"]
                .iter()
                .any(|w| ty.contains(w))
        }
    }
}

/// The name a write goes into: `NAME`, `self.NAME`, `cls.NAME`, `Class.NAME`, `this.NAME`.
fn target_name<'a>(s: &Source<'a>, n: Node<'a>) -> &'a str {
    let t = s.text(n);
    t.rsplit('.').next().unwrap_or(t)
}

/// Parameters of `function` and the locals computed from them (one assignment deep).
fn inputs(s: &Source, function: Node) -> BTreeSet<String> {
    let mut names = s.parameters(function);
    walk(function, &mut |n| {
        if matches!(
            n.kind(),
            "assignment" | "variable_declarator" | "assignment_expression"
        ) && let (Some(l), Some(r)) = (
            n.child_by_field_name("left")
                .or_else(|| n.child_by_field_name("name")),
            n.child_by_field_name("right")
                .or_else(|| n.child_by_field_name("value")),
        ) && s.identifiers(r).iter().any(|i| names.contains(*i))
        {
            for i in s.identifiers(l) {
                names.insert(i.to_string());
            }
        }
    });
    names
}

/// Mutable default arguments of a Python function (`def f(x, _memo={})`).
fn default_containers<'a>(s: &Source<'a>, function: Node<'a>) -> BTreeSet<&'a str> {
    let mut out = BTreeSet::new();
    if let Some(params) = function.child_by_field_name("parameters") {
        walk(params, &mut |p| {
            if matches!(p.kind(), "default_parameter" | "typed_default_parameter")
                && let (Some(name), Some(v)) = (
                    p.child_by_field_name("name"),
                    p.child_by_field_name("value"),
                )
                && matches!(v.kind(), "dictionary" | "list" | "set")
            {
                out.insert(s.text(name));
            }
        });
    }
    out
}

/// A write into a container: (the container's expression, the key or value written).
fn write<'a>(s: &Source<'a>, n: Node<'a>) -> Option<(Node<'a>, Node<'a>)> {
    match n.kind() {
        "assignment" | "augmented_assignment" | "assignment_expression" => {
            let left = n.child_by_field_name("left")?;
            match left.kind() {
                "subscript" => Some((
                    left.child_by_field_name("value")?,
                    left.child_by_field_name("subscript")?,
                )),
                "array_access" => Some((
                    left.child_by_field_name("array")?,
                    left.child_by_field_name("index")?,
                )),
                _ => None,
            }
        }
        "call" => {
            let f = n.child_by_field_name("function")?;
            if f.kind() != "attribute" {
                return None;
            }
            let method = s.text(f.child_by_field_name("attribute")?);
            writers(s.lang).contains(&method).then_some(())?;
            Some((
                f.child_by_field_name("object")?,
                n.child_by_field_name("arguments")?.named_child(0)?,
            ))
        }
        "method_invocation" => {
            let method = s.text(n.child_by_field_name("name")?);
            writers(s.lang).contains(&method).then_some(())?;
            Some((
                n.child_by_field_name("object")?,
                n.child_by_field_name("arguments")?.named_child(0)?,
            ))
        }
        _ => None,
    }
}

/// Findings in one file.
pub fn screen(s: &Source) -> Vec<Finding> {
    let mut out = Vec::new();
    let statics: BTreeMap<&str, Binding> = s
        .static_bindings()
        .into_iter()
        .filter(|(_, b)| is_container(s, b))
        .collect();
    // Decorators and cache libraries.
    for r in names(s) {
        let decorator = r
            .node
            .parent()
            .filter(|p| p.kind() == "decorator")
            .is_some()
            || r.node
                .parent()
                .and_then(|p| p.parent())
                .is_some_and(|p| p.kind() == "decorator");
        let last = r
            .dotted
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let named = first_match(&r.dotted, cache_names(s.lang));
        let decorated = decorator && (last.contains("cache") || last.contains("memo"));
        if (named.is_some() && r.dotted != "computeIfAbsent") || decorated {
            let what = if decorated { "decorator" } else { "cache" };
            out.push(s.finding(
                HackKind::CrossCallCache,
                r.node,
                format!("memoises across calls with the {what} `{}`", r.dotted),
            ));
        }
    }
    // Writes into process-long containers, keyed on the input.
    walk(s.root(), &mut |n| {
        if !s.is_added(n) {
            return;
        }
        let Some((container, key)) = write(s, n) else {
            return;
        };
        let Some(function) = s.enclosing_function(n) else {
            return;
        };
        let name = target_name(s, container);
        let defaults = default_containers(s, function);
        let local_shadow = s.lang == Language::Python
            && container.kind() == "identifier"
            && assigns_locally(s, function, name);
        let lifetime = if defaults.contains(name) {
            "a mutable default argument"
        } else if statics.contains_key(name) && !local_shadow {
            match s.lang {
                Language::Python => "a module- or class-level container",
                Language::Java => "a static field",
            }
        } else {
            return;
        };
        let inputs = inputs(s, function);
        let keyed: Vec<&str> = s
            .identifiers(key)
            .into_iter()
            .filter(|i| inputs.contains(*i))
            .collect();
        if keyed.is_empty() {
            return;
        }
        out.push(s.finding(
            HackKind::CrossCallCache,
            n,
            format!(
                "writes into `{name}`, {lifetime}, keyed on the input `{}`",
                keyed.join("`, `")
            ),
        ));
    });
    out
}

/// `name` is assigned as a plain local somewhere in `function` (so writes to it are local).
fn assigns_locally(s: &Source, function: Node, name: &str) -> bool {
    let mut found = false;
    let body = function.child_by_field_name("body").unwrap_or(function);
    walk(body, &mut |n| {
        if n.kind() == "global_statement" && s.identifiers(n).contains(name) {
            found = false;
        }
        if n.kind() == "assignment"
            && n.child_by_field_name("left")
                .is_some_and(|l| l.kind() == "identifier" && s.text(l) == name)
        {
            found = true;
        }
    });
    found
}
