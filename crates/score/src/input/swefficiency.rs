//! SWE-fficiency `eval_report_<model>.csv` files (one row per task) and their sibling `.json` summaries.

use super::{Format, IdSet, Submission, check_number};
use crate::error::{Result, ScoreError};
use etip_core::results::{OfficialVerdict, TaskResult};
use std::collections::BTreeMap;
use std::path::Path;

/// Columns of an official SWE-fficiency report, in their official order.
pub const COLUMNS: [&str; 9] = [
    "instance_id",
    "raw_pred_speedup_ratio",
    "pred_speedup_ratio",
    "gold_speedup_ratio",
    "human_speedup_ratio",
    "correctness",
    "correctness_pct",
    "pre_edit_runtime",
    "patch_length",
];

pub(super) fn read(path: &Path, text: &str, name: String) -> Result<Submission> {
    let malformed = |line: usize, message: String| ScoreError::Malformed {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| malformed(1, format!("cannot read the CSV header: {e}")))?
        .clone();
    let mut index = BTreeMap::new();
    for (i, h) in headers.iter().enumerate() {
        if !COLUMNS.contains(&h) {
            return Err(malformed(
                1,
                format!(
                    "unknown column {h:?}; a SWE-fficiency report has the columns {}",
                    COLUMNS.join(", ")
                ),
            ));
        }
        if index.insert(h, i).is_some() {
            return Err(malformed(1, format!("column {h:?} appears twice")));
        }
    }
    if let Some(missing) = COLUMNS.iter().find(|c| !index.contains_key(*c)) {
        return Err(malformed(1, format!("missing column {missing:?}")));
    }
    let col = |name: &str| index[name];
    let mut ids = IdSet::new();
    let mut tasks = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            malformed(line, format!("malformed CSV row: {e}"))
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let field = |name: &str| record.get(col(name)).unwrap_or("");
        let number = |name: &str| -> Result<f64> {
            let raw = field(name);
            let value: f64 = raw
                .parse()
                .map_err(|_| malformed(line, format!("{name} is {raw:?}, expected a number")))?;
            check_number(path, line, name, value)
        };
        let optional = |name: &str| -> Result<Option<f64>> {
            if field(name).is_empty() {
                Ok(None)
            } else {
                number(name).map(Some)
            }
        };
        let id = field("instance_id");
        ids.insert(path, line, id)?;
        let correctness = number("correctness")?;
        if correctness > 1.0 {
            return Err(malformed(
                line,
                format!("correctness is {correctness}, expected 0 or 1"),
            ));
        }
        let pass_fraction = optional("correctness_pct")?;
        if pass_fraction.is_some_and(|p| p > 1.0) {
            return Err(malformed(line, "correctness_pct is above 1".into()));
        }
        let gold = number("gold_speedup_ratio")?;
        if gold == 0.0 {
            return Err(malformed(line, "gold_speedup_ratio is 0".into()));
        }
        let correct = correctness == 1.0;
        let raw = optional("raw_pred_speedup_ratio")?;
        let pred = number("pred_speedup_ratio")?;
        // The official reports credit the raw speedup when correct and 1.0 otherwise; when a raw value is
        // missing the credited one is the only measurement there is.
        let speedup = raw.or(if correct { Some(pred) } else { None });
        if correct && speedup != Some(pred) {
            return Err(malformed(
                line,
                format!(
                    "pred_speedup_ratio {pred} differs from raw_pred_speedup_ratio {} on a correct patch",
                    raw.unwrap_or(f64::NAN)
                ),
            ));
        }
        if !correct && pred != 1.0 {
            return Err(malformed(
                line,
                format!(
                    "pred_speedup_ratio is {pred} on an incorrect patch; SWE-fficiency credits 1.0"
                ),
            ));
        }
        let sr = number("human_speedup_ratio")?;
        number("pre_edit_runtime")?;
        tasks.push(TaskResult {
            instance_id: id.to_owned(),
            correct: Some(correct),
            pass_fraction,
            speedup,
            gold_speedup: Some(gold),
            status: None,
            tests: Vec::new(),
            per_test_means: None,
            official: Some(OfficialVerdict {
                speedup_ratio: Some(sr),
                ..OfficialVerdict::default()
            }),
        });
    }
    if tasks.is_empty() {
        return Err(ScoreError::Empty {
            path: path.to_path_buf(),
            expected: "one row per task under the CSV header",
        });
    }
    let (official_score, official_summary) = sibling_summary(path)?;
    Ok(Submission {
        name,
        path: path.to_path_buf(),
        format: Format::SwefficiencyCsv,
        total_instances: official_summary.get("total_instances").map(|&n| n as usize),
        tasks,
        official_score,
        official_summary,
        measurements: Vec::new(),
    })
}

/// Reads `eval_report_<model>.json` next to the CSV, when present: the official `overall_score` and the
/// proportions the SWE-fficiency harness reports.
fn sibling_summary(csv_path: &Path) -> Result<(Option<f64>, BTreeMap<String, f64>)> {
    let json_path = csv_path.with_extension("json");
    let Ok(text) = std::fs::read_to_string(&json_path) else {
        return Ok((None, BTreeMap::new()));
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| ScoreError::Malformed {
            path: json_path.clone(),
            line: e.line(),
            message: format!("invalid JSON in the official summary beside the CSV: {e}"),
        })?;
    let summary: BTreeMap<String, f64> = value
        .as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x)))
                .collect()
        })
        .unwrap_or_default();
    Ok((summary.get("overall_score").copied(), summary))
}
