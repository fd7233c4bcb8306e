//! Reading the binary's own input files within etip's limits lives in the application layer:
//! [`etip_pipeline::input`].

pub use etip_pipeline::input::*;
