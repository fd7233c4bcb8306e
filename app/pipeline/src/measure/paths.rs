//! The files `measure` reads and writes: the checks before any work, and the outputs rewritten
//! after every ETIP.

use super::Config;
use crate::InputError;
use crate::output::{self, Named};
use etip_records::measure::Measurement;
use std::path::{Path, PathBuf};

/// The files `measure` writes in its output folder.
const OUTPUTS: [&str; 3] = ["measurements.jsonl", "executable.jsonl", "report.html"];

/// The state file and what names it in messages.
pub(super) fn state(cfg: &Config) -> (PathBuf, &'static str) {
    match &cfg.state {
        Some(p) => (p.clone(), "--state"),
        None => (cfg.out.join("state.sqlite"), "the state file of --out"),
    }
}

/// Refuses, before any work, two paths that name one file (an input that is also an output or
/// the state), outputs that cannot be replaced and a state path that is no file.
pub(super) fn check(cfg: &Config) -> Result<(), InputError> {
    let (state, state_flag) = state(cfg);
    let mut paths = vec![Named::reads("--etips", &cfg.etips)];
    if let Some(c) = &cfg.build_config {
        paths.push(Named::reads("--config", c));
    }
    if let Some(s) = &cfg.selection {
        paths.push(Named::reads(
            "--selection",
            &crate::records::selection_file(s),
        ));
    }
    for name in OUTPUTS {
        paths.push(Named::writes(
            format!("the {name} of --out"),
            &cfg.out.join(name),
        ));
    }
    paths.push(Named::writes(state_flag, &state));
    output::distinct(&paths)?;
    if cfg.out.is_dir() {
        for name in OUTPUTS {
            output::check(&cfg.out.join(name))?;
        }
    }
    output::check_state(state_flag, &state)
}

/// Writes measurements.jsonl, executable.jsonl and report.html.
pub(super) fn write_outputs(out: &Path, results: &[Measurement]) -> anyhow::Result<()> {
    let mut all = String::new();
    let mut exec = String::new();
    for m in results {
        let line = serde_json::to_string(m)?;
        all.push_str(&line);
        all.push('\n');
        if m.executable {
            exec.push_str(&serde_json::to_string(&serde_json::json!({
                "id": m.id,
                "detectors": m.detectors,
                "overall": m.overall.as_ref().and_then(|o| o.sign_test.as_ref()).map(|s| s.direction),
                "improvement": m.overall.as_ref().and_then(|o| o.sign_test.as_ref()).map(|s| s.improvement),
                "rounds": m.rounds,
                "aa": m.aa,
            }))?);
            exec.push('\n');
        }
    }
    output::write(&out.join("measurements.jsonl"), &all)?;
    output::write(&out.join("executable.jsonl"), &exec)?;
    output::write(
        &out.join("report.html"),
        &etip_report::measure::report(results),
    )?;
    Ok(())
}
