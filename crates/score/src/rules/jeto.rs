//! JETO (SPEC 3.1, 4.4): per test class, the paired one-sided binomial sign test with a minimum
//! improvement; a patch succeeds when it is correct and the test on per-round totals over the eligible
//! classes finds the patched version significantly faster.

use super::{Params, Rule, ScoreRow, total_of};
use crate::error::{Result, ScoreError};
use crate::input::Submission;
use etip_core::results::TaskResult;
use etip_stats::{Direction, SignTestConfig, SignTestVerdict};
use serde::Serialize;
use serde_json::json;

/// The sign-test verdicts of one task.
#[derive(Debug, Clone, Serialize)]
pub struct JetoTaskVerdict {
    /// Per eligible test class: (name, verdict).
    pub classes: Vec<(String, SignTestVerdict)>,
    /// Classes left out because they failed or were not timed in every round of both versions.
    pub ineligible: Vec<String>,
    /// Verdict on per-round totals over the eligible classes (None when no class is eligible).
    pub overall: Option<SignTestVerdict>,
}

/// Applies the sign test to every eligible class of a task and to the per-round totals.
pub fn jeto_task_verdict(
    task: &TaskResult,
    cfg: &SignTestConfig,
) -> Result<JetoTaskVerdict, etip_stats::StatsError> {
    let mut classes = Vec::new();
    let mut ineligible = Vec::new();
    let mut totals_o: Vec<f64> = Vec::new();
    let mut totals_p: Vec<f64> = Vec::new();
    let rounds = task.tests.iter().map(|t| t.base.len()).max().unwrap_or(0);
    for test in &task.tests {
        if !test.passed || test.base.len() != rounds || test.patched.len() != rounds || rounds == 0
        {
            ineligible.push(test.name.clone());
            continue;
        }
        classes.push((
            test.name.clone(),
            etip_stats::sign_test(&test.base, &test.patched, cfg)?,
        ));
        if totals_o.is_empty() {
            totals_o = vec![0.0; rounds];
            totals_p = vec![0.0; rounds];
        }
        for k in 0..rounds {
            totals_o[k] += test.base[k];
            totals_p[k] += test.patched[k];
        }
    }
    let overall = if classes.is_empty() {
        None
    } else {
        Some(etip_stats::sign_test(&totals_o, &totals_p, cfg)?)
    };
    Ok(JetoTaskVerdict {
        classes,
        ineligible,
        overall,
    })
}

pub(super) fn score(sub: &Submission, params: &Params) -> Result<ScoreRow> {
    let n = total_of(sub, params)?;
    let mut success = 0usize;
    let mut correct = 0usize;
    let mut detector_classes = 0usize;
    for task in &sub.tasks {
        if task.tests.is_empty() {
            return Err(ScoreError::NotApplicable {
                submission: sub.name.clone(),
                rule: Rule::Jeto.name(),
                why: format!(
                    "task {} has no test runs; the JETO rule needs per-class times of both versions, \
                     paired by round",
                    task.instance_id
                ),
            });
        }
        if task.correct != Some(true) {
            continue;
        }
        correct += 1;
        let verdict =
            jeto_task_verdict(task, &params.sign).map_err(|source| ScoreError::Stats {
                context: format!("{}: task {}", sub.name, task.instance_id),
                source,
            })?;
        detector_classes += verdict
            .classes
            .iter()
            .filter(|(_, v)| v.direction == Direction::PatchedFaster)
            .count();
        if verdict
            .overall
            .is_some_and(|v| v.direction == Direction::PatchedFaster)
        {
            success += 1;
        }
    }
    let mut details = serde_json::Map::new();
    details.insert("min_impr".into(), json!(params.sign.min_impr));
    details.insert("p_val".into(), json!(params.sign.p_val));
    details.insert("detector_classes".into(), json!(detector_classes));
    Ok(ScoreRow {
        submission: sub.name.clone(),
        rule: Rule::Jeto,
        score: 100.0 * success as f64 / n as f64,
        n_tasks: sub.tasks.len(),
        total_instances: n,
        n_correct: correct,
        n_success: success,
        method: format!(
            "correct and significantly faster overall (sign test, min_impr {}, p < {})",
            params.sign.min_impr, params.sign.p_val
        ),
        official_score: None,
        matches_official: None,
        details,
    })
}
