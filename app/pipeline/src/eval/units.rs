//! `eval`'s and `eval-test`'s work units: one per prediction (or generated test), run on the
//! command's backend (`--workers` threads) with the output folder's state store as the ledger.
//!
//! - id `eval:<instance>` (`eval_test:` for generated tests), the instance being the JSON array
//!   `[run id, submission, ETIP]`: every run id of a folder keeps its own units;
//! - spec the ETIP's status, the prediction and, when the result is known before anything runs,
//!   its detail; key [`super::jobs::key`] (patch, image, protocol, verdict parameters, ...);
//! - output the [`TaskResult`]. A result of the patch (it does not apply, fails its tests, is
//!   slower) is a finished unit; a harness error ([`Category::Error`]) an infrastructure failure
//!   that keeps its result: written to `results.jsonl` now, evaluated again by the next run.
//!
//! The store's `eval_results` table (per run id, submission and instance) stays the run's record
//! of results, for the results of earlier calls that `results.jsonl` keeps: [`EvalLedger`] writes
//! it with the ledger. A store written before work units has `eval_results` only: a stored result
//! under the same key that is not a harness error is folded into the ledger on first use.

use super::jobs::Job;
use super::worker;
use crate::disk::DiskGuard;
use crate::units::Halt;
use etip_core::cancel::CancelToken;
use etip_core::category::Category;
use etip_core::instance::InstanceStatus;
use etip_core::unit::{
    Ledger, LedgerError, Stage, UnitError, UnitEvent, UnitOutput, UnitRecord, UnitRunner, WorkUnit,
    position,
};
use etip_eval::evaluate::EvalConfig;
use etip_eval::predictions::Prediction;
use etip_records::results::TaskResult;
use etip_store::Store;
use std::collections::BTreeMap;

/// What a unit carries: the prediction on its instance.
#[derive(serde::Serialize, serde::Deserialize)]
struct Spec {
    status: InstanceStatus,
    prediction: Prediction,
    decided: Option<String>,
}

/// What a unit's runner needs besides its spec: everything a cluster node's `etip unit run`
/// evaluates it with. The CPU set is the node's own: `cpus` is the user's `--cpus`, applied to
/// the node's cores there.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Params {
    pub run_id: String,
    pub eval: EvalConfig,
    pub cpus: Option<String>,
    /// Namespace label of the containers.
    pub namespace: String,
    /// Free space (bytes) the node's engine data root must keep.
    pub min_free: u64,
}

/// One unit per job, in the order of the jobs.
pub(super) fn units(
    stage: Stage,
    jobs: &[Job],
    statuses: &[InstanceStatus],
    params: &Params,
) -> anyhow::Result<Vec<WorkUnit>> {
    let mut units = Vec::new();
    let params_json = serde_json::to_value(params)?;
    for job in jobs {
        let status = &statuses[job.status];
        let instance = serde_json::to_string(&[&params.run_id, &job.prediction.model, &status.id])?;
        let spec = Spec {
            status: status.clone(),
            prediction: job.prediction.clone(),
            decided: job.decided.clone(),
        };
        units.push(
            WorkUnit::new(
                stage,
                instance,
                serde_json::to_value(&spec)?,
                params_json.clone(),
                super::jobs::key(status, &job.prediction, &params.eval),
            )
            .with_images(status.image.clone()),
        );
    }
    Ok(units)
}

/// What an event of the backend says of a unit's result: the unit's position in `units`, its
/// result, and whether the result is new (not reused). A unit the backend gave up on without a
/// record (a swarm: every attempt lost, past its time limit, or without a believable reply) gets
/// a harness error of its own, made from its spec, so that it is neither lost nor scored. A
/// cancelled unit, a start, and a unit refused because the run is `halted` (the disk is short:
/// the run fails saying so, and nothing was evaluated) say nothing.
pub(super) fn event_result(
    event: &UnitEvent<'_>,
    units: &[WorkUnit],
    halted: bool,
) -> Option<(usize, TaskResult, bool)> {
    let (unit, result, new) = match *event {
        UnitEvent::Reused(u, o) => (u, o.read::<TaskResult>().ok()?, false),
        UnitEvent::Finished(u, o) => (u, o.read().ok()?, true),
        UnitEvent::Started(_) | UnitEvent::Failed(_, UnitError::Cancelled) => return None,
        UnitEvent::Failed(u, e) => match e.record() {
            Some(o) => (u, o.read().ok()?, true),
            None if halted => return None,
            None => (u, lost(u, e)?, true),
        },
    };
    Some((position(units, unit)?, result, new))
}

