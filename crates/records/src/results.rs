//! Per-task evaluation results: etip's own schema (`etip.task-result`, version 1).
//!
//! One JSON object per line (`.jsonl`), one line per task (benchmark instance) of one submission. The
//! evaluation harness writes these files; `etip score` and `etip audit` read them, as they read the
//! official SWE-fficiency and GSO report formats (which are converted into the same [`TaskResult`]).
//!
//! Every field but `instance_id` is optional, because different scoring rules need different data:
//!
//! | rule | needs |
//! |---|---|
//! | SWE-fficiency | `correct`, `speedup`, `gold_speedup` (or `tests` with `base`, `patched`, `reference` runs) |
//! | GSO | `correct` and per-test means of base, patch and reference (from `tests` or `per_test_means`) |
//! | SWE-Perf | `correct` and per-test runs `base`, `patched` |
//! | JETO | `correct` and per-test runs `base`, `patched` paired by round |
//!
//! ```
//! use etip_records::results::TaskResult;
//! let line = r#"{"instance_id":"demo-1","correct":true,"speedup":2.0,"gold_speedup":4.0}"#;
//! let task: TaskResult = serde_json::from_str(line).unwrap();
//! assert_eq!(task.speedup_ratio(), Some(0.5));
//! ```

use serde::{Deserialize, Serialize};

/// Version of the `etip.task-result` schema that this crate reads and writes.
pub const TASK_RESULT_SCHEMA_VERSION: u32 = 1;

/// Outcome of running one submission's patch on one task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskResult {
    /// Benchmark instance id (unique within a submission).
    pub instance_id: String,
    /// Whether the patch passed every correctness test (every run, where runs are repeated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correct: Option<bool>,
    /// Fraction of correctness tests that passed, in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_fraction: Option<f64>,
    /// Measured speedup of the patch over the base version (mean before / mean after), even when the
    /// patch is incorrect (SWE-fficiency's `raw_pred_speedup_ratio`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup: Option<f64>,
    /// Speedup of the reference (expert, gold) patch over the base version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_speedup: Option<f64>,
    /// Pipeline status as the benchmark reports it (e.g. `passed`, `test_failed`, `patch_failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Raw timings of each performance test, one value per timed run, in seconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<TestRuns>,
    /// Per-test means when raw runs are not available (GSO reports carry only these).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_test_means: Option<PerTestMeans>,
    /// Verdicts a benchmark's own report states (used when the data to recompute them is absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub official: Option<OfficialVerdict>,
    /// The submission (`model_name_or_path` of the prediction), in `etip eval`'s output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The evaluation run (`etip eval --run-id`): GSO's opt@k groups runs of one model by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// `etip eval`'s category: `not_generated`, `malformed`, `protected`, `does_not_apply`,
    /// `does_not_compile`, `tests_fail`, `timing_inconsistent`, `correct_not_faster`,
    /// `correct_faster`, or `error` (the harness failed, not the patch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The patch check's finding when it refused the patch (`empty`, `malformed`, `binary`,
    /// `protected`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// How the patch was applied (`git_apply`, `three_way`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<String>,
    /// Every changed file's syntax tree equals the ground truth's (and the same files changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact_match: Option<bool>,
    /// The patch changes the functions (methods) the ground truth changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_location: Option<bool>,
    /// What went wrong, or the verdict in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The order in which the versions ran in each timed round (`["candidate", "reference",
    /// "original"]`, ...), as recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orders: Vec<Vec<String>>,
    /// The candidate's (and the reference's) reported times held against the wall time the
    /// harness measured around each test command (rules §3.8), as `etip eval` checked them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timing: Vec<crate::timing::TimingCheck>,
    /// Each benchmark's own figures for this task, as `etip eval` computed them from the runs
    /// above by the benchmark's rule (derived: `etip score` recomputes them from the runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<BenchmarkFigures>,
    /// The reward-hack screen's verdict on the patch (`clean`, `suspected` with its findings,
    /// `judged_hack`; rules §6): `etip score --hacks` scores without the suspects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hack: Option<etip_core::hack::HackVerdict>,
    /// The machine the evaluation ran on: host name, CPU model, engine version, and on a cluster
    /// the node's id and labels (`etip.profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<etip_core::node::Node>,
}

/// One task's figures under each benchmark's rule, beside etip's own verdict (`category`). A
/// figure a rule cannot give from the task's data is absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchmarkFigures {
    /// SWE-fficiency's speedup ratio SR: the credited speedup (the measured one when correct, 1
    /// otherwise) over the gold patch's speedup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swefficiency_sr: Option<f64>,
    /// GSO's geometric mean over tests of base / patch (its means over the runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso_speedup_base: Option<f64>,
    /// GSO's harmonic mean over tests of reference / patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso_speedup_commit: Option<f64>,
    /// GSO's `opt_base` after its correctness gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso_opt_base: Option<bool>,
    /// GSO's `opt_commit` after its correctness gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso_opt_commit: Option<bool>,
    /// SWE-Perf's δ: the mean over the task's tests of the minimum gain a Mann–Whitney search
    /// finds (0 for an incorrect patch or a failed test, as SWE-Perf counts them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweperf_delta: Option<f64>,
}

impl BenchmarkFigures {
    /// Whether no rule gave a figure.
    pub fn is_empty(&self) -> bool {
        *self == BenchmarkFigures::default()
    }
}

/// Timed runs of one performance test on the base, patched and reference versions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestRuns {
    /// Test name (class, node id or workload name).
    pub name: String,
    /// Runtimes on the base (original) version; index k is round k.
    #[serde(default)]
    pub base: Vec<f64>,
    /// Runtimes on the patched version; index k is round k.
    #[serde(default)]
    pub patched: Vec<f64>,
    /// Runtimes on the reference (ground-truth) version, where measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference: Vec<f64>,
    /// Whether the test passed in every run of both versions.
    #[serde(default = "default_true")]
    pub passed: bool,
}

fn default_true() -> bool {
    true
}

/// Per-test mean runtimes (GSO's `per_test_means`): index i of each list is test i.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerTestMeans {
    /// Means on the base version.
    pub base: Vec<f64>,
    /// Means on the patched version.
    pub patch: Vec<f64>,
    /// Means on the reference (commit) version.
    pub commit: Vec<f64>,
}

/// Verdicts stated by an official report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OfficialVerdict {
    /// GSO `opt_base`: faster than base by the benchmark's threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opt_base: Option<bool>,
    /// GSO `opt_commit`: opt_base and close enough to the reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opt_commit: Option<bool>,
    /// SWE-fficiency speedup ratio as reported (`human_speedup_ratio`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup_ratio: Option<f64>,
}

impl TaskResult {
    /// The speedup a benchmark credits: the measured one when correct, 1.0 (no change) otherwise.
    pub fn credited_speedup(&self) -> Option<f64> {
        match self.correct {
            Some(true) => self.speedup,
            Some(false) => Some(1.0),
            None => None,
        }
    }

    /// SWE-fficiency's speedup ratio SR = credited speedup / gold speedup.
    pub fn speedup_ratio(&self) -> Option<f64> {
        Some(self.credited_speedup()? / self.gold_speedup?)
    }
}
