//! Docker Swarm through a manager's engine: one-shot job services that run a work unit on a node,
//! their tasks and logs, the nodes and their labels, and the removal of what etip created.
//!
//! A unit's service ([`UnitService`]) is a `replicated-job` with one completion and no restart: the
//! coordinator decides about retries, not the swarm. The unit's JSON travels as a Swarm *config*
//! (up to 1000 KB, mounted read-only at [`UNIT_FILE`]), not on the command line. The node's own
//! engine socket is bind-mounted into the runner's container, so the runner starts the timed
//! containers through that engine, pinned to whole cores as on one machine: Swarm cannot pin a
//! service to a CPU set (moby/moby#30477), so a service never times anything itself. The socket
//! gives the runner control of the node's engine: the runner image must be etip's own.
//!
//! Every service and config carries [`LABEL_MANAGED`], [`LABEL_KIND`] = [`KIND_UNIT`] and the
//! caller's labels; [`Engine::remove_swarm_objects`] removes those matching a label filter
//! (`etip clean`).

use crate::{Engine, EngineError, LABEL_KIND, LABEL_MANAGED};
use base64::Engine as _;
use bollard::Docker;
use bollard::models::{
    ConfigSpec, Mount, MountType, NodeSpecAvailabilityEnum, NodeState, ServiceSpec,
    ServiceSpecMode, ServiceSpecModeReplicatedJob, TaskSpec, TaskSpecContainerSpec,
    TaskSpecContainerSpecConfigs, TaskSpecContainerSpecFile1, TaskSpecPlacement,
    TaskSpecRestartPolicy, TaskSpecRestartPolicyConditionEnum, TaskState,
};
use bollard::query_parameters::{
    ListConfigsOptionsBuilder, ListServicesOptionsBuilder, ListTasksOptionsBuilder,
    LogsOptionsBuilder,
};
use futures_util::StreamExt;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// Value of [`LABEL_KIND`] on a unit's service and config.
pub const KIND_UNIT: &str = "unit";
/// Where the unit's JSON is mounted in the runner's container.
pub const UNIT_FILE: &str = "/etip/unit.json";
/// Where the node's engine socket is mounted in the runner's container.
pub const NODE_SOCKET: &str = "/var/run/docker.sock";

/// A work unit's job service.
#[derive(Debug, Clone, Default)]
pub struct UnitService {
    /// Service name (also the config's, with `-unit`): at most 63 characters.
    pub name: String,
    /// The runner image, as the nodes pull it.
    pub image: String,
    pub command: Vec<String>,
    /// `KEY=value`; values may use Swarm's templates (`{{.Node.ID}}`).
    pub env: Vec<String>,
    pub labels: HashMap<String, String>,
    /// Placement constraints (`node.labels.etip.profile==small`, `node.id!=...`).
    pub constraints: Vec<String>,
    /// The node's engine socket as a path on the node (templates allowed), mounted at
    /// [`NODE_SOCKET`].
    pub node_socket: String,
    /// The unit's JSON, mounted at [`UNIT_FILE`].
    pub unit: Vec<u8>,
}

/// Where a task stands, as the coordinator reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskPhase {
    /// Not yet on a node (no node accepts it yet: `message` says why).
    Waiting,
    /// Placed on a node, preparing or running.
    Running,
    /// Exited 0.
    Complete,
    /// Ended without completing: failed, rejected (e.g. its image could not be pulled), shut
    /// down, orphaned or removed.
    Ended,
}

/// One task of a unit's service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskView {
    pub id: String,
    pub node: Option<String>,
    pub phase: TaskPhase,
    /// The state's name as the engine gives it (`running`, `rejected`, ...).
    pub state: String,
    /// The engine's message and error text.
    pub message: String,
    pub exit_code: Option<i64>,
}

/// A node of the swarm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwarmNode {
    pub id: String,
    pub hostname: String,
    /// Ready and active: the swarm places tasks on it.
    pub usable: bool,
    /// `ready`, `down`, `disconnected`, `unknown`.
    pub state: String,
    pub manager: bool,
    pub labels: BTreeMap<String, String>,
    pub engine_version: String,
    pub architecture: String,
    pub addr: String,
}

