//! Mining a local repository's history for ETIP candidates (SPEC 2), fast, explainably and resumably.
//!
//! [`mine`] walks the first-parent history of a branch (bare or normal repository) and feeds the
//! commits of the date window, as it finds them, to `jobs` workers ([`analyze::Worker`], each with its
//! own `git2::Repository`). The workers are child processes when [`MineConfig::worker`] says how to
//! start one (the `etip` binary does: libgit2 serialises the object reads of threads, see [`procs`]),
//! threads otherwise. Each decision is recorded in the SQLite state store as it arrives; at the end the
//! candidates file is written — de-duplicated by normalised diff, in history order (oldest first) —
//! atomically (temporary file + rename). A run killed at any moment and started again with the same
//! settings skips the decided commits and writes the same file.
//!
//! ```no_run
//! use etip_core::candidate::Language;
//! use etip_mine_git::{MineConfig, NoProgress, mine};
//!
//! let cfg = MineConfig::new("/path/to/repo".into(), Language::Java, "candidates.jsonl".into());
//! let summary = mine(&cfg, &mut NoProgress).expect("mining works");
//! println!("{} candidates", summary.candidates);
//! ```

pub mod analyze;
mod feed;
pub mod linediff;
pub mod links;
pub mod procs;
pub mod rules;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use etip_core::candidate::{Candidate, Language, SCHEMA_VERSION};
use etip_store::{CommitRecord, Store};
use git2::{Oid, Repository};
use serde::Serialize;
use sha2::{Digest, Sha256};

pub use analyze::{CommitIds, Decision, EvalSettings, Worker};
pub use procs::{WorkerCommand, serve as serve_worker};
pub use rules::RejectReason;

/// Version of the mining rules: part of the state key, so a rule change never reuses old decisions.
pub const RULES_VERSION: u32 = 1;

/// Errors of the miner.
#[derive(Debug, thiserror::Error)]
pub enum MineError {
    /// The repository could not be opened.
    #[error(
        "cannot open the git repository {path}: {source}; pass a normal or bare repository directory"
    )]
    OpenRepo {
        /// The path given.
        path: PathBuf,
        /// libgit2's error.
        source: git2::Error,
    },
    /// The branch or revision to mine does not exist.
    #[error(
        "branch or revision {name:?} not found in {path}: {source}; check `git branch` in that repository"
    )]
    Branch {
        /// What was asked.
        name: String,
        /// Repository.
        path: PathBuf,
        /// libgit2's error.
        source: git2::Error,
    },
    /// A git operation on a commit failed.
    #[error(
        "git failed to {what} for commit {sha}: {source}; the repository may be corrupt or shallow"
    )]
    Git {
        /// Operation.
        what: &'static str,
        /// Commit.
        sha: String,
        /// libgit2's error.
        source: git2::Error,
    },
    /// Walking the history failed.
    #[error("cannot walk the history of {path}: {source}")]
    Walk {
        /// Repository.
        path: PathBuf,
        /// libgit2's error.
        source: git2::Error,
    },
    /// The commit to explain was not found.
    #[error(
        "commit {rev:?} not found in {path}; give a full or abbreviated SHA of that repository"
    )]
    UnknownCommit {
        /// What was asked.
        rev: String,
        /// Repository.
        path: PathBuf,
    },
    /// A date could not be parsed.
    #[error("invalid date {0:?}: use YYYY-MM-DD or RFC 3339 (2015-01-01T00:00:00Z)")]
    Date(String),
    /// The language layer failed.
    #[error(transparent)]
    Lang(#[from] etip_lang::LangError),
    /// The state store failed.
    #[error(transparent)]
    Store(#[from] etip_store::StoreError),
    /// A stored candidate could not be read back.
    #[error(
        "the state store {path} holds an unreadable candidate for {sha}: {source}; delete the state file and rerun"
    )]
    Payload {
        /// State file.
        path: PathBuf,
        /// Commit.
        sha: String,
        /// serde's error.
        source: serde_json::Error,
    },
    /// The output file could not be written.
    #[error("cannot write {path}: {source}; check the folder exists and is writable")]
    Write {
        /// File.
        path: PathBuf,
        /// I/O error.
        source: std::io::Error,
    },
    /// A worker thread panicked.
    #[error("a mining worker thread panicked; rerun to resume (decided commits are kept)")]
    WorkerPanic,
    /// A worker process could not be started.
    #[error("cannot start the mining worker process {program}: {source}")]
    WorkerSpawn {
        /// The program.
        program: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A worker process ended early or broke the protocol.
    #[error("{0}; rerun to resume (decided commits are kept)")]
    WorkerProcess(String),
    /// A worker process failed to evaluate a commit (its error, as it reported it).
    #[error("{0}")]
    WorkerFailed(String),
    /// The pipe between a worker process and its parent failed.
    #[error("the pipe between a mining worker process and its parent failed: {0}")]
    WorkerPipe(std::io::Error),
}

