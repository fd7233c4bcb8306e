//! Copying files out of a session: [`Engine::copy_out`] gets a tar archive through the engine's
//! archive API, and [`extract_tar`] writes its files and folders on the host without following
//! links. [`Engine::put_files`] goes the other way, for files under `/tmp` only (a patch to
//! apply in the session).

use super::Session;
use crate::{Engine, EngineError, SessionError};
use bollard::query_parameters::DownloadFromContainerOptionsBuilder;
use futures_util::StreamExt;
use std::io::{Error, ErrorKind, Read};
use std::path::{Component, Path, PathBuf};

/// What [`extract_tar`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    pub files: usize,
    pub dirs: usize,
    /// Entries not written: links, devices, FIFOs (their paths as in the archive).
    pub skipped: Vec<String>,
}

impl Engine {
    /// Writes files under `/tmp/` of the session (their folders created), through the engine's
    /// archive API: no argument-size limit, nothing passes through a shell.
    pub async fn put_files(
        &self,
        session: &Session,
        files: &[crate::TmpFile],
    ) -> Result<(), EngineError> {
        let pack = crate::BuildContainer {
            files: files.to_vec(),
            ..crate::BuildContainer::default()
        };
        let invalid = |source: SessionError| EngineError::Session {
            id: session.id.clone(),
            source,
        };
        pack.check(&[]).map_err(|e| invalid(e.into()))?;
        let tar = pack.files_tar().map_err(|e| invalid(e.into()))?;
        self.upload_files(&session.id, tar).await
    }

    /// A tar archive of `path` (file or folder) in the session, as the engine's archive API makes
    /// it (entries named from the last component of `path`: `/work/out` gives `out/...`), held in
    /// memory; `None` when the path does not exist.
    pub async fn copy_out(
        &self,
        session: &Session,
        path: &str,
    ) -> Result<Option<Vec<u8>>, EngineError> {
        let options = DownloadFromContainerOptionsBuilder::new()
            .path(path)
            .build();
        let mut s = self
            .docker
            .download_from_container(&session.id, Some(options));
        let mut tar = Vec::new();
        while let Some(chunk) = s.next().await {
            match chunk {
                Ok(bytes) => tar.extend_from_slice(&bytes),
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => return Ok(None),
                Err(e) => {
                    return Err(EngineError::api(
                        "copying files out of session",
                        format!("{}:{path}", session.id),
                        e,
                    ));
                }
            }
        }
        Ok(Some(tar))
    }
}

/// Extracts a tar archive (e.g. from [`Engine::copy_out`]) under `dest`, writing regular files
/// and directories only:
///
/// - entries with absolute paths, `..` components or (Windows) prefixes are refused (error, with
///   nothing more written);
/// - symbolic links, hard links, devices and FIFOs are skipped and listed in
///   [`Extracted::skipped`];
/// - no symbolic link is followed: when a folder on the way to an entry, inside `dest`, is a
///   symbolic link, extraction fails; an existing file or link at an entry's own path is removed
///   and the file created anew (`O_EXCL`), so a link planted there is not written through;
/// - file modes keep the permission bits (`0o777`, no set-id bits); owners and times are not
///   restored.
///
/// `dest` is created when missing.
pub fn extract_tar(bytes: &[u8], dest: &Path) -> std::io::Result<Extracted> {
    std::fs::create_dir_all(dest)?;
    let mut report = Extracted::default();
    let mut archive = tar::Archive::new(bytes);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let raw = entry.path()?.into_owned();
        let shown = raw.display().to_string();
        let rel = relative_path(&raw, &shown)?;
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind.is_dir()) {
            report.skipped.push(shown);
            continue;
        }
        if rel.as_os_str().is_empty() {
            // The archive's root (`./`): `dest` itself.
            continue;
        }
        let at = entry_path(dest, &rel, &shown)?;
        let mode = entry.header().mode().unwrap_or(0o644) & 0o777;
        if kind.is_dir() {
            write_dir(&at, mode)?;
            report.dirs += 1;
        } else {
            write_file(&mut entry, &at, mode, &shown)?;
            report.files += 1;
        }
    }
    Ok(report)
}

/// The entry path `raw` as a relative path (`.` components dropped); an error for absolute paths
/// and `..` components (`shown` names the entry).
fn relative_path(raw: &Path, shown: &str) -> std::io::Result<PathBuf> {
    let mut rel = PathBuf::new();
    for c in raw.components() {
        match c {
            Component::Normal(n) => rel.push(n),
            Component::CurDir => {}
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidData,
                    format!("refusing tar entry {shown:?}: absolute or with .."),
                ));
            }
        }
    }
    Ok(rel)
}

