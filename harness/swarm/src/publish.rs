//! Images reach the nodes through a registry: pushed once from the coordinator's engine, pulled by
//! each node, named in the units by digest.
//!
//! A registry may have two names: the one the coordinator's engine pushes to (`127.0.0.1:5000`
//! on the machine that hosts it) and the one the nodes pull from (`10.0.0.1:5000` on the
//! cluster's network). Tags are content keys already (`etip/inst-…:<key>`), and the nodes get
//! `registry/repo@sha256:…`: pushing again is idempotent, and a node cannot run other bytes under
//! the same name.
//!
//! The runner image ([`Registry::publish_runner`]) is etip's base image with this `etip` binary
//! in it, tagged by the binary's digest: a rebuilt etip gives a new runner, the same one does not.

use etip_core::unit::WorkUnit;
use etip_docker::{BuildSpec, Engine, EngineError};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

/// Label on the runner image: the digest of the binary in it.
pub const LABEL_BINARY: &str = "etip.binary";

/// Why an image could not be published.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error("publishing {image} to {registry}: {source}")]
    Engine {
        image: String,
        registry: String,
        #[source]
        source: Box<EngineError>,
    },
    #[error("{0}")]
    Reference(String),
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// A registry as the coordinator's engine and the nodes know it.
#[derive(Debug, Clone)]
pub struct Registry {
    /// The coordinator's engine (where `etip build` made the images).
    pub local: Engine,
    /// `host:port` the coordinator's engine pushes to.
    pub push: String,
    /// `host:port` the nodes pull from (often the same).
    pub pull: String,
}

/// `repo:tag` of a local image name (`latest` when it has no tag).
fn split(image: &str) -> Result<(&str, &str), PublishError> {
    if image.contains('@') {
        return Err(PublishError::Reference(format!(
            "{image}: an image named by digest is published already"
        )));
    }
    let (repo, tag) = match image.rsplit_once(':') {
        Some((r, t)) if !t.contains('/') => (r, t),
        _ => (image, "latest"),
    };
    if repo.is_empty() || tag.is_empty() {
        return Err(PublishError::Reference(format!(
            "{image}: not an image name"
        )));
    }
    Ok((repo, tag))
}

impl Registry {
    /// Pushes `image` (a local `repo:tag`) and returns its name as the nodes pull it, by digest.
    pub async fn publish(&self, image: &str) -> Result<String, PublishError> {
        let (repo, tag) = split(image)?;
        let err = |source| PublishError::Engine {
            image: image.to_string(),
            registry: self.push.clone(),
            source: Box::new(source),
        };
        let target = format!("{}/{repo}", self.push);
        self.local.tag(image, &target, tag).await.map_err(err)?;
        let pushed = self.local.push(&target, tag).await.map_err(err)?;
        let digest = pushed
            .rsplit_once('@')
            .map(|(_, d)| d.to_string())
            .ok_or_else(|| PublishError::Reference(format!("{pushed}: no digest")))?;
        Ok(format!("{}/{repo}@{digest}", self.pull))
    }

    /// Publishes each distinct image of `images`; returns local name → node name.
    pub async fn publish_all(
        &self,
        images: Vec<String>,
    ) -> Result<BTreeMap<String, String>, PublishError> {
        let mut out = BTreeMap::new();
        for image in images {
            if out.contains_key(&image) {
                continue;
            }
            let node = self.publish(&image).await?;
            tracing::info!("{image} published as {node}");
            out.insert(image, node);
        }
        Ok(out)
    }

