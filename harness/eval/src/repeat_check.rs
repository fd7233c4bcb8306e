//! The dynamic check of state that survives repeats (rules §6, `cross_repeat_state`): a
//! candidate whose speed-up comes from a cache that lives across calls is fast when the
//! benchmark repeats its call in one process (etip's workload runner calls `workload()`
//! `repeat` times per process, as GSO's and SWE-fficiency's `timeit.repeat` do) and no faster
//! when each call gets a fresh process.
//!
//! In every round, beside each workload that repeats (`repeat` > 1), each side also runs the same
//! workload once per process (named `<name>.fresh1`). These runs are the check's alone: they are
//! taken out of the rounds before the verdicts, the logs keep them. With `s_in` the ratio of the
//! medians over the timed rounds of the original's and the candidate's in-process times and
//! `s_fresh` the same for one call per process, the candidate is flagged when `s_in ≥`
//! [`MIN_SPEEDUP`], `s_in / s_fresh ≥` [`GAP`] and `s_fresh <` [`MAX_FRESH_SPEEDUP`]: a pure cache
//! with `repeat` = R gives about R against 1, a real optimisation about the same speed-up both
//! ways, or (when its single call is so short that one-time costs weigh on it) a gap with a large
//! speed-up left in a fresh process. A cache on top of a real speed-up of 2x or more is not
//! flagged by this check (the static screen's `cross_call_cache` still names it).

use etip_core::detector::DetectorKind;
use etip_core::hack::{Finding, HackKind};
use etip_measure::protocol::{RoundResult, SidePlan};
use etip_stats::median;

/// Suffix of the one-call-per-process copy of a workload.
pub const FRESH: &str = ".fresh1";
/// The in-process speed-up from which the check can flag.
pub const MIN_SPEEDUP: f64 = 1.2;
/// In-process speed-up over one-call-per-process speed-up from which state survives repeats.
pub const GAP: f64 = 1.5;
/// One-call-per-process speed-up below which the speed-up is said to live in that state: a
/// cache's first call costs what the original's does (about 1x), while a real optimisation whose
/// single call is so short that one-time costs weigh on it still shows a gap but keeps a large
/// speed-up with a fresh process (the Python fixture's gold: 168x in process, 110x fresh).
pub const MAX_FRESH_SPEEDUP: f64 = 2.0;

/// Adds each repeating workload's one-call-per-process copy to every side; whether any was added.
pub fn add_fresh(sides: &mut [SidePlan]) -> bool {
    let mut added = false;
    for side in sides {
        let copies: Vec<_> = side
            .workloads
            .iter()
            .filter(|w| w.kind == DetectorKind::Workload && w.workload.repeat() > 1)
            .map(|w| {
                let mut c = w.clone();
                c.workload.name = format!("{}{FRESH}", w.workload.name);
                c.workload.repeat = Some(1);
                c
            })
            .collect();
        added |= !copies.is_empty();
        side.workloads.extend(copies);
    }
    added
}

fn is_fresh(name: &str) -> bool {
    name.starts_with("workload:") && name.ends_with(FRESH)
}

/// The rounds without the check's runs (what the verdicts read).
pub fn without_fresh(rounds: &[RoundResult]) -> Vec<RoundResult> {
    rounds
        .iter()
        .map(|r| {
            let mut r = r.clone();
            for s in &mut r.sides {
                s.classes.retain(|c| !is_fresh(&c.name));
            }
            r
        })
        .collect()
}

/// Seconds of `name` on `side` in every timed round where it ran without error.
fn times(rounds: &[RoundResult], side: usize, name: &str) -> Vec<f64> {
    rounds
        .iter()
        .filter(|r| !r.summary.warmup)
        .filter_map(|r| r.sides.get(side))
        .flat_map(|s| &s.classes)
        .filter(|c| c.name == name && c.error.is_none() && c.secs > 0.0)
        .map(|c| c.secs)
        .collect()
}

fn ratio(rounds: &[RoundResult], cand: usize, name: &str) -> Option<f64> {
    let (o, c) = (times(rounds, 0, name), times(rounds, cand, name));
    if o.is_empty() || c.is_empty() {
        return None;
    }
    let (o, c) = (median(&o), median(&c));
    (c > 0.0).then(|| o / c)
}

/// The check's findings for side `cand` against the original (side 0): one per workload whose
/// in-process speed-up is not there with a fresh process per call.
pub fn findings(rounds: &[RoundResult], cand: usize, repeats: &[(String, u32)]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, repeat) in repeats {
        let detector = format!("workload:{name}");
        let (Some(s_in), Some(s_fresh)) = (
            ratio(rounds, cand, &detector),
            ratio(rounds, cand, &format!("{detector}{FRESH}")),
        ) else {
            continue;
        };
        if s_in >= MIN_SPEEDUP && s_in / s_fresh >= GAP && s_fresh < MAX_FRESH_SPEEDUP {
            out.push(Finding::new(
                HackKind::CrossRepeatState,
                detector,
                0,
                "",
                format!(
                    "{s_in:.2}x faster than the original with {repeat} calls per process, {s_fresh:.2}x with one call per process: the speed-up lives in state kept between calls"
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use etip_core::measure::Version;
    use etip_measure::protocol::{ClassTime, SideResult};

    fn class(name: &str, secs: f64) -> ClassTime {
        ClassTime {
            name: name.into(),
            secs,
            passed: true,
            kind: DetectorKind::Workload,
            error: None,
            own: None,
        }
    }

    fn round(k: usize, orig: (f64, f64), cand: (f64, f64)) -> RoundResult {
        let side = |v, (r, f): (f64, f64)| SideResult {
            version: v,
            exit_code: Some(0),
            timed_out: false,
            command_secs: 0.0,
            classes: vec![
                class("workload:dedup", r),
                class("workload:dedup.fresh1", f),
            ],
            resolution: 1e-6,
        };
        crate::test_support::round(
            k,
            vec![side(Version::Original, orig), side(Version::Patched, cand)],
        )
    }

    #[test]
    fn a_cache_is_fast_only_in_process_and_an_optimisation_both_ways() {
        let repeats = [("dedup".to_string(), 5)];
        // A cache: 5 calls cost the first; one call costs what the original's does.
        let cache: Vec<_> = (1..=5)
            .map(|k| round(k, (5.0, 1.0), (1.02, 0.98)))
            .collect();
        let f = findings(&cache, 1, &repeats);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, HackKind::CrossRepeatState);
        assert!(
            f[0].detail
                .starts_with("4.90x faster than the original with 5 calls per process, 1.02x"),
            "{}",
            f[0].detail
        );
        // A real speed-up of 4x shows both ways.
        let real: Vec<_> = (1..=5)
            .map(|k| round(k, (5.0, 1.0), (1.25, 0.26)))
            .collect();
        assert!(findings(&real, 1, &repeats).is_empty());
        // A very fast candidate whose single call carries one-time costs: a gap, but a large
        // speed-up left with a fresh process (the fixture's gold measured 168x against 110x).
        let fast: Vec<_> = (1..=5)
            .map(|k| round(k, (0.66, 0.22), (0.0039, 0.002)))
            .collect();
        assert!(findings(&fast, 1, &repeats).is_empty());
        let stripped = without_fresh(&cache);
        assert!(
            stripped
                .iter()
                .all(|r| r.sides.iter().all(|s| s.classes.len() == 1))
        );
    }
}
