//! The `classify` stage: is each issue of a JSON-lines file about execution time? Records carry
//! `title`, `body`, optional `commit_message`, `labels` and `repo`; each comes back with its
//! [`Classification`] (answer, classifier, score, rival, evidence), from the offline rules or an
//! LLM endpoint, so that a researcher can re-label a data set and see why each answer was given.

use std::path::{Path, PathBuf};

use etip_classify::{Classification, IssueText, Offline};
use serde_json::{Map, Value};

use crate::InputError;
use crate::output::{Named, distinct};
use crate::progress::{Phase, PhaseProgress as Progress};
use crate::services::{LlmOptions, LlmUse, RuntimeSource};

/// What to classify, and with what.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifyConfig {
    /// JSON lines, one issue each; fields other than those read are kept unchanged.
    pub file: PathBuf,
    /// The LLM endpoint, if any (else the offline classifier).
    pub llm: LlmOptions,
}

/// One input record.
#[derive(Debug, Clone)]
pub struct Record {
    /// Every field of the line, as read.
    pub fields: Map<String, Value>,
    /// `title` (empty when absent).
    pub title: String,
    /// `body` (empty when absent).
    pub body: String,
    /// `commit_message` (empty when absent).
    pub commit_message: String,
    /// The names of `labels`.
    pub labels: Vec<String>,
}

impl Record {
    /// `repo` (empty when absent or not a string).
    pub fn repo(&self) -> &str {
        self.fields
            .get("repo")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// What the stage returns: each record with its answer, in the file's order.
#[derive(Debug)]
pub struct Classified {
    /// The records read.
    pub records: Vec<Record>,
    /// One answer per record.
    pub answers: Vec<Classification>,
    /// The classifier's name ([`Offline::NAME`], or the LLM's).
    pub classifier: String,
    /// What the LLM endpoint cost, when one answered.
    pub llm: Option<LlmUse>,
}

/// A string field of line `line` (empty when absent).
fn text(fields: &Map<String, Value>, key: &str, line: usize) -> Result<String, InputError> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(InputError(format!(
            "line {line}: `{key}` must be a string, not {other}"
        ))),
    }
}

/// The label names of line `line`: strings, or GitHub's label objects.
fn labels(fields: &Map<String, Value>, line: usize) -> Result<Vec<String>, InputError> {
    match fields.get("labels") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                // GitHub's API gives label objects.
                Value::Object(o) => match o.get("name") {
                    Some(Value::String(s)) => Ok(s.clone()),
                    _ => Err(InputError(format!(
                        "line {line}: a label object without a `name`"
                    ))),
                },
                other => Err(InputError(format!(
                    "line {line}: a label must be a string, not {other}"
                ))),
            })
            .collect(),
        Some(other) => Err(InputError(format!(
            "line {line}: `labels` must be a list, not {other}"
        ))),
    }
}

/// Every record of the file, or the first problem (bad input naming the file).
pub fn read(path: &Path) -> anyhow::Result<Vec<Record>> {
    let content = crate::input::read_text(path)?;
    let mut out = Vec::new();
    for (i, line) in content.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let parsed = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(fields)) => (|| {
                Ok::<_, InputError>(Record {
                    title: text(&fields, "title", n)?,
                    body: text(&fields, "body", n)?,
                    commit_message: text(&fields, "commit_message", n)?,
                    labels: labels(&fields, n)?,
                    fields,
                })
            })(),
            Ok(_) => Err(InputError(format!("line {n}: not a JSON object"))),
            Err(e) => Err(InputError(format!("line {n}: {e}"))),
        };
        out.push(parsed.map_err(|e| InputError(format!("{}: {e}", path.display())))?);
    }
    Ok(out)
}

/// Classifies every record of `cfg.file` (phase [`Phase::Issues`]); nothing is classified when
/// the file has a bad record.
pub fn classify(
    cfg: &ClassifyConfig,
    runtime: RuntimeSource,
    progress: &mut dyn Progress,
) -> anyhow::Result<Classified> {
    if cfg.llm.is_endpoint() {
        distinct(&[
            Named::reads("FILE", &cfg.file),
            Named::writes("--llm-cache", &cfg.llm.cache),
        ])?;
    }
    let records = read(&cfg.file)?;
    let rt = runtime()?;
    let llm = cfg.llm.classifier(rt)?;
    let mut usage = etip_llm::Usage::default();
    progress.start(Phase::Issues, records.len() as u64, 0);
    let mut answers: Vec<Classification> = Vec::with_capacity(records.len());
    for r in &records {
        let text = IssueText {
            title: &r.title,
            body: &r.body,
            labels: &r.labels,
            commit_message: &r.commit_message,
        };
        let c = match &llm {
            Some((classifier, cache)) => {
                let repo = r.fields.get("repo").and_then(Value::as_str);
                classifier.classify(&text, repo, Some(cache), &mut usage)?
            }
            None => Offline.classify(&text),
        };
        answers.push(c);
        progress.advance(Phase::Issues, 1);
    }
    progress.end(Phase::Issues);
    Ok(Classified {
        records,
        answers,
        classifier: llm
            .as_ref()
            .map_or_else(|| Offline::NAME.to_string(), |(c, _)| c.name()),
        llm: llm.as_ref().map(|l| LlmUse::of(l, usage)),
    })
}
