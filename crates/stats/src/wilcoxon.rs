//! The Wilcoxon signed-rank test of one sample of differences, with `scipy.stats.wilcoxon`'s
//! semantics (scipy 1.17, `zero_method="wilcox"`, `correction=False`, `method="auto"`):
//!
//! - zero differences are dropped; the absolute values of the others get average ranks;
//! - the statistic is `r_plus`, the sum of the ranks of the positive differences;
//! - with at most [`EXACT_SIGNED_RANK`] differences, no tie and no zero, the p-value comes from the
//!   exact distribution of the sum of a random subset of the ranks 1..n (counted in integers);
//! - with ties or zeros among at most 13 differences, from all 2^n assignments of signs to the
//!   actual (average) ranks, as scipy's permutation test enumerates them;
//! - otherwise from the normal approximation with the tie correction of the variance
//!   (`n(n+1)(2n+1)/24 − Σ(t³ − t)/48`) and no continuity correction.
//!
//! `Greater` asks whether the differences tend to be positive (small p: they do).

use crate::error::StatsError;
use crate::mwu::Alternative;
use crate::normal::normal_sf;

/// Differences up to which the p-value is exact (scipy's `auto` threshold).
pub const EXACT_SIGNED_RANK: usize = 50;

/// With ties or zeros, differences up to which every sign assignment is enumerated (scipy's
/// `auto`: a permutation test, deterministic below 2^13 assignments).
const PERMUTED_SIGNED_RANK: usize = 13;

/// Result of [`wilcoxon_signed_rank`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SignedRank {
    /// Sum of the ranks of the positive differences.
    pub r_plus: f64,
    /// Differences used (zeros dropped).
    pub n: usize,
    pub p_value: f64,
    /// Whether the p-value is exact.
    pub exact: bool,
}

/// The Wilcoxon signed-rank test of `d` (see the module docs). An empty sample, or one of zeros
/// only, has p-value 1.
pub fn wilcoxon_signed_rank(d: &[f64], alternative: Alternative) -> Result<SignedRank, StatsError> {
    if let Some((index, &value)) = d.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(StatsError::NotFinite {
            name: "differences",
            index,
            value,
        });
    }
    let mut nz: Vec<f64> = d.iter().copied().filter(|v| *v != 0.0).collect();
    let n = nz.len();
    if n == 0 {
        return Ok(SignedRank {
            r_plus: 0.0,
            n: 0,
            p_value: 1.0,
            exact: true,
        });
    }
    nz.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    // Average ranks of |d|, and the tie groups' sizes.
    let mut r_plus = 0.0;
    let mut ties = 0.0;
    let mut ranks = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && nz[j].abs() == nz[i].abs() {
            j += 1;
        }
        let rank = (i + 1 + j) as f64 / 2.0;
        r_plus += rank * nz[i..j].iter().filter(|v| **v > 0.0).count() as f64;
        ranks.extend(std::iter::repeat_n(rank, j - i));
        let t = (j - i) as f64;
        ties += t * t * t - t;
        i = j;
    }
    let tied_or_zero = ties > 0.0 || n < d.len();
    let (p_value, exact) = if d.len() <= EXACT_SIGNED_RANK && !tied_or_zero {
        (exact_p(n, r_plus, alternative), true)
    } else if d.len() <= PERMUTED_SIGNED_RANK {
        (permuted_p(&ranks, r_plus, alternative), true)
    } else {
        let nf = n as f64;
        let mean = nf * (nf + 1.0) / 4.0;
        let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - ties / 48.0;
        let z = if var > 0.0 {
            (r_plus - mean) / var.sqrt()
        } else {
            0.0
        };
        let p = match alternative {
            Alternative::Greater => normal_sf(z),
            Alternative::Less => normal_sf(-z),
            Alternative::TwoSided => (2.0 * normal_sf(z.abs())).min(1.0),
        };
        (p, false)
    };
    Ok(SignedRank {
        r_plus,
        n,
        p_value,
        exact,
    })
}

/// Exact p-value with tied ranks: every assignment of signs to the ranks, counted (scipy's
/// permutation test, which enumerates them all at this size). Rank sums are multiples of 1/2, so
/// the comparisons are exact.
fn permuted_p(ranks: &[f64], r: f64, alternative: Alternative) -> f64 {
    let m = ranks.len();
    let (mut ge, mut le) = (0u64, 0u64);
    for mask in 0u32..(1u32 << m) {
        let t: f64 = (0..m)
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| ranks[i])
            .sum();
        ge += u64::from(t >= r);
        le += u64::from(t <= r);
    }
    let total = (1u64 << m) as f64;
    let (sf, cdf) = (ge as f64 / total, le as f64 / total);
    match alternative {
        Alternative::Greater => sf,
        Alternative::Less => cdf,
        Alternative::TwoSided => (2.0 * sf.min(cdf)).min(1.0),
    }
}

/// Exact p-value: the distribution of the sum of a uniformly random subset of 1..n.
fn exact_p(n: usize, r: f64, alternative: Alternative) -> f64 {
    let max = n * (n + 1) / 2;
    // counts[s]: subsets of {1..k} summing to s (at most 2^50: fits u64).
    let mut counts = vec![0u64; max + 1];
    counts[0] = 1;
    for k in 1..=n {
        for s in (k..=max).rev() {
            counts[s] += counts[s - k];
        }
    }
    let total = 2f64.powi(n as i32);
    // With tied ranks r may be a half-integer; as scipy (gh-19872), conservatively: P(T ≥ ⌊r⌋)
    // and P(T ≤ ⌈r⌉).
    let ge_from = (r.floor().max(0.0) as usize).min(max + 1);
    let le_to = r.ceil();
    let sf = counts[ge_from..].iter().map(|c| *c as f64).sum::<f64>() / total;
    let cdf = if le_to < 0.0 {
        0.0
    } else {
        let to = (le_to as usize).min(max);
        counts[..=to].iter().map(|c| *c as f64).sum::<f64>() / total
    };
    match alternative {
        Alternative::Greater => sf,
        Alternative::Less => cdf,
        Alternative::TwoSided => (2.0 * sf.min(cdf)).min(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_samples_are_exact() {
        // scipy.stats.wilcoxon([0.3, 0.2, -0.1, 0.5, 0.4, 0.25], alternative="greater"):
        // statistic 20, p 0.03125 (2 of 64 subsets reach 20).
        let r =
            wilcoxon_signed_rank(&[0.3, 0.2, -0.1, 0.5, 0.4, 0.25], Alternative::Greater).unwrap();
        assert_eq!((r.r_plus, r.n, r.exact), (20.0, 6, true));
        assert_eq!(r.p_value, 0.03125);
        // A zero is dropped: n = 5, r_plus 14, p 2/32.
        let r =
            wilcoxon_signed_rank(&[0.3, 0.0, -0.1, 0.5, 0.4, 0.25], Alternative::Greater).unwrap();
        assert_eq!((r.r_plus, r.n, r.p_value), (14.0, 5, 0.0625));
        // Tied ranks keep the untied distribution, read at ⌊19.5⌋: P(T >= 19) = 3/64.
        let r =
            wilcoxon_signed_rank(&[0.3, 0.2, -0.2, 0.5, 0.4, 0.25], Alternative::Greater).unwrap();
        assert_eq!((r.r_plus, r.p_value), (19.5, 0.046875));
        assert!(
            wilcoxon_signed_rank(&[0.0, 0.0], Alternative::Greater)
                .unwrap()
                .p_value
                == 1.0
        );
        assert!(wilcoxon_signed_rank(&[1.0, f64::NAN], Alternative::Greater).is_err());
    }
}
