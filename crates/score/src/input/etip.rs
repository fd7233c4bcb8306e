//! etip's own task-result JSON Lines (`etip_core::results::TaskResult`, one object per line).

use super::check::{At, IdSet, check_number, check_positive, check_task_runtimes, checked_ratio};
use super::{Format, Submission};
use crate::clip::foreign;
use crate::error::{Result, ScoreError};
use etip_core::results::TaskResult;
use std::collections::BTreeMap;
use std::path::Path;

pub(super) fn read(path: &Path, text: &str, name: String) -> Result<Submission> {
    let mut ids = IdSet::new();
    let mut tasks = Vec::new();
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let task: TaskResult = serde_json::from_str(raw).map_err(|e| ScoreError::Malformed {
            path: path.to_path_buf(),
            line,
            message: format!("not an etip task result: {}", foreign(e)),
        })?;
        ids.insert(path, line, &task.instance_id)?;
        validate(At { path, line }, &task)?;
        tasks.push(task);
        lines.push(line);
    }
    if tasks.is_empty() {
        return Err(ScoreError::Empty {
            path: path.to_path_buf(),
            expected: "one JSON task result per line",
        });
    }
    Ok(Submission {
        name,
        path: path.to_path_buf(),
        format: Format::EtipJsonl,
        tasks,
        lines,
        total_instances: None,
        official_score: None,
        official_summary: BTreeMap::new(),
        measurements: Vec::new(),
    })
}

fn validate(at: At, task: &TaskResult) -> Result<()> {
    if let Some(p) = task.pass_fraction {
        check_number(at.path, at.line, "pass_fraction", p)?;
        if p > 1.0 {
            return Err(at.err(format!("pass_fraction is {p}, expected a value in [0, 1]")));
        }
    }
    let speedup = task
        .speedup
        .map(|v| check_positive(at, "speedup", v))
        .transpose()?;
    let gold = task
        .gold_speedup
        .map(|v| check_positive(at, "gold_speedup", v))
        .transpose()?;
    if let Some(g) = gold {
        // SR = credited / gold: the measured speedup when correct, 1 otherwise.
        checked_ratio(at, &|| "the SR 1 / gold_speedup".into(), 1.0, g)?;
        if let Some(s) = speedup {
            checked_ratio(at, &|| "the SR speedup / gold_speedup".into(), s, g)?;
        }
    }
    check_task_runtimes(at, task)
}
