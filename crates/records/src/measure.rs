//! Measurement records: what `etip measure` writes per ETIP (`measurements.jsonl`, one line each;
//! schema `etip.measurement`, version [`MEASUREMENT_SCHEMA_VERSION`], documented field by field in
//! `docs/schemas/measurements.md`) and what `etip score --rule jeto` reads back.
//!
//! Times are seconds. `original` and `patched` series are indexed by timed round (warm-up excluded):
//! element k of both comes from the same round. In an A/A run (`aa = true`) both sides ran the
//! original version in two containers; the `patched` fields then hold the second container's times.

use serde::{Deserialize, Serialize};

use crate::results::{TaskResult, TestRuns};
use crate::timing::TimingCheck;
use etip_core::detector::DetectorKind;
use etip_core::measure::Version;
use etip_stats::{EffectRecord, MannWhitneyRecord, SignTestRecord};

/// Version of the `etip.measurement` schema written by this build.
pub const MEASUREMENT_SCHEMA_VERSION: u32 = 1;

/// Why an ETIP is not executable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotExecutable {
    /// `etip build` failed for it (the build's reason is in `detail`).
    BuildFailed,
    /// A test failed (or the test command exited non-zero) in some round.
    TestFailed,
    /// The selected modules hold no test that ran.
    NoTests,
    /// A round exceeded its time limit.
    Timeout,
    /// A report was missing or could not be read.
    ReportMissing,
    /// The container engine or the executor failed.
    EngineError,
    /// `--tests covering`: no test executes the changed code (`etip select`), so no test can
    /// detect the improvement (the ETIP may still build and pass its tests).
    NoCoveringTests,
    /// The times the test reports give disagree with the wall time etip measured around the test
    /// command (rules §3.8): the verdicts are recorded but not trusted.
    TimingInconsistent,
}

/// Verdicts and times of one detector (a test class, a workload, a benchmark), or of the
/// per-round totals (`overall`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassRecord {
    pub name: String,
    /// What the detector is; absent for test classes (records of test-only runs keep their shape).
    #[serde(default, skip_serializing_if = "DetectorKind::is_test")]
    pub kind: DetectorKind,
    /// Ran and passed in every round of both versions, and not too fast to time.
    pub eligible: bool,
    /// Why it is not eligible (`too_fast`, `failed` with the round, version and error when known,
    /// `missing_in_some_round`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sign_test: Option<SignTestRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mann_whitney: Option<MannWhitneyRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<EffectRecord>,
    /// Per-round times of the original version (seconds).
    pub original: Vec<f64>,
    /// Per-round times of the patched version (seconds).
    pub patched: Vec<f64>,
    /// The benchmark's own statistic per round beside etip's times (a workload: the mean of the
    /// last half of its calls, SWE-fficiency's, or the mean a self-timed script printed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own: Option<OwnStatistic>,
}

/// A benchmark's own statistic over the timed rounds, recorded beside etip's times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnStatistic {
    /// Per-round values of the original version (seconds).
    pub original: Vec<f64>,
    /// Per-round values of the patched version (seconds).
    pub patched: Vec<f64>,
    /// Median of the patched values over the median of the original values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ratio: Option<f64>,
}

/// Facts about one timed round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundSummary {
    /// 0 for the warm-up, then 1, 2, ...
    pub round: usize,
    pub warmup: bool,
    /// Which version ran first.
    pub first: Version,
    /// The order the sides ran in, as side indices (`[1, 0]`: patched, then original); recorded for
    /// runs of more than two sides (`etip eval`: original, candidate, reference), where `first`
    /// alone does not say it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sequence: Vec<usize>,
    /// UTC start, RFC 3339.
    pub started: String,
    /// Wall time of the whole round, harness included.
    pub wall_secs: f64,
    /// Own wall time of each side's test command: `[original, patched]` (`[original, candidate,
    /// reference]` in an evaluation).
    pub command_secs: Vec<f64>,
    /// Exit codes of the test commands, per side as `command_secs`.
    pub exit_codes: Vec<Option<i64>>,
    /// Share of the round during which some task of the machine stalled on CPU, I/O or memory
    /// (pressure stall information), where the kernel reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<PressureRecord>,
    /// How often this round was repeated because it ran under pressure.
    #[serde(default)]
    pub repeats: u32,
}

/// Stall shares (0..1) of one round, per resource (`None` where the kernel does not report it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PressureRecord {
    pub cpu: Option<f64>,
    pub io: Option<f64>,
    pub memory: Option<f64>,
}

/// Where and how the measurement ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// `docker`, `local` or `scripted`.
    pub executor: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// CPU sets of the two sessions, `[original, patched]` (empty when not pinned).
    #[serde(default)]
    pub cpus: Vec<String>,
    /// Notes on the environment (e.g. why cores are shared).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The parameters a measurement ran with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Protocol {
    pub rounds: usize,
    pub warmup: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rounds: Option<usize>,
    /// `alternate` or `random`.
    pub order: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub min_impr: f64,
    pub p_val: f64,
    /// `resolution` (etip's default) or `literal` (JETO's).
    pub timer_rule: String,
    /// Classes whose median time is below this are `too_fast`.
    pub min_class_secs: f64,
    /// `modules`, `all` or the list of classes.
    pub tests: String,
}

/// One line of `measurements.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub schema_version: u32,
    pub id: String,
    pub executable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<NotExecutable>,
    /// What failed, where: `round 3, patched, class demo.JoinTest: ...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Timed rounds completed (warm-up excluded).
    pub rounds: usize,
    pub warmup: usize,
    /// Version that ran first in each timed round.
    pub order: Vec<Version>,
    pub aa: bool,
    pub executor: String,
    /// CPU sets of the sessions `[original, patched]`.
    pub cpus: Vec<String>,
    pub protocol: Protocol,
    pub environment: Environment,
    /// Modules whose tests ran.
    #[serde(default)]
    pub modules: Vec<String>,
    /// Resolution of the report times (seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
    pub classes: Vec<ClassRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overall: Option<ClassRecord>,
    /// Classes that detect the improvement (sign test `patched_faster`).
    #[serde(default)]
    pub detectors: Vec<String>,
    #[serde(default)]
    pub round_log: Vec<RoundSummary>,
    /// The patched side's reported times held against its measured wall time (rules §3.8);
    /// absent when no class was timed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<TimingCheck>,
    /// The machine that measured it: host name, CPU model, engine version and, on a cluster,
    /// the node's id and labels (`etip.profile`). Absent in measurements of etip before 0.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<etip_core::node::Node>,
}

impl Measurement {
    /// The measurement as a task result of etip's results schema (JETO rule input): correct when
    /// executable, one test per class with its paired per-round times. Classes left out of the
    /// verdicts (too fast, failed) are passed as not passed, so the JETO rule leaves them out too.
    pub fn to_task_result(&self) -> TaskResult {
        TaskResult {
            instance_id: self.id.clone(),
            correct: Some(self.executable),
            status: Some(match self.reason {
                None => "executable".to_string(),
                Some(r) => serde_json::to_value(r)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
            }),
            tests: self
                .classes
                .iter()
                .map(|c| TestRuns {
                    name: c.name.clone(),
                    base: c.original.clone(),
                    patched: c.patched.clone(),
                    reference: Vec::new(),
                    passed: c.eligible,
                })
                .collect(),
            node: self.node.clone(),
            ..TaskResult::default()
        }
    }
}
