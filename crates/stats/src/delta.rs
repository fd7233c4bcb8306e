//! SWE-Perf's minimum-gain δ (rules §4.1): the linear scan over x, each step ranked by one merge
//! of the two sorted samples (O(n_base + n_patched) per step), and the literal scan as its baseline.

use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_times};
use crate::mwu::{Alternative, ExactDist, MwuMethod, RankStats, p_value, rank_stats};
use crate::sample::{iqr_filter, sorted_copy};

/// Parameters of the δ search. The defaults are SWE-Perf's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DeltaConfig {
    /// Step of x (0.001).
    pub step: f64,
    /// Largest x tried (1.0); must be in `[0, 1]`.
    pub max: f64,
    /// Significance threshold: x is kept while p < this (0.1).
    pub p_threshold: f64,
    /// IQR outlier filter applied to each sample first (`Some(1.0)`); `None`
    /// disables it.
    pub iqr_k: Option<f64>,
}

impl Default for DeltaConfig {
    fn default() -> Self {
        DeltaConfig {
            step: 0.001,
            max: 1.0,
            p_threshold: 0.1,
            iqr_k: Some(1.0),
        }
    }
}

impl DeltaConfig {
    /// Validates the configuration and returns the grid of x values.
    fn grid(&self) -> Result<Grid, StatsError> {
        let bad = |what: String| Err(StatsError::InvalidParameter(what));
        if !(self.step.is_finite() && self.step > 0.0) {
            return bad(format!(
                "delta step must be a positive number, got {}",
                self.step
            ));
        }
        if !(0.0..=1.0).contains(&self.max) {
            return bad(format!(
                "delta max must be in [0, 1] (base is scaled by 1 - x), got {}",
                self.max
            ));
        }
        if !(self.p_threshold > 0.0 && self.p_threshold <= 1.0) {
            return bad(format!(
                "delta p_threshold must be in (0, 1], got {}",
                self.p_threshold
            ));
        }
        if let Some(k) = self.iqr_k
            && !(k.is_finite() && k >= 0.0)
        {
            return bad(format!(
                "IQR factor k must be a finite number >= 0, got {k}"
            ));
        }
        let steps = (self.max / self.step * (1.0 + 1e-12)).floor();
        if steps > 1e7 {
            return bad(format!(
                "delta search of {steps} steps is too fine (step {} for max {}); use step >= max/1e7",
                self.step, self.max
            ));
        }
        let inverse = 1.0 / self.step;
        let divisor = inverse.round();
        let divisor = ((inverse - divisor).abs() <= 1e-9 * inverse).then_some(divisor);
        Ok(Grid {
            steps: steps as usize,
            step: self.step,
            divisor,
        })
    }
}

/// x values of the δ search: `x_i` for `i = 0..=steps`.
struct Grid {
    steps: usize,
    step: f64,
    /// `1/step` when it is an integer: then `x_i = i / divisor`, which for the
    /// default step is exactly Python's `i / 1000` (no accumulated rounding).
    divisor: Option<f64>,
}

impl Grid {
    fn x(&self, i: usize) -> f64 {
        match self.divisor {
            Some(d) => i as f64 / d,
            None => i as f64 * self.step,
        }
    }
}

/// Checks both samples, makes the grid and applies the configured IQR filter (shared by the search
/// and the literal definition).
fn prepare(
    base: &[f64],
    patched: &[f64],
    cfg: &DeltaConfig,
) -> Result<(Grid, Vec<f64>, Vec<f64>), StatsError> {
    check_times("base", base, 1)?;
    check_times("patched", patched, 1)?;
    let grid = cfg.grid()?;
    let (b, p) = match cfg.iqr_k {
        Some(k) => (iqr_filter(base, k), iqr_filter(patched, k)),
        None => (base.to_vec(), patched.to_vec()),
    };
    // Possible only with a tiny k (e.g. k = 0 on two distinct points).
    check_times("base after the IQR filter", &b, 1)?;
    check_times("patched after the IQR filter", &p, 1)?;
    Ok((grid, b, p))
}

