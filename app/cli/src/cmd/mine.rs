//! `etip mine`: turn repository history into ETIP candidates.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use etip_core::candidate::Language;
use etip_mine_git::{Explanation, MineConfig, MineError, Progress, Summary};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cmd::UsageError;
use crate::cmd::output::{self, Named};

/// Mine history for ETIP candidates.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: MineCommand,
}

/// Where to mine.
#[derive(Debug, clap::Subcommand)]
pub enum MineCommand {
    /// Mine a local (normal or bare) repository's first-parent history.
    Local(Box<LocalArgs>),
    /// Search GitHub for repositories, mirror and mine each, link candidates to their issues and
    /// classify them; write the ETIPs found.
    Github(Box<super::mine_github::GithubArgs>),
    /// One worker process of `mine local` (started by it: reads blocks of commits on stdin, writes
    /// decisions on stdout).
    #[command(hide = true)]
    Worker,
}

/// Language profile.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum LangArg {
    Java,
    Python,
}

/// Summary format.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Rule 1's path policy, shared by `mine local` and `mine github` (docs/rules.md §2.2).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PathArgs {
    /// Rule 1: `code` sets documentation, changelogs and repository metadata aside (listed in a
    /// candidate's `ignored_files`); `strict` (alias `jeto`) rejects a commit that changes any
    /// non-source file, as JETO did [default: code].
    #[arg(long, value_name = "RULE", value_parser = ["code", "strict", "jeto"])]
    pub path_rule: Option<String>,
    /// Also set aside paths matching GLOB (repeatable; `**` crosses directories, `*` does not),
    /// e.g. 'benchmarks/**' for an asv suite. Test files still reject the commit.
    #[arg(long, value_name = "GLOB")]
    pub ignore: Vec<String>,
    /// Set aside only the --ignore globs, not the default documentation, changelog and metadata
    /// paths.
    #[arg(long)]
    pub no_default_ignores: bool,
    /// Python: count Cython (.pyx/.pxd/.pxi), C/C++ sources and their build descriptors
    /// (meson.build, CMakeLists.txt) as code, listed in a candidate's `extension_files`; they
    /// are semantic unless only comments or whitespace changed.
    #[arg(long)]
    pub compiled_extensions: bool,
}

impl PathArgs {
    /// The policy these flags ask for (`file` fills what no flag says).
    pub fn policy(&self, file: &PathArgs) -> Result<etip_mine_git::PathPolicy, UsageError> {
        use etip_mine_git::{PathPolicy, PathRule};
        let rule = match self.path_rule.as_deref().or(file.path_rule.as_deref()) {
            None => PathRule::Code,
            Some(name) => PathRule::from_name(name).ok_or_else(|| {
                UsageError(format!(
                    "unknown path rule {name:?}: use code, strict or jeto"
                ))
            })?,
        };
        let mut ignore = self.ignore.clone();
        ignore.extend(file.ignore.iter().cloned());
        let policy = PathPolicy {
            rule,
            default_ignores: rule == PathRule::Code
                && !(self.no_default_ignores || file.no_default_ignores),
            ignore,
            compiled_extensions: self.compiled_extensions || file.compiled_extensions,
        };
        // Both languages: the same globs and the same strict-with-globs conflict.
        etip_mine_git::policy::PathMatcher::new(etip_core::Language::Python, &policy)
            .map_err(|e| UsageError(e.to_string()))?;
        Ok(policy)
    }
}