    /// Builds (once per binary) and publishes the runner image: `base` with `binary` as
    /// `/usr/local/bin/etip`. Returns its name as the nodes pull it.
    pub async fn publish_runner(&self, base: &str, binary: &Path) -> Result<String, PublishError> {
        let bytes = std::fs::read(binary).map_err(|source| PublishError::Read {
            path: binary.display().to_string(),
            source,
        })?;
        let digest = hex::encode(Sha256::digest(&bytes));
        let tag = format!("etip/runner:{}", &digest[..16]);
        let err = |source| PublishError::Engine {
            image: tag.clone(),
            registry: self.push.clone(),
            source: Box::new(source),
        };
        if self.local.image(&tag).await.map_err(err)?.is_none() {
            let dockerfile = format!(
                "FROM {base}\nCOPY etip /usr/local/bin/etip\nLABEL {LABEL_BINARY}={digest}\n"
            );
            let context =
                context_tar(&dockerfile, &bytes).map_err(|source| PublishError::Read {
                    path: binary.display().to_string(),
                    source,
                })?;
            let spec = BuildSpec {
                tag: tag.clone(),
                dockerfile: "Dockerfile".into(),
                labels: HashMap::from([(
                    etip_docker::LABEL_MANAGED.to_string(),
                    "true".to_string(),
                )]),
                network: "none".into(),
                timeout: Duration::from_secs(600),
            };
            self.local
                .build_image(&spec, context, &mut |line| tracing::debug!("{line}"))
                .await
                .map_err(err)?;
        }
        self.publish(&tag).await
    }
}

/// A build context of a Dockerfile and the binary, as tar.
fn context_tar(dockerfile: &str, binary: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data, mode) in [
        ("Dockerfile", dockerfile.as_bytes(), 0o644),
        ("etip", binary, 0o755),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(mode);
        header.set_cksum();
        b.append_data(&mut header, name, data)?;
    }
    b.into_inner()
}

/// Names `unit`'s published images as the nodes pull them, in its spec and its image list.
pub fn rename(unit: &mut WorkUnit, published: &BTreeMap<String, String>) {
    fn walk(v: &mut serde_json::Value, published: &BTreeMap<String, String>) {
        match v {
            serde_json::Value::String(s) => {
                if let Some(n) = published.get(s.as_str()) {
                    *s = n.clone();
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| walk(x, published)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|x| walk(x, published)),
            _ => {}
        }
    }
    walk(&mut unit.spec, published);
    for image in &mut unit.images {
        if let Some(n) = published.get(image.as_str()) {
            *image = n.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etip_core::unit::Stage;

    #[test]
    fn names_split_into_repository_and_tag() {
        assert_eq!(split("etip/inst-a:k1").unwrap(), ("etip/inst-a", "k1"));
        assert_eq!(split("etip/inst-a").unwrap(), ("etip/inst-a", "latest"));
        assert_eq!(split("host:5000/x").unwrap(), ("host:5000/x", "latest"));
        assert_eq!(split("host:5000/x:t").unwrap(), ("host:5000/x", "t"));
        assert!(split("x@sha256:aa").is_err());
        assert!(split(":t").is_err());
    }

    #[test]
    fn a_unit_names_its_images_as_the_nodes_pull_them() {
        let spec = serde_json::json!({
            "status": {"id": "a", "image": "etip/inst-a:k1", "note": "etip/inst-a:k1 is built"},
            "other": ["etip/inst-a:k1", 3]
        });
        let mut unit = WorkUnit::new(Stage::Eval, "a", spec, serde_json::json!({}), "k")
            .with_images(["etip/inst-a:k1".to_string()]);
        let published = BTreeMap::from([(
            "etip/inst-a:k1".to_string(),
            "10.0.0.1:5000/etip/inst-a@sha256:ab".to_string(),
        )]);
        rename(&mut unit, &published);
        assert_eq!(
            unit.spec["status"]["image"],
            "10.0.0.1:5000/etip/inst-a@sha256:ab"
        );
        // Only whole strings that name the image change.
        assert_eq!(unit.spec["status"]["note"], "etip/inst-a:k1 is built");
        assert_eq!(unit.spec["other"][0], "10.0.0.1:5000/etip/inst-a@sha256:ab");
        assert_eq!(unit.images, ["10.0.0.1:5000/etip/inst-a@sha256:ab"]);
        assert_eq!(unit.key, "k");
    }
}
