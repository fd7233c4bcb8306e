//! Docker engine access for etip, through the engine's HTTP API (bollard) only.
//!
//! [`Engine`] wraps one connection and offers exactly what the harness needs:
//!
//! - import a root filesystem tar as an image ([`Engine::import_rootfs`]),
//! - build an image from a tar context ([`Engine::build_image`]), network disabled by default,
//! - inspect, tag, list and remove images and containers by label,
//! - run a command in a fresh container with a disabled network, CPU/memory limits and a time limit,
//!   collecting its exit code and logs and always removing the container ([`Engine::run`]).
//!
//! Every image and container etip creates carries the label [`LABEL_MANAGED`]` = "true"` plus
//! `etip.kind` and `etip.namespace`, so [`Engine::clean`] can find and remove them.
//!
//! All methods are `async`; callers without a runtime can create one with `tokio`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), etip_docker::EngineError> {
//! use etip_docker::{Engine, RunSpec, Limits};
//! let engine = Engine::connect().await?;
//! let out = engine
//!     .run(&RunSpec::new("etip/base:bookworm-0123456789ab", ["true"]).limits(Limits::default()))
//!     .await?;
//! assert_eq!(out.exit_code, Some(0));
//! # Ok(()) }
//! ```

use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    BuildImageOptionsBuilder, CreateContainerOptionsBuilder, CreateImageOptionsBuilder,
    ListContainersOptionsBuilder, ListImagesOptionsBuilder, LogsOptionsBuilder,
    RemoveContainerOptionsBuilder, RemoveImageOptionsBuilder, StartContainerOptions,
    TagImageOptionsBuilder, WaitContainerOptions,
};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Label present (value `"true"`) on every image and container etip creates.
pub const LABEL_MANAGED: &str = "etip.managed";
/// Label with the kind of object: `base`, `env`, `instance` or `run`.
pub const LABEL_KIND: &str = "etip.kind";
/// Label with the namespace (lets tests and users separate their objects).
pub const LABEL_NAMESPACE: &str = "etip.namespace";

/// Errors from the Docker engine, each saying what failed and on which object.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(
        "the Docker engine is unreachable ({detail}): start dockerd or point DOCKER_HOST at a running engine"
    )]
    Unreachable { detail: String },
    #[error("importing root filesystem as image {tag} failed: {detail}")]
    Import { tag: String, detail: String },
    #[error("building image {tag} failed: {detail}")]
    Build {
        tag: String,
        detail: String,
        /// Exit code of the failed `RUN` step when the engine reported one.
        exit_code: Option<i64>,
        /// The build output up to the failure.
        log: String,
    },
    #[error("reading the build context {path}: {detail}")]
    Context { path: String, detail: String },
    #[error("building image {tag} timed out after {secs} s")]
    BuildTimeout { tag: String, secs: u64, log: String },
    #[error("{action} failed on {object}: {source}")]
    Api {
        action: &'static str,
        object: String,
        #[source]
        source: bollard::errors::Error,
    },
}

impl EngineError {
    fn api(
        action: &'static str,
        object: impl Into<String>,
        source: bollard::errors::Error,
    ) -> Self {
        EngineError::Api {
            action,
            object: object.into(),
            source,
        }
    }
}

/// Facts about one image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageInfo {
    pub id: String,
    /// Total size in bytes (all layers).
    pub size: i64,
    pub tags: Vec<String>,
    pub labels: HashMap<String, String>,
}

/// One labelled object found by [`Engine::list_images`] / [`Engine::list_containers`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labelled {
    pub id: String,
    /// Tags (images) or names (containers).
    pub names: Vec<String>,
    pub labels: HashMap<String, String>,
}

/// An image build from a tar context.
#[derive(Debug, Clone)]
pub struct BuildSpec {
    /// Full tag (`repo:tag`).
    pub tag: String,
    /// Path of the Dockerfile inside the context.
    pub dockerfile: String,
    pub labels: HashMap<String, String>,
    /// Network mode of the build's `RUN` steps; `"none"` (the default) keeps builds offline.
    pub network: String,
    /// Time limit of the whole build.
    pub timeout: Duration,
}

