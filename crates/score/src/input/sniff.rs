//! Telling the format of an input from its content (and extension): CSV, a GSO report or manifest,
//! or JSON Lines of task results or measurements. JSON that is none of these says what was found
//! and where (line and column), and what etip expected instead.

use super::{measurements, read::line_of_offset, stem};
use crate::clip::{foreign, quote};
use crate::error::{Result, ScoreError};
use std::path::Path;

pub(super) enum Sniffed {
    Csv,
    GsoReport(Box<serde_json::Value>),
    GsoManifest(Box<serde_json::Value>),
    Jsonl,
}

/// What a JSON Lines file holds.
pub(super) enum JsonlKind {
    TaskResults,
    Measurements,
}

/// What etip reads when it reads whole-file JSON.
const EXPECTED_JSON: &str = "expected a GSO report object {\"summary\": …, \"instance_sets\": …}, \
     a GSO manifest {\"models\": …}, or JSON Lines with one result object per line";

/// Tells task results from measurements by the first line that parses as a JSON object (a
/// malformed line is then reported by the reader of that kind, with its line number); when no line
/// parses, a file named `measurements*.jsonl` is read as measurements. Refuses `executable.jsonl`,
/// the summary `etip measure` writes beside its measurements.
pub(super) fn jsonl_kind(path: &Path, text: &str) -> Result<JsonlKind> {
    let first = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .find_map(|(i, l)| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()
                .filter(serde_json::Value::is_object)
                .map(|v| (i + 1, v))
        });
    match first {
        Some((_, v)) if measurements::looks_like_measurement(&v) => Ok(JsonlKind::Measurements),
        Some((line, v)) if measurements::looks_like_executable_summary(&v) => {
            Err(ScoreError::UnknownFormat {
                path: path.to_path_buf(),
                why: format!(
                    "line {line} is an executable.jsonl summary of `etip measure` (id, detectors, \
                     overall, ...) without per-round times; score the measurements.jsonl beside it"
                ),
            })
        }
        Some(_) => Ok(JsonlKind::TaskResults),
        None if stem(path).starts_with(measurements::DEFAULT_STEM) => Ok(JsonlKind::Measurements),
        // No line parses (truncated, or a `NaN` in it): a line that opens as `etip measure`
        // writes a measurement is one, and its reader reports where the JSON breaks.
        None if text
            .lines()
            .find(|l| !l.trim().is_empty())
            .is_some_and(opens_as_measurement) =>
        {
            Ok(JsonlKind::Measurements)
        }
        None => Ok(JsonlKind::TaskResults),
    }
}

/// Whether a line that does not parse starts as `etip measure` writes a measurement: with its
/// `schema_version` first, and no `instance_id` (a task result's) in it.
fn opens_as_measurement(line: &str) -> bool {
    let rest = line
        .trim_start()
        .strip_prefix('{')
        .unwrap_or("")
        .trim_start();
    rest.starts_with("\"schema_version\"") && !line.contains("\"instance_id\"")
}

pub(super) fn sniff(path: &Path, text: &str) -> Result<Sniffed> {
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return Err(ScoreError::Empty {
            path: path.to_path_buf(),
            expected: "a CSV header and rows, a GSO report object, or JSON lines",
        });
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext == "jsonl" || ext == "ndjson" {
        return Ok(Sniffed::Jsonl);
    }
    if trimmed.starts_with('{') {
        return sniff_object(path, text, &ext);
    }
    if ext == "csv" {
        return Ok(Sniffed::Csv);
    }
    // Whole-file JSON that is not an object: say what it is. Text that is not JSON is CSV when its
    // first line has a comma.
    let parsed = serde_json::from_str::<serde_json::Value>(text);
    match parsed {
        Ok(value) => Err(wrong_json(path, text, &value)),
        Err(e) if ext == "json" || trimmed.starts_with('[') => Err(invalid_json(path, &e)),
        Err(_) if trimmed.lines().next().is_some_and(|l| l.contains(',')) => Ok(Sniffed::Csv),
        Err(e) => Err(ScoreError::UnknownFormat {
            path: path.to_path_buf(),
            why: format!(
                "neither CSV (line 1 has no comma) nor JSON ({})",
                foreign(&e)
            ),
        }),
    }
}

