//! `selection.jsonl`: which tests execute an ETIP's changed code (`etip select`), read by
//! `etip measure --tests covering` (schema version [`SELECTION_SCHEMA_VERSION`]).
//!
//! One [`TestSelection`] per ETIP. The changed code of each version is what differs between the
//! two trees: the changed lines (of the original for removed or modified lines, of the patched
//! version for added or modified lines) and the functions holding them. A test *covers* the change
//! when, in either version, it executes a changed line or a line of a changed function; the
//! covering tests are the only ones that can detect the improvement.

use crate::Language;
use serde::{Deserialize, Serialize};

/// The schema version of [`TestSelection`].
pub const SELECTION_SCHEMA_VERSION: u32 = 1;

/// What the selection run concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectionOutcome {
    /// Some tests cover the change.
    Selected,
    /// The tests ran with coverage, and none executes the changed code.
    NoCoveringTests,
    /// The ETIP was not built, or the selection run could not give coverage (see `detail`).
    Failed,
}

impl SelectionOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            SelectionOutcome::Selected => "selected",
            SelectionOutcome::NoCoveringTests => "no_covering_tests",
            SelectionOutcome::Failed => "failed",
        }
    }
}

/// The changed code of one file in one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    /// Path relative to the tree.
    pub path: String,
    /// Changed line numbers (1-based) in this version.
    pub lines: Vec<u32>,
    /// Qualified names of the functions holding changed lines (Python: `pkg.mod.Class.func`,
    /// `pkg.mod` for module-level lines; Java: `pkg.Class#method`).
    pub functions: Vec<String>,
}

/// What one test executes of one version's changed code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    /// Changed functions it executes (a line of their body).
    pub functions: Vec<String>,
    /// Changed lines it executes.
    pub lines: usize,
}

impl Hit {
    pub fn any(&self) -> bool {
        !self.functions.is_empty() || self.lines > 0
    }
}

/// A test that executes the changed code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoveringTest {
    /// What the test command selects: a pytest node id, or a Java test class.
    pub test: String,
    /// The class the reports time it under (pytest's `classname`, the Java class).
    pub class: String,
    pub original: Hit,
    pub patched: Hit,
}

/// The selection run of one version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionRun {
    /// `original` or `patched`.
    pub version: String,
    /// Tests that ran (with coverage).
    pub tests: usize,
    /// Tests that failed or errored in the run.
    pub failed: usize,
    /// Wall time of the coverage run.
    pub secs: f64,
    /// Changed code of this version.
    pub changed: Vec<ChangedFile>,
}

/// What selection saves per round, from the per-test times of the selection run (measured with
/// coverage on, so only the ratio carries over to timed rounds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Savings {
    pub tests_all: usize,
    pub tests_selected: usize,
    /// Σ test times of all tests (both versions' runs, averaged).
    pub secs_all: f64,
    pub secs_selected: f64,
}

/// One line of `selection.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestSelection {
    pub schema_version: u32,
    pub id: String,
    pub language: Language,
    pub outcome: SelectionOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The instance image the selection ran in.
    #[serde(default)]
    pub image: Option<String>,
    /// What a re-run must match to reuse this selection (image, tests, tool versions).
    pub key: String,
    /// `pytest-cov` (Python) or `jacoco` (Java).
    pub tool: String,
    /// The covering tests, sorted by `test`.
    pub covering: Vec<CoveringTest>,
    /// Tests that ran and cover nothing of the change.
    pub not_covering: usize,
    pub runs: Vec<VersionRun>,
    #[serde(default)]
    pub savings: Option<Savings>,
    /// Wall time of the whole selection (sessions, both runs, reading coverage).
    pub secs: f64,
    /// Notes a reader should know (fallbacks taken, module-level changes).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl TestSelection {
    /// The tests a covering run selects, sorted and unique.
    pub fn tests(&self) -> Vec<String> {
        let mut t: Vec<String> = self.covering.iter().map(|c| c.test.clone()).collect();
        t.sort();
        t.dedup();
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_reads_back_and_names_its_tests() {
        let s = TestSelection {
            schema_version: SELECTION_SCHEMA_VERSION,
            id: "demo-1".into(),
            language: Language::Python,
            outcome: SelectionOutcome::Selected,
            detail: None,
            image: Some("etip/instance:x".into()),
            key: "k".into(),
            tool: "pytest-cov".into(),
            covering: vec![CoveringTest {
                test: "tests/test_a.py::test_b".into(),
                class: "tests.test_a".into(),
                original: Hit {
                    functions: vec!["pkg.mod.f".into()],
                    lines: 2,
                },
                patched: Hit::default(),
            }],
            not_covering: 3,
            runs: Vec::new(),
            savings: None,
            secs: 1.5,
            notes: Vec::new(),
        };
        let text = serde_json::to_string(&s).unwrap();
        assert!(text.contains("\"outcome\":\"selected\""), "{text}");
        let back: TestSelection = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.tests(), ["tests/test_a.py::test_b"]);
        assert!(back.covering[0].original.any() && !back.covering[0].patched.any());
    }
}
