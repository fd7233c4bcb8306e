//! Docker engine access for etip, through the engine's HTTP API (bollard) only.
//!
//! [`Engine`] wraps one connection and offers exactly what the harness needs:
//!
//! - import a root filesystem tar as an image ([`Engine::import_rootfs`]),
//! - build an image from a tar context ([`Engine::build_image`]), network disabled by default,
//! - build one image layer by running a command in a container and loading the files it changed
//!   as a layer on its parent, without `docker commit` ([`Engine::build_layer`], [`layer`]),
//! - inspect, tag, list and remove images and containers by label,
//! - run a command in a fresh container with a disabled network, CPU/memory limits and a time limit,
//!   collecting its exit code and logs and always removing the container ([`Engine::run`]),
//! - give a layer's build container a network, variables and files under `/tmp` that its image
//!   never keeps ([`Engine::build_layer_in`], [`build_container`]),
//! - create and remove user-defined networks, start a service container on one, save an image
//!   ([`network`]),
//! - keep a container running as a session and time commands in it ([`Engine::start_session`],
//!   [`Engine::exec`], [`Engine::copy_out`], [`Engine::stop_session`], see [`session`]),
//! - describe the engine and its host for measurement records ([`Engine::describe`]).
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

pub mod build_container;
pub mod layer;
pub mod network;
pub mod session;
pub use build_container::{BuildContainer, TmpFile, is_network_name};
pub use layer::TreeCache;
pub use network::ServiceSpec;
pub use session::{
    ExecOutput, ExecSpec, Extracted, HOST_GRACE, KILL_AFTER, KIND_SESSION, OUTPUT_CAP, Session,
    SessionSpec, extract_tar,
};

