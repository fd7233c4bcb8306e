//! The issue links of kept commits, added by the miner's parent process.
//!
//! A kept commit's links come from its message ([`links::extract`]: JIRA keys of the project's
//! prefixes only) and, for a merge commit whose message links no issue, from the branch it merged:
//! the branch's name, then up to [`MERGED_COMMITS`] of its commits, newest first as libgit2's walk
//! lists them ([`crate::merged`]). Those walks read most commits of the history once. Done in the
//! workers, each worker read them again (on sympy since 2015, two workers read 58,000 commits for
//! 39,000 distinct ones, a seventh of the run), and every worker had to wait for the whole
//! first-parent walk that finds the JIRA prefixes. The parent process, which otherwise waits for
//! decisions, now links the candidates as they arrive, with one commit graph for the run; the
//! workers judge the rules only.

use std::path::Path;
use std::sync::Arc;

use etip_core::candidate::Candidate;
use etip_store::CommitRecord;
use git2::{Oid, Repository};

use crate::analyze::{Decision, EvalSettings, git_err};
use crate::pack::PackReader;
use crate::{MineError, history, links, merged};

/// The most commits of a merged branch whose messages a merge commit's links are taken from.
pub const MERGED_COMMITS: usize = 100;

/// Adds the links to candidates of one repository.
pub(crate) struct Linker {
    repo: Repository,
    /// Commit reads for the merged-branch walks (commits are not cached: each is parsed once).
    packs: PackReader,
    /// Parents and times of the commits merged-branch walks visited; `None` in repositories whose
    /// parents libgit2 rewrites (grafts, shallow).
    graph: Option<merged::Graph>,
    /// Merged-branch walks left to libgit2.
    walk_fallbacks: u64,
    settings: Arc<EvalSettings>,
}

impl Drop for Linker {
    fn drop(&mut self) {
        tracing::debug!(
            walk_fallbacks = self.walk_fallbacks,
            "merged-branch walks left to libgit2"
        );
    }
}

impl Linker {
    /// Opens `repo_path` for linking under `settings` (its repository name and JIRA prefixes).
    pub(crate) fn open(repo_path: &Path, settings: Arc<EvalSettings>) -> Result<Self, MineError> {
        let repo = Repository::open(repo_path).map_err(|source| MineError::OpenRepo {
            path: repo_path.to_path_buf(),
            source,
        })?;
        let packs = PackReader::with_cache(&repo, 0);
        let grafted = repo.is_shallow() || repo.path().join("info/grafts").exists();
        Ok(Self {
            graph: (!grafted).then(merged::Graph::default),
            walk_fallbacks: 0,
            repo,
            packs,
            settings,
        })
    }

    /// Links under `settings` from now on (the JIRA prefixes are known once the history is
    /// walked).
    pub(crate) fn set_settings(&mut self, settings: Arc<EvalSettings>) {
        self.settings = settings;
    }

    /// Stored commit `oid` from the packs (`None` when they do not hold it): the miner's
    /// first-parent walk reads through here, so the commit graph knows those commits at once.
    pub(crate) fn read_commit(&mut self, oid: Oid) -> Option<Arc<Vec<u8>>> {
        let data = self.packs.commit(oid).ok().flatten()?;
        if let Some(graph) = &mut self.graph {
            graph.load(oid, &data);
        }
        Some(data)
    }

    /// Sets the PR number, issues and pull requests of candidate `c` (of commit
    /// `c.patched_commit`, from `c.message`).
    pub(crate) fn link(&mut self, c: &mut Candidate) -> Result<(), MineError> {
        let oid =
            Oid::from_str(&c.patched_commit).map_err(git_err("read commit", Oid::ZERO_SHA1))?;
        let found = self.links(oid, &c.message)?;
        c.pr_number = found.pr_number;
        c.issues = found.issues;
        c.pull_requests = found.pull_requests;
        Ok(())
    }

