//! The selection rule (rules §3.7): each version's changed code from the two trees, what a test
//! hit of it, and what selection saves per round.

use super::changes::{self, Range};
use super::coverage_py::FileLines;
use super::reports;
use etip_core::Language;
use etip_core::selection::{ChangedFile, CoveringTest, Hit, Savings};
use std::collections::BTreeMap;

/// One version's changed code: per file, the changed lines, the changed functions (with their
/// ranges; `None` for module-level code) and the module name.
#[derive(Debug, Clone)]
pub struct VersionCode {
    pub language: Language,
    pub files: Vec<ChangedFile>,
    /// Per file: changed function name → its range (`None`: module-level).
    pub functions: BTreeMap<String, BTreeMap<String, Option<Range>>>,
    /// Files with module-level changes.
    pub module_level: Vec<String>,
}

impl VersionCode {
    pub fn new(language: Language) -> VersionCode {
        VersionCode {
            language,
            files: Vec::new(),
            functions: BTreeMap::new(),
            module_level: Vec::new(),
        }
    }

    pub fn lines_of(&self, file: &str) -> Vec<u32> {
        self.files
            .iter()
            .find(|f| f.path == file)
            .map(|f| f.lines.clone())
            .unwrap_or_default()
    }
}

/// The changed code of both versions from the files' texts and functions. Lines outside every
/// function are named by the module (Python: `pkg.mod`) or the class the file declares (Java).
pub fn changed_code(
    language: Language,
    changed: &[String],
    texts: &[BTreeMap<String, String>],
    ranges: &[BTreeMap<String, Vec<Range>>],
) -> Vec<VersionCode> {
    let mut out = vec![VersionCode::new(language), VersionCode::new(language)];
    for f in changed {
        let c = changes::line_changes(
            texts[0].get(f).map(String::as_str),
            texts[1].get(f).map(String::as_str),
        );
        let module = match language {
            Language::Python => changes::python_module(f),
            Language::Java => super::java::file_class(f),
        };
        let sides = [
            (&c.original, &c.original_anchors),
            (&c.patched, &c.patched_anchors),
        ];
        for (i, (lines, anchors)) in sides.into_iter().enumerate() {
            if !texts[i].contains_key(f) {
                continue;
            }
            let empty = Vec::new();
            let r = ranges[i].get(f).unwrap_or(&empty);
            let funcs =
                changes::changed_functions(r, lines.iter().chain(anchors).copied(), &module);
            if funcs.values().any(Option::is_none) && !lines.is_empty() {
                out[i].module_level.push(f.clone());
            }
            out[i].files.push(ChangedFile {
                path: f.clone(),
                lines: lines.iter().copied().collect(),
                functions: funcs.keys().cloned().collect(),
            });
            out[i].functions.insert(f.clone(), funcs);
        }
    }
    out
}

/// What a test (its lines per file, `None` when it ran nothing of the files) hit of one version's
/// changed code; `outside` is what ran outside tests (imports). Changes outside every function:
/// Python runs them at import, outside tests, so a test hits them when they ran there and the test
/// runs any line of the file; in Java they are declarations (imports, signatures, annotations) that
/// no test executes, or field initializers that JaCoCo puts in a constructor or static initializer,
/// hit by the test that executes them.
pub fn hit(code: &VersionCode, test: Option<&FileLines>, outside: &FileLines) -> Hit {
    let mut h = Hit::default();
    let Some(lines) = test else {
        return h;
    };
    for f in &code.files {
        let Some(ran) = lines.get(&f.path) else {
            continue;
        };
        h.lines += f.lines.iter().filter(|l| ran.contains(l)).count();
        let funcs = code.functions.get(&f.path);
        for (name, range) in funcs.into_iter().flatten() {
            let executed = match range {
                Some(r) => ran.range(r.first..=r.last).next().is_some(),
                None => {
                    let ran_outside = || {
                        outside
                            .get(&f.path)
                            .is_some_and(|o| f.lines.iter().any(|l| o.contains(l)))
                    };
                    f.lines.iter().any(|l| ran.contains(l))
                        || (code.language == Language::Python && !ran.is_empty() && ran_outside())
                }
            };
            if executed && !h.functions.contains(name) {
                h.functions.push(name.clone());
            }
        }
    }
    h.functions.sort();
    h
}

/// Tests and time per round with and without selection, from the selection runs' reports,
/// averaged over the versions: Python, the covering testcases' own times (a class's time shared
/// evenly among its tests when the report lists no testcase times); Java, whole classes.
pub fn savings(
    language: Language,
    covering: &[CoveringTest],
    reports: &[reports::Report],
) -> Savings {
    let mut per_class: BTreeMap<&str, usize> = BTreeMap::new();
    for c in covering {
        *per_class.entry(c.class.as_str()).or_default() += 1;
    }
    let selected: std::collections::BTreeSet<(String, String)> = covering
        .iter()
        .map(|c| super::python::pytest_case(&c.test))
        .collect();
    let n = reports.len().max(1) as f64;
    let (mut all, mut sel, mut tests_all) = (0.0, 0.0, 0usize);
    for r in reports {
        let by_case = language == Language::Python && !r.cases.is_empty();
        if by_case {
            for c in &r.cases {
                if selected.contains(&(c.class.clone(), c.name.clone())) {
                    sel += c.secs;
                }
            }
        }
        for c in &r.classes {
            all += c.secs;
            // A Java test is a class (what a covering run selects); a Python test a testcase.
            tests_all += match language {
                Language::Java => 1,
                Language::Python => c.tests as usize,
            };
            if by_case {
                continue;
            }
            if let Some(k) = per_class.get(c.name.as_str())
                && c.tests > 0
            {
                let share = match language {
                    Language::Java => 1.0,
                    Language::Python => (*k as f64 / c.tests as f64).min(1.0),
                };
                sel += c.secs * share;
            }
        }
    }
    Savings {
        tests_all: (tests_all as f64 / n).round() as usize,
        tests_selected: covering.len(),
        secs_all: all / n,
        secs_selected: sel / n,
    }
}

/// Java: drops the class-level name from a file's changed functions when none of its changed
/// lines outside every method ran in any session (`executed`: every line any session ran, per
/// file) — an added import or a changed signature is not code a test can execute.
pub fn drop_unexecuted_class_level(code: &mut VersionCode, executed: &FileLines) {
    for f in &mut code.files {
        let Some(funcs) = code.functions.get_mut(&f.path) else {
            continue;
        };
        let ran = executed.get(&f.path);
        let executed_any = f
            .lines
            .iter()
            .filter(|l| !funcs.values().flatten().any(|r| r.contains(**l)))
            .any(|l| ran.is_some_and(|r| r.contains(l)));
        if !executed_any {
            funcs.retain(|_, r| r.is_some());
            f.functions.retain(|n| funcs.contains_key(n));
        }
    }
    code.module_level.clear();
}
