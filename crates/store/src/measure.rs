//! Measurement state (schema version 2): per measure run and ETIP, each completed round and the
//! final outcome.
//!
//! Every write here is its own transaction, committed before the call returns, so that a run
//! killed at any moment resumes from the rounds it stored (see the crate docs for what survives).

use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError, q};

/// One stored round of an ETIP's measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRound {
    /// The round number (0 may be the warm-up; never negative).
    pub round: i64,
    /// The round's JSON, as recorded.
    pub payload: String,
}

impl Store {
    /// The id of the measure run with this key, created with `params_json` (informative) if new.
    ///
    /// The key must be derived from every parameter that influences the results, so that a rerun
    /// with the same parameters resumes and one with other parameters starts afresh.
    pub fn measure_run(&mut self, key: &str, params_json: &str) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO measure_runs (key, params) VALUES (?1, ?2)",
                params![key, params_json],
            )
            .map_err(q("create measure run"))?;
        self.conn
            .query_row("SELECT id FROM measure_runs WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .map_err(q("find measure run"))
    }

    /// Records round `round` of `etip` in `run`, replacing any earlier record of that round, and
    /// commits it before returning.
    ///
    /// Fails with [`StoreError::Invalid`] for a negative round.
    pub fn record_round(
        &mut self,
        run: i64,
        etip: &str,
        round: i64,
        payload_json: &str,
    ) -> Result<(), StoreError> {
        if round < 0 {
            return Err(StoreError::Invalid {
                what: "round number (must be 0 or more)",
                value: round.to_string(),
            });
        }
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO measure_rounds (run, etip, round, payload)
                 VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut stmt| stmt.execute(params![run, etip, round, payload_json]))
            .map_err(q("record a round"))?;
        Ok(())
    }

    /// The stored rounds of `etip` in `run`, by round number.
    pub fn rounds(&self, run: i64, etip: &str) -> Result<Vec<StoredRound>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT round, payload FROM measure_rounds
                 WHERE run = ?1 AND etip = ?2 ORDER BY round",
            )
            .map_err(q("read rounds"))?;
        let rows = stmt
            .query_map(params![run, etip], |r| {
                Ok(StoredRound {
                    round: r.get(0)?,
                    payload: r.get(1)?,
                })
            })
            .map_err(q("read rounds"))?;
        rows.collect::<Result<_, _>>().map_err(q("read rounds"))
    }

    /// How many rounds are stored for `etip`, over every run (for progress displays and tests).
    pub fn stored_rounds(&self, etip: &str) -> Result<usize, StoreError> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM measure_rounds WHERE etip = ?1",
                params![etip],
                |r| r.get(0),
            )
            .map_err(q("count rounds"))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Records the final outcome (JSON) of `etip` in `run`, replacing an earlier one, and commits
    /// it before returning.
    pub fn record_outcome(
        &mut self,
        run: i64,
        etip: &str,
        payload_json: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO measure_outcomes (run, etip, payload) VALUES (?1, ?2, ?3)",
                params![run, etip, payload_json],
            )
            .map_err(q("record an outcome"))?;
        Ok(())
    }

    /// The final outcome of `etip` in `run`, if recorded.
    pub fn outcome(&self, run: i64, etip: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(
                "SELECT payload FROM measure_outcomes WHERE run = ?1 AND etip = ?2",
                params![run, etip],
                |r| r.get(0),
            )
            .optional()
            .map_err(q("read an outcome"))
    }

    /// Every final outcome of `run`, as (ETIP, JSON), by ETIP.
    pub fn outcomes(&self, run: i64) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT etip, payload FROM measure_outcomes WHERE run = ?1 ORDER BY etip")
            .map_err(q("read outcomes"))?;
        let rows = stmt
            .query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(q("read outcomes"))?;
        rows.collect::<Result<_, _>>().map_err(q("read outcomes"))
    }

    /// Drops the rounds and the outcome of `etip` in `run` (in one transaction), so that it is
    /// measured again from scratch.
    pub fn forget_etip(&mut self, run: i64, etip: &str) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction()
            .map_err(q("begin forgetting an ETIP"))?;
        tx.execute(
            "DELETE FROM measure_rounds WHERE run = ?1 AND etip = ?2",
            params![run, etip],
        )
        .map_err(q("forget an ETIP's rounds"))?;
        tx.execute(
            "DELETE FROM measure_outcomes WHERE run = ?1 AND etip = ?2",
            params![run, etip],
        )
        .map_err(q("forget an ETIP's outcome"))?;
        tx.commit().map_err(q("commit forgetting an ETIP"))
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;

    fn round(round: i64, payload: &str) -> StoredRound {
        StoredRound {
            round,
            payload: payload.into(),
        }
    }

    #[test]
    fn rounds_survive_reopen_in_round_order_per_run_and_etip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.sqlite");
        let (a, b);
        {
            let mut s = Store::open_exclusive(&path).unwrap();
            a = s.measure_run("a", r#"{"rounds":3}"#).unwrap();
            b = s.measure_run("b", "{}").unwrap();
            assert_ne!(a, b);
            assert_eq!(s.measure_run("a", "{}").unwrap(), a);
            s.record_round(a, "e1", 2, "r2").unwrap();
            s.record_round(a, "e1", 0, "warm").unwrap();
            s.record_round(a, "e1", 1, "r1").unwrap();
            s.record_round(a, "e2", 1, "other etip").unwrap();
            s.record_round(b, "e1", 1, "other run").unwrap();
        }
        let mut s = Store::open_exclusive(&path).unwrap();
        assert_eq!(s.measure_run("a", "{}").unwrap(), a);
        assert_eq!(s.measure_run("b", "{}").unwrap(), b);
        assert_eq!(
            s.rounds(a, "e1").unwrap(),
            [round(0, "warm"), round(1, "r1"), round(2, "r2")]
        );
        assert_eq!(s.rounds(a, "e2").unwrap(), [round(1, "other etip")]);
        assert_eq!(s.rounds(b, "e1").unwrap(), [round(1, "other run")]);
        assert!(s.rounds(b, "e2").unwrap().is_empty());
        // Mining and measurement runs are separate namespaces.
        let m = s.mine_run("a", "{}").unwrap();
        assert!(s.decided(m).unwrap().is_empty());
    }

    #[test]
    fn recording_a_round_again_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("m.sqlite")).unwrap();
        let run = s.measure_run("k", "{}").unwrap();
        s.record_round(run, "e", 1, "first").unwrap();
        s.record_round(run, "e", 2, "two").unwrap();
        s.record_round(run, "e", 1, "second").unwrap();
        assert_eq!(
            s.rounds(run, "e").unwrap(),
            [round(1, "second"), round(2, "two")]
        );
    }

    #[test]
    fn negative_rounds_and_unknown_runs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("m.sqlite")).unwrap();
        let run = s.measure_run("k", "{}").unwrap();
        let e = s.record_round(run, "e", -1, "{}").unwrap_err();
        assert!(matches!(e, StoreError::Invalid { .. }), "{e:?}");
        let e = s.record_round(run + 1, "e", 0, "{}").unwrap_err();
        assert!(matches!(e, StoreError::Query { .. }), "{e:?}");
        let e = s.record_outcome(run + 1, "e", "{}").unwrap_err();
        assert!(matches!(e, StoreError::Query { .. }), "{e:?}");
        assert!(s.rounds(run, "e").unwrap().is_empty());
    }

    #[test]
    fn outcomes_are_recorded_replaced_and_listed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.sqlite");
        let (a, b);
        {
            let mut s = Store::open(&path).unwrap();
            a = s.measure_run("a", "{}").unwrap();
            b = s.measure_run("b", "{}").unwrap();
            assert_eq!(s.outcome(a, "e1").unwrap(), None);
            assert!(s.outcomes(a).unwrap().is_empty());
            s.record_outcome(a, "e2", r#"{"v":"slower"}"#).unwrap();
            s.record_outcome(a, "e1", r#"{"v":"faster"}"#).unwrap();
            s.record_outcome(a, "e2", r#"{"v":"same"}"#).unwrap();
            s.record_outcome(b, "e3", "{}").unwrap();
        }
        let s = Store::open(&path).unwrap();
        assert_eq!(
            s.outcome(a, "e1").unwrap().as_deref(),
            Some(r#"{"v":"faster"}"#)
        );
        assert_eq!(
            s.outcomes(a).unwrap(),
            [
                ("e1".to_string(), r#"{"v":"faster"}"#.to_string()),
                ("e2".to_string(), r#"{"v":"same"}"#.to_string())
            ]
        );
        assert_eq!(s.outcomes(b).unwrap(), [("e3".into(), "{}".into())]);
        assert_eq!(s.outcome(b, "e1").unwrap(), None);
    }

    #[test]
    fn forgetting_an_etip_drops_only_its_rounds_and_outcome() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("m.sqlite")).unwrap();
        let a = s.measure_run("a", "{}").unwrap();
        let b = s.measure_run("b", "{}").unwrap();
        for (run, etip) in [(a, "e1"), (a, "e2"), (b, "e1")] {
            s.record_round(run, etip, 0, "w").unwrap();
            s.record_round(run, etip, 1, "r").unwrap();
            s.record_outcome(run, etip, "o").unwrap();
        }
        s.forget_etip(a, "e1").unwrap();
        assert!(s.rounds(a, "e1").unwrap().is_empty());
        assert_eq!(s.outcome(a, "e1").unwrap(), None);
        assert_eq!(s.rounds(a, "e2").unwrap().len(), 2);
        assert_eq!(s.outcome(a, "e2").unwrap().as_deref(), Some("o"));
        assert_eq!(s.rounds(b, "e1").unwrap().len(), 2);
        assert_eq!(s.outcome(b, "e1").unwrap().as_deref(), Some("o"));
        // Forgetting what is not there is fine; the ETIP can be measured again.
        s.forget_etip(a, "e1").unwrap();
        s.record_round(a, "e1", 0, "again").unwrap();
        assert_eq!(s.rounds(a, "e1").unwrap(), [round(0, "again")]);
    }

    /// Each round is committed when `record_round` returns: another connection, opened before,
    /// sees it at once (as would a run started after a SIGKILL of the writer).
    #[test]
    fn each_round_is_visible_to_another_connection_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.sqlite");
        let mut writer = Store::open_exclusive(&path).unwrap();
        let run = writer.measure_run("k", "{}").unwrap();
        let reader = Store::open(&path).unwrap();
        let raw = Connection::open(&path).unwrap();
        for n in 0..5 {
            writer
                .record_round(run, "e", n, &format!("{{\"n\":{n}}}"))
                .unwrap();
            let seen = reader.rounds(run, "e").unwrap();
            assert_eq!(seen.len() as i64, n + 1);
            assert_eq!(seen.last().unwrap().payload, format!("{{\"n\":{n}}}"));
            let count: i64 = raw
                .query_row(
                    "SELECT count(*) FROM measure_rounds WHERE run = ?1 AND etip = 'e'",
                    [run],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(count, n + 1);
        }
        writer.record_outcome(run, "e", "done").unwrap();
        assert_eq!(reader.outcome(run, "e").unwrap().as_deref(), Some("done"));
        writer.forget_etip(run, "e").unwrap();
        assert!(reader.rounds(run, "e").unwrap().is_empty());
        assert_eq!(reader.outcome(run, "e").unwrap(), None);
    }
}
