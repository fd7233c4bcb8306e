//! The `export` stage: an etip benchmark as a dataset agent frameworks read. The built ETIPs
//! (`status.jsonl`), their measurements and, when given, the mined candidates become one record
//! per ETIP in SWE-bench's schema with etip's performance columns
//! ([`etip_tasks::export::ETIP_COLUMNS`]), written as JSON lines and Parquet with a dataset card
//! (`README.md`: the settings and the counts at each stage); the instance images are saved as
//! one `docker save` archive per environment layer, or pushed to a registry.

mod card;
mod images;
mod row;

use crate::InputError;
use crate::output::{self, Named, distinct};
use etip_core::candidate::Candidate;
use etip_core::instance::InstanceStatus;
use etip_records::measure::Measurement;
use etip_stats::Direction;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which ETIPs the dataset holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// Measured executable, and the overall sign test says the patched version is faster.
    Improved,
    /// Measured executable, whatever the verdict.
    Executable,
    /// Built (measured or not).
    Built,
}

impl Keep {
    pub fn as_str(self) -> &'static str {
        match self {
            Keep::Improved => "improved",
            Keep::Executable => "executable",
            Keep::Built => "built",
        }
    }
}

/// What happens to the instance images.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Images {
    /// Not exported (the records still name them).
    None,
    /// One `docker save` archive per environment layer under `images/`.
    Save,
    /// Tagged under the registry (`host:port[/path]`) and pushed; records carry the digest.
    Push(String),
}

/// What to export.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportConfig {
    /// `etip build`'s `status.jsonl`.
    pub etips: PathBuf,
    /// `etip measure`'s output folder or its `measurements.jsonl`.
    pub measurements: Option<PathBuf>,
    /// `etip mine`'s candidates (issue text, classifier's answer).
    pub mined: Option<PathBuf>,
    pub out: PathBuf,
    pub keep: Keep,
    pub images: Images,
}

/// The files of an export, under its folder.
pub const TASKS_JSONL: &str = "tasks.jsonl";
pub const TASKS_PARQUET: &str = "tasks.parquet";
pub const CARD: &str = "README.md";
pub const IMAGES_DIR: &str = "images";

/// An ETIP in the dataset.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Exported {
    pub id: String,
    pub repo: Option<String>,
    pub speedup: Option<f64>,
    pub verdict: Option<String>,
    pub detected_by: Vec<String>,
    pub image: Option<String>,
    /// The archive under `images/` or the pushed digest.
    pub image_export: Option<String>,
}

/// An ETIP of `--etips` not in the dataset, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LeftOut {
    pub id: String,
    pub why: String,
}

/// How many ETIPs each stage kept.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Counts {
    /// Candidates in `--mined` (when given).
    pub mined: Option<usize>,
    /// Of those, classified `yes` (when classified).
    pub classified_yes: Option<usize>,
    /// Lines of `--etips`.
    pub to_build: usize,
    pub built: usize,
    /// Measured (when `--measurements` is given).
    pub measured: Option<usize>,
    pub executable: Option<usize>,
    /// Executable with the overall verdict `patched_faster`.
    pub improved: Option<usize>,
    pub exported: usize,
}

/// What the export wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExportSummary {
    pub out: String,
    pub keep: Keep,
    pub files: Vec<String>,
    pub exported: Vec<Exported>,
    pub left_out: Vec<LeftOut>,
    pub counts: Counts,
}

/// Everything an ETIP's record is made of.
pub(crate) struct Inputs<'a> {
    pub status: &'a InstanceStatus,
    pub measurement: Option<&'a Measurement>,
    pub candidate: Option<&'a Candidate>,
    pub patch: String,
}

