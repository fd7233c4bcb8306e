//! etip's work units on Docker Swarm: the [`Swarm`] backend (`--backend swarm`).
//!
//! The coordinator (the `etip` process the user started) keeps the ledger in its store, as with
//! threads; each unit becomes a one-shot job service on a node of an existing swarm, driven
//! through the manager's engine:
//!
//! 1. **Place** ([`place`]): the coordinator picks a usable node that meets the run's and the
//!    unit's constraints (`node.labels.etip.profile==small`) and has a free slot (one unit per node
//!    by default: timed work never shares a machine), and pins the service to it.
//! 2. **Run**: the service runs etip's runner image (`etip unit run`) with the unit's JSON as a
//!    Swarm config and the node's engine socket mounted; the runner starts the measurement
//!    containers through the node's own engine, whole cores pinned, exactly as on one machine —
//!    Swarm cannot pin a service to a CPU set (moby/moby#30477), so the service itself times
//!    nothing.
//! 3. **Collect**: the runner prints its reply ([`etip_core::unit::wire`]) on standard output;
//!    the coordinator reads it from the task's log through the manager, checks it (schema, unit
//!    id, key, digest), records the node (its labels from the manager) in the record and writes
//!    the ledger. The service and its config are removed.
//!
//! Faults are the coordinator's to handle, each attempt recorded in the ledger: a node that goes
//! down, a task the node rejects (an image it cannot pull), a task past its time limit, a log
//! without a believable reply — the unit is run again on another node, at most
//! [`SwarmConfig::max_attempts`] times in one run. A unit is finished in the ledger once; a
//! coordinator killed and started again adopts the services it left (a unit that completed
//! meanwhile is collected, not run again) and removes the rest. Infrastructure failures are
//! never a unit's output: stages keep them apart from what they find about an instance.
//!
//! Images reach the nodes through a registry ([`publish`]): pushed once from the coordinator's
//! engine, named by digest in the unit so every node runs the same bytes.

pub mod place;
pub mod publish;
mod run;

use etip_core::cancel::CancelToken;
use etip_core::unit::{Backend, BackendError, Ledger, RunSummary, UnitEvent, UnitRunner, WorkUnit};
use etip_docker::Engine;
use place::Constraint;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Label on every unit service: the namespace of the run (as on containers).
pub const LABEL_NAMESPACE: &str = etip_docker::LABEL_NAMESPACE;
/// Label on every unit service: which ledger it belongs to (the stage's output folder).
pub const LABEL_LEDGER: &str = "etip.ledger";
/// Label on every unit service: a digest of the unit's id.
pub const LABEL_UNIT: &str = "etip.unit";
/// Label on every unit service: a digest of the unit's key.
pub const LABEL_KEY: &str = "etip.key";

/// How the swarm runs units.
#[derive(Debug, Clone, PartialEq)]
pub struct SwarmConfig {
    /// The manager's engine: `unix:///path/docker.sock` or `tcp://host:2375`.
    pub manager: String,
    /// The runner image as the nodes pull it (`registry/etip/runner@sha256:...`).
    pub runner_image: String,
    /// Each node's engine socket, as a path on the node (Swarm templates such as `{{.Node.ID}}`
    /// allowed): mounted into the runner's container.
    pub node_socket: String,
    /// Where every unit may run (`node.role==worker`, `node.labels.etip.pool==bench`).
    pub constraints: Vec<String>,
    /// Units one node runs at a time.
    pub slots_per_node: usize,
    /// Units the whole swarm runs at a time (0: as many as the nodes' slots): a share of a
    /// cluster used by others, or timed work kept from sharing one machine's cores when the
    /// nodes are engines of one machine.
    pub max_units: usize,
    /// Namespace label of the services (as `--namespace` labels containers).
    pub namespace: String,
    /// The ledger's name (stage and output folder): services of another ledger are never
    /// touched.
    pub ledger: String,
    /// Time limit of one attempt, from its service's creation.
    pub unit_timeout: Duration,
    /// How long a unit may wait for a node (none usable meets its constraints, or the swarm does
    /// not place it).
    pub placement_timeout: Duration,
    /// Attempts of one unit in one run.
    pub max_attempts: u32,
    /// How often the coordinator looks at the swarm.
    pub poll: Duration,
    /// The runner's command; the unit's file is appended.
    pub command: Vec<String>,
    /// More environment of the runner (`RUST_LOG=info`).
    pub env: Vec<String>,
}

