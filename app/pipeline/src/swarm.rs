//! `--backend swarm`: the `[swarm]` section of the configuration file, and the [`etip_swarm::Swarm`]
//! backend it names, connected and with its runner image published.
//!
//! The runner image is this `etip` binary on etip's base image (the bootstrap suite's, or
//! `runner_base`), tagged by the binary's digest and pushed to the registry; the nodes pull it by
//! digest. The binary must run on that base: built on the same Debian suite, or on an older glibc.

use crate::InputError;
use crate::progress::Progress;
use anyhow::Context as _;
use etip_swarm::publish::Registry;
use etip_swarm::{Swarm, SwarmConfig};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// The `[swarm]` section (every key optional but `manager` and `registry`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwarmSettings {
    /// The manager's engine: `unix:///var/run/docker.sock` (etip runs on the manager) or
    /// `tcp://manager:2375`.
    pub manager: String,
    /// `host:port` of the registry, as this machine's engine pushes to it.
    pub registry: String,
    /// `host:port` of the same registry as the nodes pull from it (default: `registry`).
    pub node_registry: String,
    /// Each node's engine socket, mounted into the runner (Swarm templates allowed).
    pub node_socket: String,
    /// Constraints every unit's node must meet (`node.role==worker`).
    pub constraints: Vec<String>,
    /// Units one node runs at a time (1: timed work never shares a node).
    pub slots_per_node: usize,
    /// Units the whole swarm runs at a time (0: no limit but the nodes' slots).
    pub max_units: usize,
    /// Time limit of one attempt of a unit, seconds.
    pub unit_timeout_secs: u64,
    /// How long a unit may wait for a node, seconds.
    pub placement_timeout_secs: u64,
    /// Attempts of one unit in one run.
    pub max_attempts: u32,
    /// A runner image the nodes pull as it is (by digest); default: built from this etip.
    pub runner_image: String,
    /// The image the runner is built on; default: the bootstrap suite's base image.
    pub runner_base: String,
}

impl Default for SwarmSettings {
    fn default() -> Self {
        let d = SwarmConfig::new("", "");
        SwarmSettings {
            manager: "unix:///var/run/docker.sock".into(),
            registry: String::new(),
            node_registry: String::new(),
            node_socket: d.node_socket,
            constraints: Vec::new(),
            slots_per_node: d.slots_per_node,
            max_units: d.max_units,
            unit_timeout_secs: d.unit_timeout.as_secs(),
            placement_timeout_secs: d.placement_timeout.as_secs(),
            max_attempts: d.max_attempts,
            runner_image: String::new(),
            runner_base: String::new(),
        }
    }
}

/// The section as `etip config init` writes it.
pub const CONFIG_SECTION: &str = r#"
# `--backend swarm` (build, select, measure, eval, eval-test, replay): work units as Docker Swarm
# jobs, one unit per node at a time, results read back from the tasks' logs.
[swarm]
manager = "unix:///var/run/docker.sock"  # the manager's engine (or "tcp://manager:2375")
registry = ""                  # host:port this machine's engine pushes images to (required)
# node_registry = ""           # host:port the nodes pull from, when they know it by another name
node_socket = "/var/run/docker.sock"  # each node's engine socket, mounted into the runner
constraints = []               # every unit's node must meet these, e.g. ["node.role==worker"]
slots_per_node = 1             # units one node runs at a time
max_units = 0                  # units the whole swarm runs at a time (0: no limit but the slots)
unit_timeout_secs = 21600      # time limit of one attempt
placement_timeout_secs = 300   # how long a unit may wait for a node
max_attempts = 3               # attempts of one unit in one run (another node each time)
# runner_image = ""            # a runner image by digest; default: this etip on the base image
# runner_base = ""             # the runner's base; default: the bootstrap suite's base image
"#;

/// The `[swarm]` section of `path` (defaults when there is none).
pub fn load(path: Option<&Path>) -> anyhow::Result<SwarmSettings> {
    let Some(path) = path else {
        return Ok(SwarmSettings::default());
    };
    let bad = |e: &dyn std::fmt::Display| InputError(format!("{}: {e}", path.display()));
    let text = crate::input::read_text(path)?;
    let mut table: toml::Table = toml::from_str(&text).map_err(|e| bad(&e))?;
    match table.remove("swarm") {
        Some(v) => Ok(v
            .try_into()
            .map_err(|e| bad(&format_args!("[swarm]: {e}")))?),
        None => Ok(SwarmSettings::default()),
    }
}

/// Refuses settings no swarm run can use.
pub fn check(s: &SwarmSettings) -> Result<(), InputError> {
    let mut problems = Vec::new();
    if s.manager.is_empty() {
        problems.push("manager is empty".to_string());
    }
    if s.registry.is_empty() && s.runner_image.is_empty() {
        problems.push(
            "registry is empty: the nodes pull the runner and the ETIPs' images from a registry this machine pushes to (e.g. registry = \"127.0.0.1:5000\" with Debian's docker-registry, node_registry = the name the nodes reach it by)".to_string(),
        );
    }
    if s.slots_per_node == 0 {
        problems.push("slots_per_node must be at least 1".into());
    }
    if s.max_attempts == 0 {
        problems.push("max_attempts must be at least 1".into());
    }
    if s.unit_timeout_secs == 0 || s.placement_timeout_secs == 0 {
        problems.push("the time limits must be at least 1 second".into());
    }
    if let Err(e) = etip_swarm::place::parse_all(&s.constraints) {
        problems.push(e.to_string());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(InputError(format!("[swarm]: {}", problems.join("; "))))
    }
}

