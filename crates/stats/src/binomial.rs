//! The tail `P(X >= w)`, `X ~ Bin(n, 1/2)`, behind JETO's sign test: exact up to
//! [`EXACT_SIGN_ROUNDS`] rounds, Loader's saddle-point expansion above.
//!
//! - **Exact** (`n <= 1024`): `Σ_{k >= w} C(n, k)` in big-integer arithmetic, then one correctly
//!   rounded division by `2^n`. It costs O(n²/64) word operations (~80 µs at n = 1000, over a
//!   second at n = 200 000), which is why it stops at 1024 rounds.
//! - **Saddle point** (`n > 1024`): the first term `C(n, w) / 2^n` of the shorter tail from Loader's
//!   expansion (C. Loader, *Fast and accurate computation of binomial probabilities*, 2000; the
//!   method of R's `dbinom`): `ln(C(n, x) / 2^n) = δ(n) − δ(x) − δ(y) − bd0(x, n/2) − bd0(y, n/2)
//!   − ½ ln(2π·x·y/n)` with `y = n − x`, `δ` the error of Stirling's formula and `bd0(x, m) =
//!   x ln(x/m) + m − x` the deviance, evaluated by its positive series `(x−m)·v + 2x Σ v^{2j+1}/(2j+1)`,
//!   `v = (x−m)/(x+m)`, whenever `|v| <= 1/2` (so the difference `x ln(x/m) − (x − m)`, which
//!   cancels, is only formed where it cannot). The following terms are accumulated relative to
//!   the first through the ratios `(n − k)/(k + 1)` until they no longer change the sum, so the
//!   tail costs O(√n) operations. A tail below ½ is summed directly, one above ½ as
//!   `1 − P(X >= n − w + 1)`.
//!
//!   Accuracy: relative error below 1e-12 against the exact sum for every `w` at n = 1025 … 20 001
//!   (unit test) and at n = 50 000, 100 001 and 200 000 (`cargo test --release -p etip-stats --lib
//!   -- --ignored --nocapture saddle_point_accuracy`). Worst observed: 1.1e-13 … 2.0e-13, where the
//!   tail is near the smallest normal f64 (the relative error of `exp(−L)` is the absolute error of
//!   `L` ≈ 700 there); below 1e-14 (3e-15 … 9e-15) for every p-value of at least 1e-10. Results
//!   below `f64::MIN_POSITIVE` (2.2e-308) are subnormal and only accurate to within
//!   1e-12 · `f64::MIN_POSITIVE`; `w = n` gives exactly `2^-n`.

use crate::big::Big;

/// Up to this many rounds `binomial_sf_half` (and so the sign test) sums the binomial tail
/// exactly; above, it uses Loader's saddle-point expansion (relative error < 1e-12).
pub const EXACT_SIGN_ROUNDS: usize = 1024;

/// `P(X >= wins)` for `X ~ Bin(n, 1/2)`, `1 <= wins <= n`: exact integer sum, one correctly
/// rounded division by `2^n`.
pub(crate) fn exact_sf_half(n: usize, wins: usize) -> f64 {
    // Sum the shorter tail: Σ_{k=wins..n} C(n,k) directly when wins > n/2,
    // otherwise 2^n - Σ_{k=0..wins-1} C(n,k).
    let upper = wins > n / 2;
    let (from, to) = if upper { (wins, n) } else { (0, wins - 1) };
    // C(n, from) by the multiplicative recurrence, then step k -> k + 1.
    let mut c = Big::one();
    for j in 0..from {
        c.mul_small((n - j) as u64);
        c.div_exact_small((j + 1) as u64);
    }
    let mut sum = c.clone();
    for k in from..to {
        c.mul_small((n - k) as u64);
        c.div_exact_small((k + 1) as u64);
        sum.add(&c);
    }
    if !upper {
        let mut all = Big::pow2(n);
        all.sub(&sum);
        sum = all;
    }
    sum.to_f64_scaled(n)
}

/// `P(X >= wins)` for `X ~ Bin(n, 1/2)`, `1 <= wins <= n`, by Loader's saddle-point expansion of
/// the first term of the shorter tail (module documentation); O(√n).
pub(crate) fn saddle_sf_half(n: usize, wins: usize) -> f64 {
    if 2 * wins > n {
        upper_tail(n, wins)
    } else {
        // P(X >= w) = 1 - P(X <= w - 1) = 1 - P(X >= n - w + 1), a tail above n/2.
        1.0 - upper_tail(n, n - wins + 1)
    }
}

