//! GSO (SPEC 4.3): an instance is opt_commit when the patch passes, is faster than base by a rounded
//! geometric-mean speedup >= 1.2, and keeps a harmonic-mean speedup over the reference above 0.95;
//! opt@1 = round(100 · #opt_commit / N, 2).

use super::{Params, Rule, ScoreRow, round_half_even, swefficiency, task_at, total_of};
use crate::error::{Result, ScoreError};
use crate::input::{Format, Submission};
use etip_core::results::{PerTestMeans, TaskResult};
use serde::Serialize;
use serde_json::json;

/// GSO's threshold on the rounded geometric-mean speedup over base.
pub const OPT_BASE_THRESHOLD: f64 = 1.2;
/// GSO's threshold on the harmonic-mean speedup over the reference (strictly above).
pub const OPT_COMMIT_THRESHOLD: f64 = 0.95;

/// GSO's verdict on one instance, recomputed from per-test means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GsoTaskVerdict {
    /// Arithmetic mean of the per-test base means.
    pub base_mean: f64,
    /// Arithmetic mean of the per-test patch means.
    pub patch_mean: f64,
    /// Geometric mean over tests of base_i / patch_i.
    pub gm_speedup_patch_base: f64,
    /// Harmonic mean over tests of commit_i / patch_i.
    pub hm_speedup_patch_commit: f64,
    /// base_mean > patch_mean and round(gm, 1) >= 1.2.
    pub opt_base: bool,
    /// opt_base and hm > 0.95.
    pub opt_commit: bool,
}

/// Recomputes opt_base / opt_commit from per-test means (before the correctness gate).
pub fn gso_task_verdict(m: &PerTestMeans) -> Option<GsoTaskVerdict> {
    let n = m.base.len();
    if n == 0 || m.patch.len() != n || m.commit.len() != n {
        return None;
    }
    let nf = n as f64;
    let base_mean = m.base.iter().sum::<f64>() / nf;
    let patch_mean = m.patch.iter().sum::<f64>() / nf;
    let log_sum: f64 = m.base.iter().zip(&m.patch).map(|(b, p)| (b / p).ln()).sum();
    let gm = (log_sum / nf).exp();
    let inv_sum: f64 = m.commit.iter().zip(&m.patch).map(|(c, p)| p / c).sum();
    let hm = nf / inv_sum;
    let opt_base = base_mean > patch_mean && round_half_even(gm, 1) >= OPT_BASE_THRESHOLD;
    Some(GsoTaskVerdict {
        base_mean,
        patch_mean,
        gm_speedup_patch_base: gm,
        hm_speedup_patch_commit: hm,
        opt_base,
        opt_commit: opt_base && hm > OPT_COMMIT_THRESHOLD,
    })
}

/// Per-test means of a task: given directly, or the means of its test runs (all three versions).
fn means_of(task: &TaskResult) -> Option<PerTestMeans> {
    if let Some(m) = &task.per_test_means {
        return Some(m.clone());
    }
    if task.tests.is_empty() {
        return None;
    }
    let mean = |xs: &[f64]| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
    let mut m = PerTestMeans::default();
    for t in &task.tests {
        m.base.push(mean(&t.base)?);
        m.patch.push(mean(&t.patched)?);
        m.commit.push(mean(&t.reference)?);
    }
    Some(m)
}

pub(super) fn score(sub: &Submission, params: &Params) -> Result<ScoreRow> {
    let n = total_of(sub, params)?;
    let mut details = serde_json::Map::new();
    let (opt_commit, opt_base, method) = if sub.format == Format::SwefficiencyCsv {
        // SWE-fficiency outputs carry one speedup per task, not per-test means: apply the GSO-style gate
        // of SPEC 5 (success iff correct and SR >= threshold).
        let srs = swefficiency::speedup_ratios(sub)?;
        let passed = sub
            .tasks
            .iter()
            .zip(&srs)
            .filter(|(t, sr)| t.correct == Some(true) && **sr >= params.gso_sr_threshold)
            .count();
        details.insert("sr_threshold".into(), json!(params.gso_sr_threshold));
        (
            passed,
            None,
            format!(
                "GSO-style gate on SWE-fficiency outputs: correct and SR >= {}",
                params.gso_sr_threshold
            ),
        )
    } else {
        let mut opt_commit = 0usize;
        let mut opt_base = 0usize;
        let mut recomputed = 0usize;
        let mut from_official = 0usize;
        let mut incorrect_without_runs = 0usize;
        let mut disagreements = Vec::new();
        for (i, task) in sub.tasks.iter().enumerate() {
            let correct = task.correct == Some(true);
            let official = task.official.as_ref();
            let (b, c) = match means_of(task).as_ref().and_then(gso_task_verdict) {
                Some(v) => {
                    recomputed += 1;
                    let (b, c) = (correct && v.opt_base, correct && v.opt_commit);
                    if let Some(o) = official
                        && (o.opt_base.is_some_and(|x| x != b)
                            || o.opt_commit.is_some_and(|x| x != c))
                    {
                        disagreements.push(task.instance_id.clone());
                    }
                    (b, c)
                }
                None => match official.and_then(|o| o.opt_base.zip(o.opt_commit)) {
                    Some((b, c)) => {
                        from_official += 1;
                        (correct && b, correct && c)
                    }
                    // An incorrect patch is never opt (GSO's harness: a failed equivalence
                    // check), whatever it would time like; `etip eval` records no runs for one
                    // that failed before the rounds.
                    None if task.correct == Some(false) => {
                        incorrect_without_runs += 1;
                        (false, false)
                    }
                    None => {
                        return Err(ScoreError::NotApplicable {
                            submission: sub.name.clone(),
                            rule: Rule::Gso.name(),
                            why: format!(
                                "{} has neither per-test means (or base/patched/reference runs) nor \
                                 an official opt verdict",
                                task_at(sub, i)
                            ),
                        });
                    }
                },
            };
            opt_base += usize::from(b);
            opt_commit += usize::from(c);
        }
        details.insert("recomputed_from_means".into(), json!(recomputed));
        details.insert("from_official_verdict".into(), json!(from_official));
        details.insert(
            "incorrect_without_runs".into(),
            json!(incorrect_without_runs),
        );
        details.insert("disagreements".into(), json!(disagreements));
        (
            opt_commit,
            Some(opt_base),
            format!(
                "opt@1: {recomputed} verdicts recomputed from per-test means, {from_official} taken from \
                 the report's instance sets, {} disagreements",
                disagreements.len()
            ),
        )
    };
    if let Some(b) = opt_base {
        details.insert("opt_base".into(), json!(b));
    }
    details.insert("opt_commit".into(), json!(opt_commit));
    let n_correct = sub.tasks.iter().filter(|t| t.correct == Some(true)).count();
    Ok(ScoreRow {
        submission: sub.name.clone(),
        rule: Rule::Gso,
        score: round_half_even(100.0 * opt_commit as f64 / n as f64, 2),
        n_tasks: sub.tasks.len(),
        total_instances: n,
        n_correct,
        n_success: opt_commit,
        method,
        official_score: None,
        matches_official: None,
        details,
    })
}
