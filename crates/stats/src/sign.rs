//! JETO's paired binomial sign test (SPEC 3.1).

use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_times};
use crate::sample::{median_sorted, sorted_copy};

/// Thresholds of the sign test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SignTestConfig {
    /// Minimum relative improvement for a round to count as a win (0.05).
    pub min_impr: f64,
    /// Significance threshold, strict: significant iff p < p_val (0.1).
    pub p_val: f64,
}

impl Default for SignTestConfig {
    fn default() -> Self {
        SignTestConfig {
            min_impr: 0.05,
            p_val: 0.1,
        }
    }
}

impl SignTestConfig {
    /// JETO's conservative setting: `min_impr = 0.1`, `p_val = 0.05`.
    pub fn conservative() -> Self {
        SignTestConfig {
            min_impr: 0.1,
            p_val: 0.05,
        }
    }
}

/// Which version is significantly faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The patched version is significantly faster.
    PatchedFaster,
    /// The original version is significantly faster.
    OriginalFaster,
    /// Neither direction is significant.
    NotSignificant,
}

/// Outcome of [`sign_test`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SignTestVerdict {
    /// The verdict.
    pub direction: Direction,
    /// Number of pairs (rounds).
    pub n: usize,
    /// `#{j : p_j <= (1 - min_impr)·o_j}`.
    pub wins_patched: usize,
    /// `P(X >= wins_patched)`, X ~ Bin(n, 1/2).
    pub p_patched: f64,
    /// `#{j : o_j <= (1 - min_impr)·p_j}`.
    pub wins_original: usize,
    /// `P(X >= wins_original)`, X ~ Bin(n, 1/2).
    pub p_original: f64,
    /// Median of `p_j / o_j` (`0/0` counts as 1, `p/0` as +∞).
    pub median_ratio: f64,
    /// `(Σo - Σp) / Σo` (0 when both sums are 0, -∞ when only Σo is 0).
    pub improvement: f64,
}

/// Little-endian base-2^64 natural number, just enough for exact binomial sums.
#[derive(Debug, Clone)]
struct Big(Vec<u64>);

impl Big {
    fn one() -> Big {
        Big(vec![1])
    }

    fn pow2(n: usize) -> Big {
        let mut limbs = vec![0u64; n / 64 + 1];
        limbs[n / 64] = 1u64 << (n % 64);
        Big(limbs)
    }

    fn mul_small(&mut self, m: u64) {
        let mut carry: u128 = 0;
        for limb in &mut self.0 {
            let v = u128::from(*limb) * u128::from(m) + carry;
            *limb = v as u64;
            carry = v >> 64;
        }
        if carry > 0 {
            self.0.push(carry as u64);
        }
    }

    /// Division by `d`, which must divide `self` exactly.
    fn div_exact_small(&mut self, d: u64) {
        let mut rem: u128 = 0;
        for limb in self.0.iter_mut().rev() {
            let cur = (rem << 64) | u128::from(*limb);
            *limb = (cur / u128::from(d)) as u64;
            rem = cur % u128::from(d);
        }
        debug_assert_eq!(rem, 0, "binomial recurrence divides exactly");
        self.trim();
    }

