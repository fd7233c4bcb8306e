//! `clean`: remove the images and containers etip created (found by their `etip.*` labels), and
//! with `--swarm` the unit services and configs it left on a swarm.

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

/// Removes the unit services (and their configs) etip left on the swarm of `settings`, of
/// `namespace` only when one is given; returns how many services were removed.
pub fn swarm(
    settings: &crate::swarm::SwarmSettings,
    namespace: Option<&str>,
) -> anyhow::Result<usize> {
    let rt = crate::runtime::get()?;
    let manager = rt
        .block_on(etip_docker::Engine::connect_to(&settings.manager))
        .with_context(|| format!("the swarm's manager at {}", settings.manager))?;
    let labels: Vec<String> = namespace
        .map(|ns| format!("{}={ns}", etip_swarm::LABEL_NAMESPACE))
        .into_iter()
        .collect();
    rt.block_on(manager.remove_swarm_objects(&labels))
        .context("removing etip's services from the swarm")
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
