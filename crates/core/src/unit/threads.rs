//! The [`Threads`] backend: a command's units on worker threads of this process.
//!
//! The coordinator (the calling thread) consults and writes the ledger, hands units to `workers`
//! threads and reports every event, so the ledger (a SQLite store, a map) is only ever used from
//! one thread. A unit is started in the ledger only when a worker is free to take it, so a
//! cancellation leaves the rest pending.

use super::{
    Backend, BackendError, Ledger, RunSummary, UnitError, UnitEvent, UnitOutput, UnitRunner,
    WorkUnit,
};
use crate::cancel::CancelToken;
use std::sync::{Mutex, mpsc};

/// Runs units on `workers` threads of this process.
#[derive(Debug, Clone, Copy)]
pub struct Threads {
    workers: usize,
}

impl Threads {
    /// At least one worker.
    pub fn new(workers: usize) -> Threads {
        Threads {
            workers: workers.max(1),
        }
    }
}

/// What a worker sends back: the unit's index and its result.
type Done = (usize, Result<UnitOutput, UnitError>);

fn ended(detail: &str) -> BackendError {
    BackendError::Backend {
        backend: "threads",
        detail: detail.into(),
    }
}

impl Backend for Threads {
    fn name(&self) -> &'static str {
        "threads"
    }

    fn run(
        &self,
        units: &[WorkUnit],
        runner: &dyn UnitRunner,
        ledger: &mut dyn Ledger,
        cancel: &CancelToken,
        events: &mut dyn FnMut(UnitEvent<'_>),
    ) -> Result<RunSummary, BackendError> {
        let mut summary = RunSummary::default();
        // Reuse first: what the ledger holds under the same key never reaches a worker.
        let mut todo = Vec::new();
        for (i, unit) in units.iter().enumerate() {
            match ledger.unit(&unit.id())? {
                Some(record) => match record.reusable_for(unit) {
                    Some(output) => {
                        events(UnitEvent::Reused(unit, output));
                        summary.reused += 1;
                    }
                    None => todo.push(i),
                },
                None => todo.push(i),
            }
        }
        let workers = self.workers.min(todo.len()).max(1);
        let (work_tx, work_rx) = mpsc::channel::<usize>();
        let work_rx = Mutex::new(work_rx);
        std::thread::scope(|scope| -> Result<(), BackendError> {
            // The work channel's sender belongs to this closure: whichever way it returns, the
            // channel closes and the workers end, so the scope never waits on an idle worker.
            let work_tx = work_tx;
            let (done_tx, done_rx) = mpsc::channel::<Done>();
            for _ in 0..workers {
                let work_rx = &work_rx;
                let done_tx = done_tx.clone();
                scope.spawn(move || {
                    loop {
                        let next = match work_rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => break,
                        };
                        let Ok(i) = next else { break };
                        let result = if cancel.is_cancelled() {
                            Err(UnitError::Cancelled)
                        } else {
                            runner.run(&units[i], cancel)
                        };
                        if done_tx.send((i, result)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(done_tx);
            let mut queued = todo.into_iter();
            let mut in_flight = 0;
            loop {
                while in_flight < workers && !cancel.is_cancelled() {
                    let Some(i) = queued.next() else { break };
                    ledger.start(&units[i])?;
                    events(UnitEvent::Started(&units[i]));
                    if work_tx.send(i).is_err() {
                        return Err(ended("every worker thread ended early"));
                    }
                    in_flight += 1;
                }
                if in_flight == 0 {
                    break;
                }
                let Ok((i, result)) = done_rx.recv() else {
                    return Err(ended("a worker thread ended without reporting its unit"));
                };
                in_flight -= 1;
                let unit = &units[i];
                match result {
                    Ok(output) => {
                        ledger.finish(unit, &output)?;
                        summary.ran += 1;
                        events(UnitEvent::Finished(unit, &output));
                    }
                    Err(error) => {
                        ledger.fail(unit, &error)?;
                        summary.failed += 1;
                        events(UnitEvent::Failed(unit, &error));
                    }
                }
            }
            summary.not_started = queued.count();
            Ok(())
        })?;
        Ok(summary)
    }
}
