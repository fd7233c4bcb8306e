//! The pass over mined candidates that needs services (`etip mine local --issues/--classify`,
//! `etip mine github`): each candidate linked to its issue through GitHub; a commit of a pull
//! request merged by rebase replaced by the whole pull request, checked against the rules as one
//! change (dropped when the whole fails one); then classified from its issue, else its commit
//! message (by the LLM when given one). The candidates file is rewritten atomically.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::Context;
use etip_core::candidate::Candidate;
use etip_mine_git::{Decision, MineConfig};

use crate::progress::{Phase, PhaseProgress as Progress};
use crate::services::{GitHub, Llm, LlmUse};

/// What the pass may use.
pub(crate) struct Services<'a> {
    /// The mining run (its repository, for pull request ranges).
    pub(crate) cfg: &'a MineConfig,
    pub(crate) github: Option<&'a GitHub>,
    pub(crate) llm: Option<&'a Llm>,
    pub(crate) classify: bool,
}

/// What the pass did.
#[derive(Debug, Clone)]
pub struct PostProcessed {
    /// Candidates per answer (`yes`, `no`, `unclassified`) among those written.
    pub answers: BTreeMap<String, u64>,
    /// What linking found and cost, when GitHub was asked.
    pub links: Option<etip_github::LinkCounts>,
    /// Candidates replaced by their rebase-merged pull request.
    pub replaced: u64,
    /// Candidates dropped because their whole pull request fails a rule.
    pub dropped: u64,
    /// The LLM's requests, cache hits and tokens.
    pub usage: etip_llm::Usage,
}

/// Links, replaces and classifies the candidates of `out` (phase [`Phase::Candidates`]) and
/// rewrites it; the LLM's use is noted when one answered.
pub(crate) fn post_process(
    out: &Path,
    s: &Services,
    progress: &mut dyn Progress,
) -> anyhow::Result<PostProcessed> {
    let text =
        std::fs::read_to_string(out).with_context(|| format!("reading {}", out.display()))?;
    let mut done = PostProcessed {
        answers: BTreeMap::new(),
        links: s.github.map(|_| etip_github::LinkCounts::default()),
        replaced: 0,
        dropped: 0,
        usage: etip_llm::Usage::default(),
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    progress.start(Phase::Candidates, lines.len() as u64, 0);
    let mut kept: Vec<Candidate> = Vec::with_capacity(lines.len());
    // Index of the kept candidate of each diff (a pull request's commits all become its range).
    let mut by_hash: HashMap<String, usize> = HashMap::new();
    for line in lines {
        progress.advance(Phase::Candidates, 1);
        let mut c: Candidate = serde_json::from_str(line)
            .with_context(|| format!("reading a candidate of {}", out.display()))?;
        if let (Some((gh, cache)), Some(counts)) = (s.github, done.links.as_mut()) {
            match whole_pull_request(c, s.cfg, gh, cache, counts)? {
                Some((whole, replaced)) => {
                    c = whole;
                    done.replaced += u64::from(replaced);
                }
                None => {
                    done.dropped += 1;
                    continue;
                }
            }
            etip_github::link(&mut c, gh, Some(cache), counts)?;
        }
        if let Some(&first) = by_hash.get(&c.diff_hash) {
            let k = &mut kept[first];
            for sha in std::iter::once(c.patched_commit).chain(c.duplicates) {
                if sha != k.patched_commit && !k.duplicates.contains(&sha) {
                    k.duplicates.push(sha);
                }
            }
            continue;
        }
        if s.classify {
            classify(&mut c, s.llm, &mut done.usage)?;
        }
        by_hash.insert(c.diff_hash.clone(), kept.len());
        kept.push(c);
    }
    progress.end(Phase::Candidates);
    let mut written = String::with_capacity(text.len());
    for c in &kept {
        if let Some(v) = &c.classification {
            *done.answers.entry(v.answer.clone()).or_default() += 1;
        }
        written.push_str(&serde_json::to_string(c)?);
        written.push('\n');
    }
    crate::output::write(out, &written)?;
    if let Some(llm) = s.llm {
        progress.note(&LlmUse::of(llm, done.usage).line());
    }
    Ok(done)
}

/// `c`, or the pull request merged by rebase that its commit belongs to, as one candidate (with
/// `true`: replaced); `None` when the whole pull request fails a rule.
fn whole_pull_request(
    c: Candidate,
    cfg: &MineConfig,
    gh: &etip_github::GitHub,
    cache: &etip_store::Store,
    counts: &mut etip_github::LinkCounts,
) -> anyhow::Result<Option<(Candidate, bool)>> {
    let Some(pr) = etip_github::merged_pull_request(&c, gh, Some(cache), &mut counts.calls)? else {
        return Ok(Some((c, false)));
    };
    // One commit, or a merge commit: the candidate already is the whole pull request.
    if pr.commits < 2 {
        return Ok(Some((c, false)));
    }
    let Some((base, commits)) =
        etip_mine_git::rebased_range(cfg, &pr.merge_commit_sha, pr.commits as usize)?
    else {
        return Ok(Some((c, false)));
    };
    if !commits.contains(&c.patched_commit)
        || (base == c.base_commit && pr.merge_commit_sha == c.patched_commit)
    {
        return Ok(Some((c, false)));
    }
    match etip_mine_git::evaluate_range(cfg, &base, &pr.merge_commit_sha)? {
        Decision::Kept(mut whole) => {
            whole.replaces = commits;
            whole.pr_number = Some(pr.number);
            // The verdict of the range's own message (the last commit's) comes with `classify`.
            whole.classification = None;
            Ok(Some((*whole, true)))
        }
        Decision::Rejected { reason, detail } => {
            tracing::info!(
                "{}: pull request #{} as a whole is rejected ({}: {detail})",
                c.patched_commit,
                pr.number,
                reason.as_str()
            );
            Ok(None)
        }
    }
}

/// Classifies `c` from its issue when it has one, else from its commit message: by the LLM when
/// given one, else the offline rules (whose verdict on the message the miner already recorded).
fn classify(
    c: &mut Candidate,
    llm: Option<&Llm>,
    usage: &mut etip_llm::Usage,
) -> anyhow::Result<()> {
    let labels = c
        .issue
        .as_ref()
        .map(|i| i.labels.clone())
        .unwrap_or_default();
    let (text, read) = match &c.issue {
        Some(i) => (
            etip_classify::IssueText {
                title: &i.title,
                body: &i.body,
                labels: &labels,
                commit_message: &c.message,
            },
            format!("issue #{}", i.number),
        ),
        None => (
            etip_classify::commit_text(&c.message),
            "commit message".to_string(),
        ),
    };
    let verdict = match llm {
        Some((classifier, cache)) => {
            Some(classifier.classify(&text, c.repo.as_deref(), Some(cache), usage)?)
        }
        None if c.issue.is_some() || c.classification.is_none() => {
            Some(etip_classify::Offline.classify(&text))
        }
        None => None,
    };
    if let Some(v) = verdict {
        c.classification = Some(v.record(&read));
    }
    Ok(())
}
