//! `select`: run each built ETIP's tests once per version with per-test coverage and keep the
//! tests that execute the changed code (`selection.jsonl`), for `measure` with
//! [`TestChoice::Covering`](crate::timing::TestChoice). A stored selection with the same image
//! and settings is reused; the file is rewritten after every ETIP.
//!
//! Each ETIP is a work unit (id `select:<id>`, key [`etip_select::selection_key`], output its
//! [`TestSelection`]) run on the command's backend, one at a time. The ledger is kept in memory,
//! folded from `selection.jsonl`: a stored selection under the same key is reused unless it
//! failed or `--force` is given; a failed selection (an engine error, a build that failed) is a
//! record of the file like any other and is selected again next time, as before.
//!
//! On a swarm (`--backend swarm`) each unit carries its [`Params`] and names the ETIP's image; the
//! node's runner selects on its own engine ([`run_on_node`]) and the selection comes back naming
//! the node. It is recorded under the image and key this machine knows the ETIP by (the node
//! ran the same image by digest under the registry's name), so a re-run reuses it.

use crate::backend::BackendChoice;
use crate::executor::{ExecutorChoice, Workload};
use crate::output::{Named, distinct};
use crate::progress::{Done, Progress};
use crate::units::{Halt, InOrder};
use crate::{InputError, records};
use anyhow::Context;
use etip_core::cancel::CancelToken;
use etip_core::instance::InstanceStatus;
use etip_core::selection::{SelectionOutcome, TestSelection};
use etip_core::unit::{
    MemoryLedger, Stage, UnitError, UnitEvent, UnitOutput, UnitRunner, WorkUnit, position,
};
use etip_exec::executor::{Executor, Resources};
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
    /// This machine, or a swarm (`[swarm]` of `build_config`).
    #[serde(default)]
    pub backend: crate::backend::BackendKind,
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

impl Config {
    /// The backend of the selections: one ETIP at a time on this machine (the coverage runs
    /// take it), or the swarm of `--config`'s `[swarm]` section, one ETIP per node slot.
    pub fn backend(&self) -> anyhow::Result<BackendChoice> {
        self.backend.choice(
            Stage::Select.as_str(),
            &self.out,
            1,
            self.build_config.as_deref(),
            &self.executor.namespace,
        )
    }
}

/// What a unit's runner needs besides its spec: everything a cluster node's `etip unit run`
/// selects with.
#[derive(Serialize, Deserialize)]
struct Params {
    select: SelectConfig,
    /// Namespace label of the session containers.
    namespace: String,
}

/// Runs one selection unit: the coverage runs of the ETIP of the unit's spec.
struct Runner<'a> {
    executor: &'a dyn Executor,
    select: &'a SelectConfig,
    progress: &'a dyn Progress,
    halt: &'a Halt,
}

impl UnitRunner for Runner<'_> {
    fn run(&self, unit: &WorkUnit, _cancel: &CancelToken) -> Result<UnitOutput, UnitError> {
        if let Some(why) = self.halt.reason() {
            return Err(UnitError::infrastructure(format!("not selected: {why}")));
        }
        let status: InstanceStatus =
            serde_json::from_value(unit.spec.clone()).map_err(UnitError::Record)?;
        self.progress
            .message(&format!("{}: coverage runs", status.id));
        let mut selection = select_one(self.executor, &status, self.select, None);
        selection.node = Some(crate::units::this_node(&self.executor.info()));
        UnitOutput::of(&selection)
    }
}

/// Runs a selection unit on this cluster node: the node's engine, the unit's parameters, the
/// coverage data in a scratch folder.
pub(crate) fn run_on_node(
    unit: &WorkUnit,
    progress: &dyn Progress,
) -> Result<UnitOutput, UnitError> {
    let params: Params = serde_json::from_value(unit.params.clone()).map_err(UnitError::Record)?;
    let status: InstanceStatus =
        serde_json::from_value(unit.spec.clone()).map_err(UnitError::Record)?;
    let crate::units::OnNode { ex, scratch } =
        crate::units::on_node(&params.namespace, &status, Workload::Tests, progress)?;
    let mut select = params.select;
    select.work = scratch.path().to_path_buf();
    let halt = Halt::default();
    let runner = Runner {
        executor: ex.executor.as_ref(),
        select: &select,
        progress,
        halt: &halt,
    };
    runner.run(unit, etip_core::cancel::process())
}

