//! `etip mine github`: the arguments of the GitHub mining stage
//! ([`etip_pipeline::mine::github`]) and the printing of its summary.

use std::io::Write;
use std::path::PathBuf;

use etip_pipeline::mine::github::{self, BuildTools, GithubConfig, GithubSummary};

use super::classify::LlmArgs;
use super::mine_args::{Format, LangArg, PathArgs, SummaryArgs, worker_command};
use super::progress::Bars;

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
    pub build_tools: Option<BuildToolsArg>,
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
    pub paths: PathArgs,
    /// The cache: bare mirrors, per-repository candidates and state, API and LLM answers
    /// [default: .etip/github].
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// GitHub's API base URL (GitHub Enterprise, or a test server) [default: https://api.github.com].
    #[arg(long, value_name = "URL")]
    pub github_api: Option<String>,
    #[command(flatten)]
    pub summary: SummaryArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// Which build tools qualify a repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BuildToolsArg {
    Strict,
    Any,
}

impl From<BuildToolsArg> for BuildTools {
    fn from(b: BuildToolsArg) -> BuildTools {
        match b {
            BuildToolsArg::Strict => BuildTools::Strict,
            BuildToolsArg::Any => BuildTools::Any,
        }
    }
}

impl GithubArgs {
    /// The stage's configuration.
    fn config(&self) -> GithubConfig {
        GithubConfig {
            lang: self.lang.into(),
            out: self.out.clone(),
            config: self.config.clone(),
            min_stars: self.min_stars,
            pushed_after: self.pushed_after.clone(),
            pushed_before: self.pushed_before.clone(),
            max_repos: self.max_repos,
            build_tools: self.build_tools.map(BuildTools::from),
            since: self.since.clone(),
            max_files: self.max_files,
            keep_all: self.keep_all,
            paths: (&self.paths).into(),
            cache: self.cache.clone(),
            github_api: self.github_api.clone(),
            llm: (&self.llm).into(),
            // Worker processes of this binary, as `mine local` starts them.
            worker: worker_command(),
        }
    }
}

pub fn run(a: GithubArgs, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let summary = github::mine(&a.config(), super::runtime, &mut Bars::default())?;
    print_summary(&summary, a.summary.format, stdout)
}

fn print_summary(s: &GithubSummary, format: Format, w: &mut dyn Write) -> anyhow::Result<()> {
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
