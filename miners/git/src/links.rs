//! Issue and pull-request references in commit messages (SPEC 2, "Issue linking").
//!
//! * A closing keyword (`fix|fixes|fixed|close|closes|closed|resolve|resolves|resolved|address|addresses|
//!   addressed`, optionally followed by `:` or `-`) starts a list of references joined by `,`, `and`,
//!   `&`, `or`, `|`. A reference is `#N`, `GH-N`, `issue #N`, `bug #N`, `owner/repo#N` (same repository
//!   only) or a full issue URL of the same repository. These are [`IssueLinkKind::ClosingKeyword`].
//! * Elsewhere, a bare `#N`, `GH-N` or same-repository `owner/repo#N` is a
//!   [`IssueLinkKind::BareReference`], and a same-repository issue URL an [`IssueLinkKind::Url`].
//! * An upper-case JIRA key `KEY-N` is recorded as [`IssueLinkKind::JiraKey`] with its key, never as a
//!   GitHub number. Tokens that only look like keys (`UTF-8`, `ISO-8859-1`, `SHA-256`, `TLS-1`, …) are
//!   not keys: a stop list of standard/encoding prefixes, and a key followed by `-digit` or `.digit`
//!   is a version, not a key.
//! * The pull request of the commit — `Merge pull request #N from …` or a subject ending in `(#N)` —
//!   is the PR number, and that number is never an issue.
//! * A number the message names as a pull request — `pull request #N`, `PR #N`, `PR N`, a
//!   same-repository `/pull/N` URL (`Revert "…" … pull request #1885`, `based on PR #1652`) — is a
//!   referenced pull request ([`Links::pull_requests`]), never an issue, wherever else it appears.
//! * Without a known repository (`owner/name`), cross-repository forms and URLs cannot be checked to be
//!   the same repository and are ignored.
//! * A key-like token is a link only when the project uses JIRA with that prefix
//!   ([`jira_projects`]: at least [`JIRA_MIN_KEYS`] distinct keys of the prefix open a commit
//!   subject in the history, as `HADOOP-123.` or `[NETTY-45]` do), or the prefix is configured;
//!   [`Links::keep_jira`] drops the others (`JDK-8`, `ORA-01000`, `CVE-2021`, a bug id of
//!   another project's tracker mentioned in passing).
//! * A merge commit whose own message links no issue takes the links of the merged branch: its
//!   name (`fix-2297`, `issue_12`, `gh-7`) and its commits' messages ([`Links::adopt_merged`]),
//!   each marked with where it came from.

use std::sync::LazyLock;

use etip_core::candidate::{IssueLinkKind, IssueRef};
use regex::Regex;

static KEYWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:fix|fixes|fixed|close|closes|closed|resolve|resolves|resolved|address|addresses|addressed)\b[ \t]*[:\-]?[ \t]*",
    )
    .expect("static regex")
});

const REF: &str = r"(?:(?P<url>https?://github\.com/(?P<uo>[\w.-]+)/(?P<ur>[\w.-]+)/issues/(?P<un>\d+))|(?P<cross>(?P<co>[\w.-]+)/(?P<cr>[\w.-]+)#(?P<cn>\d+))|(?:(?:issue|bug)[ \t]*)?#(?P<hn>\d+)|gh-(?P<gn>\d+))";

static REF_AT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"(?i)\A{REF}\b")).expect("static regex"));

static JOINER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\A[ \t]*(?:,|\band\b|&|\bor\b|\|)[ \t]*").expect("static regex")
});

static ANY_REF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"(?i){REF}\b")).expect("static regex"));

static JIRA: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b([A-Z][A-Z0-9]+)-([0-9]+)\b").expect("static regex"));

static PR_REF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:\b(?:pull[ \t]+request|pr)[ \t]*#?(?P<n>\d+)\b|https?://github\.com/(?P<o>[\w.-]+)/(?P<r>[\w.-]+)/pull/(?P<u>\d+)\b)",
    )
    .expect("static regex")
});

static MERGE_PR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\AMerge pull request #(\d+)\b").expect("static regex"));

