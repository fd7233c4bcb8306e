//! GitHub's REST API for the miner, through octocrab: an issue (and whether the number is really
//! a pull request), the pull requests that contain a commit, a pull request's commits. Every
//! answer (404 included) is stored by URL in the run's SQLite store, so that a re-run reads it from
//! there and spends no rate limit; rate limits are waited out by octocrab's handler (it reads
//! `retry-after` and `x-ratelimit-reset`), server errors retried. The token (`GITHUB_TOKEN`) goes
//! into the `Authorization` header only, never into a log or an output.
//!
//! [`link`] uses these to give a mined candidate its issue, as SPEC 2 says: the numbers its
//! message references, minus those that are pull requests; when none is an issue, the links of
//! the commit's pull request (its title, body and commits).

use etip_core::candidate::{Candidate, IssueLinkKind, IssueRef, LinkedIssue};
use etip_mine_git::links;
use etip_store::Store;
use octocrab::Octocrab;
use octocrab::service::middleware::retry::{NoOpRateLimitMetrics, RetryConfig};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// GitHub's public API.
pub const API: &str = "https://api.github.com";

/// At most this many commits of a pull request are read for links.
pub const PR_COMMITS: usize = 100;

/// Failures of the API (after octocrab's retries).
#[derive(Debug, thiserror::Error)]
pub enum GhError {
    #[error("GitHub API {url}: {detail}")]
    Api { url: String, detail: String },
    #[error("GitHub API client: {0}")]
    Client(String),
    #[error("GitHub API {url}: the answer is not the JSON expected: {detail}")]
    Answer { url: String, detail: String },
    #[error(transparent)]
    Store(#[from] etip_store::StoreError),
}

/// Requests and cache hits of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Calls {
    /// Requests sent.
    pub requests: u64,
    /// Answers read from the store.
    pub cached: u64,
}

/// The API client (see the crate docs).
pub struct GitHub {
    crab: Octocrab,
    rt: tokio::runtime::Handle,
    base: String,
}

impl GitHub {
    /// A client of `base` (default [`API`]; a test server's URL in tests), with `token` if any.
    /// Must be called within the runtime (`rt.enter()`): octocrab starts its worker there.
    pub fn new(
        base: Option<&str>,
        token: Option<String>,
        rt: tokio::runtime::Handle,
    ) -> Result<GitHub, GhError> {
        let base = base.unwrap_or(API).trim_end_matches('/').to_string();
        let _guard = rt.enter();
        let mut b = Octocrab::builder()
            .base_uri(base.as_str())
            .map_err(|e| GhError::Client(format!("base URL {base}: {e}")))?
            .add_retry_config(RetryConfig::HandleRateLimits {
                metrics: Arc::new(NoOpRateLimitMetrics),
                max_retries: 5,
                min_wait_seconds: 60,
                retry_on_forbidden: false,
            })
            .set_connect_timeout(Some(Duration::from_secs(20)))
            .set_read_timeout(Some(Duration::from_secs(60)));
        if let Some(t) = token {
            b = b.personal_token(t);
        }
        let crab = b.build().map_err(|e| GhError::Client(e.to_string()))?;
        Ok(GitHub { crab, rt, base })
    }

    /// The JSON at `route` (`/repos/o/r/issues/1`); `None` for a 404 (also stored).
    pub fn get(
        &self,
        route: &str,
        cache: Option<&Store>,
        calls: &mut Calls,
    ) -> Result<Option<Value>, GhError> {
        let url = format!("{}{route}", self.base);
        let answer = |status: u16, body: &str| -> Result<Option<Value>, GhError> {
            if status == 404 {
                return Ok(None);
            }
            serde_json::from_str(body)
                .map(Some)
                .map_err(|e| GhError::Answer {
                    url: url.clone(),
                    detail: e.to_string(),
                })
        };
        if let Some(store) = cache
            && let Some((status, body)) = store.http_answer(&url)?
        {
            calls.cached += 1;
            return answer(status, &body);
        }
        calls.requests += 1;
        let got: Result<Value, octocrab::Error> =
            self.rt.block_on(self.crab.get::<Value, _, ()>(route, None));
        let (status, body) = match got {
            Ok(v) => (200, v.to_string()),
            Err(octocrab::Error::GitHub { source, .. }) if source.status_code.as_u16() == 404 => {
                (404, String::new())
            }
            Err(e) => {
                return Err(GhError::Api {
                    url,
                    detail: error_text(&e),
                });
            }
        };
        if let Some(store) = cache {
            store.record_http_answer(&url, status, &body)?;
        }
        answer(status, &body)
    }
}

/// octocrab's error in one line, with GitHub's message where there is one.
fn error_text(e: &octocrab::Error) -> String {
    match e {
        octocrab::Error::GitHub { source, .. } => {
            format!("{} {}", source.status_code, source.message)
        }
        other => other.to_string(),
    }
}

