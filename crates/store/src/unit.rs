//! The work-unit ledger (schema version 6): per unit id (`stage:instance`), its content key, state,
//! attempts, and, when done, the output with its digest. [`Store`] implements
//! [`etip_core::unit::Ledger`], so that any backend records units in the coordinator's store: a
//! unit done under the same key is reused, a unit left running by a killed run is run again.
//! Every write is its own transaction, committed before the call returns.

use etip_core::unit::{
    Ledger, LedgerError, Stage, UnitError, UnitOutput, UnitRecord, UnitState, WorkUnit,
};
use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError, q};

fn ledger_err(e: StoreError) -> LedgerError {
    LedgerError(Box::new(e))
}

fn state_name(s: UnitState) -> &'static str {
    match s {
        UnitState::Pending => "pending",
        UnitState::Running => "running",
        UnitState::Done => "done",
        UnitState::Failed => "failed",
    }
}

fn parse_state(s: &str) -> UnitState {
    match s {
        "running" => UnitState::Running,
        "done" => UnitState::Done,
        "failed" => UnitState::Failed,
        _ => UnitState::Pending,
    }
}

fn stage_of(s: &str) -> Option<Stage> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).ok()
}

impl Store {
    /// The ledger record of unit `id`. An output that no longer parses (a store edited by hand) is
    /// read as no output, so the unit runs again.
    pub fn work_unit(&self, id: &str) -> Result<Option<UnitRecord>, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT stage, key, state, attempts, digest, output, detail
                 FROM work_units WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, u32>(3)?,
                        r.get::<_, Option<String>>(4)?,
                        r.get::<_, Option<String>>(5)?,
                        r.get::<_, Option<String>>(6)?,
                    ))
                },
            )
            .optional()
            .map_err(q("read work unit"))?;
        let Some((stage, key, state, attempts, digest, output, detail)) = row else {
            return Ok(None);
        };
        let Some(stage) = stage_of(&stage) else {
            return Ok(None);
        };
        let output = output
            .and_then(|o| serde_json::from_str::<serde_json::Value>(&o).ok())
            .map(|record| UnitOutput { record })
            .filter(|o| digest.as_deref() == Some(o.digest().as_str()));
        let state = match parse_state(&state) {
            UnitState::Done if output.is_none() => UnitState::Failed,
            s => s,
        };
        Ok(Some(UnitRecord {
            id: id.to_string(),
            stage,
            key,
            state,
            attempts,
            digest,
            output,
            detail,
        }))
    }

    /// Marks `unit` running and counts an attempt; a new key starts the count at 1.
    pub fn start_work_unit(&mut self, unit: &WorkUnit) -> Result<UnitRecord, StoreError> {
        let id = unit.id();
        self.conn
            .execute(
                "INSERT INTO work_units (id, stage, key, state, attempts) VALUES (?1, ?2, ?3, 'running', 1)
                 ON CONFLICT (id) DO UPDATE SET
                   attempts = CASE WHEN key = excluded.key THEN attempts + 1 ELSE 1 END,
                   key = excluded.key, state = 'running', digest = NULL, output = NULL,
                   detail = NULL, updated = strftime('%Y-%m-%dT%H:%M:%SZ','now')",
                params![id, unit.stage.as_str(), unit.key],
            )
            .map_err(q("start work unit"))?;
        self.work_unit(&id)?.ok_or_else(|| StoreError::Query {
            what: "start work unit",
            source: rusqlite::Error::QueryReturnedNoRows,
        })
    }

    /// Records `unit` done with `output`.
    pub fn finish_work_unit(
        &mut self,
        unit: &WorkUnit,
        output: &UnitOutput,
    ) -> Result<(), StoreError> {
        self.end_work_unit(unit, UnitState::Done, Some(output), None)
    }

    /// Records that the last attempt of `unit` ended without an output.
    pub fn fail_work_unit(&mut self, unit: &WorkUnit, detail: &str) -> Result<(), StoreError> {
        self.end_work_unit(unit, UnitState::Failed, None, Some(detail))
    }

    fn end_work_unit(
        &mut self,
        unit: &WorkUnit,
        state: UnitState,
        output: Option<&UnitOutput>,
        detail: Option<&str>,
    ) -> Result<(), StoreError> {
        let text = output.map(|o| o.record.to_string());
        let digest = output.map(UnitOutput::digest);
        self.conn
            .execute(
                "INSERT INTO work_units (id, stage, key, state, attempts, digest, output, detail)
                 VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, ?7)
                 ON CONFLICT (id) DO UPDATE SET key = excluded.key, state = excluded.state,
                   digest = excluded.digest, output = excluded.output, detail = excluded.detail,
                   updated = strftime('%Y-%m-%dT%H:%M:%SZ','now')",
                params![
                    unit.id(),
                    unit.stage.as_str(),
                    unit.key,
                    state_name(state),
                    digest,
                    text,
                    detail
                ],
            )
            .map_err(q("record work unit"))?;
        Ok(())
    }

    /// Forgets unit `id` (`--force`): it runs again whatever its key.
    pub fn forget_work_unit(&mut self, id: &str) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM work_units WHERE id = ?1", [id])
            .map_err(q("forget work unit"))?;
        Ok(())
    }

    /// Every unit of `stage` in the ledger, by id.
    pub fn work_units(&self, stage: Stage) -> Result<Vec<UnitRecord>, StoreError> {
        let ids: Vec<String> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT id FROM work_units WHERE stage = ?1 ORDER BY id")
                .map_err(q("read work units"))?;
            let rows = stmt
                .query_map([stage.as_str()], |r| r.get(0))
                .map_err(q("read work units"))?;
            rows.collect::<Result<_, _>>()
                .map_err(q("read work units"))?
        };
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(r) = self.work_unit(&id)? {
                out.push(r);
            }
        }
        Ok(out)
    }
}

