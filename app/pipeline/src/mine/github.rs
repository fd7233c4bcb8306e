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
use super::mine::{Format, LangArg};
use super::mine_post::{Services, post_process};
use crate::cmd::UsageError;

#[derive(Debug, clap::Args)]
pub struct GithubArgs {
    /// Language of the repositories (GitHub's language) and the mining profile.
    #[arg(long, value_enum)]
    pub lang: LangArg,
    /// The ETIPs found: candidates classified as about execution time, one JSON line each.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Settings of `[mine.github]` in this TOML file (`etip config init` writes one); a flag
    /// given on the command line wins over the file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Repositories with at least this many stars [default: 100].
    #[arg(long, value_name = "N")]
    pub min_stars: Option<u64>,
    /// Repositories pushed on or after this day, YYYY-MM-DD [default: 2024-01-01].
    #[arg(long, value_name = "DAY")]
    pub pushed_after: Option<String>,
    /// Repositories pushed on or before this day, YYYY-MM-DD [default: today].
    #[arg(long, value_name = "DAY")]
    pub pushed_before: Option<String>,
    /// At most this many repositories, the most starred of each window first [default: 20].
    #[arg(long, value_name = "N")]
    pub max_repos: Option<usize>,
    /// Which build tools a repository needs: `strict` is SPEC 2's (Java: `mvnw` at the root;
    /// Python: `pyproject.toml`, `setup.py` or `setup.cfg`), `any` also takes a bare `pom.xml`
    /// or Gradle [default: strict].
    #[arg(long, value_enum)]
    pub build_tools: Option<BuildTools>,
    /// Mine commits authored on or after DATE (`none`: all) [default: 2015-01-01].
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Reject commits changing more than N files [default: 20].
    #[arg(long, value_name = "N")]
    pub max_files: Option<usize>,
    /// Write every candidate, classified `yes` or not.
    #[arg(long)]
    pub keep_all: bool,
    #[command(flatten)]
    pub paths: super::mine::PathArgs,
    /// The cache: bare mirrors, per-repository candidates and state, API and LLM answers
    /// [default: .etip/github].
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// GitHub's API base URL (GitHub Enterprise, or a test server) [default: https://api.github.com].
    #[arg(long, value_name = "URL")]
    pub github_api: Option<String>,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub llm: LlmArgs,
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

fn load_file(path: Option<&std::path::Path>) -> anyhow::Result<FileSettings> {
    let Some(path) = path else {
        return Ok(FileSettings::default());
    };
    let bad = |e: &dyn std::fmt::Display| UsageError(format!("{}: {e}", path.display()));
    let text = super::input::read_text(path)?;
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
    fn of(a: &GithubArgs) -> anyhow::Result<Settings> {
        let f = load_file(a.config.as_deref())?;
        let from_file = super::mine::PathArgs {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
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
    /// The LLM's requests, cache hits, tokens and cost (when an endpoint classified).
    llm_requests: u64,
    llm_cached: u64,
    llm_prompt_tokens: u64,
    llm_completion_tokens: u64,
    llm_cost_usd: Option<f64>,
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
    let st = Settings::of(&a)?;
    let (lang, language) = match a.lang {
        LangArg::Java => (Language::Java, "Java"),
        LangArg::Python => (Language::Python, "Python"),
    };
    let criteria = Criteria {
        language: language.into(),
        min_stars: st.min_stars,
        pushed_from: day(&st.pushed_after, "--pushed-after")?,
        pushed_to: match &st.pushed_before {
            Some(d) => day(d, "--pushed-before")?,
            None => today(),
        },
        max_repos: st.max_repos,
    };
    if criteria.pushed_from > criteria.pushed_to {
        return Err(UsageError("--pushed-after is later than --pushed-before".into()).into());
    }
    let since = if st.since == "none" {
        None
    } else {
        Some(etip_mine_git::parse_date(&st.since, false).map_err(|e| UsageError(e.to_string()))?)
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
    let mut llm_args = a.llm.clone();
    if llm_args.llm_cache == std::path::Path::new(".etip/llm-cache.sqlite") {
        llm_args.llm_cache = st.cache.join("llm-cache.sqlite");
    }
    // Before any work: the ETIPs file is no input and no cache.
    {
        use super::output::{Named, distinct};
        let mut paths = vec![Named::writes("--out", &a.out)];
        if let Some(c) = &a.config {
            paths.push(Named::reads("--config", c));
        }
        paths.push(Named::writes(
            "the GitHub cache of --cache",
            &st.cache.join("github-cache.sqlite"),
        ));
        if llm_args.llm_base_url.is_some() {
            paths.push(Named::writes("--llm-cache", &llm_args.llm_cache));
        }
        distinct(&paths)?;
        super::output::check(&a.out)?;
    }
    std::fs::create_dir_all(&st.cache)
        .map_err(|e| UsageError(format!("creating {}: {e}", st.cache.display())))?;
    let rt = super::runtime()?;
    let llm = llm_args.classifier(rt)?;
    let (gh, store) =
        super::mine::github_client(&st.github_api, &st.cache.join("github-cache.sqlite"), rt)?;
    let mut calls = etip_github::Calls::default();
    let mut log = search::SearchLog::default();
    eprintln!(
        "searching GitHub: language:{language} stars:>={} pushed:{}..{}",
        st.min_stars,
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
    let mut usage = etip_llm::Usage::default();
    for repo in &found {
        bar.set_message(repo.full_name.clone());
        let line = mine_one(repo, lang, since, &st, &github, llm.as_ref(), &mut calls);
        let (mut line, cands, links, used) = match line {
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
        usage.calls += used.calls;
        usage.cached += used.cached;
        usage.retries += used.retries;
        usage.prompt_tokens += used.prompt_tokens;
        usage.completion_tokens += used.completion_tokens;
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
            if (answer == "yes" || st.keep_all) && seen_hashes.insert(c.diff_hash.clone()) {
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
    super::output::write(&a.out, &text)?;
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
        llm_requests: usage.calls,
        llm_cached: usage.cached,
        llm_prompt_tokens: usage.prompt_tokens,
        llm_completion_tokens: usage.completion_tokens,
        llm_cost_usd: llm
            .as_ref()
            .and_then(|(c, _)| c.config().prices)
            .map(|p| usage.cost(p)),
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
    a: &Settings,
    github: &(etip_github::GitHub, etip_store::Store),
    llm: Option<&(etip_llm::LlmClassifier, etip_store::Store)>,
    calls: &mut etip_github::Calls,
) -> anyhow::Result<(RepoLine, Vec<Candidate>, u64, etip_llm::Usage)> {
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
    cfg.paths = a.paths.clone();
    cfg.repo_name = Some(repo.full_name.clone());
    cfg.classify = true;
    // Worker processes of this binary, as `mine local` starts them.
    cfg.jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    cfg.worker = super::mine::worker_command();
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
    let done = post_process(
        &out,
        &Services {
            cfg: &cfg,
            github: Some(github),
            llm,
            classify: true,
        },
    )?;
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
    Ok((line, cands, links.linked, done.usage))
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
    if s.llm_requests + s.llm_cached > 0 {
        writeln!(
            w,
            "LLM: {} requests, {} answers from the cache, {} prompt and {} completion tokens{}",
            s.llm_requests,
            s.llm_cached,
            s.llm_prompt_tokens,
            s.llm_completion_tokens,
            s.llm_cost_usd
                .map_or(String::new(), |c| format!(", cost ${c:.4}"))
        )?;
    }
    writeln!(w, "{} ETIPs written to {}", s.written, s.output)?;
    Ok(())
}