/// `etip mine local`.
#[derive(Debug, clap::Args)]
pub struct LocalArgs {
    /// Repository directory (a normal checkout or a bare mirror).
    #[arg(long)]
    pub repo: PathBuf,
    /// Language profile: source/test path rules and the tree-sitter grammar.
    #[arg(long, value_enum)]
    pub lang: LangArg,
    /// Keep commits authored on or after DATE (YYYY-MM-DD or RFC 3339); `none` for no lower bound.
    #[arg(long, default_value = "2015-01-01", value_name = "DATE")]
    pub since: String,
    /// Keep commits authored before the end of DATE (YYYY-MM-DD, inclusive) or before an RFC 3339 instant.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Reject commits changing more than N files.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_files: usize,
    /// Branch or revision to walk (default: HEAD, the default branch of a mirror).
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
    /// Worker processes (default: number of cores; at least 1). More than the cores is capped at
    /// the number of cores, with a warning, unless --jobs-force.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Start as many workers as --jobs says, even more than the cores.
    #[arg(long, requires = "jobs")]
    pub jobs_force: bool,
    /// Candidates file (JSONL, schema in docs/schemas/candidates.md).
    #[arg(long, required_unless_present = "explain", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// SQLite state file that makes the run resumable (default: <out>.state.sqlite).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Explain why one commit is kept or rejected, instead of mining.
    #[arg(long, value_name = "SHA")]
    pub explain: Option<String>,
    /// Skip the tree-sitter semantic rule (rule 4), e.g. to measure its cost.
    #[arg(long)]
    pub no_semantic: bool,
    #[command(flatten)]
    pub paths: PathArgs,
    /// Decide rule 4 on whole-file tree-sitter parses only (slower, same answers): to check the
    /// token and window judgements against them.
    #[arg(long, hide = true)]
    pub whole_file_semantic: bool,
    /// `owner/name` of the repository when no remote URL tells it (mirrors, local clones).
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo_name: Option<String>,
    /// A JIRA prefix of the project (repeatable), besides those its history shows (3 distinct
    /// keys opening commit subjects): only keys of these prefixes are links.
    #[arg(long, value_name = "KEY")]
    pub jira_project: Vec<String>,
    /// Classify each candidate's commit message with the offline classifier (is it about
    /// execution time?): recorded as its `classification`, with the evidence; counted in the
    /// summary. Every candidate is kept: select with `jq 'select(.classification.answer=="yes")'`.
    #[arg(long)]
    pub classify: bool,
    /// With --classify: ask an OpenAI-compatible endpoint instead of the offline classifier.
    #[command(flatten)]
    pub llm: super::classify::LlmArgs,
    /// Link each candidate to its issue through GitHub's API (needs the repository's
    /// owner/name): referenced numbers that are pull requests are dropped, and a commit that
    /// links no issue takes its pull request's links. Token from GITHUB_TOKEN (never printed).
    /// With --classify, the issue (title, body, labels) is what is classified.
    #[arg(long)]
    pub issues: bool,
    /// GitHub's API base URL (GitHub Enterprise, or a test server).
    #[arg(long, default_value = etip_github::API, value_name = "URL")]
    pub github_api: String,
    /// The API answers' cache (SQLite, by URL): a re-run spends no rate limit on them.
    #[arg(long, default_value = ".etip/github-cache.sqlite", value_name = "FILE")]
    pub github_cache: PathBuf,
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    match args.command {
        MineCommand::Local(a) => local(*a, stdout),
        MineCommand::Github(a) => super::mine_github::run(*a, stdout),
        MineCommand::Worker => {
            etip_mine_git::serve_worker(std::io::stdin().lock(), std::io::stdout().lock())?;
            Ok(())
        }
    }
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
        | MineError::Output { .. } => anyhow::Error::new(UsageError(err.to_string())),
        // Another run holds the state file, a newer etip wrote it, or it is no state store.
        MineError::Store(ref e) if e.is_input_error() => {
            anyhow::Error::new(UsageError(err.to_string()))
        }
        other => anyhow::Error::new(other),
    }
}

/// Workers to start: `requested` (default: `cores`), capped at `cores` unless `force`; with the
/// warning to print when capped.
fn worker_count(
    requested: Option<usize>,
    cores: usize,
    force: bool,
) -> Result<(usize, Option<String>), UsageError> {
    match requested {
        None => Ok((cores.max(1), None)),
        Some(0) => Err(UsageError("--jobs must be at least 1".into())),
        Some(n) if n > cores && !force => Ok((
            cores,
            Some(format!(
                "warning: --jobs {n} is more than the {cores} cores of this machine; starting {cores} workers (pass --jobs-force to start {n})"
            )),
        )),
        Some(n) => Ok((n, None)),
    }
}

