//! Mann–Whitney U test, mirroring `scipy.stats.mannwhitneyu` (scipy 1.17.1).
//!
//! Reference: `scipy/stats/_mannwhitneyu.py`. The statistic is scipy's `U1`
//! (for `x`); the p-value uses `U1` for `greater`, `U2 = n1·n2 - U1` for
//! `less`, and `max(U1, U2)` doubled (then clipped to 1) for `two-sided`.
//! `Auto` picks the exact null distribution when `min(n1, n2) <= 8` and
//! there are no ties, and the normal approximation (with tie and continuity
//! corrections) otherwise, exactly as scipy's `_mwu_choose_method`.

use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_finite};
use crate::normal::normal_cdf;
use crate::sample::sorted_copy;

/// Alternative hypothesis, with scipy's semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Alternative {
    /// The distributions differ.
    TwoSided,
    /// `x` tends to be smaller than `y`.
    Less,
    /// `x` tends to be larger than `y`.
    Greater,
}

/// How the p-value is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MwuMethod {
    /// scipy's `'auto'`: exact when `min(n1, n2) <= 8` (i.e. not both > 8) and
    /// there are no ties, asymptotic otherwise.
    Auto,
    /// Exact null distribution of U (no tie correction; a non-integer U from
    /// ties is truncated to an integer, as scipy does).
    Exact,
    /// Normal approximation with tie correction and continuity correction.
    Asymptotic,
}

/// Result of [`mann_whitney_u`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// `U1`, the statistic for `x`, as scipy returns it.
    pub u: f64,
    /// p-value for the requested alternative.
    pub p_value: f64,
    /// The method actually used (`Exact` or `Asymptotic`, never `Auto`).
    pub method_used: MwuMethod,
}

/// Rank information of a two-sample comparison.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RankStats {
    /// `U1 = R1 - n1(n1+1)/2` (exact: a multiple of 0.5).
    pub u1: f64,
    /// `Σ (t³ - t)` over tie groups.
    pub tie_term: f64,
    /// Whether any value occurs more than once in the pooled sample.
    pub has_ties: bool,
}

/// Ranks the pooled sample `xs ∪ ys` by merging two ascending slices. Average
/// ranks for ties, as `scipy.stats.rankdata(method='average')`; values compare
/// with IEEE `==` (so `-0.0` ties with `0.0`, as in scipy). Runs in
/// O(n1 + n2) with integer arithmetic (the rank sum is kept doubled, so it is
/// exact; pooled sizes up to 2^31).
pub(crate) fn rank_stats(xs: &[f64], ys: &[f64]) -> RankStats {
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
        // Ranks pos+1 ..= pos+t; their average is pos + (t + 1)/2.
        twice_r1 += cx * (2 * pos + t + 1);
        if t > 1 {
            let t = u128::from(t);
            tie_term += t * t * t - t;
        }
        pos += t;
    }
    let n1 = n1 as u64;
    let twice_u1 = twice_r1 - n1 * (n1 + 1);
    RankStats {
        u1: twice_u1 as f64 / 2.0,
        tie_term: tie_term as f64,
        has_ties: tie_term > 0,
    }
}

/// Cumulative null distribution of U for sample sizes (n1, n2), known for
/// `u in 0..=upto`.
#[derive(Debug, Clone)]
pub(crate) struct ExactDist {
    n1: usize,
    n2: usize,
    upto: usize,
    repr: Repr,
}

#[derive(Debug, Clone)]
enum Repr {
    /// Exact counts: `cum[u] = #{arrangements with U <= u}`, `total = C(n1+n2, n1)`.
    Int { cum: Vec<i128>, total: i128 },
    /// Probabilities `cum[u] = P(U <= u)` (used when counts exceed 2^125).
    Float { cum: Vec<f64> },
}

/// `C(n, k)` if it is below 2^125.
fn binom_small(n: usize, k: usize) -> Option<i128> {
    let mut b: i128 = 1;
    for j in 1..=k {
        let num = i128::try_from(n - k + j).ok()?;
        b = b.checked_mul(num)? / j as i128;
    }
    (b < (1i128 << 125)).then_some(b)
}

