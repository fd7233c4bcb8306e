//! `etip mine github`: the static-analysis phase on GitHub, as JETO-Bench ran it but automatic
//! and resumable. Repositories are searched with SPEC 2's criteria in pushed-date windows (cut in
//! two while a window holds more than the search API's 1,000 results); each is cloned or fetched
//! into a cache of bare mirrors and mined by the local scanner (no per-commit API calls); the
//! build tool is checked at its tip; each candidate is linked to its issue through the API and
//! classified from it (offline rules, or an LLM endpoint); the candidates answered `yes` go to
//! `--out`, with a summary of every stage.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use etip_core::candidate::{Candidate, Language};
use etip_github::search::{self, Criteria};
use etip_mine_git::MineConfig;
use serde::Serialize;

use super::classify::LlmArgs;
use super::mine::{Format, LangArg, post_process};
use crate::cmd::UsageError;

#[derive(Debug, clap::Args)]
pub struct GithubArgs {
    /// Language of the repositories (GitHub's language) and the mining profile.
    #[arg(long, value_enum)]
    pub lang: LangArg,
    /// The ETIPs found: candidates classified as about execution time, one JSON line each.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Repositories with at least this many stars.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub min_stars: u64,
    /// Repositories pushed on or after this day (YYYY-MM-DD).
    #[arg(long, default_value = "2024-01-01", value_name = "DAY")]
    pub pushed_after: String,
    /// Repositories pushed on or before this day (YYYY-MM-DD; default: today).
    #[arg(long, value_name = "DAY")]
    pub pushed_before: Option<String>,
    /// At most this many repositories (the most starred of each window first).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_repos: usize,
    /// Which build tools a repository needs: `strict` is SPEC 2's (Java: `mvnw` at the root;
    /// Python: `pyproject.toml`, `setup.py` or `setup.cfg`), `any` also takes a bare `pom.xml`
    /// or Gradle.
    #[arg(long, value_enum, default_value_t = BuildTools::Strict)]
    pub build_tools: BuildTools,
    /// Mine commits authored on or after DATE (`none`: all).
    #[arg(long, default_value = "2015-01-01", value_name = "DATE")]
    pub since: String,
    /// Reject commits changing more than N files.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_files: usize,
    /// Write every candidate, classified `yes` or not.
    #[arg(long)]
    pub keep_all: bool,
    /// The cache: bare mirrors, per-repository candidates and state, API and LLM answers.
    #[arg(long, default_value = ".etip/github", value_name = "DIR")]
    pub cache: PathBuf,
    /// GitHub's API base URL (GitHub Enterprise, or a test server).
    #[arg(long, default_value = etip_github::API, value_name = "URL")]
    pub github_api: String,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// Which build tools qualify a repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BuildTools {
    Strict,
    Any,
}

/// One repository's part of the run.
#[derive(Debug, Serialize)]
struct RepoLine {
    repo: String,
    stars: u64,
    /// `mined`, `skipped: <why>` or `failed: <why>`.
    outcome: String,
    commits_scanned: u64,
    candidates: u64,
    yes: u64,
}

/// The run's summary.
#[derive(Debug, Serialize)]
struct RunSummary {
    windows: Vec<(String, String, u64)>,
    windows_bisected: u64,
    windows_truncated: Vec<String>,
    repos_found: usize,
    repos_mined: usize,
    repos: Vec<RepoLine>,
    commits_scanned: u64,
    candidates: u64,
    classified: BTreeMap<String, u64>,
    classifier: String,
    linked_issues: u64,
    github_requests: u64,
    github_cached: u64,
    written: usize,
    output: String,
}

fn day(s: &str, what: &str) -> anyhow::Result<i64> {
    search::parse_day(s)
        .ok_or_else(|| UsageError(format!("{what} {s:?} is not a day (YYYY-MM-DD)")).into())
}

fn today() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    (secs / 86_400) as i64
}

