//! The `mine local` stage: one repository's first-parent history turned into ETIP candidates
//! (resumable through a state store beside the output), then — with `issues` or `classify` —
//! linked to their issues and classified ([`super::post`]). [`explain`] says why one commit is
//! kept or rejected instead.

use std::path::PathBuf;

use anyhow::Context;
use etip_core::candidate::Language;
use etip_mine_git::{Explanation, MineConfig, MineError, Summary};

use super::post::{PostProcessed, Services, post_process};
use super::{PathOptions, WorkerCommand, check_out_folder};
use crate::InputError;
use crate::output::{self, Named};
use crate::progress::{Commits, Phase, PhaseProgress as Progress};
use crate::services::{LlmOptions, RuntimeSource, github_client};

/// A `mine local` run as the user asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalConfig {
    /// Repository directory (a normal checkout or a bare mirror).
    pub repo: PathBuf,
    /// Language profile.
    pub lang: Language,
    /// Keep commits authored on or after this date (YYYY-MM-DD or RFC 3339); `none`: no bound.
    pub since: String,
    /// Keep commits authored before the end of this date, or before this RFC 3339 instant.
    pub until: Option<String>,
    /// Reject commits changing more files.
    pub max_files: usize,
    /// Branch or revision to walk (default: HEAD).
    pub branch: Option<String>,
    /// Worker processes (default: the cores), capped at the cores unless `jobs_force`.
    pub jobs: Option<usize>,
    /// Start as many workers as `jobs` says, even more than the cores.
    pub jobs_force: bool,
    /// The candidates file (JSON lines).
    pub out: PathBuf,
    /// The state file (default: `<out>.state.sqlite`).
    pub state: Option<PathBuf>,
    /// Apply rule 4 (tree-sitter semantic changes).
    pub semantic: bool,
    /// Rule 1's path policy.
    pub paths: PathOptions,
    /// Decide rule 4 on whole-file parses only.
    pub whole_file_semantic: bool,
    /// `owner/name` when no remote URL tells it.
    pub repo_name: Option<String>,
    /// JIRA prefixes of the project, besides those its history shows.
    pub jira_projects: Vec<String>,
    /// Classify each candidate (offline rules, or `llm`'s endpoint).
    pub classify: bool,
    /// The LLM endpoint for `classify`, if any.
    pub llm: LlmOptions,
    /// Link each candidate to its issue through GitHub's API.
    pub issues: bool,
    /// GitHub's API base URL.
    pub github_api: String,
    /// The API answers' cache.
    pub github_cache: PathBuf,
    /// How to start a worker process (`None`: threads of this process).
    pub worker: Option<WorkerCommand>,
}

/// The default of `since`: commits authored from 2015 on.
pub const SINCE: &str = "2015-01-01";
/// The default of `max_files`.
pub const MAX_FILES: usize = 20;
/// The default of `github_cache`.
pub const GITHUB_CACHE: &str = ".etip/github-cache.sqlite";

impl LocalConfig {
    /// Mines `repo` in `lang` into `out`, every other setting at its default (the defaults of
    /// `etip mine local`'s flags), the workers as threads of this process.
    pub fn new(repo: PathBuf, lang: Language, out: PathBuf) -> LocalConfig {
        LocalConfig {
            repo,
            lang,
            since: SINCE.into(),
            until: None,
            max_files: MAX_FILES,
            branch: None,
            jobs: None,
            jobs_force: false,
            out,
            state: None,
            semantic: true,
            paths: PathOptions::default(),
            whole_file_semantic: false,
            repo_name: None,
            jira_projects: Vec::new(),
            classify: false,
            llm: LlmOptions::default(),
            issues: false,
            github_api: etip_github::API.into(),
            github_cache: GITHUB_CACHE.into(),
            worker: None,
        }
    }
}

/// What a `mine local` run returns.
#[derive(Debug)]
pub struct LocalMined {
    /// The miner's summary, with the classifier's answers when candidates were classified.
    pub summary: Summary,
    /// What linking and classifying did, when services were used.
    pub post: Option<PostProcessed>,
}

