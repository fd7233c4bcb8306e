//! JETO (SPEC 3.1, 4.4): per test class, the paired one-sided binomial sign test with a minimum
//! improvement; a patch succeeds when it is correct and the test on per-round totals over the eligible
//! classes finds the patched version significantly faster. An incorrect patch fails and needs no
//! times.
//!
//! On a `measurements.jsonl` of `etip measure`, the tasks are the measurements converted by
//! `Measurement::to_task_result` (correct = executable; the classes that are not eligible — too fast
//! to time, failed, missing in some round — are not passed, so they are left out as the measurement
//! left them out), and the score's details compare each task's verdict with the measurement's own
//! `overall.sign_test.direction` (`measured_verdicts`): the two agree whenever the measurement used
//! JETO's literal timer rule, fixed rounds and the same `min_impr` and `p_val`.

use super::{Params, Rule, ScoreRow, task_at, total_of};
use crate::error::{Result, ScoreError};
use crate::input::Submission;
use etip_records::measure::Measurement;
use etip_records::results::TaskResult;
use etip_stats::{Direction, SignTestConfig, SignTestRecord, TimerRule, jeto_verdict};
use serde::Serialize;
use serde_json::json;

/// The sign-test verdicts of one task.
#[derive(Debug, Clone, Serialize)]
pub struct JetoTaskVerdict {
    /// Per eligible test class: (name, verdict).
    pub classes: Vec<(String, SignTestRecord)>,
    /// Classes left out because they failed or were not timed in every round of both versions.
    pub ineligible: Vec<String>,
    /// Verdict on per-round totals over the eligible classes (None when no class is eligible).
    pub overall: Option<SignTestRecord>,
}

/// JETO's verdict of a task ([`etip_stats::jeto_verdict`], the one `etip measure` applies): the
/// sign test of every eligible class and of the per-round totals, under JETO's literal timer rule
/// at fixed rounds. A class is eligible when it passed and has times of both versions in every
/// round. O(n log n) in the rounds: beyond [`super::EXACT_SIGN_ROUNDS`] rounds `etip_stats` takes
/// the binomial tail from Loader's saddle-point expansion (relative error below 1e-12) instead of
/// the exact sum.
pub fn jeto_task_verdict(
    task: &TaskResult,
    cfg: &SignTestConfig,
) -> Result<JetoTaskVerdict, etip_stats::StatsError> {
    let rounds = task.tests.iter().map(|t| t.base.len()).max().unwrap_or(0);
    let (eligible, ineligible): (Vec<_>, Vec<_>) = task.tests.iter().partition(|test| {
        test.passed && test.base.len() == rounds && test.patched.len() == rounds && rounds > 0
    });
    let series: Vec<(&[f64], &[f64])> = eligible
        .iter()
        .map(|t| (t.base.as_slice(), t.patched.as_slice()))
        .collect();
    let verdict = jeto_verdict(&series, cfg, TimerRule::Literal, None)?;
    Ok(JetoTaskVerdict {
        classes: eligible
            .iter()
            .map(|t| t.name.clone())
            .zip(verdict.classes)
            .collect(),
        ineligible: ineligible.iter().map(|t| t.name.clone()).collect(),
        overall: verdict.overall,
    })
}