/// A file whose first character is `{`: a GSO report or manifest, one measurement or task result,
/// or JSON Lines.
fn sniff_object(path: &Path, text: &str, ext: &str) -> Result<Sniffed> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => {
            if value.get("instance_sets").is_some() || value.get("summary").is_some() {
                return Ok(Sniffed::GsoReport(Box::new(value)));
            }
            if value.get("models").is_some() {
                return Ok(Sniffed::GsoManifest(Box::new(value)));
            }
            if value.get("instance_id").is_some() {
                return Ok(Sniffed::Jsonl);
            }
            if measurements::looks_like_measurement(&value) {
                if text.trim().lines().count() > 1 {
                    return Err(ScoreError::Malformed {
                        path: path.to_path_buf(),
                        line: 1,
                        message: "one etip measurement spread over several lines; etip reads \
                                  measurements as JSON Lines, one measurement per line, as \
                                  `etip measure` writes measurements.jsonl"
                            .into(),
                    });
                }
                return Ok(Sniffed::Jsonl);
            }
            let keys: Vec<String> = value
                .as_object()
                .map(|o| o.keys().take(6).map(|k| quote(k)).collect())
                .unwrap_or_default();
            Err(ScoreError::UnknownFormat {
                path: path.to_path_buf(),
                why: format!("a JSON object with keys [{}]", keys.join(", ")),
            })
        }
        // Several objects, one per line, are JSON Lines (whatever the extension, unless a .json
        // file holds one object spread over several lines).
        Err(e) if (e.is_eof() || e.is_syntax()) && !one_json_object(text, ext) => {
            Ok(Sniffed::Jsonl)
        }
        Err(e) => Err(invalid_json(path, &e)),
    }
}

/// Whether a .json file that does not parse is meant as one JSON object (its second line does not
/// start another object), so that its syntax error is reported rather than read as JSON Lines.
fn one_json_object(text: &str, ext: &str) -> bool {
    ext == "json"
        && !text
            .trim_start()
            .lines()
            .nth(1)
            .is_some_and(|l| l.trim_start().starts_with('{'))
}

fn invalid_json(path: &Path, e: &serde_json::Error) -> ScoreError {
    // serde_json ends its message with the position, which the error states already.
    let message = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    let message = message.strip_suffix(&position).unwrap_or(&message);
    ScoreError::Malformed {
        path: path.to_path_buf(),
        line: e.line(),
        message: format!(
            "invalid JSON at column {}: {}; {EXPECTED_JSON}",
            e.column(),
            foreign(message)
        ),
    }
}

/// Whole-file JSON that is valid but not an object.
fn wrong_json(path: &Path, text: &str, value: &serde_json::Value) -> ScoreError {
    let (kind, found) = match value {
        serde_json::Value::Null => ("null", "null"),
        serde_json::Value::Bool(_) => ("boolean", "a boolean"),
        serde_json::Value::Number(_) => ("number", "a number"),
        serde_json::Value::String(_) => ("string", "a string"),
        serde_json::Value::Array(_) => ("array", "an array"),
        serde_json::Value::Object(_) => ("object", "an object"),
    };
    let start = text.len() - text.trim_start().len();
    let line = line_of_offset(text.as_bytes(), start);
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..start].chars().count() + 1;
    let extra = if value.is_array() {
        " (for measurements: the measurements.jsonl that `etip measure` writes in its --out \
         folder, not its --format json output)"
    } else {
        ""
    };
    ScoreError::UnknownFormat {
        path: path.to_path_buf(),
        why: format!(
            "a JSON {kind} at line {line} column {column}: {EXPECTED_JSON}, found {found}{extra}"
        ),
    }
}
