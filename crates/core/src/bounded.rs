//! Reading an input file whole, with a size limit: a path such as `/dev/zero`, a FIFO that never
//! ends or a huge file gets a clear error instead of filling the memory. This is the crate's one
//! piece of I/O, shared by every reader of small inputs (ETIP lists, status lists, configurations,
//! aliases).

use std::io::Read;
use std::path::Path;

/// The largest list or configuration file etip reads whole: 256 MiB.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads `path` as UTF-8 text of at most `limit` bytes. Too large: an error of kind
/// `FileTooLarge`; not UTF-8: kind `InvalidData` with the offset of the first bad byte. The
/// messages do not name the file: callers add it.
pub fn read_to_string_capped(path: &Path, limit: u64) -> std::io::Result<String> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "larger than the limit of {} for this kind of file",
                show_bytes(limit)
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn show_bytes(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_at_the_limit() {
        let err = read_to_string_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge);
        assert!(err.to_string().contains("limit of 1 MiB"), "{err}");
    }

    #[test]
    fn text_under_the_limit_is_read_and_binary_is_refused() {
        let dir = std::env::temp_dir().join(format!("etip-core-bounded-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = dir.join("ok.jsonl");
        std::fs::write(&ok, "{}\n").unwrap();
        assert_eq!(read_to_string_capped(&ok, 3).unwrap(), "{}\n");
        assert!(read_to_string_capped(&ok, 2).is_err(), "one byte over");
        let bin = dir.join("bin");
        std::fs::write(&bin, [b'a', 0xff, b'b']).unwrap();
        let err = read_to_string_capped(&bin, 16).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("offset 1"), "{err}");
        assert!(read_to_string_capped(&dir.join("none"), 16).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
