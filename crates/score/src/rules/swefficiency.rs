//! SWE-fficiency (SPEC 4.2): SR = credited speedup / gold speedup, aggregated by a harmonic mean with
//! every SR floored at 0.001.

use super::{Params, Rule, ScoreRow, task_at, total_of};
use crate::clip::quote;
use crate::error::{Result, ScoreError};
use crate::input::Submission;
use etip_records::results::TaskResult;
use serde_json::json;

/// SWE-fficiency's floor on each SR inside the harmonic mean.
pub const SR_FLOOR: f64 = 0.001;

/// Harmonic mean of `values`, each floored at `floor`, over `n` tasks (tasks beyond `values.len()` are
/// not counted in the sum: pass `values.len()` unless the caller decided otherwise).
pub fn harmonic_mean_floored(values: &[f64], floor: f64) -> f64 {
    let sum: f64 = values.iter().map(|&v| 1.0 / v.max(floor)).sum();
    values.len() as f64 / sum
}

/// Per-task (measured speedup, gold speedup), from the task's figures or computed from its test runs:
/// speedup = Σ_t mean(base_t) / Σ_t mean(patched_t); gold = Σ_t mean(base_t) / Σ_t mean(reference_t).
pub fn speedups_of(task: &TaskResult) -> (Option<f64>, Option<f64>) {
    if task.speedup.is_some() || task.gold_speedup.is_some() || task.tests.is_empty() {
        return (task.speedup, task.gold_speedup);
    }
    let total = |f: fn(&etip_records::results::TestRuns) -> &Vec<f64>| -> Option<f64> {
        task.tests.iter().map(|t| mean(f(t))).sum::<Option<f64>>()
    };
    let base = total(|t| &t.base);
    let patched = total(|t| &t.patched);
    let reference = total(|t| &t.reference);
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    (ratio(base, patched), ratio(base, reference))
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// SR of every task, as SWE-fficiency credits it (incorrect → 1 / gold).
pub(crate) fn speedup_ratios(sub: &Submission) -> Result<Vec<f64>> {
    sub.tasks
        .iter()
        .enumerate()
        .map(|(i, task)| {
            let missing = |what: &str| ScoreError::NotApplicable {
                submission: sub.name.clone(),
                rule: Rule::Swefficiency.name(),
                why: format!(
                    "{} has no {what}{} (needs correct, speedup and gold_speedup, or test runs of \
                     base, patched and reference)",
                    task_at(sub, i),
                    empty_runs(task)
                ),
            };
            let correct = task.correct.ok_or_else(|| missing("correctness"))?;
            let (speedup, gold) = speedups_of(task);
            let gold = gold.ok_or_else(|| missing("gold speedup"))?;
            let credited = if correct {
                speedup.ok_or_else(|| missing("measured speedup"))?
            } else {
                1.0
            };
            Ok(credited / gold)
        })
        .collect()
}

/// Which runtimes of a task's tests are empty, for errors: `: test "t" has no reference runtimes`.
fn empty_runs(task: &TaskResult) -> String {
    task.tests
        .iter()
        .find_map(|t| {
            [
                ("base", &t.base),
                ("patched", &t.patched),
                ("reference", &t.reference),
            ]
            .into_iter()
            .find(|(_, runs)| runs.is_empty())
            .map(|(side, _)| format!(": test {} has no {side} runtimes", quote(&t.name)))
        })
        .unwrap_or_default()
}

pub(super) fn score(sub: &Submission, params: &Params) -> Result<ScoreRow> {
    let srs = speedup_ratios(sub)?;
    let n = total_of(sub, params)?;
    if n != srs.len() {
        return Err(ScoreError::NotApplicable {
            submission: sub.name.clone(),
            rule: Rule::Swefficiency.name(),
            why: format!(
                "{} of the benchmark's {n} tasks are missing; SWE-fficiency scores an unsubmitted task as \
                 incorrect (SR = 1/gold), which needs its gold speedup: give every task",
                n - srs.len()
            ),
        });
    }
    let hm = harmonic_mean_floored(&srs, params.floor);
    if !(hm.is_finite() && hm > 0.0) {
        return Err(ScoreError::NotApplicable {
            submission: sub.name.clone(),
            rule: Rule::Swefficiency.name(),
            why: format!(
                "the harmonic mean is {hm}: the sum of 1 / max(SR, {}) overflows; use a larger \
                 --floor",
                params.floor
            ),
        });
    }
    let nf = n as f64;
    let mut incorrect = 0usize;
    let mut correct_no_speedup = 0usize;
    let mut speedup_below_human = 0usize;
    let mut human_or_better = 0usize;
    for (task, &sr) in sub.tasks.iter().zip(&srs) {
        let credited = task.credited_speedup().or_else(|| speedups_of(task).0);
        match (task.correct, credited) {
            (Some(false), _) | (None, _) => incorrect += 1,
            (Some(true), Some(s)) if s <= 1.0 => correct_no_speedup += 1,
            (Some(true), _) if sr < 1.0 => speedup_below_human += 1,
            (Some(true), _) => human_or_better += 1,
        }
    }
    let prop = |k: usize| super::round_half_even(k as f64 / nf, 4);
    let mut details = serde_json::Map::new();
    details.insert("floor".into(), json!(params.floor));
    details.insert("proportion_incorrect".into(), json!(prop(incorrect)));
    details.insert(
        "proportion_correct_but_no_speedup".into(),
        json!(prop(correct_no_speedup)),
    );
    details.insert(
        "proportion_correct_with_speedup_but_human_no_speedup".into(),
        json!(prop(speedup_below_human)),
    );
    details.insert(
        "proportion_human_speedup_or_better".into(),
        json!(prop(human_or_better)),
    );
    Ok(ScoreRow {
        submission: sub.name.clone(),
        rule: Rule::Swefficiency,
        score: hm,
        n_tasks: sub.tasks.len(),
        total_instances: n,
        n_correct: sub.tasks.len() - incorrect,
        n_success: human_or_better,
        method: format!("harmonic mean of SR floored at {}", params.floor),
        official_score: None,
        matches_official: None,
        details,
    })
}
