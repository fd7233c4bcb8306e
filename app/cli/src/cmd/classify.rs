//! `etip classify`: is each issue of a JSON-lines file about execution time? Records carry `title`,
//! `body`, optional `commit_message`, `labels` and `repo`; each is printed back with `answer`
//! (`yes`/`no`/`unclassified`), `classifier`, `score`, `rival` and `evidence` added, so a
//! researcher can re-label a data set and see why each answer was given.

use super::UsageError;
use super::format::{FormatArg, render};
use anyhow::Context;
use etip_classify::{Answer, Classification, IssueText, Offline};
use etip_report::{Align, OutputFormat, Table};
use serde_json::{Map, Value};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// JSON lines, one issue each: `title`, `body`, optional `commit_message`, `labels` (a list of
    /// names) and `repo`; other fields are printed back unchanged.
    file: PathBuf,
    /// `json`: each record as one JSON line with the answer added; the other formats print a
    /// table (line, repo, answer, score, evidence).
    #[arg(long, value_enum, default_value_t = FormatArg::Json)]
    format: FormatArg,
    #[command(flatten)]
    llm: LlmArgs,
}

/// The LLM classifier's options (`etip classify`, `etip mine`): without `--llm-base-url`, the
/// offline classifier answers.
#[derive(Debug, Clone, clap::Args)]
pub struct LlmArgs {
    /// An OpenAI-compatible endpoint up to `/v1` (`https://api.openai.com/v1`, a local server);
    /// the key comes from `OPENAI_API_KEY` and is never printed.
    #[arg(long, value_name = "URL", requires = "llm_model")]
    pub llm_base_url: Option<String>,
    /// The model to ask (e.g. `gpt-5.1-codex-mini`, JETO's).
    #[arg(long, value_name = "NAME")]
    pub llm_model: Option<String>,
    /// Dollars per million prompt tokens, to print the run's cost.
    #[arg(long, value_name = "USD", requires = "llm_price_out")]
    pub llm_price_in: Option<f64>,
    /// Dollars per million completion tokens.
    #[arg(long, value_name = "USD", requires = "llm_price_in")]
    pub llm_price_out: Option<f64>,
    /// Time limit of one request, seconds.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub llm_timeout: u64,
    /// Retries of a request after a rate limit (429), a server error or a broken connection,
    /// waiting 2 s, then 4 s, 8 s, ...
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub llm_retries: u32,
    /// The answers' cache (SQLite, keyed by model and prompt): a prompt is paid for once.
    #[arg(long, default_value = ".etip/llm-cache.sqlite", value_name = "FILE")]
    pub llm_cache: PathBuf,
}

impl LlmArgs {
    /// The LLM classifier when an endpoint is given, with its cache.
    pub fn classifier(
        &self,
        rt: &tokio::runtime::Runtime,
    ) -> anyhow::Result<Option<(etip_llm::LlmClassifier, etip_store::Store)>> {
        let (Some(url), Some(model)) = (&self.llm_base_url, &self.llm_model) else {
            return Ok(None);
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(UsageError(format!("--llm-base-url {url:?} is not an http(s) URL")).into());
        }
        let mut cfg = etip_llm::LlmConfig::new(url, model);
        cfg.api_key = std::env::var("OPENAI_API_KEY")
            .ok()
            .filter(|k| !k.is_empty());
        cfg.timeout = std::time::Duration::from_secs(self.llm_timeout.max(1));
        cfg.retries = self.llm_retries;
        cfg.prices = self.llm_price_in.zip(self.llm_price_out);
        if let Some((i, o)) = cfg.prices
            && !(i >= 0.0 && o >= 0.0 && i.is_finite() && o.is_finite())
        {
            return Err(
                UsageError("--llm-price-in/--llm-price-out must be non-negative".into()).into(),
            );
        }
        let store = open_cache(&self.llm_cache)?;
        Ok(Some((
            etip_llm::LlmClassifier::new(cfg, rt.handle().clone())?,
            store,
        )))
    }
}

/// One input record.
struct Record {
    fields: Map<String, Value>,
    title: String,
    body: String,
    commit_message: String,
    labels: Vec<String>,
}

fn text(fields: &Map<String, Value>, key: &str, line: usize) -> Result<String, String> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "line {line}: `{key}` must be a string, not {other}"
        )),
    }
}

