//! GSO per-model reports (`summary`, `instance_sets`, `opt_stats`) and the leaderboard `manifest.json`.

use super::Format;
use super::Submission;
use super::check::{At, check_per_test_means};
use crate::clip::{QUOTE_CHARS, clip, foreign, quote};
use crate::error::{Result, ScoreError};
use etip_records::results::{OfficialVerdict, PerTestMeans, TaskResult};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The version of the GSO report format this reader knows (`schema_version`; reports without one
/// are read as this version).
pub const GSO_SCHEMA_VERSION: u64 = 1;

#[derive(Deserialize)]
struct Report {
    #[serde(default)]
    schema_version: Option<serde_json::Value>,
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

impl Means {
    fn to_means(&self) -> PerTestMeans {
        PerTestMeans {
            base: self.base.clone(),
            patch: self.patch.clone(),
            commit: self.commit.clone(),
        }
    }
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

/// The opt sets: each lists passed instances only.
const OPT_SETS: [&str; 3] = ["opt_base_ids", "opt_commit_ids", "opt_main_ids"];

pub(super) fn read_report(
    path: &Path,
    value: serde_json::Value,
    name: String,
) -> Result<Submission> {
    let at = At { path, line: 1 };
    let report: Report = serde_json::from_value(value)
        .map_err(|e| at.err(format!("not a GSO report: {}", foreign(e))))?;
    check_schema_version(at, report.schema_version.as_ref())?;
    let sets = InstanceSets::of(at, &report.instance_sets)?;
    check_opt_stats(at, &report, &sets)?;
    if sets.known.len() > report.summary.total_instances {
        return Err(at.err(format!(
            "the instance sets name {} instances but summary.total_instances is {}",
            sets.known.len(),
            report.summary.total_instances
        )));
    }
    let tasks: Vec<TaskResult> = sets
        .known
        .iter()
        .map(|&id| task(&report, &sets, id))
        .collect();
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
        lines: vec![1; tasks.len()],
        tasks,
        total_instances: Some(report.summary.total_instances),
        official_score: report.summary.score,
        official_summary,
        measurements: Vec::new(),
    })
}

/// `opt_stats` names instances of the report only, and their per-test means are runtimes whose
/// means and ratios the GSO rule can compute with.
fn check_opt_stats(at: At, report: &Report, sets: &InstanceSets) -> Result<()> {
    for (id, stats) in &report.opt_stats {
        if !sets.known.contains(id.as_str()) {
            return Err(at.err(format!(
                "opt_stats has {}, which no instance set lists",
                quote(id)
            )));
        }
        if let Some(m) = &stats.per_test_means {
            let what = format!("opt_stats.{}.per_test_means", quote(id));
            check_per_test_means(at, &what, &m.to_means())?;
        }
    }
    Ok(())
}

/// The task result of one instance of the report.
fn task(report: &Report, sets: &InstanceSets, id: &str) -> TaskResult {
    let per_test_means = report
        .opt_stats
        .get(id)
        .and_then(|s| s.per_test_means.as_ref())
        .map(Means::to_means);
    let status = sets.status_of.get(id).copied().unwrap_or("incomplete");
    TaskResult {
        instance_id: id.to_owned(),
        correct: Some(status == "passed"),
        status: Some(status.to_owned()),
        per_test_means,
        official: Some(OfficialVerdict {
            opt_base: Some(sets.list("opt_base_ids").contains(id)),
            opt_commit: Some(sets.list("opt_commit_ids").contains(id)),
            speedup_ratio: None,
        }),
        ..TaskResult::default()
    }
}

/// Refuses a `schema_version` other than [`GSO_SCHEMA_VERSION`].
fn check_schema_version(at: At, version: Option<&serde_json::Value>) -> Result<()> {
    match version {
        None => Ok(()),
        Some(v) if v.as_u64() == Some(GSO_SCHEMA_VERSION) => Ok(()),
        Some(v) => Err(at.err(format!(
            "schema_version {} of the GSO report is not supported; this etip reads version \
             {GSO_SCHEMA_VERSION}",
            clip(&v.to_string(), QUOTE_CHARS)
        ))),
    }
}

/// The instance sets of a report, checked for consistency.
struct InstanceSets<'a> {
    /// Each list as a set.
    lists: BTreeMap<&'a str, BTreeSet<&'a str>>,
    /// The instances of the report: `completed_ids` and every status set.
    known: BTreeSet<&'a str>,
    /// The status of each instance in a status set.
    status_of: BTreeMap<&'a str, &'static str>,
}