/// Input errors (exit code 2): the repository, revisions, dates and paths given, and a state file
/// that another run holds or that is no etip state store. Everything else fails the run (exit
/// code 1).
fn usage_or(err: MineError) -> anyhow::Error {
    match err {
        MineError::OpenRepo { .. }
        | MineError::Branch { .. }
        | MineError::UnknownCommit { .. }
        | MineError::UnreadableCommit(_)
        | MineError::Date(_)
        | MineError::EmptyWindow { .. }
        | MineError::Paths(_)
        | MineError::Shallow { .. }
        | MineError::Output { .. } => anyhow::Error::new(InputError(err.to_string())),
        // Another run holds the state file, a newer etip wrote it, or it is no state store.
        MineError::Store(ref e) if e.is_input_error() => {
            anyhow::Error::new(InputError(err.to_string()))
        }
        other => anyhow::Error::new(other),
    }
}

/// Workers to start: `requested` (default: `cores`), capped at `cores` unless `force`; with the
/// warning to show when capped.
fn worker_count(
    requested: Option<usize>,
    cores: usize,
    force: bool,
) -> Result<(usize, Option<String>), InputError> {
    match requested {
        None => Ok((cores.max(1), None)),
        Some(0) => Err(InputError("--jobs must be at least 1".into())),
        Some(n) if n > cores && !force => Ok((
            cores,
            Some(format!(
                "warning: --jobs {n} is more than the {cores} cores of this machine; starting {cores} workers (pass --jobs-force to start {n})"
            )),
        )),
        Some(n) => Ok((n, None)),
    }
}

/// Whether `p` is a JIRA prefix: upper-case letters and digits, a letter first, two or more.
fn is_jira_prefix(p: &str) -> bool {
    p.len() >= 2
        && p.starts_with(|c: char| c.is_ascii_uppercase())
        && p.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// The miner's configuration of `c`, with the warning to show when the workers were capped.
fn mine_config(c: &LocalConfig) -> anyhow::Result<(MineConfig, Option<String>)> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (jobs, capped) = worker_count(c.jobs, cores, c.jobs_force)?;
    if let Some(name) = &c.repo_name {
        let parts: Vec<&str> = name.split('/').collect();
        if parts.len() != 2 || parts.iter().any(|p| p.is_empty()) {
            return Err(InputError(format!(
                "--repo-name {name:?} is not of the form owner/name"
            ))
            .into());
        }
    }
    let mut cfg = MineConfig::new(c.repo.clone(), c.lang, c.out.clone());
    cfg.since = if c.since == "none" {
        None
    } else {
        Some(etip_mine_git::parse_date(&c.since, false).map_err(usage_or)?)
    };
    cfg.until = match &c.until {
        Some(u) => Some(etip_mine_git::parse_date(u, true).map_err(usage_or)?),
        None => None,
    };
    cfg.max_files = c.max_files;
    cfg.branch = c.branch.clone();
    cfg.jobs = jobs;
    // Workers run as processes: libgit2 serialises the object reads of threads.
    cfg.worker = c.worker.clone();
    cfg.state = c.state.clone();
    cfg.semantic = c.semantic;
    cfg.paths = c.paths.policy(&PathOptions::default())?;
    cfg.whole_file = c.whole_file_semantic;
    cfg.repo_name = c.repo_name.clone();
    if let Some(p) = c.jira_projects.iter().find(|p| !is_jira_prefix(p)) {
        return Err(InputError(format!(
            "--jira-project {p:?} is not a JIRA prefix (upper-case letters and digits, e.g. NETTY)"
        ))
        .into());
    }
    cfg.jira_projects = c.jira_projects.clone();
    cfg.classify = c.classify;
    Ok((cfg, capped))
}

