//! Domain types shared by every etip crate: candidates, instances, selections, detectors and the
//! workloads an ETIP carries, the two versions of an ETIP, languages and process limits.
//!
//! This crate defines the serde schemas of mining, building and selecting that travel between
//! etip's stages as JSON/JSONL files (the records of measuring and evaluating, which embed
//! `etip-stats`' verdicts, are `etip-records`'), the pipeline's work units with the traits that run
//! and record them ([`unit`]), and the one cancellation token every stage reads ([`cancel`]). Its
//! only I/O is the two primitives every command shares: [`bounded`], the size-limited read of
//! every input file a user names, and [`atomic`], the atomic replacement of every output file.

pub mod atomic;
pub mod bounded;
pub mod cancel;
pub mod candidate;
pub mod category;
pub mod clip;
pub mod detector;
pub mod gso_test;
pub mod hack;
pub mod instance;
pub mod language;
pub mod measure;
pub mod node;
pub mod process;
pub mod selection;
pub mod task;
pub mod unit;

pub use language::Language;
