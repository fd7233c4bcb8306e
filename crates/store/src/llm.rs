//! An LLM's answers, keyed by model and prompt hash: a prompt is sent (and paid for) once.

use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError, q};

/// A stored answer with what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedAnswer {
    /// The model's reply as it came.
    pub raw: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Store {
    /// The stored answer of `model` to the prompt with this hash, if any.
    pub fn llm_answer(
        &self,
        model: &str,
        prompt_hash: &str,
    ) -> Result<Option<CachedAnswer>, StoreError> {
        self.conn
            .query_row(
                "SELECT raw, prompt_tokens, completion_tokens FROM llm_answers
                 WHERE model = ?1 AND prompt_hash = ?2",
                params![model, prompt_hash],
                |r| {
                    Ok(CachedAnswer {
                        raw: r.get(0)?,
                        prompt_tokens: r.get::<_, i64>(1)?.max(0) as u64,
                        completion_tokens: r.get::<_, i64>(2)?.max(0) as u64,
                    })
                },
            )
            .optional()
            .map_err(q("read an LLM answer"))
    }

    /// Stores (or replaces) the answer of `model` to the prompt with this hash.
    pub fn record_llm_answer(
        &self,
        model: &str,
        prompt_hash: &str,
        answer: &CachedAnswer,
    ) -> Result<(), StoreError> {
        let tokens = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.conn
            .execute(
                "INSERT OR REPLACE INTO llm_answers
                     (model, prompt_hash, raw, prompt_tokens, completion_tokens)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    model,
                    prompt_hash,
                    answer.raw,
                    tokens(answer.prompt_tokens),
                    tokens(answer.completion_tokens)
                ],
            )
            .map(|_| ())
            .map_err(q("record an LLM answer"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_per_model_and_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        assert_eq!(store.llm_answer("m", "h").unwrap(), None);
        let a = CachedAnswer {
            raw: "yes".into(),
            prompt_tokens: 120,
            completion_tokens: 1,
        };
        store.record_llm_answer("m", "h", &a).unwrap();
        assert_eq!(store.llm_answer("m", "h").unwrap(), Some(a));
        assert_eq!(store.llm_answer("other", "h").unwrap(), None);
    }
}