/// Progress of a mining run, reported from the calling thread.
pub trait Progress {
    /// Mining starts: `total` commits to evaluate now, `already` decided by an earlier run.
    fn start(&mut self, _total: u64, _already: u64) {}
    /// `n` more commits evaluated.
    fn advance(&mut self, _n: u64) {}
    /// All commits evaluated; the output is being written.
    fn finish(&mut self) {}
}

/// Progress that reports nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;
impl Progress for NoProgress {}

/// Everything that defines a mining run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MineConfig {
    /// Repository directory (normal or bare).
    pub repo: PathBuf,
    /// Language profile.
    pub lang: Language,
    /// Keep commits whose author date is at or after this (Unix seconds).
    pub since: Option<i64>,
    /// Keep commits whose author date is before this (Unix seconds).
    pub until: Option<i64>,
    /// Rule 3 limit.
    pub max_files: usize,
    /// Branch or revision to walk (default `HEAD`).
    pub branch: Option<String>,
    /// Workers: threads, or processes when `worker` is set and `jobs` is at least 2.
    pub jobs: usize,
    /// How to start a worker process. libgit2 serialises object reads of one process, so processes
    /// scale where threads do not (see [`procs`]); `None` runs the workers as threads.
    pub worker: Option<WorkerCommand>,
    /// Candidates file.
    pub out: PathBuf,
    /// State store (default: `<out>.state.sqlite`).
    pub state: Option<PathBuf>,
    /// Run rule 4 (tree-sitter).
    pub semantic: bool,
    /// `owner/name`; default from the `origin` (or first) remote's URL.
    pub repo_name: Option<String>,
    /// Rewrite the output from the store at least this often while mining.
    pub checkpoint: Duration,
}

impl MineConfig {
    /// JETO defaults: since 2015-01-01, 20 files, semantic rule on, one job per core.
    pub fn new(repo: PathBuf, lang: Language, out: PathBuf) -> Self {
        Self {
            repo,
            lang,
            since: Some(1_420_070_400),
            until: None,
            max_files: 20,
            branch: None,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            worker: None,
            out,
            state: None,
            semantic: true,
            repo_name: None,
            checkpoint: Duration::from_secs(30),
        }
    }

    /// The state store path in effect.
    pub fn state_path(&self) -> PathBuf {
        self.state.clone().unwrap_or_else(|| {
            let mut name = self
                .out
                .file_name()
                .map(|n| n.to_os_string())
                .unwrap_or_else(|| "candidates.jsonl".into());
            name.push(".state.sqlite");
            self.out.with_file_name(name)
        })
    }
}

/// Summary of a mining run (also `--format json`).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// `owner/name` if known.
    pub repo: Option<String>,
    /// Where the history was read.
    pub source: String,
    /// Language profile.
    pub language: Language,
    /// Tip commit of the walked branch.
    pub tip: String,
    /// Commits on the first-parent history.
    pub commits_in_history: u64,
    /// Of those, commits outside the date window (not scanned).
    pub outside_window: u64,
    /// Commits evaluated (the window).
    pub commits_scanned: u64,
    /// Of the scanned, decided by an earlier (interrupted) run with the same settings.
    pub resumed: u64,
    /// Commits that passed every rule, duplicates included.
    pub kept: u64,
    /// Candidates written (kept minus duplicates).
    pub candidates: u64,
    /// Rejections per rule (every reason listed, zero included; `outside_date_window` is not a
    /// rejection of a scanned commit and stays 0 here).
    pub rejected: BTreeMap<RejectReason, u64>,
    /// Candidates with at least one GitHub issue reference.
    pub with_issue_links: u64,
    /// Candidates with a JIRA key.
    pub with_jira_keys: u64,
    /// Candidates with a PR number.
    pub with_pr_number: u64,
    /// Build-tool files at the root of the tip (`mvnw`, `pom.xml`, `build.gradle`, `pyproject.toml`,
    /// `setup.py`, `setup.cfg`).
    pub build_tools: Vec<String>,
    /// Whether they meet SPEC 2's repository criterion for the language (Java: `mvnw`; Python:
    /// `pyproject.toml`, `setup.py` or `setup.cfg`). Informative: mining proceeds either way.
    pub build_tool_supported: bool,
    /// Whether rule 4 ran.
    pub semantic_filter: bool,
    /// Wall time of this invocation.
    pub elapsed_seconds: f64,
    /// Commits evaluated by this invocation per second.
    pub commits_per_second: f64,
    /// The candidates file.
    pub output: String,
    /// The state store.
    pub state: String,
}

/// Why one commit was kept or rejected (`--explain`).
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// Full SHA.
    pub sha: String,
    /// Whether the commit is on the walked first-parent history.
    pub in_first_parent_history: bool,
    /// Whether its author date is inside the window.
    pub in_date_window: bool,
    /// `kept` or `rejected`.
    pub decision: &'static str,
    /// The failed rule.
    pub reason: Option<RejectReason>,
    /// What the rule said about it.
    pub reason_text: Option<&'static str>,
    /// Offending path, counts or files.
    pub detail: Option<String>,
    /// For a kept commit: the earlier candidate it duplicates, if any (needs the state of a run).
    pub duplicate_of: Option<String>,
    /// The candidate record for a kept commit.
    pub candidate: Option<Candidate>,
}

