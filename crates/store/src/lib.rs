//! etip's embedded SQLite store: the state that makes long runs resumable.
//!
//! The store is one SQLite file opened in WAL mode with `synchronous=NORMAL`. Every write commits
//! before the call returns. In WAL mode a commit is appended to the `-wal` file beside the store
//! with a plain `write`; `synchronous=NORMAL` only skips the `fsync` of that append. The data is
//! therefore in the operating system's cache as soon as the call returns, and a process killed at
//! any moment (even with SIGKILL) loses nothing that a call reported as written, and never leaves
//! a half-written record. What `NORMAL` gives up is durability against a crash of the operating
//! system or a power cut: the last few commits may then roll back, still without corrupting the
//! file, and a rerun redoes them.
//!
//! The API is split by phase:
//!
//! - **mining** ([`Store::mine_run`], [`Store::record_commits`], …): a *mine run* is identified by
//!   a key derived from everything that influences its decisions (repository, language, rules,
//!   window); it holds one decision per commit. Writers group decisions in batches, each batch one
//!   transaction.
//! - **measurement** ([`Store::measure_run`], [`Store::record_round`], …): a *measure run* is
//!   identified by a key derived from every parameter that influences results; it holds, per ETIP,
//!   each completed round of timings (each committed on its own, so that a killed run resumes from
//!   the stored rounds) and the ETIP's final outcome (so that a rerun skips finished ETIPs).
//! - **evaluation** ([`Store::record_eval`], [`Store::eval_results`]): per `etip eval` run id,
//!   submission and instance, the result and the key of what shaped it (a rerun skips results
//!   whose key is unchanged and that did not end in a harness error).
//! - **classification** ([`Store::llm_answer`], [`Store::record_llm_answer`]): an LLM's raw answer
//!   and token counts per model and prompt hash, so that a prompt is paid for once.
//! - **GitHub** ([`Store::http_answer`], [`Store::record_http_answer`]): API answers by URL, so
//!   that a re-run spends no rate limit on what it already read.
//! - **work units** ([`Store::work_unit`], [`Store::start_work_unit`], …, and the
//!   [`etip_core::unit::Ledger`] implementation): per unit of work (`stage:instance`), its key,
//!   state, attempts and output, so that a unit done under the same key is never run twice and one
//!   a killed run left running is run again.
//!
//! # Schema versions
//!
//! The schema version is SQLite's `PRAGMA user_version`. Opening a store applies the migrations
//! it lacks in order, each in its own transaction that also bumps the version, so that an
//! interrupted upgrade leaves the store at an earlier version, never in between.
//!
//! | version | adds |
//! |---|---|
//! | 0 | nothing (a new file), or a store of an etip older than versioning (no `user_version`) |
//! | 1 | mining: `mine_runs`, `mine_decisions` (a store that still has the older `mine_commits` table has its decisions moved over) |
//! | 2 | measurement: `measure_runs`, `measure_rounds`, `measure_outcomes` |
//! | 3 | evaluation: `eval_results` |
//! | 4 | classification: `llm_answers`, an LLM's raw answers keyed by model and prompt hash |
//! | 5 | GitHub: `http_cache`, API answers (status and body) keyed by URL |
//! | 6 | work units: `work_units`, the ledger of the pipeline's units |
//!
//! A store whose version is newer than [`SCHEMA_VERSION`] was written by a newer etip and is
//! refused ([`StoreError::NewerSchema`]) rather than misread.
//!
//! # Exclusive use
//!
//! [`Store::open_exclusive`] also takes an exclusive lock on `<path>.lock` for the lifetime of the
//! [`Store`], so that two runs cannot work on the same state file at the same time; the second
//! fails at once with [`StoreError::Locked`]. The lock is released when the [`Store`] is dropped
//! (or its process dies); the lock file itself is left in place, as deleting it would let two
//! runs lock two different files.
//!
//! [`lock_folder`] takes the same kind of lock on an output folder (the file [`FOLDER_LOCK`] in
//! it), so that two runs writing the same outputs with different state files are refused too
//! ([`StoreError::FolderLocked`]).
//!
//! ```
//! use etip_store::{CommitRecord, Store};
//! let dir = tempfile::tempdir().unwrap();
//! let mut store = Store::open_exclusive(&dir.path().join("state.sqlite")).unwrap();
//! let run = store.mine_run("key", "{}").unwrap();
//! store
//!     .record_commits(run, &[CommitRecord::rejected("abc", "test_file", "src/test/A.java")])
//!     .unwrap();
//! assert!(store.decided(run).unwrap().contains("abc"));
//!
//! let run = store.measure_run("key", "{}").unwrap();
//! store.record_round(run, "etip-1", 0, r#"{"warmup":true}"#).unwrap();
//! store.record_round(run, "etip-1", 1, r#"{"ns":[1,2]}"#).unwrap();
//! assert_eq!(store.rounds(run, "etip-1").unwrap().len(), 2);
//! ```

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, Transaction, TransactionBehavior};

