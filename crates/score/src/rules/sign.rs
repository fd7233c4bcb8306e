//! JETO's sign test for many rounds.
//!
//! `etip_stats::sign_test` computes the binomial tail exactly with big integers, which costs
//! O(n²/64) word operations: about 3 s for 200 000 rounds. Up to [`EXACT_ROUNDS`] rounds this module
//! calls it unchanged; beyond, it computes the same verdict in O(n log n): the win counts, the
//! direction, the median ratio and the improvement exactly as `etip_stats` does, and the tail
//! probability `P(X >= w)`, `X ~ Bin(n, 1/2)`, with Loader's saddle-point expansion of the binomial
//! terms (as R's `dbinom`) summed from the tail's first term, to a relative error far below 1e-9
//! (checked against the exact sum in the tests). p-values that small differences could move across
//! `p_val` would have to lie within that relative distance of it.

use etip_stats::{Direction, SignTestConfig, SignTestVerdict, StatsError};

/// Up to this many rounds the exact `etip_stats::sign_test` is used (about 1 ms per test).
pub const EXACT_ROUNDS: usize = 1024;

/// The sign test of SPEC 3.1 (JETO's literal rule), as `etip_stats::sign_test`, in O(n log n).
pub(crate) fn sign_test(
    original: &[f64],
    patched: &[f64],
    cfg: &SignTestConfig,
) -> Result<SignTestVerdict, StatsError> {
    if original.len() <= EXACT_ROUNDS || patched.len() != original.len() {
        return etip_stats::sign_test(original, patched, cfg);
    }
    // The configuration and the values are checked by etip_stats itself on the first pair (its
    // checks are per value), then every value here with the same errors.
    etip_stats::sign_test(&original[..1], &patched[..1], cfg)?;
    check_times("original", original)?;
    check_times("patched", patched)?;
    let n = original.len();
    let factor = 1.0 - cfg.min_impr;
    let mut wins_patched = 0;
    let mut wins_original = 0;
    for (&o, &p) in original.iter().zip(patched) {
        wins_patched += usize::from(p <= factor * o);
        wins_original += usize::from(o <= factor * p);
    }
    let p_patched = binomial_sf_half(n, wins_patched);
    let p_original = binomial_sf_half(n, wins_original);
    let direction = if p_patched < cfg.p_val {
        Direction::PatchedFaster
    } else if p_original < cfg.p_val {
        Direction::OriginalFaster
    } else {
        Direction::NotSignificant
    };
    let sum_o: f64 = original.iter().sum();
    let sum_p: f64 = patched.iter().sum();
    let improvement = if sum_o == 0.0 {
        if sum_p == 0.0 { 0.0 } else { f64::NEG_INFINITY }
    } else {
        (sum_o - sum_p) / sum_o
    };
    Ok(SignTestVerdict {
        direction,
        n,
        wins_patched,
        p_patched,
        wins_original,
        p_original,
        median_ratio: median_ratio(original, patched),
        improvement,
    })
}

/// As etip_stats' own check of durations: finite and not negative.
fn check_times(name: &'static str, xs: &[f64]) -> Result<(), StatsError> {
    for (index, &value) in xs.iter().enumerate() {
        if !value.is_finite() {
            return Err(StatsError::NotFinite { name, index, value });
        }
        if value < 0.0 {
            return Err(StatsError::Negative { name, index, value });
        }
    }
    Ok(())
}

/// Median of `p_j / o_j` (`0/0` counts as 1), as numpy's median of the ratios.
fn median_ratio(original: &[f64], patched: &[f64]) -> f64 {
    let mut ratios: Vec<f64> = original
        .iter()
        .zip(patched)
        .map(|(o, p)| if *o == 0.0 && *p == 0.0 { 1.0 } else { p / o })
        .collect();
    let n = ratios.len();
    if n == 0 {
        return f64::NAN;
    }
    let (lower, &mut upper, _) = ratios.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        upper
    } else {
        let below = lower
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .unwrap_or(upper);
        (below + upper) / 2.0
    }
}

/// `P(X >= wins)` for `X ~ Bin(n, 1/2)`.
pub(crate) fn binomial_sf_half(n: usize, wins: usize) -> f64 {
    if wins == 0 {
        return 1.0;
    }
    if wins > n {
        return 0.0;
    }
    if 2 * wins > n {
        upper_tail(n, wins)
    } else {
        // Symmetry: P(X >= w) = 1 - P(X <= w - 1) = 1 - P(X >= n - w + 1), a tail above n/2.
        1.0 - upper_tail(n, n - wins + 1)
    }
}

/// `Σ_{k >= w} C(n, k) / 2^n` for `w > n/2`, where the terms decrease: the first term in log space,
/// the others relative to it by the ratio `C(n, k+1) / C(n, k) = (n - k) / (k + 1)`.
fn upper_tail(n: usize, w: usize) -> f64 {
    let mut relative = 1.0f64;
    let mut term = 1.0f64;
    for k in w..n {
        term *= (n - k) as f64 / (k + 1) as f64;
        relative += term;
        if term < relative * 1e-17 {
            break;
        }
    }
    (ln_binomial_half(n, w) + relative.ln()).exp()
}