/// A unit service found on the swarm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceView {
    pub id: String,
    pub name: String,
    pub labels: BTreeMap<String, String>,
}

fn api(action: &'static str, object: &str) -> impl Fn(bollard::errors::Error) -> EngineError {
    let object = object.to_string();
    move |e| EngineError::api(action, object.clone(), e)
}

fn not_found(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

fn config_name(service: &str) -> String {
    format!("{service}-unit")
}

impl Engine {
    /// Connects to the engine at `endpoint` (`unix:///path`, `tcp://host:port` or
    /// `http://host:port`), negotiates the API version and pings it.
    pub async fn connect_to(endpoint: &str) -> Result<Engine, EngineError> {
        let unreachable = |e: bollard::errors::Error| EngineError::Unreachable {
            detail: format!("{endpoint}: {e}"),
        };
        let timeout = 120;
        let docker = if let Some(path) = endpoint.strip_prefix("unix://") {
            Docker::connect_with_unix(path, timeout, bollard::API_DEFAULT_VERSION)
        } else if endpoint.starts_with("tcp://") || endpoint.starts_with("http://") {
            Docker::connect_with_http(endpoint, timeout, bollard::API_DEFAULT_VERSION)
        } else {
            return Err(EngineError::Unreachable {
                detail: format!(
                    "{endpoint}: not an engine address (unix:///path or tcp://host:port)"
                ),
            });
        }
        .map_err(unreachable)?;
        let docker = docker.negotiate_version().await.map_err(unreachable)?;
        docker.ping().await.map_err(unreachable)?;
        Ok(Engine { docker })
    }

    /// Whether this engine is a swarm manager (it can create services).
    pub async fn is_swarm_manager(&self) -> Result<bool, EngineError> {
        let info = self
            .docker
            .info()
            .await
            .map_err(api("reading the engine's info", "the engine"))?;
        Ok(info
            .swarm
            .and_then(|s| s.control_available)
            .unwrap_or(false))
    }

    /// Creates the unit's config and its job service; returns the service's id.
    pub async fn create_unit_service(&self, spec: &UnitService) -> Result<String, EngineError> {
        let mut labels = spec.labels.clone();
        labels.insert(LABEL_MANAGED.into(), "true".into());
        labels.insert(LABEL_KIND.into(), KIND_UNIT.into());
        let config = config_name(&spec.name);
        let created = self
            .docker
            .create_config(ConfigSpec {
                name: Some(config.clone()),
                labels: Some(labels.clone()),
                data: Some(base64::engine::general_purpose::STANDARD.encode(&spec.unit)),
                templating: None,
            })
            .await
            .map_err(api("creating the unit's config", &config))?;
        let mounts = vec![Mount {
            target: Some(NODE_SOCKET.into()),
            source: Some(spec.node_socket.clone()),
            typ: Some(MountType::BIND),
            ..Mount::default()
        }];
        let container = TaskSpecContainerSpec {
            image: Some(spec.image.clone()),
            labels: Some(labels.clone()),
            command: Some(spec.command.clone()),
            env: Some(spec.env.clone()),
            mounts: Some(mounts),
            configs: Some(vec![TaskSpecContainerSpecConfigs {
                file: Some(TaskSpecContainerSpecFile1 {
                    name: Some(UNIT_FILE.into()),
                    uid: Some("0".into()),
                    gid: Some("0".into()),
                    mode: Some(0o444),
                }),
                config_id: Some(created.id),
                config_name: Some(config.clone()),
                runtime: None,
            }]),
            ..TaskSpecContainerSpec::default()
        };
        let service = ServiceSpec {
            name: Some(spec.name.clone()),
            labels: Some(labels),
            task_template: Some(TaskSpec {
                container_spec: Some(container),
                restart_policy: Some(TaskSpecRestartPolicy {
                    condition: Some(TaskSpecRestartPolicyConditionEnum::NONE),
                    max_attempts: Some(0),
                    ..TaskSpecRestartPolicy::default()
                }),
                placement: Some(TaskSpecPlacement {
                    constraints: Some(spec.constraints.clone()),
                    ..TaskSpecPlacement::default()
                }),
                ..TaskSpec::default()
            }),
            mode: Some(ServiceSpecMode {
                replicated_job: Some(ServiceSpecModeReplicatedJob {
                    max_concurrent: Some(1),
                    total_completions: Some(1),
                }),
                ..ServiceSpecMode::default()
            }),
            ..ServiceSpec::default()
        };
        match self.docker.create_service(service, None).await {
            Ok(r) => Ok(r.id.unwrap_or_default()),
            Err(e) => {
                // The config would otherwise stay behind.
                let _ = self.docker.delete_config(&config).await;
                Err(EngineError::api(
                    "creating the unit's service",
                    &spec.name,
                    e,
                ))
            }
        }
    }

    /// The tasks of service `service` (empty when it is gone).
    pub async fn service_tasks(&self, service: &str) -> Result<Vec<TaskView>, EngineError> {
        let filters = HashMap::from([("service", vec![service])]);
        let options = ListTasksOptionsBuilder::new().filters(&filters).build();
        let tasks = match self.docker.list_tasks(Some(options)).await {
            Ok(t) => t,
            Err(e) if not_found(&e) => return Ok(Vec::new()),
            Err(e) => return Err(EngineError::api("listing tasks", service, e)),
        };
        Ok(tasks
            .into_iter()
            .map(|t| {
                let status = t.status.unwrap_or_default();
                let state = status.state.unwrap_or(TaskState::NEW);
                let phase = match state {
                    TaskState::NEW | TaskState::ALLOCATED | TaskState::PENDING => {
                        TaskPhase::Waiting
                    }
                    TaskState::ASSIGNED
                    | TaskState::ACCEPTED
                    | TaskState::PREPARING
                    | TaskState::READY
                    | TaskState::STARTING
                    | TaskState::RUNNING => TaskPhase::Running,
                    TaskState::COMPLETE => TaskPhase::Complete,
                    TaskState::SHUTDOWN
                    | TaskState::FAILED
                    | TaskState::REJECTED
                    | TaskState::REMOVE
                    | TaskState::ORPHANED => TaskPhase::Ended,
                };
                let message = [status.message, status.err]
                    .into_iter()
                    .flatten()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(": ");
                TaskView {
                    id: t.id.unwrap_or_default(),
                    node: t.node_id.filter(|n| !n.is_empty()),
                    phase,
                    state: state.to_string(),
                    message,
                    exit_code: status.container_status.and_then(|c| c.exit_code),
                }
            })
            .collect())
    }

    /// What the service's tasks wrote to standard output (`stdout`) or standard error, as the
    /// manager collects it from the node (empty lines dropped; the node must be reachable).
    pub async fn service_output(
        &self,
        service: &str,
        stdout: bool,
        timeout: Duration,
    ) -> Result<String, EngineError> {
        let options = LogsOptionsBuilder::new()
            .stdout(stdout)
            .stderr(!stdout)
            .follow(false)
            .build();
        let read = async {
            let mut stream = self.docker.service_logs(service, Some(options));
            let mut text = String::new();
            while let Some(item) = stream.next().await {
                let item = item.map_err(api("reading the service's log", service))?;
                text.push_str(&String::from_utf8_lossy(&item.into_bytes()));
            }
            Ok::<_, EngineError>(text)
        };
        tokio::time::timeout(timeout, read)
            .await
            .map_err(|_| EngineError::Unreachable {
                detail: format!(
                    "the log of {service} did not arrive within {}s",
                    timeout.as_secs()
                ),
            })?
    }

    /// Removes the unit service `name` and its config; a missing one is not an error.
    pub async fn remove_unit_service(&self, name: &str) -> Result<(), EngineError> {
        match self.docker.delete_service(name).await {
            Ok(()) => {}
            Err(e) if not_found(&e) => {}
            Err(e) => return Err(EngineError::api("removing the unit's service", name, e)),
        }
        let config = config_name(name);
        // The config is in use until the service's tasks are gone: a few tries.
        for attempt in 0..20 {
            match self.docker.delete_config(&config).await {
                Ok(()) => return Ok(()),
                Err(e) if not_found(&e) => return Ok(()),
                Err(_) if attempt < 19 => tokio::time::sleep(Duration::from_millis(250)).await,
                Err(e) => return Err(EngineError::api("removing the unit's config", &config, e)),
            }
        }
        Ok(())
    }

    /// The unit services whose labels match every `key=value` of `labels`.
    pub async fn unit_services(&self, labels: &[String]) -> Result<Vec<ServiceView>, EngineError> {
        let mut all = vec![format!("{LABEL_KIND}={KIND_UNIT}")];
        all.extend(labels.iter().cloned());
        let filters = HashMap::from([("label", all.iter().map(String::as_str).collect())]);
        let options = ListServicesOptionsBuilder::new().filters(&filters).build();
        let services = self
            .docker
            .list_services(Some(options))
            .await
            .map_err(api("listing services", "the swarm"))?;
        Ok(services
            .into_iter()
            .map(|s| {
                let spec = s.spec.unwrap_or_default();
                ServiceView {
                    id: s.id.unwrap_or_default(),
                    name: spec.name.unwrap_or_default(),
                    labels: spec.labels.unwrap_or_default().into_iter().collect(),
                }
            })
            .collect())
    }

    /// The swarm's nodes.
    pub async fn swarm_nodes(&self) -> Result<Vec<SwarmNode>, EngineError> {
        let nodes = self
            .docker
            .list_nodes(None::<bollard::query_parameters::ListNodesOptions>)
            .await
            .map_err(api("listing nodes", "the swarm"))?;
        Ok(nodes
            .into_iter()
            .map(|n| {
                let spec = n.spec.unwrap_or_default();
                let status = n.status.unwrap_or_default();
                let state = status.state.unwrap_or(NodeState::UNKNOWN);
                let description = n.description.unwrap_or_default();
                let active = spec
                    .availability
                    .unwrap_or(NodeSpecAvailabilityEnum::ACTIVE)
                    == NodeSpecAvailabilityEnum::ACTIVE;
                SwarmNode {
                    id: n.id.unwrap_or_default(),
                    hostname: description.hostname.unwrap_or_default(),
                    usable: state == NodeState::READY && active,
                    state: state.to_string(),
                    manager: n.manager_status.is_some(),
                    labels: spec.labels.unwrap_or_default().into_iter().collect(),
                    engine_version: description
                        .engine
                        .and_then(|e| e.engine_version)
                        .unwrap_or_default(),
                    architecture: description
                        .platform
                        .and_then(|p| p.architecture)
                        .unwrap_or_default(),
                    addr: status.addr.unwrap_or_default(),
                }
            })
            .collect())
    }

    /// Removes every unit service and config etip created on the swarm whose labels match every
    /// `key=value` of `labels`; returns how many services were removed.
    pub async fn remove_swarm_objects(&self, labels: &[String]) -> Result<usize, EngineError> {
        let services = self.unit_services(labels).await?;
        for s in &services {
            self.remove_unit_service(&s.name).await?;
        }
        // Configs left by a service that was removed by hand.
        let mut all = vec![
            format!("{LABEL_MANAGED}=true"),
            format!("{LABEL_KIND}={KIND_UNIT}"),
        ];
        all.extend(labels.iter().cloned());
        let filters = HashMap::from([("label", all.iter().map(String::as_str).collect())]);
        let options = ListConfigsOptionsBuilder::new().filters(&filters).build();
        let configs = self
            .docker
            .list_configs(Some(options))
            .await
            .map_err(api("listing configs", "the swarm"))?;
        for c in configs {
            if let Some(id) = c.id {
                match self.docker.delete_config(&id).await {
                    Ok(()) => {}
                    Err(e) if not_found(&e) => {}
                    Err(e) => return Err(EngineError::api("removing a unit's config", &id, e)),
                }
            }
        }
        Ok(services.len())
    }
}
