//! Ranked leaderboards for people: each competing submission's rank under the official score and
//! under every alternative rule of the audit, with the rank change; the runs that do not compete
//! (the expert's own patches, an older copy of a run) set apart with their short names
//! ([`crate::runs`], re-exported here).
//!
//! A [`Board`] is built from the [`crate::audit::Audit`] of one benchmark. Ranks are competition
//! ranks ("1224": tied submissions share the best rank, the next rank skips), counted among the
//! ranked submissions only; the rank change is the official rank minus the alternative's, so `+3`
//! means three places higher under the alternative.

use crate::audit::{Audit, SubmissionAudit};
use crate::rules::Rule;
use serde::Serialize;

pub use crate::runs::{Role, roles, short_name};

/// One scoring rule of a board.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metric {
    /// Stable key (`hm`, `hm_floor`, `hm_bounded`, `median_sr`, `hm_tolerant`, `gate`,
    /// `opt_at_1`, `score`, `hacks_failed`).
    pub key: &'static str,
    /// Column title, e.g. `HM of SR` or `HM@0.5`.
    pub label: String,
    /// Unit of the values: `"SR"` (a ratio to the expert's speedup) or `"%"` (percent of tasks).
    pub unit: &'static str,
    /// Decimals the values are shown with.
    pub decimals: usize,
    /// The benchmark's own score.
    pub official: bool,
}

/// One ranked submission on a board.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoardRow {
    /// Submission name (as given).
    pub submission: String,
    /// Display name: the alias, else [`short_name`].
    pub name: String,
    /// Value under each metric (in [`Board::metrics`] order).
    pub values: Vec<Option<f64>>,
    /// Competition rank under each metric (1 = best).
    pub ranks: Vec<Option<usize>>,
}

impl BoardRow {
    /// Official rank minus the rank under metric `k` (positive: higher under `k`).
    pub fn change(&self, k: usize) -> Option<i64> {
        Some(self.ranks[0]? as i64 - self.ranks[k]? as i64)
    }
}

/// A submission of the benchmark that is not ranked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unranked {
    /// Submission name.
    pub submission: String,
    /// Display name.
    pub name: String,
    /// Why it is not ranked.
    #[serde(flatten)]
    pub role: Role,
    /// Its official score.
    pub score: f64,
}

/// The ranked leaderboard of one benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Board {
    /// Benchmark family (`swefficiency`, `gso`, `etip`).
    pub benchmark: &'static str,
    /// The official metric first, then the alternatives.
    pub metrics: Vec<Metric>,
    /// Ranked submissions, best first under the official metric (name order on ties).
    pub rows: Vec<BoardRow>,
    /// Gold and duplicate runs, with their official score.
    pub unranked: Vec<Unranked>,
}

/// Competition ranks (higher values first; `None` values unranked).
fn competition_ranks(values: &[Option<f64>]) -> Vec<Option<usize>> {
    values
        .iter()
        .map(|v| {
            let v = (*v)?;
            Some(1 + values.iter().flatten().filter(|w| **w > v).count())
        })
        .collect()
}

/// The metrics a benchmark's submissions are ranked by (the official one first).
fn metrics_of(rule: Rule, a: &SubmissionAudit, gate: f64) -> Vec<Metric> {
    let m = |key, label: String, unit, decimals, official| Metric {
        key,
        label,
        unit,
        decimals,
        official,
    };
    match rule {
        Rule::Swefficiency => {
            let mut v = vec![m("hm", "HM of SR".into(), "SR", rule.decimals(), true)];
            if a.floor != crate::rules::SR_FLOOR {
                v.push(m("hm_floor", format!("HM@{}", a.floor), "SR", 4, false));
            }
            v.extend([
                m(
                    "hm_bounded",
                    format!("HM@{}", a.bounded_floor),
                    "SR",
                    3,
                    false,
                ),
                m("median_sr", "median SR".into(), "SR", 3, false),
                m("hm_tolerant", "HM tol".into(), "SR", 3, false),
                m("gate", format!("gate≥{gate}"), "%", 1, false),
            ]);
            v
        }
        Rule::Gso => vec![m("opt_at_1", "opt@1".into(), "%", 1, true)],
        Rule::Sweperf | Rule::Jeto => vec![m("score", rule.to_string(), "", rule.decimals(), true)],
    }
}

fn value_of(key: &str, a: &SubmissionAudit) -> Option<f64> {
    match key {
        "hm" | "opt_at_1" | "score" => Some(a.score),
        "hm_floor" => a.hm,
        "hm_bounded" => a.hm_bounded,
        "median_sr" => a.median_sr,
        "hm_tolerant" => a.hm_tolerant,
        "gate" => a.gso_gate_score,
        "hacks_failed" => a.score_hacks_failed,
        _ => None,
    }
}

/// The boards of an audit, one per benchmark, in the order the benchmarks first appear.
pub fn boards(audit: &Audit, gso_threshold: f64) -> Vec<Board> {
    let mut benchmarks: Vec<&'static str> = Vec::new();
    for s in &audit.submissions {
        if !benchmarks.contains(&s.benchmark) {
            benchmarks.push(s.benchmark);
        }
    }
    benchmarks
        .into_iter()
        .filter_map(|b| {
            let subs: Vec<&SubmissionAudit> = audit
                .submissions
                .iter()
                .filter(|s| s.benchmark == b)
                .collect();
            let first = subs.first()?;
            let mut metrics = metrics_of(first.rule, first, gso_threshold);
            // With reward-hack verdicts (etip's results): the official rule, hacks failed.
            if subs.iter().any(|s| s.score_hacks_failed.is_some()) {
                let official = metrics[0].clone();
                metrics.push(Metric {
                    key: "hacks_failed",
                    label: "hacks failed".into(),
                    official: false,
                    ..official
                });
            }
            let ranked: Vec<&&SubmissionAudit> =
                subs.iter().filter(|s| s.role.is_ranked()).collect();
            let columns: Vec<Vec<Option<f64>>> = metrics
                .iter()
                .map(|m| ranked.iter().map(|s| value_of(m.key, s)).collect())
                .collect();
            let ranks: Vec<Vec<Option<usize>>> =
                columns.iter().map(|c| competition_ranks(c)).collect();
            let mut rows: Vec<BoardRow> = ranked
                .iter()
                .enumerate()
                .map(|(i, s)| BoardRow {
                    submission: s.submission.clone(),
                    name: s.name.clone(),
                    values: columns.iter().map(|c| c[i]).collect(),
                    ranks: ranks.iter().map(|r| r[i]).collect(),
                })
                .collect();
            rows.sort_by(|a, b| {
                a.ranks[0]
                    .unwrap_or(usize::MAX)
                    .cmp(&b.ranks[0].unwrap_or(usize::MAX))
                    .then_with(|| a.name.cmp(&b.name))
            });
            let unranked = subs
                .iter()
                .filter(|s| !s.role.is_ranked())
                .map(|s| Unranked {
                    submission: s.submission.clone(),
                    name: s.name.clone(),
                    role: s.role.clone(),
                    score: s.score,
                })
                .collect();
            Some(Board {
                benchmark: b,
                metrics,
                rows,
                unranked,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn competition_ranks_share_the_best_rank_on_ties() {
        let r = competition_ranks(&[Some(0.5), Some(0.9), None, Some(0.5), Some(0.1)]);
        assert_eq!(r, [Some(2), Some(1), None, Some(2), Some(4)]);
    }
}
