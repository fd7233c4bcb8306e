//! `etip eval`: agent patches (SWE-bench predictions), the ETIPs' own patches (`gold`) or no
//! change (`empty`) evaluated on built ETIPs, each in its own container, timed against the
//! original and the ground truth by `etip measure`'s protocol, categorised, labelled and written
//! in the task-result schema that `etip score` and `etip audit` read.

use super::UsageError;
use super::format::{FormatArg, render};
use super::measure::{TimingArgs, pinning, read_statuses};
use super::output::write as write_atomic;
use anyhow::Context;
use etip_build::config::BuildConfig;
use etip_core::instance::InstanceStatus;
use etip_eval::evaluate::{CHANGED_FILES, Category, EvalConfig, EvalProgress, evaluate};
use etip_eval::predictions::{Kind, Prediction};
use etip_exec::executor::Executor;
use etip_measure::measure::{MeasureConfig, Tests};
use etip_measure::protocol::{Order, ProtocolConfig};
use etip_records::results::TaskResult;
use etip_report::OutputFormat;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Predictions in SWE-bench's format (JSON lines with instance_id, model_name_or_path,
    /// model_patch), or `gold` (each ETIP's own patch: the harness's self-check) or `empty` (no
    /// change: the false-positive check).
    #[arg(long)]
    predictions: String,
    /// Which tests time the versions: `modules` (the changed modules; Python: all tests), `all`,
    /// or a comma-separated list of test classes (Java) or node ids/paths (Python).
    #[arg(long, default_value = "modules")]
    tests: String,
    /// Let patches change tests, benchmark and build files (refused by default).
    #[arg(long)]
    allow_test_changes: bool,
    #[command(flatten)]
    run: RunArgs,
    /// Agent patches (`etip eval`) or generated tests (`etip eval-test`).
    #[arg(skip)]
    mode: Mode,
}

/// `etip eval-test`: generated tests on built ETIPs.
#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// Generated tests as JSON lines: instance_id, model_name_or_path (the generator), test_patch
    /// (a diff adding or changing test files only), test_classes (the classes, node ids or paths
    /// to run: a list or one comma-separated string).
    #[arg(long)]
    tests: PathBuf,
    #[command(flatten)]
    run: RunArgs,
}

/// The options `etip eval` and `etip eval-test` share.
#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The status.jsonl that `etip build` wrote.
    #[arg(long)]
    etips: PathBuf,
    /// Output folder: results.jsonl, summary.json, report.html, logs/<etip>/<model>/,
    /// state.sqlite.
    #[arg(long)]
    out: PathBuf,
    /// Evaluate only these ETIPs (repeatable).
    #[arg(long)]
    id: Vec<String>,
    /// Name of this run (GSO's opt@k groups runs of one model by it); a re-run with the same id
    /// skips what is done.
    #[arg(long, default_value = "default")]
    run_id: String,
    /// Records evaluated at once. More than one shares the machine's CPUs between timings.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    #[command(flatten)]
    timing: TimingArgs,
    /// Time limit of each step preparing a version (copy, apply, build), seconds.
    #[arg(long, default_value_t = 1800)]
    setup_timeout: u64,
    /// The build configuration the instances were built with.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Evaluate again what this run id already evaluated.
    #[arg(long)]
    force: bool,
    /// Free space (GiB) the Docker data root and the output folder must keep; checked before
    /// each evaluation, the run stops below it.
    #[arg(long, default_value_t = 2.0)]
    min_free_gb: f64,
    /// Run all rounds of a version in one container instead of a fresh container per round
    /// (faster; but a candidate can then keep files, e.g. cached results, from round to round).
    #[arg(long)]
    reuse_containers: bool,
    /// Run local builds (`etip build --executor local`) as host processes, with no isolation
    /// at all: only for patches and tests you wrote or trust (`etip demo`'s own samples, on a
    /// machine without Docker). Without it, patches run only inside containers.
    #[arg(long)]
    local_trusted: bool,
    /// Namespace label of the containers.
    #[arg(long, default_value = "etip")]
    namespace: String,
    /// How to print the summary.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
}

/// What the records are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Mode {
    /// Agent patches: applied to the original, timed against original and reference.
    #[default]
    Patches,
    /// Generated tests: applied to original and reference, timed there.
    Tests,
}

