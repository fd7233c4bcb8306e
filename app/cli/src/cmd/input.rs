//! Reading the binary's input files within etip's limits: it lives in the pipeline
//! ([`etip_pipeline::input`]); re-exported here for the commands that still name it so.

pub use etip_pipeline::input::*;