pub fn run(a: GithubArgs, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let (lang, language) = match a.lang {
        LangArg::Java => (Language::Java, "Java"),
        LangArg::Python => (Language::Python, "Python"),
    };
    let criteria = Criteria {
        language: language.into(),
        min_stars: a.min_stars,
        pushed_from: day(&a.pushed_after, "--pushed-after")?,
        pushed_to: match &a.pushed_before {
            Some(d) => day(d, "--pushed-before")?,
            None => today(),
        },
        max_repos: a.max_repos,
    };
    if criteria.pushed_from > criteria.pushed_to {
        return Err(UsageError("--pushed-after is later than --pushed-before".into()).into());
    }
    let since = if a.since == "none" {
        None
    } else {
        Some(etip_mine_git::parse_date(&a.since, false).map_err(|e| UsageError(e.to_string()))?)
    };
    if let Some(dir) = a.out.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(UsageError(format!(
            "the folder of --out {} does not exist",
            a.out.display()
        ))
        .into());
    }
    std::fs::create_dir_all(&a.cache)
        .map_err(|e| UsageError(format!("creating {}: {e}", a.cache.display())))?;
    let rt = super::runtime()?;
    let mut llm_args = a.llm.clone();
    if llm_args.llm_cache == std::path::Path::new(".etip/llm-cache.sqlite") {
        llm_args.llm_cache = a.cache.join("llm-cache.sqlite");
    }
    let llm = llm_args.classifier(rt)?;
    let store = etip_store::Store::open(&a.cache.join("github-cache.sqlite"))
        .map_err(|e| UsageError(e.to_string()))?;
    let token = std::env::var("GITHUB_TOKEN").ok().filter(|t| !t.is_empty());
    let gh = etip_github::GitHub::new(Some(&a.github_api), token, rt.handle().clone())?;
    let mut calls = etip_github::Calls::default();
    let mut log = search::SearchLog::default();
    eprintln!(
        "searching GitHub: language:{language} stars:>={} pushed:{}..{}",
        a.min_stars,
        search::day_string(criteria.pushed_from),
        search::day_string(criteria.pushed_to)
    );
    let found = search::search(&gh, &criteria, Some(&store), &mut calls, &mut log)
        .context("searching repositories")?;
    eprintln!(
        "{} repositories ({} windows, {} cut in two)",
        found.len(),
        log.windows.len(),
        log.bisected
    );
    let github = (gh, store);
    let bar = indicatif::ProgressBar::new(found.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("the template is valid"),
    );
    let mut lines = Vec::new();
    let mut written: Vec<Candidate> = Vec::new();
    let mut seen_hashes: HashSet<String> = HashSet::new();
    let mut classified: BTreeMap<String, u64> = BTreeMap::new();
    let (mut scanned, mut candidates, mut linked) = (0u64, 0u64, 0u64);
    for repo in &found {
        bar.set_message(repo.full_name.clone());
        let line = mine_one(repo, lang, since, &a, &github, llm.as_ref(), &mut calls);
        let (mut line, cands, links) = match line {
            Ok(x) => x,
            Err(e) => (
                RepoLine {
                    repo: repo.full_name.clone(),
                    stars: repo.stars,
                    outcome: format!("failed: {e:#}"),
                    commits_scanned: 0,
                    candidates: 0,
                    yes: 0,
                },
                Vec::new(),
                0,
            ),
        };
        scanned += line.commits_scanned;
        candidates += line.candidates;
        linked += links;
        for c in cands {
            let answer = c
                .classification
                .as_ref()
                .map_or("unclassified".to_string(), |v| v.answer.clone());
            *classified.entry(answer.clone()).or_default() += 1;
            if answer == "yes" {
                line.yes += 1;
            }
            if (answer == "yes" || a.keep_all) && seen_hashes.insert(c.diff_hash.clone()) {
                written.push(c);
            }
        }
        lines.push(line);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut text = String::new();
    for c in &written {
        text.push_str(&serde_json::to_string(c)?);
        text.push('\n');
    }
    super::measure::write_atomic(&a.out, &text)?;
    let summary = RunSummary {
        windows: log.windows,
        windows_bisected: log.bisected,
        windows_truncated: log.truncated,
        repos_found: found.len(),
        repos_mined: lines.iter().filter(|l| l.outcome == "mined").count(),
        repos: lines,
        commits_scanned: scanned,
        candidates,
        classified,
        classifier: llm.as_ref().map_or_else(
            || etip_classify::Offline::NAME.to_string(),
            |(c, _)| c.name(),
        ),
        linked_issues: linked,
        github_requests: calls.requests,
        github_cached: calls.cached,
        written: written.len(),
        output: a.out.display().to_string(),
    };
    print_summary(&summary, a.format, stdout)
}