/// Runs `etip eval-test` on the machinery of `etip eval`.
pub fn run_tests(a: TestArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let args = Args {
        predictions: a.tests.display().to_string(),
        // Each record names what to run.
        tests: "modules".into(),
        allow_test_changes: false,
        run: a.run,
        mode: Mode::Tests,
    };
    run(args, out)
}

/// One prediction to evaluate on one built instance.
struct Job {
    status: usize,
    prediction: Prediction,
    /// The result, when it is known before anything runs (the gold patch cannot be read).
    decided: Option<String>,
}

/// The predictions of `--predictions` for the selected statuses; unknown instances are reported
/// and left out.
fn jobs(args: &Args, statuses: &[InstanceStatus], cache: &Path) -> anyhow::Result<Vec<Job>> {
    let mut out = Vec::new();
    match args.predictions.as_str() {
        "gold" | "empty" if args.mode == Mode::Patches => {
            for (i, s) in statuses.iter().enumerate() {
                let (prediction, decided) = if args.predictions == "empty" {
                    (Prediction::empty(&s.id), None)
                } else if !s.runnable() {
                    (Prediction::gold(&s.id, String::new()), None)
                } else {
                    match etip_eval::gold::patch(s, cache) {
                        Ok(p) => (Prediction::gold(&s.id, p), None),
                        Err(e) => (
                            Prediction::gold(&s.id, String::new()),
                            Some(format!("the ground-truth patch cannot be read: {e}")),
                        ),
                    }
                };
                out.push(Job {
                    status: i,
                    prediction,
                    decided,
                });
            }
        }
        path => {
            let text =
                super::input::read_text_capped(Path::new(path), super::input::MAX_INPUT_BYTES)?;
            let preds = match args.mode {
                Mode::Patches => etip_eval::predictions::parse(&text),
                Mode::Tests => etip_eval::predictions::parse_tests(&text),
            }
            .map_err(|e| UsageError(format!("{path}: {e}")))?;
            let mut unknown = BTreeMap::new();
            for p in preds {
                match statuses.iter().position(|s| s.id == p.instance_id) {
                    Some(i) => out.push(Job {
                        status: i,
                        prediction: p,
                        decided: None,
                    }),
                    None => *unknown.entry(p.instance_id).or_insert(0usize) += 1,
                }
            }
            if !unknown.is_empty() && args.run.id.is_empty() {
                eprintln!(
                    "warning: {} prediction(s) name instances that {} does not hold (left out): {}",
                    unknown.values().sum::<usize>(),
                    args.run.etips.display(),
                    unknown
                        .keys()
                        .take(5)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
    }
    if out.is_empty() {
        return Err(UsageError(format!(
            "no prediction names an instance of {}",
            args.run.etips.display()
        ))
        .into());
    }
    Ok(out)
}

/// The key of everything that shapes a result: a stored result with another key is evaluated again.
fn key(status: &InstanceStatus, p: &Prediction, cfg: &EvalConfig) -> String {
    let params = serde_json::json!({
        "patch": p.patch,
        "kind": format!("{:?}", p.kind),
        "classes": p.classes,
        "image": status.image,
        "layers": status.layers.iter().map(|l| l.image_id.clone()).collect::<Vec<_>>(),
        "rounds": cfg.measure.protocol.rounds,
        "warmup": cfg.measure.protocol.warmup,
        "min_impr": cfg.measure.verdict.sign.min_impr,
        "p_val": cfg.measure.verdict.sign.p_val,
        "timer": cfg.measure.verdict.timer.name(),
        "min_class_secs": cfg.measure.verdict.min_class_secs,
        "memory_mb": cfg.measure.resources.memory_mb,
        "cpusets": cfg.measure.cpusets,
        "allow_test_changes": cfg.allow_test_changes,
        "tests": cfg.measure.tests.describe(),
        "fresh_rounds": cfg.measure.protocol.fresh_rounds,
    });
    hex::encode(Sha256::digest(params.to_string().as_bytes()))
}

fn config(args: &Args, cpuset: Option<String>, notes: Vec<String>) -> anyhow::Result<EvalConfig> {
    let build = match &args.run.config {
        Some(p) => BuildConfig::load(p).map_err(|e| UsageError(e.to_string()))?,
        None => BuildConfig::default(),
    };
    Ok(EvalConfig {
        measure: MeasureConfig {
            protocol: ProtocolConfig {
                fresh_rounds: !args.run.reuse_containers,
                ..args.run.timing.protocol(Order::Alternate)
            },
            verdict: args.run.timing.verdict(None),
            tests: match args.tests.as_str() {
                "modules" => Tests::Modules,
                "all" => Tests::All,
                list => Tests::Classes(
                    list.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect(),
                ),
            },
            aa: false,
            resources: args.run.timing.resources(),
            cpusets: cpuset.map(|c| [c.clone(), c]),
            notes,
            build,
            logs: None,
            force: false,
        },
        allow_test_changes: args.allow_test_changes,
        setup_timeout: Duration::from_secs(args.run.setup_timeout),
        run_id: Some(args.run.run_id.clone()),
    })
}

/// The executor and the folder its sessions write to (the Docker data root; empty when the
/// engine does not say): containers, or with `--local-trusted` host processes on local builds.
fn executor(
    args: &RunArgs,
    statuses: &[InstanceStatus],
) -> anyhow::Result<(Box<dyn Executor>, String)> {
    if args.local_trusted {
        let ex = super::measure::executor_for(
            super::measure::ExecutorArg::Local,
            statuses,
            &args.namespace,
        )?;
        return Ok((ex, String::new()));
    }
    if let Some(s) = statuses.iter().find(|s| s.local_root.is_some()) {
        return Err(UsageError(format!(
            "ETIP {} was built without containers, and etip eval runs patches only inside              containers: build it with Docker, or pass --local-trusted for patches you trust",
            s.id
        ))
        .into());
    }
    docker(&args.namespace)
}

/// The Docker executor and the engine's data root (empty when the engine does not say).
fn docker(namespace: &str) -> anyhow::Result<(Box<dyn Executor>, String)> {
    let rt = super::runtime()?;
    let engine = rt.block_on(etip_docker::Engine::connect()).map_err(|e| {
        anyhow::anyhow!(
            "etip eval runs patches only inside containers, and the Docker engine does not answer: {e}"
        )
    })?;
    let root = rt
        .block_on(engine.describe())
        .map(|i| i.root_dir)
        .unwrap_or_default();
    Ok((
        Box::new(etip_exec::docker::DockerExecutor::new(
            engine,
            rt.handle().clone(),
            namespace,
        )),
        root,
    ))
}

struct Bar<'a> {
    bar: &'a indicatif::ProgressBar,
    what: String,
}

impl EvalProgress for Bar<'_> {
    fn stage(&self, stage: &str) {
        self.bar.set_message(format!("{}: {stage}", self.what));
    }

    fn round(&self, round: usize, total: usize) {
        if round == 0 {
            self.bar.set_message(format!("{}: warm-up", self.what));
        } else {
            self.bar
                .set_message(format!("{}: round {round}/{total}", self.what));
        }
    }
}

/// What the workers share.
struct Shared<'a> {
    store: Mutex<etip_store::Store>,
    /// Results of this call's predictions, by job.
    results: Mutex<Vec<Option<TaskResult>>>,
    /// Results of the run's earlier calls for other predictions (kept in results.jsonl).
    others: Vec<TaskResult>,
    out: &'a Path,
    records: super::eval_html::Records,
}

