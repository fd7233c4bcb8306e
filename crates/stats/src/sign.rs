//! JETO's paired binomial sign test (rules §3.1).
//!
//! The p-values are binomial tails `P(X >= w)`, `X ~ Bin(n, 1/2)` ([`binomial_sf_half`]): exact
//! big-integer sums up to [`EXACT_SIGN_ROUNDS`] = 1024 rounds (bit for bit the values of earlier
//! versions, equal to scipy's `binomtest`), Loader's saddle-point expansion above, with a
//! relative error below 1e-12 against the exact sum (checked for every `w` at n = 1025 … 200 000;
//! below 1e-14 for p-values of at least 1e-10). So a sign test on 200 000 rounds costs a sort for
//! the median ratio, not seconds of big-integer arithmetic. A verdict could only differ from the
//! exact one if a p-value lay within that relative distance of `p_val`.

use serde::{Deserialize, Serialize};

use crate::binomial::{EXACT_SIGN_ROUNDS, exact_sf_half, saddle_sf_half};
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

    /// The range of `min_impr`, as messages state it: 1 would ask a version to take no time.
    pub const MIN_IMPR_RANGE: &'static str = "[0, 1)";
    /// The range of `p_val`: above 0.5 a class could be significantly faster both ways.
    pub const P_VAL_RANGE: &'static str = "(0, 0.5]";

    /// Whether `x` is a valid `min_impr` ([`Self::MIN_IMPR_RANGE`]): the one definition every
    /// command that takes the parameter uses.
    pub fn min_impr_ok(x: f64) -> bool {
        x.is_finite() && (0.0..1.0).contains(&x)
    }

    /// Whether `x` is a valid `p_val` ([`Self::P_VAL_RANGE`]).
    pub fn p_val_ok(x: f64) -> bool {
        x > 0.0 && x <= 0.5
    }

    /// Checks both parameters against their ranges.
    pub fn validate(&self) -> Result<(), StatsError> {
        if !Self::min_impr_ok(self.min_impr) {
            return Err(StatsError::InvalidParameter(format!(
                "min_impr must be in {}, got {}",
                Self::MIN_IMPR_RANGE,
                self.min_impr
            )));
        }
        if !Self::p_val_ok(self.p_val) {
            return Err(StatsError::InvalidParameter(format!(
                "p_val must be in {}, got {}",
                Self::P_VAL_RANGE,
                self.p_val
            )));
        }
        Ok(())
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

/// Outcome of [`sign_test`], and the `sign_test` record of a class in `measurements.jsonl`
/// (schema in `docs/schemas/measurements.md`; `"inf"` for non-finite ratios, see
/// [`crate::nonfinite`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SignTestRecord {
    /// The verdict.
    pub direction: Direction,
    /// Number of pairs (rounds) the verdict is based on.
    pub n: usize,
    /// `#{j : p_j <= (1 - min_impr)·o_j}`.
    pub wins_patched: usize,
    /// `P(X >= wins_patched)`, X ~ Bin(n, 1/2).
    pub p_patched: f64,
    /// `#{j : o_j <= (1 - min_impr)·p_j}`.
    pub wins_original: usize,
    /// `P(X >= wins_original)`, X ~ Bin(n, 1/2).
    pub p_original: f64,
    /// Pairs that were ties under the timer-resolution rule (both times at or below the
    /// resolution, [`TimerRule::Resolution`]); 0 under [`TimerRule::Literal`].
    #[serde(default)]
    pub ties: usize,
    /// Median of `p_j / o_j` (`0/0` counts as 1, `p/0` as +∞, written `"inf"`).
    #[serde(with = "crate::nonfinite")]
    pub median_ratio: f64,
    /// `(Σo - Σp) / Σo` (0 when both sums are 0, -∞ when only Σo is 0, written `"-inf"`).
    #[serde(with = "crate::nonfinite")]
    pub improvement: f64,
    /// Rounds at which a sequential procedure stopped for this series (adaptive rounds; `None`
    /// for a test at fixed n, as [`sign_test`] computes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<usize>,
}

