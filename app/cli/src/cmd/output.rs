//! The output rules every command follows (atomic writes, folder locks, distinct paths, state
//! stores) live in the application layer: [`etip_pipeline::output`].

pub use etip_pipeline::output::*;
