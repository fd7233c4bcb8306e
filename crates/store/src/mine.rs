//! Mining state: per mine run, one decision per commit (schema version 1).

use std::collections::HashSet;

use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError, q};

/// The decision about one commit of a mine run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitRecord {
    /// Full SHA of the commit.
    pub sha: String,
    /// Whether the commit passed every rule.
    pub kept: bool,
    /// Rejection reason (stable snake_case name) when rejected.
    pub reason: Option<String>,
    /// Human-readable detail (offending path, counts, changed functions).
    pub detail: Option<String>,
    /// The candidate JSON for kept commits.
    pub payload: Option<String>,
    /// Normalised diff hash for kept commits.
    pub diff_hash: Option<String>,
}

impl CommitRecord {
    /// A rejected commit.
    pub fn rejected(sha: &str, reason: &str, detail: &str) -> Self {
        Self {
            sha: sha.into(),
            kept: false,
            reason: Some(reason.into()),
            detail: Some(detail.into()),
            payload: None,
            diff_hash: None,
        }
    }

    /// A kept commit with its candidate JSON.
    pub fn kept(sha: &str, payload: String, diff_hash: String, detail: String) -> Self {
        Self {
            sha: sha.into(),
            kept: true,
            reason: None,
            detail: Some(detail),
            payload: Some(payload),
            diff_hash: Some(diff_hash),
        }
    }
}

impl Store {
    /// The id of the mine run with this key, created with `params` (JSON, informative) if new.
    pub fn mine_run(&mut self, key: &str, params: &str) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO mine_runs (key, params) VALUES (?1, ?2)",
                params![key, params],
            )
            .map_err(q("create mine run"))?;
        self.conn
            .query_row("SELECT id FROM mine_runs WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .map_err(q("find mine run"))
    }

    /// Whether any mine run recorded a decision (a fresh state file has none).
    pub fn has_decisions(&self) -> Result<bool, StoreError> {
        self.conn
            .query_row("SELECT EXISTS (SELECT 1 FROM mine_decisions)", [], |r| {
                r.get(0)
            })
            .map_err(q("look for decided commits"))
    }

    /// SHAs already decided in `run`.
    pub fn decided(&self, run: i64) -> Result<HashSet<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT sha FROM mine_decisions WHERE run = ?1")
            .map_err(q("list decided commits"))?;
        let rows = stmt
            .query_map([run], |r| r.get::<_, String>(0))
            .map_err(q("list decided commits"))?;
        rows.collect::<Result<_, _>>()
            .map_err(q("list decided commits"))
    }

    /// Records decisions in one transaction (a rerun that decides a commit again overwrites it).
    pub fn record_commits(&mut self, run: i64, records: &[CommitRecord]) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction()
            .map_err(q("begin recording commits"))?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO mine_decisions
                     (run, sha, kept, reason, detail, payload, diff_hash)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(q("prepare recording commits"))?;
            for r in records {
                stmt.execute(params![
                    run,
                    r.sha,
                    r.kept,
                    r.reason,
                    r.detail,
                    r.payload,
                    r.diff_hash
                ])
                .map_err(q("record a commit"))?;
            }
        }
        tx.commit().map_err(q("commit recorded commits"))
    }

    /// Every decision of `run` (unordered: callers order them by history).
    pub fn commits(&self, run: i64) -> Result<Vec<CommitRecord>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT sha, kept, reason, detail, payload, diff_hash FROM mine_decisions WHERE run = ?1",
            )
            .map_err(q("read decisions"))?;
        let rows = stmt
            .query_map([run], row_to_record)
            .map_err(q("read decisions"))?;
        rows.collect::<Result<_, _>>().map_err(q("read decisions"))
    }

    /// The decision about one commit of `run`, if recorded.
    pub fn commit(&self, run: i64, sha: &str) -> Result<Option<CommitRecord>, StoreError> {
        self.conn
            .query_row(
                "SELECT sha, kept, reason, detail, payload, diff_hash FROM mine_decisions
                 WHERE run = ?1 AND sha = ?2",
                params![run, sha],
                row_to_record,
            )
            .optional()
            .map_err(q("read one decision"))
    }
}

