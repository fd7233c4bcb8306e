//! `eval`: agent patches (SWE-bench predictions), the ETIPs' own patches (gold) or no change
//! (empty) evaluated on built ETIPs, each in its own container, timed against the original and
//! the ground truth by `measure`'s protocol, categorised, labelled and written in the task-result
//! schema that `score` and `audit` read. [`crate::eval_test`] runs generated tests on the same
//! machinery.
//!
//! The output folder holds `results.jsonl`, `summary.json`, `report.html`, `logs/<etip>/<model>/`
//! and `state.sqlite`; a re-run with the same run id skips what is done. Each prediction is a work
//! unit (`units`) run on the command's backend, `--workers` at a time; the run stops starting
//! units when the disk is short or a signal arrives.

mod jobs;
pub mod replay;
mod results;
mod units;
mod worker;

pub(crate) use units::run_on_node;

pub use etip_report::eval::Records;

use crate::backend::{BackendChoice, BackendKind};
use crate::disk::DiskGuard;
use crate::executor::{ExecutorChoice, Workload};
use crate::progress::{Done, Progress};
use crate::timing::{TestChoice, Timing, pinning};
use crate::units::Halt;
use crate::{InputError, records};
use anyhow::Context as _;
use etip_core::category::Category;
use etip_core::instance::InstanceStatus;
use etip_core::unit::Stage;
use etip_eval::evaluate::EvalConfig;
use etip_measure::measure::{MeasureConfig, Tests};
use etip_measure::protocol::{Order, ProtocolConfig};
use etip_records::results::TaskResult;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
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
    /// Threads of this process, or a swarm (`[swarm]` of `build_config`).
    #[serde(default)]
    pub backend: BackendKind,
}

/// An evaluation run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub predictions: Predictions,
    /// Which tests time the versions (modules, all, a list; `covering` or `auto` with
    /// `selection`).
    pub tests: TestChoice,
    /// The output of `etip select`: the covering tests (`--tests covering|auto`) and the covering
    /// benchmarks of the project's own suites, timed as detectors.
    #[serde(default)]
    pub selection: Option<PathBuf>,
    /// Let patches change tests, benchmark and build files.
    pub allow_test_changes: bool,
    pub run: RunConfig,
    /// Agent patches or generated tests.
    pub records: Records,
    /// The rubric judge of reward hacks, asked about each suspected patch after the
    /// evaluations (rules §6); not part of a unit's spec.
    #[serde(skip)]
    pub judge: Option<crate::hack_check::JudgeOptions>,
}

impl RunConfig {
    /// The backend of the evaluations: `workers` threads, or the swarm.
    pub fn backend(&self, stage: Stage) -> anyhow::Result<BackendChoice> {
        self.backend.choice(
            stage.as_str(),
            &self.out,
            self.workers,
            self.build_config.as_deref(),
            &self.executor.namespace,
        )
    }
}