/// `Σ_{k >= w} C(n, k) / 2^n` for `n/2 < w <= n`, where the terms decrease.
fn upper_tail(n: usize, w: usize) -> f64 {
    if w == n {
        // 2^-n exactly (0 from n = 1075 on, as the exact sum gives).
        return if n > 1100 {
            0.0
        } else {
            libm::scalbn(1.0, -(n as i32))
        };
    }
    let mut relative = 1.0f64;
    let mut term = 1.0f64;
    for k in w..n {
        term *= (n - k) as f64 / (k + 1) as f64;
        let next = relative + term;
        if next == relative {
            break;
        }
        relative = next;
    }
    let (small, deviance) = ln_binomial_half(n, w);
    // The deviance (up to ~745 for a result that does not underflow) is subtracted last, so the
    // exponent is rounded once at its magnitude: its absolute error is the result's relative one.
    ((small + relative.ln()) - deviance).exp()
}

/// `ln(C(n, k) / 2^n)` for `0 < k < n` by Loader's expansion, as `small − deviance`: the
/// Stirling and width terms (below ~15 in magnitude) and the deviance `bd0(k, n/2) +
/// bd0(n − k, n/2)`.
fn ln_binomial_half(n: usize, k: usize) -> (f64, f64) {
    let (nf, x, y) = (n as f64, k as f64, (n - k) as f64);
    let half = nf / 2.0;
    let deviance = bd0(x, half) + bd0(y, half);
    let ln_2pi = (2.0 * std::f64::consts::PI).ln();
    let ln_width = ln_2pi + x.ln() + y.ln() - nf.ln();
    let small = stirlerr(nf) - stirlerr(x) - stirlerr(y) - 0.5 * ln_width;
    (small, deviance)
}

/// `δ(k) = ln(k!) − ln(√(2πk)·(k/e)^k)`, the error of Stirling's formula, for an integer `k >= 1`.
fn stirlerr(k: f64) -> f64 {
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if k <= 15.0 {
        // k! <= 15! < 2^53 is exact; δ(k) is then formed with an absolute error of ~1e-14.
        let factorial: f64 = (1..=k as u32).map(f64::from).product();
        let ln_sqrt_2pi = 0.5 * (2.0 * std::f64::consts::PI).ln();
        return factorial.ln() - (k + 0.5) * k.ln() + k - ln_sqrt_2pi;
    }
    // The asymptotic series; each branch keeps enough terms for an error below 1e-16.
    let kk = k * k;
    if k > 500.0 {
        (S0 - S1 / kk) / k
    } else if k > 80.0 {
        (S0 - (S1 - S2 / kk) / kk) / k
    } else if k > 35.0 {
        (S0 - (S1 - (S2 - S3 / kk) / kk) / kk) / k
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / kk) / kk) / kk) / kk) / k
    }
}

