//! `measure`: time the tests of built ETIPs in warmed, order-alternated rounds and say which
//! ETIPs are executable and which test classes detect their improvement.
//!
//! The output folder holds `measurements.jsonl`, `executable.jsonl`, `report.html` (rewritten
//! after every ETIP), `logs/<id>/` and, unless another is named, the state store whose rounds let
//! a re-run resume. One run at a time writes to a folder.
//!
//! Each ETIP is a work unit (`units`) run on the command's backend with the state store as its
//! ledger: a measurement done under the same key is reused; one that ended in an engine error is
//! run again. Inside a unit the rounds stay the finer record: a killed ETIP resumes from its
//! stored rounds, and a store written before work units existed is resumed the same way.

mod paths;
pub(crate) mod tests;
pub(crate) mod units;

use crate::executor::{ExecutorChoice, Workload};
use crate::progress::Progress;
use crate::timing::{TestChoice, Timing, pinning};
use crate::{InputError, records};
use etip_measure::measure::{MeasureConfig, MeasureProgress, Tests};
use etip_measure::protocol::{Order, ProtocolConfig};
use etip_records::measure::Measurement;
use etip_stats::SequentialDesign;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What to measure and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub timing: Timing,
    /// The status.jsonl that `build` wrote (later lines of an id replace earlier ones).
    pub etips: PathBuf,
    /// Only these ETIPs (all when empty).
    pub ids: Vec<String>,
    /// The output folder.
    pub out: PathBuf,
    /// Order of the two versions within a round.
    pub order: Order,
    /// Which tests run.
    pub tests: TestChoice,
    /// Which kinds of detector run.
    pub detectors: etip_measure::measure::Detectors,
    /// The output folder (or selection.jsonl) of `select`, for covering and auto tests.
    pub selection: Option<PathBuf>,
    /// Adaptive rounds up to this many (a group-sequential design).
    pub max_rounds: Option<usize>,
    /// A/A calibration: both sides run the original version.
    pub aa: bool,
    pub executor: ExecutorChoice,
    /// The build configuration the instances were built with.
    pub build_config: Option<PathBuf>,
    /// The state store; `None`: `state.sqlite` in the output folder.
    pub state: Option<PathBuf>,
    /// Forget stored rounds and outcomes of the selected ETIPs and measure again.
    pub force: bool,
    /// This machine, or a swarm (`[swarm]` of `build_config`).
    #[serde(default)]
    pub backend: crate::backend::BackendKind,
}

/// The measurements of this run, in the order of the statuses.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub measurements: Vec<Measurement>,
    /// The measurements.jsonl written.
    pub file: PathBuf,
}

impl Outcome {
    /// How many ETIPs are executable.
    pub fn executable(&self) -> usize {
        self.measurements.iter().filter(|m| m.executable).count()
    }
}

/// Refuses values no run can use.
fn check(cfg: &Config) -> Result<(), InputError> {
    cfg.timing.check()?;
    if let Some(m) = cfg.max_rounds
        && m < cfg.timing.rounds
    {
        return Err(InputError(format!(
            "--max-rounds ({m}) must be at least --rounds ({})",
            cfg.timing.rounds
        )));
    }
    Ok(())
}

/// Adaptive rounds: the recommended design's batches, spending and futility, up to `max_rounds`.
fn sequential(cfg: &Config) -> Result<Option<SequentialDesign>, InputError> {
    let p_val = cfg.timing.sign().p_val;
    let rounds = cfg.timing.rounds;
    match cfg.max_rounds {
        Some(m) if m > rounds => {
            let bad = |e: etip_stats::StatsError| InputError(format!("--max-rounds {m}: {e}"));
            let p = SequentialDesign::recommended(rounds, p_val)
                .map_err(bad)?
                .params();
            Ok(Some(
                SequentialDesign::new(rounds, p.batch, m, p_val, p.spending, p.futility)
                    .map_err(bad)?,
            ))
        }
        _ => Ok(None),
    }
}

/// Reports the measure loop's events to `progress`.
pub(super) struct Reporter<'a>(&'a dyn Progress);

impl MeasureProgress for Reporter<'_> {
    fn etip_started(&self, id: &str) {
        self.0.message(&format!("{id}: starting sessions"));
    }

    fn round(&self, id: &str, round: usize, total: usize) {
        if round == 0 {
            self.0.message(&format!("{id}: warm-up"));
        } else {
            self.0.message(&format!("{id}: round {round}/{total}"));
        }
    }

    // Finished measurements are reported by the coordinating thread, in input order.
}

/// Measures every ETIP of `cfg.etips`; the outputs are written after each.
pub fn run(cfg: &Config, progress: &dyn Progress) -> anyhow::Result<Outcome> {
    check(cfg)?;
    paths::check(cfg)?;
    let build = records::build_config(cfg.build_config.as_deref())?;
    let statuses = records::select_statuses(&cfg.etips, &cfg.ids)?;
    let sign = cfg.timing.sign();
    let sequential = sequential(cfg)?;
    let batch = sequential.as_ref().map_or(10, |d| d.batch());
    let tests = match &cfg.tests {
        TestChoice::Modules => Tests::Modules,
        TestChoice::All => Tests::All,
        TestChoice::Auto | TestChoice::Covering => {
            tests::covering(&cfg.tests, cfg.selection.as_deref(), &statuses, progress)?
        }
        TestChoice::Task => tests::from_tasks(&statuses)?,
        TestChoice::Listed(list) => Tests::Classes(list.clone()),
    };
    // Before anything starts: can these rounds give a significant outcome at all?
    etip_measure::measure::check_feasible(cfg.max_rounds.unwrap_or(cfg.timing.rounds), sign.p_val)
        .map_err(|e| InputError(e.to_string()))?;
    // One run per output folder and per state file, before any session starts: the second is
    // refused at once (exit 2).
    let _lock = crate::output::lock_folder(&cfg.out, "--out")?;
    let (state, state_flag) = paths::state(cfg);
    let mut store = crate::output::open_state(state_flag, &state)?;
    let ex = crate::executor::choose(&cfg.executor, &statuses, Workload::Tests, progress)?;
    let (cpuset, notes) = pinning(cfg.timing.cpus.as_deref(), ex.executor.info().can_pin)?;
    let measure = MeasureConfig {
        detectors: cfg.detectors,
        protocol: ProtocolConfig {
            max_rounds: cfg.max_rounds,
            batch,
            ..cfg.timing.protocol(cfg.order)
        },
        verdict: cfg.timing.verdict(sequential),
        tests,
        aa: cfg.aa,
        resources: cfg.timing.resources(),
        cpusets: cpuset.map(|c| [c.clone(), c]),
        notes,
        build,
        logs: Some(cfg.out.join("logs")),
        force: cfg.force,
    };
    progress.start(Some(statuses.len() as u64));
    let reporter = Reporter(progress);
    let measuring = units::Measuring {
        cfg,
        executor: ex.executor.as_ref(),
        measure: &measure,
        state: &state,
        reporter: &reporter,
        progress,
    };
    let measurements = measuring.run(&statuses, &mut store)?;
    progress.end();
    Ok(Outcome {
        measurements,
        file: cfg.out.join("measurements.jsonl"),
    })
}