/// `owner/name` from a remote URL (`https://github.com/o/n(.git)`, `git@github.com:o/n.git`,
/// `ssh://git@host/o/n`, `file:///x/o/n`).
pub fn repo_name_from_url(url: &str) -> Option<String> {
    let url = url.trim().trim_end_matches('/');
    let url = url.strip_suffix(".git").unwrap_or(url);
    let path = if let Some((_, rest)) = url.split_once("://") {
        rest.split_once('/').map(|(_, p)| p)?
    } else if let Some((_, rest)) = url.split_once(':') {
        rest
    } else {
        url
    };
    let mut parts = path.rsplit('/').filter(|s| !s.is_empty());
    let name = parts.next()?;
    let owner = parts.next()?;
    Some(format!("{owner}/{name}"))
}

/// Parses `YYYY-MM-DD` (midnight UTC; with `end_of_day`, the following midnight) or RFC 3339.
pub fn parse_date(s: &str, end_of_day: bool) -> Result<i64, MineError> {
    use time::format_description::well_known::Rfc3339;
    if let Ok(t) = time::OffsetDateTime::parse(s, &Rfc3339) {
        return Ok(t.unix_timestamp());
    }
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    let d = time::Date::parse(s, &fmt).map_err(|_| MineError::Date(s.to_string()))?;
    let t = d.midnight().assume_utc().unix_timestamp();
    Ok(if end_of_day { t + 86_400 } else { t })
}

struct Prepared {
    repo_path: PathBuf,
    settings: Arc<EvalSettings>,
    tip: Oid,
    build_tools: Vec<etip_lang::profile::BuildTool>,
}

fn prepare(cfg: &MineConfig) -> Result<Prepared, MineError> {
    // Objects are read, not received: re-hashing every object read (libgit2's default) costs more
    // than the whole tree diff.
    git2::opts::strict_hash_verification(false);
    let repo = Repository::open(&cfg.repo).map_err(|source| MineError::OpenRepo {
        path: cfg.repo.clone(),
        source,
    })?;
    let repo_path = std::fs::canonicalize(&cfg.repo).unwrap_or_else(|_| cfg.repo.clone());
    let rev = cfg.branch.clone().unwrap_or_else(|| "HEAD".to_string());
    let tip = repo
        .revparse_single(&rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(|source| MineError::Branch {
            name: rev.clone(),
            path: cfg.repo.clone(),
            source,
        })?
        .id();
    let build_tools = match repo.find_commit(tip).and_then(|c| c.tree()) {
        Ok(tree) => {
            etip_lang::profile::detect_build_tools(&mut |name| tree.get_name(name).is_some())
        }
        Err(_) => Vec::new(),
    };

    let repo_name = cfg.repo_name.clone().or_else(|| {
        let remotes = repo.remotes().ok()?;
        let names: Vec<String> = remotes
            .iter()
            .filter_map(|r| r.ok().flatten().map(str::to_string))
            .collect();
        let pick = if names.iter().any(|n| n == "origin") {
            "origin".to_string()
        } else {
            names.first()?.clone()
        };
        let remote = repo.find_remote(&pick).ok()?;
        remote.url().ok().and_then(repo_name_from_url)
    });
    let id_prefix = match &repo_name {
        Some(r) => r.replace('/', "__"),
        None => {
            let mut p = repo_path.as_path();
            if p.file_name().is_some_and(|n| n == ".git") {
                p = p.parent().unwrap_or(p);
            }
            let n = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "repo".into());
            n.strip_suffix(".git").map(str::to_string).unwrap_or(n)
        }
    };
    let settings = Arc::new(EvalSettings {
        lang: cfg.lang,
        max_files: cfg.max_files,
        semantic: cfg.semantic,
        repo_name,
        source: repo_path.to_string_lossy().into_owned(),
        id_prefix,
    });
    Ok(Prepared {
        repo_path,
        settings,
        tip,
        build_tools,
    })
}

/// Follows first parents from `tip`, newest first, calling `visit` with each commit's ids and
/// author time until it returns `false`. Each commit is read once: its first parent's tree is
/// known when the parent is read, so each commit is handed on one step later.
fn walk(
    repo: &Repository,
    tip: Oid,
    mut visit: impl FnMut(CommitIds, i64) -> bool,
) -> Result<(), MineError> {
    let git = |oid: Oid| {
        move |source| MineError::Git {
            what: "read commit",
            sha: oid.to_string(),
            source,
        }
    };
    let odb = repo.odb().map_err(git(tip))?;
    // The header of the stored commit is enough (tree, first parent, author time); libgit2's parser
    // decides the commits whose header does not read plainly.
    let read = |oid: Oid| -> Result<(Oid, Option<Oid>, i64), MineError> {
        let obj = odb.read(oid).map_err(git(oid))?;
        if obj.kind() == git2::ObjectType::Commit
            && let Some(header) = commit_header(obj.data())
        {
            return Ok(header);
        }
        let c = repo.find_commit(oid).map_err(git(oid))?;
        Ok((
            c.tree_id(),
            c.parent_id(0).ok(),
            c.author().when().seconds(),
        ))
    };
    let mut held: Option<(CommitIds, i64)> = None;
    let mut next = Some(tip);
    while let Some(oid) = next {
        let (tree, parent, time) = read(oid)?;
        if let Some((mut ids, time)) = held.take() {
            ids.parent_tree = Some(tree);
            if !visit(ids, time) {
                return Ok(());
            }
        }
        next = parent;
        let ids = CommitIds {
            commit: oid,
            tree,
            parent,
            parent_tree: None,
        };
        held = Some((ids, time));
    }
    if let Some((ids, time)) = held {
        visit(ids, time);
    }
    Ok(())
}

