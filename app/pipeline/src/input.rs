//! Reading the commands' own input files (issues, status lists, selections, predictions,
//! configurations) within etip's limits (`etip_core::bounded`: 256 MiB per file, 64 MiB per line,
//! a byte order mark dropped): a path such as `/dev/zero` or a huge file gets a clear error (exit
//! 2) instead of filling the memory.

use crate::InputError;
use std::path::Path;

pub use etip_core::bounded::MAX_INPUT_BYTES;

/// Reads `path` as UTF-8 text of at most `limit` bytes; every failure is bad input (exit 2) and
/// names the file.
pub fn read_text_capped(path: &Path, limit: u64) -> Result<String, InputError> {
    etip_core::bounded::read_to_string_capped(path, limit)
        .map_err(|e| InputError(format!("reading {}: {e}", path.display())))
}

/// Reads `path` as UTF-8 text within the default limits; every failure is bad input (exit 2) and
/// names the file.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    etip_core::bounded::read_text(path)
        .map_err(|e| InputError(format!("reading {}: {e}", path.display())))
}
