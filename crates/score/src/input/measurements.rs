//! `measurements.jsonl` of `etip measure` (`etip_records::measure::Measurement`, schema
//! `etip.measurement`, one object per line; documented in `docs/schemas/measurements.md`).
//!
//! Each line becomes a task result through [`Measurement::to_task_result`]: correct when the ETIP is
//! executable, one test per class with its per-round times of both versions, and the classes that
//! are not eligible for verdicts (too fast to time, failed, missing in some round) marked as not
//! passed, so that the JETO rule leaves them out as the measurement did. The measurements
//! themselves are kept beside the tasks ([`Submission::measurements`]) for the rules that compare
//! their verdicts with the measurement's own.

use super::check::{At, IdSet, check_round_totals, check_runtimes};
use super::{Format, Submission};
use crate::clip::{foreign, quote};
use crate::error::{Result, ScoreError};
use etip_records::measure::{ClassRecord, MEASUREMENT_SCHEMA_VERSION, Measurement};
use std::collections::BTreeMap;
use std::path::Path;

/// The default stem of the file `etip measure` writes.
pub(super) const DEFAULT_STEM: &str = "measurements";

/// Whether a parsed JSON line looks like a measurement record (and not a task result).
pub(super) fn looks_like_measurement(value: &serde_json::Value) -> bool {
    value.get("schema_version").is_some()
        && value.get("instance_id").is_none()
        && ["classes", "round_log", "executable"]
            .iter()
            .any(|k| value.get(k).is_some())
}

/// Whether a parsed JSON line looks like a line of `executable.jsonl`, the summary beside
/// `measurements.jsonl` (no times, so nothing to score).
pub(super) fn looks_like_executable_summary(value: &serde_json::Value) -> bool {
    value.get("schema_version").is_none()
        && value.get("instance_id").is_none()
        && value.get("id").is_some()
        && value.get("detectors").is_some()
}

pub(super) fn read(path: &Path, text: &str, name: String) -> Result<Submission> {
    let mut ids = IdSet::new();
    let mut tasks = Vec::new();
    let mut lines = Vec::new();
    let mut measurements = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let m = parse_line(path, line, raw)?;
        ids.insert_field(path, line, "id", &m.id)?;
        validate(path, line, &m)?;
        let task = m.to_task_result();
        check_round_totals(At { path, line }, &task.tests)?;
        tasks.push(task);
        lines.push(line);
        measurements.push(m);
    }
    if tasks.is_empty() {
        return Err(ScoreError::Empty {
            path: path.to_path_buf(),
            expected: "one measurement per line, as `etip measure` writes measurements.jsonl",
        });
    }
    Ok(Submission {
        name,
        path: path.to_path_buf(),
        format: Format::EtipMeasurements,
        tasks,
        lines,
        total_instances: None,
        official_score: None,
        official_summary: BTreeMap::new(),
        measurements,
    })
}

fn parse_line(path: &Path, line: usize, raw: &str) -> Result<Measurement> {
    let bad = |message: String| ScoreError::Malformed {
        path: path.to_path_buf(),
        line,
        message,
    };
    let value: serde_json::Value = serde_json::from_str(raw).map_err(|e| {
        bad(format!(
            "not an etip measurement: invalid JSON at column {}: {}",
            e.column(),
            foreign(e)
        ))
    })?;
    if !value.is_object() {
        return Err(bad(
            "not an etip measurement: expected a JSON object per line".into(),
        ));
    }
    if value.get("instance_id").is_some() {
        return Err(bad(
            "an etip task result (instance_id) in a measurements file; a file holds either \
             measurements of `etip measure` or task results, not both"
                .into(),
        ));
    }
    match value.get("schema_version") {
        None => {
            return Err(bad(
                "not an etip measurement: missing field `schema_version`".into(),
            ));
        }
        Some(v) if v.as_u64() != Some(u64::from(MEASUREMENT_SCHEMA_VERSION)) => {
            return Err(bad(format!(
                "schema_version {} of etip.measurement is not supported; this etip reads \
                 version {MEASUREMENT_SCHEMA_VERSION}",
                crate::clip::clip(&v.to_string(), crate::clip::QUOTE_CHARS)
            )));
        }
        Some(_) => {}
    }
    let m: Measurement = serde_json::from_value(value)
        .map_err(|e| bad(format!("not an etip measurement: {}", foreign(e))))?;
    Ok(m)
}

fn validate(path: &Path, line: usize, m: &Measurement) -> Result<()> {
    let bad = |message: String| ScoreError::Malformed {
        path: path.to_path_buf(),
        line,
        message,
    };
    if m.executable != m.reason.is_none() {
        return Err(bad(format!(
            "executable is {} but reason is {}; an ETIP is executable exactly when it has no reason",
            m.executable,
            if m.reason.is_some() {
                "given"
            } else {
                "absent"
            }
        )));
    }
    let check_class = |c: &ClassRecord, what: &str| -> Result<()> {
        let name = quote(&c.name);
        for (side, times) in [("original", &c.original), ("patched", &c.patched)] {
            // Zero is a reading of a timer too coarse for the class (too_fast), not an error.
            check_runtimes(
                At { path, line },
                &|| format!("{what} {name} {side} time"),
                times,
                true,
            )?;
        }
        if c.original.len() != c.patched.len() {
            return Err(bad(format!(
                "{what} {name} has {} original times but {} patched times; the two series are \
                 paired by round",
                c.original.len(),
                c.patched.len()
            )));
        }
        if c.eligible && c.original.len() != m.rounds {
            return Err(bad(format!(
                "{what} {name} is eligible but has {} times per version, not one per timed round \
                 (rounds = {})",
                c.original.len(),
                m.rounds
            )));
        }
        Ok(())
    };
    for c in &m.classes {
        check_class(c, "class")?;
    }
    if let Some(o) = &m.overall {
        check_class(o, "overall")?;
    }
    Ok(())
}

/// The submission name of a measurements file given no `--name`: the file stem, except for the
/// default stem `measurements`, where it is the name of the folder holding the file (the `--out`
/// folder of `etip measure`), so that `runs/a/measurements.jsonl` and `runs/b/measurements.jsonl`
/// are named `a` and `b`.
pub(super) fn default_name(path: &Path, stem: String) -> String {
    if stem != DEFAULT_STEM {
        return stem;
    }
    let folder = |p: &Path| {
        p.parent()
            .and_then(Path::file_name)
            .map(|s| s.to_string_lossy().into_owned())
    };
    folder(path)
        .or_else(|| std::fs::canonicalize(path).ok().and_then(|p| folder(&p)))
        .filter(|s| !s.is_empty())
        .unwrap_or(stem)
}
