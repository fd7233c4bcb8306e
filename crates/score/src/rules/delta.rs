//! SWE-Perf's minimum-gain δ for large samples.
//!
//! `etip_stats::sweperf_delta` keeps, for each base run, a pointer into the sorted patched runs and
//! walks it down one position at a time as the factor `1 - x` shrinks: each step of the search costs
//! the number of patched runs the scaled base runs pass, which for dense samples is O(n_b · n_p · step)
//! per step (about 6 s for 200 000 runs per version). This module computes the same δ — the same grid,
//! the same IQR filter, the same rank statistics, tie handling and floating-point evaluation of the
//! normal approximation — with one merge of the two sorted samples per step: O(n log n) for the sort
//! plus O(n) per step, at most 1 + max/step steps.
//!
//! Samples with at most 8 runs on a side (after the IQR filter), where scipy's `auto` method may pick
//! the exact distribution, and invalid inputs, go to `etip_stats::sweperf_delta` itself; so do
//! invalid configurations, whose errors come from it.

use etip_stats::{DeltaConfig, StatsError, iqr_filter, normal_cdf};

/// Above this many runs on both sides, the Mann–Whitney p-value is always the normal approximation.
const EXACT_MAX: usize = 8;

/// SWE-Perf δ of one efficiency test; equal to `etip_stats::sweperf_delta`.
pub(crate) fn sweperf_delta(
    base: &[f64],
    patched: &[f64],
    cfg: &DeltaConfig,
) -> Result<f64, StatsError> {
    let delegate = || etip_stats::sweperf_delta(base, patched, cfg);
    if base.len() <= EXACT_MAX || patched.len() <= EXACT_MAX || !valid(base) || !valid(patched) {
        return delegate();
    }
    // The configuration is validated by etip_stats (one step on one point each).
    etip_stats::sweperf_delta(&[1.0], &[1.0], cfg)?;
    let (mut b, mut p) = match cfg.iqr_k {
        Some(k) => (iqr_filter(base, k), iqr_filter(patched, k)),
        None => (base.to_vec(), patched.to_vec()),
    };
    if b.len() <= EXACT_MAX || p.len() <= EXACT_MAX {
        return delegate();
    }
    b.sort_unstable_by(f64::total_cmp);
    p.sort_unstable_by(f64::total_cmp);
    let (n1, n2) = (b.len(), p.len());
    let static_tie_term = rank_stats(&b, &[]).1 + rank_stats(&p, &[]).1;
    let mut scaled = Vec::with_capacity(n1);
    let mut delta = 0.0;
    let grid = Grid::of(cfg);
    for i in 0..=grid.steps {
        let x = grid.x(i);
        let factor = 1.0 - x;
        scaled.clear();
        scaled.extend(b.iter().map(|v| v * factor));
        let (u1, tie_term) = match regular_u1(&b, &scaled, &p) {
            Some(u1) => (u1, static_tie_term),
            None => rank_stats(&scaled, &p),
        };
        let pv = normal_cdf(-asymptotic_z(u1, n1, n2, tie_term)).clamp(0.0, 1.0);
        if pv < cfg.p_threshold {
            delta = x;
        } else {
            break;
        }
    }
    Ok(delta)
}

fn valid(xs: &[f64]) -> bool {
    xs.iter().all(|x| x.is_finite() && *x >= 0.0)
}

/// The x values of the search, as `etip_stats` makes them: `i / (1/step)` when `1/step` is an
/// integer (the default grid is exactly Python's `i / 1000`), else `i · step`.
struct Grid {
    steps: usize,
    step: f64,
    divisor: Option<f64>,
}

impl Grid {
    /// The grid of a configuration that `etip_stats` accepted.
    fn of(cfg: &DeltaConfig) -> Grid {
        let steps = (cfg.max / cfg.step * (1.0 + 1e-12)).floor();
        let inverse = 1.0 / cfg.step;
        let divisor = inverse.round();
        let divisor = ((inverse - divisor).abs() <= 1e-9 * inverse).then_some(divisor);
        Grid {
            steps: steps as usize,
            step: cfg.step,
            divisor,
        }
    }

    fn x(&self, i: usize) -> f64 {
        match self.divisor {
            Some(d) => i as f64 / d,
            None => i as f64 * self.step,
        }
    }
}

