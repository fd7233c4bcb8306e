//! ETIPs whose patched side is a patch (an imported task's gold patch, SWE-bench's `patch`): the
//! patched version is made by applying it to the base commit in etip's own clone
//! ([`Repo::writable`]: never in the user's repository) and committing the tree, so the rest of
//! the build sees two commits as for any ETIP.
//!
//! Patches come in the shapes agent frameworks and datasets emit them. The patch is tried as
//! given first; when `git apply` refuses it, the normalisations below are tried in order, and
//! the first that applies is recorded ([`AppliedPatch::normalised`]):
//!
//! | shape | normalisation |
//! |---|---|
//! | no newline after the last line | one added |
//! | CRLF line ends (the whole patch) | made LF |
//! | hunk headers whose line counts do not match their lines | `git apply --recount` |
//! | paths without `a/` and `b/` prefixes (`--- pkg/mod.py`) | `git apply -p0` |
//!
//! A patch none of them makes apply is `patch_does_not_apply`, with git's message for the
//! patch as given.

use crate::git::{GitError, Repo};
use etip_core::instance::AppliedPatch;
use sha2::{Digest, Sha256};

/// One way of applying a patch: its text, `git apply`'s extra arguments, what was changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub text: String,
    pub args: Vec<&'static str>,
    pub notes: Vec<&'static str>,
}

/// Whether every file header of `patch` names its paths without git's `a/` and `b/` prefixes
/// (`--- pkg/mod.py`, `+++ pkg/mod.py`; `/dev/null` aside). Such a patch must be applied with
/// `-p0`: with git's default `-p1`, `git apply` would take `+++ pkg/new.py` as `new.py`.
pub fn unprefixed(patch: &str) -> bool {
    let mut any = false;
    for line in patch.lines() {
        let (path, prefix) = if let Some(p) = line.strip_prefix("--- ") {
            (p, "a/")
        } else if let Some(p) = line.strip_prefix("+++ ") {
            (p, "b/")
        } else {
            continue;
        };
        let path = path
            .split('\t')
            .next()
            .unwrap_or(path)
            .trim_end_matches('\r');
        let path = path.trim_matches('"');
        if path == "/dev/null" {
            continue;
        }
        if path.starts_with(prefix) {
            return false;
        }
        any = true;
    }
    any
}

/// The attempts for `patch`, as given first.
pub fn attempts(patch: &str) -> Vec<Attempt> {
    let mut texts: Vec<(String, Vec<&'static str>)> = vec![(patch.to_string(), Vec::new())];
    if !patch.is_empty() && !patch.ends_with('\n') {
        texts.push((
            format!("{patch}\n"),
            vec!["added the missing final newline"],
        ));
    }
    if patch.contains("\r\n") {
        let mut t = patch.replace("\r\n", "\n");
        let mut notes = vec!["CRLF line ends made LF"];
        if !t.ends_with('\n') {
            t.push('\n');
            notes.push("added the missing final newline");
        }
        texts.push((t, notes));
    }
    let (strip, strip_notes): (&[&'static str], &[&'static str]) = if unprefixed(patch) {
        (
            &["-p0"],
            &["paths without a/ and b/ prefixes (git apply -p0)"],
        )
    } else {
        (&[], &[])
    };
    let mut out = Vec::new();
    for recount in [false, true] {
        for (text, notes) in &texts {
            let mut args = strip.to_vec();
            let mut all = notes.clone();
            all.extend_from_slice(strip_notes);
            if recount {
                args.push("--recount");
                all.push("hunk line counts recounted (git apply --recount)");
            }
            out.push(Attempt {
                text: text.clone(),
                args,
                notes: all,
            });
        }
    }
    out
}

/// Why a patch did not apply.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error("the patch is empty")]
    Empty,
    #[error("git apply refused the patch: {git} (also tried: {tried})")]
    DoesNotApply { git: String, tried: String },
    #[error("writing the patch to a temporary file: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Git(GitError),
}

