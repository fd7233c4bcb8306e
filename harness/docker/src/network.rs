//! User-defined networks, service containers on them, and image export: what a mirror next to
//! etip's builds needs (a package index or Maven repository in a container that the env layer
//! reaches by name, `env_network = "<network>"`), and what the tests use to prove that builds
//! reach it and that images keep no secret.
//!
//! Networks etip creates carry [`LABEL_MANAGED`] and the caller's labels; removing one is the
//! caller's job (after its containers, [`Engine::remove_network`]). A service container
//! ([`Engine::start_service`]) is labelled like every container etip creates (kind `service`), so
//! [`Engine::clean`] removes a forgotten one.

use crate::{
    Engine, EngineError, LABEL_KIND, LABEL_MANAGED, Limits, SessionError, limited_host_config,
};
use bollard::models::{
    ContainerCreateBody, EndpointSettings, NetworkCreateRequest, NetworkingConfig,
};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, LogsOptionsBuilder, StartContainerOptions,
    UploadToContainerOptionsBuilder,
};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Value of [`LABEL_KIND`] on service containers.
pub const KIND_SERVICE: &str = "service";

/// A long-running container on a network ([`Engine::start_service`]).
#[derive(Debug, Clone)]
pub struct ServiceSpec {
    pub image: String,
    /// Container name, also its host name on `network`.
    pub name: String,
    /// A user-defined network (see [`crate::is_network_name`]).
    pub network: String,
    /// More host names of the container on `network` (e.g. a public repository's name, so that
    /// containers on an internal network reach the service under it).
    pub aliases: Vec<String>,
    pub cmd: Vec<String>,
    /// A tar extracted at `/` before the container starts (e.g. the files a server serves).
    pub files: Vec<u8>,
    pub labels: HashMap<String, String>,
    pub limits: Limits,
    /// The service is ready when its output holds this text (e.g. a server's "Serving HTTP").
    pub ready_when: String,
    /// How long to wait for `ready_when`.
    pub ready_timeout: Duration,
}

fn api(action: &'static str, object: &str) -> impl Fn(bollard::errors::Error) -> EngineError {
    let object = object.to_string();
    move |e| EngineError::api(action, object.clone(), e)
}

impl Engine {
    /// Creates a bridge network `name` labelled [`LABEL_MANAGED`] and `labels`; `internal`
    /// networks have no route out of the host (containers on them reach each other only).
    pub async fn create_network(
        &self,
        name: &str,
        internal: bool,
        labels: HashMap<String, String>,
    ) -> Result<String, EngineError> {
        let mut labels = labels;
        labels.insert(LABEL_MANAGED.into(), "true".into());
        let created = self
            .docker
            .create_network(NetworkCreateRequest {
                name: name.to_string(),
                driver: Some("bridge".into()),
                internal: Some(internal),
                labels: Some(labels),
                ..Default::default()
            })
            .await
            .map_err(api("creating network", name))?;
        Ok(created.id)
    }

    /// Whether a network `name` exists.
    pub async fn network_exists(&self, name: &str) -> Result<bool, EngineError> {
        match self.docker.inspect_network(name, None).await {
            Ok(_) => Ok(true),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(false),
            Err(e) => Err(EngineError::api("inspecting network", name, e)),
        }
    }

    /// Removes network `name` (its containers must be gone). A missing network is not an error.
    pub async fn remove_network(&self, name: &str) -> Result<(), EngineError> {
        match self.docker.remove_network(name).await {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(e) => Err(EngineError::api("removing network", name, e)),
        }
    }

    /// Creates the container of `spec` on its network, extracts `spec.files` at `/`, starts it
    /// and waits until its output holds `spec.ready_when`. Returns the container's id; on failure
    /// the container is removed. Remove it with [`Engine::remove_container`].
    pub async fn start_service(&self, spec: &ServiceSpec) -> Result<String, EngineError> {
        let mut labels = spec.labels.clone();
        crate::own_labels(&mut labels, "a service container")?;
        labels.insert(LABEL_KIND.into(), KIND_SERVICE.into());
        let mut host_config = limited_host_config(&spec.limits, true);
        host_config.network_mode = Some(spec.network.clone());
        let endpoint = EndpointSettings {
            aliases: (!spec.aliases.is_empty()).then(|| spec.aliases.clone()),
            ..Default::default()
        };
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            entrypoint: Some(Vec::new()),
            cmd: Some(spec.cmd.clone()),
            labels: Some(labels),
            host_config: Some(host_config),
            networking_config: Some(NetworkingConfig {
                endpoints_config: Some(HashMap::from([(spec.network.clone(), endpoint)])),
            }),
            ..Default::default()
        };
        let options = CreateContainerOptionsBuilder::new()
            .name(&spec.name)
            .build();
        let id = self
            .create_from_body(
                Some(options),
                body,
                "creating a service container",
                &spec.image,
            )
            .await?;
        match self.start_created_service(&id, spec).await {
            Ok(()) => Ok(id),
            Err(e) => {
                let _ = self.remove_container(&id).await;
                Err(e)
            }
        }
    }

    async fn start_created_service(&self, id: &str, spec: &ServiceSpec) -> Result<(), EngineError> {
        if !spec.files.is_empty() {
            let options = UploadToContainerOptionsBuilder::new().path("/").build();
            self.docker
                .upload_to_container(
                    id,
                    Some(options),
                    bollard::body_full(spec.files.clone().into()),
                )
                .await
                .map_err(api("uploading files to", id))?;
        }
        self.docker
            .start_container(id, None::<StartContainerOptions>)
            .await
            .map_err(api("starting container", id))?;
        let start = Instant::now();
        loop {
            let (out, err) = self.service_logs(id).await?;
            if out.contains(&spec.ready_when) || err.contains(&spec.ready_when) {
                return Ok(());
            }
            let running = self
                .docker
                .inspect_container(id, None)
                .await
                .map_err(api("inspecting container", id))?
                .state
                .and_then(|s| s.running)
                .unwrap_or(false);
            if !running || start.elapsed() > spec.ready_timeout {
                return Err(EngineError::Session {
                    id: spec.name.clone(),
                    source: SessionError::NotReady {
                        ended: if running { "timed out" } else { "exited" },
                        ready_when: spec.ready_when.clone(),
                        output: format!("{out}{err}"),
                    },
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The output of a container so far (stdout, stderr).
    async fn service_logs(&self, id: &str) -> Result<(String, String), EngineError> {
        let options = LogsOptionsBuilder::new().stdout(true).stderr(true).build();
        let mut s = self.docker.logs(id, Some(options));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        while let Some(item) = s.next().await {
            match item.map_err(api("reading logs of container", id))? {
                bollard::container::LogOutput::StdErr { message } => {
                    err.extend_from_slice(&message)
                }
                other => out.extend_from_slice(&other.into_bytes()),
            }
        }
        Ok((
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
        ))
    }

    /// The output of a container so far (stdout then stderr), e.g. a service's access log.
    pub async fn container_output(&self, id: &str) -> Result<String, EngineError> {
        let (out, err) = self.service_logs(id).await?;
        Ok(out + &err)
    }
}