/// `U1 = Σ_i #{j : p_j < s_i}` of the sorted scaled base `s` against the sorted `p`, by one merge,
/// when no scaled value equals a patched one and scaling made no new tie inside the base (then
/// the tie term is that of the two samples alone); `None` otherwise.
fn regular_u1(b: &[f64], scaled: &[f64], p: &[f64]) -> Option<f64> {
    let mut j = 0;
    let mut u1: u64 = 0;
    for (i, &s) in scaled.iter().enumerate() {
        while j < p.len() && p[j] < s {
            j += 1;
        }
        if j < p.len() && p[j] == s {
            return None;
        }
        if i > 0 && scaled[i - 1] == s && b[i - 1] != b[i] {
            return None;
        }
        u1 += j as u64;
    }
    Some(u1 as f64)
}

/// `(U1, Σ (t³ - t))` of the pooled sorted samples, average ranks for ties (scipy's `rankdata`).
fn rank_stats(xs: &[f64], ys: &[f64]) -> (f64, f64) {
    let (n1, n2) = (xs.len(), ys.len());
    let (mut i, mut j) = (0usize, 0usize);
    let mut pos: u64 = 0;
    let mut twice_r1: u64 = 0;
    let mut tie_term: u128 = 0;
    while i < n1 || j < n2 {
        let v = match (xs.get(i), ys.get(j)) {
            (Some(&a), Some(&b)) => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            (Some(&a), None) => a,
            (None, Some(&b)) => b,
            (None, None) => break,
        };
        let i0 = i;
        while i < n1 && xs[i] == v {
            i += 1;
        }
        let j0 = j;
        while j < n2 && ys[j] == v {
            j += 1;
        }
        let cx = (i - i0) as u64;
        let t = cx + (j - j0) as u64;
        twice_r1 += cx * (2 * pos + t + 1);
        if t > 1 {
            let t = u128::from(t);
            tie_term += t * t * t - t;
        }
        pos += t;
    }
    let n1 = n1 as u64;
    let twice_u1 = twice_r1 - n1 * (n1 + 1);
    (twice_u1 as f64 / 2.0, tie_term as f64)
}

/// scipy's standardised statistic with tie and continuity corrections, in its floating-point order.
fn asymptotic_z(u: f64, n1: usize, n2: usize, tie_term: f64) -> f64 {
    let mn = (n1 * n2) as f64;
    let mu = mn / 2.0;
    let n = n1 + n2;
    let s = (mn / 12.0 * ((n + 1) as f64 - tie_term / (n * (n - 1)) as f64)).sqrt();
    let numerator = (u - mu) - 0.5;
    numerator / s
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn equals_the_reference_search() {
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
        for n in [9usize, 10, 25, 60, 200] {
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
                        let want = etip_stats::sweperf_delta(&base, &patched, cfg);
                        let got = sweperf_delta(&base, &patched, cfg);
                        assert_eq!(got, want, "n {n} round {round:?} gain {gain} {cfg:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn zero_readings_and_ties_follow_the_reference() {
        // Timer readings of 0 (a class too fast to time on one side) and heavy ties.
        let base: Vec<f64> = (0..40).map(|i| f64::from(i % 4) * 0.001).collect();
        let patched: Vec<f64> = (0..40).map(|i| f64::from(i % 2) * 0.001).collect();
        for (b, p) in [(&base, &patched), (&patched, &base), (&base, &base)] {
            let cfg = DeltaConfig::default();
            assert_eq!(
                sweperf_delta(b, p, &cfg),
                etip_stats::sweperf_delta(b, p, &cfg)
            );
        }
        let zeros = vec![0.0; 20];
        let cfg = DeltaConfig::default();
        assert_eq!(
            sweperf_delta(&base, &zeros, &cfg),
            etip_stats::sweperf_delta(&base, &zeros, &cfg)
        );
    }

    #[test]
    fn errors_are_those_of_etip_stats() {
        let ok = vec![1.0; 20];
        let mut bad = ok.clone();
        bad[3] = -1.0;
        let cfg = DeltaConfig::default();
        assert_eq!(
            sweperf_delta(&bad, &ok, &cfg),
            etip_stats::sweperf_delta(&bad, &ok, &cfg)
        );
        let wrong = DeltaConfig {
            max: 1.5,
            ..DeltaConfig::default()
        };
        assert!(matches!(
            sweperf_delta(&ok, &ok, &wrong),
            Err(StatsError::InvalidParameter(_))
        ));
    }
}
