//! The timing protocol of `etip measure` (and of `etip eval`, which runs agent patches through the
//! same engine), written out plainly after hyperfine's `benchmark/mod.rs`.
//!
//! - [`executor`]: the [`executor::Executor`] trait — start a session for one version of an
//!   instance, run a command in it (argv, env, cwd, time limit → exit code, own wall time,
//!   output), copy a folder out, stop — with three implementations: [`docker`] (long-lived
//!   containers of the instance image), [`local`] (host processes on checked-out trees, for users
//!   without an engine) and [`scripted`] (deterministic, for the protocol's tests);
//! - [`protocol`]: warm-up, order-alternated rounds, reports read after every command, pressure
//!   checks, every round handed to a sink (the store) as it completes;
//! - [`reports`]: per-class times from the test frameworks' XML reports (Surefire `TEST-*.xml`,
//!   pytest `--junitxml`), read with quick-xml;
//! - [`verdict`]: sign tests (with the timer-resolution rule), Mann–Whitney tests, effect sizes,
//!   adaptive rounds under a group-sequential design;
//! - [`consistency`]: the times the reports give held against the wall time measured around each
//!   test command (a candidate's code runs in the process that writes its report);
//! - [`measure`]: the whole of `etip measure` for one built instance: plan, resume from the store,
//!   protocol, verdicts, the [`etip_core::measure::Measurement`] record;
//! - [`noise`]: facts for noise control read from `/sys` and `/proc`: CPU topology and the
//!   pinning of sessions to whole physical cores, CPU model, kernel, pressure stall information.
//!
//! ```
//! use etip_runner::protocol::Order;
//! use etip_core::measure::Version;
//! // JETO's alternation: round k runs the patched version first when k is odd.
//! assert_eq!(Order::Alternate.first(1), Version::Patched);
//! assert_eq!(Order::Alternate.first(2), Version::Original);
//! ```

pub mod consistency;
pub mod docker;
pub mod executor;
pub mod local;
pub mod measure;
pub mod noise;
pub mod protocol;
pub mod reports;
pub mod scripted;
pub mod select;
pub mod verdict;