impl Shared<'_> {
    fn done(&self, i: usize, r: TaskResult, key: &str, run_id: &str) -> anyhow::Result<()> {
        let json = serde_json::to_string(&r)?;
        self.store
            .lock()
            .map_err(|_| anyhow::anyhow!("a worker panicked"))?
            .record_eval(
                run_id,
                r.model.as_deref().unwrap_or(""),
                &r.instance_id,
                key,
                &json,
            )?;
        let mut all = self
            .results
            .lock()
            .map_err(|_| anyhow::anyhow!("a worker panicked"))?;
        all[i] = Some(r);
        write_results(self.out, self.records, &self.others, &all)
    }
}

/// Writes results.jsonl (every result of the run: earlier calls' and this one's) and summary.json.
fn write_results(
    out: &Path,
    records: super::eval_html::Records,
    others: &[TaskResult],
    results: &[Option<TaskResult>],
) -> anyhow::Result<()> {
    let mut done: Vec<TaskResult> = others
        .iter()
        .chain(results.iter().flatten())
        .cloned()
        .collect();
    if records == super::eval_html::Records::Patches {
        fill_gold(&mut done);
    }
    let done: Vec<&TaskResult> = done.iter().collect();
    let mut text = String::new();
    for r in &done {
        text.push_str(&serde_json::to_string(r)?);
        text.push('\n');
    }
    write_atomic(&out.join("results.jsonl"), &text)?;
    write_atomic(
        &out.join("summary.json"),
        &serde_json::to_string_pretty(&summary_json(&done))?,
    )?;
    let (scores, problems) = super::eval_html::scores(&out.join("results.jsonl"));
    let owned: Vec<TaskResult> = done.iter().map(|r| (*r).clone()).collect();
    write_atomic(
        &out.join("report.html"),
        &super::eval_html::report(records, &owned, &scores, &problems),
    )
}

