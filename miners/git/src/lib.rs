//! Mining a local repository's history for ETIP candidates (rules §2), fast, explainably and resumably.
//!
//! [`mine`] walks the first-parent history of a branch (bare or normal repository) and feeds the
//! commits of the date window, as it finds them, to `jobs` workers ([`analyze::Worker`], each with its
//! own `git2::Repository`). The workers are child processes when [`MineConfig::worker`] says how to
//! start one (the `etip` binary does: libgit2 serialises the object reads of threads, see [`procs`]),
//! threads otherwise; they judge the rules, and the parent adds each candidate's issue links
//! ([`links`], with merged-branch walks on one commit graph for the run) as it records the decision
//! in the SQLite state store. At the end the candidates file is written — de-duplicated by
//! normalised diff, in history order (oldest first) — atomically (temporary file + rename). A run
//! killed at any moment and started again with the same settings skips the decided commits and
//! writes the same file.
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
pub mod dates;
mod explain;
mod feed;
mod history;
pub mod linediff;
mod linker;
pub mod links;
pub mod merged;
mod native;
mod output;
pub mod pack;
pub mod procs;
pub mod rules;
mod run;
pub mod xdiff;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use etip_core::candidate::{Language, SCHEMA_VERSION};
pub use etip_toolchain::policy::{self, PathPolicy, PathRule};
use git2::{Oid, Repository};
use serde::Serialize;
use sha2::{Digest, Sha256};

pub use analyze::{Decision, EvalSettings, Worker};
pub use dates::{parse_date, rfc3339};
pub use explain::{Explanation, evaluate_range, explain, rebased_range};
pub use history::CommitIds;
pub use history::Unreadable;
pub use procs::{WorkerCommand, serve as serve_worker};
pub use rules::RejectReason;
pub use run::mine;
pub(crate) use run::to_record;