mod eval;
mod http;
mod llm;
mod measure;
mod mine;
mod unit;

pub use llm::CachedAnswer;
pub use measure::StoredRound;
pub use mine::CommitRecord;

/// The newest schema version this etip knows (see the crate docs for the list).
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The SQLite file could not be opened or initialised.
    #[error(
        "cannot open the state store {path}: {source}; check that it is an etip state file in a writable folder, or name a new file to start over"
    )]
    Open {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// Bringing the store to the current schema failed (the store stays at the version before).
    #[error("cannot upgrade the state store {path} to schema {version}: {source}")]
    Migrate {
        /// The file.
        path: PathBuf,
        /// The version being applied.
        version: i64,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The store was written by a newer etip, with a schema this one does not know.
    #[error(
        "the state store {path} was written by a newer etip (schema {found}, this etip knows up to {known}); use a newer etip or another --state file"
    )]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
        /// The newest version this etip knows ([`SCHEMA_VERSION`]).
        known: i64,
    },
    /// Another process (or another [`Store`] of this one) holds the lock of this state file.
    #[error(
        "another etip run is using the state file {} (its lock {}.lock is held{}); wait for it to finish or use another --state file",
        path.display(),
        path.display(),
        holder.map(|pid| format!(" by pid {pid}")).unwrap_or_default()
    )]
    Locked {
        /// The state file.
        path: PathBuf,
        /// The process holding the lock, when the system tells (Linux: `/proc/locks`).
        holder: Option<u32>,
    },
    /// Another process (or another lock of this one) holds the lock of this output folder.
    #[error(
        "another etip run is writing to the output folder {} (its lock {} is held{}); wait for it to finish or use another --out",
        dir.display(),
        dir.join(FOLDER_LOCK).display(),
        holder.map(|pid| format!(" by pid {pid}")).unwrap_or_default()
    )]
    FolderLocked {
        /// The output folder.
        dir: PathBuf,
        /// The process holding the lock, when the system tells (Linux: `/proc/locks`).
        holder: Option<u32>,
    },
    /// The lock file beside the state file could not be created, opened or locked.
    #[error("cannot use the lock file {path}: {source}")]
    LockFile {
        /// The lock file.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// A caller passed a value the store does not accept.
    #[error("invalid {what}: {value}")]
    Invalid {
        /// What was wrong.
        what: &'static str,
        /// The value given.
        value: String,
    },
    /// A query failed.
    #[error("state store query failed ({what}): {source}")]
    Query {
        /// What was being done.
        what: &'static str,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// Whether the path the user gave is at fault (a command exits with code 2), not the run:
    /// another run holds it, a newer etip wrote it, it is not a state store (not a database, a
    /// folder, a device), or its lock file is not a regular file.
    pub fn is_input_error(&self) -> bool {
        use rusqlite::ErrorCode;
        let users_file = |e: &rusqlite::Error| {
            matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::NotADatabase | ErrorCode::CannotOpen)
            )
        };
        match self {
            StoreError::Locked { .. }
            | StoreError::FolderLocked { .. }
            | StoreError::NewerSchema { .. } => true,
            StoreError::Open { source, .. } | StoreError::Migrate { source, .. } => {
                users_file(source)
            }
            StoreError::LockFile { source, .. } => source.kind() == io::ErrorKind::InvalidInput,
            StoreError::Invalid { .. } | StoreError::Query { .. } => false,
        }
    }
}

pub(crate) fn q(what: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    move |source| StoreError::Query { what, source }
}

/// One migration: brings a store from the version before it to its own (its index + 1), inside
/// the transaction it is given.
type Migration = fn(&Transaction) -> rusqlite::Result<()>;

