//! The `mine github` stage: the static-analysis phase on GitHub, as JETO-Bench ran it but
//! automatic and resumable. Repositories are searched with SPEC 2's criteria in pushed-date
//! windows (cut in two while a window holds more than the search API's 1,000 results); each is
//! cloned or fetched into a cache of bare mirrors and mined by the local scanner (no per-commit API
//! calls); the build tool is checked at its tip; each candidate is linked to its issue through the
//! API and classified from it (offline rules, or an LLM endpoint); the candidates answered `yes`
//! go to the output, and the stage returns a summary of every stage ([`GithubSummary`]).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use etip_core::candidate::{Candidate, Language};
use etip_github::search::{self, Criteria};
use etip_mine_git::MineConfig;
use serde::Serialize;

use super::post::{Services, post_process};
use super::{PathOptions, WorkerCommand, check_out_folder};
use crate::InputError;
use crate::output::{Named, distinct};
use crate::progress::{Phase, PhaseProgress as Progress};
use crate::services::{GitHub, LLM_CACHE, Llm, LlmOptions, RuntimeSource, github_client};

/// A `mine github` run as the user asks for it: every `None` is taken from the configuration
/// file's `[mine.github]`, else the default.
#[derive(Debug, Clone, PartialEq)]
pub struct GithubConfig {
    /// Language of the repositories (GitHub's language) and the mining profile.
    pub lang: Language,
    /// The ETIPs found, one JSON line each.
    pub out: PathBuf,
    /// A TOML file whose `[mine.github]` holds settings.
    pub config: Option<PathBuf>,
    /// Repositories with at least this many stars [default: 100].
    pub min_stars: Option<u64>,
    /// Repositories pushed on or after this day, YYYY-MM-DD [default: 2024-01-01].
    pub pushed_after: Option<String>,
    /// Repositories pushed on or before this day [default: today].
    pub pushed_before: Option<String>,
    /// At most this many repositories [default: 20].
    pub max_repos: Option<usize>,
    /// Which build tools a repository needs [default: strict].
    pub build_tools: Option<BuildTools>,
    /// Mine commits authored on or after this date (`none`: all) [default: 2015-01-01].
    pub since: Option<String>,
    /// Reject commits changing more files [default: 20].
    pub max_files: Option<usize>,
    /// Write every candidate, classified `yes` or not.
    pub keep_all: bool,
    /// Rule 1's path policy.
    pub paths: PathOptions,
    /// The cache: mirrors, per-repository candidates and state, API and LLM answers
    /// [default: .etip/github].
    pub cache: Option<PathBuf>,
    /// GitHub's API base URL [default: https://api.github.com].
    pub github_api: Option<String>,
    /// The LLM endpoint, if any; its cache at the default place moves into `cache`.
    pub llm: LlmOptions,
    /// How to start a worker process (`None`: threads of this process).
    pub worker: Option<WorkerCommand>,
}

/// `[mine.github]` of a configuration file: every key is also a flag.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSettings {
    min_stars: Option<u64>,
    pushed_after: Option<String>,
    pushed_before: Option<String>,
    max_repos: Option<usize>,
    build_tools: Option<BuildTools>,
    since: Option<String>,
    max_files: Option<usize>,
    keep_all: Option<bool>,
    cache: Option<PathBuf>,
    github_api: Option<String>,
    path_rule: Option<String>,
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    no_default_ignores: bool,
    #[serde(default)]
    compiled_extensions: bool,
}

/// The settings of a run: the flag, else the file, else the default.
#[derive(Debug)]
struct Settings {
    min_stars: u64,
    pushed_after: String,
    pushed_before: Option<String>,
    max_repos: usize,
    build_tools: BuildTools,
    since: String,
    max_files: usize,
    keep_all: bool,
    cache: PathBuf,
    github_api: String,
    paths: etip_mine_git::PathPolicy,
}

/// The commented `[mine.github]` section `etip config init` writes.
pub const CONFIG_SECTION: &str = r#"
# `etip mine github`: every key is also a flag, and a flag given on the command line wins.
[mine.github]
min_stars = 100              # repositories with at least this many stars
pushed_after = "2024-01-01"  # pushed on or after this day
# pushed_before = "2026-12-31"  # pushed on or before this day (default: today)
max_repos = 20               # the most starred of each pushed-date window first
build_tools = "strict"       # "strict": Java mvnw, Python pyproject.toml/setup.py/setup.cfg; "any": also pom.xml, Gradle
since = "2015-01-01"         # mine commits authored on or after this date ("none": all)
max_files = 20               # reject commits changing more files
keep_all = false             # write every candidate, not only those classified yes
cache = ".etip/github"       # mirrors, mining state, API and LLM answers
github_api = "https://api.github.com"
path_rule = "code"           # "code": documentation, changelogs, metadata set aside; "strict" (or "jeto"): any non-source file rejects
ignore = []                  # more paths to set aside, globs such as "benchmarks/**"
no_default_ignores = false   # true: set aside only the `ignore` globs
compiled_extensions = false  # Python: Cython, C/C++ sources and meson.build/CMakeLists.txt count as code
"#;