/// SWE-Perf δ (minimum gain) of one efficiency test (rules §4.1).
///
/// After the optional IQR filter on each sample, x runs over
/// `0, step, 2·step, ..., max` (computed as `i / (1/step)` when `1/step` is an
/// integer, so the default grid is exactly `i/1000`, else as `i·step`); while
/// `mannwhitneyu(base·(1 - x), patched, alternative='greater')` (scipy
/// defaults: `method='auto'`, continuity correction) has `p < p_threshold`,
/// x is recorded; the search stops at the first x that is not significant.
/// δ is the last recorded x (0 when x = 0 is already not significant).
/// Significance is not monotone in x for all data, so this is a linear scan,
/// never a bisection.
///
/// Cost: the samples are filtered and sorted once, then each step is one merge of
/// the sorted samples, O(n_base + n_patched) (200 000 runs per version: a
/// fraction of a second for a 10 % gain, ~100 steps); the result is bit for bit
/// that of [`sweperf_delta_reference`], the literal scan.
///
/// Both samples need at least one point, finite and non-negative.
///
/// ```
/// use etip_stats::{sweperf_delta, DeltaConfig};
/// let base: Vec<f64> = (0..20).map(|i| 2.0 + 0.01 * i as f64).collect();
/// let patched: Vec<f64> = (0..20).map(|i| 1.0 + 0.01 * i as f64).collect();
/// let d = sweperf_delta(&base, &patched, &DeltaConfig::default())?;
/// assert!(d > 0.4 && d < 0.6);
/// # Ok::<(), etip_stats::StatsError>(())
/// ```
pub fn sweperf_delta(base: &[f64], patched: &[f64], cfg: &DeltaConfig) -> Result<f64, StatsError> {
    let (grid, b, p) = prepare(base, patched, cfg)?;
    let b = sorted_copy(&b);
    let p = sorted_copy(&p);
    let (n1, n2) = (b.len(), p.len());
    let mut scan = Scan::new(&b, &p);
    let mut cache: Option<ExactDist> = None;
    let mut delta = 0.0;
    for i in 0..=grid.steps {
        let x = grid.x(i);
        // base·(1 - x) exactly as numpy computes it.
        let rs = scan.step(1.0 - x);
        let (pv, _) = p_value(
            &rs,
            n1,
            n2,
            Alternative::Greater,
            MwuMethod::Auto,
            &mut cache,
            true,
        )?;
        if pv < cfg.p_threshold {
            delta = x;
        } else {
            break;
        }
    }
    Ok(delta)
}

/// Rank statistics of `{b_i · f} ∪ p` for the factors `f = 1 − x` of the δ scan, one merge of
/// the two sorted samples per factor: O(n_b + n_p) per step, whatever the factor.
///
/// `b` and `p` are sorted once; for `f >= 0` the scaled base `b_i · f` is sorted too (rounding
/// is monotone). One pass with a pointer into `p` gives `k_i = #{j : p_j < b_i·f}`. Without
/// ties between the scaled base and `p`, and without new ties inside the scaled base (distinct
/// values that round to the same product), `U1 = Σ k_i` exactly and the tie term is the
/// constant tie term of `b` plus that of `p`. A step where either kind of tie occurs is ranked
/// by the full merge of [`rank_stats`] instead (average ranks: a tie between the samples counts
/// ½ in U1, and the pooled tie groups give the variance's tie term), also O(n_b + n_p). Either
/// way the result is exactly [`rank_stats`] of the scaled and the patched sample.
struct Scan<'a> {
    b: &'a [f64],
    p: &'a [f64],
    /// Scaled base values, for the steps that need the full merge.
    scaled: Vec<f64>,
    /// Tie term of `b` alone plus `p` alone.
    static_tie_term: f64,
}

