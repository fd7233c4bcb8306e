//! SWE-fficiency `eval_report_<model>.csv` files (one row per task) and their sibling `.json` summaries.

use super::check::{At, IdSet, MIN_RUNTIME, check_number, check_positive, checked_ratio, show};
use super::{Format, Submission, read_text};
use crate::clip::{QUOTE_CHARS, clip, foreign, quote};
use crate::error::{Result, ScoreError};
use etip_records::results::{OfficialVerdict, TaskResult};
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
        .map_err(|e| malformed(1, format!("cannot read the CSV header: {}", foreign(e))))?
        .clone();
    let mut index = BTreeMap::new();
    for (i, h) in headers.iter().enumerate() {
        if !COLUMNS.contains(&h) {
            return Err(malformed(
                1,
                format!(
                    "unknown column {}; a SWE-fficiency report has the columns {}",
                    quote(h),
                    COLUMNS.join(", ")
                ),
            ));
        }
        if index.insert(h, i).is_some() {
            return Err(malformed(1, format!("column {} appears twice", quote(h))));
        }
    }
    if let Some(missing) = COLUMNS.iter().find(|c| !index.contains_key(*c)) {
        return Err(malformed(1, format!("missing column {missing:?}")));
    }
    let mut ids = IdSet::new();
    let mut tasks = Vec::new();
    let mut lines = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            malformed(line, format!("malformed CSV row: {}", foreign(e)))
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        tasks.push(row(At { path, line }, &record, &index, &mut ids)?);
        lines.push(line);
    }
    if tasks.is_empty() {
        return Err(ScoreError::Empty {
            path: path.to_path_buf(),
            expected: "one row per task under the CSV header",
        });
    }
    let summary = sibling_summary(path, tasks.len())?;
    Ok(Submission {
        name,
        path: path.to_path_buf(),
        format: Format::SwefficiencyCsv,
        total_instances: summary.total_instances,
        tasks,
        lines,
        official_score: summary.score,
        official_summary: summary.numbers,
        measurements: Vec::new(),
    })
}

/// The fields of one row, read as checked numbers.
struct Row<'a> {
    at: At<'a>,
    record: &'a csv::StringRecord,
    index: &'a BTreeMap<&'a str, usize>,
}

impl Row<'_> {
    fn field(&self, name: &str) -> &str {
        self.index
            .get(name)
            .and_then(|&i| self.record.get(i))
            .unwrap_or("")
    }

    /// A finite number >= 0.
    fn number(&self, name: &str) -> Result<f64> {
        let raw = self.field(name);
        let value: f64 = raw.parse().map_err(|_| {
            self.at
                .err(format!("{name} is {}, expected a number", quote(raw)))
        })?;
        check_number(self.at.path, self.at.line, name, value)
    }

    /// A number, or `None` for an empty field.
    fn optional(&self, name: &str) -> Result<Option<f64>> {
        if self.field(name).is_empty() {
            Ok(None)
        } else {
            self.number(name).map(Some)
        }
    }

    /// A finite number > 0 (a ratio).
    fn positive(&self, name: &str) -> Result<f64> {
        check_positive(self.at, name, self.number(name)?)
    }

    /// `(measured speedup, gold speedup)`, consistent with the credited `pred_speedup_ratio`, and
    /// their SRs neither overflowing nor underflowing.
    fn speedups(&self, correct: bool) -> Result<(Option<f64>, f64)> {
        let at = self.at;
        let gold = self.positive("gold_speedup_ratio")?;
        let raw = self.optional("raw_pred_speedup_ratio")?;
        let raw = raw
            .map(|v| check_positive(at, "raw_pred_speedup_ratio", v))
            .transpose()?;
        let pred = self.positive("pred_speedup_ratio")?;
        // The official reports credit the raw speedup when correct and 1.0 otherwise; when a raw
        // value is missing the credited one is the only measurement there is.
        let speedup = raw.or(if correct { Some(pred) } else { None });
        if correct && speedup != Some(pred) {
            return Err(at.err(format!(
                "pred_speedup_ratio {pred} differs from raw_pred_speedup_ratio {} on a correct patch",
                raw.unwrap_or(f64::NAN)
            )));
        }
        if !correct && pred != 1.0 {
            return Err(at.err(format!(
                "pred_speedup_ratio is {pred} on an incorrect patch; SWE-fficiency credits 1.0"
            )));
        }
        // SR = credited / gold, and the measured speedup / gold the audit's tolerance credits.
        let sr = || "the SR pred_speedup_ratio / gold_speedup_ratio".into();
        checked_ratio(at, &sr, pred, gold)?;
        if let Some(s) = speedup {
            let measured = || "raw_pred_speedup_ratio / gold_speedup_ratio".into();
            checked_ratio(at, &measured, s, gold)?;
        }
        Ok((speedup, gold))
    }

    /// `pre_edit_runtime` (a runtime) and `patch_length` (a whole number), checked and not kept.
    fn check_runtime_and_length(&self) -> Result<()> {
        let runtime = self.number("pre_edit_runtime")?;
        if runtime < MIN_RUNTIME {
            return Err(self.at.err(format!(
                "pre_edit_runtime is {}, expected a runtime of at least {MIN_RUNTIME:e} (> 0)",
                show(runtime)
            )));
        }
        let patch_length = self.field("patch_length");
        if !patch_length
            .parse::<f64>()
            .is_ok_and(|n| n.is_finite() && n >= 0.0 && n.fract() == 0.0)
        {
            return Err(self.at.err(format!(
                "patch_length is {}, expected a whole number >= 0 (lines of the patch)",
                quote(patch_length)
            )));
        }
        Ok(())
    }
}