/// Gives every result of an instance without a measured gold speedup (a patch that failed before
/// the rounds) the instance's gold speedup as this run measured it elsewhere: the `gold`
/// prediction's own speedup when it was evaluated, else the mean of the reference's speedups in
/// the instance's other evaluations. SWE-fficiency credits a failed patch with 1 / gold speedup.
fn fill_gold(results: &mut [TaskResult]) {
    let mut known: BTreeMap<String, (Option<f64>, Vec<f64>)> = BTreeMap::new();
    for r in results.iter() {
        let e = known.entry(r.instance_id.clone()).or_default();
        if r.model.as_deref() == Some("gold") && r.correct == Some(true) {
            e.0 = r.speedup.or(e.0);
        }
        e.1.extend(r.gold_speedup);
    }
    for r in results.iter_mut().filter(|r| r.gold_speedup.is_none()) {
        if let Some((own, seen)) = known.get(&r.instance_id) {
            r.gold_speedup = own.or_else(|| {
                (!seen.is_empty()).then(|| seen.iter().sum::<f64>() / seen.len() as f64)
            });
        }
    }
}

/// Per model: the count of each category, and the instances whose evaluation failed in the
/// harness (SWE-bench's `infra_failure_ids`), apart from the patches' failures.
fn summary_json(results: &[&TaskResult]) -> serde_json::Value {
    let mut models: BTreeMap<String, (BTreeMap<String, usize>, Vec<String>)> = BTreeMap::new();
    for r in results {
        let m = models
            .entry(r.model.clone().unwrap_or_default())
            .or_default();
        let c = r.category.clone().unwrap_or_default();
        *m.0.entry(c.clone()).or_default() += 1;
        if c == Category::Error.name() {
            m.1.push(r.instance_id.clone());
        }
    }
    serde_json::json!({
        "schema": "etip.eval-summary",
        "models": models.into_iter().map(|(m, (counts, infra))| (m, serde_json::json!({
            "categories": counts,
            "infra_failure_ids": infra,
        }))).collect::<serde_json::Map<String, serde_json::Value>>(),
    })
}

/// Evaluates one job and labels it.
fn run_job(
    job: &Job,
    status: &InstanceStatus,
    ex: &dyn Executor,
    cfg: &EvalConfig,
    logs: &Path,
    cache: &Path,
    bar: &indicatif::ProgressBar,
) -> TaskResult {
    let dir = logs
        .join(etip_build::instance::log_slug(&status.id))
        .join(etip_build::instance::log_slug(&job.prediction.model));
    if let Some(why) = &job.decided {
        return TaskResult {
            instance_id: status.id.clone(),
            model: Some(job.prediction.model.clone()),
            run_id: cfg.run_id.clone(),
            category: Some(Category::Error.name().into()),
            detail: Some(why.clone()),
            ..TaskResult::default()
        };
    }
    let _ = std::fs::remove_dir_all(&dir);
    let progress = Bar {
        bar,
        what: format!("{} / {}", status.id, job.prediction.model),
    };
    if job.prediction.kind == Kind::Test {
        let r = etip_eval::generated::evaluate_test(
            ex,
            status,
            &job.prediction,
            cfg,
            Some(&dir),
            &progress,
        );
        if let Ok(json) = serde_json::to_string_pretty(&r) {
            let _ = write_atomic(&dir.join("result.json"), &json);
        }
        return r;
    }
    let mut r = evaluate(ex, status, &job.prediction, cfg, Some(&dir), &progress);
    if r.apply.is_some() || job.prediction.kind == Kind::Gold && r.correct.is_some() {
        let cand = job.prediction.patch.as_deref().unwrap_or("");
        let labelled = etip_eval::gold::patch(status, cache).and_then(|gold| {
            super::eval_labels::label(status, &gold, cand, &dir.join(CHANGED_FILES), cache)
        });
        match labelled {
            Ok(l) => {
                r.exact_match = Some(l.exact_match);
                r.same_location = Some(l.same_location);
            }
            Err(e) => tracing::warn!("{}: labels: {e}", status.id),
        }
    }
    if let Ok(json) = serde_json::to_string_pretty(&r) {
        let _ = write_atomic(&dir.join("result.json"), &json);
    }
    r
}