/// An image layer built by running a command in one container ([`Engine::build_layer`]).
#[derive(Debug, Clone)]
pub struct LayerSpec {
    /// Image the layer is built on.
    pub parent: String,
    /// Full tag of the new image (`repo:tag`).
    pub tag: String,
    /// The command that builds the layer (after the context is extracted at `/`).
    pub cmd: Vec<String>,
    pub labels: HashMap<String, String>,
    /// Working directory of the new image.
    pub workdir: String,
    /// Resource and time limits of the build.
    pub limits: Limits,
    /// Network for the build; off unless set.
    pub network_enabled: bool,
}

/// The tar extracted at `/` before a layer's command runs: in memory, or a file streamed to the
/// engine in chunks (for large source trees).
#[derive(Debug, Clone)]
pub enum LayerContext {
    Bytes(Vec<u8>),
    File(std::path::PathBuf),
}

impl From<Vec<u8>> for LayerContext {
    fn from(v: Vec<u8>) -> Self {
        LayerContext::Bytes(v)
    }
}

impl From<std::path::PathBuf> for LayerContext {
    fn from(p: std::path::PathBuf) -> Self {
        LayerContext::File(p)
    }
}

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

/// Host configuration of a container etip creates: the limits, swap off, and no network unless enabled.
fn limited_host_config(limits: &Limits, network_enabled: bool) -> HostConfig {
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

/// What [`Engine::clean`] removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CleanReport {
    pub containers: Vec<String>,
    pub images: Vec<String>,
}

/// Which labelled objects [`Engine::clean`] removes.
#[derive(Debug, Clone, Default)]
pub struct CleanFilter {
    /// Only objects of this namespace (all namespaces when `None`).
    pub namespace: Option<String>,
    /// Image kinds to keep (e.g. `base`).
    pub keep_kinds: Vec<String>,
}

/// A connection to the Docker engine.
#[derive(Debug, Clone)]
pub struct Engine {
    docker: Docker,
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

    /// The underlying bollard client, for calls this crate does not wrap.
    pub fn client(&self) -> &Docker {
        &self.docker
    }

    /// Inspects an image; `Ok(None)` when it does not exist.
    pub async fn image(&self, name: &str) -> Result<Option<ImageInfo>, EngineError> {
        match self.docker.inspect_image(name).await {
            Ok(img) => Ok(Some(ImageInfo {
                id: img.id.unwrap_or_default(),
                size: img.size.unwrap_or(0),
                tags: img.repo_tags.unwrap_or_default(),
                labels: img.config.and_then(|c| c.labels).unwrap_or_default(),
            })),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(e) => Err(EngineError::api("inspecting image", name, e)),
        }
    }

    /// Imports a root filesystem (an uncompressed tar stream) as image `repo:tag`, applying
    /// Dockerfile `changes` (`LABEL`, `ENV`, `CMD`, ...). Returns the new image's id.
    pub async fn import_rootfs<S>(
        &self,
        rootfs_tar: S,
        repo: &str,
        tag: &str,
        changes: Vec<String>,
    ) -> Result<String, EngineError>
    where
        S: Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
    {
        let full = format!("{repo}:{tag}");
        let options = CreateImageOptionsBuilder::new()
            .from_src("-")
            .repo(repo)
            .tag(tag)
            .changes(changes)
            .build();
        let mut stream = self.docker.create_image(
            Some(options),
            Some(bollard::body_try_stream(rootfs_tar)),
            None,
        );
        while let Some(item) = stream.next().await {
            item.map_err(|e| EngineError::Import {
                tag: full.clone(),
                detail: e.to_string(),
            })?;
        }
        let info = self
            .image(&full)
            .await?
            .ok_or_else(|| EngineError::Import {
                tag: full.clone(),
                detail: "the engine reported success but the image does not exist".into(),
            })?;
        Ok(info.id)
    }