/// One row of the report: checked numbers, converted to a task result.
fn row(
    at: At,
    record: &csv::StringRecord,
    index: &BTreeMap<&str, usize>,
    ids: &mut IdSet,
) -> Result<TaskResult> {
    let row = Row { at, record, index };
    let id = row.field("instance_id");
    ids.insert(at.path, at.line, id)?;
    let correctness = row.number("correctness")?;
    if correctness > 1.0 {
        return Err(at.err(format!("correctness is {correctness}, expected 0 or 1")));
    }
    let pass_fraction = row.optional("correctness_pct")?;
    if pass_fraction.is_some_and(|p| p > 1.0) {
        return Err(at.err("correctness_pct is above 1".into()));
    }
    let correct = correctness == 1.0;
    let (speedup, gold) = row.speedups(correct)?;
    let sr = row.positive("human_speedup_ratio")?;
    row.check_runtime_and_length()?;
    Ok(TaskResult {
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
        ..TaskResult::default()
    })
}

/// The official summary beside a report.
#[derive(Default)]
struct Summary {
    score: Option<f64>,
    total_instances: Option<usize>,
    numbers: BTreeMap<String, f64>,
}

/// Reads `eval_report_<model>.json` next to the CSV, when present: the official `overall_score` and the
/// proportions the SWE-fficiency harness reports. A summary that is present but unreadable or
/// malformed is an error naming that file (not the CSV): its numbers would otherwise be attached to
/// the CSV's scores.
fn sibling_summary(csv_path: &Path, rows: usize) -> Result<Summary> {
    let json_path = csv_path.with_extension("json");
    let text = match read_text(&json_path) {
        Ok(text) => text,
        Err(ScoreError::Open { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Summary::default());
        }
        Err(e) => return Err(e),
    };
    let at = At {
        path: &json_path,
        line: 1,
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| ScoreError::Malformed {
            path: json_path.clone(),
            line: e.line(),
            message: format!(
                "invalid JSON in the official summary beside {}: {}",
                csv_path.display(),
                foreign(e)
            ),
        })?;
    let object = value.as_object().ok_or_else(|| {
        at.err(format!(
            "the official summary beside {} is not a JSON object {{\"overall_score\": …, \
             \"total_instances\": …}}",
            csv_path.display()
        ))
    })?;
    let numbers: BTreeMap<String, f64> = object
        .iter()
        .filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x)))
        .collect();
    let score = match object.get("overall_score") {
        None => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| {
                    at.err(format!(
                        "overall_score is {}, expected a number >= 0",
                        clip(&v.to_string(), QUOTE_CHARS)
                    ))
                })?,
        ),
    };
    let total_instances = match object.get("total_instances") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|&n| n >= rows)
                .ok_or_else(|| {
                    at.err(format!(
                        "total_instances is {}, expected a whole number >= the {rows} rows of {}",
                        clip(&v.to_string(), QUOTE_CHARS),
                        csv_path.display()
                    ))
                })?,
        ),
    };
    Ok(Summary {
        score,
        total_instances,
        numbers,
    })
}
