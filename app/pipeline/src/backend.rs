//! The backends that run a command's work units, chosen once per command.
//!
//! [`Threads`] (`etip_core::unit::Threads`) runs units on worker threads of this process: the
//! coordinator (the calling thread) consults and writes the ledger, hands units to `workers`
//! threads and reports every event, so the ledger (a SQLite store) is only ever used from one
//! thread. `build`, `select`, `measure`, `eval` and `eval-test` all run their units through the
//! backend of [`BackendChoice::open`] (see `crate::units`).
//!
//! [`etip_swarm::Swarm`] (`--backend swarm`, [`crate::swarm`]) implements the same
//! [`Backend`] trait: it ships each [`WorkUnit`](etip_core::unit::WorkUnit) as JSON to a node,
//! whose `etip unit run` ([`crate::unit_run`]) runs it with the stage's own runner, and records
//! the reply in the same ledger. A unit's `params` carry everything the node needs; the stage
//! code is the same on either backend.

use crate::progress::Progress;
use etip_core::unit::Backend;
pub use etip_core::unit::Threads;
use serde::{Deserialize, Serialize};

/// Which backend a command asks for (`--backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// Worker threads of this process (`--workers`).
    #[default]
    Local,
    /// Jobs on the Docker Swarm of the configuration's `[swarm]` section.
    Swarm,
}

impl BackendKind {
    /// The backend for a stage writing to `out`: `workers` threads, or the swarm of the
    /// `[swarm]` section of `config`.
    pub fn choice(
        self,
        stage: &str,
        out: &std::path::Path,
        workers: usize,
        config: Option<&std::path::Path>,
        namespace: &str,
    ) -> anyhow::Result<BackendChoice> {
        Ok(match self {
            BackendKind::Local => BackendChoice::Threads { workers },
            BackendKind::Swarm => {
                let settings = crate::swarm::load(config)?;
                crate::swarm::check(&settings)?;
                let folder = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
                BackendChoice::Swarm(Box::new(crate::swarm::SwarmPlan {
                    settings,
                    build_config: config.map(std::path::Path::to_path_buf),
                    namespace: namespace.to_string(),
                    ledger: format!("{stage}:{}", folder.display()),
                }))
            }
        })
    }
}

/// Which backend runs the units of a command.
#[derive(Debug, Clone, PartialEq)]
pub enum BackendChoice {
    /// Worker threads of this process.
    Threads { workers: usize },
    /// Jobs on a Docker Swarm.
    Swarm(Box<crate::swarm::SwarmPlan>),
}

impl BackendChoice {
    /// The backend itself: a swarm is connected (and its runner image published) here.
    pub fn open(&self, progress: &dyn Progress) -> anyhow::Result<Box<dyn Backend>> {
        Ok(match self {
            BackendChoice::Threads { workers } => Box::new(Threads::new(*workers)),
            BackendChoice::Swarm(plan) => Box::new(crate::swarm::connect(plan, progress)?),
        })
    }

