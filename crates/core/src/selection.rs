//! `selection.jsonl`: which tests execute an ETIP's changed code (`etip select`), read by
//! `etip measure --tests covering` (schema version [`SELECTION_SCHEMA_VERSION`]).
//!
//! One [`TestSelection`] per ETIP. The changed code of each version is what differs between the
//! two trees: the changed lines (of the original for removed or modified lines, of the patched
//! version for added or modified lines) and the functions holding them. A test *covers* the change
//! when, in either version, it executes a changed line or a line of a changed function; the
//! covering tests are the only ones that can detect the improvement.

use crate::Language;
use crate::detector::DetectorKind;
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

/// A benchmark of the project's own suites that executes the changed code: an asv benchmark
/// (one per parameter combination), a test using pytest-benchmark's `benchmark` fixture, or a JMH
/// benchmark (one per `@Param` set). Each is one detector of `etip measure` (`--detectors suites`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteBenchmark {
    /// [`DetectorKind::Asv`], [`DetectorKind::PytestBenchmark`] or [`DetectorKind::Jmh`].
    pub kind: DetectorKind,
    /// asv's name (`bench_text.TimeText.time_dedup`, with `(10, 'a')` for a parameter
    /// combination); pytest's node id for a pytest-benchmark test; JMH's benchmark with its
    /// parameters in name order (`org.acme.Bench.parse[size=100]`, with `#avgt` when the
    /// benchmark runs in several modes).
    pub name: String,
    /// asv: the benchmark folder, relative to the tree (`benchmarks`); JMH: the Maven module
    /// (empty for the root project); empty for pytest.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub dir: String,
    /// asv: the module in that folder (`bench_text`, `sub.bench`); JMH: the class folder holding
    /// JMH's benchmark list, relative to the tree (`bench/target/classes`); empty for pytest.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub module: String,
    /// asv: the attribute path in the module (`TimeText.time_dedup`); JMH: the benchmark method
    /// (`org.acme.Bench.parse`); empty for pytest.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub target: String,
    /// JMH: the `@Param` values of this run.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub values: std::collections::BTreeMap<String, String>,
    /// JMH: the benchmark mode (`thrpt`, `avgt`, `sample`, `ss`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mode: String,
    /// asv: the index of the parameter combination in `itertools.product(*params)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<usize>,
    /// asv: calls per timed sample when the benchmark sets no `number` of its own, calibrated
    /// once on the original version (asv's rule: a sample lasts at least its `sample_time`), the
    /// same for both versions. JMH: the operations etip's figure stands for (JMH's time per
    /// operation times this; about one second's worth on the original), the same for both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    pub original: Hit,
    pub patched: Hit,
}

impl SuiteBenchmark {
    /// The detector name measurements give it (`asv:<name>`, `pytest_benchmark:<node id>`).
    pub fn detector(&self) -> String {
        format!("{}:{}", self.kind.as_str(), self.name)
    }
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
    /// The benchmarks of the project's own suites that cover the change, sorted by detector.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suites: Vec<SuiteBenchmark>,
    /// The names of the suites' benchmarks that ran and cover nothing of the change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suites_not_covering: Vec<String>,
    /// The machine the coverage runs ran on (on a cluster, the node with its labels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<crate::node::Node>,
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
            suites: Vec::new(),
            suites_not_covering: Vec::new(),
            node: None,
        };
        let text = serde_json::to_string(&s).unwrap();
        assert!(text.contains("\"outcome\":\"selected\""), "{text}");
        let back: TestSelection = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.tests(), ["tests/test_a.py::test_b"]);
        assert!(back.covering[0].original.any() && !back.covering[0].patched.any());
        assert!(
            !text.contains("suites"),
            "test-only selections keep their shape: {text}"
        );
    }

    #[test]
    fn suite_benchmarks_name_their_detectors() {
        let b = SuiteBenchmark {
            kind: DetectorKind::Asv,
            name: "bench_text.TimeText.time_dedup(100)".into(),
            dir: "benchmarks".into(),
            module: "bench_text".into(),
            target: "TimeText.time_dedup".into(),
            params: Some(0),
            number: Some(20),
            values: Default::default(),
            mode: String::new(),
            original: Hit::default(),
            patched: Hit::default(),
        };
        assert_eq!(b.detector(), "asv:bench_text.TimeText.time_dedup(100)");
        let text = serde_json::to_string(&b).unwrap();
        assert_eq!(serde_json::from_str::<SuiteBenchmark>(&text).unwrap(), b);
        let p = SuiteBenchmark {
            kind: DetectorKind::PytestBenchmark,
            name: "tests/test_speed.py::test_dedup".into(),
            dir: String::new(),
            module: String::new(),
            target: String::new(),
            params: None,
            number: None,
            ..b
        };
        assert_eq!(
            p.detector(),
            "pytest_benchmark:tests/test_speed.py::test_dedup"
        );
        assert!(!serde_json::to_string(&p).unwrap().contains("module"));
        let j = SuiteBenchmark {
            kind: DetectorKind::Jmh,
            name: "org.acme.Bench.parse[size=100]".into(),
            dir: "bench".into(),
            module: "bench/target/classes".into(),
            target: "org.acme.Bench.parse".into(),
            values: [("size".to_string(), "100".to_string())].into(),
            mode: "thrpt".into(),
            ..p
        };
        assert_eq!(j.detector(), "jmh:org.acme.Bench.parse[size=100]");
        let text = serde_json::to_string(&j).unwrap();
        assert!(text.contains(r#""values":{"size":"100"}"#), "{text}");
        assert_eq!(serde_json::from_str::<SuiteBenchmark>(&text).unwrap(), j);
    }
}
