//! Bounded reading of input files: at most [`MAX_FILE_BYTES`] per file and [`MAX_LINE_BYTES`] per
//! line, so that `/dev/zero`, a FIFO that never ends or one enormous line is refused after a bounded
//! amount of memory instead of growing it without limit. A UTF-8 byte order mark is skipped. The
//! reading itself is `etip_core::bounded`'s, the one every etip command uses; this module names the
//! file and the line in the score's errors.

use crate::error::{Result, ScoreError};
use etip_core::bounded::{ReadError, show_bytes};
use std::path::Path;

pub use etip_core::bounded::line_of_offset;

/// The most etip reads from one input file (256 MiB): about 20 times the largest official report
/// and room for millions of timed runs.
pub const MAX_FILE_BYTES: u64 = etip_core::bounded::MAX_INPUT_BYTES;

/// The most etip reads as one line of an input file (64 MiB): a JSON Lines task with a million
/// runs per version fits.
pub const MAX_LINE_BYTES: u64 = etip_core::bounded::MAX_LINE_BYTES;

/// Reads a text file within the limits; errors name the file (and the line for a line that is too
/// long or not UTF-8). A leading byte order mark is dropped.
pub fn read_text(path: &Path) -> Result<String> {
    read_text_within(path, MAX_FILE_BYTES, MAX_LINE_BYTES)
}

/// [`read_text`] with explicit limits.
pub(crate) fn read_text_within(path: &Path, max_file: u64, max_line: u64) -> Result<String> {
    let path_buf = || path.to_path_buf();
    etip_core::bounded::read_text_within(path, max_file, max_line).map_err(|e| match e {
        ReadError::Open(source) => ScoreError::Open {
            path: path_buf(),
            source,
        },
        ReadError::Io(source) => ScoreError::Io {
            path: path_buf(),
            source,
        },
        ReadError::TooLarge { limit } => ScoreError::TooLarge {
            path: path_buf(),
            limit: show_bytes(limit),
        },
        ReadError::LineTooLong { line, limit } => ScoreError::LineTooLong {
            path: path_buf(),
            line,
            limit: show_bytes(limit),
        },
        ReadError::NotUtf8 { line, .. } => ScoreError::Malformed {
            path: path_buf(),
            line,
            message: "the file is not UTF-8 text".into(),
        },
    })
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
        assert_eq!(show_bytes(MAX_FILE_BYTES), "256 MiB");
        assert_eq!(show_bytes(MAX_LINE_BYTES), "64 MiB");
    }
}