/// Why commit `rev` is kept or rejected under `c`'s rules (nothing is written).
pub fn explain(c: &LocalConfig, rev: &str) -> anyhow::Result<Explanation> {
    let (cfg, _) = mine_config(c)?;
    etip_mine_git::explain(&cfg, rev).map_err(usage_or)
}

/// Refuses, before any work, outputs that are one file or cannot be written.
fn check_outputs(c: &LocalConfig, cfg: &MineConfig) -> anyhow::Result<()> {
    check_out_folder(&cfg.out, "--out")?;
    // Before any work: the candidates file, the state store and the caches are four files.
    let state = cfg.state_path();
    let state_flag = if c.state.is_some() {
        "--state"
    } else {
        "the state file beside --out"
    };
    let mut paths = vec![
        Named::writes("--out", &cfg.out),
        Named::writes(state_flag, &state),
    ];
    if c.llm.is_endpoint() {
        paths.push(Named::writes("--llm-cache", &c.llm.cache));
    }
    if c.issues {
        paths.push(Named::writes("--github-cache", &c.github_cache));
    }
    output::distinct(&paths)?;
    output::check_state(state_flag, &state)?;
    Ok(())
}

/// Mines `c.repo` into `c.out` (phase [`Phase::Commits`]; a second run resumes), then links and
/// classifies the candidates when asked.
pub fn mine(
    c: &LocalConfig,
    runtime: RuntimeSource,
    progress: &mut dyn Progress,
) -> anyhow::Result<LocalMined> {
    let (cfg, capped) = mine_config(c)?;
    check_outputs(c, &cfg)?;
    if let Some(warning) = capped {
        progress.note(&warning);
    }
    if c.llm.is_endpoint() && !c.classify {
        return Err(
            InputError("--llm-base-url classifies candidates: pass --classify too".into()).into(),
        );
    }
    let rt = runtime()?;
    let llm = c.llm.classifier(rt)?;
    let mut summary = etip_mine_git::mine(&cfg, &mut Commits(progress))
        .map_err(usage_or)
        .with_context(|| format!("mining {}", cfg.repo.display()))?;
    progress.end(Phase::Commits);
    let github = if c.issues {
        if summary_repo(&cfg.out).is_none() && c.repo_name.is_none() {
            progress.note(
                "warning: --issues: the repository's owner/name is not known (no remote URL); pass --repo-name",
            );
        }
        Some(github_client(&c.github_api, &c.github_cache, rt)?)
    } else {
        None
    };
    if github.is_none() && llm.is_none() {
        return Ok(LocalMined {
            summary,
            post: None,
        });
    }
    let services = Services {
        cfg: &cfg,
        github: github.as_ref(),
        llm: llm.as_ref(),
        classify: c.classify,
    };
    let done = post_process(&cfg.out, &services, progress)?;
    if c.classify {
        summary.classified = done.answers.clone();
    }
    if let Some((classifier, _)) = &llm {
        summary.classifier = Some(classifier.name());
    }
    Ok(LocalMined {
        summary,
        post: Some(done),
    })
}

/// The repository named by the first candidate of `out`, if any.
fn summary_repo(out: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(out).ok()?;
    let first: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
    first.get("repo")?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_capped_at_the_cores_unless_forced() {
        assert_eq!(worker_count(None, 4, false).unwrap(), (4, None));
        assert_eq!(worker_count(None, 0, false).unwrap(), (1, None));
        assert_eq!(worker_count(Some(3), 4, false).unwrap(), (3, None));
        assert_eq!(worker_count(Some(4), 4, false).unwrap(), (4, None));
        let (n, warning) = worker_count(Some(200), 2, false).unwrap();
        assert_eq!(n, 2);
        let warning = warning.unwrap();
        assert!(warning.starts_with("warning: --jobs 200 is more than the 2 cores"));
        assert!(warning.contains("--jobs-force"));
        assert_eq!(worker_count(Some(200), 2, true).unwrap(), (200, None));
        assert!(worker_count(Some(0), 2, false).is_err());
        assert!(worker_count(Some(0), 2, true).is_err());
    }
}
