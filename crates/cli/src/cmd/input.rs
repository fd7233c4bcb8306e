//! Reading the binary's own small input files (status lists, alias maps) with a size limit: a path
//! such as `/dev/zero` or a huge file gets a clear error instead of filling the memory.

use super::UsageError;
use std::io::Read;
use std::path::Path;

/// The largest input file the binary reads whole (status lists, aliases): 256 MiB.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads `path` as UTF-8 text of at most `limit` bytes; every failure is bad input (exit 2) and
/// names the file.
pub fn read_text_capped(path: &Path, limit: u64) -> Result<String, UsageError> {
    let bad = |what: String| UsageError(format!("reading {}: {what}", path.display()));
    let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| bad(e.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(bad(format!(
            "larger than the limit of {} MiB for this kind of file",
            limit >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        bad(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_at_the_limit() {
        let err = read_text_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(
            err.0.contains("/dev/zero") && err.0.contains("limit of 1 MiB"),
            "{err}"
        );
    }

    #[test]
    fn text_under_the_limit_is_read_and_binary_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("ok.jsonl");
        std::fs::write(&ok, "{}\n").unwrap();
        assert_eq!(read_text_capped(&ok, 16).unwrap(), "{}\n");
        let bin = dir.path().join("bin");
        std::fs::write(&bin, [b'a', 0xff, b'b']).unwrap();
        let err = read_text_capped(&bin, 16).unwrap_err();
        assert!(
            err.0.contains("not UTF-8") && err.0.contains("offset 1"),
            "{err}"
        );
        let missing = read_text_capped(&dir.path().join("none"), 16).unwrap_err();
        assert!(missing.0.contains("none"), "{missing}");
    }
}
