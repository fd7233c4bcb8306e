//! `build`: one Docker image per ETIP (base, env and instance layers), both versions built; or,
//! with [`ExecutorKind::Local`], both versions built as host processes in the output folder.
//! The output folder holds `status.jsonl`, `logs/<id>/` and the clone cache; one build at a time
//! writes to it.
//!
//! Each ETIP is a work unit ([`etip_build::units`]) run on the command's backend
//! ([`Config::backend`]): its output is the ETIP's status. The ledger is kept in memory: a build's
//! lasting record is its images, tagged by content key, so a build run again finds its layers in
//! the engine (reported `reused`) and an image removed since is built again.

use crate::backend::BackendChoice;
use crate::executor::{Builders, ExecutorKind};
use crate::output::{Named, distinct};
use crate::progress::{Done, Progress};
use crate::{InputError, records};
use anyhow::Context as _;
use etip_build::config::BuildConfig;
use etip_build::{EtipInput, Event};
use etip_core::instance::{FailureKind, InstanceStatus};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What to build and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// ETIPs as JSON lines (the miner's candidates.jsonl works as is).
    pub etips: PathBuf,
    /// Build only the ETIP with this id.
    pub id: Option<String>,
    /// Parallel builds.
    pub workers: usize,
    /// The build configuration file (TOML; keys not set keep their defaults).
    pub build_config: Option<PathBuf>,
    /// The output folder.
    pub out: PathBuf,
    /// Image namespace (overrides the configuration's).
    pub namespace: Option<String>,
    /// Docker (images) or local (host processes, Python only).
    pub executor: ExecutorKind,
}

impl Config {
    /// The backend of the builds: `workers` threads.
    pub fn backend(&self) -> BackendChoice {
        BackendChoice::Threads {
            workers: self.workers,
        }
    }
}

/// What the build did: one status per ETIP, in the order of the input.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub statuses: Vec<InstanceStatus>,
    /// The folder of the build logs.
    pub logs: PathBuf,
}

impl Outcome {
    /// The ETIPs that could not be built because the Docker engine failed: their builds say
    /// nothing about the ETIPs.
    pub fn engine_failures(&self) -> Vec<&str> {
        self.statuses
            .iter()
            .filter(|s| s.failure == Some(FailureKind::Engine))
            .map(|s| s.id.as_str())
            .collect()
    }
}

/// The build configuration of `file` (or the defaults) with `namespace` applied; bad input
/// otherwise.
pub fn load_config(file: Option<&Path>, namespace: Option<&str>) -> anyhow::Result<BuildConfig> {
    let mut cfg = records::build_config(file)?;
    if let Some(ns) = namespace {
        cfg.namespace = ns.to_string();
        cfg.validate()
            .map_err(|e| InputError(format!("--namespace: {e}")))?;
    }
    Ok(cfg)
}

/// Builds the ETIPs of `cfg.etips`. ETIPs that fail to build are data (in the outcome); bad
/// input and a folder another build holds are errors before anything is built.
pub fn run(cfg: &Config, progress: &dyn Progress) -> anyhow::Result<Outcome> {
    let build = load_config(cfg.build_config.as_deref(), cfg.namespace.as_deref())?;
    let mut paths = vec![Named::reads("--etips", &cfg.etips)];
    if let Some(c) = &cfg.build_config {
        paths.push(Named::reads("--config", c));
    }
    paths.push(Named::writes(
        "the status.jsonl of --out",
        &cfg.out.join(etip_build::output::STATUS_FILE),
    ));
    distinct(&paths)?;
    let mut etips = EtipInput::read_jsonl(&cfg.etips).map_err(|e| InputError(e.to_string()))?;
    if let Some(id) = &cfg.id {
        etips.retain(|e| &e.id == id);
        if etips.is_empty() {
            return Err(
                InputError(format!("no ETIP with id {id} in {}", cfg.etips.display())).into(),
            );
        }
    }
    // Before the engine is contacted: a bad --out is bad input.
    etip_build::output::check(&cfg.out, etips.iter().map(|e| e.id.as_str()))
        .map_err(|e| InputError(e.to_string()))?;
    // One build at a time writes to a folder: a second is refused at once (exit 2).
    let _lock = crate::output::lock_folder(&cfg.out, "--out")?;
    let builders = Builders::new(cfg.executor, build, &cfg.out, progress)?;
    progress.start(Some(etips.len() as u64));
    let backend = cfg.backend().backend();
    let on_event = |ev: &Event| match ev {
        Event::Started { id } => progress.message(&format!("{id}: preparing")),
        Event::Layer { id, kind, reused } => progress.message(&format!(
            "{id}: {kind:?} layer {}",
            if *reused { "reused" } else { "built" }
        )),
        Event::Finished(status) => progress.done(Done::Built(status)),
    };
    let (statuses, ran) = etip_build::units::run(
        backend.as_ref(),
        builders.one(),
        &etips,
        etip_core::cancel::process(),
        &on_event,
    );
    progress.end();
    ran.context("running the builds")?;
    tracing::info!(etips = statuses.len(), "build finished");
    Ok(Outcome {
        statuses,
        logs: cfg.out.join("logs"),
    })
}
