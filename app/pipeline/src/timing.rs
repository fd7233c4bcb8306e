//! What `measure`, `eval` and `eval-test` share: the rounds, the verdicts' parameters, the
//! sessions' limits and CPUs ([`Timing`]), which tests run ([`TestChoice`]) and the CPU pinning
//! of the sessions ([`pinning`]).

use crate::InputError;
use etip_exec::executor::Resources;
use etip_measure::protocol::{Order, ProtocolConfig};
use etip_measure::verdict::VerdictConfig;
use etip_stats::TimerRule;
use etip_stats::{SequentialDesign, SignTestConfig};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// The timing of a run (each field is the `etip measure` flag of the same name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Timed rounds (warm-up excluded).
    pub rounds: usize,
    /// Warm-up rounds, discarded.
    pub warmup: usize,
    /// Minimum relative improvement for a round to count as a win.
    pub min_impr: f64,
    /// Significance threshold of the sign test (strict).
    pub p_val: f64,
    /// JETO's conservative setting (min-impr 0.1, p-val 0.05) instead of the two above.
    pub conservative: bool,
    /// The sign test's pair rule.
    pub timer_rule: TimerRule,
    /// Classes below this median time (ms) in both versions are `too_fast`.
    pub min_class_ms: f64,
    /// Tolerance of reported against measured time saved per round, ms (rules §3.8).
    pub timing_tolerance_ms: f64,
    /// The same tolerance as a share of the original's test command time.
    pub timing_tolerance_share: f64,
    /// Significance threshold of the timing-consistency test.
    pub timing_p_val: f64,
    /// Memory limit of each session, MB.
    pub memory_mb: u64,
    /// Time limit of each version's test command in a round, seconds.
    pub round_timeout_secs: u64,
    /// Time limit of one workload process, seconds: a workload that runs longer is a failed
    /// detector.
    pub workload_timeout_secs: u64,
    /// CPUs the sessions may use (`2-3`); `None`: whole physical cores, one left to the system.
    pub cpus: Option<String>,
}

impl Default for Timing {
    /// The defaults of `etip measure`'s flags.
    fn default() -> Timing {
        Timing {
            rounds: 30,
            warmup: 1,
            min_impr: SignTestConfig::default().min_impr,
            p_val: SignTestConfig::default().p_val,
            conservative: false,
            timer_rule: TimerRule::default(),
            min_class_ms: 10.0,
            timing_tolerance_ms: etip_measure::consistency::DEFAULT_TOLERANCE_SECS * 1000.0,
            timing_tolerance_share: etip_measure::consistency::DEFAULT_TOLERANCE_SHARE,
            timing_p_val: etip_measure::consistency::DEFAULT_TIMING_P_VAL,
            memory_mb: 4096,
            round_timeout_secs: 1800,
            workload_timeout_secs: 600,
            cpus: None,
        }
    }
}

impl Timing {
    /// Refuses values no run can use.
    pub fn check(&self) -> Result<(), InputError> {
        let bad = |m: String| Err(InputError(m));
        if self.rounds == 0 {
            return bad("--rounds must be at least 1".into());
        }
        if self.round_timeout_secs == 0 || self.workload_timeout_secs == 0 || self.memory_mb < 64 {
            return bad(
                "--round-timeout and --workload-timeout must be positive and --memory at least 64 MB"
                    .into(),
            );
        }
        if !(self.min_class_ms.is_finite() && self.min_class_ms >= 0.0) {
            return bad(format!(
                "--min-class-ms must be a non-negative number, got {}",
                self.min_class_ms
            ));
        }
        Ok(())
    }

    /// The sign test's parameters (`conservative` or `min_impr`/`p_val`).
    pub fn sign(&self) -> SignTestConfig {
        if self.conservative {
            SignTestConfig::conservative()
        } else {
            SignTestConfig {
                min_impr: self.min_impr,
                p_val: self.p_val,
            }
        }
    }