impl Ledger for Store {
    fn unit(&mut self, id: &str) -> Result<Option<UnitRecord>, LedgerError> {
        self.work_unit(id).map_err(ledger_err)
    }

    fn start(&mut self, unit: &WorkUnit) -> Result<UnitRecord, LedgerError> {
        self.start_work_unit(unit).map_err(ledger_err)
    }

    fn finish(&mut self, unit: &WorkUnit, output: &UnitOutput) -> Result<(), LedgerError> {
        self.finish_work_unit(unit, output).map_err(ledger_err)
    }

    fn fail(&mut self, unit: &WorkUnit, error: &UnitError) -> Result<(), LedgerError> {
        self.fail_work_unit(unit, &error.to_string())
            .map_err(ledger_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(key: &str) -> WorkUnit {
        WorkUnit::new(
            Stage::Measure,
            "etip-1",
            serde_json::json!({"image": "etip/a:1"}),
            serde_json::json!({"rounds": 10}),
            key,
        )
    }

    #[test]
    fn a_unit_goes_running_then_done_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let output = UnitOutput::of(&serde_json::json!({"executable": true})).unwrap();
        {
            let mut s = Store::open(&path).unwrap();
            assert_eq!(s.work_unit("measure:etip-1").unwrap(), None);
            let r = s.start_work_unit(&unit("k1")).unwrap();
            assert_eq!((r.state, r.attempts), (UnitState::Running, 1));
            s.finish_work_unit(&unit("k1"), &output).unwrap();
        }
        let s = Store::open(&path).unwrap();
        let r = s.work_unit("measure:etip-1").unwrap().unwrap();
        assert_eq!(r.state, UnitState::Done);
        assert_eq!(r.digest.as_deref(), Some(output.digest().as_str()));
        assert_eq!(r.reusable_for(&unit("k1")), Some(&output));
        assert_eq!(r.reusable_for(&unit("k2")), None);
        assert_eq!(s.work_units(Stage::Measure).unwrap().len(), 1);
        assert!(s.work_units(Stage::Eval).unwrap().is_empty());
    }

    #[test]
    fn attempts_count_per_key_and_a_failure_keeps_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("state.sqlite")).unwrap();
        s.start_work_unit(&unit("k1")).unwrap();
        s.fail_work_unit(&unit("k1"), "engine went away").unwrap();
        let r = s.start_work_unit(&unit("k1")).unwrap();
        assert_eq!((r.state, r.attempts), (UnitState::Running, 2));
        s.fail_work_unit(&unit("k1"), "engine went away").unwrap();
        let r = s.work_unit("measure:etip-1").unwrap().unwrap();
        assert_eq!(r.state, UnitState::Failed);
        assert_eq!(r.detail.as_deref(), Some("engine went away"));
        // A new key is a new unit of work: its attempts start again.
        let r = s.start_work_unit(&unit("k2")).unwrap();
        assert_eq!((r.attempts, r.key.as_str()), (1, "k2"));
    }

    #[test]
    fn a_forgotten_unit_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("state.sqlite")).unwrap();
        s.start_work_unit(&unit("k1")).unwrap();
        s.forget_work_unit("measure:etip-1").unwrap();
        assert!(s.work_unit("measure:etip-1").unwrap().is_none());
        s.forget_work_unit("measure:etip-1").unwrap();
    }

    #[test]
    fn an_output_that_does_not_match_its_digest_is_not_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let mut s = Store::open(&path).unwrap();
        s.start_work_unit(&unit("k1")).unwrap();
        let output = UnitOutput::of(&serde_json::json!({"n": 1})).unwrap();
        s.finish_work_unit(&unit("k1"), &output).unwrap();
        s.conn
            .execute(
                "UPDATE work_units SET output = '{\"n\":2}' WHERE id = 'measure:etip-1'",
                [],
            )
            .unwrap();
        let r = s.work_unit("measure:etip-1").unwrap().unwrap();
        assert_eq!(r.state, UnitState::Failed);
        assert_eq!(r.reusable_for(&unit("k1")), None);
    }
}
