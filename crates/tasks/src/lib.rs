//! The field's task datasets read into ETIP records (`etip import`): SWE-bench's schema,
//! SWE-fficiency's (SWE-bench's plus a workload per task) and GSO's.
//!
//! A dataset file is Parquet (as Hugging Face serves the three datasets), JSON lines, a JSON
//! array, or one JSON object per task under a key ([`read_records`]). Each record becomes an [`ImportedTask`]: the base commit, the gold patch
//! (SWE-bench's `patch`) or the expert commit (GSO's `opt_commit`), the task's workloads
//! (SWE-fficiency's `workload` as it is; each GSO performance test wrapped so that GSO's own
//! timing is etip's figure, [`gso`]), and the whole task as given ([`Task`]). Every field is
//! accounted for: a required field that is missing or of the wrong type refuses that task with
//! its id and the field's name; a field the format does not define is kept in `Task::extra` and
//! named in the task's warnings. Nothing is guessed.

pub mod export;
/// GSO's performance tests as etip workloads (their home is [`etip_core::gso_test`]).
pub use etip_core::gso_test as gso;
pub mod parquet_out;
mod record;
pub mod specs;

use etip_core::Language;
use etip_core::detector::{Workload, workloads_problem};
use etip_core::task::{Task, TaskEnvironment, TaskFormat};
use record::Fields;
use serde_json::{Map, Value};
use std::path::Path;

/// A task read into an ETIP record.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedTask {
    /// The record's position in the file (1-based; 0 from [`convert`] alone).
    pub index: usize,
    /// The ETIP's id: the task's `instance_id`.
    pub id: String,
    pub language: Language,
    /// `owner/name`.
    pub repo: String,
    pub base_commit: String,
    /// The patched version as a commit (GSO's `opt_commit`)...
    pub patched_commit: Option<String>,
    /// ... or as the gold patch to `base_commit` (SWE-bench's `patch`, GSO's `gt_diff` without
    /// an `opt_commit`).
    pub patch: Option<String>,
    pub workloads: Vec<Workload>,
    pub task: Task,
    /// What the reader noticed and did not refuse (unknown fields, empty lists).
    pub warnings: Vec<String>,
}

/// A task that could not be imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The record's position in the file (1-based).
    pub index: usize,
    /// Its `instance_id`, when it has one.
    pub id: Option<String>,
    pub problem: String,
}

/// What a dataset file gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    pub tasks: Vec<ImportedTask>,
    pub refused: Vec<Refused>,
}

/// Why a dataset file could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("reading {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: line {line} is not a JSON object: {detail}")]
    Line {
        path: String,
        line: usize,
        detail: String,
    },
    #[error("{path} is not JSON lines, a JSON array of objects or an object of objects: {detail}")]
    Shape { path: String, detail: String },
    #[error("{path} holds no task")]
    Empty { path: String },
    #[error("{path} is not a readable Parquet file: {detail}")]
    Parquet { path: String, detail: String },
}

/// The largest dataset file read (SWE-fficiency's full set, with its workloads, is about 600 MB
/// as Parquet; as JSON lines less than that).
pub const MAX_DATASET_BYTES: u64 = 2 << 30;

/// The records of a dataset file: Parquet (recognised by its magic bytes; each row an object,
/// lists as arrays), JSON lines (one object per line, blank lines skipped), a JSON array of
/// objects, or an object whose values are the task objects (keyed by id).
pub fn read_records(path: &Path) -> Result<Vec<Map<String, Value>>, ReadError> {
    let shown = path.display().to_string();
    if is_parquet(path) {
        let records = parquet_records(path, &shown)?;
        if records.is_empty() {
            return Err(ReadError::Empty { path: shown });
        }
        return Ok(records);
    }
    let text =
        etip_core::bounded::read_to_string_capped(path, MAX_DATASET_BYTES).map_err(|source| {
            ReadError::Io {
                path: shown.clone(),
                source,
            }
        })?;
    let records = parse_records(&text, &shown)?;
    if records.is_empty() {
        return Err(ReadError::Empty { path: shown });
    }
    Ok(records)
}

/// Whether `path` starts with Parquet's magic bytes.
fn is_parquet(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == b"PAR1"
}

