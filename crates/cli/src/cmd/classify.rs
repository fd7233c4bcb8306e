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

/// Every record of the file, or the first problem (nothing is printed for a file with one).
fn read(path: &std::path::Path) -> anyhow::Result<Vec<Record>> {
    let content = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("reading {}: {e}", path.display())))?;
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
    let records = read(&args.file)?;
    let answers: Vec<Classification> = records
        .iter()
        .map(|r| {
            Offline.classify(&IssueText {
                title: &r.title,
                body: &r.body,
                labels: &r.labels,
                commit_message: &r.commit_message,
            })
        })
        .collect();
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
                "{yes} of {} about execution time ({})",
                answers.len(),
                Offline::NAME
            )
            .context("writing the summary")?;
        }
    }
    Ok(())
}
