//! Two labels JETO's study assigned by hand to every agent patch, computed here from the file
//! versions: `exact_match` (the candidate's version of every changed file has the syntax tree of
//! the ground truth's, whitespace and comments aside) and `same_location` (the candidate changes
//! every function or method the ground truth changes).
//!
//! ```
//! use etip_core::Language;
//! use etip_lang::labels::{FileVersions, labels};
//! let original = b"def f(xs):\n    out = []\n    for x in xs:\n        if x not in out:\n            out.append(x)\n    return out\n";
//! let reference = b"def f(xs):\n    return list(dict.fromkeys(xs))\n";
//! let candidate = b"def f(xs):\n    # linear\n    return list(dict.fromkeys(xs))\n";
//! let l = labels(Language::Python, &[FileVersions {
//!     path: "m.py",
//!     original: Some(original),
//!     reference: Some(reference),
//!     candidate: Some(candidate),
//! }]).unwrap();
//! assert!(l.exact_match && l.same_location);
//! assert_eq!(l.reference_units, ["m.f"]);
//! ```

use crate::semantic::{Analyzer, FileChange, Side, compare};
use crate::{LangError, Language, profile};
use std::collections::BTreeSet;

/// The versions of one file: `None` where the file does not exist (added or deleted).
#[derive(Debug, Clone, Copy)]
pub struct FileVersions<'a> {
    pub path: &'a str,
    pub original: Option<&'a [u8]>,
    pub reference: Option<&'a [u8]>,
    pub candidate: Option<&'a [u8]>,
}

/// The labels of one candidate patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labels {
    pub exact_match: bool,
    pub same_location: bool,
    /// Functions and methods the ground truth changes (qualified names, sorted).
    pub reference_units: Vec<String>,
    /// Functions and methods the candidate changes.
    pub candidate_units: Vec<String>,
}

/// Rows (0-based) removed from `old` and added in `new`, from a Myers line diff: the rows a
/// [`Side`] names.
pub fn changed_rows(old: &[u8], new: &[u8]) -> (Vec<usize>, Vec<usize>) {
    let (o, n) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_lines(o.as_ref(), n.as_ref());
    let (mut del, mut add) = (Vec::new(), Vec::new());
    for op in diff.ops() {
        for c in diff.iter_changes(op) {
            match c.tag() {
                similar::ChangeTag::Delete => del.extend(c.old_index()),
                similar::ChangeTag::Insert => add.extend(c.new_index()),
                similar::ChangeTag::Equal => {}
            }
        }
    }
    (del, add)
}

/// Functions and methods changed from `old` to `new` (a file added or deleted changes all of its
/// units, named by the file when it has none).
fn changed_units(
    a: &mut Analyzer,
    lang: Language,
    path: &str,
    old: Option<&[u8]>,
    new: Option<&[u8]>,
) -> Result<BTreeSet<String>, LangError> {
    if old == new {
        return Ok(BTreeSet::new());
    }
    let so = old.map(|o| a.summarize(o)).transpose()?;
    let sn = new.map(|n| a.summarize(n)).transpose()?;
    // Rows of a side that does not exist are empty (the other side's rows are all changed).
    let (ro, rn) = match (old, new) {
        (None, Some(n)) => (Vec::new(), (0..line_count(n)).collect()),
        (Some(o), None) => ((0..line_count(o)).collect(), Vec::new()),
        _ => changed_rows(old.unwrap_or_default(), new.unwrap_or_default()),
    };
    let old_side = so.as_ref().map(|summary| Side {
        summary,
        path,
        rows: &ro,
    });
    let new_side = sn.as_ref().map(|summary| Side {
        summary,
        path,
        rows: &rn,
    });
    Ok(match compare(lang, old_side, new_side) {
        FileChange::Semantic(names) => names.into_iter().collect(),
        FileChange::NotSemantic(_) => BTreeSet::new(),
    })
}

fn line_count(s: &[u8]) -> usize {
    s.split(|b| *b == b'\n').count()
}

