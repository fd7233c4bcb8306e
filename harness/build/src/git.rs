//! Host-side git access (the `git` program): clone into a cache, resolve commits, list and read
//! trees, and archive a commit's tree as tar. Containers never need network for sources.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cloning {source_url} into {dest} failed: {detail}")]
    Clone {
        source_url: String,
        dest: String,
        detail: String,
    },
    #[error("commit {commit} not found in {repo}: {detail} (check the ETIP's commits and source)")]
    Checkout {
        repo: String,
        commit: String,
        detail: String,
    },
    #[error("running git {args} in {repo} failed: {detail} (is git installed?)")]
    Command {
        repo: String,
        args: String,
        detail: String,
    },
}

/// A git repository on the host (a local checkout or a cached bare clone).
#[derive(Debug, Clone)]
pub struct Repo {
    pub dir: PathBuf,
}

/// One entry of `git ls-tree -r`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub mode: String,
    pub blob: String,
    pub path: String,
}

fn run_git(dir: Option<&Path>, args: &[&str]) -> Result<Vec<u8>, (String, String)> {
    let mut cmd = Command::new("git");
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    cmd.args(args).env("GIT_TERMINAL_PROMPT", "0");
    match cmd.output() {
        Ok(out) if out.status.success() => Ok(out.stdout),
        Ok(out) => Err((
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        )),
        Err(e) => Err((args.join(" "), e.to_string())),
    }
}

/// A short, tag-safe name for a repository source (`owner/name`, URL or path).
pub fn slug(source: &str) -> String {
    let last = source
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .rsplit(['/', ':'])
        .next()
        .unwrap_or("repo");
    let s: String = last
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let s = s.trim_matches('-').to_string();
    if s.is_empty() { "repo".into() } else { s }
}

impl Repo {
    /// Opens `source` when it is a local directory, otherwise clones it (bare) into `cache` (once).
    pub fn open_or_clone(source: &str, cache: &Path) -> Result<Repo, GitError> {
        let local = Path::new(source);
        if local.is_dir() {
            return Ok(Repo {
                dir: local.to_path_buf(),
            });
        }
        let hash = hex::encode(Sha256::digest(source.as_bytes()));
        let dest = cache.join(format!("{}-{}.git", slug(source), &hash[..10]));
        if !dest.join("HEAD").is_file() {
            std::fs::create_dir_all(cache).map_err(|e| GitError::Clone {
                source_url: source.into(),
                dest: dest.display().to_string(),
                detail: e.to_string(),
            })?;
            let tmp = cache.join(format!(".clone-{}-{}", &hash[..10], std::process::id()));
            let _ = std::fs::remove_dir_all(&tmp);
            let tmp_s = tmp.to_string_lossy().to_string();
            run_git(None, &["clone", "--quiet", "--bare", source, &tmp_s]).map_err(|(_, d)| {
                let _ = std::fs::remove_dir_all(&tmp);
                GitError::Clone {
                    source_url: source.into(),
                    dest: dest.display().to_string(),
                    detail: d,
                }
            })?;
            if std::fs::rename(&tmp, &dest).is_err() {
                // Another worker cloned it first.
                let _ = std::fs::remove_dir_all(&tmp);
            }
        }
        Ok(Repo { dir: dest })
    }

    fn git(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        run_git(Some(&self.dir), args).map_err(|(args, detail)| GitError::Command {
            repo: self.dir.display().to_string(),
            args,
            detail,
        })
    }

    /// Resolves `rev` to a full commit id; fetches all refs once when it is missing.
    pub fn resolve(&self, rev: &str) -> Result<String, GitError> {
        let spec = format!("{rev}^{{commit}}");
        let attempt = || {
            run_git(
                Some(&self.dir),
                &["rev-parse", "--verify", "--quiet", &spec],
            )
        };
        let out = match attempt() {
            Ok(out) => out,
            Err(_) => {
                let _ = run_git(
                    Some(&self.dir),
                    &[
                        "fetch",
                        "--quiet",
                        "origin",
                        "+refs/heads/*:refs/heads/*",
                        "+refs/tags/*:refs/tags/*",
                    ],
                );
                attempt().map_err(|(_, detail)| GitError::Checkout {
                    repo: self.dir.display().to_string(),
                    commit: rev.into(),
                    detail: if detail.is_empty() {
                        "unknown revision".into()
                    } else {
                        detail
                    },
                })?
            }
        };
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// All files of a commit's tree.
    pub fn ls_tree(&self, commit: &str) -> Result<Vec<TreeEntry>, GitError> {
        let out = self.git(&["ls-tree", "-r", "-z", "--full-tree", commit])?;
        let mut entries = Vec::new();
        for rec in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let rec = String::from_utf8_lossy(rec);
            let Some((meta, path)) = rec.split_once('\t') else {
                continue;
            };
            let mut it = meta.split_whitespace();
            let (Some(mode), Some(kind), Some(blob)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            if kind == "blob" {
                entries.push(TreeEntry {
                    mode: mode.into(),
                    blob: blob.into(),
                    path: path.into(),
                });
            }
        }
        Ok(entries)
    }

    /// The content of a blob.
    pub fn blob(&self, blob: &str) -> Result<Vec<u8>, GitError> {
        self.git(&["cat-file", "blob", blob])
    }

    /// Writes `git archive` of `commit` (paths prefixed with `prefix`) into the tar file `out`.
    pub fn archive(&self, commit: &str, prefix: &str, out: &Path) -> Result<(), GitError> {
        let out_s = out.to_string_lossy().to_string();
        let prefix = format!("--prefix={prefix}");
        self.git(&["archive", "--format=tar", &prefix, "-o", &out_s, commit])
            .map(|_| ())
            .map_err(|e| GitError::Checkout {
                repo: self.dir.display().to_string(),
                commit: commit.into(),
                detail: e.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_tag_safe() {
        assert_eq!(
            slug("https://github.com/Apache/Commons-Lang.git"),
            "commons-lang"
        );
        assert_eq!(slug("/tmp/x/My_Repo/"), "my-repo");
        assert_eq!(slug("git@github.com:o/n.git"), "n");
        assert_eq!(slug("___"), "repo");
    }
}
