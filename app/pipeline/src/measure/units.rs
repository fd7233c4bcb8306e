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

use super::{Config, Reporter, paths};
use crate::backend::BackendChoice;
use crate::progress::{Done, Progress};
use crate::units::{Halt, InOrder, key};
use anyhow::Context as _;
use etip_core::cancel::CancelToken;
use etip_core::instance::InstanceStatus;
use etip_core::unit::{Stage, UnitError, UnitEvent, UnitOutput, UnitRunner, WorkUnit, position};
use etip_exec::executor::Executor;
use etip_measure::measure::{MeasureConfig, measure_one, run_key};
use etip_records::measure::{Measurement, NotExecutable};
use etip_store::Store;
use std::path::Path;

impl Config {
    /// The backend of the measurements: one ETIP at a time (see the module docs).
    pub fn backend(&self) -> BackendChoice {
        BackendChoice::Threads { workers: 1 }
    }
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

/// Runs one measurement unit on a worker.
struct Runner<'a> {
    m: &'a Measuring<'a>,
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
            Store::open(self.m.state).map_err(|e| halt(format!("measuring {}: {e}", status.id)))?;
        let m = measure_one(
            self.m.executor,
            &mut rounds,
            &status,
            self.m.measure,
            self.m.reporter,
        )
        .map_err(|e| halt(format!("measuring {}: {e}", status.id)))?;
        if cancel.is_cancelled() {
            // Cut short by a signal: says nothing about the ETIP.
            return Err(UnitError::Cancelled);
        }
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

impl Measuring<'_> {
    /// One unit per status (see the module docs).
    fn units(&self, statuses: &[InstanceStatus]) -> anyhow::Result<Vec<WorkUnit>> {
        let info = self.executor.info();
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
            units.push(WorkUnit::new(
                Stage::Measure,
                status.id.clone(),
                spec,
                serde_json::json!({}),
                k,
            ));
        }
        Ok(units)
    }

    /// Measures every status; the outputs are rewritten after each, in input order.
    pub(super) fn run(
        &self,
        statuses: &[InstanceStatus],
        store: &mut Store,
    ) -> anyhow::Result<Vec<Measurement>> {
        let units = self.units(statuses)?;
        if self.cfg.force {
            for u in &units {
                store.forget_work_unit(&u.id())?;
            }
        }
        let halt = Halt::default();
        let runner = Runner {
            m: self,
            halt: &halt,
        };
        let mut order: InOrder<Measurement> = InOrder::new(units.len());
        let mut done: Vec<Measurement> = Vec::new();
        let mut emit = |m: &Measurement| {
            self.progress.done(Done::Measured(m));
            done.push(m.clone());
            // Written after every ETIP, so a later failure loses nothing.
            if let Err(e) = paths::write_outputs(&self.cfg.out, &done) {
                halt.set(format!("{e:#}"));
            }
        };
        let ran = self.cfg.backend().open(self.progress)?.run(
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
        Ok(measurements)
    }
}
