//! Percentile bootstrap confidence interval of a speedup (SWE-fficiency's
//! ratio of means).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use crate::sample::{Sample, quantile_sorted, sorted_copy};

/// A point estimate with a bootstrap confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bootstrap {
    /// `mean(before) / mean(after)` on the full samples.
    pub estimate: f64,
    /// Lower bound: the `(1 - level)/2` quantile of the resampled ratios.
    pub lower: f64,
    /// Upper bound: the `(1 + level)/2` quantile of the resampled ratios.
    pub upper: f64,
    /// Confidence level actually used (clamped to `[0, 1]`).
    pub level: f64,
    /// Number of resamples.
    pub resamples: usize,
}

fn resampled_mean(rng: &mut ChaCha20Rng, xs: &[f64]) -> f64 {
    let n = xs.len();
    let mut sum = 0.0;
    for _ in 0..n {
        sum += xs[rng.random_range(0..n)];
    }
    sum / n as f64
}

/// Speedup `mean(before) / mean(after)` with a percentile bootstrap interval:
/// each of `resamples` rounds draws both samples independently with
/// replacement (same sizes) and records the ratio of their means; the bounds
/// are numpy-linear quantiles of those ratios. Deterministic for a given
/// `seed` (ChaCha20).
///
/// `level` is clamped into `[0, 1]` (NaN gives NaN bounds); with
/// `resamples == 0` both bounds equal the estimate. A mean of 0 in `after`
/// gives an infinite ratio.
///
/// ```
/// use etip_stats::{bootstrap_speedup_ci, Sample};
/// let before = Sample::new(vec![2.0, 2.1, 1.9, 2.05, 1.95])?;
/// let after = Sample::new(vec![1.0, 1.05, 0.95, 1.02, 0.98])?;
/// let b = bootstrap_speedup_ci(&before, &after, 0.95, 2000, 7);
/// assert!(b.lower < b.estimate && b.estimate < b.upper);
/// assert!(b.lower > 1.8 && b.upper < 2.2);
/// # Ok::<(), etip_stats::StatsError>(())
/// ```
pub fn bootstrap_speedup_ci(
    before: &Sample,
    after: &Sample,
    level: f64,
    resamples: usize,
    seed: u64,
) -> Bootstrap {
    let level = level.clamp(0.0, 1.0);
    let estimate = before.mean() / after.mean();
    if resamples == 0 {
        return Bootstrap {
            estimate,
            lower: estimate,
            upper: estimate,
            level,
            resamples,
        };
    }
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let ratios: Vec<f64> = (0..resamples)
        .map(|_| {
            let b = resampled_mean(&mut rng, before.as_slice());
            let a = resampled_mean(&mut rng, after.as_slice());
            b / a
        })
        .collect();
    let ratios = sorted_copy(&ratios);
    Bootstrap {
        estimate,
        lower: quantile_sorted(&ratios, (1.0 - level) / 2.0),
        upper: quantile_sorted(&ratios, (1.0 + level) / 2.0),
        level,
        resamples,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_ordered() {
        let before =
            Sample::new((0..30).map(|i| 2.0 + (i % 7) as f64 * 0.03).collect()).expect("valid");
        let after =
            Sample::new((0..30).map(|i| 1.0 + (i % 5) as f64 * 0.02).collect()).expect("valid");
        let a = bootstrap_speedup_ci(&before, &after, 0.9, 500, 42);
        let b = bootstrap_speedup_ci(&before, &after, 0.9, 500, 42);
        assert_eq!(a, b);
        let c = bootstrap_speedup_ci(&before, &after, 0.9, 500, 43);
        assert_ne!(a.lower, c.lower);
        assert!(a.lower <= a.estimate && a.estimate <= a.upper, "{a:?}");
        let wide = bootstrap_speedup_ci(&before, &after, 0.99, 500, 42);
        assert!(wide.lower <= a.lower && wide.upper >= a.upper);
        let none = bootstrap_speedup_ci(&before, &after, 0.9, 0, 42);
        assert_eq!((none.lower, none.upper), (none.estimate, none.estimate));
    }
}
