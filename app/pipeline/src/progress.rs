//! How a stage tells the person running it how far it is: [`Progress`], implemented by the binary
//! with progress bars on stderr and by [`NoProgress`] for callers that want nothing shown.
//!
//! A stage counts its work in [`Phase`]s (the commits of a history, the candidates of a file, the
//! repositories of a search, the issues of a file); phases may nest (`mine github` post-processes
//! each repository's candidates while it works through the repositories), so every call names
//! its phase. Lines for the person ([`Progress::note`]: a warning, what a long step is about to
//! do) are the stage's words; what a stage found is returned as typed records, never noted.

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

/// A stage's progress reporter. Every method has an empty default, so a reporter implements
/// only what it shows.
pub trait Progress {
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

impl Progress for NoProgress {}

/// The miner's progress ([`etip_mine_git::Progress`]) as phase [`Phase::Commits`] of a stage's
/// reporter.
pub(crate) struct Commits<'a>(pub(crate) &'a mut dyn Progress);

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