/// Exports the ETIPs `cfg` names; see the module's documentation.
pub fn export(cfg: &ExportConfig) -> anyhow::Result<ExportSummary> {
    let measurements_file = cfg.measurements.as_deref().map(measurements_file);
    let mut paths = vec![Named::reads("--etips", &cfg.etips)];
    if let Some(m) = &measurements_file {
        paths.push(Named::reads("--measurements", m));
    }
    if let Some(m) = &cfg.mined {
        paths.push(Named::reads("--mined", m));
    }
    for f in [TASKS_JSONL, TASKS_PARQUET, CARD] {
        paths.push(Named::writes(format!("the {f} of --out"), &cfg.out.join(f)));
    }
    distinct(&paths)?;
    if cfg.keep != Keep::Built && measurements_file.is_none() {
        return Err(InputError(format!(
            "--keep {} needs --measurements (etip measure's output); --keep built exports what built",
            cfg.keep.as_str()
        ))
        .into());
    }
    let statuses = crate::records::read_statuses(&cfg.etips)?;
    let measurements = match &measurements_file {
        Some(f) => read_measurements(f)?,
        None => BTreeMap::new(),
    };
    let candidates = match &cfg.mined {
        Some(f) => Some(read_candidates(f)?),
        None => None,
    };
    let _lock = output::lock_folder(&cfg.out, "--out")?;
    for f in [TASKS_JSONL, TASKS_PARQUET, CARD] {
        output::check(&cfg.out.join(f))?;
    }

    let cache = tempfile::Builder::new()
        .prefix(".etip-export-")
        .tempdir_in(&cfg.out)
        .map_err(|e| anyhow::anyhow!("making a scratch folder in {}: {e}", cfg.out.display()))?;
    let mut kept: Vec<(&InstanceStatus, Map<String, Value>)> = Vec::new();
    let mut left_out = Vec::new();
    for s in &statuses {
        let m = measurements.get(&s.id);
        if let Some(why) = left_out_why(cfg.keep, s, m, measurements_file.is_some()) {
            left_out.push(LeftOut {
                id: s.id.clone(),
                why,
            });
            continue;
        }
        let patch = match etip_eval::gold::patch(s, cache.path()) {
            Ok(p) => p,
            Err(e) => {
                left_out.push(LeftOut {
                    id: s.id.clone(),
                    why: format!("its patch could not be read: {e}"),
                });
                continue;
            }
        };
        let candidate = candidates.as_ref().and_then(|c| c.get(&s.id));
        let record = row::record(&Inputs {
            status: s,
            measurement: m,
            candidate,
            patch,
        });
        kept.push((s, record));
    }
    drop(cache);
    if kept.is_empty() {
        return Err(InputError(format!(
            "no ETIP of {} is {} ({} left out; `--keep built` exports every built ETIP)",
            cfg.etips.display(),
            cfg.keep.as_str(),
            left_out.len()
        ))
        .into());
    }

    let mut files = vec![
        TASKS_JSONL.to_string(),
        TASKS_PARQUET.to_string(),
        CARD.to_string(),
    ];
    let placed = images::export(&cfg.images, &kept, &cfg.out)?;
    for (_, record) in kept.iter_mut() {
        let id = record
            .get("instance_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if let Some(p) = placed.get(&id) {
            match p {
                images::Placed::Archive(a) => {
                    record.insert("image_archive".into(), Value::String(a.clone()));
                }
                images::Placed::Pushed(d) => {
                    record.insert("image_digest".into(), Value::String(d.clone()));
                }
            }
        }
    }
    let mut archives: Vec<String> = placed
        .values()
        .filter_map(|p| match p {
            images::Placed::Archive(a) => Some(a.clone()),
            images::Placed::Pushed(_) => None,
        })
        .collect();
    archives.sort();
    archives.dedup();
    files.extend(archives);

    let records: Vec<Map<String, Value>> = kept.iter().map(|(_, r)| r.clone()).collect();
    let columns = etip_tasks::export::columns();
    let mut jsonl = String::new();
    for r in &records {
        jsonl.push_str(&in_column_order(&columns, r)?);
        jsonl.push('\n');
    }
    output::write(&cfg.out.join(TASKS_JSONL), &jsonl)?;
    let parquet = etip_tasks::parquet_out::to_parquet(&columns, &records)?;
    etip_core::atomic::write(&cfg.out.join(TASKS_PARQUET), &parquet)?;

    let counts = counts(&statuses, &measurements, candidates.as_ref(), kept.len());
    let exported: Vec<Exported> = records.iter().map(exported).collect();
    let summary = ExportSummary {
        out: cfg.out.display().to_string(),
        keep: cfg.keep,
        files,
        exported,
        left_out,
        counts,
    };
    let measured: Vec<&Measurement> = kept
        .iter()
        .filter_map(|(s, _)| measurements.get(&s.id))
        .collect();
    output::write(
        &cfg.out.join(CARD),
        &card::card(&summary, &measured, candidates.as_ref(), &cfg.images),
    )?;
    Ok(summary)
}

