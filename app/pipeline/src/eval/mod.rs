//! `eval`: agent patches (SWE-bench predictions), the ETIPs' own patches (gold) or no change
//! (empty) evaluated on built ETIPs, each in its own container, timed against the original and
//! the ground truth by `measure`'s protocol, categorised, labelled and written in the task-result
//! schema that `score` and `audit` read. [`crate::eval_test`] runs generated tests on the same
//! machinery.
//!
//! The output folder holds `results.jsonl`, `summary.json`, `report.html`, `logs/<etip>/<model>/`
//! and `state.sqlite`; a re-run with the same run id skips what is done. Workers take the jobs
//! one at a time; the run stops early when the disk is short or a signal arrives.

mod jobs;
mod results;
mod worker;

pub use etip_report::eval::Records;

use crate::disk::DiskGuard;
use crate::executor::{ExecutorChoice, Workload};
use crate::progress::{Done, Progress};
use crate::timing::{TestChoice, Timing, pinning};
use crate::{InputError, records};
use anyhow::Context as _;
use etip_core::category::Category;
use etip_core::instance::InstanceStatus;
use etip_eval::evaluate::EvalConfig;
use etip_measure::measure::{MeasureConfig, Tests};
use etip_measure::protocol::{Order, ProtocolConfig};
use etip_records::results::TaskResult;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// What is evaluated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Predictions {
    /// Each ETIP's own patch (the harness's self-check).
    Gold,
    /// No change (the false-positive check).
    Empty,
    /// Predictions in SWE-bench's format (eval), or generated tests (eval-test), as JSON lines.
    File(PathBuf),
}

/// What `eval` and `eval-test` share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// The status.jsonl that `build` wrote.
    pub etips: PathBuf,
    /// The output folder.
    pub out: PathBuf,
    /// Only these ETIPs (all when empty).
    pub ids: Vec<String>,
    /// Name of this run; a re-run with the same id skips what is done.
    pub run_id: String,
    /// Records evaluated at once.
    pub workers: usize,
    pub timing: Timing,
    /// Time limit of each step preparing a version (copy, apply, build), seconds.
    pub setup_timeout_secs: u64,
    /// The build configuration the instances were built with.
    pub build_config: Option<PathBuf>,
    /// Evaluate again what this run id already evaluated.
    pub force: bool,
    /// Free space (GiB) the Docker data root and the output folder must keep.
    pub min_free_gb: f64,
    /// All rounds of a version in one container instead of a fresh container per round.
    pub reuse_containers: bool,
    /// Docker, or (for code you trust only) [`crate::executor::ExecutorKind::Local`].
    pub executor: ExecutorChoice,
}

/// An evaluation run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub predictions: Predictions,
    /// Which tests time the versions (modules, all or a list).
    pub tests: TestChoice,
    /// Let patches change tests, benchmark and build files.
    pub allow_test_changes: bool,
    pub run: RunConfig,
    /// Agent patches or generated tests.
    pub records: Records,
}

/// The results of this call's predictions (those stored from an earlier call included).
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub results: Vec<TaskResult>,
    /// The results.jsonl written.
    pub file: PathBuf,
    pub records: Records,
}

impl Outcome {
    /// The evaluations that failed in the harness, not in the patch.
    pub fn harness_errors(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.category.as_deref() == Some(Category::Error.name()))
            .count()
    }
}

/// The files `eval` writes in its output folder.
const OUTPUTS: [&str; 4] = [
    "results.jsonl",
    "summary.json",
    "report.html",
    "state.sqlite",
];

/// Refuses, before any work, an input that is also an output and outputs that cannot be replaced.
fn check_paths(cfg: &Config) -> Result<(), InputError> {
    use crate::output::{self, Named};
    let what = match cfg.records {
        Records::Patches => "--predictions",
        Records::Tests => "--tests",
    };
    let mut paths = vec![Named::reads("--etips", &cfg.run.etips)];
    if let Predictions::File(p) = &cfg.predictions {
        paths.push(Named::reads(what, p));
    }
    if let Some(c) = &cfg.run.build_config {
        paths.push(Named::reads("--config", c));
    }
    for name in OUTPUTS {
        paths.push(Named::writes(
            format!("the {name} of --out"),
            &cfg.run.out.join(name),
        ));
    }
    output::distinct(&paths)?;
    if cfg.run.out.is_dir() {
        for name in &OUTPUTS[..3] {
            output::check(&cfg.run.out.join(name))?;
        }
    }
    output::check_state("the state file of --out", &cfg.run.out.join("state.sqlite"))
}

