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
