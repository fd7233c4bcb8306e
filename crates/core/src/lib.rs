//! Domain types shared by every etip crate: candidates, instances, run records, verdicts and configs.
//!
//! This crate does no I/O; it only defines the serde schemas that travel between etip's stages as
//! JSON/JSONL files.

pub mod candidate;
pub mod instance;
pub mod language;
pub mod measure;

pub use language::Language;
pub mod results;