/// The labels of a candidate (see the module docs). Files in `files` are every file the
/// candidate or the ground truth changes; a file the candidate left alone has `candidate` equal
/// to `original`. Files that are not sources of `lang` compare byte for byte.
pub fn labels(lang: Language, files: &[FileVersions]) -> Result<Labels, LangError> {
    let mut a = Analyzer::new(lang)?;
    let mut exact = true;
    let mut reference_units = BTreeSet::new();
    let mut candidate_units = BTreeSet::new();
    for f in files {
        let source = profile::is_source(lang, f.path);
        exact &= match (f.reference, f.candidate) {
            (None, None) => true,
            (Some(r), Some(c)) if source => r == c || a.ast_equal(r, c)?,
            (Some(r), Some(c)) => r == c,
            _ => false,
        };
        if source {
            reference_units.extend(changed_units(
                &mut a,
                lang,
                f.path,
                f.original,
                f.reference,
            )?);
            candidate_units.extend(changed_units(
                &mut a,
                lang,
                f.path,
                f.original,
                f.candidate,
            )?);
        }
    }
    let same_location = if reference_units.is_empty() {
        exact
    } else {
        reference_units.is_subset(&candidate_units)
    };
    Ok(Labels {
        exact_match: exact,
        same_location,
        reference_units: reference_units.into_iter().collect(),
        candidate_units: candidate_units.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGINAL: &str = "package demo;\n\nclass T {\n    static int a(int x) {\n        return x + 1;\n    }\n\n    static int b(int x) {\n        return x * 2;\n    }\n}\n";

    fn java(original: &str, reference: &str, candidate: &str) -> Labels {
        labels(
            Language::Java,
            &[FileVersions {
                path: "src/main/java/demo/T.java",
                original: Some(original.as_bytes()),
                reference: Some(reference.as_bytes()),
                candidate: Some(candidate.as_bytes()),
            }],
        )
        .unwrap()
    }

    #[test]
    fn the_same_code_formatted_otherwise_is_an_exact_match() {
        let reference = ORIGINAL.replace("x + 1", "1 + x");
        let candidate = reference.replace("return 1 + x;", "// faster\n        return 1+x;");
        let l = java(ORIGINAL, &reference, &candidate);
        assert!(l.exact_match && l.same_location, "{l:?}");
        assert_eq!(l.reference_units, ["demo.T#a"]);
    }

    #[test]
    fn another_change_in_the_same_method_is_the_same_location_only() {
        let reference = ORIGINAL.replace("x + 1", "1 + x");
        let candidate = ORIGINAL.replace("x + 1", "x - -1");
        let l = java(ORIGINAL, &reference, &candidate);
        assert!(!l.exact_match && l.same_location, "{l:?}");
    }

    #[test]
    fn a_change_elsewhere_is_neither() {
        let reference = ORIGINAL.replace("x + 1", "1 + x");
        let candidate = ORIGINAL.replace("x * 2", "x << 1");
        let l = java(ORIGINAL, &reference, &candidate);
        assert!(!l.exact_match && !l.same_location, "{l:?}");
        assert_eq!(l.candidate_units, ["demo.T#b"]);
    }

    #[test]
    fn a_file_only_one_side_changes_or_deletes_breaks_the_exact_match() {
        let reference = ORIGINAL.replace("x + 1", "1 + x");
        let l = labels(
            Language::Java,
            &[
                FileVersions {
                    path: "src/main/java/demo/T.java",
                    original: Some(ORIGINAL.as_bytes()),
                    reference: Some(reference.as_bytes()),
                    candidate: Some(reference.as_bytes()),
                },
                FileVersions {
                    path: "src/main/java/demo/U.java",
                    original: Some(b"class U {}"),
                    reference: Some(b"class U {}"),
                    candidate: None,
                },
            ],
        )
        .unwrap();
        assert!(!l.exact_match && l.same_location, "{l:?}");
    }
}