/// Applies `patch` to `base` in `repo` (etip's own clone) and commits it; the commit and what
/// was applied. `id` names the ETIP in the commit message.
pub fn apply(
    repo: &Repo,
    base: &str,
    patch: &str,
    id: &str,
) -> Result<(String, AppliedPatch), PatchError> {
    if patch.trim().is_empty() {
        return Err(PatchError::Empty);
    }
    let sha256 = hex::encode(Sha256::digest(patch.as_bytes()));
    commit_attempts(repo, base, patch, id, sha256)
}

/// The patched commit of an ETIP whose patch the build applied (`applied`, as its status
/// records it), made again in `repo` (etip's own clone): the same base, text and message give
/// the same commit, so a later step (labels, export) finds the patched tree without the build's
/// clone.
pub fn reapply(
    repo: &Repo,
    base: &str,
    applied: &AppliedPatch,
    id: &str,
) -> Result<String, PatchError> {
    commit_attempts(repo, base, &applied.text, id, applied.sha256.clone()).map(|(c, _)| c)
}

/// Tries the attempts of `patch` in order; the commit's message names `id` and the sha256 of
/// the patch as given.
fn commit_attempts(
    repo: &Repo,
    base: &str,
    patch: &str,
    id: &str,
    sha256: String,
) -> Result<(String, AppliedPatch), PatchError> {
    let message = format!("etip: the patch of {id} (sha256 {sha256})");
    let dir = tempfile::tempdir()?;
    let mut first_error = None;
    let mut tried = Vec::new();
    for attempt in attempts(patch) {
        let file = dir.path().join("patch.diff");
        std::fs::write(&file, attempt.text.as_bytes())?;
        match repo.commit_patch(base, &file, &attempt.args, &message) {
            Ok(commit) => {
                return Ok((
                    commit,
                    AppliedPatch {
                        sha256,
                        text: attempt.text,
                        normalised: attempt.notes.iter().map(|n| n.to_string()).collect(),
                    },
                ));
            }
            Err(GitError::Command { args, detail, .. }) if args.starts_with("apply") => {
                if !attempt.notes.is_empty() {
                    tried.push(attempt.notes.join(" + "));
                }
                first_error.get_or_insert(detail);
            }
            Err(e) => return Err(PatchError::Git(e)),
        }
    }
    Err(PatchError::DoesNotApply {
        git: first_error.unwrap_or_default(),
        tried: tried.join("; "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    const ORIGINAL: &str = "def dedup(values):\n    out = []\n    for v in values:\n        if v not in out:\n            out.append(v)\n    return out\n";

    const PATCH: &str = "diff --git a/pkg/text.py b/pkg/text.py\n--- a/pkg/text.py\n+++ b/pkg/text.py\n@@ -1,6 +1,2 @@\n def dedup(values):\n-    out = []\n-    for v in values:\n-        if v not in out:\n-            out.append(v)\n-    return out\n+    return list(dict.fromkeys(values))\n";

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A user's repository with one commit; etip's clone of it in `cache`.
    fn repos() -> (tempfile::TempDir, Repo, Repo, String) {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        std::fs::create_dir_all(src.join("pkg")).unwrap();
        std::fs::write(src.join("pkg/text.py"), ORIGINAL).unwrap();
        git(&src, &["init", "-q"]);
        git(&src, &["add", "."]);
        git(
            &src,
            &[
                "-c",
                "user.name=u",
                "-c",
                "user.email=u@x",
                "commit",
                "-qm",
                "base",
            ],
        );
        let base = git(&src, &["rev-parse", "HEAD"]);
        let user = Repo::open_or_clone(src.to_str().unwrap(), &tmp.path().join("cache")).unwrap();
        let own = user.writable(&tmp.path().join("cache")).unwrap();
        (tmp, user, own, base)
    }

    #[test]
    fn a_patch_becomes_a_commit_in_etips_clone_and_the_users_repository_is_untouched() {
        let (tmp, user, own, base) = repos();
        let src = tmp.path().join("src");
        let before = git(&src, &["count-objects", "-v"]);
        let (commit, applied) = apply(&own, &base, PATCH, "t-1").unwrap();
        assert!(applied.normalised.is_empty());
        assert_eq!(applied.text, PATCH);
        assert_eq!(applied.sha256.len(), 64);
        let text = own.file_at(&commit, "pkg/text.py").unwrap().unwrap();
        assert!(String::from_utf8(text).unwrap().contains("dict.fromkeys"));
        assert_eq!(own.diff(&base, &commit).unwrap().lines().count(), 12);
        // The same patch on the same base is the same commit; the base's date is the commit's.
        assert_eq!(apply(&own, &base, PATCH, "t-1").unwrap().0, commit);
        assert_eq!(
            own.commit_time(&commit).unwrap(),
            own.commit_time(&base).unwrap()
        );
        assert_eq!(git(&src, &["count-objects", "-v"]), before);
        assert!(user.commit_patch(&base, Path::new("x"), &[], "m").is_err());
        assert!(!user.is_cached() && own.is_cached());
    }

    #[test]
    fn patches_in_the_shapes_frameworks_emit_are_normalised_and_said() {
        let (_tmp, user, own, base) = repos();
        let cases: [(String, &[&str]); 4] = [
            (
                PATCH.trim_end_matches('\n').to_string(),
                &["added the missing final newline"],
            ),
            (PATCH.replace('\n', "\r\n"), &["CRLF line ends made LF"]),
            (
                PATCH.replace("a/pkg", "pkg").replace("b/pkg", "pkg"),
                &["paths without a/ and b/ prefixes (git apply -p0)"],
            ),
            (
                PATCH.replace("@@ -1,6 +1,2 @@", "@@ -1,7 +1,3 @@"),
                &["hunk line counts recounted (git apply --recount)"],
            ),
        ];
        for (patch, notes) in cases {
            let (commit, applied) = apply(&own, &base, &patch, "t-2").unwrap_or_else(|e| {
                panic!("{e}: {patch:?}");
            });
            assert_eq!(applied.normalised, notes, "{patch:?}");
            // A later step makes the same commit from what the status records, in another
            // clone of etip's (the build's cache is gone).
            let cache = tempfile::tempdir().unwrap();
            let other = user.writable(cache.path()).unwrap();
            assert_eq!(
                reapply(&other, &base, &applied, "t-2").unwrap(),
                commit,
                "{patch:?}"
            );
            let text = own.file_at(&commit, "pkg/text.py").unwrap().unwrap();
            assert!(String::from_utf8(text).unwrap().contains("dict.fromkeys"));
        }
        // A new file at the root, without prefixes.
        let new = "--- /dev/null\n+++ fast.py\n@@ -0,0 +1 @@\n+X = 1\n";
        let (commit, applied) = apply(&own, &base, new, "t-3").unwrap();
        assert_eq!(
            applied.normalised,
            ["paths without a/ and b/ prefixes (git apply -p0)"]
        );
        assert!(own.file_at(&commit, "fast.py").unwrap().is_some());
        // A new file in a folder, without prefixes.
        let new = "--- /dev/null\n+++ pkg/fast.py\n@@ -0,0 +1 @@\n+X = 1\n";
        let (commit, applied) = apply(&own, &base, new, "t-3").unwrap();
        assert_eq!(
            applied.normalised,
            ["paths without a/ and b/ prefixes (git apply -p0)"]
        );
        assert!(own.file_at(&commit, "pkg/fast.py").unwrap().is_some());
        assert!(own.file_at(&commit, "fast.py").unwrap().is_none());
        assert!(!unprefixed(PATCH) && !unprefixed("--- /dev/null\n+++ b/x.py\n"));
    }

    #[test]
    fn a_patch_for_another_base_does_not_apply_with_gits_message() {
        let (_tmp, _user, own, base) = repos();
        let other = PATCH.replace("    out = []", "    seen = []");
        let e = apply(&own, &base, &other, "t-4").unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, PatchError::DoesNotApply { .. }), "{text}");
        assert!(text.contains("patch does not apply"), "{text}");
        assert!(text.contains("pkg/text.py"), "{text}");
        assert!(matches!(
            apply(&own, &base, " \n", "t-5"),
            Err(PatchError::Empty)
        ));
    }
}
