//! Statistics for execution-time comparisons: JETO's paired binomial sign test
//! (with a timer-resolution rule and a group-sequential version for adaptive
//! rounds) and JETO's verdict of a task over its test classes ([`jeto_verdict`]), the Mann–Whitney U test (matching `scipy.stats.mannwhitneyu`), the
//! Wilcoxon signed-rank test (matching `scipy.stats.wilcoxon`),
//! numpy-style quantiles and the IQR outlier filter, SWE-Perf's minimum-gain
//! δ, summary statistics, effect sizes (Cliff's δ, median paired ratio) and
//! bootstrap intervals.
//!
//! Every function that can reject its input returns [`StatsError`], whose
//! message names the offending series. Results are plain `serde` structs.
//!
//! The statistical vocabulary of etip's records is defined here, once: [`Direction`], the sign
//! test's [`SignTestRecord`] (what [`sign_test`] returns and what `measurements.jsonl` holds per
//! class), [`MannWhitneyRecord`], [`EffectRecord`] and the [`nonfinite`] serde helpers that write
//! infinite ratios as `"inf"`. The records that embed them (a measurement, a task result) are
//! `etip-records`'.
//!
//! This crate is the one implementation of these statistics, for `etip measure` and the
//! scoring rules alike, and it scales to hundreds of thousands of runs: the sign test's
//! binomial tail is exact up to [`EXACT_SIGN_ROUNDS`] rounds and a saddle-point expansion
//! (relative error < 1e-12) above, and each step of the δ search is one merge of the sorted
//! samples, O(n_base + n_patched).
//!
//! ```
//! use etip_stats::{mann_whitney_u, sign_test, sweperf_delta, Alternative, DeltaConfig,
//!                  Direction, MwuMethod, SignTestConfig};
//!
//! let original: Vec<f64> = (0..30).map(|i| 1.00 + 0.001 * i as f64).collect();
//! let patched: Vec<f64> = (0..30).map(|i| 0.80 + 0.001 * i as f64).collect();
//!
//! // JETO: is the patched version significantly faster, round by round?
//! let verdict = sign_test(&original, &patched, &SignTestConfig::default())?;
//! assert_eq!(verdict.direction, Direction::PatchedFaster);
//!
//! // scipy-compatible rank test.
//! let mw = mann_whitney_u(&original, &patched, Alternative::Greater, MwuMethod::Auto)?;
//! assert!(mw.p_value < 1e-9);
//!
//! // SWE-Perf: largest relative gain that stays significant.
//! let delta = sweperf_delta(&original[..20], &patched[..20], &DeltaConfig::default())?;
//! assert!(delta > 0.1 && delta < 0.25);
//! # Ok::<(), etip_stats::StatsError>(())
//! ```

mod big;
mod binomial;
mod bootstrap;
mod delta;
mod effect;
mod error;
mod jeto;
mod mwu;
mod normal;
mod record;
mod sample;
mod sequential;
mod sign;
mod wilcoxon;

pub use binomial::EXACT_SIGN_ROUNDS;
pub use bootstrap::{Bootstrap, bootstrap_speedup_ci};
pub use delta::{DeltaConfig, sweperf_delta, sweperf_delta_reference};
pub use effect::{PairedRatio, cliffs_delta, paired_ratio_ci};
pub use error::StatsError;
pub use jeto::{JetoVerdict, Paired, jeto_verdict, round_totals, sequential_sign_test};
pub use mwu::{Alternative, EXACT_BUDGET, MannWhitney, MwuMethod, mann_whitney_u};
pub use normal::{normal_cdf, normal_sf};
pub use record::{EffectRecord, MannWhitneyRecord, nonfinite};
pub use sample::{Sample, Summary, iqr_filter, median, quantile_linear};
pub use sequential::{
    Futility, Look, MAX_SEQUENTIAL_ROUNDS, Operating, PairDecision, PairOperating, SeqDecision,
    SequentialDesign, SequentialParams, Spending, lognormal_win_probability,
};
pub use sign::{
    Direction, SignTestConfig, SignTestRecord, TimerRule, binomial_sf_half, min_sign_p_value,
    sign_test, sign_test_feasible, sign_test_with,
};
pub use wilcoxon::{EXACT_SIGNED_RANK, SignedRank, wilcoxon_signed_rank};
