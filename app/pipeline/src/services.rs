//! The network services the mining and classifying stages may use, each with its answers' cache
//! (SQLite): an OpenAI-compatible LLM endpoint ([`LlmOptions`]) and GitHub's API
//! ([`github_client`]). Secrets come from the environment when a service is opened
//! (`OPENAI_API_KEY`, `GITHUB_TOKEN`) and are never part of a configuration or a message.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::InputError;

/// Gives a stage the process's async runtime when it first needs one (GitHub's API, an LLM
/// endpoint). The binary's makes the runtime on first use, so a run that needs none (bad input,
/// the offline classifier) never starts one.
pub type RuntimeSource = fn() -> anyhow::Result<&'static tokio::runtime::Runtime>;

/// An LLM classifier with its answers' cache.
pub type Llm = (etip_llm::LlmClassifier, etip_store::Store);

/// GitHub's API client with its answers' cache.
pub type GitHub = (etip_github::GitHub, etip_store::Store);

/// The LLM classifier's options: without a base URL, the offline classifier answers.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmOptions {
    /// An OpenAI-compatible endpoint up to `/v1` (`--llm-base-url`).
    pub base_url: Option<String>,
    /// The model to ask (`--llm-model`).
    pub model: Option<String>,
    /// Dollars per million prompt tokens (`--llm-price-in`), to report the run's cost.
    pub price_in: Option<f64>,
    /// Dollars per million completion tokens (`--llm-price-out`).
    pub price_out: Option<f64>,
    /// Time limit of one request, seconds (at least 1 is used).
    pub timeout_secs: u64,
    /// Retries of a request after a rate limit, a server error or a broken connection.
    pub retries: u32,
    /// The answers' cache (SQLite, keyed by model and prompt): a prompt is paid for once.
    pub cache: PathBuf,
}

/// The default location of the LLM answers' cache.
pub const LLM_CACHE: &str = ".etip/llm-cache.sqlite";

impl Default for LlmOptions {
    fn default() -> Self {
        LlmOptions {
            base_url: None,
            model: None,
            price_in: None,
            price_out: None,
            timeout_secs: 60,
            retries: 5,
            cache: PathBuf::from(LLM_CACHE),
        }
    }
}

impl LlmOptions {
    /// Whether an endpoint is asked (a base URL is given).
    pub fn is_endpoint(&self) -> bool {
        self.base_url.is_some()
    }

    /// The endpoint's configuration when one is given; the key comes from `OPENAI_API_KEY`. A
    /// URL that is not http(s) or negative prices are bad input. `flag`: the options' prefix in
    /// messages (`llm`, `judge`).
    pub fn config(&self, flag: &str) -> anyhow::Result<Option<etip_llm::LlmConfig>> {
        let (Some(url), Some(model)) = (&self.base_url, &self.model) else {
            return Ok(None);
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(
                InputError(format!("--{flag}-base-url {url:?} is not an http(s) URL")).into(),
            );
        }
        let mut cfg = etip_llm::LlmConfig::new(url, model);
        cfg.api_key = std::env::var("OPENAI_API_KEY")
            .ok()
            .filter(|k| !k.is_empty());
        cfg.timeout = Duration::from_secs(self.timeout_secs.max(1));
        cfg.retries = self.retries;
        cfg.prices = self.price_in.zip(self.price_out);
        if let Some((i, o)) = cfg.prices
            && !(i >= 0.0 && o >= 0.0 && i.is_finite() && o.is_finite())
        {
            return Err(InputError(format!(
                "--{flag}-price-in/--{flag}-price-out must be non-negative"
            ))
            .into());
        }
        Ok(Some(cfg))
    }

    /// The LLM classifier when an endpoint is given, with its cache; an unusable cache is bad
    /// input (see [`LlmOptions::config`]).
    pub fn classifier(&self, rt: &tokio::runtime::Runtime) -> anyhow::Result<Option<Llm>> {
        let Some(cfg) = self.config("llm")? else {
            return Ok(None);
        };
        let store = open_cache(&self.cache)?;
        Ok(Some((
            etip_llm::LlmClassifier::new(cfg, rt.handle().clone())?,
            store,
        )))
    }

    /// The rubric judge of reward hacks when an endpoint is given (`votes` at `temperature`),
    /// with its cache.
    pub fn judge(
        &self,
        rt: &tokio::runtime::Runtime,
        votes: usize,
        temperature: f32,
    ) -> anyhow::Result<Option<(etip_llm::judge::Judge, etip_store::Store)>> {
        let Some(cfg) = self.config("judge")? else {
            return Ok(None);
        };
        if votes == 0 || !(0.0..=2.0).contains(&temperature) {
            return Err(InputError(format!(
                "--judge-votes must be at least 1 and --judge-temperature in [0, 2], got {votes} and {temperature}"
            ))
            .into());
        }
        let store = open_cache(&self.cache)?;
        let chat = etip_llm::Chat::new(cfg, rt.handle().clone())?;
        Ok(Some((
            etip_llm::judge::Judge {
                chat,
                votes,
                temperature,
            },
            store,
        )))
    }
}

/// What an LLM endpoint cost a run: its requests, cache hits and tokens, with the model and the
/// prices to state them.
#[derive(Debug, Clone)]
pub struct LlmUse {
    /// The model asked.
    pub model: String,
    /// Dollars per million prompt and completion tokens, when given.
    pub prices: Option<(f64, f64)>,
    /// Requests, cache hits and tokens.
    pub usage: etip_llm::Usage,
}

impl LlmUse {
    /// The use of `llm` counted in `usage`.
    pub(crate) fn of(llm: &Llm, usage: etip_llm::Usage) -> LlmUse {
        LlmUse {
            model: llm.0.config().model.clone(),
            prices: llm.0.config().prices,
            usage,
        }
    }

    /// One line for the person running the stage.
    pub fn line(&self) -> String {
        self.usage.line(&self.model, self.prices)
    }
}

/// An answers' cache (SQLite), its folder created when missing; a file that cannot be used is
/// bad input.
pub fn open_cache(path: &Path) -> anyhow::Result<etip_store::Store> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| InputError(format!("creating {}: {e}", dir.display())))?;
    }
    Ok(etip_store::Store::open(path).map_err(|e| InputError(e.to_string()))?)
}

/// The GitHub client of `api` (token from `GITHUB_TOKEN`) with its answers' cache at `cache`.
pub fn github_client(
    api: &str,
    cache: &Path,
    rt: &tokio::runtime::Runtime,
) -> anyhow::Result<GitHub> {
    let store = open_cache(cache)?;
    let token = std::env::var("GITHUB_TOKEN").ok().filter(|t| !t.is_empty());
    let gh = etip_github::GitHub::new(Some(api), token, rt.handle().clone())?;
    Ok((gh, store))
}
