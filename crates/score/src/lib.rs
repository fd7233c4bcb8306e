//! Scoring rules of published optimisation benchmarks and leaderboard audit diagnostics.
//!
//! `etip-score` reads per-task results of agent submissions — SWE-fficiency `eval_report_*.csv`, GSO
//! report `.json` and etip's own task-result `.jsonl` — and the `measurements.jsonl` of `etip measure`
//! ([`input`]), and
//!
//! * scores them under the rules of SWE-fficiency, GSO, SWE-Perf and JETO ([`rules`]), reproducing the
//!   official leaderboard numbers exactly where the inputs are official reports;
//! * audits a set of submissions ([`audit`]): the tail weight of the harmonic mean, bounded penalties,
//!   test-failure tolerance, rescoring under another benchmark's rule, ranking agreement ([`rank`]) and
//!   coverage across submissions.
//!
//! ```no_run
//! use etip_score::{input, rules};
//! let sub = input::load_file("eval_report_model.csv".as_ref(), None)?;
//! let row = rules::score(&sub, rules::Rule::Swefficiency, &rules::Params::default())?;
//! println!("{}: {:.4}", row.submission, row.score);
//! # Ok::<(), etip_score::ScoreError>(())
//! ```

pub mod audit;
mod error;
pub mod input;
pub mod rank;
pub mod rules;

pub use error::{Result, ScoreError};
