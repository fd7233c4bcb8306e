//! Free disk space, checked before each evaluation: a patch (or a build) that fills the disk must
//! stop the run with a clear error before the engine or the state store fails on a full disk.

use std::path::{Path, PathBuf};

/// Bytes available to an unprivileged writer on the file system holding `path` (`df -Pk`), or
/// `None` when it cannot be told (no such path on this host, e.g. a remote engine's data root).
pub fn free_bytes(path: &Path) -> Option<u64> {
    let out = std::process::Command::new("df")
        .arg("-Pk")
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().nth(1)?;
    let kib: u64 = line.split_whitespace().nth(3)?.parse().ok()?;
    Some(kib * 1024)
}

/// The folders whose file systems must keep `min` bytes free.
#[derive(Debug, Clone)]
pub struct DiskGuard {
    /// (what it is, path).
    pub paths: Vec<(String, PathBuf)>,
    pub min: u64,
}

impl DiskGuard {
    /// `Err` names the first folder with less than the minimum free.
    pub fn check(&self) -> Result<(), LowDisk> {
        for (what, path) in &self.paths {
            if let Some(free) = free_bytes(path)
                && free < self.min
            {
                return Err(LowDisk(format!(
                    "only {:.1} GiB free on the file system of {} ({what}); at least {:.1} GiB \
                     are needed (--min-free-gb): free space and run again",
                    free as f64 / GIB,
                    path.display(),
                    self.min as f64 / GIB
                )));
            }
        }
        Ok(())
    }
}

/// Less free space than a run needs: what is short and where.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct LowDisk(pub String);

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_space_is_read_and_a_minimum_above_it_is_refused() {
        let dir = std::env::temp_dir();
        let free = free_bytes(&dir).expect("df answers for the temporary folder");
        assert!(free > 0);
        let ok = DiskGuard {
            paths: vec![("temporary folder".into(), dir.clone())],
            min: 1,
        };
        assert!(ok.check().is_ok());
        let too_much = DiskGuard {
            paths: vec![("temporary folder".into(), dir)],
            min: free.saturating_mul(2).max(1 << 50),
        };
        let err = too_much.check().unwrap_err().to_string();
        assert!(
            err.contains("temporary folder") && err.contains("--min-free-gb"),
            "{err}"
        );
        assert_eq!(free_bytes(Path::new("/no/such/folder/etip")), None);
    }
}
