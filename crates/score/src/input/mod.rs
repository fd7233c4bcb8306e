//! Reading per-task results: SWE-fficiency CSV reports, GSO JSON reports, etip's own task-result
//! JSONL and the `measurements.jsonl` of `etip measure`.
//!
//! Every reader turns one file into one [`Submission`]. The format is recognised from the content (CSV
//! header, JSON keys), not only from the file name: among JSON Lines, a line with `instance_id` is a
//! task result, a line with `schema_version` and `classes` / `round_log` / `executable` is a
//! measurement (the first line that parses decides for the whole file). Errors name the file and the
//! line.

mod etip;
mod gso;
mod measurements;
mod swefficiency;

use crate::error::{Result, ScoreError};
use etip_core::measure::Measurement;
use etip_core::results::TaskResult;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The format a submission was read from; it also tells which benchmark produced the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// SWE-fficiency `eval_report_<model>.csv`.
    SwefficiencyCsv,
    /// GSO per-model report `.json` (`summary`, `instance_sets`, `opt_stats`).
    GsoReport,
    /// etip's own task-result JSON Lines.
    EtipJsonl,
    /// `measurements.jsonl` of `etip measure` (one `etip.measurement` record per line).
    EtipMeasurements,
}

impl Format {
    /// Human-readable name of the format.
    pub fn describe(self) -> &'static str {
        match self {
            Format::SwefficiencyCsv => "a SWE-fficiency CSV report",
            Format::GsoReport => "a GSO report",
            Format::EtipJsonl => "an etip task-result file",
            Format::EtipMeasurements => "an etip measurements file",
        }
    }

    /// Benchmark family, used to refuse mixing benchmarks in one call.
    pub fn benchmark(self) -> &'static str {
        match self {
            Format::SwefficiencyCsv => "swefficiency",
            Format::GsoReport => "gso",
            Format::EtipJsonl | Format::EtipMeasurements => "etip",
        }
    }

    /// The format whose group a submission joins when files of one benchmark are loaded together:
    /// etip's task results and measurements are both etip results and may be scored in one call.
    fn family(self) -> Format {
        match self {
            Format::EtipMeasurements => Format::EtipJsonl,
            f => f,
        }
    }
}

/// One submission's per-task results, as read from one file.
#[derive(Debug, Clone)]
pub struct Submission {
    /// Submission name: the file stem unless given; for a measurements file named
    /// `measurements.jsonl` (as `etip measure` writes it), the name of its folder.
    pub name: String,
    /// File it was read from.
    pub path: PathBuf,
    /// Format of that file.
    pub format: Format,
    /// One entry per task, in file order; instance ids are unique.
    pub tasks: Vec<TaskResult>,
    /// Size of the benchmark, when the file states it (GSO: 102); tasks not submitted count as failures.
    pub total_instances: Option<usize>,
    /// The benchmark's own published score for this submission, when known (from the report, a sibling
    /// SWE-fficiency `.json`, or a GSO `manifest.json`).
    pub official_score: Option<f64>,
    /// Further official summary numbers (e.g. SWE-fficiency's `proportion_incorrect`).
    pub official_summary: BTreeMap<String, f64>,
    /// The measurement records the tasks were converted from, in the same order as `tasks`
    /// ([`Format::EtipMeasurements`] only; empty otherwise).
    pub measurements: Vec<Measurement>,
}

/// What a call to [`load_files`] produced.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Submissions, in the order the files were given.
    pub submissions: Vec<Submission>,
    /// GSO manifests that were given; their official scores were attached to the matching submissions.
    pub manifests: Vec<PathBuf>,
}

/// Reads one results file. `name` overrides the submission name (default: the file stem; for
/// `measurements.jsonl`, its folder's name).
pub fn load_file(path: &Path, name: Option<&str>) -> Result<Submission> {
    match read_any(path, name)? {
        AnyFile::Submission(sub) => Ok(*sub),
        AnyFile::Manifest(_) => Err(ScoreError::UnknownFormat {
            path: path.to_path_buf(),
            why: "it is a GSO manifest (official scores), not a per-submission report".into(),
        }),
    }
}