/// The harness error of a unit that ended without a record.
fn lost(unit: &WorkUnit, error: &UnitError) -> Option<TaskResult> {
    let spec: Spec = serde_json::from_value(unit.spec.clone()).ok()?;
    // The run id of `Params::eval` (a replay's units differ in it).
    let run_id = unit.params["eval"]["run_id"].as_str().map(str::to_string);
    Some(worker::harness_error(
        &spec.prediction,
        &spec.status,
        run_id,
        &error.to_string(),
    ))
}

/// Whether a stored result may be reused: not a harness error.
fn final_result(r: &TaskResult) -> bool {
    r.category.as_deref() != Some(Category::Error.name())
}

/// Prepares the ledger for `units`: with `force` their records are forgotten; otherwise a result
/// of `stored` (the run's `eval_results`, by submission and instance) under the unit's key that
/// is not a harness error is folded into the ledger when the ledger has none. Returns how many
/// units the ledger will reuse.
pub(super) fn prepare(
    store: &mut Store,
    units: &[WorkUnit],
    stored: &BTreeMap<(String, String), (String, String)>,
    force: bool,
) -> anyhow::Result<usize> {
    let mut reusable = 0;
    for unit in units {
        if force {
            store.forget_work_unit(&unit.id())?;
            continue;
        }
        let record = store.work_unit(&unit.id())?;
        if record.as_ref().and_then(|r| r.reusable_for(unit)).is_some() {
            reusable += 1;
            continue;
        }
        let spec: Spec = serde_json::from_value(unit.spec.clone())?;
        let old = stored
            .get(&(spec.prediction.model.clone(), spec.status.id.clone()))
            .filter(|(k, _)| *k == unit.key)
            .and_then(|(_, payload)| serde_json::from_str::<TaskResult>(payload).ok())
            .filter(final_result);
        if let Some(r) = old {
            store.finish_work_unit(unit, &UnitOutput::of(&r)?)?;
            reusable += 1;
        }
    }
    Ok(reusable)
}

/// The store as the ledger of an evaluation run: the work units, and each result (a harness
/// error's too) in the run's `eval_results`.
pub(super) struct EvalLedger<'a> {
    pub store: &'a mut Store,
    pub run_id: &'a str,
}

fn ledger_err(e: impl std::error::Error + Send + Sync + 'static) -> LedgerError {
    LedgerError(Box::new(e))
}

impl EvalLedger<'_> {
    fn record(&mut self, unit: &WorkUnit, output: &UnitOutput) -> Result<(), LedgerError> {
        let r: TaskResult = output.read().map_err(ledger_err)?;
        self.store
            .record_eval(
                self.run_id,
                r.model.as_deref().unwrap_or(""),
                &r.instance_id,
                &unit.key,
                &output.record.to_string(),
            )
            .map_err(ledger_err)
    }
}

impl Ledger for EvalLedger<'_> {
    fn unit(&mut self, id: &str) -> Result<Option<UnitRecord>, LedgerError> {
        self.store.work_unit(id).map_err(ledger_err)
    }

    fn start(&mut self, unit: &WorkUnit) -> Result<UnitRecord, LedgerError> {
        self.store.start_work_unit(unit).map_err(ledger_err)
    }

    fn finish(&mut self, unit: &WorkUnit, output: &UnitOutput) -> Result<(), LedgerError> {
        self.record(unit, output)?;
        self.store
            .finish_work_unit(unit, output)
            .map_err(ledger_err)
    }

    fn fail(&mut self, unit: &WorkUnit, error: &UnitError) -> Result<(), LedgerError> {
        if let Some(output) = error.record() {
            self.record(unit, output)?;
        }
        self.store
            .fail_work_unit(unit, &error.to_string())
            .map_err(ledger_err)
    }
}

/// Runs one evaluation unit on a worker.
pub(super) struct Runner<'a> {
    pub cx: worker::Context<'a>,
    pub disk: &'a DiskGuard,
    /// Set when the disk is short: every later evaluation would fail the same way.
    pub halt: &'a Halt,
}

