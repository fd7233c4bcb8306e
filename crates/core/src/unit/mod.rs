//! Work units: the pipeline's work as serializable pieces, and the traits that run and record them.
//!
//! A [`WorkUnit`] is one stage applied to one instance (build an ETIP, select its covering tests,
//! measure it, evaluate one submission on it): everything a worker needs to run it, in JSON, plus
//! the content key of what its result depends on. A [`Backend`] runs a command's units — on threads
//! of this process today, as jobs of a cluster engine later — through a [`UnitRunner`] that knows
//! the stage, and records each unit in a [`Ledger`]:
//!
//! - a unit whose ledger record is `done` under the same key is never run again: its stored output
//!   is reused;
//! - a unit left `running` (its process was killed) or `failed` (an infrastructure failure: the
//!   engine went away, a time limit of the harness) is run again, its attempts counted;
//! - a unit not started when the run is cancelled stays `pending`.
//!
//! What a stage finds out about an instance (the build failed, the ETIP is not executable, the
//! patch does not apply) is the unit's *output*, not a failure: the unit is done. [`UnitError`] is
//! for what says nothing about the instance; an infrastructure failure may still carry the stage's
//! record of the attempt (an evaluation that ended in a harness error), which the stage shows in
//! this run's outputs and the ledger never reuses.
//!
//! [`Threads`] runs units on worker threads of this process; [`MemoryLedger`] is a ledger kept
//! in memory for the stages whose lasting record is elsewhere (`build`'s content-keyed images,
//! `select`'s `selection.jsonl`) and for library callers without a store.
//!
//! ```
//! use etip_core::unit::{Stage, WorkUnit};
//! let unit = WorkUnit::new(Stage::Measure, "etip-7", serde_json::json!({"image": "etip/x:1"}),
//!     serde_json::json!({"rounds": 10}), "k1");
//! assert_eq!(unit.id(), "measure:etip-7");
//! let back: WorkUnit = serde_json::from_str(&serde_json::to_string(&unit).unwrap()).unwrap();
//! assert_eq!(back, unit);
//! ```

mod memory;
mod threads;
pub mod wire;

pub use memory::MemoryLedger;
pub use threads::Threads;

use crate::cancel::CancelToken;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The stage a unit belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// `etip build`: one ETIP's image with both versions built.
    Build,
    /// `etip select`: the tests covering one ETIP's change.
    Select,
    /// `etip measure`: one ETIP timed in alternated rounds.
    Measure,
    /// `etip eval`: one submission's patch on one ETIP.
    Eval,
    /// `etip eval-test`: one generated test on one ETIP.
    EvalTest,
}

impl Stage {
    /// The stage's name as the commands spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Build => "build",
            Stage::Select => "select",
            Stage::Measure => "measure",
            Stage::Eval => "eval",
            Stage::EvalTest => "eval_test",
        }
    }
}

/// One stage applied to one instance, self-contained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkUnit {
    pub stage: Stage,
    /// The instance: an ETIP id, or `submission/ETIP` for an evaluation.
    pub instance: String,
    /// What the stage needs to know of the instance (its spec, image, patch).
    pub spec: serde_json::Value,
    /// The stage's parameters for this run.
    pub params: serde_json::Value,
    /// Content key of everything the output depends on (inputs, image, parameters, etip's rules):
    /// equal keys give interchangeable outputs.
    pub key: String,
    /// The images the unit runs, as `spec` names them: a cluster backend makes each reachable
    /// from its nodes ([`Backend::prepare`]) and the node's runner pulls a missing one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// Where the unit must run, as placement constraints (`node.labels.etip.profile==small`):
    /// a cluster backend places it on a node that meets them; on one machine the stage itself
    /// stands in (a CPU set per profile).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<String>,
}

impl WorkUnit {
    pub fn new(
        stage: Stage,
        instance: impl Into<String>,
        spec: serde_json::Value,
        params: serde_json::Value,
        key: impl Into<String>,
    ) -> WorkUnit {
        WorkUnit {
            stage,
            instance: instance.into(),
            spec,
            params,
            key: key.into(),
            images: Vec::new(),
            placement: Vec::new(),
        }
    }

    /// The unit with the images it runs.
    pub fn with_images(mut self, images: impl IntoIterator<Item = String>) -> WorkUnit {
        self.images = images.into_iter().collect();
        self
    }

    /// The unit with where it must run.
    pub fn with_placement(mut self, constraints: impl IntoIterator<Item = String>) -> WorkUnit {
        self.placement = constraints.into_iter().collect();
        self
    }

    /// The unit's identity in a ledger: `stage:instance`. A unit with the same id and another key
    /// replaces the older one.
    pub fn id(&self) -> String {
        format!("{}:{}", self.stage.as_str(), self.instance)
    }
}

