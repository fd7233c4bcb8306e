//! One command in a fresh container ([`Engine::run`]): resource [`Limits`], the limited host
//! configuration every etip container gets, running with a time limit and collecting the logs.

use crate::{BuildContainer, Engine, EngineError, LABEL_KIND, SessionError, TmpFile};
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, LogsOptionsBuilder, StartContainerOptions, WaitContainerOptions,
};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Resource limits of a container.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// CPUs (fractional allowed).
    pub cpus: f64,
    /// Memory in bytes (swap disabled: memory-swap = memory).
    pub memory_bytes: i64,
    /// Wall-clock limit; the container is killed when it is exceeded.
    pub timeout: Duration,
    /// Maximum number of processes.
    pub pids: i64,
}

/// Host configuration of a container etip creates: the limits, swap off, and no network unless
/// enabled. "No network" is network mode `none` (a loopback interface only), never the container
/// config's `NetworkDisabled`: with that, the engine gives the container no `/etc/hosts`, the
/// image's (an empty file in a bootstrapped base) is all it has, and `localhost` does not resolve
/// — tests that start a server on localhost (psf/requests' `test_lowlevel`) then fail.
pub(crate) fn limited_host_config(limits: &Limits, network_enabled: bool) -> HostConfig {
    HostConfig {
        nano_cpus: Some((limits.cpus * 1e9) as i64),
        memory: Some(limits.memory_bytes),
        memory_swap: Some(limits.memory_bytes),
        pids_limit: Some(limits.pids),
        network_mode: Some(if network_enabled { "bridge" } else { "none" }.into()),
        ..Default::default()
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            cpus: 1.0,
            memory_bytes: 2 << 30,
            timeout: Duration::from_secs(600),
            pids: 1024,
        }
    }
}

/// A command to run in a fresh container.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub image: String,
    pub cmd: Vec<String>,
    pub env: Vec<String>,
    pub workdir: Option<String>,
    pub labels: HashMap<String, String>,
    pub limits: Limits,
    /// The network stays disabled unless this is set (never for untrusted code).
    pub network_enabled: bool,
    /// With `network_enabled`: a user-defined network instead of Docker's `bridge`.
    pub network: Option<String>,
    /// Files put under `/tmp` before the command starts (e.g. a CA bundle too large for a
    /// variable).
    pub files: Vec<TmpFile>,
}

impl RunSpec {
    /// A run of `cmd` in `image` with default limits and no network.
    pub fn new<I, S>(image: impl Into<String>, cmd: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        RunSpec {
            image: image.into(),
            cmd: cmd.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            workdir: None,
            labels: HashMap::new(),
            limits: Limits::default(),
            network_enabled: false,
            network: None,
            files: Vec::new(),
        }
    }

    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    pub fn workdir(mut self, dir: impl Into<String>) -> Self {
        self.workdir = Some(dir.into());
        self
    }

    pub fn env(mut self, kv: impl Into<String>) -> Self {
        self.env.push(kv.into());
        self
    }

    pub fn label(mut self, k: impl Into<String>, v: impl Into<String>) -> Self {
        self.labels.insert(k.into(), v.into());
        self
    }
}

/// The image [`Engine::run_and_commit`] makes of a run's container.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    /// `repo:tag`.
    pub reference: String,
    pub workdir: String,
    pub env: Vec<String>,
    pub cmd: Vec<String>,
    pub labels: HashMap<String, String>,
    pub comment: String,
}

/// What a container run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    /// Exit code; `None` when the run was killed on timeout.
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    pub duration: Duration,
}

impl Engine {
    /// Runs `spec.cmd` in a fresh container created from `spec.image` with the network disabled
    /// (unless `network_enabled`), the CPU/memory/pids limits and the time limit of `spec.limits`.
    /// The container is always removed, also on timeout or error.
    pub async fn run(&self, spec: &RunSpec) -> Result<RunOutput, EngineError> {
        self.run_inner(spec, None).await.map(|(out, _)| out)
    }

    /// Runs `spec` as [`Engine::run`] does and, when its command exits 0, commits the
    /// container's file system as the image `commit.reference` (with its working directory,
    /// environment, command and etip's labels) before the container is removed: the run's
    /// output and the image's id (`None` when the command failed).
    pub async fn run_and_commit(
        &self,
        spec: &RunSpec,
        commit: &Commit,
    ) -> Result<(RunOutput, Option<String>), EngineError> {
        self.run_inner(spec, Some(commit)).await
    }

