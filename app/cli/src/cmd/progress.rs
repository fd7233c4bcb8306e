//! The pipeline's progress ([`etip_pipeline::Progress`]) as bars on stderr, one per phase (the
//! phases of `mine github` nest), and its notes as lines on stderr.

use std::collections::HashMap;

use etip_pipeline::progress::{Phase, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

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
fn style(phase: Phase) -> ProgressStyle {
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

impl Progress for Bars {
    fn start(&mut self, phase: Phase, total: u64, already: u64) {
        let target = if self.hidden.contains(&phase) {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        bar.set_style(style(phase));
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