fn load_file(path: Option<&Path>) -> anyhow::Result<FileSettings> {
    let Some(path) = path else {
        return Ok(FileSettings::default());
    };
    let bad = |e: &dyn std::fmt::Display| InputError(format!("{}: {e}", path.display()));
    let text = crate::input::read_text(path)?;
    let mut table: toml::Table = toml::from_str(&text).map_err(|e| bad(&e))?;
    let section = table.remove("mine").and_then(|m| match m {
        toml::Value::Table(mut t) => t.remove("github"),
        _ => None,
    });
    match section {
        Some(v) => Ok(v
            .try_into()
            .map_err(|e| bad(&format_args!("[mine.github]: {e}")))?),
        None => Ok(FileSettings::default()),
    }
}

impl Settings {
    fn of(a: &GithubConfig) -> anyhow::Result<Settings> {
        let f = load_file(a.config.as_deref())?;
        let from_file = PathOptions {
            path_rule: f.path_rule.clone(),
            ignore: f.ignore.clone(),
            no_default_ignores: f.no_default_ignores,
            compiled_extensions: f.compiled_extensions,
        };
        let paths = a.paths.policy(&from_file)?;
        Ok(Settings {
            paths,
            min_stars: a.min_stars.or(f.min_stars).unwrap_or(100),
            pushed_after: a
                .pushed_after
                .clone()
                .or(f.pushed_after)
                .unwrap_or_else(|| "2024-01-01".into()),
            pushed_before: a.pushed_before.clone().or(f.pushed_before),
            max_repos: a.max_repos.or(f.max_repos).unwrap_or(20),
            build_tools: a
                .build_tools
                .or(f.build_tools)
                .unwrap_or(BuildTools::Strict),
            since: a
                .since
                .clone()
                .or(f.since)
                .unwrap_or_else(|| "2015-01-01".into()),
            max_files: a.max_files.or(f.max_files).unwrap_or(20),
            keep_all: a.keep_all || f.keep_all.unwrap_or(false),
            cache: a
                .cache
                .clone()
                .or(f.cache)
                .unwrap_or_else(|| PathBuf::from(".etip/github")),
            github_api: a
                .github_api
                .clone()
                .or(f.github_api)
                .unwrap_or_else(|| etip_github::API.to_string()),
        })
    }
}

/// Which build tools qualify a repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildTools {
    /// SPEC 2's: Java `mvnw` at the root; Python `pyproject.toml`, `setup.py` or `setup.cfg`.
    Strict,
    /// Also a bare `pom.xml` or Gradle.
    Any,
}

/// One repository's part of the run.
#[derive(Debug, Clone, Serialize)]
pub struct RepoLine {
    /// `owner/name`.
    pub repo: String,
    /// Its stars.
    pub stars: u64,
    /// `mined`, `skipped: <why>` or `failed: <why>`.
    pub outcome: String,
    /// Commits the miner scanned.
    pub commits_scanned: u64,
    /// Candidates mined.
    pub candidates: u64,
    /// Of those, classified as about execution time.
    pub yes: u64,
}

/// What a `mine github` run did (printed by the binary as text or JSON).
#[derive(Debug, Clone, Serialize)]
pub struct GithubSummary {
    /// The pushed-date windows searched: first day, last day, repositories found.
    pub windows: Vec<(String, String, u64)>,
    /// Windows cut in two because they held more than the search API returns.
    pub windows_bisected: u64,
    /// Single days that still held more.
    pub windows_truncated: Vec<String>,
    /// Repositories found.
    pub repos_found: usize,
    /// Of those, mined.
    pub repos_mined: usize,
    /// One line per repository.
    pub repos: Vec<RepoLine>,
    /// Commits scanned over all repositories.
    pub commits_scanned: u64,
    /// Candidates mined over all repositories.
    pub candidates: u64,
    /// Candidates per answer.
    pub classified: BTreeMap<String, u64>,
    /// The classifier's name.
    pub classifier: String,
    /// Candidates linked to an issue.
    pub linked_issues: u64,
    /// The LLM's requests, cache hits, tokens and cost (when an endpoint classified).
    pub llm_requests: u64,
    pub llm_cached: u64,
    pub llm_prompt_tokens: u64,
    pub llm_completion_tokens: u64,
    pub llm_cost_usd: Option<f64>,
    /// GitHub API requests sent and answers taken from the cache.
    pub github_requests: u64,
    pub github_cached: u64,
    /// ETIPs written.
    pub written: usize,
    /// Where.
    pub output: String,
}