/// A record as one JSON object with its fields in the dataset's column order (SWE-bench's
/// first), as a reader of the file expects to see them.
fn in_column_order(columns: &[&str], r: &Map<String, Value>) -> anyhow::Result<String> {
    let mut fields = Vec::with_capacity(r.len());
    for c in columns {
        if let Some(v) = r.get(*c) {
            fields.push(format!(
                "{}:{}",
                serde_json::to_string(c)?,
                serde_json::to_string(v)?
            ));
        }
    }
    Ok(format!("{{{}}}", fields.join(",")))
}

/// `measurements.jsonl` in a folder, or the file itself.
fn measurements_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("measurements.jsonl")
    } else {
        path.to_path_buf()
    }
}

fn read_measurements(path: &Path) -> anyhow::Result<BTreeMap<String, Measurement>> {
    let sub = etip_score::input::load_file(path, None)
        .map_err(|e| InputError(format!("--measurements: {e}")))?;
    if sub.measurements.is_empty() {
        return Err(InputError(format!(
            "--measurements {} holds no measurement of `etip measure`",
            path.display()
        ))
        .into());
    }
    Ok(sub
        .measurements
        .into_iter()
        .map(|m| (m.id.clone(), m))
        .collect())
}

fn read_candidates(path: &Path) -> anyhow::Result<BTreeMap<String, Candidate>> {
    let text = crate::input::read_text_capped(path, crate::input::MAX_INPUT_BYTES)?;
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let c: Candidate = serde_json::from_str(line).map_err(|e| {
            InputError(format!(
                "{}:{}: not a candidate of `etip mine` ({e})",
                path.display(),
                i + 1
            ))
        })?;
        out.insert(c.id.clone(), c);
    }
    Ok(out)
}

fn left_out_why(
    keep: Keep,
    s: &InstanceStatus,
    m: Option<&Measurement>,
    measured: bool,
) -> Option<String> {
    if !s.runnable() {
        return Some(format!("not built: {}", s.not_runnable_reason()));
    }
    if keep == Keep::Built {
        return None;
    }
    let Some(m) = m else {
        return Some(if measured {
            "not measured".into()
        } else {
            "no measurements given".into()
        });
    };
    if !m.executable {
        return Some(format!(
            "not executable: {}",
            m.detail.as_deref().unwrap_or("see its measurement")
        ));
    }
    if keep == Keep::Executable {
        return None;
    }
    match m
        .overall
        .as_ref()
        .and_then(|o| o.sign_test.as_ref())
        .map(|t| t.direction)
    {
        Some(Direction::PatchedFaster) => None,
        Some(d) => Some(format!(
            "not improved: the overall verdict is {}",
            row::direction_name(d)
        )),
        None => Some("no overall verdict".into()),
    }
}

fn counts(
    statuses: &[InstanceStatus],
    measurements: &BTreeMap<String, Measurement>,
    candidates: Option<&BTreeMap<String, Candidate>>,
    exported: usize,
) -> Counts {
    // One pass over the measured statuses: (measured, executable, improved).
    let (mut measured, mut executable, mut improved) = (0, 0, 0);
    for m in statuses.iter().filter_map(|s| measurements.get(&s.id)) {
        measured += 1;
        if m.executable {
            executable += 1;
            let direction = m.overall.as_ref().and_then(|o| o.sign_test.as_ref());
            if direction.is_some_and(|t| t.direction == Direction::PatchedFaster) {
                improved += 1;
            }
        }
    }
    let measured_any = !measurements.is_empty();
    Counts {
        mined: candidates.map(BTreeMap::len),
        classified_yes: candidates.and_then(|c| {
            let classified: Vec<_> = c
                .values()
                .filter_map(|c| c.classification.as_ref())
                .collect();
            (!classified.is_empty())
                .then(|| classified.iter().filter(|c| c.answer == "yes").count())
        }),
        to_build: statuses.len(),
        built: statuses.iter().filter(|s| s.runnable()).count(),
        measured: measured_any.then_some(measured),
        executable: measured_any.then_some(executable),
        improved: measured_any.then_some(improved),
        exported,
    }
}

fn exported(r: &Map<String, Value>) -> Exported {
    let s = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
    Exported {
        id: s("instance_id").unwrap_or_default(),
        repo: s("repo"),
        speedup: r.get("speedup").and_then(Value::as_f64),
        verdict: s("verdict"),
        detected_by: r
            .get("detected_by")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        image: s("image"),
        image_export: s("image_archive").or_else(|| s("image_digest")),
    }
}
