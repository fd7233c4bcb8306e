//! `--explain`: why one commit is kept or rejected.

use std::collections::HashSet;
use std::sync::Arc;

use etip_core::candidate::Candidate;
use etip_store::Store;
use git2::{Oid, Repository};
use serde::Serialize;

use crate::linker::Linker;
use crate::{
    Decision, MineConfig, MineError, RejectReason, Worker, history, in_window, prepare, run_key,
};

/// Why one commit was kept or rejected (`--explain`).
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// Full SHA.
    pub sha: String,
    /// Whether the commit is on the walked first-parent history.
    pub in_first_parent_history: bool,
    /// Whether its author date is inside the window.
    pub in_date_window: bool,
    /// `kept` or `rejected`.
    pub decision: &'static str,
    /// The failed rule.
    pub reason: Option<RejectReason>,
    /// What the rule said about it.
    pub reason_text: Option<&'static str>,
    /// Offending path, counts or files.
    pub detail: Option<String>,
    /// For a kept commit: the earlier candidate it duplicates, if any (needs the state of a run).
    pub duplicate_of: Option<String>,
    /// The candidate record for a kept commit.
    pub candidate: Option<Candidate>,
}

/// Explains why `rev` is kept or rejected under `cfg` (evaluated afresh; the state store, when it
/// exists, tells whether a kept commit duplicates an earlier one).
///
/// A commit that exists but that git cannot parse (a malformed author date) is reported as
/// [`MineError::UnreadableCommit`], with what is wrong with it.
pub fn explain(cfg: &MineConfig, rev: &str) -> Result<Explanation, MineError> {
    cfg.check_window()?;
    let p = prepare(cfg)?;
    let repo = Repository::open(&p.repo_path).map_err(|source| MineError::OpenRepo {
        path: cfg.repo.clone(),
        source,
    })?;
    let oid = history::resolve_commit(&repo, rev).map_err(|_| MineError::UnknownCommit {
        rev: rev.to_string(),
        path: cfg.repo.clone(),
    })?;
    if let Some(u) = history::unreadable(&repo, oid) {
        return Err(MineError::UnreadableCommit(u));
    }
    let (chain, _) = p.chain();
    let position = chain.iter().position(|(o, _)| *o == oid);
    let author_time = repo
        .find_commit(oid)
        .map_err(|source| MineError::Git {
            what: "read commit",
            sha: oid.to_string(),
            source,
        })?
        .author()
        .when()
        .seconds();
    let in_date_window = in_window(cfg, Some(author_time));
    let mut worker = Worker::new(&p.repo_path, Arc::clone(&p.settings))?;
    let decision = if in_date_window {
        Linker::linked(&p.repo_path, &p.settings, worker.evaluate(oid)?)?
    } else {
        Decision::Rejected {
            reason: RejectReason::OutsideDateWindow,
            detail: "author date outside the window".into(),
        }
    };
    let mut out = Explanation {
        sha: oid.to_string(),
        in_first_parent_history: position.is_some(),
        in_date_window,
        decision: "rejected",
        reason: None,
        reason_text: None,
        detail: None,
        duplicate_of: None,
        candidate: None,
    };
    match decision {
        Decision::Rejected { reason, detail } => {
            out.reason = Some(reason);
            out.reason_text = Some(reason.describe());
            out.detail = Some(detail);
        }
        Decision::Kept(c) => {
            out.decision = "kept";
            let state = cfg.state_path();
            if let (Some(pos), true) = (position, state.exists()) {
                let mut store = Store::open(&state)?;
                let (key, params) = run_key(cfg, &p);
                let run = store.mine_run(&key, &params)?;
                let earlier: HashSet<String> = chain[..pos]
                    .iter()
                    .filter(|(_, t)| in_window(cfg, *t))
                    .map(|(o, _)| o.to_string())
                    .collect();
                let mut first: Option<(usize, String)> = None;
                for r in store.commits(run)? {
                    if r.kept
                        && r.diff_hash.as_deref() == Some(c.diff_hash.as_str())
                        && earlier.contains(&r.sha)
                    {
                        let at = chain
                            .iter()
                            .position(|(o, _)| o.to_string() == r.sha)
                            .unwrap_or(usize::MAX);
                        if first.as_ref().is_none_or(|(i, _)| at < *i) {
                            first = Some((at, r.sha.clone()));
                        }
                    }
                }
                if let Some((_, sha)) = first {
                    out.decision = "rejected";
                    out.reason = Some(RejectReason::Duplicate);
                    out.reason_text = Some(RejectReason::Duplicate.describe());
                    out.detail = Some(format!("duplicate of {sha}"));
                    out.duplicate_of = Some(sha);
                }
            }
            out.candidate = Some(*c);
        }
    }
    Ok(out)
}

/// A pull request merged by rebase, seen from its last commit `last` on the branch and its number
/// of commits `n`: its base (the commit `n` first parents before `last`) and its commits, newest
/// first. `None` when `last` is a merge commit (the pull request was merged with one: that commit
/// already is the whole pull request) or the history is shorter than `n`.
pub fn rebased_range(
    cfg: &MineConfig,
    last: &str,
    n: usize,
) -> Result<Option<(String, Vec<String>)>, MineError> {
    let repo = Repository::open(&cfg.repo).map_err(|source| MineError::OpenRepo {
        path: cfg.repo.clone(),
        source,
    })?;
    let Ok(mut oid) = history::resolve_commit(&repo, last) else {
        return Ok(None);
    };
    let mut commits = Vec::with_capacity(n);
    for _ in 0..n {
        let Ok(c) = repo.find_commit(oid) else {
            return Ok(None);
        };
        if c.parent_count() != 1 {
            return Ok(None);
        }
        commits.push(oid.to_string());
        oid = c.parent_id(0).map_err(|source| MineError::Git {
            what: "read first parent",
            sha: oid.to_string(),
            source,
        })?;
    }
    Ok(Some((oid.to_string(), commits)))
}

/// Decides the change from `base` to `patched` as one commit would be decided (every rule, links
/// and classification from `patched`'s message): a pull request's commits taken together.
pub fn evaluate_range(cfg: &MineConfig, base: &str, patched: &str) -> Result<Decision, MineError> {
    let p = prepare(cfg)?;
    let repo = Repository::open(&p.repo_path).map_err(|source| MineError::OpenRepo {
        path: cfg.repo.clone(),
        source,
    })?;
    let resolve = |rev: &str| {
        history::resolve_commit(&repo, rev).map_err(|_| MineError::UnknownCommit {
            rev: rev.to_string(),
            path: cfg.repo.clone(),
        })
    };
    let (base, patched) = (resolve(base)?, resolve(patched)?);
    let tree = |oid: Oid| history::commit_tree(&repo, oid);
    let ids = crate::CommitIds {
        commit: patched,
        tree: tree(patched).ok_or_else(|| MineError::UnknownCommit {
            rev: patched.to_string(),
            path: cfg.repo.clone(),
        })?,
        parent: Some(base),
        parent_tree: tree(base),
    };
    let mut worker = Worker::new(&p.repo_path, Arc::clone(&p.settings))?;
    let decision = worker.evaluate_ids(&ids)?;
    Linker::linked(&p.repo_path, &p.settings, decision)
}