/// Reads several results files of one benchmark. GSO `manifest.json` files among them are not
/// submissions: their official scores are attached to the submissions of the same name. Refuses mixed
/// benchmarks and duplicate names (etip task results and etip measurements are one benchmark and may
/// be mixed).
pub fn load_files(paths: &[PathBuf], names: &[String]) -> Result<Loaded> {
    if !names.is_empty() && names.len() != paths.len() {
        return Err(ScoreError::InvalidParameter(format!(
            "{} names given for {} files; give one --name per file or none",
            names.len(),
            paths.len()
        )));
    }
    let files = paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            Ok((
                path.clone(),
                read_any(path, names.get(i).map(String::as_str))?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut first: Option<(&Path, Format)> = None;
    for (path, file) in &files {
        if let AnyFile::Submission(sub) = file {
            match first {
                None => first = Some((path, sub.format)),
                Some((first_path, kind)) if kind.benchmark() != sub.format.benchmark() => {
                    return Err(ScoreError::MixedBenchmarks {
                        first: first_path.to_path_buf(),
                        first_kind: kind.describe(),
                        other: path.clone(),
                        other_kind: sub.format.describe(),
                    });
                }
                Some(_) => {}
            }
        }
    }
    Ok(assemble(files, Format::family)?.pop().unwrap_or_default())
}

/// Reads files of possibly several benchmarks (as `etip audit` accepts) and groups them by benchmark;
/// within a group the same checks as [`load_files`] apply.
pub fn load_grouped(paths: &[PathBuf]) -> Result<Vec<Loaded>> {
    let files = paths
        .iter()
        .map(|path| Ok((path.clone(), read_any(path, None)?)))
        .collect::<Result<Vec<_>>>()?;
    assemble(files, |f| f)
}

/// Groups read files by `group(format)`, attaches manifest scores, and checks names are unique.
fn assemble(files: Vec<(PathBuf, AnyFile)>, group: fn(Format) -> Format) -> Result<Vec<Loaded>> {
    let mut manifest_scores: BTreeMap<String, f64> = BTreeMap::new();
    let mut manifests = Vec::new();
    let mut groups: BTreeMap<Format, Loaded> = BTreeMap::new();
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (path, file) in files {
        match file {
            AnyFile::Manifest(scores) => {
                manifest_scores.extend(scores);
                manifests.push(path);
            }
            AnyFile::Submission(sub) => {
                if let Some(prev) = seen.insert(sub.name.clone(), path.clone()) {
                    return Err(ScoreError::DuplicateSubmission {
                        name: sub.name,
                        first: prev,
                        second: path,
                    });
                }
                groups
                    .entry(group(sub.format))
                    .or_default()
                    .submissions
                    .push(*sub);
            }
        }
    }
    for loaded in groups.values_mut() {
        for sub in &mut loaded.submissions {
            if sub.format == Format::GsoReport
                && let Some(score) = manifest_scores.get(&sub.name)
            {
                sub.official_score = Some(*score);
            }
        }
        if loaded
            .submissions
            .first()
            .is_some_and(|s| s.format == Format::GsoReport)
        {
            loaded.manifests = manifests.clone();
        }
    }
    Ok(groups.into_values().collect())
}

enum AnyFile {
    Submission(Box<Submission>),
    Manifest(BTreeMap<String, f64>),
}

fn read_any(path: &Path, name: Option<&str>) -> Result<AnyFile> {
    let bytes = std::fs::read(path).map_err(|source| ScoreError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| ScoreError::Malformed {
        path: path.to_path_buf(),
        line: line_of_offset(e.as_bytes(), e.utf8_error().valid_up_to()),
        message: "the file is not UTF-8 text".into(),
    })?;
    let given = name.map(str::to_owned);
    let name = given.clone().unwrap_or_else(|| stem(path));
    let sub = match sniff(path, &text)? {
        Sniffed::Csv => swefficiency::read(path, &text, name)?,
        Sniffed::GsoReport(value) => gso::read_report(path, *value, name)?,
        Sniffed::GsoManifest(value) => {
            return Ok(AnyFile::Manifest(gso::read_manifest(path, &value)?));
        }
        Sniffed::Jsonl => match jsonl_kind(path, &text)? {
            JsonlKind::TaskResults => etip::read(path, &text, name)?,
            JsonlKind::Measurements => {
                let name = given.unwrap_or_else(|| measurements::default_name(path, name));
                measurements::read(path, &text, name)?
            }
        },
    };
    Ok(AnyFile::Submission(Box::new(sub)))
}

enum Sniffed {
    Csv,
    GsoReport(Box<serde_json::Value>),
    GsoManifest(Box<serde_json::Value>),
    Jsonl,
}

/// What a JSON Lines file holds.
enum JsonlKind {
    TaskResults,
    Measurements,
}

/// Tells task results from measurements by the first line that parses as a JSON object (a
/// malformed line is then reported by the reader of that kind, with its line number); when no line
/// parses, a file named `measurements*.jsonl` is read as measurements. Refuses `executable.jsonl`,
/// the summary `etip measure` writes beside its measurements.
fn jsonl_kind(path: &Path, text: &str) -> Result<JsonlKind> {
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
        None => Ok(JsonlKind::TaskResults),
    }
}

fn sniff(path: &Path, text: &str) -> Result<Sniffed> {
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
        // A whole-file JSON object is a GSO report or manifest; several objects, one per line, are JSONL.
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
                    if trimmed.trim_end().lines().count() > 1 {
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
                let keys: Vec<&str> = value
                    .as_object()
                    .map(|o| o.keys().map(String::as_str).take(6).collect())
                    .unwrap_or_default();
                Err(ScoreError::UnknownFormat {
                    path: path.to_path_buf(),
                    why: format!("a JSON object with keys {keys:?}"),
                })
            }
            Err(e) if e.is_eof() || e.is_syntax() => {
                if ext == "json"
                    && !trimmed
                        .lines()
                        .nth(1)
                        .is_some_and(|l| l.trim_start().starts_with('{'))
                {
                    Err(ScoreError::Malformed {
                        path: path.to_path_buf(),
                        line: e.line(),
                        message: format!("invalid JSON: {e}"),
                    })
                } else {
                    Ok(Sniffed::Jsonl)
                }
            }
            Err(e) => Err(ScoreError::Malformed {
                path: path.to_path_buf(),
                line: e.line(),
                message: format!("invalid JSON: {e}"),
            }),
        }
    } else if ext != "csv"
        && trimmed.starts_with('[')
        && serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.is_array())
    {
        Err(ScoreError::UnknownFormat {
            path: path.to_path_buf(),
            why: "a JSON array; etip reads JSON Lines, one result per line (for measurements: the \
                  measurements.jsonl that `etip measure` writes in its --out folder, not its \
                  --format json output)"
                .into(),
        })
    } else if ext == "csv" || trimmed.lines().next().is_some_and(|l| l.contains(',')) {
        Ok(Sniffed::Csv)
    } else {
        Err(ScoreError::UnknownFormat {
            path: path.to_path_buf(),
            why: "neither CSV nor JSON".into(),
        })
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn line_of_offset(text: &[u8], offset: usize) -> usize {
    1 + text.iter().take(offset).filter(|&&b| b == b'\n').count()
}

/// Checks a number read from an input: finite and not negative.
pub(crate) fn check_number(path: &Path, line: usize, what: &str, value: f64) -> Result<f64> {
    if !value.is_finite() {
        return Err(ScoreError::Malformed {
            path: path.to_path_buf(),
            line,
            message: format!("{what} is {value}, expected a finite number"),
        });
    }
    if value < 0.0 {
        return Err(ScoreError::Malformed {
            path: path.to_path_buf(),
            line,
            message: format!("{what} is {value}, expected a number >= 0"),
        });
    }
    Ok(value)
}

/// Records instance ids and reports the first duplicate.
pub(crate) struct IdSet(BTreeMap<String, usize>);

impl IdSet {
    pub(crate) fn new() -> Self {
        IdSet(BTreeMap::new())
    }

    pub(crate) fn insert(&mut self, path: &Path, line: usize, id: &str) -> Result<()> {
        self.insert_field(path, line, "instance_id", id)
    }

    /// As [`IdSet::insert`], naming the id field `field` in errors.
    pub(crate) fn insert_field(
        &mut self,
        path: &Path,
        line: usize,
        field: &str,
        id: &str,
    ) -> Result<()> {
        if id.trim().is_empty() {
            return Err(ScoreError::Malformed {
                path: path.to_path_buf(),
                line,
                message: format!("empty {field}"),
            });
        }
        if let Some(first) = self.0.insert(id.to_owned(), line) {
            return Err(ScoreError::Malformed {
                path: path.to_path_buf(),
                line,
                message: format!("duplicate {field} {id:?} (first seen on line {first})"),
            });
        }
        Ok(())
    }
}