    /// Whether units leave this machine (their params must carry everything).
    pub fn remote(&self) -> bool {
        matches!(self, BackendChoice::Swarm(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etip_core::cancel::CancelToken;
    use etip_core::unit::{
        RunSummary, Stage, UnitError, UnitEvent, UnitOutput, UnitRunner, UnitState, WorkUnit,
    };
    use etip_store::Store;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Squares the unit's number, fails on 13, and counts runs and the largest concurrency.
    #[derive(Default)]
    struct Square {
        runs: AtomicUsize,
        now: AtomicUsize,
        most: AtomicUsize,
        seen: Mutex<Vec<String>>,
    }

    impl UnitRunner for Square {
        fn run(&self, unit: &WorkUnit, _cancel: &CancelToken) -> Result<UnitOutput, UnitError> {
            let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            self.runs.fetch_add(1, Ordering::SeqCst);
            self.seen.lock().unwrap().push(unit.instance.clone());
            std::thread::sleep(Duration::from_millis(20));
            self.now.fetch_sub(1, Ordering::SeqCst);
            let n = unit.spec["n"].as_u64().unwrap_or(0);
            if n == 13 {
                return Err(UnitError::infrastructure("the engine went away"));
            }
            UnitOutput::of(&serde_json::json!({ "square": n * n }))
        }
    }

    fn units(ns: &[u64], key: &str) -> Vec<WorkUnit> {
        ns.iter()
            .map(|&n| {
                WorkUnit::new(
                    Stage::Measure,
                    format!("etip-{n}"),
                    serde_json::json!({ "n": n }),
                    serde_json::json!({}),
                    key,
                )
            })
            .collect()
    }

    fn run(
        backend: &Threads,
        units: &[WorkUnit],
        runner: &Square,
        store: &mut Store,
        cancel: &CancelToken,
    ) -> (RunSummary, Vec<String>) {
        let mut log = Vec::new();
        let summary = backend
            .run(units, runner, store, cancel, &mut |e| {
                log.push(match e {
                    UnitEvent::Reused(u, _) => format!("reused {}", u.instance),
                    UnitEvent::Started(u) => format!("started {}", u.instance),
                    UnitEvent::Finished(u, o) => format!("finished {} {}", u.instance, o.record),
                    UnitEvent::Failed(u, e) => format!("failed {} {e}", u.instance),
                })
            })
            .unwrap();
        (summary, log)
    }

    #[test]
    fn every_unit_runs_once_within_the_worker_limit_and_a_rerun_reuses_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let all = units(&[1, 2, 3, 4, 5, 6, 7], "k");
        let runner = Square::default();
        let backend = Threads::new(3);
        let (summary, log) = run(&backend, &all, &runner, &mut store, &CancelToken::new());
        assert_eq!(
            summary,
            RunSummary {
                ran: 7,
                reused: 0,
                failed: 0,
                not_started: 0
            }
        );
        assert_eq!(runner.runs.load(Ordering::SeqCst), 7);
        assert!(runner.most.load(Ordering::SeqCst) <= 3);
        assert!(log.contains(&"finished etip-6 {\"square\":36}".to_string()));
        let done = store.work_units(Stage::Measure).unwrap();
        assert!(done.iter().all(|r| r.state == UnitState::Done));

        // Same units, same key: nothing runs again.
        let again = Square::default();
        let (summary, log) = run(&backend, &all, &again, &mut store, &CancelToken::new());
        assert_eq!((summary.reused, summary.ran), (7, 0));
        assert_eq!(again.runs.load(Ordering::SeqCst), 0);
        assert_eq!(log.len(), 7);
        // A changed key (new parameters) runs them again.
        let changed = Square::default();
        let (summary, _) = run(
            &backend,
            &units(&[1, 2], "k2"),
            &changed,
            &mut store,
            &CancelToken::new(),
        );
        assert_eq!((summary.reused, summary.ran), (0, 2));
    }

    #[test]
    fn a_failed_or_interrupted_unit_runs_again_and_its_attempts_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let all = units(&[2, 13], "k");
        // A run killed while etip-2 was running left it `running`.
        store.start_work_unit(&all[0]).unwrap();
        let runner = Square::default();
        let (summary, log) = run(
            &Threads::new(2),
            &all,
            &runner,
            &mut store,
            &CancelToken::new(),
        );
        assert_eq!((summary.ran, summary.failed), (1, 1));
        assert!(log.contains(&"failed etip-13 the engine went away".to_string()));
        let two = store.work_unit("measure:etip-2").unwrap().unwrap();
        assert_eq!((two.state, two.attempts), (UnitState::Done, 2));
        let thirteen = store.work_unit("measure:etip-13").unwrap().unwrap();
        assert_eq!(thirteen.state, UnitState::Failed);
        assert_eq!(thirteen.detail.as_deref(), Some("the engine went away"));
        // The failed unit runs again; the done one does not.
        let again = Square::default();
        let (summary, _) = run(
            &Threads::new(2),
            &all,
            &again,
            &mut store,
            &CancelToken::new(),
        );
        assert_eq!((summary.reused, summary.failed), (1, 1));
        assert_eq!(*again.seen.lock().unwrap(), ["etip-13"]);
    }

    #[test]
    fn a_cancelled_run_starts_nothing_more_and_leaves_the_rest_pending() {
        /// Cancels the run from inside the first unit it runs.
        struct CancelFirst;
        impl UnitRunner for CancelFirst {
            fn run(&self, _u: &WorkUnit, cancel: &CancelToken) -> Result<UnitOutput, UnitError> {
                cancel.cancel();
                Err(UnitError::Cancelled)
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let all = units(&[1, 2, 3, 4, 5], "k");
        let cancel = CancelToken::new();
        let summary = Threads::new(1)
            .run(&all, &CancelFirst, &mut store, &cancel, &mut |_| {})
            .unwrap();
        assert_eq!(
            summary,
            RunSummary {
                ran: 0,
                reused: 0,
                failed: 1,
                not_started: 4
            }
        );
        assert_eq!(store.work_units(Stage::Measure).unwrap().len(), 1);
        // The next run (not cancelled) does all five.
        let runner = Square::default();
        let (summary, _) = run(
            &Threads::new(2),
            &all,
            &runner,
            &mut store,
            &CancelToken::new(),
        );
        assert_eq!(summary.ran, 5);
    }

    #[test]
    fn no_units_is_no_work() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let (summary, log) = run(
            &Threads::new(4),
            &[],
            &Square::default(),
            &mut store,
            &CancelToken::new(),
        );
        assert_eq!(summary, RunSummary::default());
        assert!(log.is_empty());
    }
}
