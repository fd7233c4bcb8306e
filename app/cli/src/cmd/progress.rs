//! The terminal's view of a running stage: [`Bar`] implements the pipeline's
//! [`Progress`](etip_pipeline::Progress) with an indicatif progress bar on stderr (hidden when
//! stderr is no terminal) and prints each finished unit's line.
//!
//! The phased stages (mining, classifying) report through [`Bars`]: one bar per phase (the phases
//! of `mine github` nest) and notes as lines on stderr.

use etip_pipeline::progress::{Done, Progress};
use etip_pipeline::progress::{Phase, PhaseProgress};
use etip_records::measure::Measurement;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A progress bar; the lines of finished builds go to `stdout_lines` when set (the caller writes
/// them to its stdout), every other line to stderr.
#[derive(Default)]
pub struct Bar {
    bar: Arc<Mutex<Option<indicatif::ProgressBar>>>,
    stdout_lines: Option<Mutex<Sender<String>>>,
}

/// Another thread's hold on a [`Bar`]: prints around the bar.
#[derive(Clone)]
pub struct Handle(Arc<Mutex<Option<indicatif::ProgressBar>>>);

impl Handle {
    /// Runs `f` with the bar hidden (a line written to a terminal does not garble it).
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match self.0.lock().ok().and_then(|b| b.clone()) {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }
}

impl Bar {
    pub fn new() -> Bar {
        Bar::default()
    }

    /// A bar that sends the status line of each finished build to `lines`.
    pub fn with_stdout(lines: Sender<String>) -> Bar {
        Bar {
            bar: Arc::default(),
            stdout_lines: Some(Mutex::new(lines)),
        }
    }

    pub fn handle(&self) -> Handle {
        Handle(self.bar.clone())
    }

    fn current(&self) -> Option<indicatif::ProgressBar> {
        self.bar.lock().ok().and_then(|b| b.clone())
    }

    /// Prints `line` on stderr above the bar.
    fn eprint(&self, line: &str) {
        match self.current() {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }
}

fn style(template: &str) -> Option<indicatif::ProgressStyle> {
    indicatif::ProgressStyle::with_template(template).ok()
}

impl Progress for Bar {
    fn start(&self, total: Option<u64>) {
        let bar = match total {
            Some(n) => {
                let bar = indicatif::ProgressBar::new(n);
                if let Some(s) = style("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}") {
                    bar.set_style(s);
                }
                bar.enable_steady_tick(Duration::from_millis(500));
                bar
            }
            None => {
                let bar = indicatif::ProgressBar::new_spinner();
                if let Some(s) = style("{spinner} {elapsed} {msg}") {
                    bar.set_style(s);
                }
                bar.enable_steady_tick(Duration::from_millis(200));
                bar
            }
        };
        if let Ok(mut b) = self.bar.lock() {
            *b = Some(bar);
        }
    }

    fn message(&self, text: &str) {
        if let Some(bar) = self.current() {
            bar.set_message(text.to_string());
        }
    }

    fn done(&self, item: Done<'_>) {
        if let Some(bar) = self.current() {
            bar.inc(1);
        }
        match item {
            Done::Built(status) => {
                if let Some(tx) = &self.stdout_lines
                    && let Ok(line) = serde_json::to_string(status)
                    && let Ok(tx) = tx.lock()
                {
                    let _ = tx.send(line);
                }
            }
            Done::Selected { selection, reused } => self.eprint(&format!(
                "{}: {}{}",
                selection.id,
                selection.outcome.as_str(),
                if reused {
                    " (stored selection reused)"
                } else {
                    ""
                }
            )),
            Done::Measured(m) => self.eprint(&format!("{}: {}", m.id, verdict(m))),
            Done::Evaluated {
                instance,
                model,
                result,
            } => self.eprint(&format!(
                "{instance} / {model}: {}",
                result.category.as_deref().unwrap_or("-")
            )),
            // Thousands of predictions take seconds: the bar counts them, the table tells.
            Done::Screened { .. } => {}
        }
    }

    fn note(&self, line: &str) {
        self.eprint(line);
    }

    fn end(&self) {
        if let Ok(mut b) = self.bar.lock()
            && let Some(bar) = b.take()
        {
            bar.finish_and_clear();
        }
    }
}

/// `executable, N detector(s)` or `not executable (reason)`.
fn verdict(m: &Measurement) -> String {
    if m.executable {
        format!("executable, {} detector(s)", m.detectors.len())
    } else {
        format!(
            "not executable ({})",
            m.reason
                .and_then(|r| serde_json::to_value(r).ok())
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        )
    }
}

/// The bars of one command.
#[derive(Default)]
pub struct Bars {
    bars: HashMap<Phase, ProgressBar>,
    /// Phases that are counted but not shown.
    hidden: Vec<Phase>,
}

impl Bars {
    /// Bars that show every phase but `phase`.
    pub fn hiding(phase: Phase) -> Bars {
        Bars {
            hidden: vec![phase],
            ..Bars::default()
        }
    }
}

/// The layout of a phase's bar.
fn phase_style(phase: Phase) -> ProgressStyle {
    let template = match phase {
        Phase::Commits => {
            "{spinner} mining [{bar:30}] {pos}/{len} commits ({per_sec}, eta {eta}) {msg}"
        }
        Phase::Candidates => "{elapsed_precise} [{bar:30}] {pos}/{len} candidates",
        Phase::Repositories => "{elapsed_precise} [{bar:30}] {pos}/{len} {msg}",
        Phase::Issues => "{elapsed_precise} [{bar:30}] {pos}/{len} issues",
    };
    let style = ProgressStyle::with_template(template).unwrap_or_else(|e| {
        tracing::debug!("progress template: {e}");
        ProgressStyle::default_bar()
    });
    match phase {
        Phase::Commits => style.progress_chars("=> "),
        _ => style,
    }
}

impl PhaseProgress for Bars {
    fn start(&mut self, phase: Phase, total: u64, already: u64) {
        let target = if self.hidden.contains(&phase) {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        bar.set_style(phase_style(phase));
        if already > 0 {
            bar.set_message(format!("{already} resumed"));
        }
        self.bars.insert(phase, bar);
    }

    fn item(&mut self, phase: Phase, name: &str) {
        if let Some(b) = self.bars.get(&phase) {
            b.set_message(name.to_owned());
        }
    }

    fn advance(&mut self, phase: Phase, n: u64) {
        if let Some(b) = self.bars.get(&phase) {
            b.inc(n);
        }
    }

    fn writing(&mut self, phase: Phase) {
        if let (Phase::Commits, Some(b)) = (phase, self.bars.get(&phase)) {
            b.set_message("writing candidates");
        }
    }

    fn end(&mut self, phase: Phase) {
        if let Some(b) = self.bars.remove(&phase) {
            b.finish_and_clear();
        }
    }

    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }
}