fn row_to_record(r: &rusqlite::Row) -> rusqlite::Result<CommitRecord> {
    Ok(CommitRecord {
        sha: r.get(0)?,
        kept: r.get(1)?,
        reason: r.get(2)?,
        detail: r.get(3)?,
        payload: r.get(4)?,
        diff_hash: r.get(5)?,
    })
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;

    /// A store written by an earlier etip (decisions in a `WITHOUT ROWID` table) opens with its
    /// decisions, so that an interrupted run resumes across the upgrade.
    #[test]
    fn stores_of_earlier_versions_keep_their_decisions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(
                "CREATE TABLE mine_runs (
                     id INTEGER PRIMARY KEY,
                     key TEXT NOT NULL UNIQUE,
                     params TEXT NOT NULL,
                     created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
                 );
                 CREATE TABLE mine_commits (
                     run INTEGER NOT NULL REFERENCES mine_runs(id),
                     sha TEXT NOT NULL,
                     kept INTEGER NOT NULL,
                     reason TEXT,
                     detail TEXT,
                     payload TEXT,
                     diff_hash TEXT,
                     PRIMARY KEY (run, sha)
                 ) WITHOUT ROWID;
                 INSERT INTO mine_runs (key, params) VALUES ('k', '{}');
                 INSERT INTO mine_commits VALUES (1, 'aaa', 0, 'test_file', 'src/test/A.java', NULL, NULL);
                 INSERT INTO mine_commits VALUES (1, 'bbb', 1, NULL, 'A.m', '{\"x\":1}', 'h1');",
            )
            .unwrap();
        }
        for reopened in 0..2 {
            let mut s = Store::open(&path).unwrap();
            let run = s.mine_run("k", "{}").unwrap();
            assert_eq!(run, 1);
            let decided = s.decided(run).unwrap();
            assert_eq!(decided.len(), 2 + reopened);
            let b = s.commit(run, "bbb").unwrap().unwrap();
            assert!(b.kept);
            assert_eq!(b.payload.as_deref(), Some("{\"x\":1}"));
            assert_eq!(b.diff_hash.as_deref(), Some("h1"));
            let a = s.commit(run, "aaa").unwrap().unwrap();
            assert_eq!(a.reason.as_deref(), Some("test_file"));
            // The old table is gone; new decisions go to the new one.
            if reopened == 0 {
                s.record_commits(run, &[CommitRecord::rejected("ccc", "empty_diff", "")])
                    .unwrap();
            }
        }
        let conn = Connection::open(&path).unwrap();
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'mine_commits'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 0);
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM mine_decisions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 3);
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, crate::SCHEMA_VERSION);
    }

    #[test]
    fn records_survive_reopen_and_runs_are_separate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        {
            let mut s = Store::open(&path).unwrap();
            let a = s.mine_run("a", "{}").unwrap();
            let b = s.mine_run("b", "{}").unwrap();
            assert_ne!(a, b);
            assert_eq!(s.mine_run("a", "{}").unwrap(), a);
            s.record_commits(
                a,
                &[
                    CommitRecord::rejected("1", "test_file", "x"),
                    CommitRecord::kept("2", "{}".into(), "h".into(), "f".into()),
                ],
            )
            .unwrap();
        }
        let mut s = Store::open(&path).unwrap();
        let a = s.mine_run("a", "{}").unwrap();
        let b = s.mine_run("b", "{}").unwrap();
        assert_eq!(s.decided(a).unwrap().len(), 2);
        assert!(s.decided(b).unwrap().is_empty());
        let two = s.commit(a, "2").unwrap().unwrap();
        assert!(two.kept);
        assert_eq!(two.diff_hash.as_deref(), Some("h"));
        // Re-deciding overwrites instead of duplicating.
        s.record_commits(a, &[CommitRecord::rejected("2", "duplicate", "")])
            .unwrap();
        assert_eq!(s.commits(a).unwrap().len(), 2);
        assert!(!s.commit(a, "2").unwrap().unwrap().kept);
    }
}
