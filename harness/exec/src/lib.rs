//! Where etip's commands run: the [`executor::Executor`] trait and its implementations, shared by
//! `etip select`, `etip measure` and `etip eval`.
//!
//! - [`executor`]: the trait — start a session for one version of an instance, run a command in
//!   it (argv, env, cwd, time limit → exit code, own wall time, output), copy a folder out, stop;
//! - [`docker`]: long-lived containers of the instance image (network none, whole cores pinned,
//!   memory, pids and time limits);
//! - [`local`]: host processes on checked-out trees, for users without an engine;
//! - [`scripted`]: deterministic sessions for the protocol's tests;
//! - [`session`]: the session request of one version of a built instance;
//! - [`reports`]: per-class times from the test frameworks' XML reports (Surefire `TEST-*.xml`,
//!   pytest `--junitxml`), read with quick-xml;
//! - [`noise`]: facts for noise control read from `/sys` and `/proc`: CPU topology and the
//!   pinning of sessions to whole physical cores, CPU model, kernel, pressure stall information.

pub mod docker;
pub mod executor;
pub mod local;
pub mod noise;
pub mod reports;
pub mod scripted;
pub mod session;