impl SwarmConfig {
    /// A configuration with etip's defaults for everything but the manager and the runner image.
    pub fn new(manager: impl Into<String>, runner_image: impl Into<String>) -> SwarmConfig {
        SwarmConfig {
            manager: manager.into(),
            runner_image: runner_image.into(),
            node_socket: "/var/run/docker.sock".into(),
            constraints: Vec::new(),
            slots_per_node: 1,
            max_units: 0,
            namespace: "default".into(),
            ledger: String::new(),
            unit_timeout: Duration::from_secs(6 * 3600),
            placement_timeout: Duration::from_secs(300),
            max_attempts: 3,
            poll: Duration::from_millis(500),
            command: vec!["etip".into(), "unit".into(), "run".into(), "--unit".into()],
            env: Vec::new(),
        }
    }
}

/// The swarm could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SwarmError {
    #[error(transparent)]
    Engine(#[from] etip_docker::EngineError),
    #[error(transparent)]
    Constraint(#[from] place::ConstraintError),
    #[error(
        "{0} is not a swarm manager: run the units through a manager's engine (`docker swarm init`, or a manager's address)"
    )]
    NotManager(String),
    #[error("no usable node of the swarm meets {0}")]
    NoNode(String),
    #[error(transparent)]
    Publish(#[from] publish::PublishError),
}

/// The swarm backend: units as job services placed by the coordinator.
pub struct Swarm {
    cfg: SwarmConfig,
    constraints: Vec<Constraint>,
    manager: Engine,
    rt: tokio::runtime::Handle,
    registry: Option<publish::Registry>,
}

impl Swarm {
    /// Connects to the manager of `cfg`, checks it is one and that some usable node meets the
    /// run's constraints. `registry` publishes the units' images (required when they have any).
    pub fn connect(
        cfg: SwarmConfig,
        registry: Option<publish::Registry>,
        rt: &tokio::runtime::Handle,
    ) -> Result<Swarm, SwarmError> {
        let constraints = place::parse_all(&cfg.constraints)?;
        let manager = rt.block_on(Engine::connect_to(&cfg.manager))?;
        if !rt.block_on(manager.is_swarm_manager())? {
            return Err(SwarmError::NotManager(cfg.manager.clone()));
        }
        let nodes = rt.block_on(manager.swarm_nodes())?;
        if !nodes
            .iter()
            .any(|n| n.usable && place::meets(n, &constraints))
        {
            return Err(SwarmError::NoNode(describe(&cfg.constraints)));
        }
        Ok(Swarm {
            cfg,
            constraints,
            manager,
            rt: rt.clone(),
            registry,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SwarmConfig {
        &self.cfg
    }

    /// Removes every unit service (and its config) of this swarm's namespace, of any ledger;
    /// returns how many services were removed.
    pub fn clean(&self) -> Result<usize, SwarmError> {
        let labels = [format!("{LABEL_NAMESPACE}={}", self.cfg.namespace)];
        Ok(self
            .rt
            .block_on(self.manager.remove_swarm_objects(&labels))?)
    }
}

fn describe(constraints: &[String]) -> String {
    if constraints.is_empty() {
        "no constraint (every node is down or drained)".into()
    } else {
        constraints.join(", ")
    }
}

/// The first 16 hex digits of SHA-256 of `text`: a label value.
pub(crate) fn short_digest(text: &str) -> String {
    let d = hex::encode(Sha256::digest(text.as_bytes()));
    d[..16].to_string()
}

impl Backend for Swarm {
    fn name(&self) -> &'static str {
        "swarm"
    }

    fn prepare(&self, units: &mut [WorkUnit]) -> Result<(), BackendError> {
        let wanted: Vec<&String> = units.iter().flat_map(|u| &u.images).collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let Some(registry) = &self.registry else {
            return Err(BackendError::Backend {
                backend: "swarm",
                detail: format!(
                    "the units run images built on this machine ({} first): name the registry the nodes pull from (`[swarm] registry`, `--registry`)",
                    wanted[0]
                ),
            });
        };
        let published = self
            .rt
            .block_on(registry.publish_all(wanted.into_iter().cloned().collect()))
            .map_err(|e| BackendError::Backend {
                backend: "swarm",
                detail: e.to_string(),
            })?;
        for unit in units {
            publish::rename(unit, &published);
        }
        Ok(())
    }

    fn run(
        &self,
        units: &[WorkUnit],
        _runner: &dyn UnitRunner,
        ledger: &mut dyn Ledger,
        cancel: &CancelToken,
        events: &mut dyn FnMut(UnitEvent<'_>),
    ) -> Result<RunSummary, BackendError> {
        run::Coordinator::new(self, units, ledger, events).run(cancel)
    }
}
