//! Errors of the scoring library.

use std::path::PathBuf;

/// Everything that can go wrong while reading results or scoring them.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    /// A file could not be opened: a path that does not exist, is not readable, names a folder, ...
    /// Always the user's input.
    #[error("{path}: cannot read the file: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file could not be read after it was opened.
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
    /// The file is larger than etip reads from one input ([`crate::input::MAX_FILE_BYTES`]).
    #[error(
        "{path}: the file is larger than {limit}, the most etip reads from one input; \
         is it the right file?"
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit, for people (e.g. `256 MiB`).
        limit: String,
    },
    /// One line of the file is longer than etip reads as one line
    /// ([`crate::input::MAX_LINE_BYTES`]).
    #[error(
        "line {line} of {path} is longer than {limit}, the most etip reads as one line; \
         is it the right file?"
    )]
    LineTooLong {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The limit, for people (e.g. `64 MiB`).
        limit: String,
    },
    /// Only GSO manifests (official scores) were given: there is nothing to score or audit.
    #[error(
        "no submission among the files ({}): a GSO manifest holds official scores only; give the \
         per-model result files, with or without the manifest",
        list_paths(files)
    )]
    NoSubmission {
        /// The files that were given.
        files: Vec<PathBuf>,
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
    /// Aliases that do not fit the submissions (an alias for no submission, two submissions of one
    /// benchmark mapped to one model).
    #[error("{0}")]
    Aliases(String),
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
            // Opening fails for paths that do not exist, cannot be read, name a folder or a missing
            // folder, loop, are too long...: always the path the user gave.
            ScoreError::Open { .. } => true,
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

fn list_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "none given".into();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Command-line text that is not a valid parameter value: says what was expected (the
/// command-line parser names the flag and the value beside it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamTextError {
    /// Not a number in the parameter's range.
    #[error("expected {range} ({name})")]
    Expected {
        /// The range, for people (e.g. `a finite number in (0, 1]`).
        range: String,
        /// What the parameter is.
        name: &'static str,
    },
    /// Not a whole number >= 1 for the benchmark size N.
    #[error("expected a whole number >= 1 (the benchmark size N)")]
    TotalInstances,
}

/// Result alias of this crate.
pub type Result<T, E = ScoreError> = std::result::Result<T, E>;