fn labels(fields: &Map<String, Value>, line: usize) -> Result<Vec<String>, String> {
    match fields.get("labels") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                // GitHub's API gives label objects.
                Value::Object(o) => match o.get("name") {
                    Some(Value::String(s)) => Ok(s.clone()),
                    _ => Err(format!("line {line}: a label object without a `name`")),
                },
                other => Err(format!(
                    "line {line}: a label must be a string, not {other}"
                )),
            })
            .collect(),
        Some(other) => Err(format!("line {line}: `labels` must be a list, not {other}")),
    }
}

/// An answers' cache (SQLite), its folder created when missing; a file that cannot be used is
/// bad input.
pub(crate) fn open_cache(path: &std::path::Path) -> anyhow::Result<etip_store::Store> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| UsageError(format!("creating {}: {e}", dir.display())))?;
    }
    Ok(etip_store::Store::open(path).map_err(|e| UsageError(e.to_string()))?)
}

fn text_field<'a>(fields: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    fields.get(key).and_then(Value::as_str)
}

/// Every record of the file, or the first problem (nothing is printed for a file with one).
fn read(path: &std::path::Path) -> anyhow::Result<Vec<Record>> {
    let content = super::input::read_text(path)?;
    let mut out = Vec::new();
    for (i, line) in content.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let parsed = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(fields)) => (|| {
                Ok::<_, String>(Record {
                    title: text(&fields, "title", n)?,
                    body: text(&fields, "body", n)?,
                    commit_message: text(&fields, "commit_message", n)?,
                    labels: labels(&fields, n)?,
                    fields,
                })
            })(),
            Ok(_) => Err(format!("line {n}: not a JSON object")),
            Err(e) => Err(format!("line {n}: {e}")),
        };
        out.push(parsed.map_err(|e| UsageError(format!("{}: {e}", path.display())))?);
    }
    Ok(out)
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    if args.llm.llm_base_url.is_some() {
        use super::output::{Named, distinct};
        distinct(&[
            Named::reads("FILE", &args.file),
            Named::writes("--llm-cache", &args.llm.llm_cache),
        ])?;
    }
    let records = read(&args.file)?;
    let rt = super::runtime()?;
    let llm = args.llm.classifier(rt)?;
    let mut usage = etip_llm::Usage::default();
    let bar = indicatif::ProgressBar::new(records.len() as u64);
    if llm.is_some() {
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {pos}/{len} issues",
            )
            .expect("the template is valid"),
        );
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
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
                let repo = text_field(&r.fields, "repo");
                classifier.classify(&text, repo, Some(cache), &mut usage)?
            }
            None => Offline.classify(&text),
        };
        answers.push(c);
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some((classifier, _)) = &llm {
        eprintln!(
            "{}",
            usage.line(&classifier.config().model, classifier.config().prices)
        );
    }
    let name = llm
        .as_ref()
        .map_or_else(|| Offline::NAME.to_string(), |(c, _)| c.name());
    match OutputFormat::from(args.format) {
        OutputFormat::Json => {
            for (r, c) in records.into_iter().zip(answers) {
                let mut fields = r.fields;
                let Value::Object(added) = serde_json::to_value(&c)? else {
                    anyhow::bail!("a classification is not a JSON object");
                };
                fields.extend(added);
                writeln!(stdout, "{}", Value::Object(fields))?;
            }
        }
        format => {
            let mut table = Table::new(vec![
                ("line", Align::Right),
                ("repo", Align::Left),
                ("title", Align::Left),
                ("answer", Align::Left),
                ("score", Align::Right),
                ("evidence", Align::Left),
            ]);
            for (i, (r, c)) in records.iter().zip(&answers).enumerate() {
                let evidence: Vec<String> = c
                    .evidence
                    .iter()
                    .map(|e| format!("{:?}:{}", e.topic, e.matched))
                    .collect();
                table.push(vec![
                    (i + 1).to_string(),
                    text(&r.fields, "repo", i + 1).unwrap_or_default(),
                    r.title.chars().take(50).collect(),
                    c.answer.as_str().to_string(),
                    c.score.to_string(),
                    evidence.join(", ").chars().take(60).collect(),
                ]);
            }
            stdout.write_all(render(&table, format)?.as_bytes())?;
            let yes = answers.iter().filter(|c| c.answer == Answer::Yes).count();
            writeln!(
                stdout,
                "{yes} of {} about execution time ({name})",
                answers.len(),
            )
            .context("writing the summary")?;
        }
    }
    Ok(())
}
