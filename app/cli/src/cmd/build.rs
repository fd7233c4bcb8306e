//! `etip build`: one Docker image per ETIP (base, env and instance layers), both versions built;
//! or, with `--executor local`, both versions built as host processes in the output folder.

use anyhow::Context;
use etip_build::local::LocalBuilder;
use etip_build::{Builder, EtipInput, Event, config::BuildConfig};
use etip_core::instance::{BuildOutcome, FailureKind, InstanceStatus};
use std::path::{Path, PathBuf};

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
    /// Build configuration (TOML; keys not set keep their defaults).
    #[arg(long)]
    config: Option<PathBuf>,
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

pub fn run(args: Args, stdout: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let usage = |e: &dyn std::fmt::Display| crate::cmd::UsageError(e.to_string());
    let mut cfg = match &args.config {
        Some(p) => BuildConfig::load(p).map_err(|e| usage(&e))?,
        None => BuildConfig::default(),
    };
    if let Some(ns) = &args.namespace {
        cfg.namespace = ns.clone();
        cfg.validate()
            .map_err(|e| usage(&format_args!("--namespace: {e}")))?;
    }
    if args.print_config {
        // With what "auto" finds on this machine, credentials masked.
        write!(
            stdout,
            "{}",
            cfg.to_toml_with(Some(&etip_build::network::host()))
        )?;
        return Ok(());
    }
    let path = args.etips.as_ref().expect("clap requires --etips here");
    {
        use super::output::{Named, distinct};
        let mut paths = vec![Named::reads("--etips", path)];
        if let Some(c) = &args.config {
            paths.push(Named::reads("--config", c));
        }
        paths.push(Named::writes(
            "the status.jsonl of --out",
            &args.out.join(etip_build::output::STATUS_FILE),
        ));
        distinct(&paths)?;
    }
    let mut etips = EtipInput::read_jsonl(path).map_err(|e| usage(&e))?;
    if let Some(id) = &args.id {
        etips.retain(|e| &e.id == id);
        if etips.is_empty() {
            return Err(crate::cmd::UsageError(format!(
                "no ETIP with id {id} in {}",
                path.display()
            ))
            .into());
        }
    }
    // Before the engine is contacted: a bad --out is bad input.
    etip_build::output::check(&args.out, etips.iter().map(|e| e.id.as_str()))
        .map_err(|e| usage(&e))?;
    // One build at a time writes to a folder: a second is refused at once (exit 2).
    let _lock = super::output::lock_folder(&args.out, "--out")?;
    let statuses = match args.executor {
        BuildExecutor::Docker => {
            let builder = Builder::new(
                cfg,
                args.out.clone(),
                crate::cmd::runtime()?.handle().clone(),
            )
            .context("connecting to Docker")?;
            build_with_progress(
                &|on: &(dyn Fn(&Event) + Sync)| builder.build_all(&etips, args.workers, on),
                etips.len(),
                stdout,
            )
        }
        BuildExecutor::Local => {
            eprintln!(
                "building as host processes under {} (no isolation: code you trust only)",
                args.out.join("local").display()
            );
            let out = std::path::absolute(&args.out)
                .with_context(|| format!("the absolute path of {}", args.out.display()))?;
            let builder = LocalBuilder::new(cfg, out);
            build_with_progress(
                &|on: &(dyn Fn(&Event) + Sync)| builder.build_all(&etips, args.workers, on),
                etips.len(),
                stdout,
            )
        }
    };
    summarize(&statuses, &args.out)
}

/// The batch's build, given the callback of its events.
type BuildBatch<'a> = dyn Fn(&(dyn Fn(&Event) + Sync)) -> Vec<InstanceStatus> + Sync + 'a;

/// Builds the batch with a progress bar; prints each status line on stdout as it finishes.
fn build_with_progress(
    build: &BuildBatch,
    total: usize,
    stdout: &mut dyn std::io::Write,
) -> Vec<InstanceStatus> {
    let bar = indicatif::ProgressBar::new(total as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("the template is valid"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(500));
    // The callback runs on the workers' threads; the lines are written here, in this thread.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let statuses = std::thread::scope(|scope| {
        let bar = &bar;
        let worker = scope.spawn(move || {
            build(&|ev: &Event| match ev {
                Event::Started { id } => bar.set_message(format!("{id}: preparing")),
                Event::Layer { id, kind, reused } => bar.set_message(format!(
                    "{id}: {kind:?} layer {}",
                    if *reused { "reused" } else { "built" }
                )),
                Event::Finished(status) => {
                    bar.inc(1);
                    if let Ok(line) = serde_json::to_string(status) {
                        let _ = tx.send(line);
                    }
                }
            })
        });
        for line in rx {
            // A closed stdout must not stop the builds: status.jsonl has every line.
            bar.suspend(|| {
                let _ = writeln!(stdout, "{line}");
            });
        }
        worker.join()
    });
    bar.finish_and_clear();
    statuses.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Prints the failures and the counts. ETIPs that fail to build are data (exit 0); failures
/// of the Docker engine are failures of the run (exit 1).
fn summarize(statuses: &[InstanceStatus], out: &Path) -> anyhow::Result<()> {
    let count = |o: BuildOutcome| statuses.iter().filter(|s| s.outcome == o).count();
    for s in statuses
        .iter()
        .filter(|s| s.outcome == BuildOutcome::Failed)
    {
        eprintln!("{}: {}", s.id, s.reason.as_deref().unwrap_or("failed"));
    }
    eprintln!(
        "{} built, {} reused, {} failed; logs in {}",
        count(BuildOutcome::Built),
        count(BuildOutcome::Reused),
        count(BuildOutcome::Failed),
        out.join("logs").display()
    );
    let engine: Vec<&str> = statuses
        .iter()
        .filter(|s| s.failure == Some(FailureKind::Engine))
        .map(|s| s.id.as_str())
        .collect();
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