fn day(s: &str, what: &str) -> anyhow::Result<i64> {
    search::parse_day(s)
        .ok_or_else(|| InputError(format!("{what} {s:?} is not a day (YYYY-MM-DD)")).into())
}

fn today() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    (secs / 86_400) as i64
}

/// GitHub's name of a language.
fn github_language(lang: Language) -> &'static str {
    match lang {
        Language::Java => "Java",
        Language::Python => "Python",
    }
}

/// The search criteria of a run.
fn criteria(st: &Settings, lang: Language) -> anyhow::Result<Criteria> {
    let criteria = Criteria {
        language: github_language(lang).into(),
        min_stars: st.min_stars,
        pushed_from: day(&st.pushed_after, "--pushed-after")?,
        pushed_to: match &st.pushed_before {
            Some(d) => day(d, "--pushed-before")?,
            None => today(),
        },
        max_repos: st.max_repos,
    };
    if criteria.pushed_from > criteria.pushed_to {
        return Err(InputError("--pushed-after is later than --pushed-before".into()).into());
    }
    Ok(criteria)
}

/// Refuses, before any work, an ETIPs file that is an input or a cache, or cannot be written.
fn check_outputs(a: &GithubConfig, st: &Settings, llm: &LlmOptions) -> anyhow::Result<()> {
    let mut paths = vec![Named::writes("--out", &a.out)];
    if let Some(c) = &a.config {
        paths.push(Named::reads("--config", c));
    }
    paths.push(Named::writes(
        "the GitHub cache of --cache",
        &st.cache.join("github-cache.sqlite"),
    ));
    if llm.is_endpoint() {
        paths.push(Named::writes("--llm-cache", &llm.cache));
    }
    distinct(&paths)?;
    crate::output::check(&a.out)?;
    Ok(())
}

/// Searches, mines, links and classifies (phase [`Phase::Repositories`]), writes the ETIPs found
/// to `a.out` and returns the run's summary.
pub fn mine(
    a: &GithubConfig,
    runtime: RuntimeSource,
    progress: &mut dyn Progress,
) -> anyhow::Result<GithubSummary> {
    let st = Settings::of(a)?;
    let criteria = criteria(&st, a.lang)?;
    let since = if st.since == "none" {
        None
    } else {
        Some(etip_mine_git::parse_date(&st.since, false).map_err(|e| InputError(e.to_string()))?)
    };
    check_out_folder(&a.out, "--out")?;
    let mut llm_opts = a.llm.clone();
    if llm_opts.cache == Path::new(LLM_CACHE) {
        llm_opts.cache = st.cache.join("llm-cache.sqlite");
    }
    check_outputs(a, &st, &llm_opts)?;
    std::fs::create_dir_all(&st.cache)
        .map_err(|e| InputError(format!("creating {}: {e}", st.cache.display())))?;
    let rt = runtime()?;
    let llm = llm_opts.classifier(rt)?;
    let github = github_client(&st.github_api, &st.cache.join("github-cache.sqlite"), rt)?;
    let mut run = Run {
        lang: a.lang,
        since,
        st: &st,
        github: &github,
        llm: llm.as_ref(),
        worker: &a.worker,
        calls: etip_github::Calls::default(),
        tally: Tally::default(),
    };
    let mut log = search::SearchLog::default();
    progress.note(&format!(
        "searching GitHub: language:{} stars:>={} pushed:{}..{}",
        criteria.language,
        st.min_stars,
        search::day_string(criteria.pushed_from),
        search::day_string(criteria.pushed_to)
    ));
    let found = search::search(
        &github.0,
        &criteria,
        Some(&github.1),
        &mut run.calls,
        &mut log,
    )
    .context("searching repositories")?;
    progress.note(&format!(
        "{} repositories ({} windows, {} cut in two)",
        found.len(),
        log.windows.len(),
        log.bisected
    ));
    progress.start(Phase::Repositories, found.len() as u64, 0);
    for repo in &found {
        progress.item(Phase::Repositories, &repo.full_name);
        run.repository(repo, progress);
        progress.advance(Phase::Repositories, 1);
    }
    progress.end(Phase::Repositories);
    let mut text = String::new();
    for c in &run.tally.written {
        text.push_str(&serde_json::to_string(c)?);
        text.push('\n');
    }
    crate::output::write(&a.out, &text)?;
    let classifier = llm.as_ref().map_or_else(
        || etip_classify::Offline::NAME.to_string(),
        |(c, _)| c.name(),
    );
    let prices = llm.as_ref().and_then(|(c, _)| c.config().prices);
    let (calls, tally) = (run.calls, run.tally);
    Ok(tally.summary(log, found.len(), calls, (classifier, prices), &a.out))
}

