//! Build contexts: tar entries written by etip (fixed mode and mtime) and the trees of `git
//! archive` copied into one context; what differs between the build descriptors of the two
//! commits (the env layer's context holds the original's).

use crate::git::TreeEntry;
use crate::spec;
use etip_core::Language;
use etip_docker::{LayerContext, LayerSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// At most this many added and this many removed lines are named per changed descriptor.
const CHANGED_LINES_SHOWN: usize = 4;

/// The build descriptors that differ between the original and the patched tree, one line each:
/// `PATH added`, `PATH removed`, or `PATH changed: + `line` - `line`` with the non-blank lines
/// that differ (trimmed, the first few). `read` gives a blob's content by its id. The env layer
/// holds the original's dependencies: a patch that changes them may need ones it lacks.
pub(crate) fn descriptor_changes(
    lang: Language,
    original: &[TreeEntry],
    patched: &[TreeEntry],
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Vec<String> {
    let descriptors = |tree: &[TreeEntry]| -> BTreeMap<String, String> {
        tree.iter()
            .filter(|e| spec::is_descriptor(lang, &e.path))
            .map(|e| (e.path.clone(), e.blob.clone()))
            .collect()
    };
    let (a, b) = (descriptors(original), descriptors(patched));
    let mut paths: Vec<&String> = a.keys().chain(b.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|p| match (a.get(p), b.get(p)) {
            (Some(_), None) => Some(format!("{p} removed")),
            (None, Some(_)) => Some(format!("{p} added")),
            (Some(x), Some(y)) if x != y => {
                Some(format!("{p} changed{}", line_changes(x, y, read)))
            }
            _ => None,
        })
        .collect()
}

/// `: + `added` - `removed`` for two blobs (empty when they cannot be read).
fn line_changes(old: &str, new: &str, read: &dyn Fn(&str) -> Option<Vec<u8>>) -> String {
    let (Some(old), Some(new)) = (read(old), read(new)) else {
        return String::new();
    };
    let lines = |b: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(b)
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    };
    let (old, new) = (lines(&old), lines(&new));
    // Lines of `x` not in `y`, as multisets.
    let minus = |x: &[String], y: &[String]| -> Vec<String> {
        let mut rest = y.to_vec();
        x.iter()
            .filter(|l| match rest.iter().position(|r| r == *l) {
                Some(i) => {
                    rest.swap_remove(i);
                    false
                }
                None => true,
            })
            .cloned()
            .collect()
    };
    let shown = |sign: char, v: Vec<String>| -> Vec<String> {
        let mut out: Vec<String> = v
            .iter()
            .take(CHANGED_LINES_SHOWN)
            .map(|l| format!("{sign} `{}`", clip(l, 80)))
            .collect();
        if v.len() > CHANGED_LINES_SHOWN {
            out.push(format!("{sign} {} more", v.len() - CHANGED_LINES_SHOWN));
        }
        out
    };
    let mut parts = shown('+', minus(&new, &old));
    parts.extend(shown('-', minus(&old, &new)));
    if parts.is_empty() {
        return String::new();
    }
    format!(": {}", parts.join(" "))
}

/// `s` cut to at most `max` characters (with `...` when cut).
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max.saturating_sub(3)).collect();
    format!("{cut}...")
}

/// The log lines reporting [`descriptor_changes`].
pub(crate) fn descriptor_changes_log(changes: &[String]) -> String {
    let mut log = String::new();
    if !changes.is_empty() {
        log.push_str(
            "etip: the patched commit changes build descriptors; the env layer holds the \
             original's dependencies, so the patched version may lack some:\n",
        );
    }
    for c in changes {
        log.push_str(&format!("etip:   {c}\n"));
    }
    log
}

pub(crate) trait WithContext {
    fn with_context(self, ctx: impl Into<LayerContext>) -> (LayerSpec, LayerContext);
}

impl WithContext for LayerSpec {
    fn with_context(self, ctx: impl Into<LayerContext>) -> (LayerSpec, LayerContext) {
        (self, ctx.into())
    }
}