/// Tree, first parent and author time from a stored commit whose header reads plainly:
/// `tree <hex>`, `parent <hex>` lines, then `author … <email> <seconds> <±hhmm>`.
fn commit_header(data: &[u8]) -> Option<(Oid, Option<Oid>, i64)> {
    let mut lines = data.split(|b| *b == b'\n');
    let hex = |s: &[u8]| -> Option<Oid> {
        (s.len() == 40)
            .then(|| std::str::from_utf8(s).ok())
            .flatten()
            .and_then(|s| Oid::from_str(s).ok())
    };
    let tree = hex(lines.next()?.strip_prefix(b"tree ")?)?;
    let mut parent = None;
    for line in lines {
        if let Some(p) = line.strip_prefix(b"parent ") {
            let p = hex(p)?;
            parent.get_or_insert(p);
        } else {
            let author = line.strip_prefix(b"author ")?;
            let gt = memchr::memrchr(b'>', author)?;
            let mut tail = author[gt + 1..].split(|b| *b == b' ');
            let (empty, secs, tz) = (tail.next()?, tail.next()?, tail.next()?);
            let tz_ok = tz.len() == 5
                && (tz[0] == b'+' || tz[0] == b'-')
                && tz[1..].iter().all(u8::is_ascii_digit);
            if !empty.is_empty() || tail.next().is_some() || !tz_ok || secs.is_empty() {
                return None;
            }
            if !secs.iter().all(u8::is_ascii_digit) || secs.len() > 15 {
                return None;
            }
            let time: i64 = std::str::from_utf8(secs).ok()?.parse().ok()?;
            return Some((tree, parent, time));
        }
    }
    None
}

/// The first-parent history from `tip`, oldest first, with each commit's author time.
fn chain(repo: &Repository, tip: Oid) -> Result<Vec<(Oid, i64)>, MineError> {
    let mut chain = Vec::new();
    walk(repo, tip, |ids, time| {
        chain.push((ids.commit, time));
        true
    })?;
    chain.reverse();
    Ok(chain)
}

fn in_window(cfg: &MineConfig, t: i64) -> bool {
    cfg.since.is_none_or(|s| t >= s) && cfg.until.is_none_or(|u| t < u)
}

fn run_key(cfg: &MineConfig, p: &Prepared) -> (String, String) {
    let params = serde_json::json!({
        "rules_version": RULES_VERSION,
        "schema_version": SCHEMA_VERSION,
        "source": p.settings.source,
        "repo": p.settings.repo_name,
        "language": cfg.lang,
        "branch": cfg.branch,
        "since": cfg.since,
        "until": cfg.until,
        "max_files": cfg.max_files,
        "semantic": cfg.semantic,
    })
    .to_string();
    let key = hex::encode(Sha256::digest(params.as_bytes()));
    (key, params)
}

/// The end of a run: the first-parent history (oldest first, with author times), its date window,
/// and what the candidates file holds.
type Finished = (Vec<(Oid, i64)>, Arc<Vec<Oid>>, Counts);