    /// Builds an image from a tar context with the classic builder. Each output line of the build goes
    /// to `on_log`. Returns the new image's id.
    pub async fn build_image(
        &self,
        spec: &BuildSpec,
        context_tar: Vec<u8>,
        on_log: &mut (dyn FnMut(&str) + Send),
    ) -> Result<String, EngineError> {
        let options = BuildImageOptionsBuilder::new()
            .dockerfile(&spec.dockerfile)
            .t(&spec.tag)
            .rm(true)
            .forcerm(true)
            .labels(&spec.labels)
            .networkmode(&spec.network)
            .build();
        let mut log = String::new();
        let work = async {
            let mut stream = self.docker.build_image(
                options,
                None,
                Some(bollard::body_full(context_tar.into())),
            );
            while let Some(item) = stream.next().await {
                match item {
                    Ok(info) => {
                        if let Some(text) = info.stream.or(info.status) {
                            log.push_str(&text);
                            for line in text.lines() {
                                on_log(line);
                            }
                        }
                    }
                    Err(e) => {
                        let detail = e.to_string();
                        log.push_str(&detail);
                        log.push('\n');
                        on_log(&detail);
                        return Err(EngineError::Build {
                            tag: spec.tag.clone(),
                            exit_code: run_step_exit_code(&detail),
                            detail,
                            log: std::mem::take(&mut log),
                        });
                    }
                }
            }
            Ok(())
        };
        match tokio::time::timeout(spec.timeout, work).await {
            Ok(result) => result?,
            Err(_) => {
                return Err(EngineError::BuildTimeout {
                    tag: spec.tag.clone(),
                    secs: spec.timeout.as_secs(),
                    log,
                });
            }
        }
        let info = self
            .image(&spec.tag)
            .await?
            .ok_or_else(|| EngineError::Build {
                tag: spec.tag.clone(),
                detail: "the engine reported success but the image does not exist".into(),
                exit_code: None,
                log: String::new(),
            })?;
        Ok(info.id)
    }

    /// Creates a container from `body`; `what` and `image` name it in the error.
    async fn create_from_body(
        &self,
        options: Option<bollard::query_parameters::CreateContainerOptions>,
        body: ContainerCreateBody,
        what: &'static str,
        image: &str,
    ) -> Result<String, EngineError> {
        let created = self
            .docker
            .create_container(options, body)
            .await
            .map_err(|e| EngineError::api(what, image, e))?;
        Ok(created.id)
    }

    /// Builds an image layer in one container: creates a container from `spec.parent` with the
    /// network disabled (unless `spec.network_enabled`) and the limits of `spec.limits`, extracts
    /// `context_tar` at `/`, runs `spec.cmd`, and commits the result as `spec.tag` with
    /// `spec.labels` and `CMD ["/bin/bash"]`. Costs one container and one commit, whatever the number
    /// of files or labels (the classic builder pays a container and a commit per instruction). The
    /// container is always removed. Returns the new image's id.
    pub async fn build_layer(
        &self,
        spec: &LayerSpec,
        context_tar: impl Into<LayerContext>,
        on_log: &mut (dyn FnMut(&str) + Send),
    ) -> Result<String, EngineError> {
        let context_tar = context_tar.into();
        let mut labels = spec.labels.clone();
        labels.insert(LABEL_MANAGED.into(), "true".into());
        let host_config = limited_host_config(&spec.limits, spec.network_enabled);
        let body = ContainerCreateBody {
            image: Some(spec.parent.clone()),
            cmd: Some(spec.cmd.clone()),
            labels: Some(labels.clone()),
            network_disabled: Some(!spec.network_enabled),
            host_config: Some(host_config),
            ..Default::default()
        };
        let id = self
            .create_from_body(None, body, "creating a build container", &spec.parent)
            .await?;
        let result = self.build_in(&id, spec, labels, context_tar, on_log).await;
        let removed = self.remove_container(&id).await;
        let image_id = result?;
        removed?;
        Ok(image_id)
    }

