//! How a stage tells the program that runs it what it is doing: a [`Progress`] reporter, given
//! to every stage. The stages never write to the terminal themselves; the `etip` binary draws a
//! progress bar and prints the lines, a test or a service may record or drop them ([`Silent`]).

use etip_core::instance::InstanceStatus;
use etip_core::measure::Measurement;
use etip_core::results::TaskResult;
use etip_core::selection::TestSelection;

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