/// Label present (value `"true"`) on every image and container etip creates.
pub const LABEL_MANAGED: &str = "etip.managed";
/// Label with the kind of object: `base`, `env`, `instance`, `run` or `session`.
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
    #[error("making the layer {tag} failed: {detail}")]
    Layer {
        tag: String,
        detail: String,
        /// The build container's output.
        log: String,
    },
    #[error("building image {tag} timed out after {secs} s")]
    BuildTimeout { tag: String, secs: u64, log: String },
    #[error("session {id}: {detail}")]
    Session { id: String, detail: String },
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
    /// Where lists of images' files are kept, so a layer on a parent made earlier skips listing
    /// the parent's files (optional: without it each build lists them). The parent's list is
    /// stored when the build had to make it.
    pub tree_cache: Option<TreeCache>,
    /// Also store the new image's list in `tree_cache` (for images other layers are built on).
    pub cache_tree: bool,
    /// Capture roots: absolute folders whose changes make the layer; changes elsewhere are not
    /// kept. Empty: the whole filesystem. A layer with roots neither uses nor fills `tree_cache`
    /// (its lists cover the roots only).
    pub capture: Vec<String>,
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
        })
    }
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
    /// Remove containers only (e.g. the sessions a killed run left), keep every image.
    pub containers_only: bool,
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
        })
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

    /// Builds an image layer in one container, without `docker commit` (see [`layer`]): creates a
    /// container from `spec.parent` with the network disabled (unless `spec.network_enabled`) and
    /// the limits of `spec.limits`, uploads `context_tar`, and runs `spec.cmd` under
    /// [`layer::WRAPPER`], which extracts the context at `/` first and archives the changed files
    /// afterwards. etip then adds whiteouts for deleted files and loads the layer with an image
    /// config derived from the parent's (`spec.labels`, `WorkingDir spec.workdir`,
    /// `CMD ["/bin/bash"]`) as `spec.tag`. The cost grows with the files the command changed, not
    /// with the image's size. The container is always removed. Returns the new image's id.
    pub async fn build_layer(
        &self,
        spec: &LayerSpec,
        context_tar: impl Into<LayerContext>,
        on_log: &mut (dyn FnMut(&str) + Send),
    ) -> Result<String, EngineError> {
        self.build_layer_in(spec, context_tar, &BuildContainer::default(), on_log)
            .await
    }

    /// [`Engine::build_layer`] in a build container that also gets `container`'s network,
    /// variables and files under `/tmp`, none of which the image keeps (see
    /// [`build_container`]).
    pub async fn build_layer_in(
        &self,
        spec: &LayerSpec,
        context_tar: impl Into<LayerContext>,
        container: &BuildContainer,
        on_log: &mut (dyn FnMut(&str) + Send),
    ) -> Result<String, EngineError> {
        let context_tar = context_tar.into();
        container
            .check(&spec.capture)
            .map_err(|detail| EngineError::Context {
                path: spec.tag.clone(),
                detail,
            })?;
        let parent = self
            .docker
            .inspect_image(&spec.parent)
            .await
            .map_err(|e| EngineError::api("inspecting image", &spec.parent, e))?;
        let parent_id = parent.id.clone().unwrap_or_default();
        let mut labels = spec.labels.clone();
        labels.insert(LABEL_MANAGED.into(), "true".into());
        let mut host_config = limited_host_config(&spec.limits, spec.network_enabled);
        host_config.network_mode = Some(container.network_mode(spec.network_enabled).into());
        let roots = layer::roots_env(&spec.capture).map_err(|detail| EngineError::Context {
            path: spec.tag.clone(),
            detail,
        })?;
        let mut env: Vec<String> = roots.into_iter().collect();
        env.extend(container.env.iter().cloned());
        let body = ContainerCreateBody {
            image: Some(spec.parent.clone()),
            env: Some(env),
            // Like a Dockerfile `RUN`: the parent's entrypoint is not used.
            entrypoint: Some(Vec::new()),
            cmd: Some(layer::wrapped_command(&spec.cmd)),
            labels: Some(labels.clone()),
            network_disabled: Some(!spec.network_enabled),
            host_config: Some(host_config),
            ..Default::default()
        };
        let id = self
            .create_from_body(None, body, "creating a build container", &spec.parent)
            .await?;
        let work = tempfile::tempdir().map_err(|e| EngineError::Context {
            path: std::env::temp_dir().display().to_string(),
            detail: format!("creating a temporary folder: {e}"),
        });
        let result = match work {
            Ok(work) => {
                let r = self
                    .build_in(
                        &id,
                        spec,
                        &parent,
                        &parent_id,
                        labels,
                        (context_tar, container),
                        work.path(),
                        on_log,
                    )
                    .await;
                drop(work);
                r
            }
            Err(e) => Err(e),
        };
        let removed = self.remove_container(&id).await;
        let image_id = result?;
        removed?;
        Ok(image_id)
    }

    #[allow(clippy::too_many_arguments)]
    async fn build_in(
        &self,
        id: &str,
        spec: &LayerSpec,
        parent: &bollard::models::ImageInspect,
        parent_id: &str,
        labels: HashMap<String, String>,
        (context_tar, container): (LayerContext, &BuildContainer),
        work: &std::path::Path,
        on_log: &mut (dyn FnMut(&str) + Send),
    ) -> Result<String, EngineError> {
        let t0 = Instant::now();
        let whole = spec.capture.is_empty();
        let cached_tree = spec
            .tree_cache
            .as_ref()
            .filter(|_| whole)
            .and_then(|c| c.get(parent_id));
        let walked_parent = cached_tree.is_none();
        let pieces =
            layer::upload_pieces(&context_tar, cached_tree, container).map_err(|detail| {
                EngineError::Context {
                    path: match &context_tar {
                        LayerContext::File(p) => p.display().to_string(),
                        LayerContext::Bytes(_) => "the build context".into(),
                    },
                    detail,
                }
            })?;
        let options = bollard::query_parameters::UploadToContainerOptionsBuilder::new()
            .path("/")
            .build();
        self.docker
            .upload_to_container(
                id,
                Some(options),
                bollard::body_try_stream(layer::stream_pieces(pieces)),
            )
            .await
            .map_err(|e| EngineError::api("uploading the build context to", id, e))?;
        let t_upload = t0.elapsed();
        let out = self.run_created(id, spec.limits.timeout).await?;
        let t_run = t0.elapsed();
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
        let fail = layer::layer_error(&spec.tag, &log);
        if out.exit_code != Some(0) {
            return Err(fail(format!(
                "the build container exited with code {}",
                out.exit_code.unwrap_or(-1)
            )));
        }

        // The stage: exit code, file lists, changed files.
        let download = work.join("stage.tar");
        {
            use tokio::io::AsyncWriteExt;
            let options = bollard::query_parameters::DownloadFromContainerOptionsBuilder::new()
                .path(&format!("{}/out", layer::STAGE))
                .build();
            let mut file = tokio::fs::File::create(&download)
                .await
                .map_err(|e| fail(format!("creating {}: {e}", download.display())))?;
            let mut s = self.docker.download_from_container(id, Some(options));
            while let Some(chunk) = s.next().await {
                let chunk = chunk
                    .map_err(|e| EngineError::api("downloading the layer's files from", id, e))?;
                file.write_all(&chunk)
                    .await
                    .map_err(|e| fail(format!("writing {}: {e}", download.display())))?;
            }
            file.flush()
                .await
                .map_err(|e| fail(format!("writing {}: {e}", download.display())))?;
        }
        let t_download = t0.elapsed();
        let collected = layer::read_collected(&download).map_err(&fail)?;
        if collected.rc != 0 {
            return Err(EngineError::Build {
                tag: spec.tag.clone(),
                detail: format!(
                    "the command {:?} returned a non-zero code: {}",
                    spec.cmd, collected.rc
                ),
                exit_code: Some(collected.rc),
                log,
            });
        }
        let whiteouts = layer::whiteouts(&collected.before, &collected.after).map_err(&fail)?;
        let tail = layer::layer_tail(&whiteouts).map_err(&fail)?;
        let (layer_pieces, layer_len, diff_id) =
            layer::assemble_layer(&download, &collected, tail).map_err(&fail)?;
        let history = self
            .docker
            .image_history(&spec.parent)
            .await
            .map_err(|e| EngineError::api("reading the history of image", &spec.parent, e))?;
        let config = layer::image_config(
            parent,
            &history,
            &layer::ConfigSpec {
                labels: &labels,
                workdir: &spec.workdir,
                cmd: vec!["/bin/bash".into()],
                created_by: spec.cmd.join(" "),
                diff_id: &diff_id,
            },
        )
        .map_err(&fail)?;
        let parent_layers = parent
            .root_fs
            .as_ref()
            .and_then(|r| r.layers.as_ref())
            .map_or(0, Vec::len);
        let (pieces, image_id) =
            layer::load_pieces(&spec.tag, parent_layers, config, layer_pieces, layer_len)
                .map_err(&fail)?;
        let options = bollard::query_parameters::ImportImageOptionsBuilder::new()
            .quiet(true)
            .build();
        let mut s = self.docker.import_image(
            options,
            bollard::body_try_stream(layer::stream_pieces(pieces)),
            None,
        );
        while let Some(item) = s.next().await {
            item.map_err(|e| EngineError::api("loading the layer as image", &spec.tag, e))?;
        }
        let info = self
            .image(&spec.tag)
            .await?
            .ok_or_else(|| fail("the engine loaded the image but the tag does not exist".into()))?;
        if info.id != image_id {
            return Err(fail(format!(
                "the tag points at {} instead of the loaded image {image_id}",
                info.id
            )));
        }
        if let Some(cache) = spec.tree_cache.as_ref().filter(|_| whole) {
            if walked_parent {
                cache.put(parent_id, &collected.before);
            }
            if spec.cache_tree {
                cache.put(&image_id, &collected.after);
            }
        }
        tracing::debug!(
            tag = %spec.tag,
            upload_s = t_upload.as_secs_f64(),
            run_s = (t_run - t_upload).as_secs_f64(),
            download_s = (t_download - t_run).as_secs_f64(),
            load_s = (t0.elapsed() - t_download).as_secs_f64(),
            walked_parent,
            parent_files = layer::tree_len(&collected.before),
            files = layer::tree_len(&collected.after),
            whiteouts = whiteouts.len(),
            layer_bytes = layer_len,
            steps = ?collected.steps,
            "layer built"
        );
        Ok(image_id)
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
        if filter.containers_only {
            return Ok(report);
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
