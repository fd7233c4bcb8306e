//! `measure`'s work units: one per ETIP, run on the command's backend with the state store as
//! the ledger.
//!
//! - id `measure:<id>`; spec the ETIP's status; key the rounds' run key
//!   ([`etip_measure::measure::run_key`]) with the status, the protocol, the verdict parameters,
//!   the notes and the executor: everything the measurement depends on. Equal keys reuse the
//!   stored measurement; any change measures again, which costs no round that is stored.
//! - output the [`Measurement`]. A not-executable ETIP (its build failed, a test fails, no
//!   covering test) is a finished unit; a measurement the engine cut short
//!   ([`NotExecutable::EngineError`]) an infrastructure failure that keeps its record: shown and
//!   written in this run, measured again in the next, as its rounds' outcome is not stored either.
//! - the rounds are written by the worker through a connection of its own to the state file
//!   (opened per unit: a SQLite connection is not shared between threads); the ledger is written
//!   by the backend on the coordinating thread. A store from before work units has no ledger
//!   record: its ETIPs run as units and resume from their stored rounds and outcomes.
//! - one ETIP at a time: both sessions of an ETIP are pinned to whole cores of one CPU set, and
//!   ETIPs never share it.
//! - on a swarm (`--backend swarm`) each unit carries its [`Params`] and names the ETIP's image;
//!   the node's runner measures it on the node's own engine and cores ([`run_on_node`]) and the
//!   measurement comes back in its reply, naming the node. Its rounds stay on the node: a unit
//!   cut short there is measured again from the start, on whichever node takes it.

use super::{Config, Reporter, paths};
use crate::backend::BackendChoice;
use crate::progress::{Done, Progress};
use crate::units::{Halt, InOrder, key};
use anyhow::Context as _;
use etip_core::cancel::CancelToken;
use etip_core::instance::InstanceStatus;
use etip_core::unit::{Stage, UnitError, UnitEvent, UnitOutput, UnitRunner, WorkUnit, position};
use etip_exec::executor::Executor;
use etip_measure::measure::{MeasureConfig, MeasureProgress, measure_one, run_key};
use etip_records::measure::{Measurement, NotExecutable};
use etip_store::Store;
use std::path::Path;

impl Config {
    /// The backend of the measurements: one ETIP at a time on this machine (see the module
    /// docs), or the swarm of `--config`'s `[swarm]` section, one ETIP per node slot.
    pub fn backend(&self) -> anyhow::Result<BackendChoice> {
        self.backend.choice(
            Stage::Measure.as_str(),
            &self.out,
            1,
            self.build_config.as_deref(),
            &self.executor.namespace,
        )
    }
}

/// What a unit's runner needs besides its spec: everything a cluster node's `etip unit run`
/// measures with. The CPU sets are the node's own: `cpus` is the user's `--cpus`, applied to
/// the node's cores there.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Params {
    pub measure: MeasureConfig,
    pub cpus: Option<String>,
    /// Namespace label of the session containers.
    pub namespace: String,
}

/// What measuring the units needs.
pub(super) struct Measuring<'a> {
    pub cfg: &'a Config,
    pub executor: &'a dyn Executor,
    pub measure: &'a MeasureConfig,
    /// The state file (the rounds; the ledger is the coordinator's connection to it).
    pub state: &'a Path,
    pub reporter: &'a Reporter<'a>,
    pub progress: &'a dyn Progress,
}

/// Runs one measurement unit: on a worker thread of this machine, or on a cluster node.
struct Runner<'a> {
    executor: &'a dyn Executor,
    measure: &'a MeasureConfig,
    /// The store the rounds go to (opened per unit: a SQLite connection is not shared between
    /// threads).
    state: &'a Path,
    reporter: &'a dyn MeasureProgress,
    halt: &'a Halt,
}

impl UnitRunner for Runner<'_> {
    fn run(&self, unit: &WorkUnit, cancel: &CancelToken) -> Result<UnitOutput, UnitError> {
        if let Some(why) = self.halt.reason() {
            return Err(UnitError::infrastructure(format!("not measured: {why}")));
        }
        let status: InstanceStatus =
            serde_json::from_value(unit.spec.clone()).map_err(UnitError::Record)?;
        let halt = |e: String| {
            self.halt.set(e.clone());
            UnitError::infrastructure(e)
        };
        let mut rounds =
            Store::open(self.state).map_err(|e| halt(format!("measuring {}: {e}", status.id)))?;
        let mut m = measure_one(
            self.executor,
            &mut rounds,
            &status,
            self.measure,
            self.reporter,
        )
        .map_err(|e| halt(format!("measuring {}: {e}", status.id)))?;
        if cancel.is_cancelled() {
            // Cut short by a signal: says nothing about the ETIP.
            return Err(UnitError::Cancelled);
        }
        m.node = Some(crate::units::this_node(&self.executor.info()));
        let output = UnitOutput::of(&m)?;
        if m.reason == Some(NotExecutable::EngineError) {
            return Err(UnitError::infrastructure_with(
                m.detail.as_deref().unwrap_or("engine error"),
                output,
            ));
        }
        Ok(output)
    }
}

