//! `base-image bootstrap`: the offline base image (debootstrap, imported through the Docker API),
//! built once per machine and cached by content key.

use crate::InputError;
use crate::progress::Progress;
use anyhow::Context;
use etip_build::base::BaseImage;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How to bootstrap.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Debian suite (overrides the configuration's).
    pub suite: Option<String>,
    /// The build configuration file.
    pub build_config: Option<PathBuf>,
    /// Rebuild even when an image with the same content key exists.
    pub force: bool,
}

/// Bootstraps the base image (or finds it built); the phases and elapsed time go to
/// [`Progress::note`], each line of the tools' output to [`Progress::message`].
pub fn run(cfg: &Config, progress: &dyn Progress) -> anyhow::Result<BaseImage> {
    let mut build = crate::records::build_config(cfg.build_config.as_deref())?;
    if let Some(s) = &cfg.suite {
        build.bootstrap.suite = s.clone();
        build
            .validate()
            .map_err(|e| InputError(format!("--suite: {e}")))?;
    }
    let builder = crate::executor::docker_builder(build, PathBuf::from(".etip/build"))?;
    progress.start(None);
    let mut phases = etip_build::base::Progress::new(Instant::now(), Duration::from_secs(30));
    let img = builder
        .bootstrap_base(cfg.force, &mut |line: &str| {
            if let Some(status) = phases.observe(line, Instant::now()) {
                progress.note(&status);
            }
            let short: String = line.chars().take(100).collect();
            progress.message(&short);
        })
        .context("bootstrapping the base image")?;
    progress.end();
    Ok(img)
}
