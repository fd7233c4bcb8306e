//! What every command does with the paths it writes: [`write`] replaces an output file atomically
//! (`etip_core::atomic`: a temporary file in the target's folder, synced, then renamed; only a
//! missing target or a regular file is replaced), [`distinct`] refuses two paths of one command
//! that name one file before any work starts, [`lock_folder`] keeps two runs from writing one
//! output folder at once, and [`open_state`] opens a state store with the same exit codes in
//! every command. Each refusal is the user's to fix (exit code 2).
//!
//! Append-only logs and SQLite stores are not replaced through [`write`]; [`distinct`] keeps them
//! apart from every other path of the command.

use crate::InputError;
use std::path::{Path, PathBuf};

/// Replaces `path` with `text` atomically. A target that is not a regular file, or whose folder
/// is missing, is bad input (exit 2); a failure to write (a full disk) fails the run (exit 1) and
/// leaves the old file as it was.
pub fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    etip_core::atomic::write(path, text.as_bytes()).map_err(|e| {
        if e.is_input_error() {
            InputError(e.to_string()).into()
        } else {
            anyhow::Error::from(e)
        }
    })
}

/// Refuses, before any work, an output file that [`write`] would refuse.
pub fn check(path: &Path) -> Result<(), InputError> {
    match etip_core::atomic::check_target(path) {
        Err(e) if e.is_input_error() => Err(InputError(e.to_string())),
        _ => Ok(()),
    }
}

/// How a command uses a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Only read.
    Reads,
    /// Written, replaced or appended to (outputs, state stores, caches).
    Writes,
}

/// One path of a command, with the flag (or the file of a flag's folder) that names it.
#[derive(Debug, Clone)]
pub struct Named {
    pub what: String,
    pub path: PathBuf,
    pub role: Role,
}

impl Named {
    pub fn reads(what: impl Into<String>, path: &Path) -> Named {
        Named {
            what: what.into(),
            path: path.to_path_buf(),
            role: Role::Reads,
        }
    }

    pub fn writes(what: impl Into<String>, path: &Path) -> Named {
        Named {
            what: what.into(),
            path: path.to_path_buf(),
            role: Role::Writes,
        }
    }
}

/// What makes two paths one file: the same device and inode when it exists, else the same
/// canonical folder and file name.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    Inode(u64, u64),
    Path(PathBuf),
}

fn identity(path: &Path) -> Identity {
    #[cfg(unix)]
    if let Ok(m) = std::fs::metadata(path) {
        use std::os::unix::fs::MetadataExt;
        return Identity::Inode(m.dev(), m.ino());
    }
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let canonical = match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => dir.canonicalize().map(|d| d.join(name)).ok(),
        _ => None,
    };
    Identity::Path(canonical.unwrap_or(abs))
}

/// Refuses two paths of one command that name one file when the command writes either of them
/// (an output that is also an input, a state store that is also the output, ...). Two inputs may
/// be one file.
pub fn distinct(paths: &[Named]) -> Result<(), InputError> {
    let ids: Vec<Identity> = paths.iter().map(|n| identity(&n.path)).collect();
    for (i, a) in paths.iter().enumerate() {
        for (j, b) in paths.iter().enumerate().skip(i + 1) {
            if a.role == Role::Reads && b.role == Role::Reads {
                continue;
            }
            if ids[i] == ids[j] {
                let same = if a.path == b.path {
                    format!("{}", a.path.display())
                } else {
                    format!("{} and {}", a.path.display(), b.path.display())
                };
                return Err(InputError(format!(
                    "{} and {} name the same file ({same}): writing one would destroy the other; give them different paths",
                    a.what, b.what
                )));
            }
        }
    }
    Ok(())
}

/// Takes the exclusive lock of output folder `dir` (created if missing) for as long as the
/// returned lock lives: a second run writing to the same folder fails at once with exit code 2,
/// as a second run on a held state file does.
pub fn lock_folder(dir: &Path, flag: &str) -> anyhow::Result<etip_store::FolderLock> {
    std::fs::create_dir_all(dir).map_err(|e| {
        InputError(format!(
            "creating the output folder {} ({flag}): {e}",
            dir.display()
        ))
    })?;
    if !dir.is_dir() {
        return Err(InputError(format!("{flag} {} is not a folder", dir.display())).into());
    }
    etip_store::lock_folder(dir).map_err(store_error)
}

/// A store error as the commands report it: the user's (exit 2) when the path given is at fault.
pub fn store_error(e: etip_store::StoreError) -> anyhow::Error {
    if e.is_input_error() {
        InputError(e.to_string()).into()
    } else {
        e.into()
    }
}

/// Refuses, before any work, a state file that is not a regular file (a folder, a FIFO, a
/// device such as `/dev/zero`); a missing one is created later.
pub fn check_state(flag: &str, path: &Path) -> Result<(), InputError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) => Err(InputError(format!(
            "{flag} {} is {}; name an etip state file (SQLite) or a new file",
            path.display(),
            if m.is_dir() {
                "a folder"
            } else {
                "not a regular file (a device, FIFO or socket)"
            }
        ))),
        Err(_) => Ok(()),
    }
}

/// Opens a state store for this run alone (`flag` names it in messages): anything but an etip
/// state file, or a file another run holds, is bad input (exit 2).
pub fn open_state(flag: &str, path: &Path) -> anyhow::Result<etip_store::Store> {
    check_state(flag, path)?;
    etip_store::Store::open_exclusive(path).map_err(store_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_under_two_names_is_refused_when_written() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        std::fs::write(&a, "x").unwrap();
        let dotted = dir.path().join(".").join("a.csv");
        let e =
            distinct(&[Named::reads("FILE", &a), Named::writes("--html", &dotted)]).unwrap_err();
        assert!(e.0.contains("FILE and --html name the same file"), "{e}");
        // Two inputs may be one file; different files are fine.
        distinct(&[Named::reads("FILE", &a), Named::reads("--aliases", &dotted)]).unwrap();
        distinct(&[
            Named::reads("FILE", &a),
            Named::writes("--html", &dir.path().join("r.html")),
        ])
        .unwrap();
        // Neither exists yet: the same canonical folder and name.
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let e = distinct(&[
            Named::writes("--out", &sub.join("st.sqlite")),
            Named::writes("--state", &sub.join("..").join("sub").join("st.sqlite")),
        ])
        .unwrap_err();
        assert!(e.0.contains("--out and --state"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_an_input_is_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.jsonl");
        std::fs::write(&a, "x").unwrap();
        let link = dir.path().join("b.jsonl");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        assert!(distinct(&[Named::reads("--etips", &a), Named::writes("--out", &link)]).is_err());
    }
}
