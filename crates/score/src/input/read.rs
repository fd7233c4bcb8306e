//! Bounded reading of input files: at most [`MAX_FILE_BYTES`] per file and [`MAX_LINE_BYTES`] per
//! line, so that `/dev/zero`, a FIFO that never ends or one enormous line is refused after a bounded
//! amount of memory instead of growing it without limit. A UTF-8 byte order mark is skipped.

use crate::error::{Result, ScoreError};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The most etip reads from one input file (256 MiB): about 20 times the largest official report
/// and room for millions of timed runs.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// The most etip reads as one line of an input file (64 MiB): a JSON Lines task with a million
/// runs per version fits.
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// The UTF-8 byte order mark some editors write first.
const BOM: &str = "\u{feff}";

/// Reads a text file within the limits; errors name the file (and the line for a line that is too
/// long or not UTF-8). A leading byte order mark is dropped.
pub fn read_text(path: &Path) -> Result<String> {
    read_text_within(path, MAX_FILE_BYTES, MAX_LINE_BYTES)
}

/// [`read_text`] with explicit limits.
pub(crate) fn read_text_within(path: &Path, max_file: u64, max_line: u64) -> Result<String> {
    let bytes = read_bytes_within(path, max_file, max_line)?;
    let text = String::from_utf8(bytes).map_err(|e| ScoreError::Malformed {
        path: path.to_path_buf(),
        line: line_of_offset(e.as_bytes(), e.utf8_error().valid_up_to()),
        message: "the file is not UTF-8 text".into(),
    })?;
    Ok(match text.strip_prefix(BOM) {
        Some(rest) => rest.to_owned(),
        None => text,
    })
}

/// The bytes of a file, refused as soon as the file or one line passes its limit.
fn read_bytes_within(path: &Path, max_file: u64, max_line: u64) -> Result<Vec<u8>> {
    let io = |source| ScoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(|source| ScoreError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    // A regular file's size is known up front (one allocation, refused at once when too large);
    // /dev/zero, FIFOs and the like are bounded by `take` and the checks below.
    let known = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len());
    if known.is_some_and(|len| len > max_file) {
        return Err(ScoreError::TooLarge {
            path: path.to_path_buf(),
            limit: bytes_for_people(max_file),
        });
    }
    let mut out = Vec::with_capacity(usize::try_from(known.unwrap_or(0)).unwrap_or(0));
    let mut reader = BufReader::with_capacity(1 << 16, file.take(max_file.saturating_add(1)));
    let mut line = 1usize;
    let mut line_len = 0u64;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        };
        if chunk.is_empty() {
            break;
        }
        let mut rest = chunk;
        while let Some(at) = memchr::memchr(b'\n', rest) {
            line_len += at as u64;
            if line_len > max_line {
                return Err(line_too_long(path, line, max_line));
            }
            line += 1;
            line_len = 0;
            rest = &rest[at + 1..];
        }
        line_len += rest.len() as u64;
        if line_len > max_line {
            return Err(line_too_long(path, line, max_line));
        }
        if (out.len() + chunk.len()) as u64 > max_file {
            return Err(ScoreError::TooLarge {
                path: path.to_path_buf(),
                limit: bytes_for_people(max_file),
            });
        }
        out.extend_from_slice(chunk);
        let n = chunk.len();
        reader.consume(n);
    }
    Ok(out)
}

fn line_too_long(path: &Path, line: usize, max_line: u64) -> ScoreError {
    ScoreError::LineTooLong {
        path: path.to_path_buf(),
        line,
        limit: bytes_for_people(max_line),
    }
}

/// `64 MiB`, `1 KiB`, `100 bytes`.
fn bytes_for_people(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// 1-based line of a byte offset.
pub(crate) fn line_of_offset(text: &[u8], offset: usize) -> usize {
    1 + memchr::memchr_iter(b'\n', &text[..offset.min(text.len())]).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(content: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let t = tempfile::tempdir().expect("temp dir");
        let p = t.path().join("f.txt");
        std::fs::write(&p, content).expect("write");
        (t, p)
    }

    #[test]
    fn limits_are_enforced_and_named() {
        let (_t, p) = file(b"ab\ncdef\ng\n");
        assert_eq!(
            read_text_within(&p, 100, 4).expect("within"),
            "ab\ncdef\ng\n"
        );
        let e = read_text_within(&p, 100, 3).expect_err("line 2 is 4 bytes");
        assert!(matches!(e, ScoreError::LineTooLong { line: 2, .. }), "{e}");
        assert!(
            e.to_string()
                .starts_with(&format!("line 2 of {} is longer than 3 bytes", p.display())),
            "{e}"
        );
        let e = read_text_within(&p, 9, 100).expect_err("10 bytes");
        assert!(matches!(e, ScoreError::TooLarge { .. }), "{e}");
        assert_eq!(read_text_within(&p, 10, 100).expect("exactly 10").len(), 10);
    }

    #[test]
    fn the_last_line_needs_no_newline_and_a_bom_is_dropped() {
        let (_t, p) = file("\u{feff}a,b\nc,d".as_bytes());
        assert_eq!(read_text(&p).expect("reads"), "a,b\nc,d");
        let (_t, p) = file(b"ok\n\xff\n");
        let e = read_text(&p).expect_err("not UTF-8");
        assert!(e.to_string().contains(":2: the file is not UTF-8"), "{e}");
    }

    #[test]
    fn opening_errors_are_the_users() {
        let e = read_text(Path::new("/nonexistent/x.csv")).expect_err("missing");
        assert!(matches!(e, ScoreError::Open { .. }) && e.is_input_error());
        let t = tempfile::tempdir().expect("temp dir");
        let e = read_text(t.path()).expect_err("a folder");
        assert!(e.is_input_error(), "{e:?}");
        let e = read_text(&t.path().join("a").join("b")).expect_err("missing folder");
        assert!(e.is_input_error(), "{e:?}");
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(bytes_for_people(MAX_FILE_BYTES), "256 MiB");
        assert_eq!(bytes_for_people(MAX_LINE_BYTES), "64 MiB");
        assert_eq!(bytes_for_people(2048), "2 KiB");
        assert_eq!(bytes_for_people(3), "3 bytes");
    }
}