/// Making a layer's build context failed (recorded as a checkout failure).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ContextError {
    #[error("adding {path} to the build context: {source}")]
    Append {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("opening {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("reading {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("copying {} into the context: {source}", path.display())]
    Copy {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("reading link {}: {source}", path.display())]
    ReadLink {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("copying link {} into the context: {source}", path.display())]
    CopyLink {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("creating {}: {source}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Reading a descriptor or archiving a tree from the repository failed.
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    /// Finishing the context's tar (or the temporary folder it is written to) failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("image {tag} missing after its build")]
    ImageMissing { tag: String },
    /// The local build's log file could not be made.
    #[error("{}: {source}", path.display())]
    Log {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("running {script}: {source}")]
    Run {
        script: String,
        #[source]
        source: std::io::Error,
    },
}

pub(crate) fn append_bytes<W: std::io::Write>(
    b: &mut tar::Builder<W>,
    path: &str,
    data: &[u8],
    mode: u32,
) -> Result<(), ContextError> {
    let mut h = tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(mode);
    h.set_mtime(0);
    h.set_entry_type(tar::EntryType::Regular);
    b.append_data(&mut h, path, data)
        .map_err(|source| ContextError::Append {
            path: path.into(),
            source,
        })
}

pub(crate) fn append_dir<W: std::io::Write>(
    b: &mut tar::Builder<W>,
    path: &str,
) -> Result<(), ContextError> {
    let mut h = tar::Header::new_gnu();
    h.set_size(0);
    h.set_mode(0o755);
    h.set_mtime(0);
    h.set_entry_type(tar::EntryType::Directory);
    b.append_data(&mut h, format!("{path}/"), std::io::empty())
        .map_err(|source| ContextError::Append {
            path: format!("{path}/"),
            source,
        })
}

/// Copies the entries of a `git archive` tar into the context; returns (files, bytes).
pub(crate) fn copy_tar<W: std::io::Write>(
    path: &Path,
    b: &mut tar::Builder<W>,
) -> Result<(usize, u64), ContextError> {
    let f = std::fs::File::open(path).map_err(|source| ContextError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let read = |source| ContextError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut archive = tar::Archive::new(f);
    let (mut files, mut bytes) = (0usize, 0u64);
    let entries = archive.entries().map_err(read)?;
    for entry in entries {
        let mut entry = entry.map_err(read)?;
        let kind = entry.header().entry_type();
        let p = entry.path().map_err(read)?.into_owned();
        let mut h = entry.header().clone();
        match kind {
            tar::EntryType::Regular | tar::EntryType::Directory => {
                if kind == tar::EntryType::Regular {
                    files += 1;
                    bytes += entry.size();
                }
                b.append_data(&mut h, &p, &mut entry)
                    .map_err(|source| ContextError::Copy {
                        path: p.clone(),
                        source,
                    })?;
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(|source| ContextError::ReadLink {
                        path: p.clone(),
                        source,
                    })?
                    .map(|t| t.into_owned())
                    .unwrap_or_default();
                b.append_link(&mut h, &p, &target)
                    .map_err(|source| ContextError::CopyLink {
                        path: p.clone(),
                        source,
                    })?;
            }
            _ => {}
        }
    }
    Ok((files, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, blob: &str) -> TreeEntry {
        TreeEntry {
            mode: "100644".into(),
            blob: blob.into(),
            path: path.into(),
        }
    }

    /// Changed, added and removed descriptors are named, with the lines that differ; source
    /// files and unchanged descriptors are not.
    #[test]
    fn descriptor_changes_name_files_and_lines() {
        let blobs = |b: &str| -> Option<Vec<u8>> {
            let text = match b {
                "p1" => {
                    "[project]\nname = \"x\"\ndependencies = [\n  \"numpy>=1.24\",\n  \"attrs\",\n]\n"
                }
                "p2" => {
                    "[project]\nname = \"x\"\ndependencies = [\n  \"numpy>=1.26\",\n  \"attrs\",\n  \"rich\",\n]\n"
                }
                _ => return None,
            };
            Some(text.as_bytes().to_vec())
        };
        let original = [
            entry("pyproject.toml", "p1"),
            entry("requirements-dev.txt", "r1"),
            entry("tox.ini", "t1"),
            entry("x/core.py", "c1"),
        ];
        let patched = [
            entry("pyproject.toml", "p2"),
            entry("requirements/test.txt", "n1"),
            entry("tox.ini", "t1"),
            entry("x/core.py", "c2"),
        ];
        assert_eq!(
            descriptor_changes(Language::Python, &original, &patched, &blobs),
            [
                "pyproject.toml changed: + `\"numpy>=1.26\",` + `\"rich\",` - `\"numpy>=1.24\",`",
                "requirements-dev.txt removed",
                "requirements/test.txt added",
            ]
        );
        assert!(descriptor_changes(Language::Python, &original, &original, &blobs).is_empty());
        let log = descriptor_changes_log(&["pom.xml changed".to_string()]);
        assert!(log.ends_with("etip:   pom.xml changed\n"), "{log}");
    }
}