impl<'a> Scan<'a> {
    fn new(b: &'a [f64], p: &'a [f64]) -> Scan<'a> {
        let static_tie_term = rank_stats(b, &[]).tie_term + rank_stats(p, &[]).tie_term;
        Scan {
            b,
            p,
            scaled: Vec::with_capacity(b.len()),
            static_tie_term,
        }
    }

    /// Rank statistics of `{b_i · factor} ∪ p`; any factor, in any order.
    fn step(&mut self, factor: f64) -> RankStats {
        let (b, p) = (self.b, self.p);
        if factor >= 0.0
            && let Some(u1) = Self::regular_u1(b, p, factor)
        {
            return RankStats {
                u1,
                tie_term: self.static_tie_term,
                has_ties: self.static_tie_term > 0.0,
            };
        }
        self.scaled.clear();
        self.scaled.extend(b.iter().map(|v| v * factor));
        if factor < 0.0 {
            // Never on the δ grid (x <= 1); kept exact anyway.
            self.scaled.sort_unstable_by(f64::total_cmp);
        }
        rank_stats(&self.scaled, p)
    }

    /// `U1 = Σ_i #{j : p_j < b_i·factor}` by one merge, if no scaled value equals a patched one
    /// and scaling made no new tie inside the base; `None` otherwise. `factor >= 0`.
    fn regular_u1(b: &[f64], p: &[f64], factor: f64) -> Option<f64> {
        let mut j = 0;
        let mut u1: u64 = 0;
        let mut previous: Option<(f64, f64)> = None;
        for &bi in b {
            let s = bi * factor;
            while j < p.len() && p[j] < s {
                j += 1;
            }
            if j < p.len() && p[j] == s {
                return None;
            }
            if let Some((prev_b, prev_s)) = previous
                && prev_s == s
                && prev_b != bi
            {
                return None;
            }
            previous = Some((bi, s));
            u1 += j as u64;
        }
        Some(u1 as f64)
    }
}