    fn add(&mut self, other: &Big) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        let mut carry = false;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let o = other.0.get(i).copied().unwrap_or(0);
            let (s1, c1) = limb.overflowing_add(o);
            let (s2, c2) = s1.overflowing_add(u64::from(carry));
            *limb = s2;
            carry = c1 || c2;
        }
        if carry {
            self.0.push(1);
        }
    }

    /// `self -= other`, requires `self >= other`.
    fn sub(&mut self, other: &Big) {
        let mut borrow = false;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let o = other.0.get(i).copied().unwrap_or(0);
            let (d1, b1) = limb.overflowing_sub(o);
            let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
            *limb = d2;
            borrow = b1 || b2;
        }
        debug_assert!(!borrow, "subtrahend larger than minuend");
        self.trim();
    }

    fn trim(&mut self) {
        while self.0.len() > 1 && self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn bits(&self) -> usize {
        let top = *self.0.last().expect("at least one limb");
        (self.0.len() - 1) * 64 + (64 - top.leading_zeros() as usize)
    }

    /// `self · 2^-n` as f64, correctly rounded (barring subnormal results).
    fn to_f64_scaled(&self, n: usize) -> f64 {
        let bits = self.bits();
        if bits == 0 {
            return 0.0;
        }
        let shift = bits.saturating_sub(64);
        // Top 64 bits, with a sticky bit for everything below them.
        let mut top: u64 = 0;
        for k in 0..64.min(bits) {
            let b = shift + k;
            if (self.0[b / 64] >> (b % 64)) & 1 == 1 {
                top |= 1 << k;
            }
        }
        let sticky = (0..shift).any(|b| (self.0[b / 64] >> (b % 64)) & 1 == 1);
        if sticky {
            top |= 1;
        }
        libm::scalbn(top as f64, shift as i32 - n as i32)
    }
}