/// The migrations, in order: `MIGRATIONS[i]` brings a store from version `i` to version `i + 1`.
/// Append only; never edit one that has been released.
const MIGRATIONS: &[Migration] = &[
    migrate_v1_mining,
    migrate_v2_measurement,
    migrate_v3_eval,
    migrate_v4_llm,
    migrate_v5_http,
    migrate_v6_units,
];

/// Version 1: the mining tables.
///
/// A store of an etip older than versioning has version 0 and may already hold these tables
/// (hence `IF NOT EXISTS`), or, older still, its decisions in `mine_commits`, a table ordered by
/// (run, sha): a kept commit's payload (a kilobyte or two) then landed at a random place, and
/// every batch rewrote most pages. Decisions are now appended in rowid order with a small
/// (run, sha) index beside them; the old ones move over, so that an interrupted run still resumes.
fn migrate_v1_mining(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS mine_runs (
             id INTEGER PRIMARY KEY,
             key TEXT NOT NULL UNIQUE,
             params TEXT NOT NULL,
             created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
         );
         CREATE TABLE IF NOT EXISTS mine_decisions (
             id INTEGER PRIMARY KEY,
             run INTEGER NOT NULL REFERENCES mine_runs(id),
             sha TEXT NOT NULL,
             kept INTEGER NOT NULL,
             reason TEXT,
             detail TEXT,
             payload TEXT,
             diff_hash TEXT,
             UNIQUE (run, sha)
         );",
    )?;
    let old: bool = tx.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'mine_commits'",
        [],
        |r| r.get(0),
    )?;
    if old {
        tx.execute_batch(
            "INSERT OR IGNORE INTO mine_decisions (run, sha, kept, reason, detail, payload, diff_hash)
                 SELECT run, sha, kept, reason, detail, payload, diff_hash FROM mine_commits;
             DROP TABLE mine_commits;",
        )?;
    }
    Ok(())
}

/// Version 2: the measurement tables.
fn migrate_v2_measurement(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE measure_runs (
             id INTEGER PRIMARY KEY,
             key TEXT NOT NULL UNIQUE,
             params TEXT NOT NULL,
             created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
         );
         CREATE TABLE measure_rounds (
             id INTEGER PRIMARY KEY,
             run INTEGER NOT NULL REFERENCES measure_runs(id),
             etip TEXT NOT NULL,
             round INTEGER NOT NULL CHECK (round >= 0),
             payload TEXT NOT NULL,
             recorded TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
             UNIQUE (run, etip, round)
         );
         CREATE TABLE measure_outcomes (
             id INTEGER PRIMARY KEY,
             run INTEGER NOT NULL REFERENCES measure_runs(id),
             etip TEXT NOT NULL,
             payload TEXT NOT NULL,
             recorded TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
             UNIQUE (run, etip)
         );",
    )
}

/// Version 3: evaluation results (`etip eval`), one per run id, submission and instance.
fn migrate_v3_eval(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE eval_results (
             id INTEGER PRIMARY KEY,
             run_id TEXT NOT NULL,
             model TEXT NOT NULL,
             instance TEXT NOT NULL,
             key TEXT NOT NULL,
             payload TEXT NOT NULL,
             recorded TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
             UNIQUE (run_id, model, instance)
         );",
    )
}

/// Version 4: an LLM's answers, one per model and prompt hash.
fn migrate_v4_llm(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE llm_answers (
             model TEXT NOT NULL,
             prompt_hash TEXT NOT NULL,
             raw TEXT NOT NULL,
             prompt_tokens INTEGER NOT NULL,
             completion_tokens INTEGER NOT NULL,
             recorded TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
             PRIMARY KEY (model, prompt_hash)
         );",
    )
}

/// Version 5: API answers by URL (GitHub).
fn migrate_v5_http(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE http_cache (
             url TEXT PRIMARY KEY,
             status INTEGER NOT NULL,
             body TEXT NOT NULL,
             recorded TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
         );",
    )
}

/// Version 6: the work-unit ledger ([`etip_core::unit::Ledger`]).
fn migrate_v6_units(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE work_units (
             id TEXT PRIMARY KEY,
             stage TEXT NOT NULL,
             key TEXT NOT NULL,
             state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed')),
             attempts INTEGER NOT NULL DEFAULT 0,
             digest TEXT,
             output TEXT,
             detail TEXT,
             updated TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
         );
         CREATE INDEX work_units_stage ON work_units (stage);",
    )
}