/// The literal rules §4.1 scan: one complete Mann–Whitney test (copy, sort, rank) per step.
///
/// Same inputs, grid, filter and result as [`sweperf_delta`], which sorts once and ranks each step by
/// one merge, and is several times faster (an O(n log n) sort per step here). This one exists as the
/// baseline that `sweperf_delta` is checked against (tests) and measured against (benchmarks).
pub fn sweperf_delta_reference(
    base: &[f64],
    patched: &[f64],
    cfg: &DeltaConfig,
) -> Result<f64, StatsError> {
    let (grid, b, p) = prepare(base, patched, cfg)?;
    let mut delta = 0.0;
    for i in 0..=grid.steps {
        let x = grid.x(i);
        let scaled: Vec<f64> = b.iter().map(|v| v * (1.0 - x)).collect();
        let r = crate::mwu::mann_whitney_u(&scaled, &p, Alternative::Greater, MwuMethod::Auto)?;
        if r.p_value < cfg.p_threshold {
            delta = x;
        } else {
            break;
        }
    }
    Ok(delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(base: &[f64], patched: &[f64]) -> f64 {
        sweperf_delta_reference(base, patched, &DeltaConfig::default()).expect("valid input")
    }

    #[test]
    fn fast_scan_equals_naive_scan() {
        let base: Vec<f64> = (0..20)
            .map(|i| 3.0 + ((i * 7) % 11) as f64 * 0.05)
            .collect();
        let patched: Vec<f64> = (0..20)
            .map(|i| 2.0 + ((i * 5) % 13) as f64 * 0.05)
            .collect();
        let fast = sweperf_delta(&base, &patched, &DeltaConfig::default()).expect("valid");
        assert_eq!(fast, naive(&base, &patched));
        assert!(fast > 0.0);
    }

    #[test]
    fn merge_scan_equals_full_merge() {
        // Ties inside each sample, ties across samples at some factors, and a
        // zero factor where every base value collapses to 0.
        let b = sorted_copy(&[1.0, 1.0, 1.5, 2.0, 2.5, 3.0, 3.0, 4.0]);
        let p = sorted_copy(&[0.5, 0.75, 1.0, 1.5, 1.5, 2.0, 3.0]);
        let mut scan = Scan::new(&b, &p);
        // The grid in order, then factors in any order (each step is independent), and a
        // negative factor (never on the grid), which reverses the scaled base.
        let factors = (0..=1000)
            .map(|i| 1.0 - i as f64 / 1000.0)
            .chain([0.5, 1.0, 0.25, 2.0, 0.0, 0.75, -0.5]);
        for f in factors {
            let scaled = sorted_copy(&b.iter().map(|v| v * f).collect::<Vec<_>>());
            let want = rank_stats(&scaled, &p);
            let got = scan.step(f);
            assert_eq!(
                (got.u1, got.tie_term, got.has_ties),
                (want.u1, want.tie_term, want.has_ties),
                "factor {f}"
            );
        }
    }

    /// Deterministic uniform numbers in [0, 1).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn merge_scan_equals_the_literal_scan() {
        // Sizes on both sides of scipy's exact/asymptotic switch (8), continuous and rounded
        // (timer-resolution ties within and across the samples), gains from none to 90 %, and
        // three configurations (default, no IQR filter, a step whose inverse is not an integer).
        let mut rng = Lcg(3);
        let configs = [
            DeltaConfig::default(),
            DeltaConfig {
                iqr_k: None,
                ..DeltaConfig::default()
            },
            DeltaConfig {
                step: 0.003,
                p_threshold: 0.05,
                ..DeltaConfig::default()
            },
        ];
        for n in [3usize, 8, 9, 10, 25, 60, 200] {
            for round in [None, Some(1.0), Some(100.0)] {
                for gain in [0.0, 0.1, 0.5, 1.0] {
                    let mut series = |level: f64| -> Vec<f64> {
                        (0..n)
                            .map(|_| {
                                let v = level + 0.3 * rng.next();
                                round.map_or(v, |r| (v * r).round() / r)
                            })
                            .collect()
                    };
                    let base = series(1.0);
                    let patched = series(1.0 - 0.9 * gain);
                    for cfg in &configs {
                        let want = sweperf_delta_reference(&base, &patched, cfg);
                        let got = sweperf_delta(&base, &patched, cfg);
                        assert_eq!(got, want, "n {n} round {round:?} gain {gain} {cfg:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn zero_readings_and_heavy_ties_follow_the_literal_scan() {
        // Timer readings of 0 (a class too fast to time on one side) and heavy ties.
        let base: Vec<f64> = (0..40).map(|i| f64::from(i % 4) * 0.001).collect();
        let patched: Vec<f64> = (0..40).map(|i| f64::from(i % 2) * 0.001).collect();
        let zeros = vec![0.0; 20];
        let cfg = DeltaConfig::default();
        for (b, p) in [
            (&base, &patched),
            (&patched, &base),
            (&base, &base),
            (&base, &zeros),
            (&zeros, &base),
        ] {
            assert_eq!(
                sweperf_delta(b, p, &cfg),
                sweperf_delta_reference(b, p, &cfg)
            );
        }
        // Errors are those of the literal scan too.
        let mut bad = vec![1.0; 20];
        bad[3] = -1.0;
        assert_eq!(
            sweperf_delta(&bad, &zeros, &cfg),
            sweperf_delta_reference(&bad, &zeros, &cfg)
        );
    }

    #[test]
    fn no_gain_gives_zero() {
        let xs: Vec<f64> = (0..20).map(|i| 1.0 + i as f64 * 0.01).collect();
        assert_eq!(
            sweperf_delta(&xs, &xs, &DeltaConfig::default()).expect("valid"),
            0.0
        );
    }

    #[test]
    fn grid_is_exact_thousandths() {
        let grid = DeltaConfig::default().grid().expect("defaults are valid");
        assert_eq!(grid.steps, 1000);
        for i in 0..=1000 {
            assert_eq!(grid.x(i), i as f64 / 1000.0);
        }
        let coarse = DeltaConfig {
            step: 0.25,
            max: 0.6,
            ..DeltaConfig::default()
        };
        let grid = coarse.grid().expect("valid");
        assert_eq!(grid.steps, 2);
        assert_eq!((grid.x(1), grid.x(2)), (0.25, 0.5));
        let odd = DeltaConfig {
            step: 0.003,
            ..DeltaConfig::default()
        };
        let grid = odd.grid().expect("valid");
        assert_eq!(grid.steps, 333);
        assert_eq!(grid.x(333), 333.0 * 0.003);
    }

    #[test]
    fn empty_after_filter_is_an_error() {
        let cfg = DeltaConfig {
            iqr_k: Some(0.0),
            ..DeltaConfig::default()
        };
        assert!(matches!(
            sweperf_delta(&[1.0, 2.0], &[1.0, 2.0], &cfg),
            Err(StatsError::TooFewPoints { len: 0, .. })
        ));
    }

    #[test]
    fn rejects_bad_config() {
        let cfg = DeltaConfig {
            max: 1.5,
            ..DeltaConfig::default()
        };
        assert!(matches!(
            sweperf_delta(&[1.0, 2.0], &[1.0, 2.0], &cfg),
            Err(StatsError::InvalidParameter(_))
        ));
        assert!(matches!(
            sweperf_delta(&[1.0, -2.0], &[1.0, 2.0], &DeltaConfig::default()),
            Err(StatsError::Negative {
                name: "base",
                index: 1,
                ..
            })
        ));
    }
}