pub(super) fn score(sub: &Submission, params: &Params) -> Result<ScoreRow> {
    let n = total_of(sub, params)?;
    let mut success = 0usize;
    let mut correct = 0usize;
    let mut detector_classes = 0usize;
    // The overall verdict of each task (None when incorrect or without an eligible class).
    let mut overall: Vec<Option<Direction>> = Vec::with_capacity(sub.tasks.len());
    for (i, task) in sub.tasks.iter().enumerate() {
        // An incorrect patch fails whatever its times, and may have none (a build that failed).
        if task.correct != Some(true) {
            overall.push(None);
            continue;
        }
        if task.tests.is_empty() {
            return Err(ScoreError::NotApplicable {
                submission: sub.name.clone(),
                rule: Rule::Jeto.name(),
                why: format!(
                    "{} has no test runs; the JETO rule needs per-class times of both versions, \
                     paired by round",
                    task_at(sub, i)
                ),
            });
        }
        correct += 1;
        let verdict =
            jeto_task_verdict(task, &params.sign).map_err(|source| ScoreError::Stats {
                context: format!("{}: {}", sub.name, task_at(sub, i)),
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
        overall.push(verdict.overall.map(|v| v.direction));
    }
    let mut details = serde_json::Map::new();
    details.insert("min_impr".into(), json!(params.sign.min_impr));
    details.insert("p_val".into(), json!(params.sign.p_val));
    details.insert("detector_classes".into(), json!(detector_classes));
    let mut method = format!(
        "correct and significantly faster overall (sign test, min_impr {}, p < {})",
        params.sign.min_impr, params.sign.p_val
    );
    if !sub.measurements.is_empty() {
        method.push_str(
            "; from etip measurements: correct = executable, eligible classes only (too_fast and \
             excluded classes left out)",
        );
        let aa = sub.measurements.iter().filter(|m| m.aa).count();
        if aa > 0 {
            details.insert("aa_measurements".into(), json!(aa));
            method.push_str(&format!(
                "; {aa} A/A measurement(s), both sides the original version: their successes are \
                 false positives"
            ));
        }
        details.insert(
            "measured_verdicts".into(),
            compare_with_measurements(sub, &overall, params),
        );
    }
    Ok(ScoreRow {
        submission: sub.name.clone(),
        rule: Rule::Jeto,
        score: 100.0 * success as f64 / n as f64,
        n_tasks: sub.tasks.len(),
        total_instances: n,
        n_correct: correct,
        n_success: success,
        method,
        official_score: None,
        matches_official: None,
        details,
    })
}

fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::PatchedFaster => "patched_faster",
        Direction::OriginalFaster => "original_faster",
        Direction::NotSignificant => "not_significant",
    }
}

/// Why a measurement's own overall verdict may differ from the JETO rule's on the same times: the
/// measurement's protocol differs from the literal, fixed-round rule with the scoring parameters.
fn protocol_differences(m: &Measurement, params: &Params) -> Vec<String> {
    let mut why = Vec::new();
    if m.protocol.timer_rule != "literal" {
        why.push(format!(
            "timer_rule {} (pairs at or below the timer resolution are ties; JETO's rule is literal)",
            m.protocol.timer_rule
        ));
    }
    let stopped = m
        .overall
        .as_ref()
        .and_then(|o| o.sign_test.as_ref())
        .and_then(|s| s.stopped_at);
    let adaptive = m.protocol.max_rounds.is_some_and(|x| x > m.protocol.rounds);
    if let Some(at) = stopped {
        why.push(format!(
            "adaptive rounds: the overall verdict was judged at round {at} under a sequential design, \
             JETO's rule tests all {} rounds at fixed n",
            m.rounds
        ));
    } else if adaptive {
        why.push("adaptive rounds (a sequential design)".to_string());
    }
    if m.protocol.min_impr != params.sign.min_impr {
        why.push(format!(
            "min_impr {} (scored with {})",
            m.protocol.min_impr, params.sign.min_impr
        ));
    }
    if m.protocol.p_val != params.sign.p_val {
        why.push(format!(
            "p_val {} (scored with {})",
            m.protocol.p_val, params.sign.p_val
        ));
    }
    why
}

/// Compares the JETO verdict of each task with the measurement's own `overall.sign_test.direction`.
/// They agree whenever the measurement used the literal timer rule, fixed rounds and the same
/// `min_impr` and `p_val` (`expected_to_agree`); a disagreement lists the protocol differences that
/// explain it.
fn compare_with_measurements(
    sub: &Submission,
    overall: &[Option<Direction>],
    params: &Params,
) -> serde_json::Value {
    let mut compared = 0usize;
    let mut agree = 0usize;
    let mut expected = 0usize;
    let mut disagree = Vec::new();
    for (m, jeto) in sub.measurements.iter().zip(overall) {
        let own = m
            .overall
            .as_ref()
            .and_then(|o| o.sign_test.as_ref())
            .map(|s| s.direction);
        let (own, jeto) = match (own, jeto) {
            (None, None) => continue,
            (own, jeto) => (
                own.map_or("none", direction_name),
                jeto.map_or("none", direction_name),
            ),
        };
        compared += 1;
        let why = protocol_differences(m, params);
        if why.is_empty() {
            expected += 1;
        }
        if own == jeto {
            agree += 1;
        } else {
            disagree.push(json!({
                "id": m.id,
                "measured": own,
                "jeto": jeto,
                "causes": if why.is_empty() {
                    vec!["none: the protocol matches the rule, so the times or the verdict in the \
                          file were changed after measuring".to_string()]
                } else {
                    why
                },
            }));
        }
    }
    json!({
        "compared": compared,
        "agree": agree,
        "expected_to_agree": expected,
        "disagree": disagree,
    })
}
