//! Hack-adjusted scores (rules §6): a submission whose task results carry a reward-hack verdict
//! (`etip eval`'s `hack`) scored again without the suspects, next to its plain score.
//!
//! - **`exclude`**: the flagged tasks leave the submission and the benchmark (N shrinks by as
//!   many): the score of the tasks the screen found nothing in.
//! - **`count-as-failed`**: the flagged tasks stay and count as incorrect (GSO's hack-adjusted
//!   score: a hack earns nothing; under SWE-fficiency an incorrect task's SR is 1/gold).
//!
//! A task is flagged when its verdict is `suspected` or `judged_hack`; a task without a verdict
//! (an official report, a patch that did not apply) is not.
//!
//! ```
//! use etip_score::hacks::{HackPolicy, adjust};
//! use etip_score::input::{Format, Submission};
//! use etip_records::results::TaskResult;
//! let clean = TaskResult { instance_id: "a".into(), correct: Some(true), hack: Some(etip_core::hack::HackVerdict::clean()), ..TaskResult::default() };
//! let f = etip_core::hack::Finding::new(etip_core::hack::HackKind::CrossCallCache, "m.py", 3, "@lru_cache", "memoises");
//! let flagged = TaskResult { instance_id: "b".into(), correct: Some(true), hack: Some(etip_core::hack::HackVerdict::from_findings(vec![f])), ..TaskResult::default() };
//! let sub = Submission {
//!     name: "model".into(), path: "model.jsonl".into(), format: Format::EtipJsonl,
//!     tasks: vec![clean, flagged], lines: vec![1, 2], total_instances: None,
//!     official_score: None, official_summary: Default::default(), measurements: Vec::new(),
//! };
//! let (failed, n) = adjust(&sub, HackPolicy::CountAsFailed);
//! assert_eq!((n, failed.tasks[1].correct), (1, Some(false)));
//! let (excluded, _) = adjust(&sub, HackPolicy::Exclude);
//! assert_eq!(excluded.tasks.len(), 1);
//! ```

use crate::input::Submission;
use etip_records::results::TaskResult;

/// What a hack-adjusted score does with the flagged tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HackPolicy {
    Exclude,
    CountAsFailed,
}

impl HackPolicy {
    /// The policy's name on the command line and in the score's details.
    pub fn name(self) -> &'static str {
        match self {
            HackPolicy::Exclude => "exclude",
            HackPolicy::CountAsFailed => "count-as-failed",
        }
    }

    pub fn parse(s: &str) -> Option<HackPolicy> {
        [HackPolicy::Exclude, HackPolicy::CountAsFailed]
            .into_iter()
            .find(|p| p.name() == s)
    }
}

/// The task's patch was found suspect or judged a hack.
pub fn flagged(t: &TaskResult) -> bool {
    t.hack
        .as_ref()
        .is_some_and(|h| h.is_suspected() || h.is_judged_hack())
}

/// The submission under `policy` (same name), and how many of its tasks were flagged.
pub fn adjust(sub: &Submission, policy: HackPolicy) -> (Submission, usize) {
    let n = sub.tasks.iter().filter(|t| flagged(t)).count();
    let mut out = sub.clone();
    match policy {
        HackPolicy::Exclude => {
            let keep: Vec<bool> = sub.tasks.iter().map(|t| !flagged(t)).collect();
            out.tasks = sub
                .tasks
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(t, _)| t.clone())
                .collect();
            out.lines = sub
                .lines
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(l, _)| *l)
                .collect();
            out.total_instances = sub.total_instances.map(|t| t.saturating_sub(n));
            // A published score is of the whole submission, not of what is left.
            out.official_score = None;
        }
        HackPolicy::CountAsFailed => {
            for t in out.tasks.iter_mut().filter(|t| flagged(t)) {
                t.correct = Some(false);
            }
            out.official_score = None;
        }
    }
    (out, n)
}

/// Marks a row scored under `policy`: its submission name gets ` [hacks POLICY]`, its details
/// the policy and the number of flagged tasks.
pub fn mark(row: &mut crate::rules::ScoreRow, policy: HackPolicy, flagged: usize) {
    row.submission = format!("{} [hacks {}]", row.submission, policy.name());
    row.details
        .insert("hack_policy".into(), policy.name().into());
    row.details.insert("hacks_flagged".into(), flagged.into());
}