/// `P(X >= wins)` for `X ~ Binomial(n, 1/2)`, the p-value of the sign test.
///
/// Up to [`EXACT_SIGN_ROUNDS`] (1024) rounds it is computed exactly with integer arithmetic
/// (`Σ_{k >= wins} C(n, k)`, then one correctly rounded division by `2^n`): it equals
/// `scipy.stats.binomtest(wins, n, 0.5, alternative='greater').pvalue`, costs O(n²/64) word
/// operations and is correctly rounded down to results near 2^-1074. Above 1024 rounds it uses
/// Loader's saddle-point expansion of the binomial terms (O(√n); 200 000 rounds take
/// microseconds instead of seconds), with a relative error below 1e-12 against the exact sum
/// for results above `f64::MIN_POSITIVE` (below, a subnormal result is within
/// 1e-12 · `f64::MIN_POSITIVE`); `wins = n` still gives exactly `2^-n`. See the `binomial`
/// module for the method and the measured accuracy.
///
/// ```
/// use etip_stats::binomial_sf_half;
/// assert_eq!(binomial_sf_half(30, 20), 53_009_102.0 / 1_073_741_824.0); // exact
/// // 200 000 rounds, by the saddle-point method; the exact value (Python integers) is
/// // 0.012746945333473458.
/// let p = binomial_sf_half(200_000, 100_500);
/// assert!((p / 0.012746945333473458 - 1.0).abs() < 1e-12);
/// assert_eq!(binomial_sf_half(200_000, 200_000), 0.0); // 2^-200000 underflows
/// ```
pub fn binomial_sf_half(n: usize, wins: usize) -> f64 {
    if wins == 0 {
        return 1.0;
    }
    if wins > n {
        return 0.0;
    }
    if n <= EXACT_SIGN_ROUNDS {
        exact_sf_half(n, wins)
    } else {
        saddle_sf_half(n, wins)
    }
}

/// How a pair of round times too small for the timer is counted.
///
/// Test reports give round times at a finite resolution: Maven Surefire
/// writes milliseconds and often `time="0"`. Under JETO's literal rule a pair
/// `(0, 0)` satisfies `p <= (1 - min_impr)·o` *and* `o <= (1 - min_impr)·p`,
/// so it is a win for both versions, and a class too fast to time can look
/// significantly faster in both directions.
///
/// Serialised in snake case: `"literal"` or `{"resolution": 0.001}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerRule {
    /// JETO's rule as written: every pair is judged by the two inequalities,
    /// so `(0, 0)` counts as a win for both versions.
    Literal,
    /// Timer resolution `r` (same unit as the times, finite, `>= 0`): a pair
    /// whose two times are both `<= r` is a tie, a win for neither version
    /// (it still counts in `n`, as a non-winning round). Other pairs are
    /// judged as under [`TimerRule::Literal`]. `Resolution(0.0)` only
    /// neutralises exact `(0, 0)` pairs.
    Resolution(f64),
}

impl TimerRule {
    /// The rules' names, as the command line takes them ([`std::str::FromStr`]) and
    /// `measurements.jsonl` records them (`protocol.timer_rule`).
    pub const NAMES: [&'static str; 2] = ["resolution", "literal"];

    /// `literal` or `resolution` (whatever the resolution).
    pub fn name(self) -> &'static str {
        match self {
            TimerRule::Literal => "literal",
            TimerRule::Resolution(_) => "resolution",
        }
    }

    /// The rule for times reported at `resolution`: `Resolution(r)` becomes
    /// `Resolution(max(r, resolution))` (so `Resolution(0.0)` takes the report's own
    /// resolution), `Literal` stays literal.
    ///
    /// ```
    /// use etip_stats::TimerRule;
    /// assert_eq!(TimerRule::Resolution(0.0).at_resolution(0.001), TimerRule::Resolution(0.001));
    /// assert_eq!(TimerRule::Resolution(0.01).at_resolution(0.001), TimerRule::Resolution(0.01));
    /// assert_eq!(TimerRule::Literal.at_resolution(0.001), TimerRule::Literal);
    /// ```
    pub fn at_resolution(self, resolution: f64) -> TimerRule {
        match self {
            TimerRule::Literal => TimerRule::Literal,
            TimerRule::Resolution(r) => TimerRule::Resolution(r.max(resolution)),
        }
    }
}

/// etip's default: `Resolution(0.0)`, ties at the resolution of the reports.
impl Default for TimerRule {
    fn default() -> Self {
        TimerRule::Resolution(0.0)
    }
}

impl std::fmt::Display for TimerRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses a name of [`TimerRule::NAMES`] (ASCII case ignored): `literal`, or `resolution` as
/// `Resolution(0.0)` (the reports' own resolution, see [`TimerRule::at_resolution`]).
///
/// ```
/// use etip_stats::TimerRule;
/// assert_eq!("literal".parse::<TimerRule>()?, TimerRule::Literal);
/// assert_eq!("resolution".parse::<TimerRule>()?, TimerRule::Resolution(0.0));
/// assert!("exact".parse::<TimerRule>().is_err());
/// # Ok::<(), etip_stats::StatsError>(())
/// ```
impl std::str::FromStr for TimerRule {
    type Err = StatsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("literal") {
            Ok(TimerRule::Literal)
        } else if s.eq_ignore_ascii_case("resolution") {
            Ok(TimerRule::default())
        } else {
            Err(StatsError::InvalidParameter(format!(
                "unknown timer rule {s:?}; expected {}",
                TimerRule::NAMES.join(" or ")
            )))
        }
    }
}