static SQUASH_PR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\(#(\d+)\)[ \t]*\z").expect("static regex"));

/// Prefixes that look like JIRA keys but name standards, encodings or algorithms.
const NOT_JIRA: &[&str] = &[
    "UTF", "UCS", "ISO", "SHA", "MD", "CRC", "HTTP", "HTTPS", "TLS", "SSL", "DTLS", "RFC", "CVE",
    "AES", "RSA", "DES", "ECMA", "IEEE", "ASCII", "ANSI", "WIN", "JSR", "IPV", "GH", "X", "UTC",
    "GMT", "PKCS",
];

/// How many distinct keys of a prefix must open commit subjects for the prefix to count as the
/// project's JIRA ([`jira_projects`]).
pub const JIRA_MIN_KEYS: usize = 3;

static SUBJECT_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\A[ \t]*\[?([A-Z][A-Z0-9]+)-([0-9]+)\b(?:\]|[ \t]*[:.,\-]|[ \t]|\z)")
        .expect("static regex")
});

/// The key opening a commit subject (`HADOOP-123. Fix`, `[NETTY-45] Speed up`, `KAFKA-7: x`):
/// (prefix, number).
pub fn subject_key(subject: &str) -> Option<(&str, u64)> {
    let c = SUBJECT_KEY.captures(subject)?;
    let prefix = c.get(1)?.as_str();
    if NOT_JIRA.contains(&prefix) {
        return None;
    }
    Some((prefix, c.get(2)?.as_str().parse().ok()?))
}

/// The JIRA prefixes a history uses, with their number of distinct keys: the prefixes of which
/// at least [`JIRA_MIN_KEYS`] distinct keys open commit subjects ([`subject_key`]).
pub fn jira_projects<'a>(
    subjects: impl IntoIterator<Item = &'a str>,
) -> std::collections::BTreeMap<String, usize> {
    let mut seen: std::collections::BTreeMap<String, std::collections::BTreeSet<u64>> =
        std::collections::BTreeMap::new();
    for s in subjects {
        if let Some((prefix, n)) = subject_key(s) {
            seen.entry(prefix.to_string()).or_default().insert(n);
        }
    }
    seen.into_iter()
        .map(|(p, keys)| (p, keys.len()))
        .filter(|(_, n)| *n >= JIRA_MIN_KEYS)
        .collect()
}

static BRANCH_OF_MERGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\AMerge (?:pull request #\d+ from (?P<pr>\S+)|(?:remote-tracking )?branch '(?P<b>[^']+)')")
        .expect("static regex")
});

static BRANCH_ISSUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:\A|[/_\-])(?:issues?|gh|bug|fix|fixes|closes)[/_\-]?#?(\d+)(?:\z|[/_\-])")
        .expect("static regex")
});

/// The merged branch's name in a merge commit's subject (`Merge pull request #7 from
/// owner/fix-12` gives `owner/fix-12`, `Merge branch 'issue-3' into main` gives `issue-3`).
pub fn merged_branch(subject: &str) -> Option<&str> {
    let c = BRANCH_OF_MERGE.captures(subject)?;
    c.name("pr").or_else(|| c.name("b")).map(|m| m.as_str())
}

/// The issue number a branch name carries (`fix-2297`, `issue_12`, `owner/gh-7-speed`), if any.
pub fn branch_issue(branch: &str) -> Option<u64> {
    BRANCH_ISSUE.captures(branch)?.get(1)?.as_str().parse().ok()
}

/// References found in one message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    /// Pull request number of the commit, if the message names it.
    pub pr_number: Option<u64>,
    /// Issue references, strongest first (closing keyword, URL, bare reference), then JIRA keys.
    pub issues: Vec<IssueRef>,
    /// Other pull requests the message names (`pull request #N`, `PR #N`, `/pull/N`), in order.
    pub pull_requests: Vec<u64>,
}

impl Links {
    /// Drops the JIRA keys whose prefix is not one of `projects` (the project's JIRA prefixes:
    /// [`jira_projects`] and the configured ones).
    pub fn keep_jira(&mut self, projects: &[String]) {
        self.issues.retain(|i| {
            i.kind != IssueLinkKind::JiraKey
                || i.key
                    .as_deref()
                    .and_then(|k| k.split_once('-'))
                    .is_some_and(|(p, _)| projects.iter().any(|q| q == p))
        });
    }

