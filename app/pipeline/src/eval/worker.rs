//! One job of an evaluation run: the prediction evaluated on its instance (or the generated test
//! timed on original and reference), labelled against the ground truth, its result written to
//! the job's log folder.

use crate::output::write as write_atomic;
use crate::progress::Progress;
use etip_core::category::Category;
use etip_core::instance::InstanceStatus;
use etip_eval::evaluate::{CHANGED_FILES, EvalConfig, EvalProgress, evaluate};
use etip_eval::predictions::{Kind, Prediction};
use etip_exec::executor::Executor;
use etip_records::results::TaskResult;
use std::path::Path;

/// Reports an evaluation's stages and rounds as the message of `progress`.
struct Reporter<'a> {
    progress: &'a dyn Progress,
    what: String,
}

impl EvalProgress for Reporter<'_> {
    fn stage(&self, stage: &str) {
        self.progress.message(&format!("{}: {stage}", self.what));
    }

    fn round(&self, round: usize, total: usize) {
        if round == 0 {
            self.progress.message(&format!("{}: warm-up", self.what));
        } else {
            self.progress
                .message(&format!("{}: round {round}/{total}", self.what));
        }
    }
}

/// Where a job runs and what it may use.
pub(super) struct Context<'a> {
    pub executor: &'a dyn Executor,
    pub cfg: &'a EvalConfig,
    pub logs: &'a Path,
    pub cache: &'a Path,
    /// Label agent patches against the ground truth ([`crate::labels`]).
    pub labels: bool,
    pub progress: &'a dyn Progress,
}

/// The result of a prediction the harness could not evaluate (`why`): a harness error, never a
/// result about the patch; the next run evaluates it again.
pub(super) fn harness_error(
    prediction: &Prediction,
    status: &InstanceStatus,
    run_id: Option<String>,
    why: &str,
) -> TaskResult {
    TaskResult {
        instance_id: status.id.clone(),
        model: Some(prediction.model.clone()),
        run_id,
        category: Some(Category::Error.name().into()),
        detail: Some(why.to_string()),
        ..TaskResult::default()
    }
}

/// Evaluates one prediction and labels it; `decided`: the result's detail when it is known
/// before anything runs (a harness error).
pub(super) fn run_job(
    prediction: &Prediction,
    decided: Option<&str>,
    status: &InstanceStatus,
    cx: &Context<'_>,
) -> TaskResult {
    let dir = cx
        .logs
        .join(etip_build::instance::log_slug(&status.id))
        .join(etip_build::instance::log_slug(&prediction.model));
    if let Some(why) = decided {
        return harness_error(prediction, status, cx.cfg.run_id.clone(), why);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let progress = Reporter {
        progress: cx.progress,
        what: format!("{} / {}", status.id, prediction.model),
    };
    if prediction.kind == Kind::Test {
        let r = etip_eval::generated::evaluate_test(
            cx.executor,
            status,
            prediction,
            cx.cfg,
            Some(&dir),
            &progress,
        );
        keep(&dir, &r);
        return r;
    }
    let mut r = evaluate(
        cx.executor,
        status,
        prediction,
        cx.cfg,
        Some(&dir),
        &progress,
    );
    if r.apply.is_some() || prediction.kind == Kind::Gold && r.correct.is_some() {
        label(
            prediction,
            status,
            cx,
            Some(&dir.join(CHANGED_FILES)),
            &mut r,
        );
    }
    keep(&dir, &r);
    r
}

/// Labels a result that a cluster node evaluated (nodes have no clone of the ETIP's repository):
/// the candidate's files are its patch applied to the original here.
pub(super) fn label_here(
    prediction: &Prediction,
    status: &InstanceStatus,
    cx: &Context<'_>,
    r: &mut TaskResult,
) {
    if r.exact_match.is_some() {
        return;
    }
    if r.apply.is_some() || prediction.kind == Kind::Gold && r.correct.is_some() {
        label(prediction, status, cx, None, r);
    }
}

/// Sets the result's `exact_match`, `same_location` and `hack` (a failure is logged, not fatal).
fn label(
    prediction: &Prediction,
    status: &InstanceStatus,
    cx: &Context<'_>,
    files: Option<&Path>,
    r: &mut TaskResult,
) {
    if !cx.labels {
        return;
    }
    let cand = prediction.patch.as_deref().unwrap_or("");
    let labelled = etip_eval::gold::patch(status, cx.cache)
        .map_err(|e| anyhow::anyhow!(e))
        .and_then(|gold| {
            crate::labels::read(status, &gold, cand, files, cx.cache).map_err(anyhow::Error::from)
        });
    match labelled {
        Ok(reading) => {
            r.exact_match = Some(reading.labels.exact_match);
            r.same_location = Some(reading.labels.same_location);
            // The dynamic repeat check's verdict (the harness's), if any, and the screen's.
            r.hack = Some(match r.hack.take() {
                Some(dynamic) => dynamic.merge(reading.hack),
                None => reading.hack,
            });
        }
        Err(e) => tracing::warn!("{}: labels: {e}", status.id),
    }
}

/// The job's result in its log folder (best effort: the run's outputs hold it too).
fn keep(dir: &Path, r: &TaskResult) {
    if let Ok(json) = serde_json::to_string_pretty(r) {
        let _ = write_atomic(&dir.join("result.json"), &json);
    }
}
