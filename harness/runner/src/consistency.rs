//! Reported times held against measured wall time (rules §3.8).
//!
//! Per-class times come from reports that the measured process writes about itself (pytest's
//! `--junitxml`, Surefire's `TEST-*.xml` from the forked JVM). Code under test runs in that
//! process, so a candidate can change what its report says: replace the clock pytest reads,
//! rewrite the XML writer, overwrite the report at exit, skew the JVM's clock. The one time it
//! cannot change is the wall time etip measures outside it, around the whole test command
//! (`command_secs` of every round). Two rules hold the report to it, for one side against the
//! original side of the same rounds:
//!
//! 1. **Bound**: in every timed round, each side's reported total over the timed classes is at
//!    most its command's wall time (plus the report's rounding: one resolution step per class).
//! 2. **Agreement**: the time the reports say the side saved must be seen by the wall clock. Per
//!    round k, `excess_k = (O_k − S_k) − (Wo_k − Ws_k)`, the saving by report minus the saving by
//!    wall time (equivalently: how much more time the side spent outside its reported classes than
//!    the original did). The median over the timed rounds must not exceed the tolerance
//!    `max(secs, share · median Wo)`. An honest side spends as long outside its tests as the
//!    original does, so its excess is only the harness's round-to-round noise, which the A/A runs
//!    measure (`etip measure --aa` records the same check between two containers of the original).
//!
//! A side whose wall clock saves *more* than its reports say (a faster import, say) passes: only a
//! claim the wall clock does not support is refused. The median keeps one disturbed round from
//! deciding. What the check cannot see: a fake whose claimed saving per round is below the
//! tolerance; the static screen of the patch names such code.

use crate::protocol::RoundResult;
use etip_core::measure::{ClassRecord, TimingCheck};
use std::collections::BTreeSet;

/// How far reported and measured times may disagree (rules §3.8).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Seconds per round.
    pub secs: f64,
    /// Share of the original's median command time per round.
    pub share: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            secs: DEFAULT_TOLERANCE_SECS,
            share: DEFAULT_TOLERANCE_SHARE,
        }
    }
}

/// Default of [`Tolerance::secs`].
pub const DEFAULT_TOLERANCE_SECS: f64 = 0.05;
/// Default of [`Tolerance::share`].
pub const DEFAULT_TOLERANCE_SHARE: f64 = 0.02;

