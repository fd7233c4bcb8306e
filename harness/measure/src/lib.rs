//! The timing protocol of `etip measure` (and of `etip eval`, which runs agent patches through the
//! same engine), written out plainly after hyperfine's `benchmark/mod.rs`. Commands run through
//! an [`etip_exec::executor::Executor`]; which tests run comes from `etip select`
//! ([`etip_select`]) or the instance's defaults.
//!
//! - [`protocol`]: warm-up, order-alternated rounds, reports read after every command, pressure
//!   checks, every round handed to a sink (the store) as it completes;
//! - [`verdict`]: sign tests (with the timer-resolution rule), Mann–Whitney tests, effect sizes,
//!   adaptive rounds under a group-sequential design;
//! - [`workload`]: the workloads an ETIP carries, run by etip's runner in a fresh process per
//!   round and version, each a detector of kind `workload` (a failing one is recorded, not fatal);
//!   the project's own suites run the same way ([`suites`]: asv, pytest-benchmark; [`jmh`]: JMH);
//! - [`consistency`]: the times the reports give held against the wall time measured around each
//!   test command (a candidate's code runs in the process that writes its report);
//! - [`measure`]: the whole of `etip measure` for one built instance: plan, resume from the store,
//!   protocol, verdicts, the [`etip_records::measure::Measurement`] record.
//!
//! ```
//! use etip_measure::protocol::Order;
//! use etip_core::measure::Version;
//! // JETO's alternation: round k runs the patched version first when k is odd.
//! assert_eq!(Order::Alternate.first(1), Version::Patched);
//! assert_eq!(Order::Alternate.first(2), Version::Original);
//! ```

pub mod consistency;
pub mod java_workload;
pub mod jmh;
pub mod measure;
pub mod protocol;
pub mod suites;
mod testrun;
pub mod verdict;
pub mod workload;
