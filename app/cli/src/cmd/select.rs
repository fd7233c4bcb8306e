//! `etip select`: run each built ETIP's tests once per version with per-test coverage and keep
//! the tests that execute the changed code (`selection.jsonl`), for `etip measure --tests
//! covering`.

use super::args::{BackendArg, ConfigArgs, OutputArgs};
use super::executor::ExecutorArg;
use super::format::{num, render};
use etip_core::selection::TestSelection;
use etip_pipeline::ExecutorChoice;
use etip_pipeline::select::{Config, Outcome};
use etip_report::{Align, OutputFormat, Table};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The status.jsonl that `etip build` wrote.
    #[arg(long)]
    etips: PathBuf,
    /// Select only for these ETIPs (repeatable).
    #[arg(long)]
    id: Vec<String>,
    /// Output folder: selection.jsonl, <slug>/<version>.log (each run's command and output) and
    /// <slug>/<version>/ (its report and coverage data). A selection stored there with the same
    /// image and settings is reused. One run at a time writes to it.
    #[arg(long)]
    out: PathBuf,
    /// Time limit of each version's coverage run, seconds.
    #[arg(long, default_value_t = 3600)]
    timeout: u64,
    /// Memory limit of each session in MB.
    #[arg(long, default_value_t = 4096)]
    memory: u64,
    /// Where the tests run.
    #[arg(long, value_enum, default_value_t = ExecutorArg::Auto)]
    executor: ExecutorArg,
    #[command(flatten)]
    config: ConfigArgs,
    /// Select again even when a stored selection matches.
    #[arg(long)]
    force: bool,
    /// Namespace label of the session containers.
    #[arg(long, default_value = "etip")]
    namespace: String,
    /// Where the coverage runs run: `local` (one ETIP at a time on this machine) or `swarm` (one
    /// per node slot on the Docker Swarm that --config's `[swarm]` section names;
    /// docs/cluster.md).
    #[arg(long, value_enum, default_value_t = BackendArg::Local)]
    backend: BackendArg,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let cfg = Config {
        etips: args.etips,
        ids: args.id,
        out: args.out,
        timeout_secs: args.timeout,
        memory_mb: args.memory,
        executor: ExecutorChoice {
            kind: args.executor.into(),
            namespace: args.namespace,
        },
        build_config: args.config.config,
        force: args.force,
        backend: args.backend.into(),
    };
    let outcome = etip_pipeline::select::run(&cfg, &super::progress::Bar::new())?;
    render_outcome(&outcome, OutputFormat::from(args.output.format), stdout)
}

/// The summary on stdout, the counts on stderr.
fn render_outcome(
    outcome: &Outcome,
    format: OutputFormat,
    stdout: &mut dyn Write,
) -> anyhow::Result<()> {
    stdout.write_all(summary(&outcome.selections, format)?.as_bytes())?;
    eprintln!(
        "{} of {} with covering tests; selections in {}",
        outcome.selected(),
        outcome.selections.len(),
        outcome.file.display()
    );
    Ok(())
}

/// One row per ETIP: outcome, tests selected of those run, time per round with and without
/// selection (JSON: the selections themselves).
fn summary(results: &[TestSelection], format: OutputFormat) -> anyhow::Result<String> {
    if format == OutputFormat::Json {
        return Ok(etip_report::to_json(results)?);
    }
    let mut t = Table::new(vec![
        ("etip", Align::Left),
        ("outcome", Align::Left),
        ("covering", Align::Right),
        ("tests", Align::Right),
        ("suites", Align::Right),
        ("secs/round all", Align::Right),
        ("secs/round selected", Align::Right),
        ("selection secs", Align::Right),
        ("detail", Align::Left),
    ]);
    for s in results {
        let sv = s.savings.as_ref();
        t.push(vec![
            s.id.clone(),
            s.outcome.as_str().into(),
            s.covering.len().to_string(),
            sv.map_or("-".into(), |v| v.tests_all.to_string()),
            format!(
                "{}/{}",
                s.suites.len(),
                s.suites.len() + s.suites_not_covering.len()
            ),
            num(sv.map(|v| v.secs_all), 2),
            num(sv.map(|v| v.secs_selected), 2),
            format!("{:.1}", s.secs),
            super::format::first_line(s.detail.as_deref(), 100),
        ]);
    }
    let mut out = render(&t, format)?;
    if format != OutputFormat::Json {
        out.push_str(
            "\ncovering: tests that execute the changed code in either version; tests: tests run \
             (mean of the two versions); suites: the covering benchmarks of the project's asv, \
             pytest-benchmark and JMH suites, of those that ran; secs/round: the tests' own times in the coverage runs \
             (Python: each test's, Java: whole classes), so compare the two columns, not with a \
             timed round\n",
        );
    }
    Ok(out)
}