    /// The verdicts' parameters.
    pub fn verdict(&self, sequential: Option<SequentialDesign>) -> VerdictConfig {
        VerdictConfig {
            sign: self.sign(),
            timer: self.timer_rule,
            min_class_secs: self.min_class_ms / 1000.0,
            sequential,
            timing: etip_measure::consistency::Tolerance {
                secs: self.timing_tolerance_ms / 1000.0,
                share: self.timing_tolerance_share,
                p_val: self.timing_p_val,
            },
            ..VerdictConfig::default()
        }
    }

    /// The protocol's parameters (fixed rounds, the given order).
    pub fn protocol(&self, order: Order) -> ProtocolConfig {
        ProtocolConfig {
            rounds: self.rounds,
            warmup: self.warmup,
            order,
            round_timeout: Duration::from_secs(self.round_timeout_secs),
            workload_timeout: Duration::from_secs(self.workload_timeout_secs),
            ..ProtocolConfig::default()
        }
    }

    /// The sessions' limits.
    pub fn resources(&self) -> Resources {
        Resources {
            memory_mb: self.memory_mb,
            ..Resources::default()
        }
    }
}

/// Which tests time the versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestChoice {
    /// The changed modules (Python: all tests).
    Modules,
    /// Every test.
    All,
    /// `covering` for the Python ETIPs the selection selected, `modules` for the others (measure).
    Auto,
    /// The tests `etip select` found executing the changed code (measure; needs a selection).
    Covering,
    /// The correctness tests of the task each ETIP was imported from (`etip import`):
    /// SWE-fficiency's `covering_tests`, else SWE-bench's `PASS_TO_PASS`.
    Task,
    /// These test classes (Java) or node ids/paths (Python).
    Listed(Vec<String>),
}

impl TestChoice {
    /// `etip measure --tests`: `modules`, `all`, `auto`, `covering` or a comma-separated list.
    pub fn parse(s: &str) -> TestChoice {
        match s {
            "auto" => TestChoice::Auto,
            "covering" => TestChoice::Covering,
            "task" => TestChoice::Task,
            other => TestChoice::parse_listed(other),
        }
    }

    /// `etip eval --tests`: `modules`, `all` or a comma-separated list.
    pub fn parse_listed(s: &str) -> TestChoice {
        match s {
            "modules" => TestChoice::Modules,
            "all" => TestChoice::All,
            list => TestChoice::Listed(
                list.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            ),
        }
    }

    /// The value of `--tests` that gives this choice.
    pub fn flag(&self) -> String {
        match self {
            TestChoice::Modules => "modules".into(),
            TestChoice::All => "all".into(),
            TestChoice::Auto => "auto".into(),
            TestChoice::Covering => "covering".into(),
            TestChoice::Task => "task".into(),
            TestChoice::Listed(l) => l.join(","),
        }
    }
}

/// Whole physical cores for the sessions (`cpus`: the allowed CPUs): every session gets the same
/// CPU set (they never run at the same time, and giving each version its own core would confound
/// the version with the core). Returns the set and the notes on it.
pub fn pinning(cpus: Option<&str>, can_pin: bool) -> anyhow::Result<(Option<String>, Vec<String>)> {
    if !can_pin {
        return Ok((
            None,
            vec!["the executor cannot pin sessions to CPUs".to_string()],
        ));
    }
    let allowed = match cpus {
        Some(list) => Some(
            etip_exec::noise::parse_cpu_list(list)
                .map_err(|e| InputError(format!("--cpus {list}: {e}")))?,
        ),
        None => None,
    };
    let cores = match etip_exec::noise::cpu_topology(Path::new("/sys")) {
        Ok(c) => c,
        Err(e) => {
            return Ok((
                None,
                vec![format!(
                    "sessions not pinned: CPU topology unreadable ({e})"
                )],
            ));
        }
    };
    let plan = etip_exec::noise::pin_plan(&cores, allowed.as_deref(), 1)
        .map_err(|e| InputError(format!("pinning sessions: {e}")))?;
    let mut notes = plan.notes.clone();
    if let Some(r) = &plan.reserved {
        notes.push(format!("CPUs {r} left to the system"));
    }
    notes.push(
        "both versions' sessions share one CPU set: they never run at the same time, and one set \
         for both keeps the version from being confounded with the core"
            .to_string(),
    );
    Ok((plan.cpusets.first().cloned(), notes))
}
