//! Reported times held against measured wall time (rules §3.8).
//!
//! Per-class times come from reports that the measured process writes about itself (pytest's
//! `--junitxml`, Surefire's `TEST-*.xml`). Code under test runs in that process (or, for Surefire,
//! in the forked JVM beside the writer), so a candidate can change what its report says: replace
//! the clock pytest reads, patch the XML writer, rewrite the report at exit. The one time it
//! cannot change is the wall time etip measures outside it, around the whole test command
//! (`command_secs` of every round). Two rules hold the reports to it, for one side against the
//! original side of the same rounds:
//!
//! 1. **Bound**: in every timed round, each side's reported total over the timed classes is at
//!    most its command's wall time (plus the report's rounding: one resolution step per class).
//! 2. **Agreement**: the time the reports say the side saved must be seen by the wall clock. Per
//!    round k, `excess_k = (O_k − S_k) − (Wo_k − Ws_k)`: the saving by report minus the saving by
//!    wall time, which is also how much longer the side spent outside its reported classes than
//!    the original did. A round *disagrees* when `excess_k` exceeds the tolerance
//!    `τ_k = max(secs, share · Wo_k)`. The side disagrees when the one-sided Wilcoxon signed-rank
//!    test finds `excess_k − τ_k` centred above 0 (`p < p_val`; 0.01 by default, stricter than the
//!    verdicts' 0.1: calling a report faked is a strong claim, and 7 rounds are the fewest that can
//!    make it).
//!
//! Why a rank test on paired rounds and not a threshold on the mean: for an honest side the time
//! spent outside the tests is distributed as the original's (same interpreter, same collection,
//! the order of the sides rotated over the rounds), so `excess_k` is the difference of two draws
//! of one distribution, symmetric around 0, and `excess_k − τ_k` symmetric around a negative
//! value: the test flags an honest side with probability at most `p_val`, even on a loaded machine
//! where the outside time of one command swings by half a second. A faked report is above the
//! tolerance in nearly every round, by about the time it hides. The signed-rank test weighs how
//! far each round is from the tolerance, so one or two honest-looking rounds (a slow original) do
//! not clear a fake, as they would under a sign test at 12 rounds. The tolerance only says how
//! large a disagreement counts; the A/A runs (`etip measure --aa`, the same check between two
//! containers of the original) show the noise it sits in.
//!
//! A side whose wall clock saves *more* than its reports say (a faster import, say) passes: only a
//! claim the wall clock does not support is refused. What the check cannot see: a fake whose claimed
//! saving per round is below the tolerance; the static screen of the patch names such code.

use crate::protocol::RoundResult;
use etip_records::measure::ClassRecord;
use etip_records::timing::TimingCheck;
use etip_stats::median;
use std::collections::BTreeSet;

/// How far reported and measured times may disagree (rules §3.8).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tolerance {
    /// Seconds per round.
    pub secs: f64,
    /// Share of the original's command time in the round.
    pub share: f64,
    /// Threshold of the one-sided signed-rank test of the rounds' excess over the tolerance
    /// (strict). Calling a side's reports faked is a strong claim: the default is stricter than
    /// the verdicts' (7 rounds are needed before any outcome can reach it).
    pub p_val: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            secs: DEFAULT_TOLERANCE_SECS,
            share: DEFAULT_TOLERANCE_SHARE,
            p_val: DEFAULT_TIMING_P_VAL,
        }
    }
}