    async fn build_in(
        &self,
        id: &str,
        spec: &LayerSpec,
        labels: HashMap<String, String>,
        context_tar: LayerContext,
        on_log: &mut (dyn FnMut(&str) + Send),
    ) -> Result<String, EngineError> {
        let t0 = Instant::now();
        let body = match context_tar {
            LayerContext::Bytes(bytes) => bollard::body_full(bytes.into()),
            LayerContext::File(path) => {
                let file =
                    tokio::fs::File::open(&path)
                        .await
                        .map_err(|e| EngineError::Context {
                            path: path.display().to_string(),
                            detail: e.to_string(),
                        })?;
                bollard::body_try_stream(futures_util::stream::unfold(file, |mut f| async move {
                    use tokio::io::AsyncReadExt;
                    let mut buf = vec![0u8; 256 * 1024];
                    match f.read(&mut buf).await {
                        Ok(0) => None,
                        Ok(n) => {
                            buf.truncate(n);
                            Some((Ok(Bytes::from(buf)), f))
                        }
                        Err(e) => Some((Err(e), f)),
                    }
                }))
            }
        };
        let options = bollard::query_parameters::UploadToContainerOptionsBuilder::new()
            .path("/")
            .build();
        self.docker
            .upload_to_container(id, Some(options), body)
            .await
            .map_err(|e| EngineError::api("uploading the build context to", id, e))?;
        let t_upload = t0.elapsed();
        let out = self.run_created(id, spec.limits.timeout).await?;
        let t_run = t0.elapsed() - t_upload;
        let mut log = out.stdout.clone();
        log.push_str(&out.stderr);
        for line in log.lines() {
            on_log(line);
        }
        if out.timed_out {
            return Err(EngineError::BuildTimeout {
                tag: spec.tag.clone(),
                secs: spec.limits.timeout.as_secs(),
                log,
            });
        }
        if out.exit_code != Some(0) {
            return Err(EngineError::Build {
                tag: spec.tag.clone(),
                detail: format!(
                    "the command {:?} returned a non-zero code: {}",
                    spec.cmd,
                    out.exit_code.unwrap_or(-1)
                ),
                exit_code: out.exit_code,
                log,
            });
        }
        let (repo, tag) = spec
            .tag
            .rsplit_once(':')
            .unwrap_or((spec.tag.as_str(), "latest"));
        let mut label_words: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}={}", serde_quote(v)))
            .collect();
        label_words.sort();
        let changes = format!(
            "LABEL {}\nCMD [\"/bin/bash\"]\nWORKDIR {}",
            label_words.join(" "),
            spec.workdir
        );
        let options = bollard::query_parameters::CommitContainerOptionsBuilder::new()
            .container(id)
            .repo(repo)
            .tag(tag)
            .changes(&changes)
            .build();
        let committed = self
            .docker
            .commit_container(options, bollard::models::ContainerConfig::default())
            .await
            .map_err(|e| EngineError::api("committing the build container as", &spec.tag, e))?;
        tracing::debug!(
            tag = %spec.tag,
            upload_s = t_upload.as_secs_f64(),
            run_s = t_run.as_secs_f64(),
            commit_s = (t0.elapsed() - t_upload - t_run).as_secs_f64(),
            "layer built"
        );
        Ok(committed.id)
    }

    /// Pulls `name` from its registry (for configured base images such as `eclipse-temurin:17-jdk`).
    pub async fn pull(&self, name: &str) -> Result<ImageInfo, EngineError> {
        let options = CreateImageOptionsBuilder::new().from_image(name).build();
        let mut stream = self.docker.create_image(Some(options), None, None);
        while let Some(item) = stream.next().await {
            item.map_err(|e| EngineError::api("pulling image", name, e))?;
        }
        self.image(name).await?.ok_or_else(|| EngineError::Import {
            tag: name.to_string(),
            detail: "the pull reported success but the image does not exist".into(),
        })
    }

    /// Tags `image` as `repo:tag`.
    pub async fn tag(&self, image: &str, repo: &str, tag: &str) -> Result<(), EngineError> {
        let options = TagImageOptionsBuilder::new().repo(repo).tag(tag).build();
        self.docker
            .tag_image(image, Some(options))
            .await
            .map_err(|e| EngineError::api("tagging image", image, e))
    }

    /// Removes an image (forced: also when other tags point at it). Missing images are not an error.
    pub async fn remove_image(&self, name: &str) -> Result<(), EngineError> {
        let options = RemoveImageOptionsBuilder::new().force(true).build();
        match self.docker.remove_image(name, Some(options), None).await {
            Ok(_) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(e) => Err(EngineError::api("removing image", name, e)),
        }
    }

    /// Removes a container (forced: also when running). Missing containers are not an error.
    pub async fn remove_container(&self, id: &str) -> Result<(), EngineError> {
        let options = RemoveContainerOptionsBuilder::new()
            .force(true)
            .v(true)
            .build();
        match self.docker.remove_container(id, Some(options)).await {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(e) => Err(EngineError::api("removing container", id, e)),
        }
    }

    /// Images carrying all the given `key=value` labels (or just `key` when the value is empty).
    pub async fn list_images(&self, labels: &[String]) -> Result<Vec<Labelled>, EngineError> {
        let filters = HashMap::from([("label".to_string(), labels.to_vec())]);
        let options = ListImagesOptionsBuilder::new().filters(&filters).build();
        let images = self
            .docker
            .list_images(Some(options))
            .await
            .map_err(|e| EngineError::api("listing images", labels.join(","), e))?;
        Ok(images
            .into_iter()
            .map(|i| Labelled {
                id: i.id,
                names: i.repo_tags,
                labels: i.labels,
            })
            .collect())
    }

    /// Containers (running or not) carrying all the given labels.
    pub async fn list_containers(&self, labels: &[String]) -> Result<Vec<Labelled>, EngineError> {
        let filters = HashMap::from([("label".to_string(), labels.to_vec())]);
        let options = ListContainersOptionsBuilder::new()
            .all(true)
            .filters(&filters)
            .build();
        let containers = self
            .docker
            .list_containers(Some(options))
            .await
            .map_err(|e| EngineError::api("listing containers", labels.join(","), e))?;
        Ok(containers
            .into_iter()
            .map(|c| Labelled {
                id: c.id.unwrap_or_default(),
                names: c.names.unwrap_or_default(),
                labels: c.labels.unwrap_or_default(),
            })
            .collect())
    }

    /// Removes etip's labelled containers, then its labelled images (children before parents), as
    /// selected by `filter`.
    pub async fn clean(&self, filter: &CleanFilter) -> Result<CleanReport, EngineError> {
        let mut labels = vec![format!("{LABEL_MANAGED}=true")];
        if let Some(ns) = &filter.namespace {
            labels.push(format!("{LABEL_NAMESPACE}={ns}"));
        }
        let mut report = CleanReport::default();
        for c in self.list_containers(&labels).await? {
            self.remove_container(&c.id).await?;
            report.containers.push(c.id);
        }
        let keep = |l: &Labelled| {
            l.labels
                .get(LABEL_KIND)
                .is_some_and(|k| filter.keep_kinds.iter().any(|x| x == k))
        };
        // Instances are built on envs, envs on bases: remove in that order so no image is still
        // a parent of another when it is removed.
        let order = |l: &Labelled| match l.labels.get(LABEL_KIND).map(String::as_str) {
            Some("instance") | Some("run") => 0,
            Some("env") => 1,
            Some("base") => 3,
            _ => 2,
        };
        let mut images: Vec<Labelled> = self
            .list_images(&labels)
            .await?
            .into_iter()
            .filter(|l| !keep(l))
            .collect();
        images.sort_by_key(order);
        for img in images {
            if img.names.is_empty() || img.names.iter().all(|n| n == "<none>:<none>") {
                self.remove_image(&img.id).await?;
            } else {
                for name in &img.names {
                    self.remove_image(name).await?;
                }
            }
            report
                .images
                .push(img.names.first().cloned().unwrap_or(img.id));
        }
        Ok(report)
    }

    /// Runs `spec.cmd` in a fresh container created from `spec.image` with the network disabled
    /// (unless `network_enabled`), the CPU/memory/pids limits and the time limit of `spec.limits`.
    /// The container is always removed, also on timeout or error.
    pub async fn run(&self, spec: &RunSpec) -> Result<RunOutput, EngineError> {
        let mut labels = spec.labels.clone();
        labels.insert(LABEL_MANAGED.into(), "true".into());
        labels
            .entry(LABEL_KIND.into())
            .or_insert_with(|| "run".into());
        let host_config = limited_host_config(&spec.limits, spec.network_enabled);
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            cmd: Some(spec.cmd.clone()),
            env: Some(spec.env.clone()),
            working_dir: spec.workdir.clone(),
            labels: Some(labels),
            network_disabled: Some(!spec.network_enabled),
            host_config: Some(host_config),
            ..Default::default()
        };
        let id = self
            .create_from_body(None, body, "creating a container", &spec.image)
            .await?;
        let result = self.run_created(&id, spec.limits.timeout).await;
        let removed = self.remove_container(&id).await;
        let out = result?;
        removed?;
        Ok(out)
    }

    async fn run_created(&self, id: &str, timeout: Duration) -> Result<RunOutput, EngineError> {
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
        labels.insert(LABEL_MANAGED.into(), "true".into());
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

/// Quotes a label value for a Dockerfile `LABEL` instruction.
fn serde_quote(v: &str) -> String {
    format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Extracts the exit code from the classic builder's "returned a non-zero code: N" message.
fn run_step_exit_code(detail: &str) -> Option<i64> {
    let marker = "returned a non-zero code: ";
    let at = detail.rfind(marker)? + marker.len();
    let digits: String = detail[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_code_of_failed_run_step() {
        assert_eq!(
            run_step_exit_code(
                "The command '/bin/sh -c sh /work/.etip/build.sh' returned a non-zero code: 11"
            ),
            Some(11)
        );
        assert_eq!(run_step_exit_code("COPY failed: no such file"), None);
    }
}
