//! `etip build`: one Docker image per ETIP (base, env and instance layers), both versions built.

use anyhow::Context;
use etip_build::{Builder, EtipInput, Event, config::BuildConfig};
use etip_core::instance::BuildOutcome;
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
    /// Build configuration (TOML; keys not set keep their defaults).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Output folder: logs/<id>/ (Dockerfiles, context summary, build log, status.json),
    /// status.jsonl, repos/ (clone cache).
    #[arg(long, default_value = ".etip/build")]
    out: PathBuf,
    /// Image namespace (overrides the configuration's `namespace`).
    #[arg(long)]
    namespace: Option<String>,
    /// Print the effective configuration as TOML and exit.
    #[arg(long)]
    print_config: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut cfg = match &args.config {
        Some(p) => BuildConfig::load(p).map_err(|e| crate::cmd::UsageError(e.to_string()))?,
        None => BuildConfig::default(),
    };
    if let Some(ns) = &args.namespace {
        cfg.namespace = ns.clone();
    }
    if args.print_config {
        print!("{}", cfg.to_toml());
        return Ok(());
    }
    let path = args.etips.as_ref().expect("clap requires --etips here");
    let mut etips =
        EtipInput::read_jsonl(path).map_err(|e| crate::cmd::UsageError(e.to_string()))?;
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
    let builder = Builder::new(
        cfg,
        args.out.clone(),
        crate::cmd::runtime()?.handle().clone(),
    )
    .context("connecting to Docker")?;
    let bar = indicatif::ProgressBar::new(etips.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("the template is valid"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(500));
    let statuses = builder.build_all(&etips, args.workers, &|ev: &Event| match ev {
        Event::Started { id } => bar.set_message(format!("{id}: preparing")),
        Event::Layer { id, kind, reused } => bar.set_message(format!(
            "{id}: {kind:?} layer {}",
            if *reused { "reused" } else { "built" }
        )),
        Event::Finished(status) => {
            bar.inc(1);
            if let Ok(line) = serde_json::to_string(status) {
                bar.suspend(|| println!("{line}"));
            }
        }
    });
    bar.finish_and_clear();
    let failed = statuses
        .iter()
        .filter(|s| s.outcome == BuildOutcome::Failed)
        .count();
    for s in statuses
        .iter()
        .filter(|s| s.outcome == BuildOutcome::Failed)
    {
        eprintln!("{}: {}", s.id, s.reason.as_deref().unwrap_or("failed"));
    }
    eprintln!(
        "{} built, {} reused, {failed} failed; logs in {}",
        statuses
            .iter()
            .filter(|s| s.outcome == BuildOutcome::Built)
            .count(),
        statuses
            .iter()
            .filter(|s| s.outcome == BuildOutcome::Reused)
            .count(),
        args.out.join("logs").display()
    );
    Ok(())
}