fn local(a: LocalArgs, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let lang = match a.lang {
        LangArg::Java => Language::Java,
        LangArg::Python => Language::Python,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (jobs, capped) = worker_count(a.jobs, cores, a.jobs_force)?;
    if let Some(name) = &a.repo_name {
        let parts: Vec<&str> = name.split('/').collect();
        if parts.len() != 2 || parts.iter().any(|p| p.is_empty()) {
            return Err(UsageError(format!(
                "--repo-name {name:?} is not of the form owner/name"
            ))
            .into());
        }
    }
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("candidates.jsonl"));
    let mut cfg = MineConfig::new(a.repo.clone(), lang, out);
    cfg.since = if a.since == "none" {
        None
    } else {
        Some(etip_mine_git::parse_date(&a.since, false).map_err(usage_or)?)
    };
    cfg.until = match &a.until {
        Some(u) => Some(etip_mine_git::parse_date(u, true).map_err(usage_or)?),
        None => None,
    };
    cfg.max_files = a.max_files;
    cfg.branch = a.branch.clone();
    cfg.jobs = jobs;
    // Workers run as processes of this binary: libgit2 serialises the object reads of threads.
    cfg.worker = worker_command();
    cfg.state = a.state.clone();
    cfg.semantic = !a.no_semantic;
    cfg.paths = a.paths.policy(&PathArgs::default())?;
    cfg.whole_file = a.whole_file_semantic;
    cfg.repo_name = a.repo_name.clone();
    for p in &a.jira_project {
        if !(p.len() >= 2
            && p.starts_with(|c: char| c.is_ascii_uppercase())
            && p.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()))
        {
            return Err(UsageError(format!(
                "--jira-project {p:?} is not a JIRA prefix (upper-case letters and digits, e.g. NETTY)"
            ))
            .into());
        }
    }
    cfg.jira_projects = a.jira_project.clone();
    cfg.classify = a.classify;

    if let Some(rev) = &a.explain {
        let e = etip_mine_git::explain(&cfg, rev).map_err(usage_or)?;
        match a.format {
            Format::Json => {
                serde_json::to_writer_pretty(&mut *stdout, &e)?;
                writeln!(stdout)?;
            }
            Format::Text => print_explanation(stdout, &e)?,
        }
        return Ok(());
    }

    if let Some(dir) = cfg.out.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(UsageError(format!(
            "the folder of --out {} does not exist",
            cfg.out.display()
        ))
        .into());
    }
    // Before any work: the candidates file, the state store and the caches are four files.
    let state = cfg.state_path();
    let state_flag = if a.state.is_some() {
        "--state"
    } else {
        "the state file beside --out"
    };
    let mut paths = vec![
        Named::writes("--out", &cfg.out),
        Named::writes(state_flag, &state),
    ];
    if a.llm.llm_base_url.is_some() {
        paths.push(Named::writes("--llm-cache", &a.llm.llm_cache));
    }
    if a.issues {
        paths.push(Named::writes("--github-cache", &a.github_cache));
    }
    output::distinct(&paths)?;
    output::check_state(state_flag, &state)?;
    if let Some(warning) = capped {
        eprintln!("{warning}");
    }
    if a.llm.llm_base_url.is_some() && !a.classify {
        return Err(
            UsageError("--llm-base-url classifies candidates: pass --classify too".into()).into(),
        );
    }
    let rt = super::runtime()?;
    let llm = a.llm.classifier(rt)?;
    let mut bar = Bar::default();
    let mut summary = etip_mine_git::mine(&cfg, &mut bar)
        .map_err(usage_or)
        .with_context(|| format!("mining {}", cfg.repo.display()))?;
    bar.clear();
    let github = if a.issues {
        if summary_repo(&cfg.out).is_none() && a.repo_name.is_none() {
            eprintln!(
                "warning: --issues: the repository's owner/name is not known (no remote URL); pass --repo-name"
            );
        }
        Some(github_client(&a.github_api, &a.github_cache, rt)?)
    } else {
        None
    };
    if github.is_some() || llm.is_some() {
        let done = super::mine_post::post_process(
            &cfg.out,
            &super::mine_post::Services {
                cfg: &cfg,
                github: github.as_ref(),
                llm: llm.as_ref(),
                classify: a.classify,
            },
        )?;
        if a.classify {
            summary.classified = done.answers;
        }
        if let Some((classifier, _)) = &llm {
            summary.classifier = Some(classifier.name());
        }
        if let Some(l) = done.links {
            eprintln!(
                "issues: {} candidates linked to an issue ({} through their pull request); {} referenced numbers are pull requests, {} unknown to GitHub, {} answers malformed; {} candidates replaced by their rebase-merged pull request, {} dropped because the whole pull request fails a rule; GitHub API: {} requests, {} answers from the cache",
                l.linked,
                l.via_pull_request,
                l.pull_request_references,
                l.not_found,
                l.malformed,
                done.replaced,
                done.dropped,
                l.calls.requests,
                l.calls.cached
            );
        }
    }
    for u in &summary.unreadable {
        eprintln!("warning: skipped commit {}: {}", u.sha, u.problem);
    }
    match a.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *stdout, &summary)?;
            writeln!(stdout)?;
        }
        Format::Text => print_summary(stdout, &summary)?,
    }
    Ok(())
}

