//! Writing an output file atomically: every file etip writes for its user (candidates, status and
//! result lists, summaries, HTML reports, configuration files) is replaced through here, so that a
//! reader sees the old file or the whole new one, never a part.
//!
//! The new content goes to a temporary file with an unpredictable name, created exclusively in the
//! target's own folder (so that the rename stays on one file system), synced to disk, then renamed
//! over the target. Only a missing target or a regular file is replaced: a symbolic link, a folder,
//! a FIFO or a device at the target's path is refused and left as it is (a link is neither
//! followed nor replaced). When writing fails (a full disk, a size limit), the temporary file is
//! removed and the old file is left intact.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Why an output file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Something other than a regular file is at the target's path.
    #[error("{} {problem}", path.display())]
    NotRegular {
        /// The target.
        path: PathBuf,
        /// What is there and what to do (`is a folder; name a file in it`).
        problem: &'static str,
    },
    /// The target's folder does not exist or is not a folder.
    #[error("the folder of {} {problem}", path.display())]
    Folder {
        /// The target.
        path: PathBuf,
        /// `does not exist` or `is not a folder`.
        problem: &'static str,
    },
    /// Writing failed (a full disk, no permission, ...); the old file, if any, is unchanged.
    #[error("writing {}", path.display())]
    Io {
        /// The target.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl WriteError {
    /// Whether the path the user gave is at fault (exit code 2), not the run.
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            WriteError::NotRegular { .. } | WriteError::Folder { .. }
        )
    }
}

/// The folder a path is written in (`.` for a bare file name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Refuses a target that exists and is not a regular file, or whose folder is missing: what
/// [`write`] checks before writing, for commands that check their outputs before doing any work.
pub fn check_target(path: &Path) -> Result<(), WriteError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            let kind = meta.file_type();
            let problem = if kind.is_file() {
                return Ok(());
            } else if kind.is_dir() {
                "is a folder; name a file in it"
            } else if kind.is_symlink() {
                "is a symbolic link; name the file itself, etip does not write through links"
            } else {
                "is not a regular file (a device, FIFO or socket); etip replaces only regular files"
            };
            Err(WriteError::NotRegular {
                path: path.to_path_buf(),
                problem,
            })
        }
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            match std::fs::metadata(folder_of(path)) {
                Ok(m) if m.is_dir() => Ok(()),
                Ok(_) => Err(WriteError::Folder {
                    path: path.to_path_buf(),
                    problem: "is not a folder",
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(WriteError::Folder {
                    path: path.to_path_buf(),
                    problem: "does not exist",
                }),
                Err(source) => Err(WriteError::Io {
                    path: path.to_path_buf(),
                    source,
                }),
            }
        }
        Err(source) => Err(WriteError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Replaces `path` with `bytes`: a new temporary file in the same folder (unpredictable name,
/// created exclusively, permissions as a new file's under the umask), synced, then renamed over
/// `path` (checked to be absent or a regular file first). On failure the old file is unchanged
/// and the temporary file removed.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    check_target(path)?;
    let err = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = folder_of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    // The temporary file is removed when it is dropped on an error below.
    let mut tmp = builder.tempfile_in(dir).map_err(err)?;
    // Through the file itself: its errors do not name the temporary file, which is removed.
    tmp.as_file_mut().write_all(bytes).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    // The rename itself reaches the disk with the folder's metadata; a failure here leaves the
    // new file in place, so it is not an error.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_regular_file_is_replaced_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("c.jsonl");
        write(&out, b"one\n").unwrap();
        write(&out, b"two\n").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"two\n");
        assert_eq!(names(dir.path()), ["c.jsonl"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&out).unwrap().permissions().mode();
            let plain = dir.path().join("plain");
            std::fs::File::create(&plain).unwrap();
            let expected = std::fs::metadata(&plain).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, expected & 0o777);
        }
    }

    #[cfg(unix)]
    #[test]
    fn links_folders_and_devices_are_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = dir.path().join("link.html");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = write(&link, b"x").unwrap_err();
        assert!(
            e.is_input_error() && e.to_string().contains("symbolic link"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());

        let e = write(dir.path(), b"x").unwrap_err();
        assert!(
            e.is_input_error() && e.to_string().contains("is a folder"),
            "{e}"
        );
        let e = check_target(Path::new("/dev/null")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = write(&dir.path().join("no/such/r.html"), b"x").unwrap_err();
        assert!(
            e.is_input_error() && e.to_string().contains("does not exist"),
            "{e}"
        );
        let e = write(&victim.join("r.html"), b"x").unwrap_err();
        assert!(e.to_string().contains("is not a folder"), "{e}");
        assert!(check_target(&dir.path().join("new.jsonl")).is_ok());
        assert_eq!(names(dir.path()), ["link.html", "victim"]);
    }
}