/// Mirrors, mines, links and classifies one repository; its line, its candidates and the number
/// linked to an issue.
fn mine_one(
    repo: &search::Found,
    lang: Language,
    since: Option<i64>,
    a: &GithubArgs,
    github: &(etip_github::GitHub, etip_store::Store),
    llm: Option<&(etip_llm::LlmClassifier, etip_store::Store)>,
    calls: &mut etip_github::Calls,
) -> anyhow::Result<(RepoLine, Vec<Candidate>, u64)> {
    let mut line = RepoLine {
        repo: repo.full_name.clone(),
        stars: repo.stars,
        outcome: "mined".into(),
        commits_scanned: 0,
        candidates: 0,
        yes: 0,
    };
    let path = etip_github::mirror(&repo.clone_url, &a.cache.join("repos"), &repo.full_name)?;
    let slug = repo.full_name.replace('/', "__");
    let out = a.cache.join("candidates").join(format!("{slug}.jsonl"));
    std::fs::create_dir_all(a.cache.join("candidates"))?;
    let mut cfg = MineConfig::new(path, lang, out.clone());
    cfg.since = since;
    cfg.max_files = a.max_files;
    cfg.repo_name = Some(repo.full_name.clone());
    cfg.classify = true;
    // Worker processes of this binary, as `mine local` starts them.
    cfg.jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    cfg.worker = std::env::current_exe()
        .ok()
        .map(|program| etip_mine_git::WorkerCommand {
            program,
            args: vec!["mine".into(), "worker".into()],
        });
    let summary = etip_mine_git::mine(&cfg, &mut etip_mine_git::NoProgress)
        .with_context(|| format!("mining {}", repo.full_name))?;
    line.commits_scanned = summary.commits_scanned;
    let tools_ok = summary.build_tool_supported
        || (a.build_tools == BuildTools::Any && !summary.build_tools.is_empty());
    if !tools_ok {
        line.outcome = format!(
            "skipped: build tools at the tip {:?} do not meet the criterion",
            summary.build_tools
        );
        return Ok((line, Vec::new(), 0));
    }
    let done = post_process(&out, Some(github), llm, true)?;
    let links = done.links.unwrap_or_default();
    calls.requests += links.calls.requests;
    calls.cached += links.calls.cached;
    let text = std::fs::read_to_string(&out)?;
    let cands: Vec<Candidate> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .with_context(|| format!("reading {}", out.display()))?;
    line.candidates = cands.len() as u64;
    Ok((line, cands, links.linked))
}

fn print_summary(s: &RunSummary, format: Format, w: &mut dyn Write) -> anyhow::Result<()> {
    if let Format::Json = format {
        serde_json::to_writer_pretty(&mut *w, s)?;
        writeln!(w)?;
        return Ok(());
    }
    writeln!(
        w,
        "search: {} windows ({} cut in two{}), {} repositories",
        s.windows.len(),
        s.windows_bisected,
        if s.windows_truncated.is_empty() {
            String::new()
        } else {
            format!(", {} single days over the cap", s.windows_truncated.len())
        },
        s.repos_found
    )?;
    for r in &s.repos {
        writeln!(
            w,
            "  {:<40} {:>7} stars  {:>6} commits  {:>4} candidates  {:>3} yes  {}",
            r.repo, r.stars, r.commits_scanned, r.candidates, r.yes, r.outcome
        )?;
    }
    let n = |k: &str| s.classified.get(k).copied().unwrap_or(0);
    writeln!(
        w,
        "mined {} of {} repositories: {} commits scanned, {} candidates, {} linked to an issue",
        s.repos_mined, s.repos_found, s.commits_scanned, s.candidates, s.linked_issues
    )?;
    writeln!(
        w,
        "classified ({}): {} about execution time, {} not, {} unclassified",
        s.classifier,
        n("yes"),
        n("no"),
        n("unclassified")
    )?;
    writeln!(
        w,
        "GitHub API: {} requests, {} answers from the cache",
        s.github_requests, s.github_cached
    )?;
    writeln!(w, "{} ETIPs written to {}", s.written, s.output)?;
    Ok(())
}
