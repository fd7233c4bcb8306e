//! `etip eval`: agent patches (SWE-bench predictions), the ETIPs' own patches (`gold`) or no
//! change (`empty`) evaluated on built ETIPs, each in its own container, timed against the
//! original and the ground truth by `etip measure`'s protocol, categorised, labelled and written
//! in the task-result schema that `etip score` and `etip audit` read.

use super::args::{BackendArg, ConfigArgs, OutputArgs};
use super::format::render;
use super::measure::TimingArgs;
use etip_pipeline::eval::{Config, Outcome, Predictions, Records, RunConfig};
use etip_pipeline::timing::TestChoice;
use etip_pipeline::{ExecutorChoice, ExecutorKind};
use etip_records::results::TaskResult;
use etip_report::OutputFormat;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Predictions in SWE-bench's format (JSON lines with instance_id, model_name_or_path,
    /// model_patch), or `gold` (each ETIP's own patch: the harness's self-check) or `empty` (no
    /// change: the false-positive check).
    #[arg(long)]
    predictions: String,
    /// Which tests time the versions: `modules` (the changed modules; Python: all tests), `all`,
    /// `covering` or `auto` (the tests `etip select` found executing the change; needs
    /// --selection), `task` (the correctness tests of the task an ETIP was imported from:
    /// SWE-fficiency's `covering_tests`, else `PASS_TO_PASS`), or a comma-separated list of test
    /// classes (Java) or node ids/paths (Python).
    #[arg(long, default_value = "modules")]
    tests: String,
    /// The output folder (or selection.jsonl) of `etip select`, for --tests covering or auto:
    /// the covering tests, and the covering asv, pytest-benchmark and JMH benchmarks, which time the
    /// candidate beside the ETIP's workloads.
    #[arg(long)]
    selection: Option<PathBuf>,
    /// Let patches change tests, benchmark and build files (refused by default).
    #[arg(long)]
    allow_test_changes: bool,
    #[command(flatten)]
    judge: super::args::JudgeArgs,
    #[command(flatten)]
    run: RunArgs,
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

/// `etip replay`: each ETIP's reference (or a prediction) again on every machine profile.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// `gold` (each ETIP's own patch, the reference) or predictions in SWE-bench's format.
    #[arg(long, default_value = "gold")]
    predictions: String,
    /// The machine profiles, comma-separated: with --backend swarm the values of the nodes'
    /// `etip.profile` label; on one machine CPU lists that stand in for machines (`0,1`: CPU 0
    /// and CPU 1; `2-3`: one profile of two CPUs).
    #[arg(long, value_delimiter = ',', required = true)]
    profiles: Vec<String>,
    /// Replays per profile.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Which tests time the versions (as `etip eval --tests`).
    #[arg(long, default_value = "modules")]
    tests: String,
    /// The output of `etip select`, for --tests covering or auto.
    #[arg(long)]
    selection: Option<PathBuf>,
    #[command(flatten)]
    run: RunArgs,
}

