//! The output folder of `etip build` (`--out`): `logs/<slug>/` per instance, `status.jsonl`,
//! `repos/` (clone cache) and `trees/` (file lists of images).
//!
//! etip replaces only its own regular files there: the files of [`LOG_FILES`] in an instance's
//! log folder (by name, and only when they are regular files) and the lines it appends to
//! `status.jsonl`. [`check`] verifies up front that the folder can be created and written and
//! that nothing of the user's sits where etip writes (a symbolic link, a folder or a device in
//! place of one of its files, a file in place of one of its folders), so a bad `--out` is
//! reported before any build starts.

use crate::instance::log_slug;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The files etip writes into an instance's log folder (and removes before rebuilding it).
pub const LOG_FILES: [&str; 7] = [
    "Dockerfile.env",
    "env.sh",
    "Dockerfile.instance",
    "build.sh",
    "context.txt",
    "build.log",
    "status.json",
];

/// The file of one status line per built instance.
pub const STATUS_FILE: &str = "status.jsonl";

/// The folders etip makes in the output folder.
const DIRS: [&str; 3] = ["logs", "repos", "trees"];

/// An output folder etip cannot use.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("cannot create the output folder {path}: {source}")]
    Create {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a folder (etip writes its outputs there): choose another --out")]
    NotAFolder { path: String },
    #[error("the output folder {path} is not writable: {source}")]
    NotWritable {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} is {what}, not a file etip wrote: etip replaces only its own regular files; move it away or choose another --out"
    )]
    Foreign { path: String, what: &'static str },
    #[error("inspecting {path}: {source}")]
    Inspect {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("writing {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

/// The log folder of instance `id` in the output folder `out`.
pub fn log_dir(out: &Path, id: &str) -> PathBuf {
    out.join("logs").join(log_slug(id))
}

/// Creates `out` when missing and checks that it is a writable folder and that the paths etip
/// will write for the instances `ids` are free or etip's own (see the module docs).
pub fn check<'a>(out: &Path, ids: impl IntoIterator<Item = &'a str>) -> Result<(), OutputError> {
    if std::fs::metadata(out).is_ok_and(|m| !m.is_dir()) {
        return Err(OutputError::NotAFolder { path: shown(out) });
    }
    std::fs::create_dir_all(out).map_err(|source| OutputError::Create {
        path: shown(out),
        source,
    })?;
    tempfile::Builder::new()
        .prefix(".etip-write-check-")
        .tempfile_in(out)
        .map_err(|source| OutputError::NotWritable {
            path: shown(out),
            source,
        })?;
    for d in DIRS {
        folder_or_absent(&out.join(d))?;
    }
    regular_or_absent(&out.join(STATUS_FILE))?;
    for id in ids {
        let dir = log_dir(out, id);
        folder_or_absent(&dir)?;
        for f in LOG_FILES {
            regular_or_absent(&dir.join(f))?;
        }
    }
    Ok(())
}

/// A folder (a link to one is fine: etip only adds its own files) or nothing.
fn folder_or_absent(p: &Path) -> Result<(), OutputError> {
    match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(OutputError::NotAFolder { path: shown(p) }),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(source) => Err(OutputError::Inspect {
            path: shown(p),
            source,
        }),
    }
}

/// A regular file (not a link) or nothing: what etip may replace or append to.
fn regular_or_absent(p: &Path) -> Result<(), OutputError> {
    let what = match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_file() => return Ok(()),
        Ok(m) if m.file_type().is_symlink() => "a symbolic link",
        Ok(m) if m.is_dir() => "a folder",
        Ok(_) => "a special file",
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(OutputError::Inspect {
                path: shown(p),
                source,
            });
        }
    };
    Err(OutputError::Foreign {
        path: shown(p),
        what,
    })
}

/// Makes an instance's log folder ready for a build: created when missing, and the log files of
/// an earlier build removed (regular files of [`LOG_FILES`] only; other files are left alone).
/// Fails, touching nothing, when the folder or one of those names is not etip's.
pub fn prepare_log_dir(dir: &Path) -> Result<(), OutputError> {
    folder_or_absent(dir)?;
    for f in LOG_FILES {
        regular_or_absent(&dir.join(f))?;
    }
    std::fs::create_dir_all(dir).map_err(|source| OutputError::Create {
        path: shown(dir),
        source,
    })?;
    for f in LOG_FILES {
        let p = dir.join(f);
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != ErrorKind::NotFound => {
                return Err(OutputError::Write {
                    path: shown(&p),
                    source: e,
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// Appends `line` to `<out>/status.jsonl` (created when missing; never through a link).
pub fn append_status(out: &Path, line: &str) -> Result<(), OutputError> {
    use std::io::Write;
    let path = out.join(STATUS_FILE);
    regular_or_absent(&path)?;
    let write_err = |source| OutputError::Write {
        path: shown(&path),
        source,
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(write_err)?;
    writeln!(f, "{line}").map_err(write_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rebuild_removes_only_etips_own_log_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = log_dir(tmp.path(), "x");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("build.log"), "old").unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        prepare_log_dir(&dir).unwrap();
        assert!(!dir.join("build.log").exists());
        assert_eq!(
            std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
            "mine"
        );

        let mine = tmp.path().join("mine");
        std::fs::write(&mine, "precious").unwrap();
        std::os::unix::fs::symlink(&mine, dir.join("status.json")).unwrap();
        let err = prepare_log_dir(&dir).unwrap_err();
        assert!(matches!(err, OutputError::Foreign { .. }), "{err}");
        assert!(dir.join("status.json").symlink_metadata().is_ok());
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "precious");
    }

    #[test]
    fn status_lines_are_never_written_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        append_status(tmp.path(), "{}").unwrap();
        append_status(tmp.path(), "{}").unwrap();
        let text = std::fs::read_to_string(tmp.path().join(STATUS_FILE)).unwrap();
        assert_eq!(text, "{}\n{}\n");
        let other = tempfile::tempdir().unwrap();
        let mine = other.path().join("mine");
        std::fs::write(&mine, "precious").unwrap();
        std::os::unix::fs::symlink(&mine, other.path().join(STATUS_FILE)).unwrap();
        assert!(append_status(other.path(), "{}").is_err());
        assert!(check(other.path(), ["x"]).is_err());
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "precious");
    }

    #[test]
    fn check_creates_the_folder_and_refuses_files_in_its_place() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("a/b");
        check(&out, ["x"]).unwrap();
        assert!(out.is_dir());
        assert_eq!(
            std::fs::read_dir(&out).unwrap().count(),
            0,
            "no check file left"
        );
        std::fs::write(out.join("repos"), "").unwrap();
        let err = check(&out, ["x"]).unwrap_err();
        assert!(matches!(err, OutputError::NotAFolder { .. }), "{err}");
        let file = tmp.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(matches!(
            check(&file, ["x"]),
            Err(OutputError::NotAFolder { .. })
        ));
    }
}