impl ExactDist {
    /// Builds the distribution of U for sizes (n1, n2) up to `u = upto`.
    ///
    /// Fails when the work would exceed [`EXACT_BUDGET`] elementary steps
    /// (only possible when `C(n1+n2, min(n1,n2)) >= 2^125`, where the slower
    /// floating-point recursion is needed: e.g. both samples above ~60 with an
    /// explicit `Exact` request, or one sample <= 8 against ~190 000 points).
    pub(crate) fn new(n1: usize, n2: usize, upto: usize) -> Result<ExactDist, StatsError> {
        let (m, n) = (n1.min(n2), n1.max(n2));
        let half = m * n / 2;
        let upto = upto.min(half);
        let repr = match binom_small(m + n, m) {
            Some(total) => Repr::Int {
                cum: Self::counts_int(m, n, upto),
                total,
            },
            None => {
                let cost = (m as f64) * (n as f64) * (upto as f64 + 1.0);
                if cost > EXACT_BUDGET {
                    return Err(StatsError::InvalidParameter(format!(
                        "the exact Mann–Whitney distribution for sample sizes {n1} and {n2} \
                         would take about {cost:.1e} steps; use MwuMethod::Asymptotic for \
                         samples this large"
                    )));
                }
                Repr::Float {
                    cum: Self::probs_float(m, n, upto),
                }
            }
        };
        Ok(ExactDist { n1, n2, upto, repr })
    }

    /// Cumulative counts via the Gaussian binomial coefficient
    /// `[m+n choose m]_q = Π_{i=1..m} (1 - q^{n+i}) / (1 - q^i)`, truncated at
    /// degree `upto`; exact integer arithmetic (all intermediate magnitudes are
    /// bounded by `C(m+n, m) < 2^125`). O(m · upto).
    fn counts_int(m: usize, n: usize, upto: usize) -> Vec<i128> {
        let mut c = vec![0i128; upto + 1];
        c[0] = 1;
        for i in 1..=m {
            let d = n + i;
            if d <= upto {
                for u in (d..=upto).rev() {
                    c[u] -= c[u - d];
                }
            }
            for u in i..=upto {
                c[u] += c[u - i];
            }
        }
        for u in 1..=upto {
            c[u] += c[u - 1];
        }
        c
    }

    /// Cumulative probabilities via the positive recursion
    /// `P_{a,b}(u) = a/(a+b) P_{a-1,b}(u-b) + b/(a+b) P_{a,b-1}(u)` (the largest
    /// pooled value belongs to the first sample with probability a/(a+b)).
    /// Only additions of positive terms, so the relative error stays within a
    /// few (m + n) ulps. O(m · n · upto).
    fn probs_float(m: usize, n: usize, upto: usize) -> Vec<f64> {
        // p[a] holds P_{a,b}(0..=upto) for the current b.
        let mut p: Vec<Vec<f64>> = (0..=m)
            .map(|_| {
                let mut v = vec![0.0; upto + 1];
                v[0] = 1.0;
                v
            })
            .collect();
        for b in 1..=n {
            for a in 1..=m {
                let wa = a as f64 / (a + b) as f64;
                let wb = b as f64 / (a + b) as f64;
                let (lo, hi) = p.split_at_mut(a);
                let prev = &lo[a - 1];
                let cur = &mut hi[0];
                for u in (0..=upto).rev() {
                    let from_a = if u >= b { prev[u - b] } else { 0.0 };
                    cur[u] = wa * from_a + wb * cur[u];
                }
            }
        }
        let mut cum = p.swap_remove(m);
        for u in 1..=upto {
            cum[u] += cum[u - 1];
        }
        cum
    }

    fn fits(&self, n1: usize, n2: usize, need: usize) -> bool {
        self.n1.min(self.n2) == n1.min(n2)
            && self.n1.max(self.n2) == n2.max(n1)
            && self.upto >= need
    }

    /// `P(U >= k)` under the null, for integer `k` (scipy's `_MWU.sf`).
    pub(crate) fn sf(&self, k: usize) -> f64 {
        let mn = self.n1 * self.n2;
        if k == 0 {
            return 1.0;
        }
        if k > mn {
            return 0.0;
        }
        let kc = mn - k;
        if k < kc {
            // 1 - P(U <= k - 1)
            match &self.repr {
                Repr::Int { cum, total } => (total - cum[k - 1]) as f64 / *total as f64,
                Repr::Float { cum } => 1.0 - cum[k - 1],
            }
        } else {
            // P(U >= k) = P(U <= mn - k) by symmetry.
            match &self.repr {
                Repr::Int { cum, total } => cum[kc] as f64 / *total as f64,
                Repr::Float { cum } => cum[kc],
            }
        }
    }
}