/// The rows of a Parquet file as JSON objects (Parquet's row API: no Arrow).
fn parquet_records(path: &Path, shown: &str) -> Result<Vec<Map<String, Value>>, ReadError> {
    use parquet::file::reader::SerializedFileReader;
    let bad = |detail: String| ReadError::Parquet {
        path: shown.to_string(),
        detail,
    };
    let size = std::fs::metadata(path)
        .map_err(|source| ReadError::Io {
            path: shown.to_string(),
            source,
        })?
        .len();
    if size > MAX_DATASET_BYTES {
        return Err(bad(format!(
            "{size} bytes, more than the {MAX_DATASET_BYTES} read"
        )));
    }
    let file = std::fs::File::open(path).map_err(|source| ReadError::Io {
        path: shown.to_string(),
        source,
    })?;
    let reader = SerializedFileReader::new(file).map_err(|e| bad(e.to_string()))?;
    let mut out = Vec::new();
    for (i, row) in reader.into_iter().enumerate() {
        let row = row.map_err(|e| bad(format!("row {}: {e}", i + 1)))?;
        match row.to_json_value() {
            Value::Object(m) => out.push(m),
            other => return Err(bad(format!("row {} is {}", i + 1, kind(&other)))),
        }
    }
    Ok(out)
}

fn parse_records(text: &str, shown: &str) -> Result<Vec<Map<String, Value>>, ReadError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') || trimmed.starts_with('{') {
        // A whole-file JSON document, unless it is JSON lines starting with an object.
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            return match v {
                Value::Array(items) => items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| match v {
                        Value::Object(m) => Ok(m),
                        other => Err(ReadError::Shape {
                            path: shown.into(),
                            detail: format!("item {} is {}", i + 1, kind(&other)),
                        }),
                    })
                    .collect(),
                Value::Object(m) if m.contains_key("instance_id") => Ok(vec![m]),
                Value::Object(m) => m
                    .into_iter()
                    .map(|(k, v)| match v {
                        Value::Object(mut o) => {
                            o.entry("instance_id").or_insert(Value::String(k));
                            Ok(o)
                        }
                        other => Err(ReadError::Shape {
                            path: shown.into(),
                            detail: format!("the value of {k:?} is {}", kind(&other)),
                        }),
                    })
                    .collect(),
                other => Err(ReadError::Shape {
                    path: shown.into(),
                    detail: format!("the document is {}", kind(&other)),
                }),
            };
        }
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(m)) => out.push(m),
            Ok(other) => {
                return Err(ReadError::Line {
                    path: shown.into(),
                    line: i + 1,
                    detail: format!("it is {}", kind(&other)),
                });
            }
            Err(e) => {
                return Err(ReadError::Line {
                    path: shown.into(),
                    line: i + 1,
                    detail: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Converts the records of a `format` dataset; `language` is the repositories' language
/// (the three datasets are Python's).
pub fn import(
    format: TaskFormat,
    records: Vec<Map<String, Value>>,
    language: Language,
) -> Imported {
    let mut out = Imported::default();
    let mut seen = std::collections::HashMap::new();
    for (i, record) in records.into_iter().enumerate() {
        let index = i + 1;
        let id = record
            .get("instance_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        match convert(format, record, language) {
            Ok(mut t) => {
                t.index = index;
                if let Some(first) = seen.insert(t.id.clone(), index) {
                    out.refused.push(Refused {
                        index,
                        id,
                        problem: format!("instance_id {:?} is also task {first}'s", t.id),
                    });
                } else {
                    out.tasks.push(t);
                }
            }
            Err(problem) => out.refused.push(Refused { index, id, problem }),
        }
    }
    out
}

/// One record of a `format` dataset as an ETIP, or why it cannot be one.
pub fn convert(
    format: TaskFormat,
    record: Map<String, Value>,
    mut language: Language,
) -> Result<ImportedTask, String> {
    let mut f = Fields::new(record);
    let instance_id = f.required_str("instance_id")?;
    if instance_id.trim().is_empty()
        || instance_id.contains(['/', '\\'])
        || instance_id.chars().any(char::is_control)
    {
        return Err(format!(
            "instance_id {instance_id:?} cannot name an ETIP (empty, a path separator or a control character)"
        ));
    }
    let repo = f.required_str("repo")?;
    if repo.split('/').count() != 2 || repo.split('/').any(str::is_empty) {
        return Err(format!("repo {repo:?} is not owner/name"));
    }
    let base_commit = f.required_str("base_commit")?;
    let mut task = Task {
        format,
        instance_id: instance_id.clone(),
        repo: repo.clone(),
        version: f.optional_version("version")?,
        created_at: f.optional_str("created_at")?,
        problem_statement: None,
        hints_text: f.optional_str("hints_text")?,
        test_patch: None,
        fail_to_pass: Vec::new(),
        pass_to_pass: Vec::new(),
        covering_tests: Vec::new(),
        single_thread_tests: Vec::new(),
        expert_speedup: None,
        api: None,
        prob_script: None,
        commit_message: None,
        environment: TaskEnvironment::default(),
        extra: Default::default(),
    };
    let mut patched_commit = None;
    let mut patch = None;
    let mut gt_diff = None;
    let mut workloads = Vec::new();
    match format {
        TaskFormat::Swebench | TaskFormat::Swefficiency => {
            patch = Some(f.required_str("patch")?);
            task.test_patch = f.optional_str("test_patch")?;
            task.problem_statement = f.optional_str("problem_statement")?;
            task.fail_to_pass = f.list("FAIL_TO_PASS")?;
            task.pass_to_pass = f.list("PASS_TO_PASS")?;
            task.environment.setup_commit = f.optional_str("environment_setup_commit")?;
            if format == TaskFormat::Swefficiency {
                let script = f.required_str("workload")?;
                workloads.push(Workload {
                    name: "workload".into(),
                    script: Some(script),
                    file: None,
                    repeat: None,
                });
                task.expert_speedup = f.optional_f64("speedup")?;
                task.covering_tests = f.list("covering_tests")?;
                task.single_thread_tests = f.list("single_thread_tests")?;
                task.environment.test_cmd = f.optional_str("test_cmd")?;
                task.environment.rebuild_cmd = f.optional_str("rebuild_cmd")?;
                task.environment.image = f.optional_str("image_name")?;
            }
        }
        TaskFormat::Gso => {
            patched_commit = f.optional_str("opt_commit")?;
            let diff = f.optional_str("gt_diff")?;
            match (&patched_commit, diff) {
                (None, diff) => {
                    patch = Some(diff.ok_or("neither opt_commit nor gt_diff is given")?)
                }
                // The expert commit is exact; its diff is kept with the task (for an export).
                (Some(_), Some(diff)) => gt_diff = Some(diff),
                (Some(_), None) => {}
            }
            let tests = f.list("tests")?;
            if tests.is_empty() {
                return Err("tests (GSO's performance tests) is missing or empty".into());
            }
            for (n, test) in tests.iter().enumerate() {
                workloads.push(Workload {
                    name: format!("gso_test_{n}"),
                    script: Some(gso::wrap(test)),
                    file: None,
                    repeat: Some(1),
                });
            }
            task.api = f.optional_str("api")?;
            task.prob_script = f.optional_str("prob_script")?;
            task.commit_message = f.optional_str("gt_commit_message")?;
            task.environment.setup_commands = f.list("setup_commands")?;
            task.environment.install_commands = f.list("install_commands")?;
            task.environment.arch = f.optional_str("arch")?;
            task.environment.image = f.optional_str("instance_image_tag")?;
        }
    }
    // An `etip export`: its language and workloads are the ETIP's; its other columns are
    // etip's results, kept with the task.
    if let Some(l) = f.optional_str("language")? {
        language = l
            .parse()
            .map_err(|e| format!("language {l:?} is not one etip knows ({e})"))?;
    }
    if let Some(v) = f.json("workloads")? {
        workloads = serde_json::from_value(v)
            .map_err(|e| format!("workloads is not a list of workloads ({e})"))?;
    }
    if let Some(p) = workloads_problem(&workloads) {
        return Err(p);
    }
    let carried = match f.json("extra")? {
        None => Map::new(),
        Some(Value::Object(o)) => o,
        Some(other) => return Err(format!("extra is not an object ({other})")),
    };
    let mut warnings = f.warnings.clone();
    task.extra = f.rest();
    let names: Vec<&str> = task
        .extra
        .keys()
        .map(String::as_str)
        .filter(|k| !export::is_etip_column(k))
        .collect();
    if !names.is_empty() {
        warnings.push(format!(
            "field(s) {} are not {}'s: kept as given in task.extra",
            names.join(", "),
            format.as_str()
        ));
    }
    if let Some(diff) = gt_diff {
        task.extra.insert("gt_diff".into(), Value::String(diff));
    }
    // What an `etip export` kept of the task's own dataset.
    for (k, v) in carried {
        task.extra.entry(k).or_insert(v);
    }
    Ok(ImportedTask {
        index: 0,
        id: instance_id,
        language,
        repo,
        base_commit,
        patched_commit,
        patch,
        workloads,
        task,
        warnings,
    })
}

#[cfg(test)]
mod tests;
