//! The instance images of an export: saved as one `docker save` archive per environment layer
//! (the ETIPs of one repository version share their base and environment layers, which an
//! archive then stores once), or tagged under a registry and pushed (each record gets the
//! pushed reference by digest).

use super::{IMAGES_DIR, Images};
use crate::InputError;
use etip_core::instance::{InstanceStatus, LayerKind};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Where an ETIP's image went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Placed {
    /// `images/<file>.tar`, relative to the export's folder.
    Archive(String),
    /// `host/repo@sha256:...`.
    Pushed(String),
}

/// The archive name of an environment layer's tag (`etip/env:python-3.11-ab12` →
/// `etip_env_python-3.11-ab12.tar`).
fn archive_name(tag: &str) -> String {
    let safe: String = tag
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.tar")
}

/// The layer set an ETIP's image is grouped by: its environment layer, else the image itself.
fn group_of(s: &InstanceStatus) -> Option<String> {
    s.layers
        .iter()
        .find(|l| l.kind == LayerKind::Env)
        .map(|l| l.tag.clone())
        .or_else(|| s.image.clone())
}

/// Saves or pushes the images of `kept`, by ETIP id.
pub(crate) fn export(
    how: &Images,
    kept: &[(&InstanceStatus, Map<String, Value>)],
    out: &Path,
) -> anyhow::Result<BTreeMap<String, Placed>> {
    let mut placed = BTreeMap::new();
    // Where the images go: the registry to push to, or `None` to save archives.
    let registry = match how {
        Images::None => return Ok(placed),
        Images::Save => None,
        Images::Push(registry) => Some(registry.trim_end_matches('/')),
    };
    let with_image: Vec<(&InstanceStatus, &str)> = kept
        .iter()
        .filter_map(|(s, _)| s.image.as_deref().map(|i| (*s, i)))
        .collect();
    if with_image.is_empty() {
        return Ok(placed);
    }
    let rt = crate::runtime::get()?;
    let engine = rt.block_on(etip_docker::Engine::connect()).map_err(|e| {
        anyhow::anyhow!("exporting the images needs the Docker engine that built them: {e}")
    })?;
    for (s, image) in &with_image {
        if rt.block_on(engine.image(image))?.is_none() {
            return Err(InputError(format!(
                "the image {image} of {} is not on this engine (removed by `etip clean`?): rebuild it with `etip build`, or export without images (--images none)",
                s.id
            ))
            .into());
        }
    }
    match registry {
        None => {
            let dir = out.join(IMAGES_DIR);
            std::fs::create_dir_all(&dir)
                .map_err(|e| anyhow::anyhow!("making {}: {e}", dir.display()))?;
            let mut groups: BTreeMap<String, Vec<(&InstanceStatus, &str)>> = BTreeMap::new();
            for (s, image) in &with_image {
                let g = group_of(s).unwrap_or_else(|| image.to_string());
                groups.entry(g).or_default().push((s, image));
            }
            for (group, members) in groups {
                let file = archive_name(&group);
                let dest = dir.join(&file);
                crate::output::check(&dest)?;
                let mut names: Vec<&str> = members.iter().map(|(_, i)| *i).collect();
                names.sort();
                names.dedup();
                tracing::info!(archive = %dest.display(), images = names.len(), "saving images");
                rt.block_on(engine.save_images(&names, &dest))?;
                for (s, _) in members {
                    placed.insert(
                        s.id.clone(),
                        Placed::Archive(format!("{IMAGES_DIR}/{file}")),
                    );
                }
            }
        }
        Some(registry) => {
            for (s, image) in &with_image {
                let (repo, tag) = split_tag(image);
                let target = format!("{registry}/{repo}");
                rt.block_on(engine.tag(image, &target, tag))?;
                tracing::info!(image = %image, to = %target, "pushing");
                let digest = rt.block_on(engine.push(&target, tag))?;
                placed.insert(s.id.clone(), Placed::Pushed(digest));
            }
        }
    }
    Ok(placed)
}

/// `repo` and `tag` of `repo:tag` (a port in the repository's host is not a tag).
fn split_tag(image: &str) -> (&str, &str) {
    match image.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo, tag),
        _ => (image, "latest"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_tags() {
        assert_eq!(
            archive_name("etip/env:python-3.11-ab12"),
            "etip_env_python-3.11-ab12.tar"
        );
        assert_eq!(split_tag("etip/instance:abc"), ("etip/instance", "abc"));
        assert_eq!(
            split_tag("localhost:5000/etip/instance"),
            ("localhost:5000/etip/instance", "latest")
        );
    }
}