/// An open store.
#[derive(Debug)]
pub struct Store {
    // Declared before `_lock` so that the connection closes before the lock is released.
    conn: Connection,
    /// The locked `<path>.lock` of [`Store::open_exclusive`]; closing it releases the lock.
    _lock: Option<File>,
}

impl Store {
    /// Opens (creating if needed) the store at `path`, in WAL mode, and brings it to the current
    /// schema.
    ///
    /// Fails with [`StoreError::NewerSchema`] for a store written by a newer etip. Takes no lock:
    /// see [`Store::open_exclusive`].
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(err)?;
        // Refuse a newer store before changing anything in it.
        let found = user_version(&conn).map_err(err)?;
        newer_check(path, found)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(err)?;
        migrate(&mut conn, path)?;
        // Only after migrating: a store of an earlier etip may hold decisions of runs that are
        // gone (keys were never enforced), and moving them over must not fail.
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(err)?;
        Ok(Self { conn, _lock: None })
    }

    /// Like [`Store::open`], and also holds an exclusive lock on the sibling file `<path>.lock`
    /// for the lifetime of the returned store.
    ///
    /// Fails at once with [`StoreError::Locked`] if another process (or another store of this
    /// process) holds it. The lock file is created if missing (never truncated, and never through
    /// a symbolic link); an existing one that is not a regular file is refused.
    pub fn open_exclusive(path: &Path) -> Result<Self, StoreError> {
        let lock_path = lock_path(path);
        let lock = open_lock_file(&lock_path).map_err(|source| StoreError::LockFile {
            path: lock_path.clone(),
            source,
        })?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StoreError::Locked {
                    path: path.to_path_buf(),
                    holder: lock_holder(&lock),
                });
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(StoreError::LockFile {
                    path: lock_path,
                    source,
                });
            }
        }
        let mut store = Self::open(path)?;
        store._lock = Some(lock);
        Ok(store)
    }

    /// The schema version of the open store (after [`Store::open`], [`SCHEMA_VERSION`]).
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        user_version(&self.conn).map_err(q("read the schema version"))
    }
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

fn newer_check(path: &Path, found: i64) -> Result<(), StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Applies the migrations the store lacks, each in its own write transaction that also sets
/// `user_version`. The version is read again inside each transaction, so that two processes
/// opening the same old store at once apply each migration once.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    for (i, step) in MIGRATIONS.iter().enumerate() {
        let version = i as i64 + 1;
        let err = |source| StoreError::Migrate {
            path: path.to_path_buf(),
            version,
            source,
        };
        if user_version(conn).map_err(err)? >= version {
            continue;
        }
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let found = user_version(&tx).map_err(err)?;
        newer_check(path, found)?;
        if found >= version {
            continue;
        }
        step(&tx).map_err(err)?;
        tx.pragma_update(None, "user_version", version)
            .map_err(err)?;
        tx.commit().map_err(err)?;
    }
    Ok(())
}

/// The lock file of an output folder, inside it.
pub const FOLDER_LOCK: &str = ".etip.lock";

/// An exclusive lock on an output folder, held until it is dropped (or its process dies): the
/// same kind of lock as [`Store::open_exclusive`]'s, on the file [`FOLDER_LOCK`] in the folder.
#[derive(Debug)]
pub struct FolderLock {
    _file: File,
}

/// Takes the exclusive lock of output folder `dir` (which must exist), so that two runs never
/// write the same outputs at once; the second fails at once with [`StoreError::FolderLocked`].
/// The lock file is created if missing, never truncated and never opened through a link; it is
/// left in place when the lock is released.
pub fn lock_folder(dir: &Path) -> Result<FolderLock, StoreError> {
    let path = dir.join(FOLDER_LOCK);
    let file = open_lock_file(&path).map_err(|source| StoreError::LockFile {
        path: path.clone(),
        source,
    })?;
    match file.try_lock() {
        Ok(()) => Ok(FolderLock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::FolderLocked {
            dir: dir.to_path_buf(),
            holder: lock_holder(&file),
        }),
        Err(std::fs::TryLockError::Error(source)) => Err(StoreError::LockFile { path, source }),
    }
}