    /// For a merge commit whose message links no issue: the issues of the merged branch, from its
    /// name (`branch`) and then its commits' messages (`commits`: `(sha, message)`, newest first),
    /// each marked `via` where it was found. Pull requests and the merge's own PR stay excluded.
    pub fn adopt_merged(
        &mut self,
        branch: Option<&str>,
        commits: &[(String, String)],
        repo: Option<&str>,
        jira: &[String],
    ) {
        if !self.issues.is_empty() {
            return;
        }
        let excluded = |n: u64, l: &Links| Some(n) == l.pr_number || l.pull_requests.contains(&n);
        let mut adopted: Vec<IssueRef> = Vec::new();
        let push = |r: IssueRef, adopted: &mut Vec<IssueRef>| {
            let dup = adopted
                .iter()
                .any(|a| a.number == r.number && a.key == r.key);
            if !dup {
                adopted.push(r);
            }
        };
        if let Some(b) = branch
            && let Some(n) = branch_issue(b)
            && !excluded(n, self)
        {
            push(
                IssueRef {
                    kind: IssueLinkKind::BareReference,
                    number: Some(n),
                    key: None,
                    text: b.to_string(),
                    via: Some(format!("merged branch {b}")),
                },
                &mut adopted,
            );
        }
        for (sha, message) in commits {
            let mut inner = extract(message, repo);
            inner.keep_jira(jira);
            // Only pull requests the text names: an inner commit's own PR number (`Merge pull
            // request #3 from …` inside the branch) is often one of the fork's.
            for n in &inner.pull_requests {
                if !self.pull_requests.contains(n) && Some(*n) != self.pr_number {
                    self.pull_requests.push(*n);
                }
            }
            for mut r in inner.issues {
                if r.number.is_some_and(|n| excluded(n, self)) {
                    continue;
                }
                r.via = Some(format!("merged commit {}", &sha[..sha.len().min(12)]));
                push(r, &mut adopted);
            }
        }
        self.issues = adopted;
    }
}

struct Found {
    rank: u8,
    pos: usize,
    kind: IssueLinkKind,
    number: u64,
    text: String,
}