/// `P(X >= wins)` for `X ~ Binomial(n, 1/2)`, computed exactly with integer
/// arithmetic (`Σ_{k >= wins} C(n, k)`, then one correctly rounded division by
/// `2^n`), for any `n` whose result does not underflow f64 (n up to 1074 at
/// least). Equals `scipy.stats.binomtest(wins, n, 0.5, alternative='greater').pvalue`.
pub fn binomial_sf_half(n: usize, wins: usize) -> f64 {
    if wins == 0 {
        return 1.0;
    }
    if wins > n {
        return 0.0;
    }
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

/// Paired binomial sign test of SPEC 3.1 (JETO), pairs matched by index.
///
/// `wins_patched = #{j : p_j <= (1 - min_impr)·o_j}` and
/// `p_patched = P(X >= wins_patched)`, `X ~ Bin(n, 1/2)`; the reverse direction
/// swaps the roles. The verdict is `PatchedFaster` iff `p_patched < p_val`,
/// else `OriginalFaster` iff `p_original < p_val`, else `NotSignificant`
/// (both cannot hold for `p_val <= 0.5` and `min_impr >= 0`).
///
/// Both series need the same length (>= 1), finite, non-negative values.
///
/// ```
/// use etip_stats::{sign_test, Direction, SignTestConfig};
/// let original = vec![1.0; 30];
/// let mut patched = vec![1.0; 30];
/// for p in patched.iter_mut().take(20) { *p = 0.9; }
/// let v = sign_test(&original, &patched, &SignTestConfig::default())?;
/// assert_eq!((v.wins_patched, v.direction), (20, Direction::PatchedFaster));
/// # Ok::<(), etip_stats::StatsError>(())
/// ```
pub fn sign_test(
    original: &[f64],
    patched: &[f64],
    cfg: &SignTestConfig,
) -> Result<SignTestVerdict, StatsError> {
    if !(cfg.min_impr.is_finite() && (0.0..1.0).contains(&cfg.min_impr)) {
        return Err(StatsError::InvalidParameter(format!(
            "sign test min_impr must be in [0, 1), got {}",
            cfg.min_impr
        )));
    }
    if !(cfg.p_val > 0.0 && cfg.p_val <= 1.0) {
        return Err(StatsError::InvalidParameter(format!(
            "sign test p_val must be in (0, 1], got {}",
            cfg.p_val
        )));
    }
    if original.len() != patched.len() {
        return Err(StatsError::LengthMismatch {
            original: original.len(),
            patched: patched.len(),
        });
    }
    check_times("original", original, 1)?;
    check_times("patched", patched, 1)?;
    let n = original.len();
    let factor = 1.0 - cfg.min_impr;
    let wins_patched = original
        .iter()
        .zip(patched)
        .filter(|(o, p)| **p <= factor * **o)
        .count();
    let wins_original = original
        .iter()
        .zip(patched)
        .filter(|(o, p)| **o <= factor * **p)
        .count();
    let p_patched = binomial_sf_half(n, wins_patched);
    let p_original = binomial_sf_half(n, wins_original);
    let direction = if p_patched < cfg.p_val {
        Direction::PatchedFaster
    } else if p_original < cfg.p_val {
        Direction::OriginalFaster
    } else {
        Direction::NotSignificant
    };
    let ratios: Vec<f64> = original
        .iter()
        .zip(patched)
        .map(|(o, p)| if *o == 0.0 && *p == 0.0 { 1.0 } else { p / o })
        .collect();
    let median_ratio = median_sorted(&sorted_copy(&ratios));
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
        median_ratio,
        improvement,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_rounds_need_twenty_wins() {
        let p20 = binomial_sf_half(30, 20);
        let p19 = binomial_sf_half(30, 19);
        // Σ_{k>=20} C(30,k) = 53009102, Σ_{k>=19} C(30,k) = 107636402; 2^30 = 1073741824.
        assert_eq!(p20, 53_009_102.0 / 1_073_741_824.0);
        assert_eq!(p19, 107_636_402.0 / 1_073_741_824.0);
        assert!((p20 - 0.0494).abs() < 1e-4 && p20 < 0.1);
        assert!((p19 - 0.1002).abs() < 1e-4 && p19 >= 0.1);

        let cfg = SignTestConfig::default();
        let original = vec![10.0; 30];
        let verdict = |wins: usize| {
            let patched: Vec<f64> = (0..30).map(|j| if j < wins { 9.5 } else { 10.0 }).collect();
            sign_test(&original, &patched, &cfg).expect("valid input")
        };
        let v = verdict(20);
        assert_eq!((v.wins_patched, v.wins_original), (20, 0));
        assert_eq!(v.direction, Direction::PatchedFaster);
        let v = verdict(19);
        assert_eq!(v.wins_patched, 19);
        assert_eq!(v.direction, Direction::NotSignificant);
    }

    #[test]
    fn exact_small_values() {
        assert_eq!(binomial_sf_half(0, 0), 1.0);
        assert_eq!(binomial_sf_half(5, 6), 0.0);
        assert_eq!(binomial_sf_half(1, 1), 0.5);
        assert_eq!(binomial_sf_half(10, 10), 1.0 / 1024.0);
        assert_eq!(binomial_sf_half(10, 1), 1023.0 / 1024.0);
        assert_eq!(binomial_sf_half(1000, 1000), 2f64.powi(-1000));
        // Symmetry: P(X >= k) + P(X >= n - k + 1) = 1.
        for n in [7usize, 64, 65, 200, 1000] {
            for k in 1..=n {
                let s = binomial_sf_half(n, k) + binomial_sf_half(n, n - k + 1);
                assert!((s - 1.0).abs() < 1e-15, "n={n} k={k}: {s}");
            }
        }
    }

    #[test]
    fn original_faster_and_errors() {
        let original = vec![1.0; 10];
        let patched = vec![2.0; 10];
        let v = sign_test(&original, &patched, &SignTestConfig::conservative()).expect("valid");
        assert_eq!(v.direction, Direction::OriginalFaster);
        assert_eq!((v.wins_patched, v.wins_original), (0, 10));
        assert_eq!(v.median_ratio, 2.0);
        assert_eq!(v.improvement, -1.0);
        assert!(matches!(
            sign_test(&[1.0], &[1.0, 2.0], &SignTestConfig::default()),
            Err(StatsError::LengthMismatch {
                original: 1,
                patched: 2
            })
        ));
    }

    #[test]
    fn serde_names_are_snake_case() {
        let v = sign_test(&[2.0; 5], &[1.0; 5], &SignTestConfig::default()).expect("valid");
        let json = serde_json::to_string(&v).expect("serialisable");
        assert!(json.contains("\"direction\":\"patched_faster\""), "{json}");
        let back: SignTestVerdict = serde_json::from_str(&json).expect("round trip");
        assert_eq!(back, v);
    }
}
