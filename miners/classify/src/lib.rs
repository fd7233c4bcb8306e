//! Is an issue about execution time? SPEC 2 keeps a mined commit only when the issue it links is
//! about the execution time of the project's code. This crate holds the offline classifier that
//! answers without any service: transparent rules ([`rules`]) over the issue's title, body and
//! labels and the commit message, each match recorded as evidence, so that a researcher can see
//! why a thread was kept and re-label a data set.
//!
//! The rules separate execution time from what reads like it but is not: memory (leaks,
//! footprint), hangs and deadlocks, flaky tests, the speed of builds, test suites and installs,
//! documentation and wrong results. `yes` needs an execution-time score of at least
//! [`rules::THRESHOLD`] that beats every other topic's score; `unclassified` is only for records
//! with nothing to read.
//!
//! ```
//! use etip_classify::{Answer, IssueText, Offline};
//!
//! let slow = IssueText {
//!     title: "Table.read is 10 times slower than reading the columns directly",
//!     ..IssueText::default()
//! };
//! assert_eq!(Offline.classify(&slow).answer, Answer::Yes);
//! let leak = IssueText {
//!     title: "Memory leak when the connection pool is closed",
//!     ..IssueText::default()
//! };
//! assert_eq!(Offline.classify(&leak).answer, Answer::No);
//! ```

pub mod rules;

use serde::{Deserialize, Serialize};

/// What a classifier reads of one issue (and the commit that links it).
#[derive(Debug, Clone, Copy, Default)]
pub struct IssueText<'a> {
    pub title: &'a str,
    pub body: &'a str,
    pub labels: &'a [String],
    pub commit_message: &'a str,
}

/// A classifier's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    Yes,
    No,
    /// No answer could be given (nothing to read; for a service: a malformed response).
    Unclassified,
}

impl Answer {
    /// The answer as written in outputs (`yes`, `no`, `unclassified`).
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Yes => "yes",
            Answer::No => "no",
            Answer::Unclassified => "unclassified",
        }
    }
}

/// What a rule is evidence of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Topic {
    ExecutionTime,
    Memory,
    Hang,
    FlakyTest,
    BuildSpeed,
    Docs,
    Correctness,
    /// Refactoring and clean-up: "optimize the code" in the sense of tidying it.
    Refactor,
}

/// Where a rule matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    Title,
    Body,
    Label,
    CommitMessage,
}

/// One matched rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub topic: Topic,
    pub field: Field,
    /// The rule's phrase (or the label as written).
    pub matched: String,
    /// The rule's weight times the field's factor.
    pub weight: u32,
}

/// A classifier's answer with what it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Classification {
    pub answer: Answer,
    /// The classifier's name and version (e.g. [`Offline::NAME`]).
    pub classifier: String,
    /// The execution-time score and the strongest other topic with its score.
    pub score: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rival: Option<(Topic, u32)>,
    pub evidence: Vec<Evidence>,
    /// Why there is no answer (`unclassified`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Topic {
    /// The topic as written in outputs (`execution_time`, `memory`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Topic::ExecutionTime => "execution_time",
            Topic::Memory => "memory",
            Topic::Hang => "hang",
            Topic::FlakyTest => "flaky_test",
            Topic::BuildSpeed => "build_speed",
            Topic::Docs => "docs",
            Topic::Correctness => "correctness",
            Topic::Refactor => "refactor",
        }
    }
}

impl Field {
    /// The field as written in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Title => "title",
            Field::Body => "body",
            Field::Label => "label",
            Field::CommitMessage => "commit_message",
        }
    }
}

impl Classification {
    /// The verdict as a candidate records it ([`etip_core::candidate::Classified`]); `read`
    /// says what was read (`commit message`, `issue #12`).
    pub fn record(&self, read: &str) -> etip_core::candidate::Classified {
        etip_core::candidate::Classified {
            classifier: self.classifier.clone(),
            answer: self.answer.as_str().to_string(),
            read: read.to_string(),
            evidence: self
                .evidence
                .iter()
                .map(|e| {
                    format!(
                        "{} in {}: {:?} (+{})",
                        e.topic.as_str(),
                        e.field.as_str(),
                        e.matched,
                        e.weight
                    )
                })
                .collect(),
            reason: self.reason.clone(),
        }
    }
}

/// A commit message as the classifier reads it when no issue is known: the subject as the title,
/// the rest as the body. A GitHub merge (`Merge pull request #N from owner/branch`, then the pull
/// request's title) reads the pull request's title as the title; the branch name counts only when
/// the message has nothing else.
pub fn commit_text(message: &str) -> IssueText<'_> {
    let message = message.trim_start();
    let (subject, rest) = message.split_once('\n').unwrap_or((message, ""));
    let (title, body) = match subject.strip_prefix("Merge pull request #") {
        Some(tail) => {
            let rest = rest.trim_start();
            match rest.split_once('\n') {
                _ if rest.is_empty() => (tail.split_once(" from ").map_or(tail, |(_, b)| b), ""),
                Some((t, b)) => (t, b),
                None => (rest, ""),
            }
        }
        None => (subject, rest),
    };
    IssueText {
        title,
        body,
        labels: &[],
        commit_message: "",
    }
}

/// The offline rule classifier (see the crate docs and [`rules`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Offline;

impl Offline {
    /// Name and version of the rules, recorded with every answer; bumped when a rule changes.
    pub const NAME: &'static str = "offline-rules-2";

