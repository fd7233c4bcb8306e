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
//!   coverage across submissions;
//! * scores them again without the patches a reward-hack screen flagged ([`hacks`]);
//! * ranks them per benchmark under the official score and each alternative, with short names and
//!   the expert's and duplicate runs set apart ([`runs`], [`board`]).
//!
//! Every numeric parameter has one valid range ([`param`]), checked by [`rules::Params::validate`]
//! and [`audit::AuditParams::validate`] before anything is computed. Inputs are read within size
//! limits and checked for runtimes the rules cannot compute with and for inconsistent official data
//! ([`input`]); errors name the file and the line and quote at most a short prefix of the input
//! ([`clip`]).
//!
//! ```no_run
//! use etip_score::{input, rules};
//! let sub = input::load_file("eval_report_model.csv".as_ref(), None)?;
//! let row = rules::score(&sub, rules::Rule::Swefficiency, &rules::Params::default())?;
//! println!("{}: {:.4}", row.submission, row.score);
//! # Ok::<(), etip_score::ScoreError>(())
//! ```

pub mod audit;
pub mod board;
pub use etip_core::clip;
mod error;
pub mod hacks;
pub mod input;
pub mod param;
pub mod rank;
pub mod replay;
pub mod rules;
pub mod runs;

pub use error::{ParamTextError, Result, ScoreError};
