//! `etip classify`: is each issue of a JSON-lines file about execution time? Records carry `title`,
//! `body`, optional `commit_message`, `labels` and `repo`; each is printed back with `answer`
//! (`yes`/`no`/`unclassified`), `classifier`, `score`, `rival` and `evidence` added, so a
//! researcher can re-label a data set and see why each answer was given. The stage is
//! [`etip_pipeline::classify`]; the records are printed here.

use super::format::{FormatArg, render};
use super::progress::Bars;
use anyhow::Context;
use etip_classify::Answer;
use etip_pipeline::classify::{self, Classified, ClassifyConfig};
use etip_pipeline::progress::Phase;
use etip_pipeline::services::LlmOptions;
use etip_report::{Align, OutputFormat, Table};
use serde_json::Value;
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

impl From<&LlmArgs> for LlmOptions {
    fn from(a: &LlmArgs) -> LlmOptions {
        LlmOptions {
            base_url: a.llm_base_url.clone(),
            model: a.llm_model.clone(),
            price_in: a.llm_price_in,
            price_out: a.llm_price_out,
            timeout_secs: a.llm_timeout,
            retries: a.llm_retries,
            cache: a.llm_cache.clone(),
        }
    }
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let cfg = ClassifyConfig {
        file: args.file.clone(),
        llm: (&args.llm).into(),
    };
    // The bar shows only when an endpoint answers (the offline rules take no time).
    let mut bars = if cfg.llm.is_endpoint() {
        Bars::default()
    } else {
        Bars::hiding(Phase::Issues)
    };
    let done = classify::classify(&cfg, super::runtime, &mut bars)?;
    if let Some(llm) = &done.llm {
        eprintln!("{}", llm.line());
    }
    print(done, args.format, stdout)
}

/// Each record with its answer (JSON lines), or a table and a count.
fn print(done: Classified, format: FormatArg, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let Classified {
        records,
        answers,
        classifier: name,
        ..
    } = done;
    match OutputFormat::from(format) {
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
                    r.repo().to_owned(),
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
