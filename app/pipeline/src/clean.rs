//! `clean`: remove the images and containers etip created (found by their `etip.*` labels).

use anyhow::Context;
use etip_build::config::BuildConfig;
use etip_docker::CleanReport;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What to remove.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Also the bootstrapped base images.
    pub all: bool,
    /// Only objects of this namespace; `None`: every namespace.
    pub namespace: Option<String>,
    /// Containers only, every image kept.
    pub containers_only: bool,
}

/// Removes what `cfg` names; returns what was removed.
pub fn run(cfg: &Config) -> anyhow::Result<CleanReport> {
    let builder =
        crate::executor::docker_builder(BuildConfig::default(), PathBuf::from(".etip/build"))?;
    if cfg.containers_only {
        builder
            .clean_containers(cfg.namespace.as_deref())
            .context("removing etip's containers")
    } else {
        builder
            .clean(cfg.namespace.as_deref(), cfg.all)
            .context("removing etip's containers and images")
    }
}