impl UnitRunner for Runner<'_> {
    fn run(&self, unit: &WorkUnit, cancel: &CancelToken) -> Result<UnitOutput, UnitError> {
        if let Some(why) = self.halt.reason() {
            return Err(UnitError::infrastructure(format!("not evaluated: {why}")));
        }
        if let Err(why) = self.disk.check() {
            self.halt.set(why.to_string());
            return Err(UnitError::infrastructure(why));
        }
        let spec: Spec = serde_json::from_value(unit.spec.clone()).map_err(UnitError::Record)?;
        // The unit's own parameters (a replay's units differ in run id and CPU set).
        let params: Params =
            serde_json::from_value(unit.params.clone()).map_err(UnitError::Record)?;
        let cx = worker::Context {
            cfg: &params.eval,
            ..self.cx
        };
        let r = worker::run_job(&spec.prediction, spec.decided.as_deref(), &spec.status, &cx);
        if cancel.is_cancelled() {
            // Stopped by a signal: this result says nothing about the patch.
            return Err(UnitError::Cancelled);
        }
        let mut r = r;
        r.node = Some(crate::units::this_node(&self.cx.executor.info()));
        let output = UnitOutput::of(&r)?;
        if final_result(&r) {
            Ok(output)
        } else {
            let why = r.detail.as_deref().unwrap_or("harness error");
            Err(UnitError::infrastructure_with(why, output))
        }
    }
}

/// Runs an evaluation unit on this cluster node: the node's engine, CPU set and scratch folder,
/// the unit's parameters. Labels against the ground truth need the repository, which stays
/// with the coordinator: they are left to it.
pub(crate) fn run_on_node(
    unit: &WorkUnit,
    progress: &dyn crate::progress::Progress,
) -> Result<UnitOutput, UnitError> {
    let params: Params = serde_json::from_value(unit.params.clone()).map_err(UnitError::Record)?;
    let spec: Spec = serde_json::from_value(unit.spec.clone()).map_err(UnitError::Record)?;
    let infra = |what: &str, e: anyhow::Error| UnitError::infrastructure(format!("{what}: {e:#}"));
    let crate::units::OnNode { ex, scratch } = crate::units::on_node(
        &params.namespace,
        &spec.status,
        crate::executor::Workload::Candidates,
        progress,
    )?;
    let (cpuset, notes) =
        crate::units::node_pinning(params.cpus.as_deref(), ex.executor.info().can_pin)
            .map_err(|e| infra("pinning on this node", e))?;
    let mut eval = params.eval;
    eval.measure.cpusets = cpuset.map(|c| [c.clone(), c]);
    eval.measure.notes = notes;
    // The node's data root is not in the runner's container: its engine reports a full disk.
    let disk = DiskGuard {
        paths: vec![(
            "the runner's scratch folder".into(),
            scratch.path().to_path_buf(),
        )],
        min: params.min_free,
    };
    let halt = Halt::default();
    let runner = Runner {
        cx: worker::Context {
            executor: ex.executor.as_ref(),
            cfg: &eval,
            logs: &scratch.path().join("logs"),
            cache: &scratch.path().join("repos"),
            labels: false,
            progress,
        },
        disk: &disk,
        halt: &halt,
    };
    runner.run(unit, etip_core::cancel::process())
}

#[cfg(test)]
mod tests {
    use super::*;
    use etip_core::unit::UnitState;

    const STATUS: &str = r#"{"id":"x","language":"python","outcome":"failed","base_commit":"a","patched_commit":"b","original_dir":"/work/original","patched_dir":"/work/patched","build_secs":1.0}"#;

    fn unit(model: &str, key: &str) -> WorkUnit {
        let status: InstanceStatus = serde_json::from_str(STATUS).unwrap();
        let spec = Spec {
            status,
            prediction: Prediction::empty("x"),
            decided: None,
        };
        let mut spec = serde_json::to_value(&spec).unwrap();
        spec["prediction"]["model"] = model.into();
        let instance = serde_json::to_string(&["run", model, "x"]).unwrap();
        WorkUnit::new(Stage::Eval, instance, spec, serde_json::json!({}), key)
    }

    fn result(model: &str, category: &str) -> TaskResult {
        TaskResult {
            instance_id: "x".into(),
            model: Some(model.into()),
            category: Some(category.into()),
            ..TaskResult::default()
        }
    }

