//! [`MemoryLedger`]: a ledger held in memory for one run.
//!
//! For the stages whose lasting record is not a store: `build` (its images are tagged by content
//! key, so a finished build run again is a tag lookup) and `select` (its `selection.jsonl` holds
//! each selection with its key, folded in with [`MemoryLedger::fold`]); and for library callers
//! that have no store. Nothing outlives the ledger.

use super::{Ledger, LedgerError, UnitError, UnitOutput, UnitRecord, UnitState, WorkUnit};
use std::collections::HashMap;

/// A ledger in memory (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct MemoryLedger {
    units: HashMap<String, UnitRecord>,
}

impl MemoryLedger {
    /// An empty ledger: every unit runs.
    pub fn new() -> MemoryLedger {
        MemoryLedger::default()
    }

    /// Records `unit` done with `output` from an earlier run's record (a stage's own file), so
    /// that the unit is reused under the same key.
    pub fn fold(&mut self, unit: &WorkUnit, output: UnitOutput) {
        self.units.insert(
            unit.id(),
            UnitRecord {
                id: unit.id(),
                stage: unit.stage,
                key: unit.key.clone(),
                state: UnitState::Done,
                attempts: 0,
                digest: Some(output.digest()),
                output: Some(output),
                detail: None,
            },
        );
    }

    fn end(
        &mut self,
        unit: &WorkUnit,
        state: UnitState,
        output: Option<&UnitOutput>,
        detail: Option<String>,
    ) {
        let attempts = self
            .units
            .get(&unit.id())
            .filter(|r| r.key == unit.key)
            .map_or(1, |r| r.attempts);
        self.units.insert(
            unit.id(),
            UnitRecord {
                id: unit.id(),
                stage: unit.stage,
                key: unit.key.clone(),
                state,
                attempts,
                digest: output.map(UnitOutput::digest),
                output: output.cloned(),
                detail,
            },
        );
    }
}

impl Ledger for MemoryLedger {
    fn unit(&mut self, id: &str) -> Result<Option<UnitRecord>, LedgerError> {
        Ok(self.units.get(id).cloned())
    }

    fn start(&mut self, unit: &WorkUnit) -> Result<UnitRecord, LedgerError> {
        let attempts = self
            .units
            .get(&unit.id())
            .filter(|r| r.key == unit.key)
            .map_or(0, |r| r.attempts)
            + 1;
        let record = UnitRecord {
            id: unit.id(),
            stage: unit.stage,
            key: unit.key.clone(),
            state: UnitState::Running,
            attempts,
            digest: None,
            output: None,
            detail: None,
        };
        self.units.insert(unit.id(), record.clone());
        Ok(record)
    }

    fn finish(&mut self, unit: &WorkUnit, output: &UnitOutput) -> Result<(), LedgerError> {
        self.end(unit, UnitState::Done, Some(output), None);
        Ok(())
    }

    fn fail(&mut self, unit: &WorkUnit, error: &UnitError) -> Result<(), LedgerError> {
        self.end(unit, UnitState::Failed, None, Some(error.to_string()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cancel::CancelToken;
    use crate::unit::{Backend, Stage, Threads, UnitEvent, UnitRunner};
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Count(AtomicUsize);

    impl UnitRunner for Count {
        fn run(&self, unit: &WorkUnit, _: &CancelToken) -> Result<UnitOutput, UnitError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            if unit.instance == "down" {
                return Err(UnitError::infrastructure("engine"));
            }
            UnitOutput::of(&unit.instance)
        }
    }

    fn unit(instance: &str, key: &str) -> WorkUnit {
        WorkUnit::new(
            Stage::Select,
            instance,
            serde_json::json!({}),
            serde_json::json!({}),
            key,
        )
    }

    #[test]
    fn folded_records_are_reused_and_the_rest_run_on_threads() {
        let mut ledger = MemoryLedger::new();
        let units = vec![
            unit("a", "k"),
            unit("b", "k"),
            unit("c", "k"),
            unit("down", "k"),
        ];
        ledger.fold(&units[0], UnitOutput::of(&"from the file").unwrap());
        // Folded under another key: not reused.
        ledger.fold(&unit("b", "old"), UnitOutput::of(&"stale").unwrap());
        let runner = Count(AtomicUsize::new(0));
        let mut seen = Vec::new();
        let summary = Threads::new(2)
            .run(
                &units,
                &runner,
                &mut ledger,
                &CancelToken::new(),
                &mut |e| {
                    if let UnitEvent::Reused(u, o) = e {
                        seen.push((u.instance.clone(), o.record.clone()));
                    }
                },
            )
            .unwrap();
        assert_eq!((summary.reused, summary.ran, summary.failed), (1, 2, 1));
        assert_eq!(runner.0.load(Ordering::SeqCst), 3);
        assert_eq!(
            seen,
            [("a".to_string(), serde_json::json!("from the file"))]
        );
        let b = ledger.unit("select:b").unwrap().unwrap();
        assert_eq!((b.state, b.attempts), (UnitState::Done, 1));
        let down = ledger.unit("select:down").unwrap().unwrap();
        assert_eq!(
            (down.state, down.detail.as_deref()),
            (UnitState::Failed, Some("engine"))
        );
        // Run again: the done ones are reused, the failed one runs again.
        let again = Count(AtomicUsize::new(0));
        let summary = Threads::new(2)
            .run(
                &units,
                &again,
                &mut ledger,
                &CancelToken::new(),
                &mut |_| {},
            )
            .unwrap();
        assert_eq!((summary.reused, summary.failed), (3, 1));
        assert_eq!(again.0.load(Ordering::SeqCst), 1);
        let down = ledger.unit("select:down").unwrap().unwrap();
        assert_eq!(down.attempts, 2);
    }
}
