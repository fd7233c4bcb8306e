//! The output-path rules every command shares: they live in the pipeline
//! ([`etip_pipeline::output`]); re-exported here for the commands that still name them so.

pub use etip_pipeline::output::*;