/// The evaluation's parameters.
fn eval_config(
    cfg: &Config,
    cpuset: Option<String>,
    notes: Vec<String>,
) -> anyhow::Result<EvalConfig> {
    let build = records::build_config(cfg.run.build_config.as_deref())?;
    Ok(EvalConfig {
        measure: MeasureConfig {
            protocol: ProtocolConfig {
                fresh_rounds: !cfg.run.reuse_containers,
                ..cfg.run.timing.protocol(Order::Alternate)
            },
            verdict: cfg.run.timing.verdict(None),
            tests: match &cfg.tests {
                TestChoice::Modules => Tests::Modules,
                TestChoice::All => Tests::All,
                TestChoice::Listed(list) => Tests::Classes(list.clone()),
                TestChoice::Auto | TestChoice::Covering => {
                    return Err(InputError(format!(
                        "--tests {}: etip eval runs modules, all or listed tests",
                        cfg.tests.flag()
                    ))
                    .into());
                }
            },
            aa: false,
            resources: cfg.run.timing.resources(),
            cpusets: cpuset.map(|c| [c.clone(), c]),
            notes,
            build,
            logs: None,
            force: false,
        },
        allow_test_changes: cfg.allow_test_changes,
        setup_timeout: Duration::from_secs(cfg.run.setup_timeout_secs),
        run_id: Some(cfg.run.run_id.clone()),
    })
}

/// Refuses values no run can use (before the output folder is touched).
fn check(cfg: &Config) -> anyhow::Result<()> {
    cfg.run.timing.check()?;
    check_paths(cfg)?;
    if cfg.run.workers == 0 {
        return Err(InputError("--workers must be at least 1".into()).into());
    }
    etip_measure::measure::check_feasible(cfg.run.timing.rounds, cfg.run.timing.sign().p_val)
        .map_err(|e| InputError(e.to_string()))?;
    Ok(())
}

/// The statuses of `--etips`, only those of the ids when some are given.
fn statuses(run: &RunConfig) -> anyhow::Result<Vec<InstanceStatus>> {
    let mut statuses = records::read_statuses(&run.etips)?;
    if !run.ids.is_empty() {
        statuses.retain(|s| run.ids.contains(&s.id));
        if statuses.is_empty() {
            return Err(InputError(format!("no ETIP of --id in {}", run.etips.display())).into());
        }
    }
    Ok(statuses)
}

/// Refuses a minimum free space no disk can be checked against.
fn check_min_free(run: &RunConfig) -> Result<(), InputError> {
    if !(run.min_free_gb.is_finite() && run.min_free_gb >= 0.0) {
        return Err(InputError(format!(
            "--min-free-gb must be a non-negative number, got {}",
            run.min_free_gb
        )));
    }
    Ok(())
}

/// The folders that must keep the minimum free space.
fn disk_guard(run: &RunConfig, data_root: Option<PathBuf>) -> DiskGuard {
    let mut disk = DiskGuard {
        paths: vec![("the output folder".into(), run.out.clone())],
        min: (run.min_free_gb * 1024.0 * 1024.0 * 1024.0) as u64,
    };
    if let Some(root) = data_root {
        disk.paths.push(("the Docker data root".into(), root));
    }
    disk
}

/// Evaluates the predictions of `cfg`; with `labels`, agent patches are labelled against the
/// ground truth ([`crate::labels`]).
pub fn run(cfg: &Config, labels: bool, progress: &dyn Progress) -> anyhow::Result<Outcome> {
    check(cfg)?;
    let statuses = statuses(&cfg.run)?;
    // One run per output folder (eval keeps its state there): the second is refused (exit 2).
    let _lock = crate::output::lock_folder(&cfg.run.out, "--out")?;
    let store = results::open_state(&cfg.run.out)?;
    let cache = cfg.run.out.join("repos");
    let jobs = jobs::jobs(cfg, &statuses, &cache, progress)?;
    check_min_free(&cfg.run)?;
    let ex = crate::executor::choose(&cfg.run.executor, &statuses, Workload::Candidates, progress)?;
    let disk = disk_guard(&cfg.run, ex.data_root.clone());
    let (cpuset, notes) = pinning(cfg.run.timing.cpus.as_deref(), ex.executor.info().can_pin)?;
    let eval = eval_config(cfg, cpuset, notes)?;
    let (todo, shared) = plan(cfg, &jobs, &statuses, &eval, store, progress)?;
    let cx = worker::Context {
        executor: ex.executor.as_ref(),
        cfg: &eval,
        logs: &cfg.run.out.join("logs"),
        cache: &cache,
        labels,
        progress,
    };
    progress.start(Some(todo.len() as u64));
    let pool = Pool {
        jobs: &jobs,
        todo: &todo,
        statuses: &statuses,
        shared: &shared,
        disk: &disk,
        run_id: &cfg.run.run_id,
    };
    let stop = pool.run(cfg.run.workers, &cx);
    progress.end();
    if let Some(e) = stop.failure {
        return Err(e.context("recording the results"));
    }
    let results = shared
        .results
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a worker panicked"))?;
    results::write(&cfg.run.out, shared.records, &shared.others, &results)
        .context("writing the results")?;
    if let Some(why) = stop.low_disk {
        anyhow::bail!("{why}; the evaluations finished so far are in results.jsonl");
    }
    Ok(Outcome {
        results: results.into_iter().flatten().collect(),
        file: cfg.run.out.join("results.jsonl"),
        records: cfg.records,
    })
}