/// Runs a measurement unit on this cluster node: the node's engine and CPU set, the unit's
/// parameters, the rounds in a scratch store (a unit run again on another node measures anew:
/// rounds of two machines are not one sample).
pub(crate) fn run_on_node(
    unit: &WorkUnit,
    progress: &dyn Progress,
) -> Result<UnitOutput, UnitError> {
    let params: Params = serde_json::from_value(unit.params.clone()).map_err(UnitError::Record)?;
    let status: InstanceStatus =
        serde_json::from_value(unit.spec.clone()).map_err(UnitError::Record)?;
    let infra = |what: &str, e: anyhow::Error| UnitError::infrastructure(format!("{what}: {e:#}"));
    let crate::units::OnNode { ex, scratch } = crate::units::on_node(
        &params.namespace,
        &status,
        crate::executor::Workload::Tests,
        progress,
    )?;
    let (cpuset, notes) =
        crate::units::node_pinning(params.cpus.as_deref(), ex.executor.info().can_pin)
            .map_err(|e| infra("pinning on this node", e))?;
    let mut measure = params.measure;
    measure.cpusets = cpuset.map(|c| [c.clone(), c]);
    measure.notes = notes;
    measure.logs = Some(scratch.path().join("logs"));
    let state = scratch.path().join("state.sqlite");
    let halt = Halt::default();
    let reporter = Reporter(progress);
    let runner = Runner {
        executor: ex.executor.as_ref(),
        measure: &measure,
        state: &state,
        reporter: &reporter,
        halt: &halt,
    };
    runner.run(unit, etip_core::cancel::process())
}

impl Measuring<'_> {
    /// One unit per status (see the module docs).
    fn units(&self, statuses: &[InstanceStatus]) -> anyhow::Result<Vec<WorkUnit>> {
        let info = self.executor.info();
        let params = serde_json::to_value(Params {
            measure: self.measure.clone(),
            cpus: self.cfg.timing.cpus.clone(),
            namespace: self.cfg.executor.namespace.clone(),
        })?;
        let mut units = Vec::new();
        for status in statuses {
            let (run, _) = run_key(status, self.measure, self.executor.name());
            let spec = serde_json::to_value(status)?;
            let k = key(&serde_json::json!({
                "run": run,
                "status": spec,
                "protocol": format!("{:?}", self.measure.protocol),
                "verdict": format!("{:?}", self.measure.verdict),
                "tests": self.measure.tests.describe_for(&status.id),
                "notes": self.measure.notes,
                "executor": format!("{info:?}"),
                "measurement": etip_records::measure::MEASUREMENT_SCHEMA_VERSION,
            }));
            units.push(
                WorkUnit::new(Stage::Measure, status.id.clone(), spec, params.clone(), k)
                    .with_images(status.image.clone()),
            );
        }
        Ok(units)
    }

    /// Measures every status; the outputs are rewritten after each, in input order.
    pub(super) fn run(
        &self,
        statuses: &[InstanceStatus],
        store: &mut Store,
    ) -> anyhow::Result<Vec<Measurement>> {
        let mut units = self.units(statuses)?;
        let backend = self.cfg.backend()?.open(self.progress)?;
        backend.prepare(&mut units)?;
        if self.cfg.force {
            for u in &units {
                store.forget_work_unit(&u.id())?;
            }
        }
        let halt = Halt::default();
        let runner = Runner {
            executor: self.executor,
            measure: self.measure,
            state: self.state,
            reporter: self.reporter,
            halt: &halt,
        };
        let mut order: InOrder<Measurement> = InOrder::new(units.len());
        // Units the backend gave up on without a measurement (a swarm: every attempt lost).
        let mut lost: Vec<String> = Vec::new();
        let mut done: Vec<Measurement> = Vec::new();
        let mut emit = |m: &Measurement| {
            self.progress.done(Done::Measured(m));
            done.push(m.clone());
            // Written after every ETIP, so a later failure loses nothing.
            if let Err(e) = paths::write_outputs(&self.cfg.out, &done) {
                halt.set(format!("{e:#}"));
            }
        };
        let ran = backend.run(
            &units,
            &runner,
            store,
            etip_core::cancel::process(),
            &mut |event| {
                let (unit, output) = match event {
                    UnitEvent::Reused(u, o) | UnitEvent::Finished(u, o) => (u, o),
                    UnitEvent::Failed(u, e) => match e.record() {
                        Some(o) => (u, o),
                        None => {
                            if !matches!(e, UnitError::Cancelled) {
                                lost.push(format!("{}: {e}", u.instance));
                            }
                            if let Some(i) = position(&units, u) {
                                order.skip(i, &mut emit);
                            }
                            return;
                        }
                    },
                    UnitEvent::Started(_) => return,
                };
                if let (Some(i), Ok(m)) = (position(&units, unit), output.read::<Measurement>()) {
                    order.put(i, m, &mut emit);
                }
            },
        );
        let measurements = order.finish(&mut emit);
        ran.context("recording the measurements")?;
        if let Some(why) = halt.reason() {
            anyhow::bail!(why);
        }
        if !lost.is_empty() {
            anyhow::bail!(
                "{} ETIP(s) not measured (run again to retry them): {}",
                lost.len(),
                lost.join("; ")
            );
        }
        Ok(measurements)
    }
}