/// The files `etip eval` writes in its output folder.
const OUTPUTS: [&str; 4] = [
    "results.jsonl",
    "summary.json",
    "report.html",
    "state.sqlite",
];

/// Refuses, before any work, an input that is also an output and outputs that cannot be replaced.
fn check_paths(args: &Args) -> Result<(), UsageError> {
    use super::output::{self, Named};
    let what = match args.mode {
        Mode::Patches => "--predictions",
        Mode::Tests => "--tests",
    };
    let mut paths = vec![Named::reads("--etips", &args.run.etips)];
    if !(args.mode == Mode::Patches && matches!(args.predictions.as_str(), "gold" | "empty")) {
        paths.push(Named::reads(what, Path::new(&args.predictions)));
    }
    if let Some(c) = &args.run.config {
        paths.push(Named::reads("--config", c));
    }
    for name in OUTPUTS {
        paths.push(Named::writes(
            format!("the {name} of --out"),
            &args.run.out.join(name),
        ));
    }
    output::distinct(&paths)?;
    if args.run.out.is_dir() {
        for name in &OUTPUTS[..3] {
            output::check(&args.run.out.join(name))?;
        }
    }
    output::check_state(
        "the state file of --out",
        &args.run.out.join("state.sqlite"),
    )
}

/// The run's state, `state.sqlite` in the output folder (eval has no `--state`).
fn open_state(out: &Path) -> anyhow::Result<etip_store::Store> {
    match etip_store::Store::open_exclusive(&out.join("state.sqlite")) {
        Ok(store) => Ok(store),
        Err(etip_store::StoreError::Locked { path, holder }) => Err(UsageError(format!(
            "another etip run is using the state file {} (its lock is held{}); wait for it to finish or use another --out",
            path.display(),
            holder.map(|pid| format!(" by pid {pid}")).unwrap_or_default()
        ))
        .into()),
        Err(e) => Err(super::output::store_error(e)),
    }
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<()> {
    args.run.timing.check()?;
    check_paths(&args)?;
    if args.run.workers == 0 {
        return Err(UsageError("--workers must be at least 1".into()).into());
    }
    etip_measure::measure::check_feasible(args.run.timing.rounds, args.run.timing.sign().p_val)
        .map_err(|e| UsageError(e.to_string()))?;
    let mut statuses = read_statuses(&args.run.etips)?;
    if !args.run.id.is_empty() {
        statuses.retain(|s| args.run.id.contains(&s.id));
        if statuses.is_empty() {
            return Err(
                UsageError(format!("no ETIP of --id in {}", args.run.etips.display())).into(),
            );
        }
    }
    // One run per output folder (eval keeps its state there): the second is refused (exit 2).
    let _lock = super::output::lock_folder(&args.run.out, "--out")?;
    let store = open_state(&args.run.out)?;
    let cache = args.run.out.join("repos");
    let jobs = jobs(&args, &statuses, &cache)?;
    if !(args.run.min_free_gb.is_finite() && args.run.min_free_gb >= 0.0) {
        return Err(UsageError(format!(
            "--min-free-gb must be a non-negative number, got {}",
            args.run.min_free_gb
        ))
        .into());
    }
    let (ex, root_dir) = executor(&args.run, &statuses)?;
    let mut disk = super::disk::DiskGuard {
        paths: vec![("the output folder".into(), args.run.out.clone())],
        min: (args.run.min_free_gb * 1024.0 * 1024.0 * 1024.0) as u64,
    };
    if !root_dir.is_empty() {
        disk.paths
            .push(("the Docker data root".into(), PathBuf::from(root_dir)));
    }
    let (cpuset, notes) = pinning(args.run.timing.cpus.as_deref(), ex.info().can_pin)?;
    let cfg = config(&args, cpuset, notes)?;
    let mut stored: BTreeMap<(String, String), (String, String)> = BTreeMap::new();
    let mut order = Vec::new();
    for e in store.eval_results(&args.run.run_id)? {
        order.push((e.model.clone(), e.instance.clone()));
        stored.insert((e.model, e.instance), (e.key, e.payload));
    }
    let asked: std::collections::BTreeSet<(String, String)> = jobs
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
        let k = key(&statuses[job.status], &job.prediction, &cfg);
        let again = stored
            .get(&(
                job.prediction.model.clone(),
                job.prediction.instance_id.clone(),
            ))
            .filter(|(sk, _)| *sk == k && !args.run.force)
            .and_then(|(_, payload)| serde_json::from_str::<TaskResult>(payload).ok())
            .filter(|r| r.category.as_deref() != Some(Category::Error.name()));
        match again {
            Some(r) => results[i] = Some(r),
            None => todo.push((i, k)),
        }
    }
    let skipped = jobs.len() - todo.len();
    if skipped > 0 {
        eprintln!(
            "{skipped} prediction(s) already evaluated in run {} (--force to redo)",
            args.run.run_id
        );
    }
    let shared = Shared {
        store: Mutex::new(store),
        results: Mutex::new(results),
        others,
        out: &args.run.out,
        records: match args.mode {
            Mode::Patches => super::eval_html::Records::Patches,
            Mode::Tests => super::eval_html::Records::Tests,
        },
    };
    let bar = indicatif::ProgressBar::new(todo.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("the template is valid"),
    );
    bar.enable_steady_tick(Duration::from_millis(500));
    let next = AtomicUsize::new(0);
    let logs = args.run.out.join("logs");
    let failure: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let low_disk: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..args.run.workers.min(todo.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    let Some((i, k)) = todo.get(n) else { break };
                    let job = &jobs[*i];
                    let status = &statuses[job.status];
                    if let Err(why) = disk.check() {
                        // Stops the run: every later evaluation would fail the same way.
                        if let Ok(mut f) = low_disk.lock() {
                            f.get_or_insert(why);
                        }
                        break;
                    }
                    let r = run_job(job, status, ex.as_ref(), &cfg, &logs, &cache, &bar);
                    if etip_docker::interrupted() {
                        // Stopped by a signal: this result says nothing about the patch.
                        break;
                    }
                    bar.inc(1);
                    let line = format!(
                        "{} / {}: {}",
                        status.id,
                        job.prediction.model,
                        r.category.as_deref().unwrap_or("-")
                    );
                    bar.suspend(|| eprintln!("{line}"));
                    if let Err(e) = shared.done(*i, r, k, &args.run.run_id)
                        && let Ok(mut f) = failure.lock()
                    {
                        f.get_or_insert(e);
                    }
                }
            });
        }
    });
    bar.finish_and_clear();
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e.context("recording the results"));
    }
    let results = shared
        .results
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a worker panicked"))?;
    write_results(&args.run.out, shared.records, &shared.others, &results)
        .context("writing the results")?;
    if let Some(why) = low_disk.into_inner().ok().flatten() {
        anyhow::bail!("{why}; the evaluations finished so far are in results.jsonl");
    }
    let done: Vec<TaskResult> = results.into_iter().flatten().collect();
    out.write_all(table(&done, OutputFormat::from(args.run.format))?.as_bytes())?;
    let errors = done
        .iter()
        .filter(|r| r.category.as_deref() == Some(Category::Error.name()))
        .count();
    let results = args.run.out.join("results.jsonl");
    match args.mode {
        Mode::Patches => eprintln!(
            "results in {} (score them: etip score --rule jeto|swefficiency|gso|sweperf {})",
            results.display(),
            results.display()
        ),
        // JETO's score on generated tests is the share of detector tests.
        Mode::Tests => eprintln!(
            "results in {} (the share of detector tests: etip score --rule jeto {})",
            results.display(),
            results.display()
        ),
    }
    if errors > 0 {
        return Err(anyhow::anyhow!(
            "{errors} evaluation(s) failed in the harness, not in the patch (see summary.json, infra_failure_ids); run again to retry them"
        ));
    }
    Ok(())
}

/// The printed summary: one row per prediction with its detail (JSON: the results themselves).
fn table(results: &[TaskResult], format: OutputFormat) -> anyhow::Result<String> {
    if format == OutputFormat::Json {
        return Ok(etip_report::to_json(results)?);
    }
    render(&super::eval_html::results_table(results, true), format)
}