/// `<path>.lock`: the state file's name with `.lock` appended.
fn lock_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

/// Opens the lock file read/write, creating it if missing, without truncating it and without
/// following a symbolic link into something else.
///
/// A new file is created with `create_new` (`O_CREAT | O_EXCL`, which never follows a link). An
/// existing path must be a regular file (not a link, FIFO, device, directory); after opening it,
/// the opened file must still be the one the path names, which catches a swap in between.
fn open_lock_file(path: &Path) -> io::Result<File> {
    let not_regular = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "it exists and is not a regular file; remove it or use another path",
        )
    };
    // A few attempts, for a file deleted between finding it exists and opening it.
    for _ in 0..8 {
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(f) => return Ok(f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let before = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if !before.file_type().is_file() {
            return Err(not_regular());
        }
        let f = match OpenOptions::new().read(true).write(true).open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let opened = f.metadata()?;
        let now = std::fs::symlink_metadata(path)?;
        if !opened.file_type().is_file() || !now.file_type().is_file() || !same_file(&opened, &now)
        {
            return Err(not_regular());
        }
        return Ok(f);
    }
    Err(io::Error::other(
        "it keeps being created and deleted by someone else",
    ))
}

/// The process that holds a `flock` on `file`, from `/proc/locks` (Linux; read up to 1 MiB).
#[cfg(target_os = "linux")]
fn lock_holder(file: &File) -> Option<u32> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata().ok()?;
    let dev = meta.dev();
    // glibc's gnu_dev_major / gnu_dev_minor.
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    // /proc/locks is read page by page while other processes (or threads) take and drop locks,
    // and a read can skip a line: ask a few times before saying nobody is known.
    for attempt in 0..5 {
        let mut text = String::new();
        File::open("/proc/locks")
            .ok()?
            .take(1 << 20)
            .read_to_string(&mut text)
            .ok()?;
        if let Some(pid) = flock_holder(&text, major, minor, meta.ino()) {
            return Some(pid);
        }
        std::thread::sleep(std::time::Duration::from_millis(2 << attempt));
    }
    None
}

#[cfg(not(target_os = "linux"))]
fn lock_holder(_: &File) -> Option<u32> {
    None
}

