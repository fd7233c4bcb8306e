//! Images: inspecting ([`Engine::image`]), importing a root filesystem, building from a tar
//! context with the classic builder, pulling, tagging, saving, pushing and removing.

use crate::{Engine, EngineError};
use bollard::query_parameters::{
    BuildImageOptionsBuilder, CreateImageOptionsBuilder, RemoveImageOptionsBuilder,
    TagImageOptionsBuilder,
};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::collections::HashMap;
use std::time::Duration;

/// Facts about one image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageInfo {
    pub id: String,
    /// Total size in bytes (all layers).
    pub size: i64,
    pub tags: Vec<String>,
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

impl Engine {
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

    /// Writes image `name` as a docker-save archive (config, `manifest.json`, every layer's tar)
    /// to `dest`.
    pub async fn save_image(&self, name: &str, dest: &std::path::Path) -> Result<(), EngineError> {
        self.save_images(&[name], dest).await
    }

    /// Writes `names` as one docker-save archive to `dest` (`docker load -i` restores them all;
    /// a layer they share is stored once). The archive is written beside `dest` and renamed
    /// into place when complete: an interrupted save leaves no partial archive under its name.
    pub async fn save_images(
        &self,
        names: &[&str],
        dest: &std::path::Path,
    ) -> Result<(), EngineError> {
        use tokio::io::AsyncWriteExt;
        let shown = names.join(" ");
        let io = |e: std::io::Error| EngineError::Context {
            path: dest.display().to_string(),
            detail: format!("writing the saved image(s) {shown}: {e}"),
        };
        let part = dest.with_extension("tar.part");
        let mut file = tokio::fs::File::create(&part).await.map_err(io)?;
        let mut s = self.docker.export_images(names);
        while let Some(chunk) = s.next().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    let _ = tokio::fs::remove_file(&part).await;
                    return Err(EngineError::api("saving image(s)", shown.clone(), e));
                }
            };
            file.write_all(&chunk).await.map_err(io)?;
        }
        file.flush().await.map_err(io)?;
        file.sync_all().await.map_err(io)?;
        drop(file);
        tokio::fs::rename(&part, dest).await.map_err(io)
    }

    /// Pushes `repo:tag` (a name whose repository starts with the registry's host) to its
    /// registry; returns the pushed reference by digest (`host/repo@sha256:...`).
    pub async fn push(&self, repo: &str, tag: &str) -> Result<String, EngineError> {
        let name = format!("{repo}:{tag}");
        let options = bollard::query_parameters::PushImageOptions {
            tag: Some(tag.to_string()),
            platform: None,
        };
        let mut stream = self.docker.push_image(repo, Some(options), None);
        while let Some(item) = stream.next().await {
            let item = item.map_err(|e| EngineError::api("pushing image", name.clone(), e))?;
            if let Some(err) = item.error_detail.and_then(|d| d.message) {
                return Err(EngineError::Import {
                    tag: name,
                    detail: format!("the registry refused the push: {err}"),
                });
            }
        }
        let img = self
            .docker
            .inspect_image(&name)
            .await
            .map_err(|e| EngineError::api("inspecting image", name.clone(), e))?;
        img.repo_digests
            .unwrap_or_default()
            .into_iter()
            .find(|d| d.starts_with(&format!("{repo}@")))
            .ok_or_else(|| EngineError::Import {
                tag: name,
                detail: "the push ended without a digest for the repository".into(),
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

    /// Removes an image (forced: also when other tags point at it). Missing images are not an
    /// error, nor is a failure because another request removed the image meanwhile (the engine
    /// then answers 500 "unrecognized image ID").
    pub async fn remove_image(&self, name: &str) -> Result<(), EngineError> {
        let _registration = crate::interrupt::begin_removal();
        let options = RemoveImageOptionsBuilder::new().force(true).build();
        let gone = |confirmed| {
            crate::interrupt::gone(crate::interrupt::Object::Snapshot, name, confirmed);
            Ok(())
        };
        match self.docker.remove_image(name, Some(options), None).await {
            Ok(_) => gone(true),
            Err(e) if crate::interrupt::status(&e) == Some(404) => gone(false),
            Err(e) => match self.image(name).await {
                Ok(None) => gone(false),
                _ => Err(EngineError::api("removing image", name, e)),
            },
        }
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
