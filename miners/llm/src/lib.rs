//! Two questions asked of an OpenAI-compatible endpoint ([`chat`]): is an issue about execution
//! time (the classifier, below), and is a patch a reward hack ([`judge`], a rubric asked k times).
//!
//! Is an issue about execution time? Asked of an OpenAI-compatible endpoint (`/v1/chat/completions`,
//! through async-openai), as JETO did, with what JETO left out: the temperature is sent (0), the
//! one-word answer is parsed robustly (`Yes.`, `**no**`, `Answer: yes`; anything else is
//! `unclassified` with the reply quoted), every answer is cached by model and prompt hash in the
//! run's SQLite store (a prompt is paid for once, and a re-run costs nothing), rate limits and
//! server errors are retried (async-openai's own layer retries three times within about a second,
//! honouring `Retry-After`; then etip waits 2 s, 4 s, ... between further attempts), and the
//! tokens (and, given prices, the cost) are counted.
//!
//! The API key is read by the caller (from `OPENAI_API_KEY`) and only sent to the endpoint: it is
//! never printed or logged.
//!
//! The engine is asynchronous; [`LlmClassifier`] blocks on the runtime handle it is given (the
//! binary owns the one runtime).

pub mod chat;
pub mod judge;

pub use chat::Chat;
use etip_classify::{Answer, Classification, IssueText};
use etip_store::Store;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Version of the prompt: part of every prompt hash, so that a changed prompt is asked again.
pub const PROMPT_VERSION: &str = "etip-issue-prompt-1";

/// At most this many characters of an issue body or commit message go into a prompt.
pub const MAX_FIELD_CHARS: usize = 6000;

/// What to ask and how.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// The endpoint's base URL, up to `/v1` (`https://api.openai.com/v1`).
    pub base_url: String,
    pub model: String,
    /// Sent as the bearer token; never printed.
    pub api_key: Option<String>,
    /// Time limit of one request.
    pub timeout: Duration,
    /// Attempts after the first, for rate limits (429), server errors (5xx) and broken
    /// connections, each after async-openai's own three quick retries.
    pub retries: u32,
    /// The first wait before a retry; doubled each time.
    pub backoff: Duration,
    /// Dollars per million prompt and completion tokens, to print the cost.
    pub prices: Option<(f64, f64)>,
}

impl LlmConfig {
    pub fn new(base_url: &str, model: &str) -> LlmConfig {
        LlmConfig {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key: None,
            timeout: Duration::from_secs(60),
            retries: 5,
            backoff: Duration::from_secs(2),
            prices: None,
        }
    }
}

/// Failures of the endpoint (after the retries).
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("the LLM endpoint {url} failed after {attempts} attempt(s): {detail}")]
    Endpoint {
        url: String,
        attempts: u32,
        detail: String,
    },
    #[error("building the LLM request: {0}")]
    Request(String),
    #[error("the LLM endpoint's answer is not a chat completion: {0}")]
    Malformed(String),
    #[error(transparent)]
    Store(#[from] etip_store::StoreError),
}

/// Requests, cache hits and tokens of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// Requests sent (retries not counted).
    pub calls: u64,
    /// Answers taken from the cache.
    pub cached: u64,
    /// etip's retries after a rate limit or a server error (beyond async-openai's own).
    pub retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    /// Dollars, at `prices` per million prompt and completion tokens.
    pub fn cost(&self, prices: (f64, f64)) -> f64 {
        (self.prompt_tokens as f64 * prices.0 + self.completion_tokens as f64 * prices.1) / 1e6
    }

    /// One line for the run's summary.
    pub fn line(&self, model: &str, prices: Option<(f64, f64)>) -> String {
        self.line_for("llm", model, prices)
    }

    /// One line for the run's summary, naming the price options `--{flag}-price-in/out`.
    pub fn line_for(&self, flag: &str, model: &str, prices: Option<(f64, f64)>) -> String {
        let cost = match prices {
            Some(p) => format!(", cost ${:.4}", self.cost(p)),
            None => format!(", cost not known (give --{flag}-price-in and --{flag}-price-out)"),
        };
        format!(
            "LLM {model}: {} request(s), {} answer(s) from the cache, {} retried, {} prompt and {} completion tokens{cost}",
            self.calls, self.cached, self.retries, self.prompt_tokens, self.completion_tokens
        )
    }
}