/// The host path of entry `rel` under `dest`, after checking that every existing folder on the
/// way is a real folder (not a symbolic link) and creating the missing ones.
fn entry_path(dest: &Path, rel: &Path, shown: &str) -> std::io::Result<PathBuf> {
    // Every existing ancestor inside dest must be a real folder.
    let mut at = dest.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for (i, c) in parts.iter().enumerate() {
        at.push(c);
        let last = i + 1 == parts.len();
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() && !last => {
                return Err(Error::new(
                    ErrorKind::InvalidData,
                    format!(
                        "refusing tar entry {shown:?}: {} is a symbolic link",
                        at.display()
                    ),
                ));
            }
            Ok(m) if !last && !m.is_dir() => {
                return Err(Error::new(
                    ErrorKind::InvalidData,
                    format!(
                        "refusing tar entry {shown:?}: {} is not a folder",
                        at.display()
                    ),
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if !last {
                    std::fs::create_dir(&at)?;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(at)
}

/// Makes `at` a folder (replacing a file or link there) with permissions `mode` plus `0o700`.
fn write_dir(at: &Path, mode: u32) -> std::io::Result<()> {
    match std::fs::symlink_metadata(at) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            std::fs::remove_file(at)?;
            std::fs::create_dir(at)?;
        }
        Err(_) => std::fs::create_dir(at)?,
    }
    set_mode(at, mode | 0o700)
}

/// Writes `data` to a new file at `at` (replacing a file or link there, refusing a folder) with
/// permissions `mode`.
fn write_file(data: &mut impl Read, at: &Path, mode: u32, shown: &str) -> std::io::Result<()> {
    match std::fs::symlink_metadata(at) {
        Ok(m) if m.is_dir() => {
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!("refusing tar entry {shown:?}: {} is a folder", at.display()),
            ));
        }
        Ok(_) => std::fs::remove_file(at)?,
        Err(_) => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(at)?;
    std::io::copy(data, &mut file)?;
    set_mode(at, mode)
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, kind, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_size(data.len() as u64);
            h.set_mode(if kind.is_dir() { 0o755 } else { 0o644 });
            if kind.is_symlink() || *kind == tar::EntryType::Link {
                h.set_link_name("/etc/passwd").unwrap();
            }
            // Bypass the builder's path checks: write the name bytes directly.
            let name = path.as_bytes();
            h.as_old_mut().name[..name.len()].copy_from_slice(name);
            h.set_cksum();
            b.append(&h, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn extract_writes_files_and_folders_and_skips_links() {
        let dir = tempfile::tempdir().unwrap();
        let tar = tar_of(&[
            ("out/", tar::EntryType::Directory, b""),
            ("out/a.txt", tar::EntryType::Regular, b"hello"),
            ("out/sub/b.txt", tar::EntryType::Regular, b"bye"),
            ("out/link", tar::EntryType::Symlink, b""),
            ("out/hard", tar::EntryType::Link, b""),
        ]);
        let r = extract_tar(&tar, dir.path()).unwrap();
        assert_eq!((r.files, r.dirs), (2, 1));
        assert_eq!(r.skipped, ["out/link", "out/hard"]);
        let p = dir.path();
        assert_eq!(std::fs::read(p.join("out/a.txt")).unwrap(), b"hello");
        assert_eq!(std::fs::read(p.join("out/sub/b.txt")).unwrap(), b"bye");
        assert!(!p.join("out/link").exists());
        // Extracting again overwrites.
        extract_tar(&tar, p).unwrap();
        assert_eq!(std::fs::read(p.join("out/a.txt")).unwrap(), b"hello");
    }

    #[test]
    fn extract_refuses_escapes() {
        for bad in ["/etc/x", "../x", "out/../../x"] {
            let dir = tempfile::tempdir().unwrap();
            let tar = tar_of(&[(bad, tar::EntryType::Regular, b"x")]);
            let e = extract_tar(&tar, &dir.path().join("d")).unwrap_err();
            assert!(e.to_string().contains("refusing"), "{bad}: {e}");
            assert!(!dir.path().join("x").exists());
        }
    }

    #[cfg(unix)]
    #[test]
    fn extract_does_not_follow_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let dest = dir.path().join("dest");
        std::fs::create_dir(&dest).unwrap();
        // A planted link to a folder outside dest.
        std::os::unix::fs::symlink(outside.path(), dest.join("out")).unwrap();
        let tar = tar_of(&[("out/a.txt", tar::EntryType::Regular, b"x")]);
        assert!(extract_tar(&tar, &dest).is_err());
        assert!(!outside.path().join("a.txt").exists());
        // A planted link at a file's own path is replaced, not written through.
        let target = outside.path().join("victim");
        std::fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, dest.join("f")).unwrap();
        let tar = tar_of(&[("f", tar::EntryType::Regular, b"new")]);
        extract_tar(&tar, &dest).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert_eq!(std::fs::read(dest.join("f")).unwrap(), b"new");
        assert!(
            !std::fs::symlink_metadata(dest.join("f"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}
