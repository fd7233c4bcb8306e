//! Domain types shared by every etip crate: candidates, instances, run records, verdicts and configs.
//!
//! This crate defines the serde schemas that travel between etip's stages as JSON/JSONL files; its
//! only I/O is [`bounded::read_to_string_capped`], the size-limited read every reader of a small
//! input file uses.

pub mod bounded;
pub mod candidate;
pub mod clip;
pub mod instance;
pub mod language;
pub mod measure;
pub mod process;
pub mod selection;

pub use language::Language;
pub mod results;
