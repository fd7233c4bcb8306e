//! GSO (SPEC 4.3): an instance is opt_commit when the patch passes, is faster than base by a rounded
//! geometric-mean speedup >= 1.2, and keeps a harmonic-mean speedup over the reference above 0.95;
//! opt@1 = round(100 · #opt_commit / N, 2).

use super::{Params, Rule, ScoreRow, round_half_even, swefficiency, task_at, total_of};
use crate::error::{Result, ScoreError};
use crate::input::{Format, Submission};
use etip_records::results::{PerTestMeans, TaskResult};
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
pub(super) fn means_of(task: &TaskResult) -> Option<PerTestMeans> {
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

/// Where a task's opt verdict came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OptSource {
    /// Recomputed from the per-test means (or runs).
    Recomputed,
    /// The report's instance sets (no means to recompute from).
    Official,
    /// An incorrect patch without runs: never opt.
    IncorrectWithoutRuns,
}

/// One task's GSO verdict after the correctness gate.
#[derive(Debug, Clone, Copy)]
struct TaskOpt {
    opt_base: bool,
    opt_commit: bool,
    source: OptSource,
    /// The recomputed verdict differs from the report's.
    disagrees: bool,
}

/// The GSO verdict of task `i` of `sub` (GSO report or etip task results).
fn task_opt(sub: &Submission, i: usize) -> Result<TaskOpt> {
    let task = &sub.tasks[i];
    let correct = task.correct == Some(true);
    let official = task.official.as_ref();
    if let Some(v) = means_of(task).as_ref().and_then(gso_task_verdict) {
        let (b, c) = (correct && v.opt_base, correct && v.opt_commit);
        let disagrees = official.is_some_and(|o| {
            o.opt_base.is_some_and(|x| x != b) || o.opt_commit.is_some_and(|x| x != c)
        });
        return Ok(TaskOpt {
            opt_base: b,
            opt_commit: c,
            source: OptSource::Recomputed,
            disagrees,
        });
    }
    match official.and_then(|o| o.opt_base.zip(o.opt_commit)) {
        Some((b, c)) => Ok(TaskOpt {
            opt_base: correct && b,
            opt_commit: correct && c,
            source: OptSource::Official,
            disagrees: false,
        }),
        // An incorrect patch is never opt (GSO's harness: a failed equivalence check), whatever
        // it would time like; `etip eval` records no runs for one that failed before the rounds.
        None if task.correct == Some(false) => Ok(TaskOpt {
            opt_base: false,
            opt_commit: false,
            source: OptSource::IncorrectWithoutRuns,
            disagrees: false,
        }),
        None => Err(ScoreError::NotApplicable {
            submission: sub.name.clone(),
            rule: Rule::Gso.name(),
            why: format!(
                "{} has neither per-test means (or base/patched/reference runs) nor an official \
                 opt verdict",
                task_at(sub, i)
            ),
        }),
    }
}

/// Compares run labels as GSO's `natural_sort_key` does: digit runs by value, the rest as text
/// (`run2` before `run10`).
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn parts(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(&pb) {
        let o = match (x.0, y.0) {
            (true, true) => {
                let (tx, ty) = (x.1.trim_start_matches('0'), y.1.trim_start_matches('0'));
                tx.len().cmp(&ty.len()).then_with(|| tx.cmp(ty))
            }
            _ => x.1.to_lowercase().cmp(&y.1.to_lowercase()),
        };
        if o != std::cmp::Ordering::Equal {
            return o;
        }
    }
    pa.len().cmp(&pb.len()).then_with(|| a.cmp(b))
}

/// The runs of each model among `subs`, in first-seen order: a submission's model is its tasks'
/// `model` (an `etip eval` output), else its name up to an `@` (GSO reports, one per run, named
/// `--name model@run`); its run label is its tasks' `run_id`, else what follows the `@`, else its
/// name.
pub fn runs_by_model(subs: &[Submission]) -> Vec<(String, Vec<(String, &Submission)>)> {
    let mut out: Vec<(String, Vec<(String, &Submission)>)> = Vec::new();
    for sub in subs {
        let first = sub.tasks.first();
        let (named_model, named_run) = match sub.name.rsplit_once('@') {
            Some((m, r)) if !m.is_empty() && !r.is_empty() => (m.to_string(), r.to_string()),
            _ => (sub.name.clone(), sub.name.clone()),
        };
        let model = first.and_then(|t| t.model.clone()).unwrap_or(named_model);
        let label = first.and_then(|t| t.run_id.clone()).unwrap_or(named_run);
        match out.iter_mut().find(|(m, _)| *m == model) {
            Some((_, runs)) => runs.push((label, sub)),
            None => out.push((model, vec![(label, sub)])),
        }
    }
    out
}