/// Version of the mining rules: part of the state key, so a rule change never reuses old decisions.
pub const RULES_VERSION: u32 = 2;

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
    /// The date window holds no instant.
    #[error(
        "the date window is empty: its end, --until ({}; a date-only --until includes its day), is not after --since ({}); give an --until after --since",
        rfc3339(*.until, 0),
        rfc3339(*.since, 0)
    )]
    EmptyWindow {
        /// Start of the window (Unix seconds).
        since: i64,
        /// End of the window (Unix seconds, exclusive).
        until: i64,
    },
    /// The path policy cannot be used (a bad glob, globs with the strict rule).
    #[error("{0}")]
    Paths(#[from] etip_toolchain::policy::PolicyError),
    /// The repository is a shallow clone: its history is cut.
    #[error(
        "{} is a shallow clone; fetch its full history with `git fetch --unshallow` in it, or mine a full clone or mirror",
        .path.display()
    )]
    Shallow {
        /// Repository.
        path: PathBuf,
    },
    /// The commit asked for exists but git cannot parse it.
    #[error("commit {} cannot be read: {}", .0.sha, .0.problem)]
    UnreadableCommit(Unreadable),
    /// The candidates path names something etip must not replace.
    #[error(
        "cannot write the candidates to {}: it {problem}; etip writes only a new file or over a regular file",
        .path.display()
    )]
    Output {
        /// The path given.
        path: PathBuf,
        /// What it is.
        problem: &'static str,
    },
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
    /// JIRA prefixes of the project besides those its history shows ([`links::jira_projects`]).
    pub jira_projects: Vec<String>,
    /// Classify each candidate's commit message with the offline classifier
    /// ([`etip_classify::Offline`]), recorded as its `classification`.
    pub classify: bool,
    /// Rule 1's path policy: which changed files are code, set aside or disqualifying.
    pub paths: PathPolicy,
    /// Rule 4 on whole-file parses only (see [`EvalSettings::whole_file`]).
    pub whole_file: bool,
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
            jira_projects: Vec::new(),
            classify: false,
            paths: PathPolicy::default(),
            whole_file: false,
        }
    }

    /// Refuses a date window that holds no instant (`until` at or before `since`), and a path
    /// policy that does not compile.
    pub fn check_window(&self) -> Result<(), MineError> {
        etip_toolchain::policy::PathMatcher::new(self.lang, &self.paths)?;
        match (self.since, self.until) {
            (Some(since), Some(until)) if until <= since => {
                Err(MineError::EmptyWindow { since, until })
            }
            _ => Ok(()),
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
    /// Of those, commits git cannot parse (e.g. a malformed author date): skipped, neither in nor
    /// outside the window; listed in `unreadable`.
    pub skipped_unreadable: u64,
    /// The skipped commits, oldest first, with what is wrong with each.
    pub unreadable: Vec<Unreadable>,
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
    /// The JIRA prefixes taken as the project's (found in the history or configured): only their
    /// keys are links.
    pub jira_projects: Vec<String>,
    /// Candidates per classifier answer (`yes`, `no`, `unclassified`) when classified.
    pub classified: BTreeMap<String, u64>,
    /// The classifier that answered (`--classify`).
    pub classifier: Option<String>,
    /// Candidates with a PR number.
    pub with_pr_number: u64,
    /// Build-tool files at the root of the tip (`mvnw`, `pom.xml`, `build.gradle`, `pyproject.toml`,
    /// `setup.py`, `setup.cfg`).
    pub build_tools: Vec<String>,
    /// Whether they meet the repository criterion (docs/rules.md §2.1) for the language (Java: `mvnw`; Python:
    /// `pyproject.toml`, `setup.py` or `setup.cfg`). Informative: mining proceeds either way.
    pub build_tool_supported: bool,
    /// Whether rule 4 ran.
    pub semantic_filter: bool,
    /// Workers of this invocation (processes, or one thread for 1).
    pub jobs: usize,
    /// Wall time of this invocation.
    pub elapsed_seconds: f64,
    /// Commits evaluated by this invocation per second.
    pub commits_per_second: f64,
    /// The candidates file.
    pub output: String,
    /// The state store.
    pub state: String,
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

struct Prepared {
    repo: Repository,
    repo_path: PathBuf,
    settings: Arc<EvalSettings>,
    tip: Oid,
    build_tools: Vec<etip_lang::profile::BuildTool>,
    /// The first-parent history from the tip, newest first, with each commit's author time.
    walked: Vec<(CommitIds, Option<i64>)>,
    /// The commits of `walked` git cannot parse, newest first.
    skipped: Vec<history::Unreadable>,
}

impl Prepared {
    /// The walked history as a [`history::Chain`] (oldest first).
    fn chain(&self) -> history::Chain {
        let chain = self
            .walked
            .iter()
            .rev()
            .map(|(ids, t)| (ids.commit, *t))
            .collect();
        (chain, self.skipped.iter().rev().cloned().collect())
    }
}

/// Opens the repository and settles the settings, all but the JIRA prefixes (the walk finds them).
fn open(cfg: &MineConfig) -> Result<Prepared, MineError> {
    // Objects are read, not received: re-hashing every object read (libgit2's default) costs more
    // than the whole tree diff.
    git2::opts::strict_hash_verification(false);
    let repo = Repository::open(&cfg.repo).map_err(|source| MineError::OpenRepo {
        path: cfg.repo.clone(),
        source,
    })?;
    if repo.is_shallow() {
        return Err(MineError::Shallow {
            path: cfg.repo.clone(),
        });
    }
    let repo_path = std::fs::canonicalize(&cfg.repo).unwrap_or_else(|_| cfg.repo.clone());
    let rev = cfg.branch.clone().unwrap_or_else(|| "HEAD".to_string());
    let tip = history::resolve_commit(&repo, &rev).map_err(|source| MineError::Branch {
        name: rev.clone(),
        path: cfg.repo.clone(),
        source,
    })?;
    let build_tools = match history::commit_tree(&repo, tip).map(|t| repo.find_tree(t)) {
        Some(Ok(tree)) => {
            etip_lang::profile::detect_build_tools(&mut |name| tree.get_name(name).is_some())
        }
        _ => Vec::new(),
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
        jira_projects: Vec::new(),
        classify: cfg.classify,
        paths: cfg.paths.clone(),
        whole_file: cfg.whole_file,
    });
    Ok(Prepared {
        repo,
        repo_path,
        settings,
        tip,
        build_tools,
        walked: Vec::new(),
        skipped: Vec::new(),
    })
}

/// [`open`], then [`Prepared::walk`].
fn prepare(cfg: &MineConfig) -> Result<Prepared, MineError> {
    let mut p = open(cfg)?;
    p.walk(cfg, |_| None, |_, _| {})?;
    Ok(p)
}

impl Prepared {
    /// One read of the first-parent history: the commits to mine, and the project's JIRA
    /// prefixes (those whose keys open commit subjects, and the configured) in the settings.
    /// `raw` reads stored commits where it can ([`history::walk`]); `visit` sees each commit as
    /// the walk reads it, newest first.
    fn walk(
        &mut self,
        cfg: &MineConfig,
        raw: impl FnMut(Oid) -> Option<Arc<Vec<u8>>>,
        mut visit: impl FnMut(&CommitIds, Option<i64>),
    ) -> Result<(), MineError> {
        let walk_started = Instant::now();
        let mut subjects = Vec::new();
        let walked = &mut self.walked;
        history::walk(
            &self.repo,
            self.tip,
            &mut self.skipped,
            raw,
            |ids, time, subject| {
                visit(&ids, time);
                walked.push((ids, time));
                let subject = String::from_utf8_lossy(subject);
                if links::subject_key(&subject).is_some() {
                    subjects.push(subject.into_owned());
                }
                true
            },
        )?;
        tracing::debug!(commits = walked.len(), elapsed = ?walk_started.elapsed(), "walked the first-parent history");
        let mut jira: BTreeMap<String, usize> =
            links::jira_projects(subjects.iter().map(String::as_str));
        for p in &cfg.jira_projects {
            jira.entry(p.clone()).or_insert(0);
        }
        Arc::make_mut(&mut self.settings).jira_projects = jira.into_keys().collect();
        Ok(())
    }
}

/// Whether an author time is in the window (a commit git cannot parse has none, and is not).
fn in_window(cfg: &MineConfig, t: Option<i64>) -> bool {
    t.is_some_and(|t| cfg.since.is_none_or(|s| t >= s) && cfg.until.is_none_or(|u| t < u))
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
        "jira_projects": p.settings.jira_projects,
        "classifier": cfg.classify.then_some(etip_classify::Offline::NAME),
        "paths": cfg.paths,
        "whole_file": cfg.whole_file,
    })
    .to_string();
    let key = hex::encode(Sha256::digest(params.as_bytes()));
    (key, params)
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
}