/// The pid of the granted `FLOCK` on file `major:minor:inode` in the text of `/proc/locks`
/// (`1: FLOCK  ADVISORY  WRITE 1234 fe:00:753934 0 EOF`; waiting locks have `->` after the id).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn flock_holder(text: &str, major: u64, minor: u64, inode: u64) -> Option<u32> {
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, "FLOCK", _, _, pid, file, ..] = fields.as_slice() else {
            return None;
        };
        let mut parts = file.split(':');
        let (ma, mi, ino) = (parts.next()?, parts.next()?, parts.next()?);
        let same = u64::from_str_radix(ma, 16).ok()? == major
            && u64::from_str_radix(mi, 16).ok()? == minor
            && ino.parse::<u64>().ok()? == inode;
        same.then(|| pid.parse().ok()).flatten()
    })
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    // Without a portable file identity, rely on the checks of the file types.
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(path: &Path) -> Vec<String> {
        let conn = Connection::open(path).unwrap();
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn version_of(path: &Path) -> i64 {
        user_version(&Connection::open(path).unwrap()).unwrap()
    }

    #[test]
    fn a_new_file_gets_the_current_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.sqlite");
        let s = Store::open(&path).unwrap();
        assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(SCHEMA_VERSION, 6);
        drop(s);
        assert_eq!(version_of(&path), 6);
        assert_eq!(
            tables(&path),
            [
                "eval_results",
                "http_cache",
                "llm_answers",
                "measure_outcomes",
                "measure_rounds",
                "measure_runs",
                "mine_decisions",
                "mine_runs",
                "work_units"
            ]
        );
        // Reopening changes nothing.
        drop(Store::open(&path).unwrap());
        assert_eq!(version_of(&path), 6);
    }

    /// A store of an etip from before versioning (user_version 0, today's mining tables) keeps its
    /// decisions.
    #[test]
    fn an_unversioned_store_with_tables_is_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v0.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            let tx = conn.unchecked_transaction().unwrap();
            migrate_v1_mining(&tx).unwrap();
            tx.commit().unwrap();
            conn.execute_batch(
                "INSERT INTO mine_runs (key, params) VALUES ('k', '{}');
                 INSERT INTO mine_decisions (run, sha, kept, detail, payload, diff_hash)
                     VALUES (1, 'aaa', 1, 'A.m', '{}', 'h');",
            )
            .unwrap();
            assert_eq!(user_version(&conn).unwrap(), 0);
        }
        let mut s = Store::open(&path).unwrap();
        assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
        let run = s.mine_run("k", "{}").unwrap();
        assert_eq!(run, 1);
        assert!(s.commit(run, "aaa").unwrap().unwrap().kept);
    }

    /// A store written by etip at schema 1 gains the measurement tables and keeps its rows.
    #[test]
    fn a_v1_store_is_upgraded_to_v2_keeping_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.sqlite");
        {
            // Schema 1 as released, written out rather than taken from `migrate_v1_mining`.
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(
                "PRAGMA journal_mode = WAL;
                 CREATE TABLE mine_runs (
                     id INTEGER PRIMARY KEY,
                     key TEXT NOT NULL UNIQUE,
                     params TEXT NOT NULL,
                     created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
                 );
                 CREATE TABLE mine_decisions (
                     id INTEGER PRIMARY KEY,
                     run INTEGER NOT NULL REFERENCES mine_runs(id),
                     sha TEXT NOT NULL,
                     kept INTEGER NOT NULL,
                     reason TEXT,
                     detail TEXT,
                     payload TEXT,
                     diff_hash TEXT,
                     UNIQUE (run, sha)
                 );
                 INSERT INTO mine_runs (key, params) VALUES ('a', '{\"p\":1}'), ('b', '{}');
                 INSERT INTO mine_decisions (run, sha, kept, reason, detail)
                     VALUES (1, 'x', 0, 'test_file', 'T.java'), (2, 'y', 0, 'empty_diff', '');
                 PRAGMA user_version = 1;",
            )
            .unwrap();
        }
        {
            let mut s = Store::open(&path).unwrap();
            assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
            let a = s.mine_run("a", "{}").unwrap();
            let b = s.mine_run("b", "{}").unwrap();
            assert_eq!((a, b), (1, 2));
            assert_eq!(
                s.commit(a, "x").unwrap().unwrap().reason.as_deref(),
                Some("test_file")
            );
            assert_eq!(s.commits(b).unwrap().len(), 1);
            let m = s.measure_run("m", "{}").unwrap();
            s.record_round(m, "e", 1, "{}").unwrap();
        }
        let conn = Connection::open(&path).unwrap();
        let params: String = conn
            .query_row("SELECT params FROM mine_runs WHERE key = 'a'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(params, "{\"p\":1}");
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM mine_decisions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 2);
    }

    /// A migration that fails leaves the store at the version before it, with nothing of it
    /// applied.
    #[test]
    fn a_failed_migration_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            let tx = conn.unchecked_transaction().unwrap();
            migrate_v1_mining(&tx).unwrap();
            // Makes version 2 fail half-way (its first table is created, its second is not).
            tx.execute_batch("CREATE TABLE measure_rounds (x); PRAGMA user_version = 1;")
                .unwrap();
            tx.commit().unwrap();
        }
        let e = Store::open(&path).unwrap_err();
        assert!(matches!(e, StoreError::Migrate { version: 2, .. }), "{e:?}");
        assert_eq!(version_of(&path), 1);
        assert_eq!(
            tables(&path),
            ["measure_rounds", "mine_decisions", "mine_runs"]
        );
    }

    #[test]
    fn a_store_of_a_newer_etip_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("newer.sqlite");
        let newer = SCHEMA_VERSION + 1;
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(&format!(
                "CREATE TABLE future (x); PRAGMA user_version = {newer};"
            ))
            .unwrap();
        }
        for open in [Store::open, Store::open_exclusive] {
            let e = open(&path).unwrap_err();
            assert!(
                matches!(e, StoreError::NewerSchema { found, known, .. }
                    if found == newer && known == SCHEMA_VERSION),
                "{e:?}"
            );
            let msg = e.to_string();
            assert!(
                msg.contains(&format!(
                    "written by a newer etip (schema {newer}, this etip knows up to {SCHEMA_VERSION}); \
                     use a newer etip or another --state file"
                )),
                "{msg}"
            );
        }
        assert_eq!(version_of(&path), newer);
        assert_eq!(tables(&path), ["future"]);
    }

    #[test]
    fn a_second_exclusive_open_fails_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let first = Store::open_exclusive(&path).unwrap();
        assert!(dir.path().join("state.sqlite.lock").is_file());
        let e = Store::open_exclusive(&path).unwrap_err();
        assert!(
            matches!(&e, StoreError::Locked { path: p, .. } if *p == path),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .contains("another etip run is using the state file"),
            "{e}"
        );
        // The holder (this process) is named where the system tells.
        if Path::new("/proc/locks").exists() {
            assert!(
                matches!(e, StoreError::Locked { holder: Some(pid), .. } if pid == std::process::id()),
                "{e:?}"
            );
            assert!(
                e.to_string()
                    .contains(&format!(".lock is held by pid {})", std::process::id())),
                "{e}"
            );
        }
        // A plain open (e.g. a read-only report) is not blocked.
        drop(Store::open(&path).unwrap());
        drop(first);
        let again = Store::open_exclusive(&path).unwrap();
        assert!(matches!(
            Store::open_exclusive(&path),
            Err(StoreError::Locked { .. })
        ));
        drop(again);
        drop(Store::open_exclusive(&path).unwrap());
    }

    #[test]
    fn the_holder_of_a_flock_is_read_from_proc_locks() {
        let text = "1: POSIX  ADVISORY  WRITE 77 fe:00:42 0 EOF\n\
                    2: FLOCK  ADVISORY  WRITE 1439 fe:00:753934 0 EOF\n\
                    2: -> FLOCK  ADVISORY  WRITE 1500 103:02:42 0 EOF\n\
                    3: FLOCK  ADVISORY  WRITE 18504 103:02:42 0 EOF\n\
                    odd line\n";
        assert_eq!(flock_holder(text, 0xfe, 0, 753_934), Some(1439));
        // The granted lock, not the waiter; not the POSIX lock of the same inode elsewhere.
        assert_eq!(flock_holder(text, 0x103, 2, 42), Some(18504));
        assert_eq!(flock_holder(text, 0xfe, 0, 42), None);
        assert_eq!(flock_holder("", 0xfe, 0, 42), None);
    }

    #[test]
    fn an_existing_lock_file_is_reused_without_truncating_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let lock = dir.path().join("state.sqlite.lock");
        std::fs::write(&lock, "keep").unwrap();
        drop(Store::open_exclusive(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&lock).unwrap(), "keep");
    }

    #[test]
    fn a_lock_path_that_is_not_a_regular_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        std::fs::create_dir(dir.path().join("state.sqlite.lock")).unwrap();
        let e = Store::open_exclusive(&path).unwrap_err();
        assert!(matches!(e, StoreError::LockFile { .. }), "{e:?}");
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_path_that_is_a_symlink_is_refused_and_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let target = dir.path().join("elsewhere");
        // Dangling: following it would create `elsewhere`.
        std::os::unix::fs::symlink(&target, dir.path().join("state.sqlite.lock")).unwrap();
        let e = Store::open_exclusive(&path).unwrap_err();
        assert!(matches!(e, StoreError::LockFile { .. }), "{e:?}");
        assert!(!target.exists());
        // Pointing at a regular file: still refused, and the file is untouched.
        std::fs::write(&target, "data").unwrap();
        assert!(matches!(
            Store::open_exclusive(&path),
            Err(StoreError::LockFile { .. })
        ));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "data");
    }

    #[test]
    fn a_folder_lock_is_exclusive_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock_folder(dir.path()).unwrap();
        assert!(dir.path().join(FOLDER_LOCK).is_file());
        let e = lock_folder(dir.path()).unwrap_err();
        assert!(matches!(&e, StoreError::FolderLocked { .. }), "{e:?}");
        assert!(e.is_input_error());
        assert!(e.to_string().contains("use another --out"), "{e}");
        drop(held);
        drop(lock_folder(dir.path()).unwrap());
    }

    #[test]
    fn a_file_that_is_not_a_store_is_the_users_error() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "x".repeat(4096)).unwrap();
        let e = Store::open(&text).unwrap_err();
        assert!(e.is_input_error(), "{e:?}");
        let e = Store::open(dir.path()).unwrap_err();
        assert!(e.is_input_error(), "{e:?}");
    }
}