    pub fn classify(&self, text: &IssueText) -> Classification {
        let mut evidence = Vec::new();
        for (field, raw, factor) in [
            (Field::Title, text.title, rules::TITLE_FACTOR),
            (Field::Body, text.body, rules::BODY_FACTOR),
            (
                Field::CommitMessage,
                text.commit_message,
                rules::COMMIT_FACTOR,
            ),
        ] {
            let words = words(raw);
            for rule in rules::PHRASES {
                if contains(&words, rule.words) {
                    evidence.push(Evidence {
                        topic: rule.topic,
                        field,
                        matched: rule.words.to_string(),
                        weight: rule.weight * factor,
                    });
                }
            }
        }
        for label in text.labels {
            let words = words(label);
            // One topic counts once per label, with its strongest rule.
            let mut best: Vec<(Topic, u32)> = Vec::new();
            for rule in rules::LABELS {
                if words.iter().any(|w| w == rule.word) {
                    match best.iter_mut().find(|(t, _)| *t == rule.topic) {
                        Some((_, w)) => *w = (*w).max(rule.weight),
                        None => best.push((rule.topic, rule.weight)),
                    }
                }
            }
            for (topic, weight) in best {
                evidence.push(Evidence {
                    topic,
                    field: Field::Label,
                    matched: label.clone(),
                    weight,
                });
            }
        }
        decide(evidence, text)
    }
}

/// The answer from the evidence: `yes` when execution time reaches the threshold and beats every
/// other topic (a tie is `no`: a thread that reads as much like a memory problem as a slow one
/// is not kept).
fn decide(evidence: Vec<Evidence>, text: &IssueText) -> Classification {
    let mut totals: Vec<(Topic, u32)> = Vec::new();
    for e in &evidence {
        match totals.iter_mut().find(|(t, _)| *t == e.topic) {
            Some((_, w)) => *w += e.weight,
            None => totals.push((e.topic, e.weight)),
        }
    }
    let score = totals
        .iter()
        .find(|(t, _)| *t == Topic::ExecutionTime)
        .map_or(0, |(_, w)| *w);
    let rival = totals
        .iter()
        .filter(|(t, _)| *t != Topic::ExecutionTime)
        .max_by_key(|(t, w)| (*w, std::cmp::Reverse(*t)))
        .copied();
    let nothing = [text.title, text.body, text.commit_message]
        .iter()
        .all(|s| s.trim().is_empty())
        && text.labels.is_empty();
    let (answer, reason) = if nothing {
        (
            Answer::Unclassified,
            Some("no title, body, labels or commit message to read".to_string()),
        )
    } else if score >= rules::THRESHOLD && rival.is_none_or(|(_, w)| score > w) {
        (Answer::Yes, None)
    } else {
        (Answer::No, None)
    };
    Classification {
        answer,
        classifier: Offline::NAME.to_string(),
        score,
        rival,
        evidence,
        reason,
    }
}

/// The normalised words of a text: lower case, split at every character that is not a letter or
/// a digit.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `words` holds the phrase (its words consecutive; a trailing `*` matches a prefix).
fn contains(words: &[String], phrase: &str) -> bool {
    let want: Vec<&str> = phrase.split(' ').collect();
    if want.is_empty() || words.len() < want.len() {
        return false;
    }
    words.windows(want.len()).any(|window| {
        window
            .iter()
            .zip(&want)
            .all(|(w, p)| match p.strip_suffix('*') {
                Some(prefix) => w.starts_with(prefix),
                None => w == p,
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(title: &str, body: &str, labels: &[&str]) -> Classification {
        let labels: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        Offline.classify(&IssueText {
            title,
            body,
            labels: &labels,
            commit_message: "",
        })
    }

    #[test]
    fn phrases_match_on_word_boundaries_with_prefixes() {
        let w = words("Speed-up of O(n^2) dedup; deadlocked!");
        assert!(contains(&w, "speed up"));
        assert!(contains(&w, "o n 2"));
        assert!(contains(&w, "deadlock*"));
        assert!(!contains(&w, "dead"));
        assert!(!contains(&words("the ci is red"), "cis"));
        assert!(contains(&words("the CI is red"), "ci"));
        assert!(!contains(&words("specific"), "ci"));
    }

    #[test]
    fn execution_time_against_its_look_alikes() {
        assert_eq!(
            classify("HashMap lookup is slow for long keys", "", &[]).answer,
            Answer::Yes
        );
        for (title, topic) in [
            ("Memory leak in the parser", Topic::Memory),
            ("Deadlock when two threads close the pool", Topic::Hang),
            (
                "Flaky test: testTimeout fails on slow CI machines",
                Topic::FlakyTest,
            ),
            ("The test suite takes 40 minutes", Topic::BuildSpeed),
        ] {
            let c = classify(title, "", &[]);
            assert_eq!(c.answer, Answer::No, "{title}: {c:?}");
            assert_eq!(c.rival.map(|(t, _)| t), Some(topic), "{title}: {c:?}");
        }
    }

    #[test]
    fn labels_weigh_more_than_phrases_and_evidence_is_recorded() {
        let c = classify("Reading wide tables", "takes a while", &["Performance"]);
        assert_eq!(c.answer, Answer::Yes);
        assert_eq!(c.evidence.len(), 1);
        assert_eq!(c.evidence[0].field, Field::Label);
        assert_eq!(c.evidence[0].matched, "Performance");
        assert_eq!(c.classifier, Offline::NAME);
    }

    #[test]
    fn nothing_to_read_is_unclassified() {
        let c = classify("  ", "", &[]);
        assert_eq!(c.answer, Answer::Unclassified);
        assert!(c.reason.is_some());
        assert_eq!(classify("Add a builder", "", &[]).answer, Answer::No);
    }
}
