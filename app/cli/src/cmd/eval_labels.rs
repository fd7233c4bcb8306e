//! The AST labels of an evaluated patch live in the application layer
//! ([`etip_pipeline::labels`]); this keeps the string error `cmd/eval.rs` chains them with until
//! the eval stage moves there too.

use etip_core::instance::InstanceStatus;
use etip_lang::labels::Labels;
use std::path::Path;

/// [`etip_pipeline::labels::label`], its error as text.
pub fn label(
    status: &InstanceStatus,
    gold: &str,
    candidate: &str,
    files: &Path,
    cache: &Path,
) -> Result<Labels, String> {
    etip_pipeline::labels::label(status, gold, candidate, files, cache).map_err(|e| e.to_string())
}