/// Validates the sign-test thresholds.
fn check_config(cfg: &SignTestConfig) -> Result<(), StatsError> {
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
    Ok(())
}

/// Win counts and ties `(wins_patched, wins_original, ties)` of paired series under `rule`;
/// the inputs must already be validated.
fn count_wins(
    original: &[f64],
    patched: &[f64],
    factor: f64,
    rule: TimerRule,
) -> (usize, usize, usize) {
    let tie = |o: f64, p: f64| match rule {
        TimerRule::Literal => false,
        TimerRule::Resolution(r) => o <= r && p <= r,
    };
    let mut wins_patched = 0;
    let mut wins_original = 0;
    let mut ties = 0;
    for (&o, &p) in original.iter().zip(patched) {
        if tie(o, p) {
            ties += 1;
            continue;
        }
        wins_patched += usize::from(p <= factor * o);
        wins_original += usize::from(o <= factor * p);
    }
    (wins_patched, wins_original, ties)
}

/// The smallest p-value `n` rounds can give: `P(X >= n) = 0.5^n` for
/// `X ~ Bin(n, 1/2)` (all rounds won); `1` for `n = 0`.
///
/// ```
/// use etip_stats::min_sign_p_value;
/// // With 2 rounds the smallest p is 0.25: never significant at p_val = 0.1.
/// assert_eq!(min_sign_p_value(2), 0.25);
/// assert_eq!(min_sign_p_value(4), 0.0625);
/// ```
pub fn min_sign_p_value(n: usize) -> f64 {
    binomial_sf_half(n, n)
}

/// Whether some outcome of `n` rounds can be significant, i.e.
/// `min_sign_p_value(n) < p_val` (the test is strict). For example, with 2
/// rounds the smallest p is 0.25, so the test can never reject at
/// `p_val = 0.1`; at least 4 rounds (`0.0625`) are needed.
///
/// ```
/// use etip_stats::sign_test_feasible;
/// assert!(!sign_test_feasible(2, 0.1));
/// assert!(!sign_test_feasible(3, 0.1));
/// assert!(sign_test_feasible(4, 0.1));
/// assert!(!sign_test_feasible(1, 0.5)); // p = 0.5 is not < 0.5
/// ```
pub fn sign_test_feasible(n: usize, p_val: f64) -> bool {
    min_sign_p_value(n) < p_val
}

/// Paired binomial sign test of rules §3.1 (JETO), pairs matched by index.
///
/// `wins_patched = #{j : p_j <= (1 - min_impr)·o_j}` and
/// `p_patched = P(X >= wins_patched)`, `X ~ Bin(n, 1/2)`; the reverse direction
/// swaps the roles. The verdict is `PatchedFaster` iff `p_patched < p_val`,
/// else `OriginalFaster` iff `p_original < p_val`, else `NotSignificant`
/// (both cannot hold for `p_val <= 0.5` and `min_impr >= 0`, except through
/// `(0, 0)` pairs, see [`TimerRule`]).
///
/// This is the literal rule, `sign_test_with(.., TimerRule::Literal)`.
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
) -> Result<SignTestRecord, StatsError> {
    sign_test_with(original, patched, cfg, TimerRule::Literal)
}

