//! The check of reported times against measured wall time (rules §3.8), as `etip measure` records
//! it per measurement and `etip eval` per task result.

use etip_stats::nonfinite;
use serde::{Deserialize, Serialize};

/// The times one side's reports give, held against the wall time etip measured around its test
/// command, compared with the original side's (rules §3.8). Times are seconds; "per round" figures
/// are medians over the timed rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimingCheck {
    /// The side checked against the original (`patched`, `candidate`, `reference`).
    pub side: String,
    /// Both rules hold: no report total above its command's wall time, and the rounds' excess not
    /// significantly above the tolerance.
    pub consistent: bool,
    /// Timed rounds checked.
    pub rounds: usize,
    /// Rounds in which the timed classes' reported total exceeded the command's own wall time
    /// (beyond the report's rounding), per side `[original, checked side]`.
    pub over_wall: [usize; 2],
    /// Time saved per round by the reports (original's timed total minus the side's).
    pub saved_by_report: f64,
    /// Time saved per round by the wall clock (original's command time minus the side's).
    pub saved_by_wall: f64,
    /// Per round, the saving by report minus the saving by wall clock (how much more time the
    /// side spent outside its reported classes than the original did); the median over rounds.
    pub excess: f64,
    /// The largest `excess` a round may have without disagreeing (median over rounds: it may
    /// grow with the original's command time).
    pub tolerance: f64,
    /// Rounds whose excess is above their tolerance.
    pub disagreeing: usize,
    /// One-sided Wilcoxon signed-rank p-value of the rounds' excess over their tolerance: the side
    /// disagrees when it is below the check's `p_val` (0.01 by default).
    pub p_disagree: f64,
    /// `Σ original report / Σ side report` over the timed classes.
    #[serde(with = "nonfinite")]
    pub speedup_by_report: f64,
    /// `Σ original command time / Σ side command time`.
    #[serde(with = "nonfinite")]
    pub speedup_by_wall: f64,
    /// What disagrees, in words (absent when consistent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}