/// Default of [`Tolerance::p_val`].
pub const DEFAULT_TIMING_P_VAL: f64 = 0.01;

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
    let n = rounds.len();
    let mut over_wall = [0usize; 2];
    let mut worst_over: Option<(usize, usize, f64, f64)> = None;
    let (mut saved_report, mut saved_wall, mut excess, mut taus) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let mut disagreeing = 0;
    let mut beyond = Vec::with_capacity(n);
    let (mut sum_ro, mut sum_rs, mut sum_wo, mut sum_ws) = (0.0, 0.0, 0.0, 0.0);
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
        let e = (ro - rs) - (wo - ws);
        let tau = tolerance.at(wo);
        disagreeing += usize::from(e > tau);
        beyond.push(e - tau);
        saved_report.push(ro - rs);
        saved_wall.push(wo - ws);
        excess.push(e);
        taus.push(tau);
        sum_ro += ro;
        sum_rs += rs;
        sum_wo += wo;
        sum_ws += ws;
    }
    // Finite by construction (times are finite); a failure would mean no evidence.
    let p_disagree = etip_stats::wilcoxon_signed_rank(&beyond, etip_stats::Alternative::Greater)
        .map_or(1.0, |w| w.p_value);
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
    if p_disagree < tolerance.p_val {
        why.push(format!(
            "the {label}'s reports claim a saving that the wall clock does not see, by more than the tolerance of {:.3} s in {disagreeing} of {n} rounds (signed-rank p = {p_disagree:.2e}): per round (median) {:.3} s saved by report, {:.3} s by the test command (speedup {:.2}x by report, {:.2}x by wall time)",
            median(&taus),
            median(&saved_report),
            median(&saved_wall),
            sum_ro / sum_rs,
            sum_wo / sum_ws,
        ));
    }
    Some(TimingCheck {
        side: label.to_string(),
        consistent: why.is_empty(),
        rounds: n,
        over_wall,
        saved_by_report: median(&saved_report),
        saved_by_wall: median(&saved_wall),
        excess: median(&excess),
        tolerance: median(&taus),
        disagreeing,
        p_disagree,
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
    use etip_core::measure::Version;
    use etip_records::measure::RoundSummary;

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
                            ClassTime::test("t.Timed", rep, true),
                            // Not timed (too fast): never summed.
                            ClassTime::test("t.Quick", 0.001, true),
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
        assert_eq!((c.disagreeing, c.rounds), (10, 10));
        let d = c.detail.unwrap();
        assert!(d.contains("wall clock does not see"), "{d}");
        assert!(d.contains("in 10 of 10 rounds"), "{d}");
    }

    #[test]
    fn a_fake_hidden_in_noise_is_caught_by_its_ranks() {
        // The report rewritten at exit on a busy machine (12 rounds seen in the Docker test):
        // two rounds of 12 look honest, which a sign test at p < 0.01 would let through
        // (P(X >= 10) = 0.019); their excess is small, the others' large.
        let excess = [
            0.686, 0.562, 0.19, 0.256, 0.257, 0.016, -0.052, 0.151, 0.179, 0.165, 0.154, 0.274,
        ];
        let pairs: Vec<[(f64, f64); 2]> = excess
            .iter()
            .map(|e| [(0.6, 0.28), (0.6 - 0.28 + e, 0.0)])
            .collect();
        let c = run(&pairs);
        assert_eq!(c.disagreeing, 10);
        assert!(!c.consistent && c.p_disagree < 0.01, "{c:?}");
    }

    #[test]
    fn an_honest_side_on_a_loaded_machine_is_not_flagged() {
        // The time outside the tests swings by up to half a second per command (seen on a
        // machine running other containers), symmetric between the sides: large excesses, but
        // in about half the rounds only.
        let swing = [
            0.5, -0.4, 0.3, -0.45, 0.05, -0.2, 0.35, -0.3, 0.4, -0.5, 0.2, -0.1,
        ];
        let pairs: Vec<[(f64, f64); 2]> =
            swing.iter().map(|s| [(0.9, 0.3), (0.7 + s, 0.1)]).collect();
        let c = run(&pairs);
        assert!(c.consistent, "{c:?}");
        assert_eq!(c.disagreeing, 5);
        // Few rounds cannot show a disagreement: 6 of 6 has p = 1/64, above 0.01; 7 of 7 is
        // 1/128 (the signed-rank test's smallest p-values).
        let c = run(&[[(0.5, 0.3), (0.9, 0.003)]; 6]);
        assert!(c.consistent && c.p_disagree == 1.0 / 64.0, "{c:?}");
        assert!(!run(&[[(0.5, 0.3), (0.9, 0.003)]; 7]).consistent);
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
        let c = run(&[[(10.5, 0.5), (10.6, 0.45)]; 8]);
        assert!((c.tolerance - 0.21).abs() < 1e-9, "{c:?}");
        assert!(c.consistent, "excess {} within 0.21 s", c.excess);
        let c = run(&[[(10.5, 0.5), (10.8, 0.15)]; 8]);
        assert!(!c.consistent, "excess {} above 0.21 s", c.excess);
        // Short commands: the 50 ms floor.
        let c = run(&[[(0.5, 0.2), (0.53, 0.19)]; 8]);
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
        let tol = Tolerance::default();
        assert!(check(&r, &BTreeSet::new(), 1, "c", 0.001, tol).is_none());
        assert!(check(&[], &timed(), 1, "c", 0.001, tol).is_none());
        // A side the rounds do not have.
        assert!(check(&r, &timed(), 2, "c", 0.001, tol).is_none());
    }
}
