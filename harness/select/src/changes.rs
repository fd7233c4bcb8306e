//! The changed code of an ETIP, from the two trees: which files differ, their changed lines in
//! each version (a line diff), and the functions holding them.
//!
//! A removed or modified line is a changed line of the original; an added or modified line one of
//! the patched version. A pure insertion changes no line of the original, but it changes the
//! function it lands in: the original line just before it *anchors* the change there (and the
//! patched line just after a pure deletion likewise), so both versions name the function.

use std::collections::{BTreeMap, BTreeSet};

/// A named range of lines (a function, method or class), 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub name: String,
    pub first: u32,
    pub last: u32,
}

impl Range {
    pub fn contains(&self, line: u32) -> bool {
        self.first <= line && line <= self.last
    }
}

/// The changed lines of each version of one file, and the anchors of pure insertions/deletions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineChanges {
    pub original: BTreeSet<u32>,
    pub patched: BTreeSet<u32>,
    pub original_anchors: BTreeSet<u32>,
    pub patched_anchors: BTreeSet<u32>,
}

/// The line diff of one file's two versions (`None`: the file does not exist in that version).
pub fn line_changes(original: Option<&str>, patched: Option<&str>) -> LineChanges {
    let (a, b) = (original.unwrap_or(""), patched.unwrap_or(""));
    let diff = similar::TextDiff::from_lines(a, b);
    let mut out = LineChanges::default();
    let line = |i: usize| i as u32 + 1;
    for op in diff.ops() {
        match *op {
            similar::DiffOp::Equal { .. } => {}
            similar::DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => {
                out.original
                    .extend((old_index..old_index + old_len).map(line));
                out.patched_anchors.insert(line(new_index));
            }
            similar::DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => {
                out.patched
                    .extend((new_index..new_index + new_len).map(line));
                out.original_anchors
                    .insert(line(old_index.saturating_sub(1)));
            }
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                out.original
                    .extend((old_index..old_index + old_len).map(line));
                out.patched
                    .extend((new_index..new_index + new_len).map(line));
            }
        }
    }
    out
}

/// The innermost range holding `line` (the shortest), if any.
pub fn innermost(ranges: &[Range], line: u32) -> Option<&Range> {
    ranges
        .iter()
        .filter(|r| r.contains(line))
        .min_by_key(|r| (r.last - r.first, std::cmp::Reverse(r.first)))
}

/// The changed functions of one file in one version: the innermost range of every changed or
/// anchor line, or `module` for lines outside every range (module- or class-level code).
pub fn changed_functions(
    ranges: &[Range],
    lines: impl IntoIterator<Item = u32>,
    module: &str,
) -> BTreeMap<String, Option<Range>> {
    let mut out = BTreeMap::new();
    for l in lines {
        match innermost(ranges, l) {
            Some(r) => out.insert(r.name.clone(), Some(r.clone())),
            None => out.insert(module.to_string(), None),
        };
    }
    out
}

/// The module name of a Python file as etip's miner writes it: the path without a leading `src/`
/// and `.py`, `__init__` dropped, dots between the parts.
pub fn python_module(path: &str) -> String {
    let p = path.strip_suffix(".py").unwrap_or(path);
    let p = p.strip_prefix("src/").unwrap_or(p);
    let mut parts: Vec<&str> = p.split('/').collect();
    if parts.last() == Some(&"__init__") {
        parts.pop();
    }
    parts.join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[u32]) -> BTreeSet<u32> {
        v.iter().copied().collect()
    }

    #[test]
    fn modified_added_and_removed_lines_fall_on_their_versions() {
        let a = "def f():\n    x = 1\n    return x\n\ndef g():\n    pass\n";
        let b = "def f():\n    x = 2\n    return x\n\ndef g():\n    y = 0\n    pass\n";
        let c = line_changes(Some(a), Some(b));
        assert_eq!(c.original, set(&[2]));
        assert_eq!(c.patched, set(&[2, 6]));
        // `y = 0` was inserted after line 5 of the original (`def g():`).
        assert_eq!(c.original_anchors, set(&[5]));
        let removed = line_changes(Some(b), Some(a));
        assert_eq!(removed.original, set(&[2, 6]));
        assert_eq!(removed.patched_anchors, set(&[6]));
        let new_file = line_changes(None, Some("a\nb\n"));
        assert_eq!(new_file.patched, set(&[1, 2]));
        assert!(new_file.original.is_empty());
    }

    #[test]
    fn lines_map_to_their_innermost_function_or_the_module() {
        let ranges = vec![
            Range {
                name: "pkg.mod.C".into(),
                first: 1,
                last: 10,
            },
            Range {
                name: "pkg.mod.C.m".into(),
                first: 3,
                last: 6,
            },
        ];
        let f = changed_functions(&ranges, [4, 8, 20], "pkg.mod");
        let names: Vec<&String> = f.keys().collect();
        assert_eq!(names, ["pkg.mod", "pkg.mod.C", "pkg.mod.C.m"]);
        assert_eq!(f["pkg.mod"], None);
        assert_eq!(python_module("src/pkg/__init__.py"), "pkg");
        assert_eq!(python_module("pkg/sub/mod.py"), "pkg.sub.mod");
        assert_eq!(python_module("six.py"), "six");
    }
}