/// The deviance `x ln(x/m) + m − x` (>= 0) for `x, m > 0`, to a few ulps: by the positive series in
/// `v = (x − m)/(x + m)` when `|v| <= 1/2`, else (`x < m/3`, where the two parts no longer cancel)
/// directly. `x − m` must be exact (here both are integers or halves below 2^52).
fn bd0(x: f64, m: f64) -> f64 {
    let d = x - m;
    if d.abs() <= 0.5 * (x + m) {
        // The leading term d·v = d²/(x + m) is rounded once (d² is exact: d is a half-integer
        // below 2^25 here, or the rounding is still a single one); the small terms are summed
        // first and added to it last.
        let v = d / (x + m);
        let v2 = v * v;
        let mut rest = 0.0;
        let mut power = 2.0 * x * v;
        for j in 1..200u32 {
            power *= v2;
            let next = rest + power / f64::from(2 * j + 1);
            if next == rest {
                break;
            }
            rest = next;
        }
        d * d / (x + m) + rest
    } else {
        x * (x / m).ln() + m - x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Correctly rounded `P(X >= w)` for every `w` in `0..=n`, by suffix sums of `C(n, k)`.
    fn exact_all(n: usize) -> Vec<f64> {
        let mut c = Big::one();
        let mut sum = Big::zero();
        let mut out = vec![0.0; n + 1];
        for k in (0..=n).rev() {
            if k < n {
                // C(n, k) = C(n, k + 1)·(k + 1)/(n − k).
                c.mul_small((k + 1) as u64);
                c.div_exact_small((n - k) as u64);
            }
            sum.add(&c);
            out[k] = sum.to_f64_scaled(n);
        }
        out
    }

    /// Relative error of `got` against `exact`, or the absolute one in units of the smallest
    /// normal f64 for a subnormal or zero `exact`.
    fn error(got: f64, exact: f64) -> f64 {
        if exact < f64::MIN_POSITIVE {
            (got - exact).abs() / f64::MIN_POSITIVE
        } else {
            (got - exact).abs() / exact
        }
    }

    /// Checks the saddle-point tail against the exact one for every `w` of `n` rounds; returns the
    /// worst error with its `w`, and the worst among p-values of at least 1e-10.
    fn check_every_w(n: usize) -> ((f64, usize), f64) {
        let exact = exact_all(n);
        let mut worst = (0.0f64, 0usize);
        let mut worst_large = 0.0f64;
        let mut normal_results = 0;
        for (w, &e) in exact.iter().enumerate().skip(1) {
            let got = saddle_sf_half(n, w);
            let err = error(got, e);
            assert!(err < 1e-12, "n {n} w {w}: {got:e} vs exact {e:e} ({err:e})");
            if err > worst.0 {
                worst = (err, w);
            }
            if e >= 1e-10 {
                worst_large = worst_large.max(err);
            }
            normal_results += usize::from(e >= f64::MIN_POSITIVE);
        }
        // Both tails and the extremes are covered: p = 1 at w = 1, p below 1e-300 at w = n.
        assert!(exact[1] == 1.0 && exact[n] < 1e-300, "n {n}");
        assert!(normal_results > n / 2, "n {n}");
        assert_eq!(saddle_sf_half(n, n), exact[n], "n {n}: w = n is exact");
        (worst, worst_large)
    }

    #[test]
    fn saddle_point_is_within_1e_12_of_the_exact_tail_for_every_w() {
        for n in [
            1025usize, 1074, 1075, 1100, 1500, 2047, 2048, 3001, 5000, 10_000, 20_001,
        ] {
            check_every_w(n);
        }
    }

    /// The same check at the sizes of large scoring inputs (a few seconds in release):
    /// `cargo test --release -p etip-stats --lib -- --ignored --nocapture saddle_point_accuracy`.
    #[test]
    #[ignore = "slow in debug builds; run in release"]
    fn saddle_point_accuracy_at_large_n() {
        for n in [1025usize, 5000, 20_001, 50_000, 100_001, 200_000] {
            let ((err, w), large) = check_every_w(n);
            println!("n {n:>7}: worst error {err:.2e} at w = {w}, {large:.2e} for p >= 1e-10");
        }
    }

    #[test]
    fn exact_suffix_sums_equal_the_exact_function() {
        for n in [1usize, 2, 30, 64, 65, 1000, 1024] {
            let all = exact_all(n);
            for (w, &e) in all.iter().enumerate().skip(1) {
                assert_eq!(exact_sf_half(n, w), e, "n {n} w {w}");
            }
        }
    }

    #[test]
    fn deviance_series_and_direct_form_agree_where_they_meet() {
        // At |v| = 1/2 (x = m/3) both forms are accurate; they must agree to a few ulps.
        for m in [600.0f64, 10_000.5, 1e6] {
            let x = (m / 3.0).round();
            let direct = x * (x / m).ln() + m - x;
            let series = bd0(x, m);
            assert!(((series - direct) / direct).abs() < 1e-14, "m {m}");
            assert_eq!(bd0(m, m), 0.0);
        }
        // Stirling's error: δ(1) = 1 − ln √(2π); the series above 15 continues the exact form
        // (k! is exact in f64 up to 18!).
        let ln_sqrt_2pi = 0.5 * (2.0 * std::f64::consts::PI).ln();
        assert!((stirlerr(1.0) - (1.0 - ln_sqrt_2pi)).abs() < 1e-15);
        for k in 16..=18u32 {
            let factorial: f64 = (1..=k).map(f64::from).product();
            let kf = f64::from(k);
            let direct = factorial.ln() - (kf + 0.5) * kf.ln() + kf - ln_sqrt_2pi;
            assert!((stirlerr(kf) - direct).abs() < 1e-13, "k {k}");
        }
    }
}