    async fn run_inner(
        &self,
        spec: &RunSpec,
        commit: Option<&Commit>,
    ) -> Result<(RunOutput, Option<String>), EngineError> {
        let mut labels = spec.labels.clone();
        crate::own_labels(&mut labels, "a run container")?;
        labels
            .entry(LABEL_KIND.into())
            .or_insert_with(|| "run".into());
        let mut host_config = limited_host_config(&spec.limits, spec.network_enabled);
        if spec.network_enabled
            && let Some(n) = &spec.network
        {
            host_config.network_mode = Some(n.clone());
        }
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            cmd: Some(spec.cmd.clone()),
            env: Some(spec.env.clone()),
            working_dir: spec.workdir.clone(),
            labels: Some(labels),
            host_config: Some(host_config),
            ..Default::default()
        };
        let files = BuildContainer {
            files: spec.files.clone(),
            ..BuildContainer::default()
        };
        let invalid = |source: SessionError| EngineError::Session {
            id: spec.image.clone(),
            source,
        };
        files.check(&[]).map_err(|e| invalid(e.into()))?;
        let tar = files.files_tar().map_err(|e| invalid(e.into()))?;
        let id = self
            .create_from_body(None, body, "creating a container", &spec.image)
            .await?;
        let result = match self.upload_files(&id, tar).await {
            Ok(()) => self.run_created(&id, spec.limits.timeout).await,
            Err(e) => Err(e),
        };
        let result = match (result, commit) {
            (Ok(out), Some(c)) if out.exit_code == Some(0) => {
                self.commit(&id, c).await.map(|image| (out, Some(image)))
            }
            (result, _) => result.map(|out| (out, None)),
        };
        let removed = self.remove_container(&id).await;
        let out = result?;
        removed?;
        Ok(out)
    }

    /// Commits container `id`'s file system as the image `c.reference` with `c`'s
    /// configuration and etip's labels; the image's id.
    async fn commit(&self, id: &str, c: &Commit) -> Result<String, EngineError> {
        let (repo, tag) = match c.reference.rsplit_once(':') {
            Some((repo, tag)) if !tag.contains('/') => (repo, tag),
            _ => (c.reference.as_str(), "latest"),
        };
        let mut labels = c.labels.clone();
        crate::own_labels(&mut labels, "an image")?;
        let options = bollard::query_parameters::CommitContainerOptionsBuilder::new()
            .container(id)
            .repo(repo)
            .tag(tag)
            .comment(&c.comment)
            .build();
        let config = bollard::models::ContainerConfig {
            working_dir: Some(c.workdir.clone()),
            env: Some(c.env.clone()),
            cmd: Some(c.cmd.clone()),
            labels: Some(labels),
            ..Default::default()
        };
        self.docker
            .commit_container(options, config)
            .await
            .map(|r| r.id)
            .map_err(|e| EngineError::api("committing container", id, e))
    }

    /// Extracts `tar` at `/` of container `id` (nothing for an empty archive).
    pub(crate) async fn upload_files(&self, id: &str, tar: Vec<u8>) -> Result<(), EngineError> {
        if tar.iter().all(|b| *b == 0) {
            return Ok(());
        }
        let options = bollard::query_parameters::UploadToContainerOptionsBuilder::new()
            .path("/")
            .build();
        self.docker
            .upload_to_container(id, Some(options), bollard::body_full(tar.into()))
            .await
            .map_err(|e| EngineError::api("uploading files to", id, e))
    }

    pub(crate) async fn run_created(
        &self,
        id: &str,
        timeout: Duration,
    ) -> Result<RunOutput, EngineError> {
        let start = Instant::now();
        self.docker
            .start_container(id, None::<StartContainerOptions>)
            .await
            .map_err(|e| EngineError::api("starting container", id, e))?;
        let wait = async {
            let mut s = self.docker.wait_container(id, None::<WaitContainerOptions>);
            let mut code = None;
            while let Some(item) = s.next().await {
                match item {
                    Ok(r) => code = Some(r.status_code),
                    // A non-zero exit is reported as an error by bollard.
                    Err(bollard::errors::Error::DockerContainerWaitError { code: c, .. }) => {
                        code = Some(c)
                    }
                    Err(e) => return Err(EngineError::api("waiting for container", id, e)),
                }
            }
            Ok(code)
        };
        let (exit_code, timed_out) = match tokio::time::timeout(timeout, wait).await {
            Ok(code) => (code?, false),
            Err(_) => {
                let _ = self
                    .docker
                    .kill_container(id, None::<bollard::query_parameters::KillContainerOptions>)
                    .await;
                (None, true)
            }
        };
        let duration = start.elapsed();
        let (stdout, stderr) = self.logs(id).await?;
        Ok(RunOutput {
            exit_code,
            timed_out,
            stdout,
            stderr,
            duration,
        })
    }

    async fn logs(&self, id: &str) -> Result<(String, String), EngineError> {
        let options = LogsOptionsBuilder::new().stdout(true).stderr(true).build();
        let mut s = self.docker.logs(id, Some(options));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        while let Some(item) = s.next().await {
            match item.map_err(|e| EngineError::api("reading logs of container", id, e))? {
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

    /// Creates (does not start) a labelled container, e.g. to copy files out of an image.
    pub async fn create_container(
        &self,
        image: &str,
        name: Option<&str>,
        labels: HashMap<String, String>,
    ) -> Result<String, EngineError> {
        let mut labels = labels;
        crate::own_labels(&mut labels, "a container")?;
        let options = name.map(|n| CreateContainerOptionsBuilder::new().name(n).build());
        let body = ContainerCreateBody {
            image: Some(image.to_string()),
            cmd: Some(vec!["true".into()]),
            labels: Some(labels),
            network_disabled: Some(true),
            ..Default::default()
        };
        self.create_from_body(options, body, "creating a container", image)
            .await
    }
}
