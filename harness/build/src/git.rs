//! Host-side git access (the `git` program): clone into a cache, resolve commits, list and read
//! trees, and archive a commit's tree as tar. Containers never need network for sources.
//!
//! A source repository of the user's (a local folder) is only ever read: commits it lacks are
//! looked up in its `origin` (read in place when that is a local folder, otherwise cloned and
//! fetched into etip's cache, `<cache>/<slug>-<hash of the URL>.git`). Only etip's own cache
//! clones are fetched into.

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
    /// The repository is etip's own clone in the cache (fetched into when a commit is missing);
    /// otherwise it is the user's and only read.
    cached: bool,
}

/// One entry of `git ls-tree -r`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub mode: String,
    pub blob: String,
    pub path: String,
}

fn run_git(dir: Option<&Path>, args: &[&str]) -> Result<Vec<u8>, (String, String)> {
    run_git_env(dir, args, &[])
}

fn run_git_env(
    dir: Option<&Path>,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<Vec<u8>, (String, String)> {
    let mut cmd = Command::new("git");
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    cmd.args(args).env("GIT_TERMINAL_PROMPT", "0");
    for (k, v) in env {
        cmd.env(k, v);
    }
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

/// Whether a remote URL is a local path relative to the repository (not `scheme://...`, not
/// scp-like `host:path`, not absolute): git resolves those against the repository's folder.
fn is_relative_path_url(url: &str) -> bool {
    let scp_like = url
        .split_once(':')
        .is_some_and(|(host, _)| !host.contains('/'));
    !url.contains("://") && !scp_like && Path::new(url).is_relative()
}

/// Clones `source` bare into `dest` under `cache` unless it is there already, with `flag`
/// (`--no-hardlinks`, `--shared`): into a temporary folder first, renamed into place, so that a
/// clone another worker finished first is kept and a failed one leaves nothing.
fn clone_once(source: &str, cache: &Path, dest: &Path, flag: &str) -> Result<(), GitError> {
    if dest.join("HEAD").is_file() {
        return Ok(());
    }
    let clone_err = |detail: String| GitError::Clone {
        source_url: source.into(),
        dest: dest.display().to_string(),
        detail,
    };
    std::fs::create_dir_all(cache).map_err(|e| clone_err(e.to_string()))?;
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = cache.join(format!(".clone-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let tmp_s = tmp.to_string_lossy().to_string();
    // `--`: a source is never an option.
    let args = ["clone", "--quiet", "--bare", flag, "--", source, &tmp_s];
    run_git(None, &args).map_err(|(_, d)| {
        let _ = std::fs::remove_dir_all(&tmp);
        clone_err(d)
    })?;
    if std::fs::rename(&tmp, dest).is_err() {
        // Another worker cloned it first.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(())
}

impl Repo {
    /// Opens `source` when it is a local directory (the user's: only read), otherwise clones it
    /// (bare) into `cache` (once).
    pub fn open_or_clone(source: &str, cache: &Path) -> Result<Repo, GitError> {
        let local = Path::new(source);
        if local.is_dir() {
            return Ok(Repo {
                dir: local.to_path_buf(),
                cached: false,
            });
        }
        let hash = hex::encode(Sha256::digest(source.as_bytes()));
        let dest = cache.join(format!("{}-{}.git", slug(source), &hash[..10]));
        // `--no-hardlinks`: a local upstream's object files are copied, not linked.
        clone_once(source, cache, &dest, "--no-hardlinks")?;
        Ok(Repo {
            dir: dest,
            cached: true,
        })
    }

    fn git(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        run_git(Some(&self.dir), args).map_err(|(args, detail)| GitError::Command {
            repo: self.dir.display().to_string(),
            args,
            detail,
        })
    }

    /// Whether this is etip's own clone in the cache (not a repository of the user's).
    pub fn is_cached(&self) -> bool {
        self.cached
    }

    /// The full commit id of `rev` when this repository has it (reads only).
    fn rev_parse(&self, rev: &str) -> Option<String> {
        let spec = format!("{rev}^{{commit}}");
        let args = [
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ];
        run_git(Some(&self.dir), &args)
            .ok()
            .map(|out| String::from_utf8_lossy(&out).trim().to_string())
            .filter(|id| !id.is_empty())
    }

    /// Fetches every branch and tag of `origin` into etip's own cache clone (never into a
    /// user's repository: a no-op there). Failures surface as the commit still missing.
    fn fetch_into_cache(&self) {
        if self.cached {
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
        }
    }

    /// The URL of the `origin` remote (made absolute when it is a relative path), if any.
    fn origin_url(&self) -> Option<String> {
        run_git(Some(&self.dir), &["config", "--get", "remote.origin.url"]).ok()?;
        let out = run_git(Some(&self.dir), &["ls-remote", "--get-url", "origin"]).ok()?;
        let url = String::from_utf8_lossy(&out).trim().to_string();
        if url.is_empty() {
            return None;
        }
        if !is_relative_path_url(&url) {
            return Some(url);
        }
        // git resolves a relative path against the work tree's top (bare: the git folder).
        let base = run_git(Some(&self.dir), &["rev-parse", "--show-toplevel"])
            .ok()
            .filter(|o| !o.trim_ascii().is_empty())
            .or_else(|| run_git(Some(&self.dir), &["rev-parse", "--absolute-git-dir"]).ok())?;
        let base = PathBuf::from(String::from_utf8_lossy(&base).trim());
        let path = base.join(url);
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        Some(path.to_string_lossy().into_owned())
    }

    /// Resolves `rev` to a full commit id; an etip cache clone fetches from its origin once when
    /// the commit is missing, a user's repository is only read.
    pub fn resolve(&self, rev: &str) -> Result<String, GitError> {
        if let Some(id) = self.rev_parse(rev) {
            return Ok(id);
        }
        self.fetch_into_cache();
        self.rev_parse(rev).ok_or_else(|| GitError::Checkout {
            repo: self.dir.display().to_string(),
            commit: rev.into(),
            detail: "unknown revision".into(),
        })
    }

    /// Resolves every rev in one repository that has them all: this one or, when some are
    /// missing here, this repository's `origin` (a cache clone under `cache`, fetched into;
    /// a local upstream is read in place). Returns that repository and the full commit ids.
    /// Nothing is ever written to a repository of the user's.
    pub fn resolve_all(
        &self,
        revs: &[&str],
        cache: &Path,
    ) -> Result<(Repo, Vec<String>), GitError> {
        let all = |repo: &Repo| -> Option<Vec<String>> {
            revs.iter().map(|r| repo.rev_parse(r)).collect()
        };
        if let Some(ids) = all(self) {
            return Ok((self.clone(), ids));
        }
        let (repo, origin) = if self.cached {
            self.fetch_into_cache();
            (self.clone(), None)
        } else if let Some(url) = self.origin_url() {
            let upstream = Repo::open_or_clone(&url, cache)?;
            if all(&upstream).is_none() {
                upstream.fetch_into_cache();
            }
            (upstream, Some(url))
        } else {
            (self.clone(), None)
        };
        let mut ids = Vec::with_capacity(revs.len());
        for rev in revs {
            let Some(id) = repo.rev_parse(rev) else {
                return Err(self.missing(rev, origin.as_deref()));
            };
            ids.push(id);
        }
        Ok((repo, ids))
    }

    /// The error of a commit found neither here nor upstream.
    fn missing(&self, rev: &str, origin: Option<&str>) -> GitError {
        let detail = match (self.cached, origin) {
            (true, _) => "not in the cached clone, even after fetching its origin".to_string(),
            (false, Some(url)) => format!(
                "not in this repository nor in its origin {url} (read in place when local, else fetched into etip's cache clone; etip never fetches into the source repository)"
            ),
            (false, None) => "not in this repository, which has no `origin` remote to look in (etip never fetches into the source repository: fetch the commit yourself or set the ETIP's source to a URL)".to_string(),
        };
        GitError::Checkout {
            repo: self.dir.display().to_string(),
            commit: rev.into(),
            detail,
        }
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

    /// When `commit` was committed (committer date, unix seconds): the time whose interpreter and
    /// dependency releases its build uses.
    pub fn commit_time(&self, commit: &str) -> Result<i64, GitError> {
        let out = self.git(&["show", "-s", "--format=%ct", commit, "--"])?;
        let text = String::from_utf8_lossy(&out);
        text.trim().parse().map_err(|_| GitError::Checkout {
            repo: self.dir.display().to_string(),
            commit: commit.into(),
            detail: format!("no commit date in {:?}", text.trim()),
        })
    }

    /// The content of a blob.
    pub fn blob(&self, blob: &str) -> Result<Vec<u8>, GitError> {
        self.git(&["cat-file", "blob", blob])
    }

    /// The content of `path` in `commit`, `None` when the commit has no such file.
    pub fn file_at(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        let spec = format!("{commit}:{path}");
        let exists = run_git(Some(&self.dir), &["cat-file", "-e", &spec]).is_ok();
        if !exists {
            return Ok(None);
        }
        self.git(&["cat-file", "blob", &spec]).map(Some)
    }

    /// The unified diff from `base` to `patched` (`git diff`, no renames, full index lines, no
    /// colour or external diff driver whatever the user's configuration says): a commit's patch as
    /// `git apply` takes it.
    pub fn diff(&self, base: &str, patched: &str) -> Result<String, GitError> {
        let out = self
            .git(&[
                "-c",
                "core.quotepath=true",
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-renames",
                "--no-textconv",
                "--full-index",
                "--binary",
                base,
                patched,
                "--",
            ])
            .map_err(|e| GitError::Checkout {
                repo: self.dir.display().to_string(),
                commit: format!("{base}..{patched}"),
                detail: e.to_string(),
            })?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// A repository etip may write objects into that holds this one's commits: this one when it
    /// is etip's cache clone, else a shared bare clone of the user's repository in `cache`
    /// (`git clone --shared`: the user's objects are read through git's alternates, nothing is
    /// written to the user's repository).
    pub fn writable(&self, cache: &Path) -> Result<Repo, GitError> {
        if self.cached {
            return Ok(self.clone());
        }
        let dir = std::fs::canonicalize(&self.dir).unwrap_or_else(|_| self.dir.clone());
        let source = dir.to_string_lossy().into_owned();
        let hash = hex::encode(Sha256::digest(source.as_bytes()));
        let dest = cache.join(format!("{}-{}-shared.git", slug(&source), &hash[..10]));
        clone_once(&source, cache, &dest, "--shared")?;
        Ok(Repo {
            dir: dest,
            cached: true,
        })
    }

    /// Applies the patch file `patch` to `base` in a throw-away index (`git apply --cached` with
    /// `args`, e.g. `-p0`) and commits the tree with `base` as its parent. The commit is the same
    /// for the same base, patch and `message`: author and committer are `etip`, dated as the base
    /// commit (so the patched version's era is the base's). Only for etip's own clones
    /// ([`Repo::writable`]). The error's detail is git's message.
    pub fn commit_patch(
        &self,
        base: &str,
        patch: &Path,
        args: &[&str],
        message: &str,
    ) -> Result<String, GitError> {
        if !self.cached {
            return Err(GitError::Command {
                repo: self.dir.display().to_string(),
                args: "apply".into(),
                detail: "etip writes only into its own clones".into(),
            });
        }
        let tmp = tempfile::tempdir().map_err(|e| GitError::Command {
            repo: self.dir.display().to_string(),
            args: "apply".into(),
            detail: format!("a temporary index: {e}"),
        })?;
        let index = tmp.path().join("index");
        let index_s = index.to_string_lossy().into_owned();
        let git = |args: &[&str], env: &[(&str, &str)]| {
            run_git_env(Some(&self.dir), args, env).map_err(|(args, detail)| GitError::Command {
                repo: self.dir.display().to_string(),
                args,
                detail,
            })
        };
        let idx = [("GIT_INDEX_FILE", index_s.as_str())];
        git(&["read-tree", base], &idx)?;
        let patch_s = patch.to_string_lossy().into_owned();
        let mut apply = vec!["apply", "--cached"];
        apply.extend_from_slice(args);
        apply.push(&patch_s);
        git(&apply, &idx)?;
        let tree = git(&["write-tree"], &idx)?;
        let tree = String::from_utf8_lossy(&tree).trim().to_string();
        let date = git(&["show", "-s", "--format=%ct %z", base, "--"], &[])?;
        let date = format!("@{}", String::from_utf8_lossy(&date).trim());
        let who = [
            ("GIT_AUTHOR_NAME", "etip"),
            ("GIT_AUTHOR_EMAIL", "etip@localhost"),
            ("GIT_AUTHOR_DATE", date.as_str()),
            ("GIT_COMMITTER_NAME", "etip"),
            ("GIT_COMMITTER_EMAIL", "etip@localhost"),
            ("GIT_COMMITTER_DATE", date.as_str()),
        ];
        let commit = git(&["commit-tree", &tree, "-p", base, "-m", message], &who)?;
        Ok(String::from_utf8_lossy(&commit).trim().to_string())
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

#[cfg(test)]
mod source_tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        etip_testkit::git(dir, args)
    }

    /// An upstream with `main` and `feature`, and a bare clone of it whose `feature` has a local
    /// commit; then upstream moves both branches on. Returns (guard, upstream, clone, new commit).
    fn moved_upstream() -> (tempfile::TempDir, PathBuf, PathBuf, String) {
        let tmp = tempfile::tempdir().unwrap();
        let up = tmp.path().join("up");
        std::fs::create_dir_all(&up).unwrap();
        git(&up, &["init", "-q", "-b", "main"]);
        std::fs::write(up.join("a.txt"), "1\n").unwrap();
        git(&up, &["add", "-A"]);
        git(&up, &["commit", "-q", "-m", "one"]);
        git(&up, &["branch", "feature"]);
        let clone = tmp.path().join("clone.git");
        let url = format!("file://{}", up.display());
        git(tmp.path(), &["clone", "-q", "--bare", &url, "clone.git"]);
        // A local commit on the clone's `feature`, not in upstream.
        let tree = git(&clone, &["rev-parse", "feature^{tree}"]);
        let parent = git(&clone, &["rev-parse", "feature"]);
        let local = git(
            &clone,
            &["commit-tree", &tree, "-p", &parent, "-m", "local work"],
        );
        git(&clone, &["update-ref", "refs/heads/feature", &local]);
        std::fs::write(up.join("a.txt"), "2\n").unwrap();
        git(&up, &["commit", "-q", "-am", "two"]);
        let new = git(&up, &["rev-parse", "HEAD"]);
        git(&up, &["branch", "-f", "feature", "HEAD"]);
        (tmp, up, clone, new)
    }

    #[test]
    fn resolving_never_writes_to_the_source_repository() {
        let (tmp, _up, clone, new) = moved_upstream();
        let refs = git(&clone, &["for-each-ref"]);
        let files = etip_testkit::tree_snapshot(&clone);
        let cache = tmp.path().join("cache");
        let repo = Repo::open_or_clone(clone.to_str().unwrap(), &cache).unwrap();
        assert!(!repo.is_cached());
        // The user's repository lacks the commit and is not fetched into.
        assert!(matches!(repo.resolve(&new), Err(GitError::Checkout { .. })));
        assert_eq!(git(&clone, &["for-each-ref"]), refs);
        assert_eq!(etip_testkit::tree_snapshot(&clone), files);
        // Its origin (a URL) is cloned into etip's cache, which has the commit.
        let old = git(&clone, &["rev-parse", "main"]);
        let (found, ids) = repo.resolve_all(&[&old, &new], &cache).unwrap();
        assert!(
            found.is_cached() && found.dir.starts_with(&cache),
            "{found:?}"
        );
        assert_eq!(ids, [old.clone(), new.clone()]);
        assert_eq!(found.ls_tree(&new).unwrap().len(), 1);
        assert_eq!(git(&clone, &["for-each-ref"]), refs);
        assert_eq!(etip_testkit::tree_snapshot(&clone), files);
        // Commits the user's repository has are read there, without any upstream access.
        let (here, ids) = repo.resolve_all(&["main", "feature"], &cache).unwrap();
        assert_eq!(here.dir, clone);
        assert_eq!(ids[0], old);
    }

    #[test]
    fn a_local_upstream_is_read_in_place_and_a_missing_commit_is_named() {
        let (tmp, up, clone, new) = moved_upstream();
        // A detached work tree whose origin is a relative path.
        let work = tmp.path().join("work");
        git(tmp.path(), &["clone", "-q", "clone.git", "work"]);
        git(&work, &["checkout", "-q", "--detach", "HEAD"]);
        git(&work, &["remote", "set-url", "origin", "../up"]);
        let refs = git(&work, &["for-each-ref"]);
        let files = etip_testkit::tree_snapshot(&work);
        let up_refs = git(&up, &["for-each-ref"]);
        let cache = tmp.path().join("cache");
        let repo = Repo::open_or_clone(work.to_str().unwrap(), &cache).unwrap();
        let (found, ids) = repo.resolve_all(&[&new], &cache).unwrap();
        assert_eq!(found.dir, up.canonicalize().unwrap());
        assert!(!found.is_cached());
        assert_eq!(ids, std::slice::from_ref(&new));
        assert_eq!(git(&work, &["for-each-ref"]), refs);
        assert_eq!(etip_testkit::tree_snapshot(&work), files);
        assert_eq!(git(&up, &["for-each-ref"]), up_refs);
        assert!(!cache.exists(), "nothing to clone for a local upstream");

        let missing = "0123456789abcdef0123456789abcdef01234567";
        let err = repo
            .resolve_all(&[missing], &cache)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(missing) && err.contains(work.to_str().unwrap()),
            "{err}"
        );
        assert!(
            err.contains("never fetches into the source repository"),
            "{err}"
        );
        // Without an origin, the error says so.
        git(&work, &["remote", "remove", "origin"]);
        let err = repo.resolve_all(&[&new], &cache).unwrap_err().to_string();
        assert!(
            err.contains(&new) && err.contains("no `origin` remote"),
            "{err}"
        );
        let _ = clone;
    }

    #[test]
    fn a_source_that_looks_like_an_option_is_a_repository_name() {
        let tmp = tempfile::tempdir().unwrap();
        let marker = tmp.path().join("pwned");
        let source = format!("--upload-pack=touch {}", marker.display());
        let err = Repo::open_or_clone(&source, &tmp.path().join("cache")).unwrap_err();
        let GitError::Clone { detail, .. } = &err else {
            panic!("{err}")
        };
        // git took the whole source as the repository to clone, not as an option.
        assert!(detail.contains("repository '--upload-pack="), "{detail}");
        assert!(!marker.exists());
        let left: Vec<_> = std::fs::read_dir(tmp.path().join("cache"))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
