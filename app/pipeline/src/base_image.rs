//! `base-image bootstrap`: the offline base images (debootstrap of a Debian suite, imported
//! through the Docker API), each built once per machine and cached by content key.

use crate::InputError;
use crate::progress::Progress;
use anyhow::Context;
use etip_build::base::BaseImage;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The `--suite` value that bootstraps every configured suite.
pub const ALL_SUITES: &str = "all";

/// How to bootstrap.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Debian suite, or [`ALL_SUITES`]; `None`: the configuration's `bootstrap.suite`.
    pub suite: Option<String>,
    /// The build configuration file.
    pub build_config: Option<PathBuf>,
    /// Rebuild even when an image with the same content key exists.
    pub force: bool,
}

/// Bootstraps the base image of each suite asked for (or finds it built), in name order;
/// the phases and elapsed time go to [`Progress::note`], each line of the tools' output to
/// [`Progress::message`].
pub fn run(cfg: &Config, progress: &dyn Progress) -> anyhow::Result<Vec<BaseImage>> {
    let build = crate::records::build_config(cfg.build_config.as_deref())?;
    let suites = match cfg.suite.as_deref() {
        None => vec![build.bootstrap.suite.clone()],
        Some(ALL_SUITES) => build.bootstrap.suite_names(),
        Some(s) => {
            let mut check = build.clone();
            check.bootstrap.suite = s.to_string();
            check
                .validate()
                .map_err(|e| InputError(format!("--suite: {e}")))?;
            vec![s.to_string()]
        }
    };
    build.validate().map_err(|e| InputError(e.to_string()))?;
    let builder = crate::executor::docker_builder(build, PathBuf::from(".etip/build"))?;
    let mut images = Vec::with_capacity(suites.len());
    for suite in suites {
        progress.start(None);
        progress.note(&format!("bootstrap: the {suite} base image"));
        let mut phases = etip_build::base::Progress::new(Instant::now(), Duration::from_secs(30));
        let img = builder
            .bootstrap_suite(&suite, cfg.force, &mut |line: &str| {
                if let Some(status) = phases.observe(line, Instant::now()) {
                    progress.note(&status);
                }
                let short: String = line.chars().take(100).collect();
                progress.message(&short);
            })
            .with_context(|| format!("bootstrapping the {suite} base image"))?;
        progress.end();
        images.push(img);
    }
    Ok(images)
}
