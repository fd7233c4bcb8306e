//! One OpenAI-compatible chat endpoint: a prompt sent with its temperature and token limit,
//! rate limits, server errors and broken connections retried with a doubling wait, tokens
//! counted; what the classifier and the hack judge both ask through.

use crate::{LlmConfig, LlmError, Usage, clip};
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::types::chat::{
    ChatCompletionRequestSystemMessageArgs, ChatCompletionRequestUserMessageArgs,
    CreateChatCompletionRequestArgs,
};
use etip_store::CachedAnswer;

/// A client of one endpoint and model.
pub struct Chat {
    client: async_openai::Client<OpenAIConfig>,
    pub(crate) cfg: LlmConfig,
    rt: tokio::runtime::Handle,
}

impl Chat {
    pub fn new(cfg: LlmConfig, rt: tokio::runtime::Handle) -> Result<Chat, LlmError> {
        let mut oc = OpenAIConfig::new().with_api_base(&cfg.base_url);
        // Without a key the header says so; endpoints that need none ignore it.
        oc = oc.with_api_key(cfg.api_key.clone().unwrap_or_else(|| "none".into()));
        let http = reqwest::Client::builder()
            .timeout(cfg.timeout)
            .build()
            .map_err(|e| LlmError::Request(e.to_string()))?;
        Ok(Chat {
            client: async_openai::Client::with_config(oc).with_http_client(http),
            cfg,
            rt,
        })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.cfg
    }

    /// Sends one prompt, retrying rate limits, server errors and broken connections; counts
    /// the request and its tokens in `usage`.
    pub fn ask(
        &self,
        system: &str,
        user: &str,
        temperature: f32,
        max_tokens: u32,
        usage: &mut Usage,
    ) -> Result<CachedAnswer, LlmError> {
        let bad = |e: async_openai::error::OpenAIError| LlmError::Request(e.to_string());
        let request = CreateChatCompletionRequestArgs::default()
            .model(&self.cfg.model)
            .temperature(temperature)
            .max_completion_tokens(max_tokens)
            .messages([
                ChatCompletionRequestSystemMessageArgs::default()
                    .content(system)
                    .build()
                    .map_err(bad)?
                    .into(),
                ChatCompletionRequestUserMessageArgs::default()
                    .content(user)
                    .build()
                    .map_err(bad)?
                    .into(),
            ])
            .build()
            .map_err(bad)?;
        let mut wait = self.cfg.backoff;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = self.rt.block_on(self.client.chat().create(request.clone()));
            match result {
                Ok(r) => {
                    let raw = r
                        .choices
                        .first()
                        .and_then(|c| c.message.content.clone())
                        .unwrap_or_default();
                    let (p, c) = r
                        .usage
                        .map_or((0, 0), |u| (u.prompt_tokens, u.completion_tokens));
                    usage.calls += 1;
                    usage.prompt_tokens += u64::from(p);
                    usage.completion_tokens += u64::from(c);
                    return Ok(CachedAnswer {
                        raw,
                        prompt_tokens: u64::from(p),
                        completion_tokens: u64::from(c),
                    });
                }
                Err(OpenAIError::JSONDeserialize(e, content)) => {
                    usage.calls += 1;
                    return Err(LlmError::Malformed(format!(
                        "{e}: {:?}",
                        clip(&content, 200)
                    )));
                }
                Err(e) if attempt <= self.cfg.retries && retryable(&e) => {
                    tracing::warn!("LLM request failed ({e}); retrying in {wait:?}");
                    usage.retries += 1;
                    std::thread::sleep(wait);
                    wait = wait.saturating_mul(2);
                }
                Err(e) => {
                    return Err(LlmError::Endpoint {
                        url: self.cfg.base_url.clone(),
                        attempts: attempt,
                        detail: e.to_string(),
                    });
                }
            }
        }
    }
}

/// Rate limits, server errors and transport failures are worth another attempt; a refused
/// request (bad key, unknown model) is not.
fn retryable(e: &OpenAIError) -> bool {
    match e {
        OpenAIError::ApiError(r) => {
            r.status_code.as_u16() == 429 || r.status_code.is_server_error()
        }
        OpenAIError::Reqwest(_) => true,
        _ => false,
    }
}
