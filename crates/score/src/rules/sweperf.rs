//! SWE-Perf (SPEC 4.1): per efficiency test, the minimum gain δ found by a Mann–Whitney search on
//! IQR-filtered runs; a task's δ is the mean over its tests; `performance = Σ δ / N`, reported in percent.
//!
//! On a `measurements.jsonl` of `etip measure`, a task counts when the ETIP is executable (every
//! test passed in every round of both versions), and its δ is the mean over the classes eligible for
//! verdicts: the classes too fast to time (`too_fast`) or missing in some round carry no usable
//! times and are left out, rather than failing the task.

use super::{Params, Rule, ScoreRow, task_at, total_of};
use crate::clip::quote;
use crate::error::{Result, ScoreError};
use crate::input::{Format, Submission};
use etip_records::results::{TaskResult, TestRuns};
use etip_stats::{DeltaConfig, sweperf_delta};
use serde_json::json;

/// δ of task `index`, or `None` when the task does not count (incorrect, or a test failed a run).
/// Only a correct task needs test runs.
pub(crate) fn task_delta(sub: &Submission, index: usize, params: &Params) -> Result<Option<f64>> {
    let task: &TaskResult = &sub.tasks[index];
    if task.correct != Some(true) {
        // An incorrect patch does not count, and may have no times (a build that failed).
        return Ok(None);
    }
    let measured = sub.format == Format::EtipMeasurements;
    if task.tests.is_empty() {
        return Err(ScoreError::NotApplicable {
            submission: sub.name.clone(),
            rule: Rule::Sweperf.name(),
            why: format!(
                "{} has no test runs; SWE-Perf needs the base and patched runtimes of every \
                 efficiency test",
                task_at(sub, index)
            ),
        });
    }
    let tests: Vec<&TestRuns> = if measured {
        // `passed` of a converted measurement means "eligible"; an executable ETIP had no failure.
        task.tests.iter().filter(|t| t.passed).collect()
    } else {
        if task.tests.iter().any(|t| !t.passed) {
            return Ok(None);
        }
        task.tests.iter().collect()
    };
    mean_delta(&tests, &params.delta).map_err(|(test, source)| ScoreError::Stats {
        context: format!("{}: {} test {}", sub.name, task_at(sub, index), quote(test)),
        source,
    })
}

/// The mean δ over `tests` (None when there is none); the error names the test whose search
/// failed.
pub(crate) fn mean_delta<'a>(
    tests: &[&'a TestRuns],
    cfg: &DeltaConfig,
) -> std::result::Result<Option<f64>, (&'a str, etip_stats::StatsError)> {
    if tests.is_empty() {
        return Ok(None);
    }
    let mut sum = 0.0;
    for test in tests {
        sum +=
            sweperf_delta(&test.base, &test.patched, cfg).map_err(|e| (test.name.as_str(), e))?;
    }
    Ok(Some(sum / tests.len() as f64))
}

pub(super) fn score(sub: &Submission, params: &Params) -> Result<ScoreRow> {
    let n = total_of(sub, params)?;
    let mut total = 0.0;
    let mut counted = 0usize;
    let mut positive = 0usize;
    for index in 0..sub.tasks.len() {
        if let Some(delta) = task_delta(sub, index, params)? {
            counted += 1;
            total += delta;
            positive += usize::from(delta > 0.0);
        }
    }
    let mut details = serde_json::Map::new();
    details.insert("sum_delta".into(), json!(total));
    details.insert("p_threshold".into(), json!(params.delta.p_threshold));
    details.insert("iqr_k".into(), json!(params.delta.iqr_k));
    Ok(ScoreRow {
        submission: sub.name.clone(),
        rule: Rule::Sweperf,
        score: 100.0 * total / n as f64,
        n_tasks: sub.tasks.len(),
        total_instances: n,
        n_correct: counted,
        n_success: positive,
        method: if sub.format == Format::EtipMeasurements {
            "100 · Σ δ / N with δ from the Mann–Whitney search on 1×IQR-filtered runs; from etip \
             measurements: executable ETIPs, δ over their eligible classes"
                .into()
        } else {
            "100 · Σ δ / N with δ from the Mann–Whitney search on 1×IQR-filtered runs".into()
        },
        official_score: None,
        matches_official: None,
        details,
    })
}