/// GSO's opt@k for one model: its runs in natural order of their labels, the first `k` of them;
/// an instance counts when it is opt_commit in any of those runs (GSO's `opt_at_k.py` merges the
/// reports' `opt_commit_ids` the same way). `runs` are (run label, submission); N is
/// `--total-instances`, else the largest N of the runs, else the instances they hold together.
pub fn opt_at_k(
    model: &str,
    runs: &[(String, &Submission)],
    k: usize,
    params: &Params,
) -> Result<ScoreRow> {
    params.validate()?;
    if k == 0 {
        return Err(ScoreError::InvalidParameter(
            "--k must be at least 1".into(),
        ));
    }
    if runs.len() < k {
        return Err(ScoreError::InvalidParameter(format!(
            "opt@{k} of {model} needs {k} runs, and the inputs hold {} ({})",
            runs.len(),
            runs.iter()
                .map(|(l, _)| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut sorted: Vec<&(String, &Submission)> = runs.iter().collect();
    sorted.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    sorted.truncate(k);
    let mut instances = std::collections::BTreeSet::new();
    let mut opt = std::collections::BTreeSet::new();
    let mut correct = std::collections::BTreeSet::new();
    let mut per_run = serde_json::Map::new();
    let mut n = params.total_instances;
    for (label, sub) in &sorted {
        if sub.format == Format::SwefficiencyCsv {
            return Err(ScoreError::NotApplicable {
                submission: sub.name.clone(),
                rule: Rule::Gso.name(),
                why: "opt@k needs GSO's per-instance opt verdicts; a SWE-fficiency report has \
                      one speedup per task"
                    .into(),
            });
        }
        let mut run_opt = 0usize;
        for (i, task) in sub.tasks.iter().enumerate() {
            instances.insert(task.instance_id.clone());
            if task.correct == Some(true) {
                correct.insert(task.instance_id.clone());
            }
            if task_opt(sub, i)?.opt_commit {
                opt.insert(task.instance_id.clone());
                run_opt += 1;
            }
        }
        per_run.insert(label.clone(), json!(run_opt));
        if params.total_instances.is_none() {
            n = n.max(sub.total_instances);
        }
    }
    let n = n.unwrap_or(instances.len()).max(1);
    if n < instances.len() {
        return Err(ScoreError::InvalidParameter(format!(
            "{model}: the benchmark size N = {n} is smaller than the {} instances of its runs",
            instances.len()
        )));
    }
    let mut details = serde_json::Map::new();
    details.insert("k".into(), json!(k));
    details.insert(
        "runs".into(),
        json!(sorted.iter().map(|(l, _)| l.clone()).collect::<Vec<_>>()),
    );
    details.insert(
        "opt_commit_per_run".into(),
        serde_json::Value::Object(per_run),
    );
    details.insert("opt_commit".into(), json!(opt.len()));
    Ok(ScoreRow {
        submission: model.to_string(),
        rule: Rule::Gso,
        score: round_half_even(100.0 * opt.len() as f64 / n as f64, 2),
        n_tasks: instances.len(),
        total_instances: n,
        n_correct: correct.len(),
        n_success: opt.len(),
        method: format!(
            "opt@{k}: an instance counts when any of the first {k} runs (natural order of run \
             ids) is opt_commit"
        ),
        official_score: None,
        matches_official: None,
        details,
    })
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
        for i in 0..sub.tasks.len() {
            let v = task_opt(sub, i)?;
            match v.source {
                OptSource::Recomputed => recomputed += 1,
                OptSource::Official => from_official += 1,
                OptSource::IncorrectWithoutRuns => incorrect_without_runs += 1,
            }
            if v.disagrees {
                disagreements.push(sub.tasks[i].instance_id.clone());
            }
            opt_base += usize::from(v.opt_base);
            opt_commit += usize::from(v.opt_commit);
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
