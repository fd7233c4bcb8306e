//! etip's own task-result JSON Lines (`etip_core::results::TaskResult`, one object per line).

use super::{Format, IdSet, Submission, check_number};
use crate::error::{Result, ScoreError};
use etip_core::results::TaskResult;
use std::collections::BTreeMap;
use std::path::Path;

pub(super) fn read(path: &Path, text: &str, name: String) -> Result<Submission> {
    let mut ids = IdSet::new();
    let mut tasks = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let task: TaskResult = serde_json::from_str(raw).map_err(|e| ScoreError::Malformed {
            path: path.to_path_buf(),
            line,
            message: format!("not an etip task result: {e}"),
        })?;
        ids.insert(path, line, &task.instance_id)?;
        validate(path, line, &task)?;
        tasks.push(task);
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
        total_instances: None,
        official_score: None,
        official_summary: BTreeMap::new(),
        measurements: Vec::new(),
    })
}

fn validate(path: &Path, line: usize, task: &TaskResult) -> Result<()> {
    let bad = |message: String| ScoreError::Malformed {
        path: path.to_path_buf(),
        line,
        message,
    };
    if let Some(p) = task.pass_fraction {
        check_number(path, line, "pass_fraction", p)?;
        if p > 1.0 {
            return Err(bad(format!(
                "pass_fraction is {p}, expected a value in [0, 1]"
            )));
        }
    }
    for (what, value) in [
        ("speedup", task.speedup),
        ("gold_speedup", task.gold_speedup),
    ] {
        if let Some(v) = value {
            check_number(path, line, what, v)?;
            if v == 0.0 {
                return Err(bad(format!("{what} is 0, expected a positive ratio")));
            }
        }
    }
    for test in &task.tests {
        for (what, runs) in [
            ("base", &test.base),
            ("patched", &test.patched),
            ("reference", &test.reference),
        ] {
            for &x in runs {
                check_number(
                    path,
                    line,
                    &format!("test {:?} {what} runtime", test.name),
                    x,
                )?;
            }
        }
    }
    if let Some(m) = &task.per_test_means {
        if m.base.len() != m.patch.len() || m.base.len() != m.commit.len() {
            return Err(bad("per_test_means lists have different lengths".into()));
        }
        for &x in m.base.iter().chain(&m.patch).chain(&m.commit) {
            check_number(path, line, "per_test_means", x)?;
        }
    }
    Ok(())
}
