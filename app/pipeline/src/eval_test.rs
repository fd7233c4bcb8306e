//! `eval-test`: generated tests on built ETIPs, each applied to the original and the reference
//! (ground-truth patched) version and timed there; a test that passes on both in every round and
//! finds the reference significantly faster is an ETIP detector test. Runs on the machinery of
//! [`crate::eval`].

use crate::eval::{self, Predictions, Records, RunConfig};
use crate::progress::Progress;
use crate::timing::TestChoice;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A generated-test run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Generated tests as JSON lines (instance_id, model_name_or_path, test_patch, test_classes).
    pub tests: PathBuf,
    pub run: RunConfig,
}

/// Evaluates the generated tests of `cfg`.
pub fn run(cfg: &Config, progress: &dyn Progress) -> anyhow::Result<eval::Outcome> {
    let eval = eval::Config {
        predictions: Predictions::File(cfg.tests.clone()),
        // Each record names what to run.
        tests: TestChoice::Modules,
        allow_test_changes: false,
        selection: None,
        run: cfg.run.clone(),
        records: Records::Tests,
        judge: None,
    };
    // Generated tests are not labelled against the ground truth.
    eval::run(&eval, false, progress)
}
