//! The ETIP candidate record: one line of `candidates.jsonl`, written by `etip mine` and read by
//! `etip build`.
//!
//! The schema is documented field by field in `docs/schemas/candidates.md` and versioned by
//! [`SCHEMA_VERSION`]: adding an optional field keeps the version, renaming, removing or changing the
//! meaning of a field bumps it.
//!
//! ```
//! use etip_core::candidate::{Candidate, SCHEMA_VERSION};
//! let line = r#"{"schema_version":1,"id":"demo-0123456789ab","repo":null,"source":"/tmp/demo",
//!   "language":"java","base_commit":"a","patched_commit":"b","pr_number":null,"issues":[],
//!   "message":"m","author_date":"2024-01-01T00:00:00Z","changed_files":[],"changed_modules":[],
//!   "changed_functions":[],"diff_stats":{"files":0,"insertions":0,"deletions":0},
//!   "diff_hash":"h","duplicates":[]}"#;
//! let c: Candidate = serde_json::from_str(&line.replace('\n', "")).unwrap();
//! assert_eq!(c.schema_version, SCHEMA_VERSION);
//! ```

use serde::{Deserialize, Serialize};

/// Version of the candidate JSONL schema written by this build.
pub const SCHEMA_VERSION: u32 = 1;

pub use crate::language::Language;

/// How an issue reference was found in a commit message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueLinkKind {
    /// After a closing keyword (`fixes #12`, `closes: GH-3, #4`, `resolves https://.../issues/5`).
    ClosingKeyword,
    /// A bare `#N` (or `GH-N`) anywhere in the message: a weaker link.
    BareReference,
    /// A full issue URL of the same repository outside a closing-keyword phrase.
    Url,
    /// A JIRA-style key (`NETTY-123`); never mapped to a GitHub issue number.
    JiraKey,
}

/// One issue reference found in a commit message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueRef {
    /// How it was linked.
    pub kind: IssueLinkKind,
    /// GitHub issue number (every kind except `jira_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    /// JIRA key such as `NETTY-123` (kind `jira_key` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The text that matched, as it appears in the message.
    pub text: String,
    /// Where the reference was found when not in the commit's own message: `merged branch
    /// <name>` or `merged commit <sha12>` (a merge commit takes its merged branch's links).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// Size of a candidate's diff (base → patched).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffStats {
    /// Changed files.
    pub files: u32,
    /// Added lines.
    pub insertions: u32,
    /// Removed lines.
    pub deletions: u32,
}

/// One mined ETIP candidate (one JSONL line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// Always [`SCHEMA_VERSION`] for records written by this build.
    pub schema_version: u32,
    /// Stable identifier: `<owner>__<name>-<sha12>`, or `<directory name>-<sha12>` without a known remote.
    pub id: String,
    /// `owner/name` when known (remote URL or `--repo-name`), else null.
    pub repo: Option<String>,
    /// Path or URL the history was read from.
    pub source: String,
    /// Language profile used to mine.
    pub language: Language,
    /// Full SHA of the original version (first parent of the patched commit).
    pub base_commit: String,
    /// Full SHA of the patched commit.
    pub patched_commit: String,
    /// Pull request number (squash `(#N)` suffix or `Merge pull request #N`), else null.
    pub pr_number: Option<u64>,
    /// Issue references found in the commit message (for a merge commit without any: in its
    /// merged branch's name and commits, see [`IssueRef::via`]).
    pub issues: Vec<IssueRef>,
    /// Other pull requests the message names (`Revert "…" … pull request #N`, `based on PR #N`):
    /// never issues.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pull_requests: Vec<u64>,
    /// Full commit message.
    pub message: String,
    /// Author date, RFC 3339 with the author's UTC offset.
    pub author_date: String,
    /// Changed file paths of the code change (repository-relative, sorted): source files, and
    /// compiled-extension sources when the run accepts them.
    pub changed_files: Vec<String>,
    /// Changed files set aside by the path rule (documentation, changelogs, repository metadata,
    /// configured globs), sorted: not part of the code change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored_files: Vec<String>,
    /// The compiled-extension sources and build descriptors among `changed_files` (Cython, C/C++,
    /// `meson.build`; opt-in): the image must compile the project's extensions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extension_files: Vec<String>,
    /// Changed modules (Maven: nearest ancestor directory holding `pom.xml`, `.` for the root;
    /// Python: top-level package), sorted.
    pub changed_modules: Vec<String>,
    /// Qualified names of changed methods/functions/initialisers, sorted.
    pub changed_functions: Vec<String>,
    /// Diff size.
    pub diff_stats: DiffStats,
    /// SHA-256 (hex) of the normalised diff, used for de-duplication.
    pub diff_hash: String,
    /// Later commits (patched SHAs) whose normalised diff is identical to this one.
    pub duplicates: Vec<String>,
    /// The commits of a pull request merged by rebase that this candidate stands for as a whole
    /// (`etip mine local --issues`): each was mined on its own first; the candidate is the range
    /// from the pull request's base to its last commit, checked against the rules as one change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    /// The issue the candidate fixes, as GitHub has it (`etip mine local --issues`): the first
    /// referenced number that is an issue, else one its pull request links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<LinkedIssue>,
    /// Whether the candidate is about execution time, as a classifier read it (`etip mine local
    /// --classify`: the issue with the commit message, else the commit message alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<Classified>,
}

/// An issue as GitHub has it, linked to a candidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkedIssue {
    pub number: u64,
    pub title: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub labels: Vec<String>,
    /// `open` or `closed`.
    pub state: String,
    /// How it was found: `commit message`, `merged branch …`/`merged commit …`, or `pull request
    /// #N` (the commit's pull request links it).
    pub via: String,
}

/// A classifier's verdict on a candidate: is its issue (or commit message) about execution time?
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classified {
    /// The classifier's name and version (`offline-rules-2`, or the LLM's model).
    pub classifier: String,
    /// `yes`, `no` or `unclassified`.
    pub answer: String,
    /// What it read: `commit message`, or `issue #N` with the commit message.
    pub read: String,
    /// The rules that matched, as `topic in field: "phrase" (+weight)`; empty for an LLM.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// Why there is no answer, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
