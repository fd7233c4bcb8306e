//! The terminal's view of a running stage: [`Bar`] implements the pipeline's
//! [`Progress`](etip_pipeline::Progress) with an indicatif progress bar on stderr (hidden when
//! stderr is no terminal) and prints each finished unit's line.

use etip_core::measure::Measurement;
use etip_pipeline::progress::{Done, Progress};
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
