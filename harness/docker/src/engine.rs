//! The [`Engine`] handle: connecting to the engine, describing it and its host ([`EngineInfo`]),
//! and the container creation every other module goes through.

use crate::EngineError;
use bollard::Docker;
use bollard::models::ContainerCreateBody;
use std::time::Duration;

/// Facts about the engine and its host, for recording next to measurements ([`Engine::describe`]).
/// Fields the engine did not report are empty (or 0).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineInfo {
    /// Engine version (e.g. `20.10.24+dfsg1`).
    pub server_version: String,
    /// API version the engine speaks (its newest).
    pub api_version: String,
    pub kernel: String,
    /// The host's operating system (e.g. `Debian GNU/Linux 12 (bookworm)`).
    pub os: String,
    pub architecture: String,
    /// CPUs the engine sees.
    pub ncpu: i64,
    /// Memory of the host in bytes.
    pub mem_total: i64,
    pub storage_driver: String,
    /// `1` or `2`.
    pub cgroup_version: String,
    /// `cgroupfs` or `systemd`.
    pub cgroup_driver: String,
    /// The default OCI runtime (e.g. `runc`).
    pub runtime: String,
    /// Where the engine keeps images and containers (e.g. `/var/lib/docker`).
    pub root_dir: String,
}

impl EngineInfo {
    /// The facts as a JSON object (field names as in the struct).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "server_version": self.server_version,
            "api_version": self.api_version,
            "kernel": self.kernel,
            "os": self.os,
            "architecture": self.architecture,
            "ncpu": self.ncpu,
            "mem_total": self.mem_total,
            "storage_driver": self.storage_driver,
            "cgroup_version": self.cgroup_version,
            "cgroup_driver": self.cgroup_driver,
            "runtime": self.runtime,
            "root_dir": self.root_dir,
        })
    }
}

/// A connection to the Docker engine.
#[derive(Debug, Clone)]
pub struct Engine {
    pub(crate) docker: Docker,
}

impl Engine {
    /// Connects with the local defaults (`DOCKER_HOST` or `/var/run/docker.sock`), negotiates the API
    /// version and pings the engine.
    pub async fn connect() -> Result<Engine, EngineError> {
        let unreachable = |e: bollard::errors::Error| EngineError::Unreachable {
            detail: e.to_string(),
        };
        let docker = Docker::connect_with_local_defaults()
            .map_err(unreachable)?
            .with_timeout(Duration::from_secs(24 * 3600));
        let docker = docker.negotiate_version().await.map_err(unreachable)?;
        docker.ping().await.map_err(unreachable)?;
        Ok(Engine { docker })
    }

    /// The engine's version and its host's kernel, OS, CPUs, memory, storage driver and cgroup
    /// setup (the `/info` and `/version` endpoints).
    pub async fn describe(&self) -> Result<EngineInfo, EngineError> {
        let info = self
            .docker
            .info()
            .await
            .map_err(|e| EngineError::api("reading the engine's info", "the engine", e))?;
        let version = self
            .docker
            .version()
            .await
            .map_err(|e| EngineError::api("reading the engine's version", "the engine", e))?;
        Ok(EngineInfo {
            server_version: info.server_version.or(version.version).unwrap_or_default(),
            api_version: version.api_version.unwrap_or_default(),
            kernel: info
                .kernel_version
                .or(version.kernel_version)
                .unwrap_or_default(),
            os: info.operating_system.unwrap_or_default(),
            architecture: info.architecture.or(version.arch).unwrap_or_default(),
            ncpu: info.ncpu.unwrap_or(0),
            mem_total: info.mem_total.unwrap_or(0),
            storage_driver: info.driver.unwrap_or_default(),
            cgroup_version: info
                .cgroup_version
                .map(|v| v.to_string())
                .unwrap_or_default(),
            cgroup_driver: info
                .cgroup_driver
                .map(|v| v.to_string())
                .unwrap_or_default(),
            runtime: info.default_runtime.unwrap_or_default(),
            root_dir: info.docker_root_dir.unwrap_or_default(),
        })
    }

    /// The underlying bollard client, for calls this crate does not wrap.
    pub fn client(&self) -> &Docker {
        &self.docker
    }

    /// Creates a container from `body`; `what` and `image` name it in the error. Refused once the
    /// process is interrupted. The request runs as its own task, registered while in flight, so
    /// a signal's cleanup waits for it and removes the container even when it is created after
    /// the signal, or after the caller stopped waiting.
    pub(crate) async fn create_from_body(
        &self,
        options: Option<bollard::query_parameters::CreateContainerOptions>,
        body: ContainerCreateBody,
        what: &'static str,
        image: &str,
    ) -> Result<String, EngineError> {
        let registration =
            crate::interrupt::begin_create(what.strip_prefix("creating ").unwrap_or(what))?;
        let docker = self.docker.clone();
        let request = tokio::spawn(async move {
            let created = docker.create_container(options, body).await;
            if let Ok(c) = &created {
                crate::interrupt::created(crate::interrupt::Object::Container, &c.id);
            }
            drop(registration);
            created
        });
        let created = request
            .await
            .map_err(|e| EngineError::Lost {
                what,
                detail: e.to_string(),
            })?
            .map_err(|e| EngineError::api(what, image, e))?;
        Ok(created.id)
    }
}