/// Largest number of elementary steps the floating-point exact distribution
/// may take (a few seconds).
pub const EXACT_BUDGET: f64 = 4e9;

/// Index of the cumulative distribution that `sf(k)` reads.
fn needed_index(mn: usize, k: usize) -> usize {
    if k == 0 || k > mn {
        0
    } else if k < mn - k {
        k - 1
    } else {
        mn - k
    }
}

/// Resolves `Auto` as scipy's `_mwu_choose_method`.
pub(crate) fn choose_method(n1: usize, n2: usize, has_ties: bool, method: MwuMethod) -> MwuMethod {
    match method {
        MwuMethod::Auto => {
            if (n1 > 8 && n2 > 8) || has_ties {
                MwuMethod::Asymptotic
            } else {
                MwuMethod::Exact
            }
        }
        m => m,
    }
}

/// p-value from rank statistics. `cache` keeps the exact distribution between
/// calls with the same sizes; `full` builds it up to `n1·n2/2` at once.
pub(crate) fn p_value(
    rs: &RankStats,
    n1: usize,
    n2: usize,
    alternative: Alternative,
    method: MwuMethod,
    cache: &mut Option<ExactDist>,
    full: bool,
) -> Result<(f64, MwuMethod), StatsError> {
    let mn = n1 * n2;
    let nn = mn as f64;
    let u1 = rs.u1;
    let u2 = nn - u1;
    let (u, f) = match alternative {
        Alternative::Greater => (u1, 1.0),
        Alternative::Less => (u2, 1.0),
        Alternative::TwoSided => (u1.max(u2), 2.0),
    };
    let used = choose_method(n1, n2, rs.has_ties, method);
    let p = match used {
        MwuMethod::Exact => {
            // scipy: np.asarray(U, np.int64) truncates toward zero; U >= 0.
            let k = u as usize;
            let need = needed_index(mn, k);
            let fits = cache.as_ref().is_some_and(|d| d.fits(n1, n2, need));
            if !fits {
                let upto = if full { mn / 2 } else { need };
                *cache = Some(ExactDist::new(n1, n2, upto)?);
            }
            cache
                .as_ref()
                .expect("exact distribution was just built")
                .sf(k)
        }
        _ => normal_cdf(-asymptotic_z(u, n1, n2, rs.tie_term)),
    };
    Ok(((p * f).clamp(0.0, 1.0), used))
}

/// Standardised statistic with tie and continuity corrections, evaluated in
/// the same floating-point order as scipy's `_get_mwu_z`.
pub(crate) fn asymptotic_z(u: f64, n1: usize, n2: usize, tie_term: f64) -> f64 {
    let mn = (n1 * n2) as f64;
    let mu = mn / 2.0;
    let n = n1 + n2;
    let s = (mn / 12.0 * ((n + 1) as f64 - tie_term / (n * (n - 1)) as f64)).sqrt();
    let numerator = (u - mu) - 0.5;
    numerator / s
}

