//! `etip build`: one Docker image per ETIP (base, env and instance layers), both versions built;
//! or, with `--executor local`, both versions built as host processes in the output folder.

use super::args::ConfigArgs;
use etip_core::instance::BuildOutcome;
use etip_pipeline::ExecutorKind;
use etip_pipeline::build::{Config, Outcome};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// ETIPs as JSON lines (id, language, base_commit, patched_commit, source or repo); the miner's
    /// candidates.jsonl works as is.
    #[arg(long, required_unless_present = "print_config")]
    etips: Option<PathBuf>,
    /// Build only the ETIP with this id.
    #[arg(long)]
    id: Option<String>,
    /// Parallel builds.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    #[command(flatten)]
    config: ConfigArgs,
    /// Output folder: logs/<id>/ (Dockerfiles, context summary, build log, status.json),
    /// status.jsonl, repos/ (clone cache). One build at a time writes to it.
    #[arg(long, default_value = ".etip/build")]
    out: PathBuf,
    /// Image namespace (overrides the configuration's `namespace`).
    #[arg(long)]
    namespace: Option<String>,
    /// Where to build: images in the Docker engine, or (`local`, Python only) both versions as
    /// host processes under OUT/local/, for `etip measure --executor local` (no isolation: code
    /// you trust only).
    #[arg(long, value_enum, default_value_t = BuildExecutor::Docker)]
    executor: BuildExecutor,
    /// Python dependencies as of: `commit` (releases uploaded before the end of the base commit's
    /// day), `none` (today's releases) or a day `YYYY-MM-DD` (overrides python.deps_as_of).
    #[arg(long, value_name = "commit|none|DATE")]
    deps_as_of: Option<etip_build::config::DepsAsOf>,
    /// Print the effective configuration as TOML and exit (credentials masked; comments say what
    /// each `[network]` key does and what "auto" finds on this machine).
    #[arg(long)]
    print_config: bool,
}

/// Where `etip build` builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BuildExecutor {
    /// Image layers in the Docker engine.
    Docker,
    /// Host processes in the output folder (Python only).
    Local,
}

impl From<BuildExecutor> for ExecutorKind {
    fn from(e: BuildExecutor) -> ExecutorKind {
        match e {
            BuildExecutor::Docker => ExecutorKind::Docker,
            BuildExecutor::Local => ExecutorKind::Local,
        }
    }
}

pub fn run(args: Args, stdout: &mut dyn std::io::Write) -> anyhow::Result<()> {
    if args.print_config {
        let mut cfg = etip_pipeline::build::load_config(
            args.config.config.as_deref(),
            args.namespace.as_deref(),
        )?;
        if let Some(d) = &args.deps_as_of {
            cfg.python.deps_as_of = d.clone();
        }
        // With what "auto" finds on this machine, credentials masked.
        write!(
            stdout,
            "{}",
            cfg.to_toml_with(Some(&etip_build::network::host()))
        )?;
        return Ok(());
    }
    let etips = args
        .etips
        .ok_or_else(|| anyhow::anyhow!("clap requires --etips here"))?;
    let cfg = Config {
        etips,
        id: args.id,
        workers: args.workers,
        build_config: args.config.config,
        out: args.out,
        namespace: args.namespace,
        executor: args.executor.into(),
        deps_as_of: args.deps_as_of,
    };
    let outcome = build_streaming(&cfg, stdout)?;
    summarize(&outcome)
}

/// Builds with a progress bar; prints each status line on stdout as it finishes.
fn build_streaming(cfg: &Config, stdout: &mut dyn std::io::Write) -> anyhow::Result<Outcome> {
    // The lines come from the workers' threads; they are written here, in this thread.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let bar = super::progress::Bar::with_stdout(tx);
    let shown = bar.handle();
    std::thread::scope(|scope| {
        // The bar (and with it the sender) ends with the build: the loop below then ends.
        let worker = scope.spawn(move || etip_pipeline::build::run(cfg, &bar));
        for line in rx {
            // A closed stdout must not stop the builds: status.jsonl has every line.
            shown.suspend(|| {
                let _ = writeln!(stdout, "{line}");
            });
        }
        worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The status lines of a build (what `etip build` prints on stdout as each finishes).
pub fn status_lines(outcome: &Outcome, stdout: &mut dyn std::io::Write) -> anyhow::Result<()> {
    for s in &outcome.statuses {
        writeln!(stdout, "{}", serde_json::to_string(s)?)?;
    }
    Ok(())
}

/// Prints the failures and the counts. ETIPs that fail to build are data (exit 0); failures
/// of the Docker engine are failures of the run (exit 1).
pub fn summarize(outcome: &Outcome) -> anyhow::Result<()> {
    let statuses = &outcome.statuses;
    let count = |o: BuildOutcome| statuses.iter().filter(|s| s.outcome == o).count();
    for s in statuses
        .iter()
        .filter(|s| s.outcome == BuildOutcome::Failed)
    {
        eprintln!("{}: {}", s.id, s.reason.as_deref().unwrap_or("failed"));
    }
    eprint!("{}", etip_pipeline::build::yield_text(&outcome.yields));
    eprintln!(
        "{} built, {} reused, {} failed; logs in {}",
        count(BuildOutcome::Built),
        count(BuildOutcome::Reused),
        count(BuildOutcome::Failed),
        outcome.logs.display()
    );
    let engine = outcome.engine_failures();
    if !engine.is_empty() {
        anyhow::bail!(
            "{} of {} ETIPs could not be built because of a Docker engine error ({}); their builds say nothing about the ETIPs: fix the engine and run etip build again",
            engine.len(),
            statuses.len(),
            engine.join(", ")
        );
    }
    Ok(())
}
