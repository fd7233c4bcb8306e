//! SWE-Perf's minimum-gain δ (rules §4.1).

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

/// Incremental ranking of `{b_i · f} ∪ p` for a non-increasing sequence of
/// factors `f >= 0` (the δ scan).
///
/// `b` and `p` are sorted once. For each base value the scan keeps
/// `k_i = #{j : p_j < b_i·f}`; as f shrinks, `b_i·f` can only decrease
/// (rounding is monotone), so each `k_i` only moves down, and its total
/// movement over the whole scan is at most `n_p`. Without ties between the
/// scaled base and `p`, and without new ties inside the scaled base (distinct
/// values that round to the same product), `U1 = Σ k_i` and the tie term is the
/// constant tie term of `b` plus that of `p`; a step where either kind of tie
/// occurs falls back to the full merge of [`rank_stats`]. Each step is thus
/// O(n_b) with well-predicted branches, plus the pointer movement.
struct Scan<'a> {
    b: &'a [f64],
    p: &'a [f64],
    /// `k_i` for the previous factor; `None` before the first step.
    k: Option<Vec<usize>>,
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
            k: None,
            scaled: Vec::with_capacity(b.len()),
            static_tie_term,
        }
    }

    /// Rank statistics of `{b_i · factor} ∪ p`; `factor` must not exceed the
    /// previous one.
    fn step(&mut self, factor: f64) -> RankStats {
        let (b, p) = (self.b, self.p);
        self.scaled.clear();
        self.scaled.extend(b.iter().map(|v| v * factor));
        let scaled = &self.scaled;
        let k = self.k.get_or_insert_with(|| {
            // First step: one merge pass.
            let mut j = 0;
            scaled
                .iter()
                .map(|&s| {
                    while j < p.len() && p[j] < s {
                        j += 1;
                    }
                    j
                })
                .collect()
        });
        let mut sum_k: u64 = 0;
        let mut irregular = false;
        for (ki, &s) in k.iter_mut().zip(scaled) {
            let mut kk = *ki;
            while kk > 0 && p[kk - 1] >= s {
                kk -= 1;
            }
            *ki = kk;
            irregular |= kk < p.len() && p[kk] == s;
            sum_k += kk as u64;
        }
        for (w, bw) in scaled.windows(2).zip(b.windows(2)) {
            irregular |= w[0] == w[1] && bw[0] != bw[1];
        }
        if irregular {
            return rank_stats(scaled, p);
        }
        RankStats {
            u1: sum_k as f64,
            tie_term: self.static_tie_term,
            has_ties: self.static_tie_term > 0.0,
        }
    }
}

/// The literal rules §4.1 scan: one complete Mann–Whitney test (copy, sort, rank) per step.
///
/// Same inputs, grid, filter and result as [`sweperf_delta`], which computes each step incrementally and
/// is several times faster. This one exists as the baseline that `sweperf_delta` is checked against
/// (tests) and measured against (benchmarks).
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
    fn incremental_scan_equals_full_merge() {
        // Ties inside each sample, ties across samples at some factors, and a
        // zero factor where every base value collapses to 0.
        let b = sorted_copy(&[1.0, 1.0, 1.5, 2.0, 2.5, 3.0, 3.0, 4.0]);
        let p = sorted_copy(&[0.5, 0.75, 1.0, 1.5, 1.5, 2.0, 3.0]);
        let mut scan = Scan::new(&b, &p);
        for i in 0..=1000 {
            let f = 1.0 - i as f64 / 1000.0;
            let scaled: Vec<f64> = b.iter().map(|v| v * f).collect();
            let want = rank_stats(&scaled, &p);
            let got = scan.step(f);
            assert_eq!(
                (got.u1, got.tie_term, got.has_ties),
                (want.u1, want.tie_term, want.has_ties),
                "factor {f}"
            );
        }
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
