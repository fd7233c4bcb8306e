//! JETO's verdict of one measured task (rules §3.1, 4.4), the one implementation `etip measure`
//! (per ETIP, with its timer rule and adaptive rounds) and the JETO scoring rule (per task of a
//! submission, literal rule, fixed rounds) share: the paired sign test of every eligible test class
//! and of the per-round totals over those classes (`overall`, the verdict a patch is judged by).
//!
//! Under a group-sequential design ([`SequentialDesign`]) a series is judged at the design's looks:
//! its verdict is the design's decision at the first look where either direction crosses the
//! boundary, else at the last look available ([`SignTestRecord::stopped_at`]); the p-values are the
//! fixed-n p-values of the rounds used.

use serde::{Deserialize, Serialize};

use crate::error::StatsError;
use crate::sequential::{SeqDecision, SequentialDesign};
use crate::sign::{Direction, SignTestConfig, SignTestRecord, TimerRule, sign_test_with};

/// The sign tests of one task: per eligible class (in the order given) and over the per-round
/// totals of those classes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JetoVerdict {
    /// One record per class series, in the order of the input.
    pub classes: Vec<SignTestRecord>,
    /// The sign test of the per-round totals (`None` when there is no class).
    pub overall: Option<SignTestRecord>,
}

/// The sign test of one paired series under a group-sequential design: judged at the first look
/// (of the rounds available) at which either direction is significant, else at the last look
/// available (`stopped_at`), else, before the first look, on all rounds with `stopped_at` `None`.
/// The direction is the design's decision at those rounds, not `p < p_val`.
///
/// Errors as [`sign_test_with`].
pub fn sequential_sign_test(
    original: &[f64],
    patched: &[f64],
    cfg: &SignTestConfig,
    rule: TimerRule,
    design: &SequentialDesign,
) -> Result<SignTestRecord, StatsError> {
    let significant = |n: usize, v: &SignTestRecord| {
        design.decide(n, v.wins_patched) == SeqDecision::Significant
            || design.decide(n, v.wins_original) == SeqDecision::Significant
    };
    let mut last = None;
    let mut hit = None;
    for n in design.look_rounds() {
        if n > original.len() || n > patched.len() {
            break;
        }
        last = Some(n);
        let v = sign_test_with(&original[..n], &patched[..n], cfg, rule)?;
        if significant(n, &v) {
            hit = Some((n, v));
            break;
        }
    }
    let (n, v) = match hit {
        Some(hit) => hit,
        None => {
            let n = last.unwrap_or(original.len());
            let end = n.min(patched.len());
            (
                n,
                sign_test_with(&original[..n], &patched[..end], cfg, rule)?,
            )
        }
    };
    let direction = if design.decide(n, v.wins_patched) == SeqDecision::Significant {
        Direction::PatchedFaster
    } else if design.decide(n, v.wins_original) == SeqDecision::Significant {
        Direction::OriginalFaster
    } else {
        Direction::NotSignificant
    };
    Ok(SignTestRecord {
        direction,
        // The look judged at: the one that crossed the boundary, else the last available.
        stopped_at: last,
        ..v
    })
}

/// Paired per-round series `(original, patched)`.
pub type Paired = (Vec<f64>, Vec<f64>);

/// The per-round totals `(Σ original, Σ patched)` over the classes' paired series, the series of
/// JETO's overall verdict (`None` when there is no class).
///
/// Errors: `InvalidParameter` when the series do not all have the same number of rounds.
pub fn round_totals<O: AsRef<[f64]>, P: AsRef<[f64]>>(
    classes: &[(O, P)],
) -> Result<Option<Paired>, StatsError> {
    let Some((first, _)) = classes.first() else {
        return Ok(None);
    };
    let rounds = first.as_ref().len();
    let mut to = vec![0.0; rounds];
    let mut tp = vec![0.0; rounds];
    for (o, p) in classes {
        let (o, p) = (o.as_ref(), p.as_ref());
        if o.len() != rounds || p.len() != rounds {
            return Err(StatsError::InvalidParameter(format!(
                "the classes of a task must have the same number of rounds, got {rounds} and {}",
                if o.len() != rounds { o.len() } else { p.len() }
            )));
        }
        for k in 0..rounds {
            to[k] += o[k];
            tp[k] += p[k];
        }
    }
    Ok(Some((to, tp)))
}