/// `etip replay`: the replays, the table per task on stdout; `replay.json`, `replay.html` and
/// `replays.jsonl` in the output folder.
pub fn run_replay(a: ReplayArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let format = OutputFormat::from(a.run.output.format);
    let cfg = etip_pipeline::eval::replay::ReplayConfig {
        predictions: match a.predictions.as_str() {
            "gold" => Predictions::Gold,
            "empty" => Predictions::Empty,
            path => Predictions::File(PathBuf::from(path)),
        },
        tests: TestChoice::parse(&a.tests),
        selection: a.selection,
        run: a.run.config(),
        profiles: a.profiles,
        repeats: a.repeats,
    };
    let outcome = etip_pipeline::eval::replay::replay(&cfg, &super::progress::Bar::new())?;
    if format == OutputFormat::Json {
        out.write_all(etip_report::to_json(&outcome.rows)?.as_bytes())?;
    } else {
        out.write_all(render(&etip_report::eval::replay_table(&outcome.rows), format)?.as_bytes())?;
    }
    let n = outcome.rows.len();
    let count = |f: &dyn Fn(&etip_score::replay::ReplayRow) -> bool| {
        outcome.rows.iter().filter(|r| f(r)).count()
    };
    let mut line = format!(
        "{n} task(s), {} profile(s) × {} replay(s): evaluable everywhere {}, faster everywhere {}",
        outcome.profiles.len(),
        outcome.repeats,
        count(&|r| r.evaluable_everywhere),
        count(&|r| r.faster_everywhere)
    );
    for rule in etip_score::replay::RULES {
        line.push_str(&format!(
            ", valid ({rule}) {}",
            count(&|r| r.valid_everywhere.get(rule).copied().unwrap_or(false))
        ));
    }
    eprintln!("{line}");
    eprintln!(
        "replays in {}, the figure in {}",
        outcome.file.display(),
        outcome.file.with_file_name("replay.html").display()
    );
    let errors = outcome
        .results
        .iter()
        .filter(|r| r.category.as_deref() == Some(etip_core::category::Category::Error.name()))
        .count();
    if errors > 0 {
        return Err(anyhow::anyhow!(
            "{errors} replay(s) failed in the harness, not in the patch (see {}); run again to retry them",
            outcome.file.display()
        ));
    }
    Ok(())
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
    #[command(flatten)]
    config: ConfigArgs,
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
    /// Where the evaluations run: `local` (`--workers` threads of this process) or `swarm`
    /// (jobs on the Docker Swarm that --config's `[swarm]` section names; docs/cluster.md).
    #[arg(long, value_enum, default_value_t = BackendArg::Local)]
    backend: BackendArg,
    #[command(flatten)]
    output: OutputArgs,
}

impl RunArgs {
    /// The pipeline's configuration of these flags.
    fn config(self) -> RunConfig {
        RunConfig {
            backend: self.backend.into(),
            etips: self.etips,
            out: self.out,
            ids: self.id,
            run_id: self.run_id,
            workers: self.workers,
            timing: self.timing.timing(),
            setup_timeout_secs: self.setup_timeout,
            build_config: self.config.config,
            force: self.force,
            min_free_gb: self.min_free_gb,
            reuse_containers: self.reuse_containers,
            executor: ExecutorChoice {
                // Patches run only in containers unless they are trusted.
                kind: if self.local_trusted {
                    ExecutorKind::Local
                } else {
                    ExecutorKind::Docker
                },
                namespace: self.namespace,
            },
        }
    }
}

/// `etip eval`: agent patches, `gold` or `empty`.
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<()> {
    let format = OutputFormat::from(args.run.output.format);
    let cfg = Config {
        predictions: match args.predictions.as_str() {
            "gold" => Predictions::Gold,
            "empty" => Predictions::Empty,
            path => Predictions::File(PathBuf::from(path)),
        },
        tests: TestChoice::parse(&args.tests),
        selection: args.selection,
        allow_test_changes: args.allow_test_changes,
        run: args.run.config(),
        records: Records::Patches,
        judge: args.judge.options(),
    };
    let outcome = etip_pipeline::eval::run(&cfg, true, &super::progress::Bar::new())?;
    if let Some(j) = &outcome.judge {
        eprintln!("{}", j.line);
    }
    render_outcome(&outcome, format, out)
}

/// `etip eval-test`: generated tests.
pub fn run_tests(a: TestArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let format = OutputFormat::from(a.run.output.format);
    let cfg = etip_pipeline::eval_test::Config {
        tests: a.tests,
        run: a.run.config(),
    };
    let outcome = etip_pipeline::eval_test::run(&cfg, &super::progress::Bar::new())?;
    render_outcome(&outcome, format, out)
}

/// The table on stdout, where the results are on stderr; the evaluations that failed in the
/// harness fail the run (exit 1).
pub fn render_outcome(
    outcome: &Outcome,
    format: OutputFormat,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    out.write_all(table(&outcome.results, format)?.as_bytes())?;
    let results = &outcome.file;
    match outcome.records {
        Records::Patches => eprintln!(
            "results in {} (score them: etip score --rule jeto|swefficiency|gso|sweperf {})",
            results.display(),
            results.display()
        ),
        // JETO's score on generated tests is the share of detector tests.
        Records::Tests => eprintln!(
            "results in {} (the share of detector tests: etip score --rule jeto {})",
            results.display(),
            results.display()
        ),
    }
    let errors = outcome.harness_errors();
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
    render(&etip_report::eval::results_table(results, true), format)
}
