//! Effect sizes: Cliff's δ (a rank-based dominance measure of two samples)
//! and the median paired ratio `p_j / o_j` with a percentile bootstrap
//! interval that resamples rounds (pairs).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_finite, check_times};
use crate::sample::{median_sorted, quantile_sorted, sorted_copy};
use crate::sign::pair_ratios;

/// Cliff's δ of `a` against `b`: `P(a > b) - P(a < b)` over all `n·m` pairs
/// `(a_i, b_j)`, ties counting 0, so δ is in `[-1, 1]`; `δ = 2U/(n·m) - 1`
/// with `U` the Mann–Whitney statistic of `a` (ties as ½).
///
/// With `a` the original times and `b` the patched ones, δ > 0 means the
/// patched version tends to be faster. Runs in O((n + m) log(n + m)): both
/// samples are sorted and merged, and the counts are exact integers.
/// Values compare with IEEE `<` (so `-0.0` ties with `0.0`).
///
/// Errors: an empty or non-finite series (`a` or `b`).
///
/// ```
/// use etip_stats::cliffs_delta;
/// assert_eq!(cliffs_delta(&[4.0, 5.0], &[1.0, 2.0])?, 1.0);
/// assert_eq!(cliffs_delta(&[3.0, 4.0, 5.0], &[1.0, 2.0, 3.0, 4.0])?, 2.0 / 3.0);
/// # Ok::<(), etip_stats::StatsError>(())
/// ```
pub fn cliffs_delta(a: &[f64], b: &[f64]) -> Result<f64, StatsError> {
    check_finite("a", a, 1)?;
    check_finite("b", b, 1)?;
    let (sa, sb) = (sorted_copy(a), sorted_copy(b));
    let m = sb.len();
    // For each a_i in ascending order: `lt` = #{b < a_i}, `le` = #{b <= a_i};
    // both only move forward.
    let (mut lt, mut le) = (0usize, 0usize);
    let mut sum: i128 = 0;
    for &x in &sa {
        while lt < m && sb[lt] < x {
            lt += 1;
        }
        while le < m && sb[le] <= x {
            le += 1;
        }
        // #{b < x} - #{b > x}
        sum += lt as i128 - (m - le) as i128;
    }
    let pairs = sa.len() as i128 * m as i128;
    Ok(sum as f64 / pairs as f64)
}

/// Median paired ratio with a bootstrap interval, see [`paired_ratio_ci`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedRatio {
    /// Median (numpy) of `p_j / o_j` over the rounds (`0/0` counts as 1,
    /// `p/0` as +∞); below 1 means the patched version is faster.
    pub estimate: f64,
    /// The `(1 - level)/2` quantile of the resampled medians.
    pub lower: f64,
    /// The `(1 + level)/2` quantile of the resampled medians.
    pub upper: f64,
    /// Confidence level actually used (clamped to `[0, 1]`).
    pub level: f64,
    /// Number of resamples.
    pub resamples: usize,
}

/// numpy-linear quantile of sorted values that may include `+inf`: identical
/// to numpy for finite neighbours; with an infinite upper neighbour it takes
/// the limit (`a` when the weight on it is 0, else `+inf`) instead of numpy's
/// `inf - inf = NaN`.
fn quantile_sorted_inf(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n >= 2 && (0.0..=1.0).contains(&q) {
        let virtual_index = (n - 1) as f64 * q;
        if virtual_index < (n - 1) as f64 {
            let previous = virtual_index.floor();
            let (a, b) = (sorted[previous as usize], sorted[previous as usize + 1]);
            if b.is_infinite() {
                return if a == b || virtual_index == previous {
                    a
                } else {
                    b
                };
            }
        }
    }
    quantile_sorted(sorted, q)
}