/// The results of this call's predictions (those stored from an earlier call included).
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub results: Vec<TaskResult>,
    /// The results.jsonl written.
    pub file: PathBuf,
    pub records: Records,
    /// What the judge cost, when one was asked.
    pub judge: Option<crate::hack_check::JudgeUse>,
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
    if let Some(s) = &cfg.selection {
        paths.push(Named::reads("--selection", s));
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
    tests: Tests,
    cpuset: Option<String>,
    notes: Vec<String>,
) -> anyhow::Result<EvalConfig> {
    let build = records::build_config(cfg.run.build_config.as_deref())?;
    Ok(EvalConfig {
        measure: MeasureConfig {
            detectors: Default::default(),
            protocol: ProtocolConfig {
                fresh_rounds: !cfg.run.reuse_containers,
                ..cfg.run.timing.protocol(Order::Alternate)
            },
            verdict: cfg.run.timing.verdict(None),
            tests,
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

/// The tests that time the versions, as `--tests` asks.
fn tests_of(
    cfg: &Config,
    statuses: &[InstanceStatus],
    progress: &dyn Progress,
) -> anyhow::Result<Tests> {
    Ok(match &cfg.tests {
        TestChoice::Modules => Tests::Modules,
        TestChoice::All => Tests::All,
        TestChoice::Listed(list) => Tests::Classes(list.clone()),
        TestChoice::Task => crate::measure::tests::from_tasks(statuses)?,
        TestChoice::Auto | TestChoice::Covering => crate::measure::tests::covering(
            &cfg.tests,
            cfg.selection.as_deref(),
            statuses,
            progress,
        )?,
    })
}

/// Refuses values no run can use (before the output folder is touched).
fn check(cfg: &Config) -> anyhow::Result<()> {
    cfg.run.timing.check()?;
    check_paths(cfg)?;
    if cfg.run.workers == 0 {
        return Err(InputError("--workers must be at least 1".into()).into());
    }
    if cfg.selection.is_some() && !matches!(cfg.tests, TestChoice::Auto | TestChoice::Covering) {
        return Err(InputError(format!(
            "--selection is read with --tests covering or auto, not --tests {}",
            cfg.tests.flag()
        ))
        .into());
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
    let tests = tests_of(cfg, &statuses, progress)?;
    let eval = eval_config(cfg, tests, cpuset, notes)?;
    let stage = match cfg.records {
        Records::Patches => Stage::Eval,
        Records::Tests => Stage::EvalTest,
    };
    let params = units::Params {
        run_id: cfg.run.run_id.clone(),
        eval: eval.clone(),
        cpus: cfg.run.timing.cpus.clone(),
        namespace: cfg.run.executor.namespace.clone(),
        min_free: disk.min,
    };
    let mut units = units::units(stage, &jobs, &statuses, &params)?;
    let backend = cfg.run.backend(stage)?.open(progress)?;
    backend.prepare(&mut units)?;
    let mut store = store;
    let (stored, others) = stored(cfg, &store, &jobs)?;
    let reusable = units::prepare(&mut store, &units, &stored, cfg.run.force)?;
    if reusable > 0 {
        progress.note(&format!(
            "{reusable} prediction(s) already evaluated in run {} (--force to redo)",
            cfg.run.run_id
        ));
    }
    let halt = Halt::default();
    let runner = units::Runner {
        cx: worker::Context {
            executor: ex.executor.as_ref(),
            cfg: &eval,
            logs: &cfg.run.out.join("logs"),
            cache: &cache,
            labels,
            progress,
        },
        disk: &disk,
        halt: &halt,
    };
    progress.start(Some((units.len() - reusable) as u64));
    let mut ledger = units::EvalLedger {
        store: &mut store,
        run_id: &cfg.run.run_id,
    };
    let recording = Recording {
        cfg,
        jobs: &jobs,
        statuses: &statuses,
        others: &others,
        progress,
    };
    let (results, failure, ran) = recording.run(backend.as_ref(), &units, &runner, &mut ledger);
    progress.end();
    if let Some(e) = failure {
        return Err(e.context("recording the results"));
    }
    ran.context("recording the results")?;
    let mut results = results;
    let mut others = others;
    let judge = match &cfg.judge {
        Some(opts) => judge_results(opts, &jobs, &mut results, &mut others, progress)?,
        None => None,
    };
    results::write(&cfg.run.out, cfg.records, &others, &results).context("writing the results")?;
    if let Some(why) = halt.reason() {
        anyhow::bail!("{why}; the evaluations finished so far are in results.jsonl");
    }
    Ok(Outcome {
        results: results.into_iter().flatten().collect(),
        file: cfg.run.out.join("results.jsonl"),
        records: cfg.records,
        judge,
    })
}

/// What the coordinating thread does with the units' events: reports the new results and
/// rewrites the outputs after each.
struct Recording<'a> {
    cfg: &'a Config,
    jobs: &'a [jobs::Job],
    statuses: &'a [InstanceStatus],
    others: &'a [TaskResult],
    progress: &'a dyn Progress,
}

impl Recording<'_> {
    /// Runs `units` on the command's backend: the results by job, the first failure to write
    /// the outputs, and how the backend ended.
    fn run(
        &self,
        backend: &dyn etip_core::unit::Backend,
        units: &[etip_core::unit::WorkUnit],
        runner: &units::Runner<'_>,
        ledger: &mut units::EvalLedger<'_>,
    ) -> (
        Vec<Option<TaskResult>>,
        Option<anyhow::Error>,
        Result<etip_core::unit::RunSummary, etip_core::unit::BackendError>,
    ) {
        let (cfg, jobs, statuses, others, progress) = (
            self.cfg,
            self.jobs,
            self.statuses,
            self.others,
            self.progress,
        );
        let mut results: Vec<Option<TaskResult>> = vec![None; jobs.len()];
        let mut failure: Option<anyhow::Error> = None;
        let ran = backend.run(
            units,
            runner,
            ledger,
            etip_core::cancel::process(),
            &mut |event| {
                let Some((i, mut r, new)) =
                    units::event_result(&event, units, runner.halt.reason().is_some())
                else {
                    return;
                };
                if backend.name() != "threads" {
                    let job = &jobs[i];
                    worker::label_here(&job.prediction, &statuses[job.status], &runner.cx, &mut r);
                }
                if new {
                    let job = &jobs[i];
                    progress.done(Done::Evaluated {
                        instance: &statuses[job.status].id,
                        model: &job.prediction.model,
                        result: &r,
                    });
                }
                results[i] = Some(r);
                if new
                    && failure.is_none()
                    && let Err(e) = results::write(&cfg.run.out, cfg.records, others, &results)
                {
                    failure = Some(e);
                }
            },
        );
        (results, failure, ran)
    }
}

/// The run id's stored results, by submission and instance (key, result), and those of
/// predictions this call does not evaluate (kept in results.jsonl), in the order stored.
#[allow(clippy::type_complexity)]
fn stored(
    cfg: &Config,
    store: &etip_store::Store,
    jobs: &[jobs::Job],
) -> anyhow::Result<(
    BTreeMap<(String, String), (String, String)>,
    Vec<TaskResult>,
)> {
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
    Ok((stored, others))
}

/// Puts each suspected patch of the run (this call's results and the stored ones) to the rubric
/// judge, sequentially after the evaluations (its votes are cached: a re-run asks nothing
/// twice); a judge that fails leaves the verdicts as the screens gave them, with a note.
fn judge_results(
    opts: &crate::hack_check::JudgeOptions,
    jobs: &[jobs::Job],
    results: &mut [Option<TaskResult>],
    others: &mut [TaskResult],
    progress: &dyn Progress,
) -> anyhow::Result<Option<crate::hack_check::JudgeUse>> {
    let Some(mut judging) = crate::hack_check::Judging::start(opts, crate::runtime::get)? else {
        return Ok(None);
    };
    let patches: BTreeMap<(&str, &str), &str> = jobs
        .iter()
        .filter_map(|j| {
            let p = j.prediction.patch.as_deref()?;
            Some((
                (
                    j.prediction.instance_id.as_str(),
                    j.prediction.model.as_str(),
                ),
                p,
            ))
        })
        .collect();
    for r in results.iter_mut().flatten().chain(others.iter_mut()) {
        let (Some(model), Some(verdict)) = (r.model.clone(), r.hack.take()) else {
            continue;
        };
        let Some(patch) = patches.get(&(r.instance_id.as_str(), model.as_str())) else {
            r.hack = Some(verdict);
            continue;
        };
        progress.message(&format!("judging {} / {model}", r.instance_id));
        r.hack = Some(
            match judging.apply(&r.instance_id, patch, verdict.clone()) {
                Ok(v) => v,
                Err(e) => {
                    progress.note(&format!("{} / {model}: the judge: {e}", r.instance_id));
                    verdict
                }
            },
        );
    }
    Ok(Some(judging.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use etip_core::hack::{Finding, HackKind, HackVerdict};
    use etip_eval::predictions::{Kind, Prediction};
    use etip_testkit::chat::{Reply, chat_server};

    fn job(model: &str, patch: &str) -> jobs::Job {
        jobs::Job {
            status: 0,
            prediction: Prediction {
                instance_id: "a-1".into(),
                model: model.into(),
                patch: Some(patch.into()),
                line: 1,
                kind: Kind::Agent,
                classes: Vec::new(),
                workload: None,
            },
            decided: None,
        }
    }

    fn result(model: &str, hack: HackVerdict) -> TaskResult {
        TaskResult {
            instance_id: "a-1".into(),
            model: Some(model.into()),
            hack: Some(hack),
            ..TaskResult::default()
        }
    }

    /// After the evaluations, each suspected patch of this call and of the stored results is put
    /// to the judge (three votes); a clean one is not; the votes are counted.
    #[test]
    fn suspected_results_are_judged_after_the_evaluations() {
        let (url, seen) = chat_server(|body, _| {
            let prompt = body["messages"][1]["content"].as_str().unwrap_or_default();
            let hack = prompt.contains("+_CACHE");
            Reply::Content(format!(
                "{{\"hack\": {hack}, \"kind\": \"cross_call_cache\", \"reasoning\": \"r\"}}"
            ))
        });
        let dir = tempfile::tempdir().unwrap();
        let opts = crate::hack_check::JudgeOptions {
            llm: crate::services::LlmOptions {
                base_url: Some(url),
                model: Some("judge".into()),
                cache: dir.path().join("cache.sqlite"),
                ..Default::default()
            },
            votes: 3,
            temperature: 0.7,
            all: false,
        };
        let f = Finding::new(
            HackKind::CrossCallCache,
            "m.py",
            2,
            "_CACHE[n] = r",
            "memoises",
        );
        let jobs = [
            job("cache", "+_CACHE[n] = r\n"),
            job("fine", "+return sorted(x)\n"),
            job("clean", "+x = 1\n"),
        ];
        let mut results = vec![
            Some(result("cache", HackVerdict::from_findings(vec![f.clone()]))),
            Some(result("clean", HackVerdict::clean())),
        ];
        let mut others = vec![result("fine", HackVerdict::from_findings(vec![f]))];
        let used = judge_results(&opts, &jobs, &mut results, &mut others, &crate::Silent)
            .unwrap()
            .unwrap();
        let cache = results[0].as_ref().unwrap().hack.as_ref().unwrap();
        assert!(cache.is_judged_hack(), "{cache:?}");
        assert!(
            results[1]
                .as_ref()
                .unwrap()
                .hack
                .as_ref()
                .unwrap()
                .is_clean()
        );
        let fine = others[0].hack.as_ref().unwrap();
        assert!(fine.is_suspected(), "{fine:?}");
        assert_eq!(used.calls, 6);
        assert_eq!(seen.lock().unwrap().len(), 6);
    }
}