/// What a unit produced: the stage's record for the instance, as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitOutput {
    pub record: serde_json::Value,
}

impl UnitOutput {
    /// Wraps a stage's record.
    pub fn of<T: Serialize>(record: &T) -> Result<UnitOutput, UnitError> {
        Ok(UnitOutput {
            record: serde_json::to_value(record).map_err(UnitError::Record)?,
        })
    }

    /// The stage's record, typed again.
    pub fn read<T: serde::de::DeserializeOwned>(&self) -> Result<T, UnitError> {
        T::deserialize(&self.record).map_err(UnitError::Record)
    }

    /// Records `node` as where the unit ran (the record's `node` field, when the record is a
    /// JSON object, as every stage's is).
    pub fn set_node(&mut self, node: &crate::node::Node) {
        if let (Some(obj), Ok(v)) = (self.record.as_object_mut(), serde_json::to_value(node)) {
            obj.insert("node".into(), v);
        }
    }

    /// SHA-256 of the record's JSON text (hex): two outputs with the same digest are the same.
    pub fn digest(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.record.to_string().as_bytes());
        hex::encode(h.finalize())
    }
}

/// Why a unit has no output. None of these says anything about the instance.
#[derive(Debug, thiserror::Error)]
pub enum UnitError {
    /// The run was cancelled before or while the unit ran.
    #[error("cancelled")]
    Cancelled,
    /// The harness could not run the unit (engine, disk, time limit of the harness). `record` is
    /// the stage's record of the failed attempt, when it has one: shown in this run's outputs,
    /// never reused (the unit runs again next time).
    #[error("{detail}")]
    Infrastructure {
        detail: String,
        record: Option<UnitOutput>,
    },
    /// The stage's record could not be turned into JSON or back.
    #[error("unit record: {0}")]
    Record(#[source] serde_json::Error),
}

impl UnitError {
    /// An infrastructure failure described by `err` and its causes.
    pub fn infrastructure(err: impl std::fmt::Display) -> UnitError {
        UnitError::Infrastructure {
            detail: err.to_string(),
            record: None,
        }
    }

    /// An infrastructure failure whose attempt still left the stage's `record` (kept in this
    /// run's outputs, run again next time).
    pub fn infrastructure_with(err: impl std::fmt::Display, record: UnitOutput) -> UnitError {
        UnitError::Infrastructure {
            detail: err.to_string(),
            record: Some(record),
        }
    }

    /// The stage's record of the failed attempt, if it left one.
    pub fn record(&self) -> Option<&UnitOutput> {
        match self {
            UnitError::Infrastructure { record, .. } => record.as_ref(),
            _ => None,
        }
    }
}

/// The position in `units` of `unit`, an element of that slice (as every [`UnitEvent`] of
/// [`Backend::run`] names it): how a stage puts each unit's output back in input order.
pub fn position(units: &[WorkUnit], unit: &WorkUnit) -> Option<usize> {
    let size = std::mem::size_of::<WorkUnit>();
    let start = units.as_ptr() as usize;
    let at = unit as *const WorkUnit as usize;
    let offset = at.checked_sub(start)?;
    (offset % size == 0 && offset / size < units.len()).then_some(offset / size)
}

/// Where a unit stands in a ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitState {
    /// Known, not started.
    Pending,
    /// Started and not finished: running now, or its run was killed.
    Running,
    /// Finished with an output.
    Done,
    /// Ended without an output ([`UnitError`]); run again next time.
    Failed,
}

/// A ledger's record of one unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitRecord {
    /// [`WorkUnit::id`].
    pub id: String,
    pub stage: Stage,
    pub key: String,
    pub state: UnitState,
    /// How many times the unit was started under this key.
    pub attempts: u32,
    /// [`UnitOutput::digest`] of the output, when done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The output, when done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<UnitOutput>,
    /// Why the last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl UnitRecord {
    /// Whether this record holds a reusable output for `unit`: done under the same key.
    pub fn reusable_for(&self, unit: &WorkUnit) -> Option<&UnitOutput> {
        (self.state == UnitState::Done && self.key == unit.key)
            .then_some(self.output.as_ref())
            .flatten()
    }
}

/// A ledger's storage failed.
#[derive(Debug, thiserror::Error)]
#[error("work-unit ledger: {0}")]
pub struct LedgerError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