/// Median of the paired ratios `p_j / o_j` (`0/0 = 1`, `p/0 = +∞`) with a
/// percentile bootstrap interval that resamples *pairs*: each of `resamples`
/// rounds draws `n` round indices with replacement (so `o_j` and `p_j` stay
/// together) and records the median ratio of the drawn rounds; the bounds are
/// numpy-linear quantiles of those medians (as in
/// [`bootstrap_speedup_ci`](crate::bootstrap_speedup_ci); an infinite ratio
/// is handled by its limit rather than numpy's NaN). Deterministic for a given
/// `seed` (ChaCha20).
///
/// `level` is clamped into `[0, 1]` (NaN gives NaN bounds); with
/// `resamples == 0` both bounds equal the estimate. This function does not
/// fail: when the series differ in length, are empty or hold a negative or
/// non-finite time, every number of the result is NaN (validate first with
/// [`sign_test_with`](crate::sign_test_with) to get the reason).
///
/// ```
/// use etip_stats::paired_ratio_ci;
/// let original = [1.00, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1.00];
/// let patched = [0.90, 0.93, 0.88, 0.90, 0.90, 0.92, 0.88, 0.91];
/// let r = paired_ratio_ci(&original, &patched, 0.95, 2000, 7);
/// assert!(r.lower <= r.estimate && r.estimate <= r.upper);
/// assert!(r.lower > 0.88 && r.upper < 0.93);
/// ```
pub fn paired_ratio_ci(
    original: &[f64],
    patched: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> PairedRatio {
    let level = level.clamp(0.0, 1.0);
    let valid = original.len() == patched.len()
        && check_times("original", original, 1).is_ok()
        && check_times("patched", patched, 1).is_ok();
    if !valid {
        return PairedRatio {
            estimate: f64::NAN,
            lower: f64::NAN,
            upper: f64::NAN,
            level,
            resamples,
        };
    }
    let ratios = pair_ratios(original, patched);
    let estimate = median_sorted(&sorted_copy(&ratios));
    if resamples == 0 {
        return PairedRatio {
            estimate,
            lower: estimate,
            upper: estimate,
            level,
            resamples,
        };
    }
    let n = ratios.len();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut draw = vec![0.0; n];
    let mut medians: Vec<f64> = (0..resamples)
        .map(|_| {
            for d in draw.iter_mut() {
                *d = ratios[rng.random_range(0..n)];
            }
            draw.sort_unstable_by(f64::total_cmp);
            median_sorted(&draw)
        })
        .collect();
    medians.sort_unstable_by(f64::total_cmp);
    PairedRatio {
        estimate,
        lower: quantile_sorted_inf(&medians, (1.0 - level) / 2.0),
        upper: quantile_sorted_inf(&medians, (1.0 + level) / 2.0),
        level,
        resamples,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mwu::{Alternative, MwuMethod, mann_whitney_u};
    use rand_chacha::ChaCha8Rng;

    fn brute_delta(a: &[f64], b: &[f64]) -> f64 {
        let mut s = 0i64;
        for x in a {
            for y in b {
                s += i64::from(x > y) - i64::from(x < y);
            }
        }
        s as f64 / (a.len() * b.len()) as f64
    }

    #[test]
    fn cliffs_delta_hand_values() {
        let d = |a: &[f64], b: &[f64]| cliffs_delta(a, b).expect("valid");
        assert_eq!(d(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), 0.0);
        assert_eq!(d(&[4.0, 5.0], &[1.0, 2.0]), 1.0);
        assert_eq!(d(&[1.0, 2.0], &[4.0, 5.0]), -1.0);
        // a=3: +2 -1, a=4: +3, a=5: +4 -> 8/12.
        assert_eq!(d(&[3.0, 4.0, 5.0], &[1.0, 2.0, 3.0, 4.0]), 2.0 / 3.0);
        assert_eq!(d(&[5.0, 3.0, 4.0], &[4.0, 1.0, 3.0, 2.0]), 2.0 / 3.0);
        // Single pairs and ties, including -0.0 == 0.0.
        assert_eq!(d(&[2.0], &[1.0]), 1.0);
        assert_eq!(d(&[0.0], &[-0.0]), 0.0);
        assert_eq!(d(&[1.0, 1.0, 1.0], &[1.0]), 0.0);
        // (-1 + 0 + 1) / 3
        assert_eq!(d(&[1.0, 2.0, 3.0], &[2.0]), 0.0);
        assert!(matches!(
            cliffs_delta(&[], &[1.0]),
            Err(StatsError::TooFewPoints { name: "a", .. })
        ));
        assert!(matches!(
            cliffs_delta(&[1.0], &[f64::NAN]),
            Err(StatsError::NotFinite { name: "b", .. })
        ));
    }

    #[test]
    fn cliffs_delta_matches_brute_force_and_mann_whitney() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for trial in 0..300 {
            let n = rng.random_range(1..40);
            let m = rng.random_range(1..40);
            // Small integer grids force many ties; some trials are continuous.
            let grid = trial % 3 != 0;
            let mut draw = |k: usize| -> Vec<f64> {
                (0..k)
                    .map(|_| {
                        if grid {
                            f64::from(rng.random_range(0..6u32))
                        } else {
                            rng.random::<f64>()
                        }
                    })
                    .collect()
            };
            let a = draw(n);
            let b = draw(m);
            let fast = cliffs_delta(&a, &b).expect("valid");
            assert_eq!(fast, brute_delta(&a, &b), "a={a:?} b={b:?}");
            assert_eq!(cliffs_delta(&b, &a).expect("valid"), -fast);
            // Independent reference: scipy's U (our mann_whitney_u matches it).
            let u = mann_whitney_u(&a, &b, Alternative::Greater, MwuMethod::Asymptotic)
                .expect("valid")
                .u;
            let via_u = 2.0 * u / (n * m) as f64 - 1.0;
            assert!((fast - via_u).abs() < 1e-12, "{fast} vs {via_u}");
        }
    }

    #[test]
    fn paired_ratio_estimate_and_special_ratios() {
        let r = paired_ratio_ci(&[2.0, 4.0, 1.0], &[1.0, 3.0, 1.0], 0.9, 0, 1);
        // ratios 0.5, 0.75, 1.0
        assert_eq!((r.estimate, r.lower, r.upper), (0.75, 0.75, 0.75));
        // 0/0 -> 1, p/0 -> inf; median of [0.5, 1, inf, inf] = (1 + inf)/2 = inf.
        let r = paired_ratio_ci(&[2.0, 0.0, 0.0, 0.0], &[1.0, 0.0, 1.0, 2.0], 0.9, 200, 1);
        assert_eq!(r.estimate, f64::INFINITY);
        assert!(!r.lower.is_nan() && !r.upper.is_nan(), "{r:?}");
        assert!(r.lower <= r.upper);
        let r = paired_ratio_ci(&[2.0, 0.0, 1.0], &[1.0, 0.0, 1.0], 0.9, 200, 1);
        assert_eq!(r.estimate, 1.0);
        // Constant ratios give a degenerate interval.
        let o: Vec<f64> = (1..=20).map(f64::from).collect();
        let p: Vec<f64> = o.iter().map(|x| 0.8 * x).collect();
        let r = paired_ratio_ci(&o, &p, 0.95, 300, 5);
        let want = p[0] / o[0];
        assert!(
            r.estimate == want && r.lower == want && r.upper == want,
            "{r:?}"
        );
        // Invalid input gives NaN, never a panic.
        for (o, p) in [
            (&[1.0][..], &[1.0, 2.0][..]),
            (&[][..], &[][..]),
            (&[-1.0][..], &[1.0][..]),
        ] {
            let r = paired_ratio_ci(o, p, 0.95, 10, 1);
            assert!(r.estimate.is_nan() && r.lower.is_nan() && r.upper.is_nan());
        }
        assert_eq!(quantile_sorted_inf(&[1.0, f64::INFINITY], 0.0), 1.0);
        assert_eq!(
            quantile_sorted_inf(&[1.0, f64::INFINITY], 0.5),
            f64::INFINITY
        );
        assert_eq!(quantile_sorted_inf(&[1.0, 2.0, 4.0], 0.75), 3.0);
    }

    #[test]
    fn paired_ratio_bootstrap_matches_exact_resampling_law() {
        // Ratios 0.8, 0.9, 1.0: the median of 3 draws is 0.8 with probability
        // 7/27, 0.9 with 13/27, 1.0 with 7/27. So the 5%/95% quantiles are 0.8
        // and 1.0, and the 30%/70% quantiles are both 0.9.
        let o = [1.0, 1.0, 1.0];
        let p = [0.8, 0.9, 1.0];
        let wide = paired_ratio_ci(&o, &p, 0.9, 20_000, 3);
        assert_eq!((wide.lower, wide.estimate, wide.upper), (0.8, 0.9, 1.0));
        let narrow = paired_ratio_ci(&o, &p, 0.4, 20_000, 3);
        assert_eq!((narrow.lower, narrow.upper), (0.9, 0.9));
        // Pairs are resampled together: swapping the rounds' order changes nothing
        // in law, and the same seed gives the same numbers.
        assert_eq!(
            paired_ratio_ci(&o, &p, 0.9, 500, 9),
            paired_ratio_ci(&o, &p, 0.9, 500, 9)
        );
        let o2: Vec<f64> = (0..24).map(|i| 1.0 + 0.05 * f64::from(i).sin()).collect();
        let p2: Vec<f64> = (0..24)
            .map(|i| 0.9 + 0.05 * (1.7 * f64::from(i)).cos())
            .collect();
        let a = paired_ratio_ci(&o2, &p2, 0.9, 500, 42);
        // The resampled medians take few distinct values, so compare small runs.
        let few = |seed| paired_ratio_ci(&o2, &p2, 0.9, 20, seed);
        assert!(
            (43..48)
                .any(|seed| (few(seed).lower, few(seed).upper) != (few(42).lower, few(42).upper))
        );
        assert!(a.lower <= a.estimate && a.estimate <= a.upper, "{a:?}");
        let w = paired_ratio_ci(&o2, &p2, 0.99, 500, 42);
        assert!(w.lower <= a.lower && w.upper >= a.upper);
        let json = serde_json::to_string(&a).expect("serialisable");
        let back: PairedRatio = serde_json::from_str(&json).expect("round trip");
        assert_eq!(back, a);
    }
}