    /// `decision` with its candidate linked (for one-off evaluations: the linker lives as long
    /// as the call).
    pub(crate) fn linked(
        repo_path: &Path,
        settings: &Arc<EvalSettings>,
        decision: Decision,
    ) -> Result<Decision, MineError> {
        match decision {
            Decision::Kept(mut c) => {
                Linker::open(repo_path, Arc::clone(settings))?.link(&mut c)?;
                Ok(Decision::Kept(c))
            }
            rejected => Ok(rejected),
        }
    }

    /// [`Linker::link`] on the candidate a kept record holds (rejections are left as they are).
    pub(crate) fn link_record(&mut self, r: &mut CommitRecord) -> Result<(), MineError> {
        let Some(payload) = r.payload.as_mut() else {
            return Ok(());
        };
        let unreadable = |e: serde_json::Error| {
            MineError::WorkerProcess(format!(
                "a mining worker sent an unreadable candidate for {}: {e}",
                r.sha
            ))
        };
        let mut c: Candidate = serde_json::from_str(payload).map_err(unreadable)?;
        self.link(&mut c)?;
        *payload = serde_json::to_string(&c).expect("a candidate always serialises");
        Ok(())
    }

    /// The commit's links ([`links`]): JIRA keys of the project's prefixes only; a merge commit
    /// that links no issue takes its merged branch's links (its name, then up to
    /// [`MERGED_COMMITS`] of its commits, newest first).
    fn links(&mut self, oid: Oid, message: &str) -> Result<links::Links, MineError> {
        let settings = Arc::clone(&self.settings);
        let repo = settings.repo_name.as_deref();
        let jira = &settings.jira_projects;
        let mut found = links::extract(message, repo);
        found.keep_jira(jira);
        if !found.issues.is_empty() {
            return Ok(found);
        }
        let commit = self
            .repo
            .find_commit(oid)
            .map_err(git_err("read commit", oid))?;
        if commit.parent_count() < 2 {
            return Ok(found);
        }
        let (Ok(first), Ok(merged)) = (commit.parent_id(0), commit.parent_id(1)) else {
            return Ok(found);
        };
        drop(commit);
        let mut commits = Vec::new();
        for id in self.merged_commits(oid, merged, first)? {
            let message = match self.packs.commit(id) {
                Ok(Some(data)) => {
                    history::raw_message(&data).map(|m| String::from_utf8_lossy(m).into_owned())
                }
                _ => None,
            };
            let message = match message {
                Some(m) => m,
                None => {
                    let c = self
                        .repo
                        .find_commit(id)
                        .map_err(git_err("read commit", id))?;
                    String::from_utf8_lossy(c.message_raw_bytes()).into_owned()
                }
            };
            commits.push((id.to_string(), message));
        }
        let branch = links::merged_branch(message.lines().next().unwrap_or(""));
        found.adopt_merged(branch, &commits, repo, jira);
        Ok(found)
    }

    /// Up to [`MERGED_COMMITS`] commits reachable from `merged` and not from `first`, newest
    /// first as libgit2's walk gives them: replayed on the run's commit graph, or walked by
    /// libgit2 when the graph cannot ([`merged::Unsupported`]).
    fn merged_commits(&mut self, oid: Oid, merged: Oid, first: Oid) -> Result<Vec<Oid>, MineError> {
        if let Some(graph) = &mut self.graph {
            let (packs, repo) = (&mut self.packs, &self.repo);
            let read = |id: Oid| match packs.commit(id) {
                Ok(Some(data)) => Some(data),
                Ok(None) => repo
                    .odb()
                    .ok()?
                    .read(id)
                    .ok()
                    .map(|o| Arc::new(o.data().to_vec())),
                Err(_) => None,
            };
            if let Ok(ids) = graph.merged(merged, first, MERGED_COMMITS, read) {
                return Ok(ids);
            }
        }
        self.walk_fallbacks += 1;
        let mut walk = self
            .repo
            .revwalk()
            .map_err(git_err("walk merged branch", oid))?;
        walk.push(merged)
            .map_err(git_err("walk merged branch", oid))?;
        walk.hide(first)
            .map_err(git_err("walk merged branch", oid))?;
        walk.take(MERGED_COMMITS)
            .map(|id| id.map_err(git_err("walk merged branch", oid)))
            .collect()
    }
}
