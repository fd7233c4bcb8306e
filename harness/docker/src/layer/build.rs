//! [`Engine::build_layer`]: the build container's life, from its creation and the stage upload to
//! the image load, around the pieces of the other `layer` modules.

use crate::layer;
use crate::{
    BuildContainer, Engine, EngineError, LayerError, Limits, TreeCache, limited_host_config,
};
use bollard::models::ContainerCreateBody;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

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

impl Engine {
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
    /// [`build_container`](crate::build_container)).
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
            .map_err(|source| EngineError::ContextSetup {
                path: spec.tag.clone(),
                source,
            })?;
        let parent = self
            .docker
            .inspect_image(&spec.parent)
            .await
            .map_err(|e| EngineError::api("inspecting image", &spec.parent, e))?;
        let parent_id = parent.id.clone().unwrap_or_default();
        let mut labels = spec.labels.clone();
        crate::own_labels(&mut labels, "a layer build container")?;
        let mut host_config = limited_host_config(&spec.limits, spec.network_enabled);
        host_config.network_mode = Some(container.network_mode(spec.network_enabled).into());
        let roots =
            layer::roots_env(&spec.capture).map_err(|source| EngineError::ContextSetup {
                path: spec.tag.clone(),
                source,
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
        let walked_parent = self
            .upload_stage(id, spec, parent_id, &context_tar, container)
            .await?;
        let t_upload = t0.elapsed();
        let log = self.run_build_container(id, spec, on_log).await?;
        let t_run = t0.elapsed();
        let fail = layer::layer_error(&spec.tag, &log);

        // The stage: exit code, file lists, changed files.
        let download = work.join("stage.tar");
        self.download_stage(id, &download, &fail).await?;
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
        let new_layer = layer::assemble_layer(&download, &collected, tail).map_err(&fail)?;
        let layer_len = new_layer.1;
        let image_id = self
            .load_layer(spec, parent, &labels, new_layer, &fail)
            .await?;
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

    /// Uploads the stage to `/` of the build container: the context and, when `spec.tree_cache`
    /// has it (and the layer has no capture roots), the parent's file list, plus `container`'s
    /// files. Returns whether the build container lists the parent's files itself.
    async fn upload_stage(
        &self,
        id: &str,
        spec: &LayerSpec,
        parent_id: &str,
        context_tar: &LayerContext,
        container: &BuildContainer,
    ) -> Result<bool, EngineError> {
        let whole = spec.capture.is_empty();
        let cached_tree = spec
            .tree_cache
            .as_ref()
            .filter(|_| whole)
            .and_then(|c| c.get(parent_id));
        let walked_parent = cached_tree.is_none();
        let pieces =
            layer::upload_pieces(context_tar, cached_tree, container).map_err(|source| {
                EngineError::ContextUpload {
                    path: match context_tar {
                        LayerContext::File(p) => p.display().to_string(),
                        LayerContext::Bytes(_) => "the build context".into(),
                    },
                    source,
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
        Ok(walked_parent)
    }

    /// Runs the build container within `spec.limits.timeout`, passing its output to `on_log`.
    /// Returns the output, or the error of a timeout or of a failed [`layer::WRAPPER`].
    async fn run_build_container(
        &self,
        id: &str,
        spec: &LayerSpec,
        on_log: &mut (dyn FnMut(&str) + Send),
    ) -> Result<String, EngineError> {
        let out = self.run_created(id, spec.limits.timeout).await?;
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
            return Err(fail(LayerError::Wrapper {
                code: out.exit_code.unwrap_or(-1),
            }));
        }
        Ok(log)
    }

    /// Downloads the build container's stage (`<STAGE>/out`) as a tar file to `download`.
    async fn download_stage(
        &self,
        id: &str,
        download: &Path,
        fail: &impl Fn(LayerError) -> EngineError,
    ) -> Result<(), EngineError> {
        use tokio::io::AsyncWriteExt;
        let options = bollard::query_parameters::DownloadFromContainerOptionsBuilder::new()
            .path(&format!("{}/out", layer::STAGE))
            .build();
        let mut file = tokio::fs::File::create(download).await.map_err(|source| {
            fail(LayerError::CreateDownload {
                path: download.to_path_buf(),
                source,
            })
        })?;
        let write_err = |source| {
            fail(LayerError::WriteDownload {
                path: download.to_path_buf(),
                source,
            })
        };
        let mut s = self.docker.download_from_container(id, Some(options));
        while let Some(chunk) = s.next().await {
            let chunk =
                chunk.map_err(|e| EngineError::api("downloading the layer's files from", id, e))?;
            file.write_all(&chunk).await.map_err(write_err)?;
        }
        file.flush().await.map_err(write_err)?;
        Ok(())
    }

    /// Loads `new_layer` (pieces, length, diff id from [`layer::assemble_layer`]) on the parent
    /// as `spec.tag`, with the image config derived from the parent's, and checks that the tag
    /// points at it. Returns the new image's id.
    async fn load_layer(
        &self,
        spec: &LayerSpec,
        parent: &bollard::models::ImageInspect,
        labels: &HashMap<String, String>,
        new_layer: (Vec<layer::Piece>, u64, String),
        fail: &impl Fn(LayerError) -> EngineError,
    ) -> Result<String, EngineError> {
        let (layer_pieces, layer_len, diff_id) = new_layer;
        let history = self
            .docker
            .image_history(&spec.parent)
            .await
            .map_err(|e| EngineError::api("reading the history of image", &spec.parent, e))?;
        let config = layer::image_config(
            parent,
            &history,
            &layer::ConfigSpec {
                labels,
                workdir: &spec.workdir,
                cmd: vec!["/bin/bash".into()],
                created_by: spec.cmd.join(" "),
                diff_id: &diff_id,
            },
        )
        .map_err(fail)?;
        let parent_layers = parent
            .root_fs
            .as_ref()
            .and_then(|r| r.layers.as_ref())
            .map_or(0, Vec::len);
        let (pieces, image_id) =
            layer::load_pieces(&spec.tag, parent_layers, config, layer_pieces, layer_len)
                .map_err(fail)?;
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
            .ok_or_else(|| fail(LayerError::TagMissing))?;
        if info.id != image_id {
            return Err(fail(LayerError::TagMoved {
                found: info.id,
                loaded: image_id,
            }));
        }
        Ok(image_id)
    }
}