impl Tolerance {
    /// The tolerance in seconds for an original whose median command time is `wall`.
    pub fn at(&self, wall: f64) -> f64 {
        self.secs.max(self.share * wall)
    }
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Checks side `side` of the timed rounds against side 0 (the original), over the classes in
/// `timed` (the classes the verdicts used). `label` names the side in the record; `resolution` is
/// the reports' time step. `None` when no round or no class is there to check.
pub fn check(
    rounds: &[RoundResult],
    timed: &BTreeSet<String>,
    side: usize,
    label: &str,
    resolution: f64,
    tolerance: Tolerance,
) -> Option<TimingCheck> {
    let rounds: Vec<&RoundResult> = rounds
        .iter()
        .filter(|r| !r.summary.warmup && r.sides.len() > side)
        .collect();
    if rounds.is_empty() || timed.is_empty() {
        return None;
    }
    let reported = |r: &RoundResult, i: usize| -> f64 {
        r.sides[i]
            .classes
            .iter()
            .filter(|c| timed.contains(&c.name))
            .map(|c| c.secs)
            .sum()
    };
    let slack = timed.len() as f64 * resolution.max(0.0) + 1e-6;
    let mut over_wall = [0usize; 2];
    let (mut saved_report, mut saved_wall, mut excess, mut wall_o) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut sum_ro, mut sum_rs, mut sum_wo, mut sum_ws) = (0.0, 0.0, 0.0, 0.0);
    let mut worst_over: Option<(usize, usize, f64, f64)> = None;
    for r in &rounds {
        let (ro, rs) = (reported(r, 0), reported(r, side));
        let (wo, ws) = (r.sides[0].command_secs, r.sides[side].command_secs);
        for (j, (rep, wall)) in [(ro, wo), (rs, ws)].into_iter().enumerate() {
            if rep > wall + slack {
                over_wall[j] += 1;
                if worst_over.is_none_or(|(_, _, a, b)| rep - wall > a - b) {
                    worst_over = Some((r.summary.round, j, rep, wall));
                }
            }
        }
        saved_report.push(ro - rs);
        saved_wall.push(wo - ws);
        excess.push((ro - rs) - (wo - ws));
        wall_o.push(wo);
        sum_ro += ro;
        sum_rs += rs;
        sum_wo += wo;
        sum_ws += ws;
    }
    let tol = tolerance.at(median(&wall_o));
    let excess_median = median(&excess);
    let mut why = Vec::new();
    if let Some((k, j, rep, wall)) = worst_over {
        let names = ["original", label];
        let counts: Vec<String> = (0..2)
            .filter(|&i| over_wall[i] > 0)
            .map(|i| format!("the {}'s in {} round(s)", names[i], over_wall[i]))
            .collect();
        why.push(format!(
            "reports give more time to the timed classes than the test command took: {} (round {k}, {}: {rep:.3} s reported, {wall:.3} s measured)",
            counts.join(", "),
            names[j]
        ));
    }
    if excess_median > tol {
        why.push(format!(
            "the {label}'s reports save {:.3} s per round (median) but its test command saves {:.3} s: {:.3} s of claimed saving that the wall clock does not see, above the tolerance of {:.3} s (speedup {:.2}x by report, {:.2}x by wall time)",
            median(&saved_report),
            median(&saved_wall),
            excess_median,
            tol,
            sum_ro / sum_rs,
            sum_wo / sum_ws,
        ));
    }
    Some(TimingCheck {
        side: label.to_string(),
        consistent: why.is_empty(),
        rounds: rounds.len(),
        over_wall,
        saved_by_report: median(&saved_report),
        saved_by_wall: median(&saved_wall),
        excess: excess_median,
        tolerance: tol,
        speedup_by_report: sum_ro / sum_rs,
        speedup_by_wall: sum_wo / sum_ws,
        detail: (!why.is_empty()).then(|| why.join("; ")),
    })
}

