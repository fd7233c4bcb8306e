//! Reading per-task results: SWE-fficiency CSV reports, GSO JSON reports, etip's own task-result
//! JSONL and the `measurements.jsonl` of `etip measure`.
//!
//! Every reader turns one file into one [`Submission`]. The format is recognised from the content (CSV
//! header, JSON keys), not only from the file name: among JSON Lines, a line with `instance_id` is a
//! task result, a line with `schema_version` and `classes` / `round_log` / `executable` is a
//! measurement (the first line that parses decides for the whole file). Errors name the file and the
//! line, and quote at most a short prefix of the input ([`crate::clip`]).
//!
//! Limits and checks common to every reader:
//!
//! * a file is read up to [`MAX_FILE_BYTES`] (256 MiB) and a line up to [`MAX_LINE_BYTES`]
//!   (64 MiB); a larger file or line is refused without reading further ([`read_text`]); a UTF-8
//!   byte order mark is skipped;
//! * runtimes must be finite and at least [`MIN_RUNTIME`] (zero is a timer reading in measurements
//!   of `etip measure` only), and the means, per-round totals and ratios the rules form from them
//!   must neither overflow nor underflow to 0;
//! * official reports must be consistent: ids unique within each list of a GSO report, in at most
//!   one status set, the opt sets within the passed ids, a supported `schema_version`; a
//!   SWE-fficiency `patch_length` is a whole number and the summary `.json` beside the CSV a valid
//!   object (errors name that file).

mod check;
mod etip;
mod gso;
mod measurements;
mod read;
mod sniff;
mod swefficiency;

pub use check::MIN_RUNTIME;
pub use read::{MAX_FILE_BYTES, MAX_LINE_BYTES, read_text};

use crate::error::{Result, ScoreError};
use etip_records::measure::Measurement;
use etip_records::results::TaskResult;
use sniff::{JsonlKind, Sniffed};
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
    /// The 1-based line of each task in the file, parallel to `tasks` (GSO reports: 1, as a report
    /// is one JSON object).
    pub lines: Vec<usize>,
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
        AnyFile::Several(subs) => Err(ScoreError::InvalidParameter(format!(
            "{} holds {} submissions ({}); read it with load_files",
            path.display(),
            subs.len(),
            subs.iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
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
        let sub = match file {
            AnyFile::Submission(sub) => Some(&**sub),
            AnyFile::Several(subs) => subs.first(),
            AnyFile::Manifest(_) => None,
        };
        if let Some(sub) = sub {
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
    let loaded = assemble(files, Format::family)?.pop();
    match loaded {
        Some(loaded) if !loaded.submissions.is_empty() => Ok(loaded),
        _ => Err(no_submission(paths)),
    }
}

/// Reads files of possibly several benchmarks (as `etip audit` accepts) and groups them by benchmark;
/// within a group the same checks as [`load_files`] apply. Refuses a call without submissions (only
/// GSO manifests), as [`load_files`] does.
pub fn load_grouped(paths: &[PathBuf]) -> Result<Vec<Loaded>> {
    let files = paths
        .iter()
        .map(|path| Ok((path.clone(), read_any(path, None)?)))
        .collect::<Result<Vec<_>>>()?;
    let groups = assemble(files, |f| f)?;
    if groups.iter().all(|g| g.submissions.is_empty()) {
        return Err(no_submission(paths));
    }
    Ok(groups)
}

/// The error of a call whose files are all GSO manifests (or none at all).
fn no_submission(paths: &[PathBuf]) -> ScoreError {
    ScoreError::NoSubmission {
        files: paths.to_vec(),
    }
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
                add(&mut groups, &mut seen, group, &path, *sub)?;
            }
            AnyFile::Several(subs) => {
                for sub in subs {
                    add(&mut groups, &mut seen, group, &path, sub)?;
                }
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

/// Adds a submission to its benchmark's group, refusing a name seen before.
fn add(
    groups: &mut BTreeMap<Format, Loaded>,
    seen: &mut BTreeMap<String, PathBuf>,
    group: fn(Format) -> Format,
    path: &Path,
    sub: Submission,
) -> Result<()> {
    if let Some(prev) = seen.insert(sub.name.clone(), path.to_path_buf()) {
        return Err(ScoreError::DuplicateSubmission {
            name: sub.name,
            first: prev,
            second: path.to_path_buf(),
        });
    }
    groups
        .entry(group(sub.format))
        .or_default()
        .submissions
        .push(sub);
    Ok(())
}

enum AnyFile {
    Submission(Box<Submission>),
    /// An `etip eval` results file holding several submissions (models or runs).
    Several(Vec<Submission>),
    Manifest(BTreeMap<String, f64>),
}

fn read_any(path: &Path, name: Option<&str>) -> Result<AnyFile> {
    let text = read_text(path)?;
    let given = name.map(str::to_owned);
    let name = given.clone().unwrap_or_else(|| stem(path));
    let sub = match sniff::sniff(path, &text)? {
        Sniffed::Csv => swefficiency::read(path, &text, name)?,
        Sniffed::GsoReport(value) => gso::read_report(path, *value, name)?,
        Sniffed::GsoManifest(value) => {
            return Ok(AnyFile::Manifest(gso::read_manifest(path, &value)?));
        }
        Sniffed::Jsonl => match sniff::jsonl_kind(path, &text)? {
            JsonlKind::TaskResults => {
                let mut subs = etip::read(path, &text, name, given.is_some())?;
                if subs.len() > 1 {
                    return Ok(AnyFile::Several(subs));
                }
                subs.pop().ok_or_else(|| ScoreError::Empty {
                    path: path.to_path_buf(),
                    expected: "one JSON task result per line",
                })?
            }
            JsonlKind::Measurements => {
                let name = given.unwrap_or_else(|| measurements::default_name(path, name));
                measurements::read(path, &text, name)?
            }
        },
    };
    Ok(AnyFile::Submission(Box::new(sub)))
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}
