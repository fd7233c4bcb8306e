//! Reading an input file whole, within limits: at most [`MAX_INPUT_BYTES`] per file and
//! [`MAX_LINE_BYTES`] per line, so that a path such as `/dev/zero`, a FIFO that never ends, a huge
//! file or one enormous line gets a clear error after a bounded amount of memory instead of filling
//! it. A UTF-8 byte order mark that some editors write first is dropped. Every reader of an input
//! file a user names (ETIP and status lists, predictions, issues, configurations, aliases, result
//! files) reads through here.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The largest input file etip reads whole: 256 MiB, about 20 times the largest official report
/// and room for millions of timed runs.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The longest line etip reads: 64 MiB (a JSON Lines task with a million runs per version fits).
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// The UTF-8 byte order mark.
const BOM: &str = "\u{feff}";

/// Why an input file could not be read. The messages do not name the file: callers add it.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened (missing, not allowed, ...).
    #[error("{0}")]
    Open(std::io::Error),
    /// Reading failed after the file was opened (a folder, a device error, ...).
    #[error("{0}")]
    Io(std::io::Error),
    /// The file is larger than the limit.
    #[error("larger than the limit of {} for this kind of file", show_bytes(*limit))]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// One line is longer than the limit.
    #[error("line {line} is longer than the limit of {} for one line", show_bytes(*limit))]
    LineTooLong {
        /// 1-based line number.
        line: usize,
        /// The limit in bytes.
        limit: u64,
    },
    /// The file is not UTF-8 text.
    #[error("not UTF-8 text (invalid byte at offset {offset}, line {line})")]
    NotUtf8 {
        /// 1-based line of the first invalid byte.
        line: usize,
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
}

impl From<ReadError> for std::io::Error {
    fn from(e: ReadError) -> Self {
        use std::io::ErrorKind;
        match e {
            ReadError::Open(e) | ReadError::Io(e) => e,
            e @ (ReadError::TooLarge { .. } | ReadError::LineTooLong { .. }) => {
                std::io::Error::new(ErrorKind::FileTooLarge, e.to_string())
            }
            e @ ReadError::NotUtf8 { .. } => {
                std::io::Error::new(ErrorKind::InvalidData, e.to_string())
            }
        }
    }
}

/// Reads `path` as UTF-8 text within the default limits ([`MAX_INPUT_BYTES`] per file,
/// [`MAX_LINE_BYTES`] per line); a leading byte order mark is dropped.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    read_text_within(path, MAX_INPUT_BYTES, MAX_LINE_BYTES)
}

/// [`read_text`] with explicit limits.
pub fn read_text_within(path: &Path, max_file: u64, max_line: u64) -> Result<String, ReadError> {
    let bytes = read_bytes_within(path, max_file, max_line)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        ReadError::NotUtf8 {
            line: line_of_offset(e.as_bytes(), offset),
            offset,
        }
    })?;
    Ok(match text.strip_prefix(BOM) {
        Some(rest) => rest.to_owned(),
        None => text,
    })
}

/// Reads `path` as UTF-8 text of at most `limit` bytes (and lines of at most [`MAX_LINE_BYTES`]);
/// a leading byte order mark is dropped. Too large: an error of kind `FileTooLarge`; not UTF-8:
/// kind `InvalidData` with the offset of the first bad byte.
pub fn read_to_string_capped(path: &Path, limit: u64) -> std::io::Result<String> {
    Ok(read_text_within(path, limit, MAX_LINE_BYTES.min(limit))?)
}

/// The bytes of a file, refused as soon as the file passes `max_file` bytes or one line passes
/// `max_line` bytes.
pub fn read_bytes_within(path: &Path, max_file: u64, max_line: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Open)?;
    // A regular file's size is known up front (one allocation, refused at once when too large);
    // /dev/zero, FIFOs and the like are bounded by `take` and the checks below.
    let known = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len());
    if known.is_some_and(|len| len > max_file) {
        return Err(ReadError::TooLarge { limit: max_file });
    }
    let mut out = Vec::with_capacity(usize::try_from(known.unwrap_or(0)).unwrap_or(0));
    let mut reader = BufReader::with_capacity(1 << 16, file.take(max_file.saturating_add(1)));
    let mut line = 1usize;
    let mut line_len = 0u64;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ReadError::Io(e)),
        };
        if chunk.is_empty() {
            break;
        }
        let mut rest = chunk;
        while let Some(at) = memchr::memchr(b'\n', rest) {
            line_len += at as u64;
            if line_len > max_line {
                return Err(ReadError::LineTooLong {
                    line,
                    limit: max_line,
                });
            }
            line += 1;
            line_len = 0;
            rest = &rest[at + 1..];
        }
        line_len += rest.len() as u64;
        if line_len > max_line {
            return Err(ReadError::LineTooLong {
                line,
                limit: max_line,
            });
        }
        if (out.len() + chunk.len()) as u64 > max_file {
            return Err(ReadError::TooLarge { limit: max_file });
        }
        out.extend_from_slice(chunk);
        let n = chunk.len();
        reader.consume(n);
    }
    Ok(out)
}

/// 1-based line of a byte offset.
pub fn line_of_offset(text: &[u8], offset: usize) -> usize {
    1 + memchr::memchr_iter(b'\n', &text[..offset.min(text.len())]).count()
}

/// `64 MiB`, `1 KiB`, `100 bytes`.
pub fn show_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n.is_multiple_of(1 << 20) => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n.is_multiple_of(1 << 10) => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
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
        // With the default limits, the one endless line is refused at the line limit.
        let err = read_text(Path::new("/dev/zero")).unwrap_err();
        assert!(
            matches!(err, ReadError::LineTooLong { line: 1, limit } if limit == MAX_LINE_BYTES),
            "{err}"
        );
        assert!(err.to_string().contains("64 MiB"), "{err}");
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

    #[test]
    fn long_lines_are_refused_with_their_number_and_a_bom_is_dropped() {
        let dir = std::env::temp_dir().join(format!("etip-core-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f.txt");
        std::fs::write(&p, "ab\ncdef\ng\n").unwrap();
        assert_eq!(read_text_within(&p, 100, 4).unwrap(), "ab\ncdef\ng\n");
        let e = read_text_within(&p, 100, 3).unwrap_err();
        assert!(matches!(e, ReadError::LineTooLong { line: 2, .. }), "{e}");
        let e = read_text_within(&p, 9, 100).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge { .. }), "{e}");
        std::fs::write(&p, "\u{feff}{\"a\":1}\n").unwrap();
        assert_eq!(read_text(&p).unwrap(), "{\"a\":1}\n");
        assert_eq!(read_to_string_capped(&p, 100).unwrap(), "{\"a\":1}\n");
        std::fs::write(&p, b"ok\n\xff\n").unwrap();
        let e = read_text(&p).unwrap_err();
        assert!(
            matches!(e, ReadError::NotUtf8 { line: 2, offset: 3 }),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(show_bytes(MAX_INPUT_BYTES), "256 MiB");
        assert_eq!(show_bytes(MAX_LINE_BYTES), "64 MiB");
        assert_eq!(show_bytes(2048), "2 KiB");
        assert_eq!(show_bytes(3), "3 bytes");
    }
}