/// How `mine` starts a worker process: this binary's hidden `mine worker`.
pub(crate) fn worker_command() -> Option<etip_mine_git::WorkerCommand> {
    std::env::current_exe()
        .ok()
        .map(|program| etip_mine_git::WorkerCommand {
            program,
            args: vec!["mine".into(), "worker".into()],
        })
}

/// The GitHub client of `api` (token from `GITHUB_TOKEN`) with its answers' cache at `cache`.
pub(crate) fn github_client(
    api: &str,
    cache: &std::path::Path,
    rt: &tokio::runtime::Runtime,
) -> anyhow::Result<(etip_github::GitHub, etip_store::Store)> {
    let store = super::classify::open_cache(cache)?;
    let token = std::env::var("GITHUB_TOKEN").ok().filter(|t| !t.is_empty());
    let gh = etip_github::GitHub::new(Some(api), token, rt.handle().clone())?;
    Ok((gh, store))
}

/// The repository named by the first candidate of `out`, if any.
fn summary_repo(out: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(out).ok()?;
    let first: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
    first.get("repo")?.as_str().map(str::to_string)
}

#[derive(Default)]
struct Bar(Option<ProgressBar>);

impl Bar {
    fn clear(&mut self) {
        if let Some(b) = self.0.take() {
            b.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn start(&mut self, total: u64, already: u64) {
        let bar =
            ProgressBar::with_draw_target(Some(total), indicatif::ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} mining [{bar:30}] {pos}/{len} commits ({per_sec}, eta {eta}) {msg}",
            )
            .expect("static template is valid")
            .progress_chars("=> "),
        );
        if already > 0 {
            bar.set_message(format!("{already} resumed"));
        }
        self.0 = Some(bar);
    }
    fn advance(&mut self, n: u64) {
        if let Some(b) = &self.0 {
            b.inc(n);
        }
    }
    fn finish(&mut self) {
        if let Some(b) = &self.0 {
            b.set_message("writing candidates");
        }
    }
}