/// `ln(C(n, k) / 2^n)` by Loader's saddle-point expansion (as R's `dbinom_raw` with p = q = 1/2).
fn ln_binomial_half(n: usize, k: usize) -> f64 {
    let nf = n as f64;
    if k == 0 || k == n {
        return -nf * std::f64::consts::LN_2;
    }
    let (x, y) = (k as f64, (n - k) as f64);
    let half = nf / 2.0;
    let lc = stirlerr(nf) - stirlerr(x) - stirlerr(y) - bd0(x, half) - bd0(y, half);
    let lf = (2.0 * std::f64::consts::PI).ln() + x.ln() + (-x / nf).ln_1p();
    lc - 0.5 * lf
}

/// `ln(n!) - ln(√(2πn) (n/e)^n)`, the error of Stirling's formula.
fn stirlerr(n: f64) -> f64 {
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if n <= 15.0 {
        // Small values: lgamma is accurate to a few ulps of a number below 30.
        let ln_sqrt_2pi = 0.5 * (2.0 * std::f64::consts::PI).ln();
        return libm::lgamma(n + 1.0) - (n + 0.5) * n.ln() + n - ln_sqrt_2pi;
    }
    let nn = n * n;
    if n > 500.0 {
        (S0 - S1 / nn) / n
    } else if n > 80.0 {
        (S0 - (S1 - S2 / nn) / nn) / n
    } else if n > 35.0 {
        (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n
    }
}

/// `x ln(x / np) + np - x`, accurate when `x` is close to `np` (Loader's deviance term).
fn bd0(x: f64, np: f64) -> f64 {
    if (x - np).abs() < 0.1 * (x + np) {
        let v = (x - np) / (x + np);
        let mut s = (x - np) * v;
        let mut ej = 2.0 * x * v;
        let v2 = v * v;
        for j in 1..1000 {
            ej *= v2;
            let next = s + ej / f64::from(2 * j + 1);
            if next == s {
                return next;
            }
            s = next;
        }
        s
    } else {
        x * (x / np).ln() + np - x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_matches_the_exact_sum() {
        for n in [1usize, 2, 7, 30, 64, 65, 200, 1000, 1025, 3000] {
            for w in 0..=n + 1 {
                let exact = etip_stats::binomial_sf_half(n, w);
                let fast = binomial_sf_half(n, w);
                let ok = (fast - exact).abs() <= 1e-12 * exact
                    || (exact < 1e-300 && fast < 1e-290)
                    || (exact == 0.0 && fast == 0.0);
                assert!(ok, "n {n} w {w}: {fast} vs exact {exact}");
            }
        }
    }

    #[test]
    fn many_rounds_give_the_exact_verdict() {
        let n = 2000;
        let original: Vec<f64> = (0..n).map(|i| 1.0 + f64::from(i % 17) * 0.01).collect();
        for shift in [0.0, 0.9, 0.94, 0.95, 0.96, 1.1] {
            let patched: Vec<f64> = original
                .iter()
                .enumerate()
                .map(|(i, o)| if i % 3 == 0 { o * shift } else { *o })
                .collect();
            for cfg in [SignTestConfig::default(), SignTestConfig::conservative()] {
                let fast = sign_test(&original, &patched, &cfg).expect("valid");
                let exact = etip_stats::sign_test(&original, &patched, &cfg).expect("valid");
                assert_eq!(fast.direction, exact.direction, "shift {shift}");
                assert_eq!(
                    (fast.wins_patched, fast.wins_original, fast.n),
                    (exact.wins_patched, exact.wins_original, exact.n)
                );
                assert_eq!(fast.median_ratio, exact.median_ratio);
                assert_eq!(fast.improvement, exact.improvement);
                for (a, b) in [
                    (fast.p_patched, exact.p_patched),
                    (fast.p_original, exact.p_original),
                ] {
                    assert!((a - b).abs() <= 1e-12 * b, "{a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn errors_are_those_of_etip_stats() {
        let ok = vec![1.0; 2000];
        let mut bad = ok.clone();
        bad[1500] = f64::NAN;
        assert!(matches!(
            sign_test(&ok, &bad, &SignTestConfig::default()),
            Err(StatsError::NotFinite {
                name: "patched",
                index: 1500,
                ..
            })
        ));
        let cfg = SignTestConfig {
            min_impr: 1.5,
            p_val: 0.1,
        };
        assert!(matches!(
            sign_test(&ok, &ok, &cfg),
            Err(StatsError::InvalidParameter(_))
        ));
        assert!(matches!(
            sign_test(&ok, &ok[1..], &SignTestConfig::default()),
            Err(StatsError::LengthMismatch { .. })
        ));
    }
}