/// [`sign_test`] with an explicit pair rule: under
/// [`TimerRule::Resolution`]`(r)` a pair whose two times are both `<= r` is a
/// tie (a win for neither version, still counted in `n`, counted in `ties`);
/// everything else is JETO's literal rule. `median_ratio` and `improvement` do
/// not depend on the rule.
///
/// Errors as [`sign_test`], plus `InvalidParameter` for a negative or
/// non-finite resolution.
///
/// ```
/// use etip_stats::{sign_test_with, Direction, SignTestConfig, TimerRule};
/// // A class too fast for a millisecond timer: every round reads 0.
/// let zeros = vec![0.0; 30];
/// let cfg = SignTestConfig::default();
/// let literal = sign_test_with(&zeros, &zeros, &cfg, TimerRule::Literal)?;
/// assert_eq!((literal.wins_patched, literal.wins_original), (30, 30));
/// assert_eq!(literal.direction, Direction::PatchedFaster); // an artefact
/// let timed = sign_test_with(&zeros, &zeros, &cfg, TimerRule::Resolution(0.001))?;
/// assert_eq!((timed.wins_patched, timed.wins_original), (0, 0));
/// assert_eq!(timed.direction, Direction::NotSignificant);
/// # Ok::<(), etip_stats::StatsError>(())
/// ```
pub fn sign_test_with(
    original: &[f64],
    patched: &[f64],
    cfg: &SignTestConfig,
    rule: TimerRule,
) -> Result<SignTestRecord, StatsError> {
    check_config(cfg)?;
    if let TimerRule::Resolution(r) = rule
        && !(r.is_finite() && r >= 0.0)
    {
        return Err(StatsError::InvalidParameter(format!(
            "timer resolution must be finite and >= 0, got {r}"
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
    let (wins_patched, wins_original, ties) =
        count_wins(original, patched, 1.0 - cfg.min_impr, rule);
    let p_patched = binomial_sf_half(n, wins_patched);
    let p_original = binomial_sf_half(n, wins_original);
    let direction = if p_patched < cfg.p_val {
        Direction::PatchedFaster
    } else if p_original < cfg.p_val {
        Direction::OriginalFaster
    } else {
        Direction::NotSignificant
    };
    let median_ratio = median_sorted(&sorted_copy(&pair_ratios(original, patched)));
    let sum_o: f64 = original.iter().sum();
    let sum_p: f64 = patched.iter().sum();
    let improvement = if sum_o == 0.0 {
        if sum_p == 0.0 { 0.0 } else { f64::NEG_INFINITY }
    } else {
        (sum_o - sum_p) / sum_o
    };
    Ok(SignTestRecord {
        direction,
        n,
        wins_patched,
        p_patched,
        wins_original,
        p_original,
        ties,
        median_ratio,
        improvement,
        stopped_at: None,
    })
}

/// Per-pair ratios `p_j / o_j`, with `0/0 = 1` (and `p/0 = +inf`).
pub(crate) fn pair_ratios(original: &[f64], patched: &[f64]) -> Vec<f64> {
    original
        .iter()
        .zip(patched)
        .map(|(o, p)| if *o == 0.0 && *p == 0.0 { 1.0 } else { p / o })
        .collect()
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
    fn many_rounds_use_the_saddle_point_within_1e_12() {
        // Above EXACT_SIGN_ROUNDS the tail comes from the saddle-point expansion: same counts,
        // median ratio and improvement, p-values within 1e-12 of the exact sums.
        let n = 2000;
        let original: Vec<f64> = (0..n).map(|i| 1.0 + f64::from(i % 17) * 0.01).collect();
        for shift in [0.0, 0.9, 0.94, 0.95, 0.96, 1.1] {
            let patched: Vec<f64> = original
                .iter()
                .enumerate()
                .map(|(i, o)| if i % 3 == 0 { o * shift } else { *o })
                .collect();
            for cfg in [SignTestConfig::default(), SignTestConfig::conservative()] {
                let v = sign_test(&original, &patched, &cfg).expect("valid");
                let exact = |wins: usize| match wins {
                    0 => 1.0,
                    w => exact_sf_half(n as usize, w),
                };
                let (p_patched, p_original) = (exact(v.wins_patched), exact(v.wins_original));
                for (p, exact) in [(v.p_patched, p_patched), (v.p_original, p_original)] {
                    assert!((p - exact).abs() <= 1e-12 * exact, "{p} vs {exact}");
                }
                let exact_direction = if p_patched < cfg.p_val {
                    Direction::PatchedFaster
                } else if p_original < cfg.p_val {
                    Direction::OriginalFaster
                } else {
                    Direction::NotSignificant
                };
                assert_eq!(v.direction, exact_direction, "shift {shift}");
            }
        }
        let mut bad = original.clone();
        bad[1500] = f64::NAN;
        assert!(matches!(
            sign_test(&original, &bad, &SignTestConfig::default()),
            Err(StatsError::NotFinite {
                name: "patched",
                index: 1500,
                ..
            })
        ));
        // The first value above the exact range: both methods agree at the boundary.
        let (exact, fast) = (exact_sf_half(1025, 540), binomial_sf_half(1025, 540));
        assert!((fast - exact).abs() <= 1e-12 * exact);
        assert_eq!(binomial_sf_half(1024, 540), exact_sf_half(1024, 540));
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
        let back: SignTestRecord = serde_json::from_str(&json).expect("round trip");
        assert_eq!(back, v);
    }

    #[test]
    fn timer_rule_makes_unmeasurable_pairs_ties() {
        let cfg = SignTestConfig::default();
        // 10 pairs (0, 0), 12 pairs where patched wins, 8 where neither wins.
        let mut original = vec![0.0; 10];
        let mut patched = vec![0.0; 10];
        original.extend([0.010; 12]);
        patched.extend([0.009; 12]);
        original.extend([0.010; 8]);
        patched.extend([0.010; 8]);
        let lit = sign_test_with(&original, &patched, &cfg, TimerRule::Literal).expect("valid");
        assert_eq!(lit, sign_test(&original, &patched, &cfg).expect("valid"));
        assert_eq!((lit.n, lit.wins_patched, lit.wins_original), (30, 22, 10));
        assert_eq!(lit.direction, Direction::PatchedFaster);
        for r in [0.0, 0.001] {
            let v =
                sign_test_with(&original, &patched, &cfg, TimerRule::Resolution(r)).expect("valid");
            // n stays 30; 12 wins: P(X >= 12) = 1 - P(X <= 11) for Bin(30, 1/2).
            assert_eq!((v.n, v.wins_patched, v.wins_original), (30, 12, 0));
            assert_eq!(v.p_patched, binomial_sf_half(30, 12));
            assert_eq!(v.direction, Direction::NotSignificant);
            assert_eq!(v.median_ratio, lit.median_ratio);
        }
        // A resolution of 10 ms swallows every pair here.
        let v =
            sign_test_with(&original, &patched, &cfg, TimerRule::Resolution(0.010)).expect("valid");
        assert_eq!((v.wins_patched, v.wins_original, v.p_patched), (0, 0, 1.0));
        // Only pairs with BOTH times at or below r are ties.
        let v = sign_test_with(
            &[0.002, 0.0],
            &[0.0, 0.002],
            &cfg,
            TimerRule::Resolution(0.001),
        )
        .expect("valid");
        assert_eq!((v.wins_patched, v.wins_original), (1, 1));
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                sign_test_with(&[1.0], &[1.0], &cfg, TimerRule::Resolution(bad)),
                Err(StatsError::InvalidParameter(_))
            ));
        }
    }

    #[test]
    fn timer_rule_serde() {
        let json = serde_json::to_string(&TimerRule::Literal).expect("serialisable");
        assert_eq!(json, "\"literal\"");
        let json = serde_json::to_string(&TimerRule::Resolution(0.001)).expect("serialisable");
        assert_eq!(json, "{\"resolution\":0.001}");
        let back: TimerRule = serde_json::from_str(&json).expect("round trip");
        assert_eq!(back, TimerRule::Resolution(0.001));
    }

    #[test]
    fn smallest_p_value_and_feasibility() {
        assert_eq!(min_sign_p_value(0), 1.0);
        assert_eq!(min_sign_p_value(1), 0.5);
        assert_eq!(min_sign_p_value(2), 0.25);
        assert_eq!(min_sign_p_value(30), 1.0 / 1_073_741_824.0);
        assert_eq!(min_sign_p_value(1074), f64::from_bits(1)); // 2^-1074
        // p_val = 0.1 needs 4 rounds, 0.05 needs 5 (0.5^5 = 0.03125), 0.01 needs 7.
        let first = |p: f64| (0..).find(|&n| sign_test_feasible(n, p)).expect("exists");
        assert_eq!(first(0.1), 4);
        assert_eq!(first(0.05), 5);
        assert_eq!(first(0.01), 7);
        assert!(!sign_test_feasible(0, 1.0));
        assert!(sign_test_feasible(1, 0.5000001));
        // Feasible iff the all-wins outcome is significant.
        for n in 1..12 {
            let all =
                sign_test(&vec![1.0; n], &vec![0.5; n], &SignTestConfig::default()).expect("valid");
            assert_eq!(
                all.direction == Direction::PatchedFaster,
                sign_test_feasible(n, 0.1),
                "n={n}"
            );
        }
    }

    #[test]
    fn parameter_ranges() {
        let ok = |min_impr, p_val| SignTestConfig { min_impr, p_val }.validate().is_ok();
        assert!(ok(0.05, 0.1) && ok(0.0, 0.5) && ok(0.999, 1e-9));
        for (m, p) in [
            (1.0, 0.1),
            (-0.01, 0.1),
            (f64::NAN, 0.1),
            (f64::INFINITY, 0.1),
            (0.05, 0.0),
            (0.05, 0.51),
            (0.05, f64::NAN),
            (0.05, -1.0),
        ] {
            assert!(!ok(m, p), "min_impr {m}, p_val {p} should be refused");
        }
    }
}