/// One unit per ETIP, and the ledger that reuses the stored selections.
fn units(
    statuses: &[InstanceStatus],
    params: &Params,
    stored: &BTreeMap<String, TestSelection>,
) -> anyhow::Result<(Vec<WorkUnit>, MemoryLedger)> {
    let select = &params.select;
    let params = serde_json::to_value(params)?;
    let mut ledger = MemoryLedger::new();
    let mut units = Vec::new();
    for status in statuses {
        let unit = WorkUnit::new(
            Stage::Select,
            status.id.clone(),
            serde_json::to_value(status)?,
            params.clone(),
            etip_select::selection_key(status, select),
        )
        .with_images(status.image.clone());
        if let Some(p) = stored.get(&status.id)
            && !select.force
            && p.outcome != SelectionOutcome::Failed
            && p.key == unit.key
        {
            ledger.fold(&unit, UnitOutput::of(p)?);
        }
        units.push(unit);
    }
    Ok((units, ledger))
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
    let params = Params {
        select,
        namespace: cfg.executor.namespace.clone(),
    };
    let (mut units, mut ledger) = units(&statuses, &params, &stored)?;
    let select = params.select;
    let backend = cfg.backend()?.open(progress)?;
    backend.prepare(&mut units)?;
    let halt = Halt::default();
    let runner = Runner {
        executor: ex.executor.as_ref(),
        select: &select,
        progress,
        halt: &halt,
    };
    let selections = select_units(
        backend.as_ref(),
        &statuses,
        &units,
        &mut ledger,
        &runner,
        &mut stored,
        &file,
        progress,
    )?;
    progress.end();
    Ok(Outcome { selections, file })
}

/// Runs the selection units on the command's backend; reports and writes the selections in the
/// order of the statuses.
#[allow(clippy::too_many_arguments)]
fn select_units(
    backend: &dyn etip_core::unit::Backend,
    statuses: &[InstanceStatus],
    units: &[WorkUnit],
    ledger: &mut MemoryLedger,
    runner: &Runner<'_>,
    stored: &mut BTreeMap<String, TestSelection>,
    file: &std::path::Path,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<TestSelection>> {
    let halt = runner.halt;
    let mut order: InOrder<(TestSelection, bool)> = InOrder::new(units.len());
    let mut failure: Option<anyhow::Error> = None;
    // Units the backend gave up on without a selection (a swarm: every attempt lost).
    let mut lost: Vec<String> = Vec::new();
    // Reported and written in the order of the statuses; the file after every ETIP, so a later
    // failure loses nothing.
    let mut emit = |(s, reused): &(TestSelection, bool)| {
        progress.done(Done::Selected {
            selection: s,
            reused: *reused,
        });
        stored.insert(s.id.clone(), s.clone());
        if failure.is_none()
            && let Err(e) = write_selections(file, stored)
        {
            halt.set(e.to_string());
            failure = Some(e);
        }
    };
    let ran = backend.run(
        units,
        runner,
        ledger,
        etip_core::cancel::process(),
        &mut |event| {
            let (unit, output, reused) = match event {
                UnitEvent::Reused(u, o) => (u, o, true),
                UnitEvent::Finished(u, o) => (u, o, false),
                UnitEvent::Failed(u, e) => {
                    if !matches!(e, UnitError::Cancelled) {
                        lost.push(format!("{}: {e}", u.instance));
                    }
                    if let Some(i) = position(units, u) {
                        order.skip(i, &mut emit);
                    }
                    return;
                }
                UnitEvent::Started(_) => return,
            };
            if let (Some(i), Ok(mut s)) = (position(units, unit), output.read::<TestSelection>()) {
                // A node names the image as the registry does: kept as this machine names it.
                s.image = statuses[i].image.clone();
                s.key = unit.key.clone();
                order.put(i, (s, reused), &mut emit);
            }
        },
    );
    let selections = order
        .finish(&mut emit)
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    if let Some(e) = failure {
        return Err(e);
    }
    ran.context("running the selections")?;
    if !lost.is_empty() {
        anyhow::bail!(
            "{} ETIP(s) not selected (run again to retry them): {}",
            lost.len(),
            lost.join("; ")
        );
    }
    Ok(selections)
}

/// Writes every selection (this run's and earlier runs') to `file`.
fn write_selections(
    file: &std::path::Path,
    stored: &BTreeMap<String, TestSelection>,
) -> anyhow::Result<()> {
    let mut text = String::new();
    for s in stored.values() {
        text.push_str(&serde_json::to_string(s)?);
        text.push('\n');
    }
    crate::output::write(file, &text).with_context(|| format!("writing {}", file.display()))
}
