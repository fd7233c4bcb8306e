//! The closed set of reasons a commit is not a candidate, in the order the rules run.

use serde::{Deserialize, Serialize};

/// Why a commit was rejected. The snake_case names are stable: they appear in the summary, in
/// `--explain` and in the state store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    /// The author date lies outside `--since`/`--until` (not counted as scanned).
    OutsideDateWindow,
    /// The commit changes no file (relative to its first parent).
    EmptyDiff,
    /// Rule 1 (path rule `code`): every changed file is set aside (documentation, changelogs,
    /// repository metadata, configured globs): no code changed.
    OnlyIgnoredFiles,
    /// Rule 1: a changed file is not a source file of the language.
    NonSourceFile,
    /// Rule 2: a changed file is a test file.
    TestFile,
    /// Rule 3: more than `max_files` files changed.
    TooManyFiles,
    /// Rule 4: only whitespace, comments (or Python docstrings) changed.
    WhitespaceOrCommentOnly,
    /// Rule 4: only files renamed/moved (same content, or only the package declaration changed).
    RenameOnly,
    /// Rule 4: only imports changed.
    ImportOnly,
    /// Rule 4: no changed line inside a method/function body or field initialiser changes its tokens
    /// (signature, modifier, annotation or declaration-only changes).
    NoBodyChange,
    /// Same normalised diff as an earlier kept commit (listed in that candidate's `duplicates`).
    Duplicate,
}

impl RejectReason {
    /// Every reason, in rule order.
    pub const ALL: [RejectReason; 11] = [
        RejectReason::OutsideDateWindow,
        RejectReason::EmptyDiff,
        RejectReason::OnlyIgnoredFiles,
        RejectReason::NonSourceFile,
        RejectReason::TestFile,
        RejectReason::TooManyFiles,
        RejectReason::WhitespaceOrCommentOnly,
        RejectReason::RenameOnly,
        RejectReason::ImportOnly,
        RejectReason::NoBodyChange,
        RejectReason::Duplicate,
    ];

    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::OutsideDateWindow => "outside_date_window",
            RejectReason::EmptyDiff => "empty_diff",
            RejectReason::OnlyIgnoredFiles => "only_ignored_files",
            RejectReason::NonSourceFile => "non_source_file",
            RejectReason::TestFile => "test_file",
            RejectReason::TooManyFiles => "too_many_files",
            RejectReason::WhitespaceOrCommentOnly => "whitespace_or_comment_only",
            RejectReason::RenameOnly => "rename_only",
            RejectReason::ImportOnly => "import_only",
            RejectReason::NoBodyChange => "no_body_change",
            RejectReason::Duplicate => "duplicate",
        }
    }

    /// Parses a stable name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// One-line explanation for humans.
    pub fn describe(self) -> &'static str {
        match self {
            RejectReason::OutsideDateWindow => "author date outside the --since/--until window",
            RejectReason::EmptyDiff => "no file changed relative to the first parent",
            RejectReason::OnlyIgnoredFiles => {
                "rule 1: changes only files the path rule sets aside (documentation, changelogs, metadata)"
            }
            RejectReason::NonSourceFile => {
                "rule 1: changes a file that is not a source file of the language"
            }
            RejectReason::TestFile => "rule 2: changes a test file",
            RejectReason::TooManyFiles => "rule 3: changes more than --max-files files",
            RejectReason::WhitespaceOrCommentOnly => {
                "rule 4: only whitespace, comments or docstrings changed"
            }
            RejectReason::RenameOnly => "rule 4: only renames/moves of files",
            RejectReason::ImportOnly => "rule 4: only imports changed",
            RejectReason::NoBodyChange => {
                "rule 4: no method/function body or field initialiser changed (declaration-only change)"
            }
            RejectReason::Duplicate => "same normalised diff as an earlier candidate",
        }
    }
}

impl std::fmt::Display for RejectReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for r in RejectReason::ALL {
            assert_eq!(RejectReason::from_name(r.as_str()), Some(r));
            assert_eq!(
                serde_json::to_string(&r).unwrap(),
                format!("\"{}\"", r.as_str())
            );
        }
    }
}
