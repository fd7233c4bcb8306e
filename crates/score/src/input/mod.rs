//! Reading per-task results: SWE-fficiency CSV reports, GSO JSON reports and etip's own JSONL.
//!
//! Every reader turns one file into one [`Submission`]. The format is recognised from the content (CSV
//! header, JSON keys), not only from the file name. Errors name the file and the line.

mod etip;
mod gso;
mod swefficiency;

use crate::error::{Result, ScoreError};
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
}

impl Format {
    /// Human-readable name of the format.
    pub fn describe(self) -> &'static str {
        match self {
            Format::SwefficiencyCsv => "a SWE-fficiency CSV report",
            Format::GsoReport => "a GSO report",
            Format::EtipJsonl => "an etip task-result file",
        }
    }

    /// Benchmark family, used to refuse mixing benchmarks in one call.
    pub fn benchmark(self) -> &'static str {
        match self {
            Format::SwefficiencyCsv => "swefficiency",
            Format::GsoReport => "gso",
            Format::EtipJsonl => "etip",
        }
    }
}

/// One submission's per-task results, as read from one file.
#[derive(Debug, Clone)]
pub struct Submission {
    /// Submission name (file stem unless given).
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
}

/// What a call to [`load_files`] produced.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Submissions, in the order the files were given.
    pub submissions: Vec<Submission>,
    /// GSO manifests that were given; their official scores were attached to the matching submissions.
    pub manifests: Vec<PathBuf>,
}

/// Reads one results file. `name` overrides the submission name (default: the file stem).
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
/// benchmarks and duplicate names.
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
                Some((first_path, kind)) if kind != sub.format => {
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
    Ok(assemble(files)?.pop().unwrap_or_default())
}

/// Reads files of possibly several benchmarks (as `etip audit` accepts) and groups them by benchmark;
/// within a group the same checks as [`load_files`] apply.
pub fn load_grouped(paths: &[PathBuf]) -> Result<Vec<Loaded>> {
    let files = paths
        .iter()
        .map(|path| Ok((path.clone(), read_any(path, None)?)))
        .collect::<Result<Vec<_>>>()?;
    assemble(files)
}

/// Groups read files by format, attaches manifest scores, and checks names are unique.
fn assemble(files: Vec<(PathBuf, AnyFile)>) -> Result<Vec<Loaded>> {
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
                groups.entry(sub.format).or_default().submissions.push(*sub);
            }
        }
    }
    for loaded in groups.values_mut() {
        for sub in &mut loaded.submissions {
            if sub.format == Format::GsoReport {
                if let Some(score) = manifest_scores.get(&sub.name) {
                    sub.official_score = Some(*score);
                }
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
    let name = name.map(str::to_owned).unwrap_or_else(|| stem(path));
    let sub = match sniff(path, &text)? {
        Sniffed::Csv => swefficiency::read(path, &text, name)?,
        Sniffed::GsoReport(value) => gso::read_report(path, *value, name)?,
        Sniffed::GsoManifest(value) => {
            return Ok(AnyFile::Manifest(gso::read_manifest(path, &value)?));
        }
        Sniffed::Jsonl => etip::read(path, &text, name)?,
    };
    Ok(AnyFile::Submission(Box::new(sub)))
}

enum Sniffed {
    Csv,
    GsoReport(Box<serde_json::Value>),
    GsoManifest(Box<serde_json::Value>),
    Jsonl,
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
        if id.trim().is_empty() {
            return Err(ScoreError::Malformed {
                path: path.to_path_buf(),
                line,
                message: "empty instance_id".into(),
            });
        }
        if let Some(first) = self.0.insert(id.to_owned(), line) {
            return Err(ScoreError::Malformed {
                path: path.to_path_buf(),
                line,
                message: format!("duplicate instance_id {id:?} (first seen on line {first})"),
            });
        }
        Ok(())
    }
}