/// Mines the history described by `cfg`, resuming from its state store, and writes the candidates file.
pub fn mine(cfg: &MineConfig, progress: &mut dyn Progress) -> Result<Summary, MineError> {
    let started = Instant::now();
    let p = prepare(cfg)?;
    let state_path = cfg.state_path();
    let mut store = Store::open(&state_path)?;
    let (key, params) = run_key(cfg, &p);
    let run = store.mine_run(&key, &params)?;
    let decided: HashSet<Oid> = store
        .decided(run)?
        .iter()
        .filter_map(|sha| Oid::from_str(sha).ok())
        .collect();
    tracing::info!(
        decided = decided.len(),
        state = %state_path.display(),
        "mining {}",
        p.settings.source
    );

    let jobs = cfg.jobs.max(1);
    let feed = feed::Feed::default();
    let stop = AtomicBool::new(false);
    let (tx, rx) = crossbeam_channel::bounded::<Vec<Result<CommitRecord, MineError>>>(64);
    let hello = match &cfg.worker {
        Some(_) if jobs > 1 => Some(
            serde_json::to_string(&procs::Hello {
                repo_path: p.repo_path.clone(),
                settings: (*p.settings).clone(),
            })
            .expect("settings always serialise"),
        ),
        _ => None,
    };
    let mut outcome: Result<(), MineError> = Ok(());
    let mut walked: Result<Vec<(Oid, i64)>, MineError> = Ok(Vec::new());
    let mut finished: Result<Finished, MineError> = Err(MineError::WorkerPanic);
    std::thread::scope(|scope| {
        // The walk feeds the workers as it goes.
        let walker = {
            let (feed, stop, decided) = (&feed, &stop, &decided);
            let repo_path = p.repo_path.clone();
            scope.spawn(move || -> Result<Vec<(Oid, i64)>, MineError> {
                let result = (|| {
                    let repo =
                        Repository::open(&repo_path).map_err(|source| MineError::OpenRepo {
                            path: repo_path.clone(),
                            source,
                        })?;
                    let mut chain = Vec::new();
                    let mut fresh = Vec::new();
                    let mut resumed = 0;
                    walk(&repo, p.tip, |ids, time| {
                        chain.push((ids.commit, time));
                        if in_window(cfg, time) {
                            if decided.contains(&ids.commit) {
                                resumed += 1;
                            } else {
                                fresh.push(ids);
                                if fresh.len() >= 64 {
                                    feed.push(&mut fresh);
                                }
                            }
                        }
                        !stop.load(Ordering::Relaxed)
                    })?;
                    feed.push(&mut fresh);
                    tracing::debug!(commits = chain.len(), elapsed = ?started.elapsed(), "walked the first-parent history");
                    chain.reverse();
                    let window = chain
                        .iter()
                        .filter(|(_, t)| in_window(cfg, *t))
                        .map(|(o, _)| *o)
                        .collect();
                    feed.finish(resumed, window);
                    Ok(chain)
                })();
                if result.is_err() {
                    stop.store(true, Ordering::Relaxed);
                    feed.close();
                }
                result
            })
        };
        for _ in 0..jobs {
            let tx = tx.clone();
            let (feed, stop) = (&feed, &stop);
            if let (Some(cmd), Some(hello)) = (&cfg.worker, &hello) {
                scope.spawn(move || procs::drive(cmd, hello, || feed.grab(jobs), stop, tx));
                continue;
            }
            let settings = Arc::clone(&p.settings);
            let repo_path = p.repo_path.clone();
            scope.spawn(move || {
                let mut worker = match Worker::new(&repo_path, settings) {
                    Ok(w) => w,
                    Err(e) => {
                        let _ = tx.send(vec![Err(e)]);
                        return;
                    }
                };
                while !stop.load(Ordering::Relaxed) {
                    let Some(block) = feed.grab(jobs) else { break };
                    let mut batch = Vec::with_capacity(16);
                    for ids in &block {
                        let r = worker.evaluate_ids(ids).map(|d| to_record(ids.commit, d));
                        let failed = r.is_err();
                        batch.push(r);
                        if (batch.len() >= 16 || failed)
                            && tx.send(std::mem::take(&mut batch)).is_err()
                        {
                            return;
                        }
                        if failed || stop.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                    if !batch.is_empty() && tx.send(batch).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut batch: Vec<CommitRecord> = Vec::new();
        let mut last_flush = Instant::now();
        let mut last_checkpoint = Instant::now();
        // The progress bar starts when the walk has counted the work; what was recorded before
        // is reported then.
        let mut recorded = 0;
        let mut started_bar = false;
        let mut report = |n: u64, progress: &mut dyn Progress| {
            recorded += n;
            if !started_bar {
                let Some((pending, resumed)) = feed.totals() else {
                    return;
                };
                progress.start(pending, resumed);
                started_bar = true;
                progress.advance(recorded);
            } else if n > 0 {
                progress.advance(n);
            }
        };
        // This invocation's decisions, for the output (unless earlier runs decided some too).
        let mut memory = decided.is_empty().then(Vec::new);
        let mut flush = |batch: &mut Vec<CommitRecord>,
                         store: &mut Store,
                         progress: &mut dyn Progress|
         -> Result<(), MineError> {
            if !batch.is_empty() {
                store.record_commits(run, batch)?;
                report(batch.len() as u64, progress);
                if let Some(kept) = memory.as_mut() {
                    kept.append(batch);
                }
                batch.clear();
            }
            Ok(())
        };
        for msg in rx.iter().flatten() {
            let step = (|| -> Result<(), MineError> {
                batch.push(msg?);
                if batch.len() >= 256 || last_flush.elapsed() >= Duration::from_millis(200) {
                    flush(&mut batch, &mut store, progress)?;
                    last_flush = Instant::now();
                    if last_checkpoint.elapsed() >= cfg.checkpoint {
                        if let Some(window) = feed.window() {
                            write_output(cfg, &state_path, &store, run, &window, None)?;
                        }
                        last_checkpoint = Instant::now();
                    }
                }
                Ok(())
            })();
            if let Err(e) = step {
                stop.store(true, Ordering::Relaxed);
                feed.close();
                outcome = Err(e);
                break;
            }
        }
        if outcome.is_ok() {
            outcome = flush(&mut batch, &mut store, progress);
        } else {
            // Keep what was decided before the error.
            let _ = flush(&mut batch, &mut store, progress);
        }
        // Drain so that blocked workers can finish.
        for _ in rx.iter() {}
        walked = walker.join().unwrap_or(Err(MineError::WorkerPanic));
        // When nothing was recorded, the bar starts (and ends) here.
        report(0, progress);
        // The output is written while the worker processes exit.
        finished = (|| {
            outcome?;
            let chain = std::mem::replace(&mut walked, Ok(Vec::new()))?;
            if !feed.drained() {
                return Err(MineError::WorkerPanic);
            }
            let window = feed.window().ok_or(MineError::WorkerPanic)?;
            progress.finish();
            tracing::debug!(elapsed = ?started.elapsed(), "every commit decided");
            let counts = write_output(cfg, &state_path, &store, run, &window, memory.take())?;
            tracing::debug!(elapsed = ?started.elapsed(), "candidates written");
            Ok((chain, window, counts))
        })();
    });
    let (chain, window, counts) = finished?;
    let (pending, resumed) = feed.totals().unwrap_or_default();

    let elapsed = started.elapsed().as_secs_f64();
    let mut rejected: BTreeMap<RejectReason, u64> =
        RejectReason::ALL.into_iter().map(|r| (r, 0)).collect();
    for (r, n) in counts.rejected {
        *rejected.entry(r).or_default() += n;
    }
    rejected.insert(RejectReason::Duplicate, counts.duplicates);
    Ok(Summary {
        repo: p.settings.repo_name.clone(),
        source: p.settings.source.clone(),
        language: cfg.lang,
        tip: p.tip.to_string(),
        commits_in_history: chain.len() as u64,
        outside_window: (chain.len() - window.len()) as u64,
        commits_scanned: window.len() as u64,
        resumed,
        kept: counts.kept,
        candidates: counts.kept - counts.duplicates,
        rejected,
        with_issue_links: counts.with_issue_links,
        with_jira_keys: counts.with_jira_keys,
        with_pr_number: counts.with_pr_number,
        build_tools: p
            .build_tools
            .iter()
            .map(|t| t.marker().to_string())
            .collect(),
        build_tool_supported: etip_lang::profile::build_tool_supported(cfg.lang, &p.build_tools),
        semantic_filter: cfg.semantic,
        elapsed_seconds: elapsed,
        commits_per_second: if elapsed > 0.0 {
            pending as f64 / elapsed
        } else {
            0.0
        },
        output: cfg.out.to_string_lossy().into_owned(),
        state: state_path.to_string_lossy().into_owned(),
    })
}

pub(crate) fn to_record(oid: Oid, d: Decision) -> CommitRecord {
    let sha = oid.to_string();
    match d {
        Decision::Kept(c) => {
            let payload = serde_json::to_string(&c).expect("a candidate always serialises");
            let detail = c.changed_functions.join(", ");
            CommitRecord::kept(&sha, payload, c.diff_hash.clone(), detail)
        }
        Decision::Rejected { reason, detail } => {
            CommitRecord::rejected(&sha, reason.as_str(), &detail)
        }
    }
}

#[derive(Default)]
struct Counts {
    kept: u64,
    duplicates: u64,
    rejected: HashMap<RejectReason, u64>,
    with_issue_links: u64,
    with_jira_keys: u64,
    with_pr_number: u64,
}

/// Writes the candidates file from the store: history order (oldest first), one line per distinct
/// normalised diff (the earliest commit), later equal diffs listed in `duplicates`.
/// `fresh`: every decision of the run when this invocation made them all (nothing was resumed), so
/// that the store need not be read back.
fn write_output(
    cfg: &MineConfig,
    state_path: &Path,
    store: &Store,
    run: i64,
    window: &[Oid],
    fresh: Option<Vec<CommitRecord>>,
) -> Result<Counts, MineError> {
    let all = match fresh {
        Some(records) => records,
        None => store.commits(run)?,
    };
    let mut by_sha: HashMap<String, CommitRecord> =
        all.into_iter().map(|r| (r.sha.clone(), r)).collect();
    let mut counts = Counts::default();
    // A kept commit's line is its stored payload as it is, unless later duplicates must be listed in
    // it: only those candidates are parsed whole and written again.
    enum Line {
        Stored(String),
        Edited(Box<Candidate>),
    }
    let payload_err = |sha: &str, source| MineError::Payload {
        path: state_path.to_path_buf(),
        sha: sha.to_string(),
        source,
    };
    let mut kept: Vec<(String, Line)> = Vec::new();
    let mut first_with_hash: HashMap<String, usize> = HashMap::new();
    for oid in window {
        let Some(rec) = by_sha.remove(&oid.to_string()) else {
            continue;
        };
        if !rec.kept {
            if let Some(r) = rec.reason.as_deref().and_then(RejectReason::from_name) {
                *counts.rejected.entry(r).or_default() += 1;
            }
            continue;
        }
        counts.kept += 1;
        let payload = rec.payload.unwrap_or_default();
        let hash = match rec.diff_hash {
            Some(h) => h,
            None => {
                serde_json::from_str::<Candidate>(&payload)
                    .map_err(|e| payload_err(&rec.sha, e))?
                    .diff_hash
            }
        };
        match first_with_hash.get(&hash) {
            Some(&i) => {
                counts.duplicates += 1;
                let (first, line) = &mut kept[i];
                if let Line::Stored(p) = line {
                    let c: Candidate =
                        serde_json::from_str(p).map_err(|e| payload_err(first, e))?;
                    *line = Line::Edited(Box::new(c));
                }
                if let Line::Edited(c) = line {
                    c.duplicates.push(rec.sha);
                }
            }
            None => {
                first_with_hash.insert(hash, kept.len());
                kept.push((rec.sha, Line::Stored(payload)));
            }
        }
    }
    /// What the summary counts of a candidate, read without building the whole record.
    #[derive(serde::Deserialize)]
    struct Links {
        #[serde(default)]
        issues: Vec<LinkRef>,
        #[serde(default)]
        pr_number: Option<u64>,
    }
    #[derive(serde::Deserialize)]
    struct LinkRef {
        #[serde(default)]
        number: Option<u64>,
        #[serde(default)]
        key: Option<String>,
    }
    let mut buf = Vec::new();
    for (sha, line) in &kept {
        let (issues, pr) = match line {
            Line::Stored(p) => {
                let l: Links = serde_json::from_str(p).map_err(|e| payload_err(sha, e))?;
                buf.extend_from_slice(p.as_bytes());
                let issues: Vec<(bool, bool)> = l
                    .issues
                    .iter()
                    .map(|i| (i.number.is_some(), i.key.is_some()))
                    .collect();
                (issues, l.pr_number.is_some())
            }
            Line::Edited(c) => {
                serde_json::to_writer(&mut buf, c).expect("a candidate always serialises");
                let issues = c
                    .issues
                    .iter()
                    .map(|i| (i.number.is_some(), i.key.is_some()))
                    .collect();
                (issues, c.pr_number.is_some())
            }
        };
        buf.push(b'\n');
        counts.with_issue_links += u64::from(issues.iter().any(|i| i.0));
        counts.with_jira_keys += u64::from(issues.iter().any(|i| i.1));
        counts.with_pr_number += u64::from(pr);
    }
    atomic_write(&cfg.out, &buf)?;
    Ok(counts)
}

fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), MineError> {
    let err = |source| MineError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(
        path.file_name()
            .unwrap_or_else(|| "candidates.jsonl".as_ref()),
    );
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let mut f = std::fs::File::create(&tmp).map_err(err)?;
    f.write_all(bytes).map_err(err)?;
    f.sync_all().map_err(err)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(err)
}

/// Explains why `rev` is kept or rejected under `cfg` (evaluated afresh; the state store, when it
/// exists, tells whether a kept commit duplicates an earlier one).
pub fn explain(cfg: &MineConfig, rev: &str) -> Result<Explanation, MineError> {
    let p = prepare(cfg)?;
    let repo = Repository::open(&p.repo_path).map_err(|source| MineError::OpenRepo {
        path: cfg.repo.clone(),
        source,
    })?;
    let oid = repo
        .revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(|_| MineError::UnknownCommit {
            rev: rev.to_string(),
            path: cfg.repo.clone(),
        })?
        .id();
    let chain = chain(&repo, p.tip)?;
    let position = chain.iter().position(|(o, _)| *o == oid);
    let author_time = repo
        .find_commit(oid)
        .map_err(|source| MineError::Git {
            what: "read commit",
            sha: oid.to_string(),
            source,
        })?
        .author()
        .when()
        .seconds();
    let in_date_window = in_window(cfg, author_time);
    let mut worker = Worker::new(&p.repo_path, Arc::clone(&p.settings))?;
    let decision = if in_date_window {
        worker.evaluate(oid)?
    } else {
        Decision::Rejected {
            reason: RejectReason::OutsideDateWindow,
            detail: "author date outside the window".into(),
        }
    };
    let mut out = Explanation {
        sha: oid.to_string(),
        in_first_parent_history: position.is_some(),
        in_date_window,
        decision: "rejected",
        reason: None,
        reason_text: None,
        detail: None,
        duplicate_of: None,
        candidate: None,
    };
    match decision {
        Decision::Rejected { reason, detail } => {
            out.reason = Some(reason);
            out.reason_text = Some(reason.describe());
            out.detail = Some(detail);
        }
        Decision::Kept(c) => {
            out.decision = "kept";
            let state = cfg.state_path();
            if let (Some(pos), true) = (position, state.exists()) {
                let mut store = Store::open(&state)?;
                let (key, params) = run_key(cfg, &p);
                let run = store.mine_run(&key, &params)?;
                let earlier: HashSet<String> = chain[..pos]
                    .iter()
                    .filter(|(_, t)| in_window(cfg, *t))
                    .map(|(o, _)| o.to_string())
                    .collect();
                let mut first: Option<(usize, String)> = None;
                for r in store.commits(run)? {
                    if r.kept
                        && r.diff_hash.as_deref() == Some(c.diff_hash.as_str())
                        && earlier.contains(&r.sha)
                    {
                        let at = chain
                            .iter()
                            .position(|(o, _)| o.to_string() == r.sha)
                            .unwrap_or(usize::MAX);
                        if first.as_ref().is_none_or(|(i, _)| at < *i) {
                            first = Some((at, r.sha.clone()));
                        }
                    }
                }
                if let Some((_, sha)) = first {
                    out.decision = "rejected";
                    out.reason = Some(RejectReason::Duplicate);
                    out.reason_text = Some(RejectReason::Duplicate.describe());
                    out.detail = Some(format!("duplicate of {sha}"));
                    out.duplicate_of = Some(sha);
                }
            }
            out.candidate = Some(*c);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_urls() {
        for u in [
            "https://github.com/netty/netty.git",
            "https://github.com/netty/netty",
            "git@github.com:netty/netty.git",
            "ssh://git@github.com/netty/netty",
        ] {
            assert_eq!(repo_name_from_url(u).as_deref(), Some("netty/netty"), "{u}");
        }
    }

    #[test]
    fn dates() {
        assert_eq!(parse_date("2015-01-01", false).unwrap(), 1_420_070_400);
        assert_eq!(parse_date("2015-01-01", true).unwrap(), 1_420_156_800);
        assert_eq!(
            parse_date("2015-01-01T01:00:00+01:00", false).unwrap(),
            1_420_070_400
        );
        assert!(parse_date("yesterday", false).is_err());
    }

    /// The plain-header reader agrees with libgit2's commit parser, and leaves odd headers to it.
    #[test]
    fn commit_headers_read_like_libgit2() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let tree = repo.treebuilder(None).unwrap().write().unwrap();
        let odb = repo.odb().unwrap();
        let t = tree.to_string();
        let mut parents: Vec<Oid> = Vec::new();
        let mut raw_commits = vec![
            format!(
                "tree {t}\nauthor A <a@x> 1420070400 +0000\ncommitter A <a@x> 1 +0000\n\nroot\n"
            ),
            format!("tree {t}\nauthor Odd > Name <a@x> 0 -0530\ncommitter C <c@x> 5 +0100\n\nm\n"),
            format!(
                "tree {t}\nauthor N <n@x> 1700000000 +1400\ncommitter C <c@x> 5 +0100\nencoding ISO-8859-1\n\nm\n"
            ),
            // Odd headers: no time zone, a negative time, no author line at all.
            format!("tree {t}\nauthor N <n@x> 1700000000\ncommitter C <c@x> 5 +0100\n\nm\n"),
            format!("tree {t}\nauthor N <n@x> -5 +0000\ncommitter C <c@x> 5 +0100\n\nm\n"),
            format!("tree {t}\ncommitter C <c@x> 5 +0100\n\nm\n"),
        ];
        for (k, raw) in raw_commits.drain(..).enumerate() {
            // Chain them: every commit but the first gets the previous one (and a second parent).
            let mut text = raw.clone();
            if let Some(p) = parents.last() {
                let mut extra = format!("parent {p}\n");
                if k % 2 == 0 {
                    extra.push_str(&format!("parent {}\n", parents[0]));
                }
                let at = raw.find('\n').unwrap() + 1;
                text = format!("{}{extra}{}", &raw[..at], &raw[at..]);
            }
            let oid = odb
                .write(git2::ObjectType::Commit, text.as_bytes())
                .unwrap();
            let stored = odb.read(oid).unwrap();
            let plain = commit_header(stored.data());
            match repo.find_commit(oid) {
                Ok(c) => {
                    if let Some((tree_id, parent, time)) = plain {
                        assert_eq!(tree_id, c.tree_id(), "{text}");
                        assert_eq!(parent, c.parent_id(0).ok(), "{text}");
                        assert_eq!(time, c.author().when().seconds(), "{text}");
                    }
                }
                Err(_) => assert_eq!(plain, None, "{text}"),
            }
            assert_eq!(plain.is_some(), k < 3, "{text}");
            parents.push(oid);
        }
        // The walk reads the plain headers itself and the odd ones through libgit2.
        let tip = *parents.last().unwrap();
        let walked = chain(&repo, tip);
        let libgit2_reads_all = parents.iter().all(|p| repo.find_commit(*p).is_ok());
        match walked {
            Ok(chain) => {
                assert!(libgit2_reads_all);
                assert_eq!(chain.len(), parents.len());
                for ((oid, time), p) in chain.iter().zip(&parents) {
                    assert_eq!(oid, p);
                    if let Ok(c) = repo.find_commit(*oid) {
                        assert_eq!(*time, c.author().when().seconds());
                    }
                }
            }
            // libgit2 refuses a commit without an author: the walk reports which one.
            Err(e) => {
                assert!(!libgit2_reads_all);
                assert!(e.to_string().contains(&tip.to_string()), "{e}");
            }
        }
    }
}