/// What [`link`] did over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkCounts {
    pub calls: Calls,
    /// Candidates given an issue.
    pub linked: u64,
    /// Of those, through their pull request.
    pub via_pull_request: u64,
    /// Referenced numbers that are pull requests (moved to `pull_requests`).
    pub pull_request_references: u64,
    /// Referenced numbers GitHub does not know (404): kept as references.
    pub not_found: u64,
    /// Answers that were not the JSON expected (the reference is kept, the lookup recorded as
    /// failed in the log; the run goes on).
    pub malformed: u64,
}

fn issue_of(v: &Value, via: &str) -> Option<LinkedIssue> {
    Some(LinkedIssue {
        number: v.get("number")?.as_u64()?,
        title: v.get("title")?.as_str()?.to_string(),
        body: v
            .get("body")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        labels: v
            .get("labels")
            .and_then(Value::as_array)
            .map(|ls| {
                ls.iter()
                    .filter_map(|l| l.get("name").and_then(Value::as_str).map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        state: v
            .get("state")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string(),
        via: via.to_string(),
    })
}

/// Gives `c` its issue (see the crate docs): the referenced numbers in order, those that are pull
/// requests moved to `pull_requests`; without an issue among them, the commit's pull request
/// (the one merged as this commit, else the first) is read, its number recorded when the message
/// did not name it, and the issues its title, body and commits link are tried, recorded with
/// `via: pull request #N`.
pub fn link(
    c: &mut Candidate,
    gh: &GitHub,
    cache: Option<&Store>,
    counts: &mut LinkCounts,
) -> Result<(), GhError> {
    let Some(repo) = c.repo.clone() else {
        return Ok(());
    };
    let numbers: Vec<(u64, String)> = c
        .issues
        .iter()
        .filter(|i| i.kind != IssueLinkKind::JiraKey)
        .filter_map(|i| {
            let via = i.via.clone().unwrap_or_else(|| "commit message".into());
            i.number.map(|n| (n, via))
        })
        .collect();
    for (n, via) in numbers {
        match try_issue(&repo, n, &via, gh, cache, counts)? {
            Found::Issue(issue) => {
                if c.issue.is_none() {
                    c.issue = Some(issue);
                }
            }
            Found::PullRequest => {
                c.issues.retain(|i| i.number != Some(n));
                if !c.pull_requests.contains(&n) && c.pr_number != Some(n) {
                    c.pull_requests.push(n);
                }
            }
            Found::Nothing => {}
        }
    }
    if c.issue.is_none() {
        link_through_pull_request(c, &repo, gh, cache, counts)?;
    }
    if c.issue.is_some() {
        counts.linked += 1;
    }
    Ok(())
}

enum Found {
    Issue(LinkedIssue),
    PullRequest,
    Nothing,
}

fn try_issue(
    repo: &str,
    n: u64,
    via: &str,
    gh: &GitHub,
    cache: Option<&Store>,
    counts: &mut LinkCounts,
) -> Result<Found, GhError> {
    let route = format!("/repos/{repo}/issues/{n}");
    let got = match gh.get(&route, cache, &mut counts.calls) {
        Err(GhError::Answer { url, detail }) => {
            tracing::warn!("{url}: not the JSON of an issue ({detail})");
            counts.malformed += 1;
            return Ok(Found::Nothing);
        }
        other => other?,
    };
    match got {
        None => {
            counts.not_found += 1;
            Ok(Found::Nothing)
        }
        // The issues API answers for pull requests too, with a `pull_request` member.
        Some(v) if v.get("pull_request").is_some() => {
            counts.pull_request_references += 1;
            Ok(Found::PullRequest)
        }
        Some(v) => Ok(match issue_of(&v, via) {
            Some(i) => Found::Issue(i),
            None => {
                counts.malformed += 1;
                Found::Nothing
            }
        }),
    }
}

fn link_through_pull_request(
    c: &mut Candidate,
    repo: &str,
    gh: &GitHub,
    cache: Option<&Store>,
    counts: &mut LinkCounts,
) -> Result<(), GhError> {
    let route = format!("/repos/{repo}/commits/{}/pulls", c.patched_commit);
    let Some(Value::Array(prs)) = gh.get(&route, cache, &mut counts.calls)? else {
        return Ok(());
    };
    let merged_as_this = prs.iter().find(|p| {
        p.get("merge_commit_sha").and_then(Value::as_str) == Some(c.patched_commit.as_str())
    });
    let Some(pr) = merged_as_this.or(prs.first()) else {
        return Ok(());
    };
    let Some(number) = pr.get("number").and_then(Value::as_u64) else {
        return Ok(());
    };
    if c.pr_number.is_none() {
        c.pr_number = Some(number);
    }
    let via = format!("pull request #{number}");
    let text = format!(
        "{}\n\n{}",
        pr.get("title").and_then(Value::as_str).unwrap_or_default(),
        pr.get("body").and_then(Value::as_str).unwrap_or_default()
    );
    let mut messages = vec![text];
    let commits_route = format!("/repos/{repo}/pulls/{number}/commits?per_page={PR_COMMITS}");
    if let Some(Value::Array(commits)) = gh.get(&commits_route, cache, &mut counts.calls)? {
        messages.extend(commits.iter().filter_map(|k| {
            k.pointer("/commit/message")
                .and_then(Value::as_str)
                .map(str::to_string)
        }));
    }
    for message in messages {
        let found = links::extract(&message, Some(repo));
        for r in found.issues {
            let Some(n) = r.number.filter(|n| *n != number) else {
                continue;
            };
            if c.issues.iter().any(|i| i.number == Some(n)) || c.pull_requests.contains(&n) {
                continue;
            }
            match try_issue(repo, n, &via, gh, cache, counts)? {
                Found::Issue(issue) => {
                    c.issues.push(IssueRef {
                        via: Some(via.clone()),
                        ..r
                    });
                    counts.via_pull_request += 1;
                    c.issue = Some(issue);
                    return Ok(());
                }
                Found::PullRequest => c.pull_requests.push(n),
                Found::Nothing => {}
            }
        }
    }
    Ok(())
}

pub mod search;

/// A merged pull request that contains a candidate's commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedPull {
    pub number: u64,
    /// The commit the merge left on the branch (the merge commit, the squashed commit, or the
    /// last rebased commit).
    pub merge_commit_sha: String,
    /// Its number of commits.
    pub commits: u64,
}

/// The merged pull request containing `c`'s commit (the one merged as this commit first), with
/// its number of commits; `None` when there is none or GitHub does not say.
pub fn merged_pull_request(
    c: &Candidate,
    gh: &GitHub,
    cache: Option<&Store>,
    calls: &mut Calls,
) -> Result<Option<MergedPull>, GhError> {
    let Some(repo) = c.repo.as_deref() else {
        return Ok(None);
    };
    let route = format!("/repos/{repo}/commits/{}/pulls", c.patched_commit);
    let Some(Value::Array(prs)) = gh.get(&route, cache, calls)? else {
        return Ok(None);
    };
    let merged = |p: &&Value| p.get("merged_at").is_some_and(|m| !m.is_null());
    let pick = prs
        .iter()
        .filter(merged)
        .find(|p| {
            p.get("merge_commit_sha").and_then(Value::as_str) == Some(c.patched_commit.as_str())
        })
        .or_else(|| prs.iter().find(merged));
    let Some(number) = pick.and_then(|p| p.get("number")).and_then(Value::as_u64) else {
        return Ok(None);
    };
    let Some(full) = gh.get(&format!("/repos/{repo}/pulls/{number}"), cache, calls)? else {
        return Ok(None);
    };
    let sha = full.get("merge_commit_sha").and_then(Value::as_str);
    let commits = full.get("commits").and_then(Value::as_u64);
    match (full.get("merged").and_then(Value::as_bool), sha, commits) {
        (Some(true), Some(sha), Some(n)) if n > 0 => Ok(Some(MergedPull {
            number,
            merge_commit_sha: sha.to_string(),
            commits: n,
        })),
        _ => Ok(None),
    }
}

/// A bare mirror of `url` in `cache` (`<cache>/<owner>__<name>.git`), cloned the first time and
/// fetched (every branch and tag, pruned) on later runs, with the `git` program (its transports,
/// credentials and proxy settings). A clone lands under a temporary name first and is renamed
/// into place, so a killed clone never leaves a half repository under the real name.
pub fn mirror(
    url: &str,
    cache: &std::path::Path,
    full_name: &str,
) -> Result<std::path::PathBuf, GhError> {
    let git = |args: &[&str], dir: Option<&std::path::Path>| -> Result<(), GhError> {
        let mut cmd = std::process::Command::new("git");
        if let Some(d) = dir {
            cmd.arg("-C").arg(d);
        }
        let out = cmd
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .map_err(|e| GhError::Client(format!("running git: {e}")))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(GhError::Api {
                url: url.to_string(),
                detail: format!(
                    "git {}: {}",
                    args.first().copied().unwrap_or(""),
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            })
        }
    };
    // `owner/name` as one safe file name: `owner__name`.
    let slug: String = full_name
        .replace('/', "__")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let slug = slug.trim_start_matches('.').to_string();
    let dest = cache.join(format!("{slug}.git"));
    std::fs::create_dir_all(cache)
        .map_err(|e| GhError::Client(format!("creating {}: {e}", cache.display())))?;
    if dest.join("HEAD").is_file() {
        git(
            &[
                "fetch",
                "--quiet",
                "--prune",
                "--tags",
                "origin",
                "+refs/heads/*:refs/heads/*",
            ],
            Some(&dest),
        )?;
        return Ok(dest);
    }
    let tmp = cache.join(format!(".{slug}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let tmp_s = tmp.to_string_lossy().into_owned();
    let result = git(&["clone", "--quiet", "--mirror", url, &tmp_s], None);
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, &dest)
        .map_err(|e| GhError::Client(format!("moving the clone to {}: {e}", dest.display())))?;
    Ok(dest)
}