impl<'a> InstanceSets<'a> {
    /// Checks the lists: the required ones present, no id twice in a list, an id in at most one
    /// status set, the other sets within the report's instances, the opt sets within `passed_ids`
    /// and `opt_commit_ids` within `opt_base_ids`.
    fn of(at: At, sets: &'a BTreeMap<String, Vec<String>>) -> Result<InstanceSets<'a>> {
        for required in [
            "completed_ids",
            "passed_ids",
            "opt_base_ids",
            "opt_commit_ids",
        ] {
            if !sets.contains_key(required) {
                return Err(at.err(format!(
                    "instance_sets has no {required:?}; a GSO report lists completed_ids, \
                     passed_ids, opt_base_ids and opt_commit_ids"
                )));
            }
        }
        let mut lists = BTreeMap::new();
        for (key, list) in sets {
            let mut set = BTreeSet::new();
            for id in list {
                if !set.insert(id.as_str()) {
                    return Err(at.err(format!(
                        "instance_sets.{} lists {} twice",
                        clip(key, QUOTE_CHARS),
                        quote(id)
                    )));
                }
            }
            lists.insert(key.as_str(), set);
        }
        let mut known: BTreeSet<&str> = lists["completed_ids"].clone();
        let mut status_of: BTreeMap<&str, &'static str> = BTreeMap::new();
        let mut set_of: BTreeMap<&str, &str> = BTreeMap::new();
        for (key, status) in STATUS_SETS {
            for &id in lists.get(key).into_iter().flatten() {
                if let Some(first) = set_of.insert(id, key) {
                    return Err(at.err(format!(
                        "{} is in both {first} and {key}; an instance has one status",
                        quote(id)
                    )));
                }
                status_of.insert(id, status);
                known.insert(id);
            }
        }
        let out = InstanceSets {
            lists,
            known,
            status_of,
        };
        out.check_subsets(at)?;
        Ok(out)
    }

    fn check_subsets(&self, at: At) -> Result<()> {
        let is_status = |key: &str| STATUS_SETS.iter().any(|(k, _)| *k == key);
        for (&key, set) in &self.lists {
            if key == "completed_ids" || is_status(key) {
                continue;
            }
            let within = |id: &&str, of: &str| self.list(of).contains(id);
            let outside = if let Some(id) = set.iter().find(|id| !self.known.contains(**id)) {
                Some((
                    id,
                    "which neither completed_ids nor a status set (passed_ids, test_failed_ids, \
                     ...) lists",
                ))
            } else if OPT_SETS.contains(&key)
                && let Some(id) = set.iter().find(|id| !within(id, "passed_ids"))
            {
                Some((id, "which is not in passed_ids"))
            } else if key == "opt_commit_ids"
                && let Some(id) = set.iter().find(|id| !within(id, "opt_base_ids"))
            {
                Some((id, "which is not in opt_base_ids"))
            } else {
                None
            };
            if let Some((id, why)) = outside {
                return Err(at.err(format!(
                    "instance_sets.{} lists {}, {why}",
                    clip(key, QUOTE_CHARS),
                    quote(id)
                )));
            }
        }
        Ok(())
    }

    fn list(&self, key: &str) -> &BTreeSet<&'a str> {
        static EMPTY: BTreeSet<&str> = BTreeSet::new();
        self.lists.get(key).unwrap_or(&EMPTY)
    }
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
                message: format!(
                    "models.{}.summary.score is missing or not a number",
                    quote(model)
                ),
            })?;
        scores.insert(model.clone(), score);
    }
    Ok(scores)
}
