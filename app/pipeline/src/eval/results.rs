//! The outputs of an evaluation run — `results.jsonl` (every result of the run id, earlier calls'
//! and this one's, each with its figures under SWE-fficiency's, GSO's and SWE-Perf's rules beside
//! etip's category), `summary.json` and `report.html` — rewritten after every result, and the
//! state store that lets a re-run skip what is done.

use super::Records;
use crate::output::write as write_atomic;
use etip_core::category::Category;
use etip_records::results::TaskResult;
use std::collections::BTreeMap;
use std::path::Path;

/// Writes results.jsonl (every result of the run: earlier calls' and this one's), summary.json
/// and report.html.
pub(super) fn write(
    out: &Path,
    records: Records,
    others: &[TaskResult],
    results: &[Option<TaskResult>],
) -> anyhow::Result<()> {
    let mut done: Vec<TaskResult> = others
        .iter()
        .chain(results.iter().flatten())
        .cloned()
        .collect();
    if records == Records::Patches {
        fill_gold(&mut done);
        let params = etip_score::rules::Params::default();
        for r in &mut done {
            let figures = etip_score::rules::task_figures(r, &params);
            r.figures = (!figures.is_empty()).then_some(figures);
        }
    }
    let done: Vec<&TaskResult> = done.iter().collect();
    let mut text = String::new();
    for r in &done {
        text.push_str(&serde_json::to_string(r)?);
        text.push('\n');
    }
    write_atomic(&out.join("results.jsonl"), &text)?;
    write_atomic(
        &out.join("summary.json"),
        &serde_json::to_string_pretty(&summary_json(&done))?,
    )?;
    let (scores, problems) = etip_report::eval::scores(&out.join("results.jsonl"));
    let owned: Vec<TaskResult> = done.iter().map(|r| (*r).clone()).collect();
    write_atomic(
        &out.join("report.html"),
        &etip_report::eval::report(records, &owned, &scores, &problems),
    )
}

/// Gives every result of an instance without a measured gold speedup (a patch that failed before
/// the rounds) the instance's gold speedup as this run measured it elsewhere: the `gold`
/// prediction's own speedup when it was evaluated, else the mean of the reference's speedups in
/// the instance's other evaluations. SWE-fficiency credits a failed patch with 1 / gold speedup.
fn fill_gold(results: &mut [TaskResult]) {
    let mut known: BTreeMap<String, (Option<f64>, Vec<f64>)> = BTreeMap::new();
    for r in results.iter() {
        let e = known.entry(r.instance_id.clone()).or_default();
        if r.model.as_deref() == Some("gold") && r.correct == Some(true) {
            e.0 = r.speedup.or(e.0);
        }
        e.1.extend(r.gold_speedup);
    }
    for r in results.iter_mut().filter(|r| r.gold_speedup.is_none()) {
        if let Some((own, seen)) = known.get(&r.instance_id) {
            r.gold_speedup = own.or_else(|| {
                (!seen.is_empty()).then(|| seen.iter().sum::<f64>() / seen.len() as f64)
            });
        }
    }
}

/// Per model: the count of each category, and the instances whose evaluation failed in the
/// harness (SWE-bench's `infra_failure_ids`), apart from the patches' failures.
fn summary_json(results: &[&TaskResult]) -> serde_json::Value {
    let mut models: BTreeMap<String, (BTreeMap<String, usize>, Vec<String>)> = BTreeMap::new();
    for r in results {
        let m = models
            .entry(r.model.clone().unwrap_or_default())
            .or_default();
        let c = r.category.clone().unwrap_or_default();
        *m.0.entry(c.clone()).or_default() += 1;
        if c == Category::Error.name() {
            m.1.push(r.instance_id.clone());
        }
    }
    serde_json::json!({
        "schema": "etip.eval-summary",
        "models": models.into_iter().map(|(m, (counts, infra))| (m, serde_json::json!({
            "categories": counts,
            "infra_failure_ids": infra,
        }))).collect::<serde_json::Map<String, serde_json::Value>>(),
    })
}

/// The run's state, `state.sqlite` in the output folder (eval has no `--state`).
pub(super) fn open_state(out: &Path) -> anyhow::Result<etip_store::Store> {
    match etip_store::Store::open_exclusive(&out.join("state.sqlite")) {
        Ok(store) => Ok(store),
        Err(etip_store::StoreError::Locked { path, holder }) => Err(crate::InputError(format!(
            "another etip run is using the state file {} (its lock is held{}); wait for it to finish or use another --out",
            path.display(),
            holder.map(|pid| format!(" by pid {pid}")).unwrap_or_default()
        ))
        .into()),
        Err(e) => Err(crate::output::store_error(e)),
    }
}
