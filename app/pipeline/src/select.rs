//! `select`: run each built ETIP's tests once per version with per-test coverage and keep the
//! tests that execute the changed code (`selection.jsonl`), for `measure` with
//! [`TestChoice::Covering`](crate::timing::TestChoice). A stored selection with the same image
//! and settings is reused; the file is rewritten after every ETIP.

use crate::executor::{ExecutorChoice, Workload};
use crate::output::{Named, distinct};
use crate::progress::{Done, Progress};
use crate::{InputError, records};
use anyhow::Context;
use etip_core::selection::{SelectionOutcome, TestSelection};
use etip_exec::executor::Resources;
use etip_select::{SelectConfig, select_one};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// What to select for and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// The status.jsonl that `build` wrote.
    pub etips: PathBuf,
    /// Only these ETIPs (all when empty).
    pub ids: Vec<String>,
    /// The output folder.
    pub out: PathBuf,
    /// Time limit of each version's coverage run, seconds.
    pub timeout_secs: u64,
    /// Memory limit of each session, MB.
    pub memory_mb: u64,
    pub executor: ExecutorChoice,
    /// The build configuration the instances were built with.
    pub build_config: Option<PathBuf>,
    /// Select again even when a stored selection matches.
    pub force: bool,
}

/// The selections of this run, in the order of the statuses.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub selections: Vec<TestSelection>,
    /// The selection.jsonl written (this run's and earlier runs' selections).
    pub file: PathBuf,
}

impl Outcome {
    /// How many ETIPs have covering tests.
    pub fn selected(&self) -> usize {
        self.selections
            .iter()
            .filter(|s| s.outcome == SelectionOutcome::Selected)
            .count()
    }
}

/// Selects the covering tests of every ETIP of `cfg.etips`.
pub fn run(cfg: &Config, progress: &dyn Progress) -> anyhow::Result<Outcome> {
    if cfg.timeout_secs == 0 || cfg.memory_mb < 64 {
        return Err(
            InputError("--timeout must be positive and --memory at least 64 MB".into()).into(),
        );
    }
    let build = records::build_config(cfg.build_config.as_deref())?;
    let statuses = records::select_statuses(&cfg.etips, &cfg.ids)?;
    let file = cfg.out.join("selection.jsonl");
    let mut paths = vec![Named::reads("--etips", &cfg.etips)];
    if let Some(c) = &cfg.build_config {
        paths.push(Named::reads("--config", c));
    }
    paths.push(Named::writes("the selection.jsonl of --out", &file));
    distinct(&paths)?;
    // One run at a time writes to a folder: a second is refused at once (exit 2).
    let _lock = crate::output::lock_folder(&cfg.out, "--out")?;
    crate::output::check(&file)?;
    let mut stored = if file.exists() {
        records::read_selections(&file)?
    } else {
        BTreeMap::new()
    };
    let ex = crate::executor::choose(&cfg.executor, &statuses, Workload::Tests, progress)?;
    let select = SelectConfig {
        build,
        resources: Resources {
            memory_mb: cfg.memory_mb,
            ..Resources::default()
        },
        timeout: Duration::from_secs(cfg.timeout_secs),
        work: cfg.out.clone(),
        force: cfg.force,
    };
    progress.start(Some(statuses.len() as u64));
    let mut selections = Vec::new();
    for status in &statuses {
        progress.message(&format!("{}: coverage runs", status.id));
        let previous = stored.get(&status.id);
        let reused = previous.is_some_and(|p| {
            !cfg.force
                && p.outcome != SelectionOutcome::Failed
                && p.key == etip_select::selection_key(status, &select)
        });
        let s = select_one(ex.executor.as_ref(), status, &select, previous);
        progress.done(Done::Selected {
            selection: &s,
            reused,
        });
        stored.insert(s.id.clone(), s.clone());
        selections.push(s);
        // Written after every ETIP, so a later failure loses nothing.
        let mut text = String::new();
        for s in stored.values() {
            text.push_str(&serde_json::to_string(s)?);
            text.push('\n');
        }
        crate::output::write(&file, &text)
            .with_context(|| format!("writing {}", file.display()))?;
    }
    progress.end();
    Ok(Outcome { selections, file })
}
