//! The candidates file: written from the decisions, atomically, and only as a new file or over a
//! regular file.
//!
//! The file is written to a temporary file of an unpredictable name created in the target's folder
//! (`O_EXCL`: never through a link planted there), then renamed over the target. The target must be
//! absent or a regular file: a folder, a symbolic link, a FIFO or a device (`/dev/full`) is refused
//! before mining starts and again before each rename.

use std::collections::HashMap;
use std::path::Path;

use etip_core::candidate::Candidate;
use etip_store::{CommitRecord, Store};
use git2::Oid;

use crate::{MineConfig, MineError, RejectReason};

#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) kept: u64,
    pub(crate) duplicates: u64,
    pub(crate) rejected: HashMap<RejectReason, u64>,
    pub(crate) with_issue_links: u64,
    pub(crate) with_jira_keys: u64,
    pub(crate) with_pr_number: u64,
    /// Candidates per classifier answer (`--classify`).
    pub(crate) answers: std::collections::BTreeMap<String, u64>,
}

/// Writes the candidates file from the store: history order (oldest first), one line per distinct
/// normalised diff (the earliest commit), later equal diffs listed in `duplicates`.
/// `fresh`: every decision of the run when this invocation made them all (nothing was resumed), so
/// that the store need not be read back.
pub(crate) fn write_output(
    cfg: &MineConfig,
    state_path: &Path,
    store: &Store,
    run: i64,
    window: &[Oid],
    fresh: Option<Vec<CommitRecord>>,
) -> Result<Counts, MineError> {
    let all = match fresh {
        Some(records) => records,
        None => store.commits(run)?,
    };
    let mut by_sha: HashMap<String, CommitRecord> =
        all.into_iter().map(|r| (r.sha.clone(), r)).collect();
    let mut counts = Counts::default();
    // A kept commit's line is its stored payload as it is, unless later duplicates must be listed in
    // it: only those candidates are parsed whole and written again.
    enum Line {
        Stored(String),
        Edited(Box<Candidate>),
    }
    let payload_err = |sha: &str, source| MineError::Payload {
        path: state_path.to_path_buf(),
        sha: sha.to_string(),
        source,
    };
    let mut kept: Vec<(String, Line)> = Vec::new();
    let mut first_with_hash: HashMap<String, usize> = HashMap::new();
    for oid in window {
        let Some(rec) = by_sha.remove(&oid.to_string()) else {
            continue;
        };
        if !rec.kept {
            if let Some(r) = rec.reason.as_deref().and_then(RejectReason::from_name) {
                *counts.rejected.entry(r).or_default() += 1;
            }
            continue;
        }
        counts.kept += 1;
        let payload = rec.payload.unwrap_or_default();
        let hash = match rec.diff_hash {
            Some(h) => h,
            None => {
                serde_json::from_str::<Candidate>(&payload)
                    .map_err(|e| payload_err(&rec.sha, e))?
                    .diff_hash
            }
        };
        match first_with_hash.get(&hash) {
            Some(&i) => {
                counts.duplicates += 1;
                let (first, line) = &mut kept[i];
                if let Line::Stored(p) = line {
                    let c: Candidate =
                        serde_json::from_str(p).map_err(|e| payload_err(first, e))?;
                    *line = Line::Edited(Box::new(c));
                }
                if let Line::Edited(c) = line {
                    c.duplicates.push(rec.sha);
                }
            }
            None => {
                first_with_hash.insert(hash, kept.len());
                kept.push((rec.sha, Line::Stored(payload)));
            }
        }
    }
    /// What the summary counts of a candidate, read without building the whole record.
    #[derive(serde::Deserialize)]
    struct Links {
        #[serde(default)]
        issues: Vec<LinkRef>,
        #[serde(default)]
        pr_number: Option<u64>,
        #[serde(default)]
        classification: Option<Answer>,
    }
    #[derive(serde::Deserialize)]
    struct Answer {
        answer: String,
    }
    #[derive(serde::Deserialize)]
    struct LinkRef {
        #[serde(default)]
        number: Option<u64>,
        #[serde(default)]
        key: Option<String>,
    }
    let mut buf = Vec::new();
    for (sha, line) in &kept {
        let (issues, pr, answer) = match line {
            Line::Stored(p) => {
                let l: Links = serde_json::from_str(p).map_err(|e| payload_err(sha, e))?;
                buf.extend_from_slice(p.as_bytes());
                let issues: Vec<(bool, bool)> = l
                    .issues
                    .iter()
                    .map(|i| (i.number.is_some(), i.key.is_some()))
                    .collect();
                (
                    issues,
                    l.pr_number.is_some(),
                    l.classification.map(|a| a.answer),
                )
            }
            Line::Edited(c) => {
                serde_json::to_writer(&mut buf, c).expect("a candidate always serialises");
                let issues = c
                    .issues
                    .iter()
                    .map(|i| (i.number.is_some(), i.key.is_some()))
                    .collect();
                let answer = c.classification.as_ref().map(|a| a.answer.clone());
                (issues, c.pr_number.is_some(), answer)
            }
        };
        if let Some(a) = answer {
            *counts.answers.entry(a).or_default() += 1;
        }
        buf.push(b'\n');
        counts.with_issue_links += u64::from(issues.iter().any(|i| i.0));
        counts.with_jira_keys += u64::from(issues.iter().any(|i| i.1));
        counts.with_pr_number += u64::from(pr);
    }
    atomic_write(&cfg.out, &buf)?;
    Ok(counts)
}