/// Where units are recorded: the store of the machine that coordinates the run. Used from one
/// thread (the coordinator's), so implementations need not be `Sync`.
pub trait Ledger {
    /// The record of unit `id`, if any.
    fn unit(&mut self, id: &str) -> Result<Option<UnitRecord>, LedgerError>;
    /// Marks `unit` running and counts an attempt (a new key starts the count again).
    fn start(&mut self, unit: &WorkUnit) -> Result<UnitRecord, LedgerError>;
    /// Records `unit` done with `output`.
    fn finish(&mut self, unit: &WorkUnit, output: &UnitOutput) -> Result<(), LedgerError>;
    /// Records that the last attempt of `unit` ended without an output.
    fn fail(&mut self, unit: &WorkUnit, error: &UnitError) -> Result<(), LedgerError>;
}

/// Runs one unit of a stage wherever the backend placed it.
pub trait UnitRunner: Sync {
    fn run(&self, unit: &WorkUnit, cancel: &CancelToken) -> Result<UnitOutput, UnitError>;
}

/// What happened to a unit, reported as it happens.
#[derive(Debug)]
pub enum UnitEvent<'a> {
    /// Not run: the ledger holds its output under the same key.
    Reused(&'a WorkUnit, &'a UnitOutput),
    Started(&'a WorkUnit),
    Finished(&'a WorkUnit, &'a UnitOutput),
    Failed(&'a WorkUnit, &'a UnitError),
}

/// The counts of one backend run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    pub ran: usize,
    pub reused: usize,
    pub failed: usize,
    /// Not started because the run was cancelled.
    pub not_started: usize,
}

/// A backend could not run the units at all.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The backend's own machinery failed (a worker thread panicked, the cluster refused a job).
    #[error("{backend} backend: {detail}")]
    Backend {
        backend: &'static str,
        detail: String,
    },
}

/// Runs a command's units: chosen once per command.
pub trait Backend: Sync {
    /// The backend's name in outputs (`threads`, `swarm`).
    fn name(&self) -> &'static str;
    /// Makes what the units need reachable where they will run, before [`Backend::run`]: a
    /// cluster backend pushes each of [`WorkUnit::images`] to its registry and names it in the
    /// unit's spec as the nodes pull it. The keys stay as they are. Nothing to do on one machine.
    fn prepare(&self, _units: &mut [WorkUnit]) -> Result<(), BackendError> {
        Ok(())
    }
    /// Runs `units` through `runner`, recording each in `ledger` and reporting each to `events`
    /// (on the calling thread; every event names an element of `units`, see [`position`]). Stops
    /// starting units once `cancel` is set.
    fn run(
        &self,
        units: &[WorkUnit],
        runner: &dyn UnitRunner,
        ledger: &mut dyn Ledger,
        cancel: &CancelToken,
        events: &mut dyn FnMut(UnitEvent<'_>),
    ) -> Result<RunSummary, BackendError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(key: &str) -> WorkUnit {
        WorkUnit::new(
            Stage::Eval,
            "model-a/etip-1",
            serde_json::json!({}),
            serde_json::json!({}),
            key,
        )
    }

    #[test]
    fn an_output_is_reused_only_when_done_under_the_same_key() {
        let output = UnitOutput::of(&serde_json::json!({"speedup": 2.0})).unwrap();
        let mut record = UnitRecord {
            id: unit("k").id(),
            stage: Stage::Eval,
            key: "k".into(),
            state: UnitState::Done,
            attempts: 1,
            digest: Some(output.digest()),
            output: Some(output.clone()),
            detail: None,
        };
        assert_eq!(record.reusable_for(&unit("k")), Some(&output));
        assert_eq!(record.reusable_for(&unit("other")), None);
        record.state = UnitState::Running;
        assert_eq!(record.reusable_for(&unit("k")), None);
    }

    #[test]
    fn a_unit_is_found_by_its_place_in_the_slice() {
        let units = vec![unit("a"), unit("a"), unit("b")];
        assert_eq!(position(&units, &units[1]), Some(1));
        assert_eq!(position(&units, &units[2]), Some(2));
        let elsewhere = unit("a");
        assert_eq!(position(&units, &elsewhere), None);
        assert_eq!(position(&units[..1], &units[2]), None);
    }

    #[test]
    fn an_infrastructure_failure_may_keep_its_record() {
        let record = UnitOutput::of(&serde_json::json!({"category": "error"})).unwrap();
        let e = UnitError::infrastructure_with("the engine went away", record.clone());
        assert_eq!(e.to_string(), "the engine went away");
        assert_eq!(e.record(), Some(&record));
        assert_eq!(UnitError::infrastructure("disk").record(), None);
        assert_eq!(UnitError::Cancelled.record(), None);
    }

    #[test]
    fn digests_tell_outputs_apart() {
        let a = UnitOutput::of(&serde_json::json!({"x": 1})).unwrap();
        let b = UnitOutput::of(&serde_json::json!({"x": 2})).unwrap();
        assert_eq!(a.digest(), a.clone().digest());
        assert_ne!(a.digest(), b.digest());
        assert_eq!(a.digest().len(), 64);
    }
}