/// What the repositories of a run add up to.
#[derive(Default)]
struct Tally {
    lines: Vec<RepoLine>,
    written: Vec<Candidate>,
    seen_hashes: HashSet<String>,
    classified: BTreeMap<String, u64>,
    scanned: u64,
    candidates: u64,
    linked: u64,
    usage: etip_llm::Usage,
}

/// One run over the repositories found, with what it may use and what it counted.
struct Run<'a> {
    lang: Language,
    since: Option<i64>,
    st: &'a Settings,
    github: &'a GitHub,
    llm: Option<&'a Llm>,
    worker: &'a Option<WorkerCommand>,
    calls: etip_github::Calls,
    tally: Tally,
}

impl Tally {
    /// The run's summary: the search's `log`, the `found` repositories, the GitHub `calls`, the
    /// classifier's name and the LLM's prices, and where the ETIPs went.
    fn summary(
        self,
        log: search::SearchLog,
        found: usize,
        calls: etip_github::Calls,
        (classifier, prices): (String, Option<(f64, f64)>),
        out: &Path,
    ) -> GithubSummary {
        GithubSummary {
            windows: log.windows,
            windows_bisected: log.bisected,
            windows_truncated: log.truncated,
            repos_found: found,
            repos_mined: self.lines.iter().filter(|l| l.outcome == "mined").count(),
            repos: self.lines,
            commits_scanned: self.scanned,
            candidates: self.candidates,
            classified: self.classified,
            classifier,
            linked_issues: self.linked,
            llm_requests: self.usage.calls,
            llm_cached: self.usage.cached,
            llm_prompt_tokens: self.usage.prompt_tokens,
            llm_completion_tokens: self.usage.completion_tokens,
            llm_cost_usd: prices.map(|p| self.usage.cost(p)),
            github_requests: calls.requests,
            github_cached: calls.cached,
            written: self.written.len(),
            output: out.display().to_string(),
        }
    }
}

impl Run<'_> {
    /// Mines one repository (a failure is its line's outcome) and adds it to the tally.
    fn repository(&mut self, repo: &search::Found, progress: &mut dyn Progress) {
        let mined = mine_one(self, repo, progress);
        let (mut line, cands, links, used) = match mined {
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
                etip_llm::Usage::default(),
            ),
        };
        let t = &mut self.tally;
        t.usage.calls += used.calls;
        t.usage.cached += used.cached;
        t.usage.retries += used.retries;
        t.usage.prompt_tokens += used.prompt_tokens;
        t.usage.completion_tokens += used.completion_tokens;
        t.scanned += line.commits_scanned;
        t.candidates += line.candidates;
        t.linked += links;
        for c in cands {
            let answer = c
                .classification
                .as_ref()
                .map_or("unclassified".to_string(), |v| v.answer.clone());
            *t.classified.entry(answer.clone()).or_default() += 1;
            if answer == "yes" {
                line.yes += 1;
            }
            if (answer == "yes" || self.st.keep_all) && t.seen_hashes.insert(c.diff_hash.clone()) {
                t.written.push(c);
            }
        }
        t.lines.push(line);
    }
}

/// Mirrors, mines, links and classifies one repository; its line, its candidates, the number
/// linked to an issue and the LLM's use.
fn mine_one(
    run: &mut Run,
    repo: &search::Found,
    progress: &mut dyn Progress,
) -> anyhow::Result<(RepoLine, Vec<Candidate>, u64, etip_llm::Usage)> {
    let a = run.st;
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
    let mut cfg = MineConfig::new(path, run.lang, out.clone());
    cfg.since = run.since;
    cfg.max_files = a.max_files;
    cfg.paths = a.paths.clone();
    cfg.repo_name = Some(repo.full_name.clone());
    cfg.classify = true;
    // Worker processes, as `mine local` starts them.
    cfg.jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    cfg.worker = run.worker.clone();
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
        return Ok((line, Vec::new(), 0, etip_llm::Usage::default()));
    }
    let services = Services {
        cfg: &cfg,
        github: Some(run.github),
        llm: run.llm,
        classify: true,
    };
    let done = post_process(&out, &services, progress)?;
    let links = done.links.unwrap_or_default();
    run.calls.requests += links.calls.requests;
    run.calls.cached += links.calls.cached;
    let text = std::fs::read_to_string(&out)?;
    let cands: Vec<Candidate> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .with_context(|| format!("reading {}", out.display()))?;
    line.candidates = cands.len() as u64;
    Ok((line, cands, links.linked, done.usage))
}