/// The classes the verdicts timed (eligible ones), whose reported times the check sums.
pub fn timed_classes(classes: &[ClassRecord]) -> BTreeSet<String> {
    classes
        .iter()
        .filter(|c| c.eligible)
        .map(|c| c.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ClassTime, SideResult};
    use etip_core::measure::{RoundSummary, Version};

    /// Timed rounds of two sides from (wall, reported) per side; one timed class per side.
    fn rounds(pairs: &[[(f64, f64); 2]]) -> Vec<RoundResult> {
        pairs
            .iter()
            .enumerate()
            .map(|(k, sides)| RoundResult {
                summary: RoundSummary {
                    round: k + 1,
                    warmup: false,
                    first: Version::Original,
                    sequence: Vec::new(),
                    started: String::new(),
                    wall_secs: sides[0].0 + sides[1].0,
                    command_secs: vec![sides[0].0, sides[1].0],
                    exit_codes: vec![Some(0), Some(0)],
                    pressure: None,
                    repeats: 0,
                },
                sides: sides
                    .iter()
                    .map(|&(wall, rep)| SideResult {
                        version: Version::Original,
                        exit_code: Some(0),
                        timed_out: false,
                        command_secs: wall,
                        classes: vec![
                            ClassTime {
                                name: "t.Timed".into(),
                                secs: rep,
                                passed: true,
                            },
                            // Not timed (too fast): never summed.
                            ClassTime {
                                name: "t.Quick".into(),
                                secs: 0.001,
                                passed: true,
                            },
                        ],
                        resolution: 0.001,
                    })
                    .collect(),
            })
            .collect()
    }

    fn timed() -> BTreeSet<String> {
        ["t.Timed".to_string()].into_iter().collect()
    }

    fn run(pairs: &[[(f64, f64); 2]]) -> TimingCheck {
        check(
            &rounds(pairs),
            &timed(),
            1,
            "candidate",
            0.001,
            Tolerance::default(),
        )
        .unwrap()
    }

    #[test]
    fn an_honest_improvement_saves_on_the_wall_clock_what_its_report_says() {
        // 0.4 s outside the tests on both sides, ±20 ms of noise; the tests go from 0.3 s to
        // 0.1 s.
        let noise = [0.02, -0.01, 0.0, 0.015, -0.02, 0.01];
        let pairs: Vec<[(f64, f64); 2]> = noise
            .iter()
            .map(|n| [(0.7 + n, 0.3), (0.5 - n, 0.1)])
            .collect();
        let c = run(&pairs);
        assert!(c.consistent, "{c:?}");
        assert_eq!(c.over_wall, [0, 0]);
        assert!((c.saved_by_report - 0.2).abs() < 1e-9, "{c:?}");
        assert!(c.excess.abs() <= 0.02, "{c:?}");
        assert!((c.speedup_by_report - 3.0).abs() < 1e-9);
        assert!(c.detail.is_none());
    }

    #[test]
    fn a_clock_divided_by_a_hundred_is_caught() {
        // The probe: the candidate sleeps 0.3 s more and reports a hundredth of its time.
        let pairs: Vec<[(f64, f64); 2]> = (0..10)
            .map(|k| {
                let n = 0.01 * (k % 3) as f64;
                [(0.5 + n, 0.2), (0.8 - n, 0.5 / 100.0)]
            })
            .collect();
        let c = run(&pairs);
        assert!(!c.consistent, "{c:?}");
        assert!(
            c.speedup_by_report > 30.0 && c.speedup_by_wall < 1.0,
            "{c:?}"
        );
        assert!(c.excess > 0.4, "{c:?}");
        let d = c.detail.unwrap();
        assert!(d.contains("wall clock does not see"), "{d}");
    }

    #[test]
    fn a_report_longer_than_its_command_is_caught_on_either_side() {
        // The candidate's report is honest; the original's claims 2 s in a 1 s command (a
        // generated test inflating the other version's times).
        let mut pairs = vec![[(1.0, 0.5), (1.0, 0.5)]; 5];
        pairs[2][0] = (1.0, 2.0);
        let c = run(&pairs);
        assert!(!c.consistent);
        assert_eq!(c.over_wall, [1, 0]);
        let d = c.detail.unwrap();
        assert!(d.contains("the original's in 1 round(s)"), "{d}");
        assert!(d.contains("round 3"), "{d}");
        // Rounding of each class to the report's step is allowed.
        let c = run(&[[(0.1, 0.1005), (0.1, 0.1)]; 3]);
        assert!(c.consistent, "{c:?}");
    }

    #[test]
    fn a_wall_clock_that_saves_more_than_the_report_passes() {
        // A faster import: the command saves 0.3 s, the timed class only 0.1 s.
        let c = run(&[[(1.0, 0.3), (0.7, 0.2)]; 5]);
        assert!(c.consistent, "{c:?}");
        assert!(c.excess < 0.0);
    }

    #[test]
    fn the_tolerance_is_the_larger_of_seconds_and_share() {
        // Long commands: 10 s outside the tests. 2% of 10.5 s is 0.21 s.
        let c = run(&[[(10.5, 0.5), (10.6, 0.45)]; 5]);
        assert!((c.tolerance - 0.21).abs() < 1e-9, "{c:?}");
        assert!(c.consistent, "excess {} within 0.21 s", c.excess);
        let c = run(&[[(10.5, 0.5), (10.8, 0.15)]; 5]);
        assert!(!c.consistent, "excess {} above 0.21 s", c.excess);
        // Short commands: the 50 ms floor.
        let c = run(&[[(0.5, 0.2), (0.53, 0.19)]; 5]);
        assert!((c.tolerance - 0.05).abs() < 1e-9 && c.consistent, "{c:?}");
    }

    #[test]
    fn one_disturbed_round_does_not_decide() {
        let mut pairs = vec![[(0.7, 0.3), (0.5, 0.1)]; 9];
        // The candidate's container stalled 0.5 s outside its tests in one round.
        pairs[4][1] = (1.0, 0.1);
        assert!(run(&pairs).consistent);
    }

    #[test]
    fn nothing_to_check_without_timed_classes_or_rounds() {
        let r = rounds(&[[(0.5, 0.2), (0.5, 0.2)]]);
        assert!(check(&r, &BTreeSet::new(), 1, "c", 0.001, Tolerance::default()).is_none());
        assert!(check(&[], &timed(), 1, "c", 0.001, Tolerance::default()).is_none());
        // A side the rounds do not have.
        assert!(check(&r, &timed(), 2, "c", 0.001, Tolerance::default()).is_none());
    }
}
