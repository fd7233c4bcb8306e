//! How a stage tells the program that runs it what it is doing: a [`Progress`] reporter, given
//! to every stage. The stages never write to the terminal themselves; the `etip` binary draws a
//! progress bar and prints the lines, a test or a service may record or drop them ([`Silent`]).
//!
//! The stages that count their work in [`Phase`]s (the commits of a history, the candidates of a
//! file, the repositories of a search, the issues of a file) report through [`PhaseProgress`]
//! instead; phases may nest (`mine github` post-processes each repository's candidates while it
//! works through the repositories), so every call names its phase.

use etip_core::instance::InstanceStatus;
use etip_core::selection::TestSelection;
use etip_records::measure::Measurement;
use etip_records::results::TaskResult;

/// One unit of a stage's work that finished, with its record.
#[derive(Debug, Clone, Copy)]
pub enum Done<'a> {
    /// `build`: one ETIP built (or reused, or failed).
    Built(&'a InstanceStatus),
    /// `select`: one ETIP's selection; `reused` when a stored selection was kept.
    Selected {
        selection: &'a TestSelection,
        reused: bool,
    },
    /// `measure`: one ETIP measured.
    Measured(&'a Measurement),
    /// `eval` / `eval-test`: one prediction (or generated test) evaluated.
    Evaluated {
        instance: &'a str,
        model: &'a str,
        result: &'a TaskResult,
    },
    /// `hack-check`: one prediction screened (`verdict`: `clean`, `suspected`, `not screened`).
    Screened {
        instance: &'a str,
        model: &'a str,
        verdict: &'a str,
    },
}

/// What a stage reports while it runs. Called from the stage's worker threads.
pub trait Progress: Sync {
    /// The stage starts `total` units of work (`None`: one task of unknown length).
    fn start(&self, total: Option<u64>);
    /// What the current unit is doing now.
    fn message(&self, text: &str);
    /// One unit finished.
    fn done(&self, item: Done<'_>);
    /// A line for the user now (a warning, what the stage chose, a step of the demo).
    fn note(&self, line: &str);
    /// The stage finished its units.
    fn end(&self);
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _: Option<u64>) {}
    fn message(&self, _: &str) {}
    fn done(&self, _: Done<'_>) {}
    fn note(&self, _: &str) {}
    fn end(&self) {}
}

/// The units a stage counts its work in; the reporter chooses a bar's words and layout by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// The commits of one repository's history being evaluated (`mine local`).
    Commits,
    /// Mined candidates being linked to their issues and classified (`mine local --issues` or
    /// `--classify`, each repository of `mine github`).
    Candidates,
    /// The repositories a GitHub search found being mirrored and mined (`mine github`).
    Repositories,
    /// The issues of a file being classified (`classify`).
    Issues,
}

/// The progress reporter of the stages that count their work in phases (mining, classifying).
/// Every method has an empty default, so a reporter implements
/// only what it shows.
pub trait PhaseProgress {
    /// `phase` begins: `total` steps to do now, `already` done by an earlier run (resumed).
    fn start(&mut self, _phase: Phase, _total: u64, _already: u64) {}
    /// The item `phase` works on now (a repository's `owner/name`).
    fn item(&mut self, _phase: Phase, _name: &str) {}
    /// `n` more steps of `phase` done.
    fn advance(&mut self, _phase: Phase, _n: u64) {}
    /// Every step of `phase` is done; its output is being written.
    fn writing(&mut self, _phase: Phase) {}
    /// `phase` is over: whatever showed it goes away.
    fn end(&mut self, _phase: Phase) {}
    /// One line for the person running the stage (the binary prints it on stderr): a warning, or
    /// what a long step is about to do or has used.
    fn note(&mut self, _line: &str) {}
}

/// A reporter that shows nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl PhaseProgress for NoProgress {}

/// The miner's progress ([`etip_mine_git::Progress`]) as phase [`Phase::Commits`] of a stage's
/// reporter.
pub(crate) struct Commits<'a>(pub(crate) &'a mut dyn PhaseProgress);

impl etip_mine_git::Progress for Commits<'_> {
    fn start(&mut self, total: u64, already: u64) {
        self.0.start(Phase::Commits, total, already);
    }
    fn advance(&mut self, n: u64) {
        self.0.advance(Phase::Commits, n);
    }
    fn finish(&mut self) {
        self.0.writing(Phase::Commits);
    }
}
