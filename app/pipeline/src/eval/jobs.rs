//! What an evaluation run evaluates: one job per prediction on a built instance, and the key of
//! everything that shapes a result (a stored result with another key is evaluated again).

use super::{Config, Predictions, Records};
use crate::InputError;
use crate::progress::Progress;
use etip_core::instance::InstanceStatus;
use etip_eval::evaluate::EvalConfig;
use etip_eval::predictions::Prediction;
use etip_measure::measure::Tests;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// One prediction to evaluate on one built instance.
pub(super) struct Job {
    /// Index into the statuses.
    pub status: usize,
    pub prediction: Prediction,
    /// The result, when it is known before anything runs (the gold patch cannot be read).
    pub decided: Option<String>,
}

/// The ground-truth patch (`gold`) or no change (`empty`) for every status.
fn own(empty: bool, statuses: &[InstanceStatus], cache: &Path) -> Vec<Job> {
    let mut out = Vec::new();
    for (i, s) in statuses.iter().enumerate() {
        let (prediction, decided) = if empty {
            (Prediction::empty(&s.id), None)
        } else if !s.runnable() {
            (Prediction::gold(&s.id, String::new()), None)
        } else {
            match etip_eval::gold::patch(s, cache) {
                Ok(p) => (Prediction::gold(&s.id, p), None),
                Err(e) => (
                    Prediction::gold(&s.id, String::new()),
                    Some(format!("the ground-truth patch cannot be read: {e}")),
                ),
            }
        };
        out.push(Job {
            status: i,
            prediction,
            decided,
        });
    }
    out
}

/// The predictions of the run for the selected statuses; unknown instances are reported and
/// left out.
pub(super) fn jobs(
    cfg: &Config,
    statuses: &[InstanceStatus],
    cache: &Path,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<Job>> {
    let out = match &cfg.predictions {
        Predictions::Gold => own(false, statuses, cache),
        Predictions::Empty => own(true, statuses, cache),
        Predictions::File(path) => from_file(cfg, path, statuses, progress)?,
    };
    if out.is_empty() {
        return Err(InputError(format!(
            "no prediction names an instance of {}",
            cfg.run.etips.display()
        ))
        .into());
    }
    Ok(out)
}

fn from_file(
    cfg: &Config,
    path: &Path,
    statuses: &[InstanceStatus],
    progress: &dyn Progress,
) -> anyhow::Result<Vec<Job>> {
    let text = crate::input::read_text_capped(path, crate::input::MAX_INPUT_BYTES)?;
    let preds = match cfg.records {
        Records::Patches => etip_eval::predictions::parse(&text),
        Records::Tests => etip_eval::predictions::parse_tests(&text),
    }
    .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    let mut out = Vec::new();
    let mut unknown = BTreeMap::new();
    for p in preds {
        match statuses.iter().position(|s| s.id == p.instance_id) {
            Some(i) => out.push(Job {
                status: i,
                prediction: p,
                decided: None,
            }),
            None => *unknown.entry(p.instance_id).or_insert(0usize) += 1,
        }
    }
    if !unknown.is_empty() && cfg.run.ids.is_empty() {
        progress.note(&format!(
            "warning: {} prediction(s) name instances that {} does not hold (left out): {}",
            unknown.values().sum::<usize>(),
            cfg.run.etips.display(),
            unknown
                .keys()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(out)
}

/// The key of everything that shapes a result: a stored result with another key is evaluated again.
pub(super) fn key(status: &InstanceStatus, p: &Prediction, cfg: &EvalConfig) -> String {
    let mut params = serde_json::json!({
        "patch": p.patch,
        "kind": format!("{:?}", p.kind),
        "classes": p.classes,
        "image": status.image,
        "layers": status.layers.iter().map(|l| l.image_id.clone()).collect::<Vec<_>>(),
        "rounds": cfg.measure.protocol.rounds,
        "warmup": cfg.measure.protocol.warmup,
        "min_impr": cfg.measure.verdict.sign.min_impr,
        "p_val": cfg.measure.verdict.sign.p_val,
        "timer": cfg.measure.verdict.timer.name(),
        "min_class_secs": cfg.measure.verdict.min_class_secs,
        "memory_mb": cfg.measure.resources.memory_mb,
        "cpusets": cfg.measure.cpusets,
        "allow_test_changes": cfg.allow_test_changes,
        "tests": cfg.measure.tests.describe_for(&status.id),
        "fresh_rounds": cfg.measure.protocol.fresh_rounds,
    });
    // Added only when present, so the keys of test-only results stay what they were.
    if let Some(w) = &p.workload {
        params["workload"] = w.as_str().into();
    }
    if let Tests::Covering(map) = &cfg.measure.tests
        && let Some(c) = map.get(&status.id)
        && !c.suites.is_empty()
    {
        params["suites"] = serde_json::to_value(&c.suites).unwrap_or_default();
    }
    if !status.workloads.is_empty() {
        params["workloads"] = serde_json::to_value(&status.workloads).unwrap_or_default();
        params["workload_timeout"] = cfg.measure.protocol.workload_timeout.as_secs().into();
    }
    hex::encode(Sha256::digest(params.to_string().as_bytes()))
}
