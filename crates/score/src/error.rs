//! Errors of the scoring library.

use std::path::PathBuf;

/// Everything that can go wrong while reading results or scoring them.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    /// A file could not be read.
    #[error("{path}: cannot read the file: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file's content is malformed at a known place.
    #[error("{path}:{line}: {message}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line number (1 = header line of a CSV file).
        line: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The file has no result rows.
    #[error("{path}: the file holds no task results; expected {expected}")]
    Empty {
        /// The file.
        path: PathBuf,
        /// What a valid file holds.
        expected: &'static str,
    },
    /// The file's format is not one etip reads.
    #[error(
        "{path}: unrecognised results format ({why}); etip reads SWE-fficiency eval_report_*.csv files, \
         GSO report .json files, etip task-result .jsonl files and the measurements.jsonl of etip measure"
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// What was seen.
        why: String,
    },
    /// Files of different benchmarks were given to one command.
    #[error(
        "results of different benchmarks in one call: {first} is {first_kind} but {other} is {other_kind}; \
         score each benchmark separately"
    )]
    MixedBenchmarks {
        /// First file.
        first: PathBuf,
        /// Its format.
        first_kind: &'static str,
        /// Offending file.
        other: PathBuf,
        /// Its format.
        other_kind: &'static str,
    },
    /// Two submissions got the same name.
    #[error("two inputs are both named {name:?} ({first} and {second}); give distinct names")]
    DuplicateSubmission {
        /// The name.
        name: String,
        /// First file.
        first: PathBuf,
        /// Second file.
        second: PathBuf,
    },
    /// A rule cannot be applied to the data at hand.
    #[error("cannot score {submission} with the {rule} rule: {why}")]
    NotApplicable {
        /// Submission name.
        submission: String,
        /// Rule name.
        rule: &'static str,
        /// What is missing.
        why: String,
    },
    /// A parameter is out of range.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// A statistical computation failed.
    #[error("{context}: {source}")]
    Stats {
        /// Where.
        context: String,
        /// The cause.
        source: etip_stats::StatsError,
    },
}

impl ScoreError {
    /// True when the user's input (files, names, parameters) is at fault rather than the machine.
    pub fn is_input_error(&self) -> bool {
        match self {
            ScoreError::Io { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::PermissionDenied
                    | std::io::ErrorKind::IsADirectory
                    | std::io::ErrorKind::InvalidData
            ),
            _ => true,
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = ScoreError> = std::result::Result<T, E>;