/// The jobs to run (index, key) and the shared state with the stored results of the run id.
fn plan<'a>(
    cfg: &'a Config,
    jobs: &[jobs::Job],
    statuses: &[InstanceStatus],
    eval: &EvalConfig,
    store: etip_store::Store,
    progress: &dyn Progress,
) -> anyhow::Result<(Vec<(usize, String)>, results::Shared<'a>)> {
    let mut stored: BTreeMap<(String, String), (String, String)> = BTreeMap::new();
    let mut order = Vec::new();
    for e in store.eval_results(&cfg.run.run_id)? {
        order.push((e.model.clone(), e.instance.clone()));
        stored.insert((e.model, e.instance), (e.key, e.payload));
    }
    let asked: BTreeSet<(String, String)> = jobs
        .iter()
        .map(|j| (j.prediction.model.clone(), j.prediction.instance_id.clone()))
        .collect();
    let others: Vec<TaskResult> = order
        .iter()
        .filter(|k| !asked.contains(*k))
        .filter_map(|k| stored.get(k))
        .filter_map(|(_, payload)| serde_json::from_str(payload).ok())
        .collect();
    let mut results: Vec<Option<TaskResult>> = vec![None; jobs.len()];
    let mut todo = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let k = jobs::key(&statuses[job.status], &job.prediction, eval);
        let again = stored
            .get(&(
                job.prediction.model.clone(),
                job.prediction.instance_id.clone(),
            ))
            .filter(|(sk, _)| *sk == k && !cfg.run.force)
            .and_then(|(_, payload)| serde_json::from_str::<TaskResult>(payload).ok())
            .filter(|r| r.category.as_deref() != Some(Category::Error.name()));
        match again {
            Some(r) => results[i] = Some(r),
            None => todo.push((i, k)),
        }
    }
    let skipped = jobs.len() - todo.len();
    if skipped > 0 {
        progress.note(&format!(
            "{skipped} prediction(s) already evaluated in run {} (--force to redo)",
            cfg.run.run_id
        ));
    }
    let shared = results::Shared {
        store: Mutex::new(store),
        results: Mutex::new(results),
        others,
        out: &cfg.run.out,
        records: cfg.records,
    };
    Ok((todo, shared))
}

/// The workers' loop over the jobs to run.
struct Pool<'a> {
    jobs: &'a [jobs::Job],
    todo: &'a [(usize, String)],
    statuses: &'a [InstanceStatus],
    shared: &'a results::Shared<'a>,
    disk: &'a DiskGuard,
    run_id: &'a str,
}

/// Why the workers stopped early.
#[derive(Default)]
struct Stop {
    /// Recording a result failed.
    failure: Option<anyhow::Error>,
    /// The disk is short of the minimum free space.
    low_disk: Option<String>,
}

impl Pool<'_> {
    /// Runs the jobs on `workers` threads.
    fn run(&self, workers: usize, cx: &worker::Context<'_>) -> Stop {
        let next = AtomicUsize::new(0);
        let stop: Mutex<Stop> = Mutex::new(Stop::default());
        std::thread::scope(|scope| {
            for _ in 0..workers.min(self.todo.len().max(1)) {
                scope.spawn(|| self.work(&next, &stop, cx));
            }
        });
        stop.into_inner().unwrap_or_default()
    }

    /// One worker: takes the next job until none is left or the run must stop.
    fn work(&self, next: &AtomicUsize, stop: &Mutex<Stop>, cx: &worker::Context<'_>) {
        loop {
            let n = next.fetch_add(1, Ordering::SeqCst);
            let Some((i, k)) = self.todo.get(n) else {
                break;
            };
            let job = &self.jobs[*i];
            let status = &self.statuses[job.status];
            if let Err(why) = self.disk.check() {
                // Stops the run: every later evaluation would fail the same way.
                if let Ok(mut s) = stop.lock() {
                    s.low_disk.get_or_insert(why.to_string());
                }
                break;
            }
            let r = worker::run_job(job, status, cx);
            if etip_docker::interrupted() {
                // Stopped by a signal: this result says nothing about the patch.
                break;
            }
            cx.progress.done(Done::Evaluated {
                instance: &status.id,
                model: &job.prediction.model,
                result: &r,
            });
            if let Err(e) = self.shared.done(*i, r, k, self.run_id)
                && let Ok(mut s) = stop.lock()
            {
                s.failure.get_or_insert(e);
            }
        }
    }
}