    /// The `eval_results` rows of the run, by submission and instance, as `run` reads them.
    fn stored(store: &Store) -> BTreeMap<(String, String), (String, String)> {
        store
            .eval_results("run")
            .unwrap()
            .into_iter()
            .map(|e| ((e.model, e.instance), (e.key, e.payload)))
            .collect()
    }

    #[test]
    fn a_unit_given_up_without_a_record_is_a_harness_error_and_a_cancelled_one_nothing() {
        let mut lost = unit("m", "k");
        lost.params = serde_json::json!({ "eval": { "run_id": "default/small/1" } });
        let units = [unit("done", "k"), lost];
        let error = UnitError::infrastructure("past its time limit of 8s on node n1");
        let (i, r, new) =
            event_result(&UnitEvent::Failed(&units[1], &error), &units, false).unwrap();
        assert_eq!((i, new), (1, true));
        assert_eq!(r.category.as_deref(), Some("error"));
        assert_eq!(r.model.as_deref(), Some("m"));
        assert_eq!(r.run_id.as_deref(), Some("default/small/1"));
        assert_eq!(
            r.detail.as_deref(),
            Some("past its time limit of 8s on node n1")
        );
        // Refused by a halted run (a short disk): the run fails saying why; no result.
        assert!(event_result(&UnitEvent::Failed(&units[1], &error), &units, true).is_none());
        let cancelled = UnitEvent::Failed(&units[1], &UnitError::Cancelled);
        assert!(event_result(&cancelled, &units, false).is_none());
        assert!(event_result(&UnitEvent::Started(&units[0]), &units, false).is_none());
        let output = UnitOutput::of(&result("done", "correct_faster")).unwrap();
        let (i, r, new) =
            event_result(&UnitEvent::Reused(&units[0], &output), &units, false).unwrap();
        assert_eq!((i, new), (0, false));
        assert_eq!(r.category.as_deref(), Some("correct_faster"));
    }

    #[test]
    fn a_store_from_before_work_units_is_folded_in_and_harness_errors_run_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        // What the previous etip left: eval_results only.
        for (model, category) in [("done", "correct_faster"), ("broken", "error")] {
            let json = serde_json::to_string(&result(model, category)).unwrap();
            store.record_eval("run", model, "x", "k", &json).unwrap();
        }
        let units = [unit("done", "k"), unit("broken", "k"), unit("new", "k")];
        let old = stored(&store);
        assert_eq!(prepare(&mut store, &units, &old, false).unwrap(), 1);
        let done = store.work_unit(&units[0].id()).unwrap().unwrap();
        assert_eq!(done.state, UnitState::Done);
        let kept: TaskResult = done.output.unwrap().read().unwrap();
        assert_eq!(kept.category.as_deref(), Some("correct_faster"));
        assert!(store.work_unit(&units[1].id()).unwrap().is_none());
        // A second call finds the folded unit in the ledger; another key is not reused.
        assert_eq!(prepare(&mut store, &units, &old, false).unwrap(), 1);
        let changed = [unit("done", "k2")];
        assert_eq!(prepare(&mut store, &changed, &old, false).unwrap(), 0);
        // --force forgets it.
        assert_eq!(prepare(&mut store, &units, &old, true).unwrap(), 0);
        assert!(store.work_unit(&units[0].id()).unwrap().is_none());
    }

    #[test]
    fn the_ledger_keeps_eval_results_with_a_harness_errors_result() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let (ok, broken) = (unit("m", "k"), unit("b", "k"));
        let mut ledger = EvalLedger {
            store: &mut store,
            run_id: "run",
        };
        ledger.start(&ok).unwrap();
        let output = UnitOutput::of(&result("m", "correct_faster")).unwrap();
        ledger.finish(&ok, &output).unwrap();
        ledger.start(&broken).unwrap();
        let record = UnitOutput::of(&result("b", "error")).unwrap();
        let error = UnitError::infrastructure_with("the engine went away", record);
        ledger.fail(&broken, &error).unwrap();
        let rows = stored(&store);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[&("b".to_string(), "x".to_string())].0, "k");
        let b = store.work_unit(&broken.id()).unwrap().unwrap();
        assert_eq!(b.state, UnitState::Failed);
        // The failed one is not folded back in: it runs again.
        let units = [ok, broken];
        assert_eq!(prepare(&mut store, &units, &rows, false).unwrap(), 1);
    }
}