/// What a stage's swarm backend is for.
#[derive(Debug, Clone, PartialEq)]
pub struct SwarmPlan {
    pub settings: SwarmSettings,
    /// The `--config` file (the base image's suite).
    pub build_config: Option<std::path::PathBuf>,
    /// Namespace label of the services.
    pub namespace: String,
    /// The ledger's name: the stage and its output folder.
    pub ledger: String,
}

/// Connects to the swarm of `plan`, publishing the runner image when none is configured.
pub fn connect(plan: &SwarmPlan, progress: &dyn Progress) -> anyhow::Result<Swarm> {
    let s = &plan.settings;
    check(s)?;
    let rt = crate::runtime::get()?;
    let registry = if s.registry.is_empty() {
        None
    } else {
        let local = rt
            .block_on(etip_docker::Engine::connect())
            .context("this machine's engine (it pushes the images)")?;
        Some(Registry {
            local,
            push: s.registry.clone(),
            pull: if s.node_registry.is_empty() {
                s.registry.clone()
            } else {
                s.node_registry.clone()
            },
        })
    };
    let runner = match (&registry, s.runner_image.as_str()) {
        (_, image) if !image.is_empty() => image.to_string(),
        (Some(registry), _) => {
            let base = runner_base(plan, progress)?;
            let exe = std::env::current_exe().context("finding this etip binary")?;
            progress.note(&format!(
                "swarm: publishing the runner image (etip on {base})"
            ));
            rt.block_on(registry.publish_runner(&base, &exe))
                .context("publishing the runner image")?
        }
        (None, _) => unreachable_registry()?,
    };
    let mut cfg = SwarmConfig::new(&s.manager, runner);
    cfg.node_socket = s.node_socket.clone();
    cfg.constraints = s.constraints.clone();
    cfg.slots_per_node = s.slots_per_node;
    cfg.max_units = s.max_units;
    cfg.namespace = plan.namespace.clone();
    cfg.ledger = plan.ledger.clone();
    cfg.unit_timeout = Duration::from_secs(s.unit_timeout_secs);
    cfg.placement_timeout = Duration::from_secs(s.placement_timeout_secs);
    cfg.max_attempts = s.max_attempts;
    if let Ok(filter) = std::env::var("RUST_LOG") {
        cfg.env.push(format!("RUST_LOG={filter}"));
    }
    Swarm::connect(cfg, registry, rt.handle()).map_err(|e| match e {
        etip_swarm::SwarmError::Constraint(_) | etip_swarm::SwarmError::NoNode(_) => {
            InputError(e.to_string()).into()
        }
        other => anyhow::Error::from(other).context(format!("the swarm at {}", s.manager)),
    })
}

fn unreachable_registry() -> anyhow::Result<String> {
    Err(InputError("[swarm]: name a registry, or a runner_image the nodes can pull".into()).into())
}

/// The runner's base image: `runner_base`, or the bootstrap suite's base image (bootstrapped
/// when this machine has none yet).
fn runner_base(plan: &SwarmPlan, progress: &dyn Progress) -> anyhow::Result<String> {
    if !plan.settings.runner_base.is_empty() {
        return Ok(plan.settings.runner_base.clone());
    }
    let build = crate::records::build_config(plan.build_config.as_deref())?;
    let suite = build.bootstrap.suite.clone();
    let builder = crate::executor::docker_builder(build, std::path::PathBuf::from(".etip/build"))?;
    let img = builder
        .bootstrap_suite(&suite, false, &mut |line: &str| progress.message(line))
        .with_context(|| format!("the {suite} base image of the runner"))?;
    Ok(img.tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_etip_config_init_writes_reads_back_and_needs_a_registry() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("etip.toml");
        std::fs::write(&p, CONFIG_SECTION).unwrap();
        let s = load(Some(&p)).unwrap();
        assert_eq!(s, SwarmSettings::default());
        let err = check(&s).unwrap_err().to_string();
        assert!(err.contains("registry is empty"), "{err}");
        std::fs::write(
            &p,
            "[swarm]\nregistry = \"127.0.0.1:5000\"\nconstraints = [\"node.labels.etip.profile==small\"]\n",
        )
        .unwrap();
        let s = load(Some(&p)).unwrap();
        check(&s).unwrap();
        assert_eq!(s.slots_per_node, 1);
        // The build reads around the section.
        etip_build::config::BuildConfig::load(&p).unwrap();
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("etip.toml");
        std::fs::write(&p, "[swarm]\nregistri = \"x\"\n").unwrap();
        let err = load(Some(&p)).unwrap_err().to_string();
        assert!(err.contains("registri"), "{err}");
        let s = SwarmSettings {
            registry: "r:5000".into(),
            slots_per_node: 0,
            constraints: vec!["engine.labels.x==1".into()],
            ..SwarmSettings::default()
        };
        let err = check(&s).unwrap_err().to_string();
        assert!(
            err.contains("slots_per_node") && err.contains("engine.labels.x==1"),
            "{err}"
        );
    }
}
