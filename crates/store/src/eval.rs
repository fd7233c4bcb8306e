//! Evaluation state (schema version 3): the result of each prediction of an `etip eval` run, keyed
//! by run id, submission (model) and instance, with the key of everything that shaped it (the
//! patch, the image, the protocol), so that a re-run skips what is done and redoes what changed.
//! Every write is its own transaction, committed before the call returns.

use rusqlite::params;

use crate::{Store, StoreError, q};

/// One stored evaluation result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEval {
    pub model: String,
    pub instance: String,
    /// The key of what shaped the result.
    pub key: String,
    /// The result's JSON, as recorded.
    pub payload: String,
}

impl Store {
    /// Records (or replaces) the result of `model` on `instance` in run `run_id`.
    pub fn record_eval(
        &mut self,
        run_id: &str,
        model: &str,
        instance: &str,
        key: &str,
        payload_json: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO eval_results (run_id, model, instance, key, payload)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![run_id, model, instance, key, payload_json],
            )
            .map_err(q("record eval result"))?;
        Ok(())
    }

    /// The results of run `run_id`, in the order they were first recorded.
    pub fn eval_results(&self, run_id: &str) -> Result<Vec<StoredEval>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT model, instance, key, payload FROM eval_results WHERE run_id = ?1 ORDER BY id",
            )
            .map_err(q("read eval results"))?;
        let rows = stmt
            .query_map([run_id], |r| {
                Ok(StoredEval {
                    model: r.get(0)?,
                    instance: r.get(1)?,
                    key: r.get(2)?,
                    payload: r.get(3)?,
                })
            })
            .map_err(q("read eval results"))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(q("read eval results"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_kept_per_run_model_and_instance_and_replaced_on_rerun() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        {
            let mut s = Store::open(&path).unwrap();
            s.record_eval("r1", "m", "a", "k1", "{\"x\":1}").unwrap();
            s.record_eval("r1", "m", "b", "k1", "{\"x\":2}").unwrap();
            s.record_eval("r2", "m", "a", "k1", "{\"x\":3}").unwrap();
            s.record_eval("r1", "m", "a", "k2", "{\"x\":4}").unwrap();
        }
        let s = Store::open(&path).unwrap();
        let r1 = s.eval_results("r1").unwrap();
        assert_eq!(r1.len(), 2);
        let a = r1.iter().find(|e| e.instance == "a").unwrap();
        assert_eq!((a.key.as_str(), a.payload.as_str()), ("k2", "{\"x\":4}"));
        assert_eq!(s.eval_results("r2").unwrap().len(), 1);
        assert!(s.eval_results("none").unwrap().is_empty());
    }
}
