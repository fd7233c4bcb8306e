//! Measurement records: what `etip measure` writes per ETIP (`measurements.jsonl`, one line each;
//! schema `etip.measurement`, version [`MEASUREMENT_SCHEMA_VERSION`], documented field by field in
//! `docs/schemas/measurements.md`) and what `etip score --rule jeto` reads back.
//!
//! Times are seconds. `original` and `patched` series are indexed by timed round (warm-up excluded):
//! element k of both comes from the same round. In an A/A run (`aa = true`) both sides ran the
//! original version in two containers; the `patched` fields then hold the second container's times.

use serde::{Deserialize, Serialize};

use crate::results::{TaskResult, TestRuns};

/// Serde for numbers that may be infinite (a ratio over a 0 s time): JSON has no infinity, so
/// non-finite values are written as the strings `"inf"`, `"-inf"` and `"nan"` (finite ones as
/// numbers) and read back from either form.
pub mod nonfinite {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else if v.is_nan() {
            s.serialize_str("nan")
        } else if *v > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Num {
        F(f64),
        S(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Num::deserialize(d)? {
            Num::F(v) => Ok(v),
            Num::S(s) => match s.as_str() {
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                "nan" => Ok(f64::NAN),
                other => Err(serde::de::Error::custom(format!(
                    "expected a number, \"inf\", \"-inf\" or \"nan\", got {other:?}"
                ))),
            },
        }
    }

    /// The same for a pair (a confidence interval).
    pub mod pair {
        use serde::{Deserialize, Deserializer, Serializer, ser::SerializeTuple};

        pub fn serialize<S: Serializer>(v: &[f64; 2], s: S) -> Result<S::Ok, S::Error> {
            #[derive(serde::Serialize)]
            struct W(#[serde(with = "super")] f64);
            let mut t = s.serialize_tuple(2)?;
            t.serialize_element(&W(v[0]))?;
            t.serialize_element(&W(v[1]))?;
            t.end()
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
            #[derive(Deserialize)]
            struct W(#[serde(with = "super")] f64);
            let [a, b] = <[W; 2]>::deserialize(d)?;
            Ok([a.0, b.0])
        }
    }
}

/// Version of the `etip.measurement` schema written by this build.
pub const MEASUREMENT_SCHEMA_VERSION: u32 = 1;

/// One of the two versions of an ETIP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Version {
    Original,
    Patched,
}

impl Version {
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Original => "original",
            Version::Patched => "patched",
        }
    }

    pub fn other(self) -> Version {
        match self {
            Version::Original => Version::Patched,
            Version::Patched => Version::Original,
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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

/// Which version won a test, by which rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    PatchedFaster,
    OriginalFaster,
    NotSignificant,
}

/// The paired sign test of one class (or of the per-round totals).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignTestRecord {
    pub direction: Direction,
    /// Rounds the verdict is based on.
    pub n: usize,
    pub wins_patched: usize,
    pub p_patched: f64,
    pub wins_original: usize,
    pub p_original: f64,
    /// Pairs that were ties under the timer-resolution rule (both times at or below resolution).
    #[serde(default)]
    pub ties: usize,
    /// Median of patched/original over the rounds (`"inf"` when an original time is 0).
    #[serde(with = "nonfinite")]
    pub median_ratio: f64,
    /// `(Σ original − Σ patched) / Σ original` (`"-inf"` when every original time is 0).
    #[serde(with = "nonfinite")]
    pub improvement: f64,
    /// Rounds at which the sequential procedure stopped for this series (when adaptive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<usize>,
}

/// One-sided Mann–Whitney U tests in both directions (scipy semantics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MannWhitneyRecord {
    /// U statistic of the original sample.
    pub u: f64,
    /// P(original times stochastically greater): small when the patched version is faster.
    pub p_patched_faster: f64,
    /// P(original times stochastically smaller): small when the original version is faster.
    pub p_original_faster: f64,
    /// `exact` or `asymptotic`.
    pub method: String,
}

/// Effect sizes beside the p-values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EffectRecord {
    /// Median of patched/original per round.
    #[serde(with = "nonfinite")]
    pub median_ratio: f64,
    /// Bootstrap 95% interval of the median ratio (pairs resampled).
    #[serde(with = "nonfinite::pair")]
    pub ratio_ci: [f64; 2],
    /// Cliff's δ of original against patched: +1 when every original time exceeds every patched
    /// time.
    #[serde(with = "nonfinite")]
    pub cliffs_delta: f64,
}

/// Verdicts and times of one test class, or of the per-round totals (`overall`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassRecord {
    pub name: String,
    /// Ran and passed in every round of both versions, and not too fast to time.
    pub eligible: bool,
    /// Why it is not eligible (`too_fast`, `failed`, `missing_in_some_round`).
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
}

/// The times one side's reports give, held against the wall time etip measured around its test
/// command, compared with the original side's (rules §3.8). Times are seconds; "per round" figures
/// are medians over the timed rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimingCheck {
    /// The side checked against the original (`patched`, `candidate`, `reference`).
    pub side: String,
    /// Both rules hold: no report total above its command's wall time, and the rounds' excess not
    /// significantly above the tolerance.
    pub consistent: bool,
    /// Timed rounds checked.
    pub rounds: usize,
    /// Rounds in which the timed classes' reported total exceeded the command's own wall time
    /// (beyond the report's rounding), per side `[original, checked side]`.
    pub over_wall: [usize; 2],
    /// Time saved per round by the reports (original's timed total minus the side's).
    pub saved_by_report: f64,
    /// Time saved per round by the wall clock (original's command time minus the side's).
    pub saved_by_wall: f64,
    /// Per round, the saving by report minus the saving by wall clock (how much more time the
    /// side spent outside its reported classes than the original did); the median over rounds.
    pub excess: f64,
    /// The largest `excess` a round may have without disagreeing (median over rounds: it may
    /// grow with the original's command time).
    pub tolerance: f64,
    /// Rounds whose excess is above their tolerance.
    pub disagreeing: usize,
    /// One-sided Wilcoxon signed-rank p-value of the rounds' excess over their tolerance: the side
    /// disagrees when it is below the check's `p_val` (0.01 by default).
    pub p_disagree: f64,
    /// `Σ original report / Σ side report` over the timed classes.
    #[serde(with = "nonfinite")]
    pub speedup_by_report: f64,
    /// `Σ original command time / Σ side command time`.
    #[serde(with = "nonfinite")]
    pub speedup_by_wall: f64,
    /// What disagrees, in words (absent when consistent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
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
            ..TaskResult::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infinite_ratios_survive_json() {
        let e = EffectRecord {
            median_ratio: f64::INFINITY,
            ratio_ci: [1.0, f64::INFINITY],
            cliffs_delta: -1.0,
        };
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(
            json,
            r#"{"median_ratio":"inf","ratio_ci":[1.0,"inf"],"cliffs_delta":-1.0}"#
        );
        let back: EffectRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back, e);
        assert!(
            serde_json::from_str::<EffectRecord>(
                r#"{"median_ratio":"big","ratio_ci":[1,2],"cliffs_delta":0}"#
            )
            .is_err()
        );
    }
}