fn print_summary(w: &mut dyn Write, s: &Summary) -> std::io::Result<()> {
    writeln!(
        w,
        "repository: {} ({})",
        s.repo.as_deref().unwrap_or("unknown owner/name"),
        s.source
    )?;
    writeln!(
        w,
        "language: {}, semantic filter: {}, tip: {}",
        s.language,
        if s.semantic_filter { "on" } else { "off" },
        s.tip
    )?;
    writeln!(
        w,
        "build tools at the tip: {} ({})",
        if s.build_tools.is_empty() {
            "none".to_string()
        } else {
            s.build_tools.join(", ")
        },
        if s.build_tool_supported {
            "meets the repository criterion of rules §2.1"
        } else {
            "does not meet the repository criterion of rules §2.1 (Java: mvnw; Python: pyproject.toml, setup.py or setup.cfg)"
        }
    )?;
    writeln!(
        w,
        "history: {} first-parent commits, {} outside the date window",
        s.commits_in_history, s.outside_window
    )?;
    if s.skipped_unreadable > 0 {
        writeln!(
            w,
            "skipped: {} commits git cannot parse (malformed author or committer line; see the warnings)",
            s.skipped_unreadable
        )?;
    }
    writeln!(
        w,
        "scanned: {} commits ({} resumed from {}) in {:.2} s, {:.0} commits/s, {} workers",
        s.commits_scanned, s.resumed, s.state, s.elapsed_seconds, s.commits_per_second, s.jobs
    )?;
    writeln!(
        w,
        "kept: {} commits, {} candidates written to {} ({} duplicates)",
        s.kept,
        s.candidates,
        s.output,
        s.rejected
            .get(&etip_mine_git::RejectReason::Duplicate)
            .copied()
            .unwrap_or(0)
    )?;
    writeln!(w, "rejected per rule:")?;
    for (reason, n) in &s.rejected {
        if *reason == etip_mine_git::RejectReason::OutsideDateWindow {
            continue;
        }
        writeln!(w, "  {:<28} {:>7}", reason.as_str(), n)?;
    }
    writeln!(
        w,
        "links: {} candidates with a GitHub issue reference, {} with a JIRA key, {} with a PR number",
        s.with_issue_links, s.with_jira_keys, s.with_pr_number
    )?;
    if !s.classified.is_empty() {
        let n = |a: &str| s.classified.get(a).copied().unwrap_or(0);
        writeln!(
            w,
            "classified ({}, from the commit messages): {} about execution time, {} not, {} unclassified",
            s.classifier
                .as_deref()
                .unwrap_or(etip_classify::Offline::NAME),
            n("yes"),
            n("no"),
            n("unclassified")
        )?;
    }
    writeln!(
        w,
        "JIRA prefixes of the project: {}",
        if s.jira_projects.is_empty() {
            "none (key-like tokens such as JDK-8 are not links)".to_string()
        } else {
            s.jira_projects.join(", ")
        }
    )
}

fn print_explanation(w: &mut dyn Write, e: &Explanation) -> std::io::Result<()> {
    let yn = |b: bool| if b { "yes" } else { "no" };
    writeln!(w, "commit {}", e.sha)?;
    writeln!(
        w,
        "on the first-parent history: {}, inside the date window: {}",
        yn(e.in_first_parent_history),
        yn(e.in_date_window)
    )?;
    match e.reason {
        Some(r) => writeln!(
            w,
            "decision: rejected ({}): {}",
            r.as_str(),
            e.reason_text.unwrap_or("")
        )?,
        None => writeln!(w, "decision: kept (passes every rule)")?,
    }
    if let Some(d) = e.detail.as_deref().filter(|d| !d.is_empty()) {
        writeln!(w, "detail: {d}")?;
    }
    if let Some(c) = &e.candidate {
        writeln!(w, "changed files: {}", c.changed_files.join(", "))?;
        writeln!(w, "changed modules: {}", c.changed_modules.join(", "))?;
        writeln!(w, "changed functions: {}", c.changed_functions.join(", "))?;
        writeln!(
            w,
            "diff: {} files, +{} -{}, hash {}",
            c.diff_stats.files, c.diff_stats.insertions, c.diff_stats.deletions, c.diff_hash
        )?;
        if let Some(pr) = c.pr_number {
            writeln!(w, "pull request: #{pr}")?;
        }
        for i in &c.issues {
            let what = match (&i.number, &i.key) {
                (Some(n), _) => format!("#{n}"),
                (None, Some(k)) => k.clone(),
                (None, None) => String::new(),
            };
            writeln!(
                w,
                "issue: {what} via {} ({:?})",
                serde_json::to_value(i.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                i.text
            )?;
        }
    }
    Ok(())
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