/// JETO's verdict of one task from the paired series `(original, patched)` of its eligible test
/// classes (all with the same number of rounds): the sign test of each class and of the per-round
/// totals, under `rule`, at fixed rounds (`sequential` `None`: [`sign_test_with`]) or under a
/// group-sequential design ([`sequential_sign_test`]).
///
/// Errors: as [`sign_test_with`] for any series, and `InvalidParameter` when the classes do not
/// all have the same number of rounds.
///
/// ```
/// use etip_stats::{Direction, SignTestConfig, TimerRule, jeto_verdict};
/// let (a_o, a_p) = (vec![1.0; 30], vec![0.9; 30]); // 10% faster every round
/// let (b_o, b_p) = (vec![2.0; 30], vec![2.0; 30]); // unchanged
/// let v = jeto_verdict(
///     &[(&a_o, &a_p), (&b_o, &b_p)],
///     &SignTestConfig::default(),
///     TimerRule::Literal,
///     None,
/// )?;
/// assert_eq!(v.classes[0].direction, Direction::PatchedFaster);
/// assert_eq!(v.classes[1].direction, Direction::NotSignificant);
/// // Totals 3.0 against 2.9: a 3.3% gain, below min_impr = 5%.
/// assert_eq!(v.overall.map(|o| o.direction), Some(Direction::NotSignificant));
/// # Ok::<(), etip_stats::StatsError>(())
/// ```
pub fn jeto_verdict<O: AsRef<[f64]>, P: AsRef<[f64]>>(
    classes: &[(O, P)],
    cfg: &SignTestConfig,
    rule: TimerRule,
    sequential: Option<&SequentialDesign>,
) -> Result<JetoVerdict, StatsError> {
    let judge = |o: &[f64], p: &[f64]| match sequential {
        None => sign_test_with(o, p, cfg, rule),
        Some(design) => sequential_sign_test(o, p, cfg, rule, design),
    };
    let records = classes
        .iter()
        .map(|(o, p)| judge(o.as_ref(), p.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    let totals = round_totals(classes)?;
    let overall = match totals {
        Some((o, p)) => Some(judge(&o, &p)?),
        None => None,
    };
    Ok(JetoVerdict {
        classes: records,
        overall,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::sign_test;

    #[test]
    fn sequential_verdict_stops_at_the_first_significant_look() {
        let cfg = SignTestConfig::default();
        let design = SequentialDesign::recommended(10, cfg.p_val).expect("design");
        let looks: Vec<usize> = design.look_rounds().collect();
        let n = design.max();
        // Faster in every round: significant at the first look.
        let (o, p) = (vec![1.0; n], vec![0.8; n]);
        let v = sequential_sign_test(&o, &p, &cfg, TimerRule::Literal, &design).expect("valid");
        assert_eq!((v.n, v.stopped_at), (looks[0], Some(looks[0])));
        assert_eq!(v.direction, Direction::PatchedFaster);
        // Unchanged: judged at the last look available, not significant.
        let same = vec![1.0; looks[1] + 1];
        let last = looks.iter().copied().filter(|&l| l <= same.len()).max();
        let v =
            sequential_sign_test(&same, &same, &cfg, TimerRule::Literal, &design).expect("valid");
        assert_eq!((Some(v.n), v.stopped_at), (last, last));
        assert_eq!(v.direction, Direction::NotSignificant);
        // Before the first look: all rounds, no look.
        let few = vec![1.0; looks[0] - 1];
        let v = sequential_sign_test(&few, &few, &cfg, TimerRule::Literal, &design).expect("valid");
        assert_eq!((v.n, v.stopped_at), (few.len(), None));
    }

    #[test]
    fn fixed_verdict_is_the_sign_test_of_classes_and_totals() {
        let cfg = SignTestConfig::default();
        let a = (vec![1.0, 2.0, 3.0, 4.0, 5.0], vec![0.5, 1.0, 3.0, 2.0, 2.5]);
        let b = (vec![2.0; 5], vec![1.9; 5]);
        let v =
            jeto_verdict(&[a.clone(), b.clone()], &cfg, TimerRule::Literal, None).expect("valid");
        assert_eq!(v.classes[0], sign_test(&a.0, &a.1, &cfg).expect("valid"));
        assert_eq!(v.classes[1], sign_test(&b.0, &b.1, &cfg).expect("valid"));
        let to: Vec<f64> = a.0.iter().zip(&b.0).map(|(x, y)| x + y).collect();
        let tp: Vec<f64> = a.1.iter().zip(&b.1).map(|(x, y)| x + y).collect();
        assert_eq!(v.overall, Some(sign_test(&to, &tp, &cfg).expect("valid")));
        let none = jeto_verdict::<Vec<f64>, Vec<f64>>(&[], &cfg, TimerRule::Literal, None);
        assert_eq!(none.expect("valid").overall, None);
        let uneven = [(vec![1.0; 3], vec![1.0; 3]), (vec![1.0; 4], vec![1.0; 4])];
        assert!(matches!(
            jeto_verdict(&uneven, &cfg, TimerRule::Literal, None),
            Err(StatsError::InvalidParameter(_))
        ));
    }
}