pub(crate) fn clip(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The system and user messages for one issue (`repo`: `owner/name`, when known).
pub fn prompt(text: &IssueText, repo: Option<&str>) -> (String, String) {
    let system = "You classify GitHub issues of software projects. Answer with exactly one word, \
                  yes or no. Answer yes only if the issue is primarily about improving the \
                  execution time of the project's own code: speed, latency, throughput, CPU time, \
                  algorithmic complexity, a slowdown. Answer no for memory use or leaks, hangs and \
                  deadlocks, flaky tests, the speed of builds, CI, test suites or installation, \
                  documentation, wrong results and features. If you are unsure, answer no."
        .to_string();
    let mut user = String::new();
    if let Some(r) = repo {
        user.push_str(&format!("Repository: {r}\n"));
    }
    user.push_str(&format!("Issue title: {}\n", clip(text.title, 500)));
    if !text.labels.is_empty() {
        user.push_str(&format!("Labels: {}\n", text.labels.join(", ")));
    }
    user.push_str(&format!(
        "Issue body:\n{}\n",
        clip(text.body, MAX_FIELD_CHARS)
    ));
    if !text.commit_message.is_empty() {
        user.push_str(&format!(
            "Commit message:\n{}\n",
            clip(text.commit_message, MAX_FIELD_CHARS)
        ));
    }
    user.push_str("Is this issue primarily about improving execution time? Answer yes or no.");
    (system, user)
}

/// The cache key of a prompt: SHA-256 over the prompt version and both messages.
pub fn prompt_hash(system: &str, user: &str) -> String {
    let mut h = Sha256::new();
    for part in [PROMPT_VERSION, system, user] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}

/// A one-word answer read robustly: the first word when it is `yes` or `no` (any case, with
/// quotes, markdown or punctuation around it), else the only one of the two the reply contains;
/// `None` when it has neither or both.
pub fn parse_answer(raw: &str) -> Option<Answer> {
    let words: Vec<String> = raw
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    match words.first().map(String::as_str) {
        Some("yes") => return Some(Answer::Yes),
        Some("no") => return Some(Answer::No),
        _ => {}
    }
    let yes = words.iter().any(|w| w == "yes");
    let no = words.iter().any(|w| w == "no");
    match (yes, no) {
        (true, false) => Some(Answer::Yes),
        (false, true) => Some(Answer::No),
        _ => None,
    }
}

/// The classifier (see the crate docs).
pub struct LlmClassifier {
    chat: Chat,
}

impl LlmClassifier {
    pub fn new(cfg: LlmConfig, rt: tokio::runtime::Handle) -> Result<LlmClassifier, LlmError> {
        Ok(LlmClassifier {
            chat: Chat::new(cfg, rt)?,
        })
    }

    /// The classifier's name as outputs record it.
    pub fn name(&self) -> String {
        format!("llm:{}", self.chat.cfg.model)
    }

    pub fn config(&self) -> &LlmConfig {
        &self.chat.cfg
    }

    /// Classifies one issue: from `cache` when it holds the answer, else asked (and stored).
    pub fn classify(
        &self,
        text: &IssueText,
        repo: Option<&str>,
        cache: Option<&Store>,
        usage: &mut Usage,
    ) -> Result<Classification, LlmError> {
        let (system, user) = prompt(text, repo);
        let hash = prompt_hash(&system, &user);
        let cached = match cache {
            Some(store) => store.llm_answer(&self.chat.cfg.model, &hash)?,
            None => None,
        };
        let answer = match cached {
            Some(a) => {
                usage.cached += 1;
                a
            }
            None => {
                let a = match self.chat.ask(&system, &user, 0.0, 16, usage) {
                    Ok(a) => a,
                    // An answer that is not a chat completion: recorded as no answer, with why.
                    Err(LlmError::Malformed(detail)) => {
                        return Ok(unanswered(
                            self.name(),
                            format!("the endpoint's answer is not a chat completion: {detail}"),
                        ));
                    }
                    Err(e) => return Err(e),
                };
                if let Some(store) = cache {
                    store.record_llm_answer(&self.chat.cfg.model, &hash, &a)?;
                }
                a
            }
        };
        let parsed = parse_answer(&answer.raw);
        Ok(Classification {
            answer: parsed.unwrap_or(Answer::Unclassified),
            classifier: self.name(),
            score: 0,
            rival: None,
            evidence: Vec::new(),
            reason: match parsed {
                Some(_) => None,
                None => Some(format!(
                    "the model's reply is neither yes nor no: {:?}",
                    clip(answer.raw.trim(), 200)
                )),
            },
        })
    }
}

fn unanswered(classifier: String, reason: String) -> Classification {
    Classification {
        answer: Answer::Unclassified,
        classifier,
        score: 0,
        rival: None,
        evidence: Vec::new(),
        reason: Some(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_robustly() {
        for (raw, want) in [
            ("yes", Some(Answer::Yes)),
            ("Yes.", Some(Answer::Yes)),
            ("**No**", Some(Answer::No)),
            ("\"no\"\n", Some(Answer::No)),
            ("Answer: yes", Some(Answer::Yes)),
            (
                "No, it is about memory; yes, it mentions speed",
                Some(Answer::No),
            ),
            ("maybe", None),
            ("yes or no? I cannot tell", Some(Answer::Yes)),
            ("I cannot say yes or no", None),
            ("", None),
        ] {
            assert_eq!(parse_answer(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn the_prompt_holds_the_issue_and_its_hash_changes_with_it() {
        let labels = vec!["performance".to_string()];
        let t = IssueText {
            title: "Parser is slow",
            body: &"x".repeat(10_000),
            labels: &labels,
            commit_message: "Speed up the parser",
        };
        let (s, u) = prompt(&t, Some("a/b"));
        assert!(s.contains("exactly one word"));
        assert!(u.contains("Repository: a/b") && u.contains("Labels: performance"));
        assert!(u.contains("Commit message:\nSpeed up the parser"));
        assert!(u.len() < 6_800, "the body is clipped: {}", u.len());
        let other = IssueText {
            title: "Parser is fast",
            ..t
        };
        let (s2, u2) = prompt(&other, Some("a/b"));
        assert_ne!(prompt_hash(&s, &u), prompt_hash(&s2, &u2));
        assert_eq!(prompt_hash(&s, &u), prompt_hash(&s, &u));
    }

    #[test]
    fn cost_from_prices() {
        let u = Usage {
            prompt_tokens: 2_000_000,
            completion_tokens: 1_000,
            ..Usage::default()
        };
        assert!((u.cost((0.25, 2.0)) - 0.502).abs() < 1e-9);
        assert!(u.line("m", None).contains("cost not known"));
    }
}