/// Refuses a candidates path that exists and is not a regular file (a folder, a symbolic link, a
/// FIFO, a device or a socket): etip replaces only a regular file. A missing folder is left to the
/// caller, which says which flag names it.
pub(crate) fn check_target(path: &Path) -> Result<(), MineError> {
    match etip_core::atomic::check_target(path) {
        Err(etip_core::atomic::WriteError::NotRegular { path, problem }) => {
            Err(MineError::Output { path, problem })
        }
        Err(etip_core::atomic::WriteError::Io { path, source }) => {
            Err(MineError::Write { path, source })
        }
        Ok(()) | Err(etip_core::atomic::WriteError::Folder { .. }) => Ok(()),
    }
}

/// Replaces `path` with `bytes` through etip's one atomic writer (`etip_core::atomic`): a new
/// temporary file in the same folder, synced, then renamed over `path` (checked to be absent or a
/// regular file first).
fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), MineError> {
    use etip_core::atomic::WriteError;
    etip_core::atomic::write(path, bytes).map_err(|e| match e {
        WriteError::NotRegular { path, problem } => MineError::Output { path, problem },
        WriteError::Folder { path, problem } => MineError::Write {
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("its folder {problem}"),
            ),
            path,
        },
        WriteError::Io { path, source } => MineError::Write { path, source },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_replace_a_regular_file_and_leave_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("c.jsonl");
        atomic_write(&out, b"one\n").unwrap();
        atomic_write(&out, b"two\n").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"two\n");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["c.jsonl"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&out).unwrap().permissions().mode();
            // Readable by others as a file made by `File::create` is under a usual umask (022).
            let plain = dir.path().join("plain");
            std::fs::File::create(&plain).unwrap();
            let expected = std::fs::metadata(&plain).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, expected & 0o777);
        }
    }

    #[cfg(unix)]
    #[test]
    fn links_folders_and_fifos_are_refused_and_links_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        // A link planted at the name the miner used to write through.
        std::os::unix::fs::symlink(&victim, dir.path().join(".c.jsonl.tmp")).unwrap();
        atomic_write(&dir.path().join("c.jsonl"), b"x\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");

        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = atomic_write(&link, b"x\n").unwrap_err();
        assert!(matches!(e, MineError::Output { .. }), "{e}");
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");

        let e = atomic_write(dir.path(), b"x\n").unwrap_err();
        assert!(e.to_string().contains("is a folder"), "{e}");
        let e = check_target(Path::new("/dev/null")).unwrap_err();
        assert!(e.to_string().contains("is not a regular file"), "{e}");
        assert!(check_target(&dir.path().join("new.jsonl")).is_ok());
    }
}
