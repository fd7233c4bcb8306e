//! `etip mine`: turn repository history into ETIP candidates. The arguments of `mine local`
//! become an [`etip_pipeline::mine::local::LocalConfig`]; the stage's summary and explanations
//! are printed here.

use std::io::Write;
use std::path::PathBuf;

use etip_mine_git::{Explanation, Summary};
use etip_pipeline::mine::local::{self, LocalConfig, LocalMined};

use super::mine_args::{Format, LangArg, PathArgs, SummaryArgs, worker_command};
use super::progress::Bars;

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
    #[arg(long, default_value = local::SINCE, value_name = "DATE")]
    pub since: String,
    /// Keep commits authored before the end of DATE (YYYY-MM-DD, inclusive) or before an RFC 3339 instant.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Reject commits changing more than N files.
    #[arg(long, default_value_t = local::MAX_FILES, value_name = "N")]
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
    #[command(flatten)]
    pub summary: SummaryArgs,
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
    #[arg(long, default_value = local::GITHUB_CACHE, value_name = "FILE")]
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

impl LocalArgs {
    /// The stage's configuration.
    fn config(&self) -> LocalConfig {
        LocalConfig {
            repo: self.repo.clone(),
            lang: self.lang.into(),
            since: self.since.clone(),
            until: self.until.clone(),
            max_files: self.max_files,
            branch: self.branch.clone(),
            jobs: self.jobs,
            jobs_force: self.jobs_force,
            out: self
                .out
                .clone()
                .unwrap_or_else(|| PathBuf::from("candidates.jsonl")),
            state: self.state.clone(),
            semantic: !self.no_semantic,
            paths: (&self.paths).into(),
            whole_file_semantic: self.whole_file_semantic,
            repo_name: self.repo_name.clone(),
            jira_projects: self.jira_project.clone(),
            classify: self.classify,
            llm: (&self.llm).into(),
            issues: self.issues,
            github_api: self.github_api.clone(),
            github_cache: self.github_cache.clone(),
            // Workers run as processes of this binary: libgit2 serialises the object reads of
            // threads.
            worker: worker_command(),
        }
    }
}

fn local(a: LocalArgs, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let cfg = a.config();
    if let Some(rev) = &a.explain {
        let e = local::explain(&cfg, rev)?;
        match a.summary.format {
            Format::Json => {
                serde_json::to_writer_pretty(&mut *stdout, &e)?;
                writeln!(stdout)?;
            }
            Format::Text => print_explanation(stdout, &e)?,
        }
        return Ok(());
    }
    let mined = local::mine(&cfg, super::runtime, &mut Bars::default())?;
    render_mined(&mined, a.summary.format, stdout)
}

/// What `mine local` prints of a run: its notes on stderr, its summary on `stdout`.
pub fn render_mined(
    mined: &LocalMined,
    format: Format,
    stdout: &mut dyn Write,
) -> anyhow::Result<()> {
    print_notes(mined);
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *stdout, &mined.summary)?;
            writeln!(stdout)?;
        }
        Format::Text => print_summary(stdout, &mined.summary)?,
    }
    Ok(())
}

/// On stderr: what linking to issues did, and the commits git cannot parse.
fn print_notes(mined: &LocalMined) {
    if let Some(done) = &mined.post
        && let Some(l) = done.links
    {
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
    for u in &mined.summary.unreadable {
        eprintln!("warning: skipped commit {}: {}", u.sha, u.problem);
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