/// Extracts the PR number and issue references of a commit message. `repo` is `owner/name` when
/// known (for same-repository checks).
pub fn extract(message: &str, repo: Option<&str>) -> Links {
    let subject = message.lines().next().unwrap_or("");
    let pr_number = MERGE_PR
        .captures(subject)
        .or_else(|| SQUASH_PR.captures(subject))
        .and_then(|c| c[1].parse().ok());

    let same_repo = |owner: &str, name: &str| {
        let name = name.strip_suffix(".git").unwrap_or(name);
        repo.is_some_and(|r| r.eq_ignore_ascii_case(&format!("{owner}/{name}")))
    };
    // Number of a reference match, or None when it points to another (or an unknown) repository.
    let number_of = |c: &regex::Captures| -> Option<(u64, bool)> {
        if c.name("url").is_some() {
            if !same_repo(&c["uo"], &c["ur"]) {
                return None;
            }
            return c["un"].parse().ok().map(|n| (n, true));
        }
        if c.name("cross").is_some() {
            if !same_repo(&c["co"], &c["cr"]) {
                return None;
            }
            return c["cn"].parse().ok().map(|n| (n, false));
        }
        c.name("hn")
            .or_else(|| c.name("gn"))
            .and_then(|m| m.as_str().parse().ok())
            .map(|n| (n, false))
    };

    let mut found: Vec<Found> = Vec::new();
    let mut consumed: Vec<(usize, usize)> = Vec::new();
    for kw in KEYWORD.find_iter(message) {
        let mut at = kw.end();
        let mut first = true;
        loop {
            let rest = &message[at..];
            let (skip, rest) = if first {
                (0, rest)
            } else {
                match JOINER.find(rest) {
                    Some(j) => (j.end(), &rest[j.end()..]),
                    None => break,
                }
            };
            let Some(c) = REF_AT.captures(rest) else {
                break;
            };
            let whole = c.get(0).expect("group 0 always exists");
            let start = at + skip;
            let end = start + whole.end();
            if let Some((number, _)) = number_of(&c) {
                found.push(Found {
                    rank: 0,
                    pos: start,
                    kind: IssueLinkKind::ClosingKeyword,
                    number,
                    text: message[kw.start()..end].trim_end().to_string(),
                });
            }
            consumed.push((start, end));
            at = end;
            first = false;
        }
    }
    for c in ANY_REF.captures_iter(message) {
        let m = c.get(0).expect("group 0 always exists");
        if consumed.iter().any(|(s, e)| m.start() < *e && *s < m.end()) {
            continue;
        }
        // `#N` glued to a word or path (`a#1`, `pull/3#4`) is not a reference.
        if c.name("hn").is_some() && c.name("cross").is_none() {
            let before = message[..m.start()].chars().next_back();
            if before.is_some_and(|ch| ch.is_alphanumeric() || ch == '/' || ch == '&') {
                continue;
            }
        }
        if let Some((number, is_url)) = number_of(&c) {
            found.push(Found {
                rank: if is_url { 1 } else { 2 },
                pos: m.start(),
                kind: if is_url {
                    IssueLinkKind::Url
                } else {
                    IssueLinkKind::BareReference
                },
                number,
                text: m.as_str().to_string(),
            });
        }
    }
    let mut pull_requests: Vec<u64> = Vec::new();
    for c in PR_REF.captures_iter(message) {
        let number = match (c.name("n"), c.name("u")) {
            (Some(n), _) => n.as_str().parse().ok(),
            (None, Some(u)) if same_repo(&c["o"], &c["r"]) => u.as_str().parse().ok(),
            _ => None,
        };
        if let Some(n) = number
            && Some(n) != pr_number
            && !pull_requests.contains(&n)
        {
            pull_requests.push(n);
        }
    }
    found.retain(|f| Some(f.number) != pr_number && !pull_requests.contains(&f.number));
    found.sort_by_key(|f| (f.rank, f.pos));
    let mut seen = std::collections::HashSet::new();
    let mut issues: Vec<IssueRef> = found
        .into_iter()
        .filter(|f| seen.insert(f.number))
        .map(|f| IssueRef {
            kind: f.kind,
            number: Some(f.number),
            key: None,
            text: f.text,
            via: None,
        })
        .collect();

    let mut keys = std::collections::HashSet::new();
    for c in JIRA.captures_iter(message) {
        let m = c.get(0).expect("group 0 always exists");
        let prefix = &c[1];
        if NOT_JIRA.contains(&prefix) {
            continue;
        }
        let before = message[..m.start()].chars().next_back();
        if before.is_some_and(|ch| ch == '-' || ch == '.' || ch == '/') {
            continue;
        }
        let after = &message[m.end()..];
        let mut chars = after.chars();
        if let (Some(a), Some(b)) = (chars.next(), chars.next())
            && (a == '-' || a == '.')
            && b.is_ascii_digit()
        {
            continue;
        }
        if keys.insert(m.as_str().to_string()) {
            issues.push(IssueRef {
                kind: IssueLinkKind::JiraKey,
                number: None,
                key: Some(m.as_str().to_string()),
                text: m.as_str().to_string(),
                via: None,
            });
        }
    }
    Links {
        pr_number,
        issues,
        pull_requests,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nums(l: &Links) -> Vec<(IssueLinkKind, Option<u64>, Option<String>)> {
        l.issues
            .iter()
            .map(|i| (i.kind, i.number, i.key.clone()))
            .collect()
    }

    const R: Option<&str> = Some("netty/netty");

    #[test]
    fn closing_keyword_lists() {
        let l = extract(
            "Speed up X\n\nFixes: #12, #13 and GH-14 & issue #15 | bug #16",
            R,
        );
        let got: Vec<u64> = l.issues.iter().filter_map(|i| i.number).collect();
        assert_eq!(got, vec![12, 13, 14, 15, 16]);
        assert!(
            l.issues
                .iter()
                .all(|i| i.kind == IssueLinkKind::ClosingKeyword)
        );
        assert_eq!(l.issues[0].text, "Fixes: #12");
    }

    #[test]
    fn same_repository_only() {
        let l = extract(
            "resolves netty/netty#7 closes other/repo#8 fixes https://github.com/netty/netty/issues/9",
            R,
        );
        assert_eq!(
            nums(&l),
            vec![
                (IssueLinkKind::ClosingKeyword, Some(7), None),
                (IssueLinkKind::ClosingKeyword, Some(9), None)
            ]
        );
        let unknown = extract("fixes https://github.com/netty/netty/issues/9", None);
        assert!(unknown.issues.is_empty());
    }

    #[test]
    fn bare_and_url() {
        let l = extract(
            "Faster decode (see #42)\n\nhttps://github.com/netty/netty/issues/43 and https://github.com/netty/netty/pull/44",
            R,
        );
        assert_eq!(
            nums(&l),
            vec![
                (IssueLinkKind::Url, Some(43), None),
                (IssueLinkKind::BareReference, Some(42), None)
            ]
        );
    }

    #[test]
    fn jira_keys_are_not_github_numbers() {
        let l = extract(
            "NETTY-123: use UTF-8 and ISO-8859-1, SHA-256; works on Java-17 and JDK-8",
            R,
        );
        assert_eq!(
            nums(&l),
            vec![
                (IssueLinkKind::JiraKey, None, Some("NETTY-123".into())),
                (IssueLinkKind::JiraKey, None, Some("JDK-8".into()))
            ]
        );
        assert!(l.issues.iter().all(|i| i.number.is_none()));
        // Only the project's prefixes are links: JDK-8 is another tracker's, or a version.
        let mut kept = l.clone();
        kept.keep_jira(&["NETTY".into()]);
        assert_eq!(
            nums(&kept),
            vec![(IssueLinkKind::JiraKey, None, Some("NETTY-123".into()))]
        );
        let mut none = extract("Close cursors (ORA-01000) on JDK-8", R);
        none.keep_jira(&[]);
        assert!(none.issues.is_empty(), "{none:?}");
    }

    /// A prefix is the project's JIRA when three distinct keys of it open commit subjects.
    #[test]
    fn jira_projects_come_from_subjects() {
        let subjects = [
            "HADOOP-1. Faster reads",
            "[HADOOP-2] Fewer copies",
            "HADOOP-3: cache the codec",
            "HADOOP-3: follow-up",
            "JDK-8 workaround for JDK-8180450",
            "JDK-8180450 again",
            "MNG-1 one",
            "MNG-2 two",
            "UTF-8 everywhere",
            "Use UTF-8 in HADOOP-4",
        ];
        let found = jira_projects(subjects);
        assert_eq!(
            found.into_iter().collect::<Vec<_>>(),
            vec![("HADOOP".to_string(), 3)]
        );
        assert_eq!(subject_key("KAFKA-7: x"), Some(("KAFKA", 7)));
        assert_eq!(subject_key("UTF-8 fix"), None);
        assert_eq!(subject_key("Fix KAFKA-7"), None);
    }

    #[test]
    fn branch_names_of_merges() {
        assert_eq!(
            merged_branch("Merge pull request #2300 from user/fix-2297"),
            Some("user/fix-2297")
        );
        assert_eq!(
            merged_branch("Merge branch 'issue_12' into main"),
            Some("issue_12")
        );
        assert_eq!(merged_branch("Speed up X"), None);
        for (branch, n) in [
            ("user/fix-2297", Some(2297)),
            ("issue_12", Some(12)),
            ("o/gh-7-speed", Some(7)),
            ("issues/45", Some(45)),
            ("release-2", None),
            ("v2", None),
            ("o/prefix2297", None),
        ] {
            assert_eq!(branch_issue(branch), n, "{branch}");
        }
    }

    /// A merge commit that links no issue takes the merged branch's links, marked with where
    /// they came from; pull requests named there stay pull requests.
    #[test]
    fn merges_take_their_branch_links() {
        let mut l = extract(
            "Merge pull request #2300 from user/speedup\n\nSpeed up the cache",
            R,
        );
        assert!(l.issues.is_empty());
        let commits = [
            (
                "1111111111111111111111111111111111111111".to_string(),
                "Speed up the cache\n\nFixes #2297, see PR #1652 and #2300".to_string(),
            ),
            (
                "2222222222222222222222222222222222222222".to_string(),
                "NETTY-9 and JDK-8: also #2297".to_string(),
            ),
        ];
        let mut commits = commits.to_vec();
        commits.push((
            "3333333333333333333333333333333333333333".to_string(),
            "Merge pull request #3 from fork/x\n\nin the fork".to_string(),
        ));
        l.adopt_merged(Some("user/speedup"), &commits, R, &["NETTY".into()]);
        assert_eq!(
            nums(&l),
            vec![
                (IssueLinkKind::ClosingKeyword, Some(2297), None),
                (IssueLinkKind::JiraKey, None, Some("NETTY-9".into())),
            ]
        );
        assert_eq!(
            l.issues[0].via.as_deref(),
            Some("merged commit 111111111111")
        );
        assert_eq!(l.pr_number, Some(2300));
        assert_eq!(
            l.pull_requests,
            vec![1652],
            "the fork's own PR #3 is not this repository's"
        );
        // The branch name comes first; a merge that links an issue itself keeps only its own.
        let mut b = extract("Merge pull request #8 from o/fix-7", R);
        b.adopt_merged(Some("o/fix-7"), &[], R, &[]);
        assert_eq!(
            nums(&b),
            vec![(IssueLinkKind::BareReference, Some(7), None)]
        );
        assert_eq!(b.issues[0].via.as_deref(), Some("merged branch o/fix-7"));
        let mut own = extract("Merge pull request #8 from o/fix-7\n\nFixes #3", R);
        own.adopt_merged(Some("o/fix-7"), &commits, R, &[]);
        assert_eq!(
            nums(&own),
            vec![(IssueLinkKind::ClosingKeyword, Some(3), None)]
        );
    }

    #[test]
    fn pull_requests() {
        let squash = extract("Avoid copies in Foo (#77)\n\nFixes #70", R);
        assert_eq!(squash.pr_number, Some(77));
        assert_eq!(
            nums(&squash),
            vec![(IssueLinkKind::ClosingKeyword, Some(70), None)]
        );
        let merge = extract("Merge pull request #5 from a/b\n\nFaster #5 and #6", R);
        assert_eq!(merge.pr_number, Some(5));
        assert_eq!(
            nums(&merge),
            vec![(IssueLinkKind::BareReference, Some(6), None)]
        );
    }

    #[test]
    fn numbers_named_as_pull_requests_are_not_issues() {
        let revert = extract(
            "Revert \"Faster X\"\n\nThis reverts pull request #1885; see #1880",
            R,
        );
        assert_eq!(revert.pull_requests, vec![1885]);
        assert_eq!(
            nums(&revert),
            vec![(IssueLinkKind::BareReference, Some(1880), None)]
        );
        let based = extract(
            "Faster Y, based on PR #1652 and pr 1653 (https://github.com/netty/netty/pull/1654)\n\nFixes #1650",
            R,
        );
        assert_eq!(based.pull_requests, vec![1652, 1653, 1654]);
        assert_eq!(
            nums(&based),
            vec![(IssueLinkKind::ClosingKeyword, Some(1650), None)]
        );
        // Named as a pull request anywhere: not an issue anywhere.
        let both = extract("Fixes #9 (PR #9 was reverted)", R);
        assert!(both.issues.is_empty(), "{both:?}");
        // Words that merely contain `pr` are not pull request references.
        let words = extract("Improve #12 and express #13", R);
        assert!(words.pull_requests.is_empty());
        assert_eq!(words.issues.len(), 2);
        // The commit's own PR is `pr_number`, not listed again.
        let squash = extract("Faster Z (#77)\n\nFollow-up to PR #76", R);
        assert_eq!(
            (squash.pr_number, squash.pull_requests),
            (Some(77), vec![76])
        );
    }

    #[test]
    fn strongest_kind_wins_and_glued_hashes_ignored() {
        let l = extract("see #3, a#4, x/#5\n\nFixes #3", R);
        assert_eq!(
            nums(&l),
            vec![(IssueLinkKind::ClosingKeyword, Some(3), None)]
        );
    }
}
