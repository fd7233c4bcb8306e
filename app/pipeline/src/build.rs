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
use etip_core::instance::{BuildOutcome, FailureKind, InstanceStatus};
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
    /// Python dependencies as of (overrides the configuration's `python.deps_as_of`).
    #[serde(default)]
    pub deps_as_of: Option<etip_build::config::DepsAsOf>,
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
    /// The yield per repository and year of the base commit ([`yield_table`]), also in
    /// `<out>/yield.json`.
    pub yields: Vec<YieldRow>,
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
    let mut build = load_config(cfg.build_config.as_deref(), cfg.namespace.as_deref())?;
    if let Some(d) = &cfg.deps_as_of {
        build.python.deps_as_of = d.clone();
    }
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
    let backend = cfg.backend().open(progress)?;
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
    let yields = yield_table(&statuses);
    write_yield(&cfg.out, &yields)?;
    Ok(Outcome {
        statuses,
        logs: cfg.out.join("logs"),
        yields,
    })
}

/// One row of a build's yield table: the ETIPs of one repository whose base commit is of one
/// year, how many built (and passed their smoke check), and why the others did not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct YieldRow {
    /// The repository (the statuses' `source`; `"?"` when a status has none).
    pub repository: String,
    /// The base commit's year (UTC), `None` when the build never read the commit.
    pub year: Option<i32>,
    /// Built or reused: both versions built and passed their smoke check.
    pub built: usize,
    pub tried: usize,
    /// Failure kind (`environment_incomplete`, ...) → count, for the ones that did not build.
    pub failures: std::collections::BTreeMap<String, usize>,
}

/// The yield of a build per repository and year of the base commit, oldest year first: what
/// a repository's history gives.
pub fn yield_table(statuses: &[InstanceStatus]) -> Vec<YieldRow> {
    let mut rows: std::collections::BTreeMap<(String, Option<i32>), YieldRow> = Default::default();
    for s in statuses {
        let repository = s.source.clone().unwrap_or_else(|| "?".into());
        let year = s.commit_time.and_then(|t| {
            time::OffsetDateTime::from_unix_timestamp(t)
                .ok()
                .map(|d| d.year())
        });
        let row = rows
            .entry((repository.clone(), year))
            .or_insert_with(|| YieldRow {
                repository,
                year,
                built: 0,
                tried: 0,
                failures: Default::default(),
            });
        row.tried += 1;
        if s.outcome == BuildOutcome::Failed {
            let kind = s
                .failure
                .and_then(|k| serde_json::to_value(k).ok())
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| "unknown".into());
            *row.failures.entry(kind).or_default() += 1;
        } else {
            row.built += 1;
        }
    }
    rows.into_values().collect()
}

/// The yield table as text: a line per repository and year, then each repository's total.
pub fn yield_text(rows: &[YieldRow]) -> String {
    let mut out = String::from(
        "yield (built and smoke-checked / tried) by repository and year of the base commit:\n",
    );
    let mut repos: Vec<&str> = rows.iter().map(|r| r.repository.as_str()).collect();
    repos.dedup();
    for repo in repos {
        out.push_str(&format!("  {repo}\n"));
        let (mut built, mut tried) = (0, 0);
        for r in rows.iter().filter(|r| r.repository == repo) {
            built += r.built;
            tried += r.tried;
            let year = r.year.map_or("????".to_string(), |y| y.to_string());
            let failures: Vec<String> =
                r.failures.iter().map(|(k, n)| format!("{n} {k}")).collect();
            out.push_str(&format!(
                "    {year}  {:>4}/{:<4} {}\n",
                r.built,
                r.tried,
                failures.join(", ")
            ));
        }
        let pct = if tried == 0 {
            0.0
        } else {
            100.0 * built as f64 / tried as f64
        };
        out.push_str(&format!("    all   {built:>4}/{tried:<4} ({pct:.0}%)\n"));
    }
    out
}

/// The file of `<out>` the yield table is written to (JSON rows).
pub const YIELD_FILE: &str = "yield.json";

/// Writes the yield table of `outcome` to `<out>/yield.json` (replaced atomically).
pub fn write_yield(out: &Path, rows: &[YieldRow]) -> anyhow::Result<PathBuf> {
    let path = out.join(YIELD_FILE);
    let text = serde_json::to_string_pretty(rows)?;
    etip_core::atomic::write(&path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}