/// Mann–Whitney U test of `x` against `y`, matching
/// `scipy.stats.mannwhitneyu(x, y, use_continuity=True, alternative, method)`
/// (scipy 1.17.1): same `U1`, p-values equal to within 1e-9 relative.
///
/// Each sample needs at least one point and only finite values (scipy also
/// accepts infinities; execution times never are). An explicit `Exact` request
/// on samples so large that the exact distribution would take more than
/// [`EXACT_BUDGET`] steps is refused with `InvalidParameter` (scipy would
/// compute for hours); `Auto` only meets that limit with one sample of at most
/// 8 points against roughly 190 000 or more.
///
/// ```
/// use etip_stats::{mann_whitney_u, Alternative, MwuMethod};
/// // scipy.stats.mannwhitneyu([19, 22, 16, 29, 24], [20, 11, 17, 12], method="exact")
/// let r = mann_whitney_u(&[19., 22., 16., 29., 24.], &[20., 11., 17., 12.],
///                        Alternative::TwoSided, MwuMethod::Exact)?;
/// assert_eq!(r.u, 17.0);
/// assert!((r.p_value - 0.1111111111111111).abs() < 1e-15);
/// # Ok::<(), etip_stats::StatsError>(())
/// ```
pub fn mann_whitney_u(
    x: &[f64],
    y: &[f64],
    alternative: Alternative,
    method: MwuMethod,
) -> Result<MannWhitney, StatsError> {
    check_finite("x", x, 1)?;
    check_finite("y", y, 1)?;
    let xs = sorted_copy(x);
    let ys = sorted_copy(y);
    let rs = rank_stats(&xs, &ys);
    let (p_value, method_used) =
        p_value(&rs, x.len(), y.len(), alternative, method, &mut None, false)?;
    Ok(MannWhitney {
        u: rs.u1,
        p_value,
        method_used,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scipy_docstring_examples() {
        let males = [19., 22., 16., 29., 24.];
        let females = [20., 11., 17., 12.];
        let r = mann_whitney_u(&males, &females, Alternative::TwoSided, MwuMethod::Exact)
            .expect("valid input");
        assert_eq!(r.u, 17.0);
        assert!((r.p_value / 0.1111111111111111 - 1.0).abs() < 1e-14);
        let r = mann_whitney_u(
            &males,
            &females,
            Alternative::TwoSided,
            MwuMethod::Asymptotic,
        )
        .expect("valid input");
        assert!((r.p_value / 0.11134688653314041 - 1.0).abs() < 1e-12);
        let r = mann_whitney_u(&females, &males, Alternative::Less, MwuMethod::Exact)
            .expect("valid input");
        assert_eq!(r.u, 3.0);
        assert!((r.p_value / 0.05555555555555555 - 1.0).abs() < 1e-14);
        let r = mann_whitney_u(&males, &females, Alternative::TwoSided, MwuMethod::Auto)
            .expect("valid input");
        assert_eq!(r.method_used, MwuMethod::Exact);
    }

    #[test]
    fn float_distribution_agrees_with_integer_counts() {
        for (m, n) in [
            (1, 1),
            (2, 7),
            (5, 5),
            (8, 30),
            (12, 17),
            (20, 20),
            (60, 60),
        ] {
            let upto = m * n / 2;
            let ints = ExactDist::counts_int(m, n, upto);
            let total = binom_small(m + n, m).expect("small binomial");
            let floats = ExactDist::probs_float(m, n, upto);
            for u in 0..=upto {
                let exact = ints[u] as f64 / total as f64;
                let rel = (floats[u] - exact).abs() / exact;
                assert!(rel < 1e-12, "m={m} n={n} u={u}: {} vs {exact}", floats[u]);
            }
        }
    }

    #[test]
    fn all_values_tied_gives_p_one() {
        let r = mann_whitney_u(
            &[1.0, 1.0],
            &[1.0, 1.0, 1.0],
            Alternative::Greater,
            MwuMethod::Auto,
        )
        .expect("valid input");
        assert_eq!(r.method_used, MwuMethod::Asymptotic);
        assert_eq!(r.u, 3.0);
        assert_eq!(r.p_value, 1.0);
    }

    #[test]
    fn refuses_hopeless_exact_requests() {
        let x: Vec<f64> = (0..1000).map(f64::from).collect();
        let y: Vec<f64> = (0..1000).map(|v| f64::from(v) + 0.5).collect();
        let err = mann_whitney_u(&x, &y, Alternative::TwoSided, MwuMethod::Exact)
            .expect_err("exact 1000 x 1000 exceeds the budget");
        assert!(err.to_string().contains("Asymptotic"), "{err}");
        // The same data through Auto uses the normal approximation.
        let r = mann_whitney_u(&x, &y, Alternative::TwoSided, MwuMethod::Auto).expect("valid");
        assert_eq!(r.method_used, MwuMethod::Asymptotic);
    }

    #[test]
    fn rejects_empty_and_nan() {
        assert!(matches!(
            mann_whitney_u(&[], &[1.0], Alternative::Less, MwuMethod::Auto),
            Err(StatsError::TooFewPoints { name: "x", .. })
        ));
        assert!(matches!(
            mann_whitney_u(&[1.0], &[f64::NAN], Alternative::Less, MwuMethod::Auto),
            Err(StatsError::NotFinite {
                name: "y",
                index: 0,
                ..
            })
        ));
    }
}
