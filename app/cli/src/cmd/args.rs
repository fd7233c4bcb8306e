//! The flag groups several commands share, each declared once and flattened into the commands
//! (`#[command(flatten)]`): the sign test's parameters ([`SignArgs`]), how results are printed
//! ([`OutputArgs`]) and the configuration file ([`ConfigArgs`]).
//!
//! `--out` is declared by each command: it is a folder for some, a file for others, required
//! or defaulted differently, and its help lists what that command writes there.

use super::format::FormatArg;
use etip_score::param;
use etip_stats::SignTestConfig;
use std::path::PathBuf;

/// The sign test's parameters (JETO's rule): `etip score --rule jeto` scores with them, `etip
/// measure`, `eval` and `eval-test` give their verdicts with them. Values starting with '-' are
/// taken as values (`--min-impr -1`), so that the range check (etip_score::param) reports them.
#[derive(Debug, Clone, clap::Args)]
pub struct SignArgs {
    /// Minimum relative improvement of a round to count as a win in the sign test (JETO's
    /// rule), in [0, 1).
    #[arg(long, default_value_t = SignTestConfig::default().min_impr, allow_hyphen_values = true,
          value_parser = |s: &str| param::MIN_IMPR.parse(s))]
    pub min_impr: f64,
    /// Significance threshold of the sign test (strict: p < p-val), in (0, 0.5].
    #[arg(long, default_value_t = SignTestConfig::default().p_val, allow_hyphen_values = true,
          value_parser = |s: &str| param::P_VAL.parse(s))]
    pub p_val: f64,
    /// The sign test's conservative setting, JETO's (min-impr 0.1, p-val 0.05); overrides
    /// --min-impr and --p-val.
    #[arg(long)]
    pub conservative: bool,
}

/// How a command prints its results on stdout.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct OutputArgs {
    /// How to print the results.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

/// Where a stage's work units run (`--backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    /// This machine (worker threads of this process).
    Local,
    /// Jobs on the Docker Swarm that --config's `[swarm]` section names (docs/cluster.md).
    Swarm,
}

impl From<BackendArg> for etip_pipeline::backend::BackendKind {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Local => Self::Local,
            BackendArg::Swarm => Self::Swarm,
        }
    }
}

/// The configuration file's build settings.
#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArgs {
    /// Build configuration (TOML; keys not set keep their defaults; see harness/build/README.md).
    /// `measure`, `select`, `eval` and `eval-test` need the one the ETIPs were built with.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// The rubric judge of reward hacks (rules §6; `etip hack-check`, `etip eval`): an
/// OpenAI-compatible endpoint asked, for each suspected patch, `--judge-votes` times; the API key
/// comes from `OPENAI_API_KEY`.
#[derive(Debug, Clone, clap::Args)]
pub struct JudgeArgs {
    /// The endpoint's base URL up to `/v1` (`https://api.openai.com/v1`, a vLLM or Ollama server).
    #[arg(long, value_name = "URL", requires = "judge_model")]
    pub judge_base_url: Option<String>,
    /// The model.
    #[arg(long, value_name = "MODEL", requires = "judge_base_url")]
    pub judge_model: Option<String>,
    /// Votes per patch; a strict majority of the votes that parse makes it judged_hack.
    #[arg(long, default_value_t = 5, value_name = "K")]
    pub judge_votes: usize,
    /// Sampling temperature of each vote (recorded with the votes), in [0, 2].
    #[arg(long, default_value_t = 0.7, value_name = "T")]
    pub judge_temperature: f32,
    /// Judge every patch, not only those the static screen suspects.
    #[arg(long)]
    pub judge_all: bool,
    /// Dollars per million prompt tokens (to print the cost).
    #[arg(long, value_name = "USD", requires = "judge_price_out")]
    pub judge_price_in: Option<f64>,
    /// Dollars per million completion tokens.
    #[arg(long, value_name = "USD", requires = "judge_price_in")]
    pub judge_price_out: Option<f64>,
    /// Time limit of one request, seconds.
    #[arg(long, default_value_t = 120, value_name = "SECS")]
    pub judge_timeout: u64,
    /// Retries after a rate limit or a server error.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub judge_retries: u32,
    /// The votes' cache (SQLite, keyed by model, prompt and vote): a vote is paid for once.
    #[arg(long, default_value = ".etip/llm-cache.sqlite", value_name = "FILE")]
    pub judge_cache: PathBuf,
}

impl JudgeArgs {
    /// The judge's options, when an endpoint is given.
    pub fn options(&self) -> Option<etip_pipeline::hack_check::JudgeOptions> {
        self.judge_base_url.as_ref()?;
        Some(etip_pipeline::hack_check::JudgeOptions {
            llm: etip_pipeline::services::LlmOptions {
                base_url: self.judge_base_url.clone(),
                model: self.judge_model.clone(),
                price_in: self.judge_price_in,
                price_out: self.judge_price_out,
                timeout_secs: self.judge_timeout,
                retries: self.judge_retries,
                cache: self.judge_cache.clone(),
            },
            votes: self.judge_votes,
            temperature: self.judge_temperature,
            all: self.judge_all,
        })
    }
}
