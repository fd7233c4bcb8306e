//! GSO per-model reports (`summary`, `instance_sets`, `opt_stats`) and the leaderboard `manifest.json`.

use super::{Format, Submission, check_number};
use crate::error::{Result, ScoreError};
use etip_core::results::{OfficialVerdict, PerTestMeans, TaskResult};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[derive(Deserialize)]
struct Report {
    summary: Summary,
    instance_sets: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    opt_stats: BTreeMap<String, OptStats>,
}

#[derive(Deserialize)]
struct Summary {
    total_instances: usize,
    #[serde(default)]
    score: Option<f64>,
    #[serde(flatten)]
    rest: BTreeMap<String, serde_json::Value>,
}

#[derive(Deserialize)]
struct OptStats {
    #[serde(default)]
    per_test_means: Option<Means>,
}

#[derive(Deserialize)]
struct Means {
    base: Vec<f64>,
    patch: Vec<f64>,
    commit: Vec<f64>,
}

/// Instance sets that give a task's status, in the order the status is decided.
const STATUS_SETS: [(&str, &str); 6] = [
    ("passed_ids", "passed"),
    ("test_failed_ids", "test_failed"),
    ("patch_failed_ids", "patch_failed"),
    ("base_failed_ids", "base_failed"),
    ("empty_patch_ids", "empty_patch"),
    ("error_ids", "error"),
];

pub(super) fn read_report(
    path: &Path,
    value: serde_json::Value,
    name: String,
) -> Result<Submission> {
    let malformed = |message: String| ScoreError::Malformed {
        path: path.to_path_buf(),
        line: 1,
        message,
    };
    let report: Report =
        serde_json::from_value(value).map_err(|e| malformed(format!("not a GSO report: {e}")))?;
    for required in [
        "completed_ids",
        "passed_ids",
        "opt_base_ids",
        "opt_commit_ids",
    ] {
        if !report.instance_sets.contains_key(required) {
            return Err(malformed(format!(
                "instance_sets has no {required:?}; a GSO report lists completed_ids, passed_ids, \
                 opt_base_ids and opt_commit_ids"
            )));
        }
    }
    let set = |key: &str| -> Result<BTreeSet<&str>> {
        let list = report
            .instance_sets
            .get(key)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let mut out = BTreeSet::new();
        for id in list {
            if !out.insert(id.as_str()) {
                return Err(malformed(format!("instance_sets.{key} lists {id:?} twice")));
            }
        }
        Ok(out)
    };
    let opt_base = set("opt_base_ids")?;
    let opt_commit = set("opt_commit_ids")?;
    let mut all: BTreeSet<&str> = BTreeSet::new();
    for list in report.instance_sets.values() {
        all.extend(list.iter().map(String::as_str));
    }
    let mut status_of: BTreeMap<&str, &str> = BTreeMap::new();
    for (key, status) in STATUS_SETS {
        for id in set(key)? {
            status_of.entry(id).or_insert(status);
        }
    }
    for (id, stats) in &report.opt_stats {
        if !all.contains(id.as_str()) {
            return Err(malformed(format!(
                "opt_stats has {id:?}, which no instance set lists"
            )));
        }
        if let Some(m) = &stats.per_test_means {
            if m.base.len() != m.patch.len() || m.base.len() != m.commit.len() || m.base.is_empty()
            {
                return Err(malformed(format!(
                    "opt_stats.{id}.per_test_means has lists of different or zero lengths \
                     (base {}, patch {}, commit {})",
                    m.base.len(),
                    m.patch.len(),
                    m.commit.len()
                )));
            }
            for (what, list) in [
                ("base", &m.base),
                ("patch", &m.patch),
                ("commit", &m.commit),
            ] {
                for &x in list {
                    check_number(path, 1, &format!("opt_stats.{id}.per_test_means.{what}"), x)?;
                    if x == 0.0 {
                        return Err(malformed(format!(
                            "opt_stats.{id}.per_test_means.{what} holds a zero runtime"
                        )));
                    }
                }
            }
        }
    }
    if all.len() > report.summary.total_instances {
        return Err(malformed(format!(
            "the instance sets name {} instances but summary.total_instances is {}",
            all.len(),
            report.summary.total_instances
        )));
    }
    let tasks = all
        .iter()
        .map(|&id| {
            let per_test_means = report
                .opt_stats
                .get(id)
                .and_then(|s| s.per_test_means.as_ref())
                .map(|m| PerTestMeans {
                    base: m.base.clone(),
                    patch: m.patch.clone(),
                    commit: m.commit.clone(),
                });
            let status = status_of.get(id).copied().unwrap_or("incomplete");
            TaskResult {
                instance_id: id.to_owned(),
                correct: Some(status == "passed"),
                status: Some(status.to_owned()),
                per_test_means,
                official: Some(OfficialVerdict {
                    opt_base: Some(opt_base.contains(id)),
                    opt_commit: Some(opt_commit.contains(id)),
                    speedup_ratio: None,
                }),
                ..TaskResult::default()
            }
        })
        .collect::<Vec<_>>();
    let mut official_summary: BTreeMap<String, f64> = report
        .summary
        .rest
        .iter()
        .filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x)))
        .collect();
    official_summary.insert(
        "total_instances".into(),
        report.summary.total_instances as f64,
    );
    Ok(Submission {
        name,
        path: path.to_path_buf(),
        format: Format::GsoReport,
        tasks,
        total_instances: Some(report.summary.total_instances),
        official_score: report.summary.score,
        official_summary,
        measurements: Vec::new(),
    })
}

/// Reads a GSO `manifest.json`: model name → official score.
pub(super) fn read_manifest(
    path: &Path,
    value: &serde_json::Value,
) -> Result<BTreeMap<String, f64>> {
    let models = value
        .get("models")
        .and_then(|m| m.as_object())
        .ok_or_else(|| ScoreError::Malformed {
            path: path.to_path_buf(),
            line: 1,
            message: "a GSO manifest has an object \"models\"".into(),
        })?;
    let mut scores = BTreeMap::new();
    for (model, entry) in models {
        let score = entry
            .pointer("/summary/score")
            .and_then(|s| s.as_f64())
            .ok_or_else(|| ScoreError::Malformed {
                path: path.to_path_buf(),
                line: 1,
                message: format!("models.{model}.summary.score is missing or not a number"),
            })?;
        scores.insert(model.clone(), score);
    }
    Ok(scores)
}
