//! The records etip's stages write and read back, the schemas in one place (documented field by
//! field in `docs/schemas/`):
//!
//! - [`measure`]: one line of `measurements.jsonl` per ETIP (`etip measure`; schema
//!   `etip.measurement`), read back by `etip score --rule jeto` and `etip audit`;
//! - [`results`]: one line of a task-result `.jsonl` per task (`etip eval`; schema
//!   `etip.task-result`), the form every scoring rule reads;
//! - [`timing`]: the check of reported against measured times both carry (rules §3.8).
//!
//! The statistical records they embed (the sign test's, the Mann–Whitney tests', the effect
//! sizes', [`etip_stats::Direction`]) are `etip-stats`' own, which computes them; the version
//! names ([`etip_core::measure::Version`]) and the instance records are `etip-core`'s. Nothing
//! here does I/O.

pub mod measure;
pub mod results;
pub mod timing;
