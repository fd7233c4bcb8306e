//! Image load: the new image's config, derived from the parent's ([`image_config`]), and the
//! docker-save archive the engine's image load gets ([`load_pieces`]).

use super::Piece;
use super::archive::{file_entry, header, padding};
use crate::LayerError;
use bollard::models::{ImageHistoryResponseItem, ImageInspect};
use bytes::Bytes;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

fn rfc3339(unix_secs: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix_secs)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into())
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// Metadata instructions that never make a layer (classic builder `#(nop)` or BuildKit records).
fn is_metadata_step(created_by: &str) -> bool {
    if created_by.contains("#(nop)") {
        return true;
    }
    let first = created_by.split_whitespace().next().unwrap_or("");
    matches!(
        first,
        "ENV"
            | "LABEL"
            | "CMD"
            | "ENTRYPOINT"
            | "EXPOSE"
            | "VOLUME"
            | "USER"
            | "ARG"
            | "STOPSIGNAL"
            | "HEALTHCHECK"
            | "SHELL"
            | "ONBUILD"
            | "MAINTAINER"
    )
}

/// The parent's history as image-config entries (oldest first). The history API does not say which
/// entries made a layer; its sizes do when exactly `layers` entries are non-empty, else metadata
/// instructions are taken as empty. When neither fits, one entry per layer stands in.
fn parent_history(items: &[ImageHistoryResponseItem], layers: usize) -> Vec<serde_json::Value> {
    let oldest_first: Vec<&ImageHistoryResponseItem> = items.iter().rev().collect();
    let by_size: Vec<bool> = oldest_first.iter().map(|h| h.size == 0).collect();
    let by_step: Vec<bool> = oldest_first
        .iter()
        .map(|h| h.size == 0 && is_metadata_step(&h.created_by))
        .collect();
    let fits = |empty: &[bool]| empty.iter().filter(|e| !**e).count() == layers;
    let empty = if fits(&by_size) {
        Some(by_size)
    } else if fits(&by_step) {
        Some(by_step)
    } else {
        None
    };
    match empty {
        Some(empty) => oldest_first
            .iter()
            .zip(empty)
            .map(|(h, empty)| {
                let mut e = serde_json::json!({ "created": rfc3339(h.created) });
                if !h.created_by.is_empty() {
                    e["created_by"] = h.created_by.clone().into();
                }
                if !h.comment.is_empty() {
                    e["comment"] = h.comment.clone().into();
                }
                if empty {
                    e["empty_layer"] = true.into();
                }
                e
            })
            .collect(),
        None => (0..layers)
            .map(|i| {
                serde_json::json!({
                    "created": rfc3339(0),
                    "comment": format!("layer {} of the parent image (its history was not readable)", i + 1),
                })
            })
            .collect(),
    }
}

/// What the new image's config says besides the parent's.
pub struct ConfigSpec<'a> {
    pub labels: &'a HashMap<String, String>,
    pub workdir: &'a str,
    pub cmd: Vec<String>,
    pub created_by: String,
    pub diff_id: &'a str,
}

/// The image config (JSON) of the parent plus one layer, with `Cmd`, `WorkingDir` and labels
/// set as `docker commit --change` would.
pub fn image_config(
    parent: &ImageInspect,
    history: &[ImageHistoryResponseItem],
    spec: &ConfigSpec<'_>,
) -> Result<Vec<u8>, LayerError> {
    let mut diff_ids: Vec<String> = parent
        .root_fs
        .as_ref()
        .and_then(|r| r.layers.clone())
        .unwrap_or_default();
    let parent_layers = diff_ids.len();
    diff_ids.push(spec.diff_id.to_string());
    let mut config = parent.config.clone().unwrap_or_default();
    let mut labels = config.labels.take().unwrap_or_default();
    labels.extend(spec.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
    config.labels = Some(labels);
    config.working_dir = Some(spec.workdir.to_string());
    config.cmd = Some(spec.cmd.clone());
    let config = serde_json::to_value(&config).map_err(|source| LayerError::Config { source })?;
    let created = now_rfc3339();
    let mut hist = parent_history(history, parent_layers);
    hist.push(serde_json::json!({
        "created": created,
        "created_by": spec.created_by,
        "comment": "etip: layer made from the changed files of a build container",
    }));
    let mut out = serde_json::json!({
        "architecture": parent.architecture.clone().unwrap_or_else(|| "amd64".into()),
        "os": parent.os.clone().unwrap_or_else(|| "linux".into()),
        "created": created,
        "config": config,
        "rootfs": { "type": "layers", "diff_ids": diff_ids },
        "history": hist,
    });
    if let Some(v) = parent.variant.as_ref().filter(|v| !v.is_empty()) {
        out["variant"] = v.clone().into();
    }
    serde_json::to_vec(&out).map_err(|source| LayerError::Config { source })
}

/// The docker-save archive for the image load: the new layer, the config and `manifest.json`
/// naming the parent's layers by placeholder paths (the loader has them and skips their files).
/// Returns the pieces and the image id the engine will give the image.
pub fn load_pieces(
    tag: &str,
    parent_layers: usize,
    config: Vec<u8>,
    layer: Vec<Piece>,
    layer_len: u64,
) -> Result<(Vec<Piece>, String), LayerError> {
    let config_hex = hex::encode(Sha256::digest(&config));
    let config_name = format!("{config_hex}.json");
    let mut layers: Vec<String> = (0..parent_layers)
        .map(|i| format!("parent-{i}/layer.tar"))
        .collect();
    layers.push("layer.tar".into());
    let tag = if tag.rsplit('/').next().is_some_and(|t| t.contains(':')) {
        tag.to_string()
    } else {
        format!("{tag}:latest")
    };
    let manifest = serde_json::to_vec(&serde_json::json!([{
        "Config": config_name,
        "RepoTags": [tag],
        "Layers": layers,
    }]))
    .map_err(|source| LayerError::Manifest { source })?;
    let mut pieces = vec![Piece::Bytes(header(
        "layer.tar",
        layer_len,
        0o644,
        tar::EntryType::Regular,
    )?)];
    pieces.extend(layer);
    pieces.push(Piece::Bytes(padding(layer_len)));
    file_entry(&mut pieces, &config_name, Bytes::from(config))?;
    file_entry(&mut pieces, "manifest.json", Bytes::from(manifest))?;
    pieces.push(Piece::Bytes(Bytes::from(vec![0u8; 1024])));
    Ok((pieces, format!("sha256:{config_hex}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::layer_tail;
    use std::io::Read;

    #[test]
    fn history_marks_empty_layers() {
        let item = |created_by: &str, size: i64| ImageHistoryResponseItem {
            id: "<missing>".into(),
            created: 1_700_000_000,
            created_by: created_by.into(),
            tags: vec![],
            size,
            comment: String::new(),
        };
        // Newest first, as the API returns them.
        let items = vec![
            item("/bin/sh -c #(nop)  CMD [\"bash\"]", 0),
            item("RUN /bin/sh -c true # buildkit", 0),
            item("/bin/sh -c #(nop) ADD file:abc in /", 1000),
        ];
        let h = parent_history(&items, 2);
        assert_eq!(h.len(), 3);
        assert_eq!(h[0]["created_by"], "/bin/sh -c #(nop) ADD file:abc in /");
        assert!(h[0].get("empty_layer").is_none());
        assert!(h[1].get("empty_layer").is_none());
        assert_eq!(h[2]["empty_layer"], true);
        assert_eq!(h[0]["created"], "2023-11-14T22:13:20Z");
        // Sizes alone decide when they fit.
        let h = parent_history(&items, 1);
        assert_eq!(h[1]["empty_layer"], true);
        // Neither fits: one stand-in entry per layer.
        let h = parent_history(&items, 5);
        assert_eq!(h.len(), 5);
        assert!(h.iter().all(|e| e.get("empty_layer").is_none()));
    }

    #[test]
    fn config_extends_the_parent() {
        let parent = ImageInspect {
            architecture: Some("amd64".into()),
            os: Some("linux".into()),
            config: Some(bollard::models::ImageConfig {
                env: Some(vec!["PATH=/usr/bin".into()]),
                cmd: Some(vec!["sh".into()]),
                entrypoint: Some(vec!["/init".into()]),
                labels: Some(HashMap::from([
                    ("a".to_string(), "1".to_string()),
                    ("etip.kind".to_string(), "base".to_string()),
                ])),
                ..Default::default()
            }),
            root_fs: Some(bollard::models::ImageInspectRootFs {
                typ: "layers".into(),
                layers: Some(vec!["sha256:aa".into()]),
            }),
            ..Default::default()
        };
        let history = vec![ImageHistoryResponseItem {
            id: "x".into(),
            created: 0,
            created_by: String::new(),
            tags: vec![],
            size: 10,
            comment: "Imported from -".into(),
        }];
        let labels = HashMap::from([("etip.kind".to_string(), "env".to_string())]);
        let bytes = image_config(
            &parent,
            &history,
            &ConfigSpec {
                labels: &labels,
                workdir: "/work",
                cmd: vec!["/bin/bash".into()],
                created_by: "sh /x.sh".into(),
                diff_id: "sha256:bb",
            },
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v["rootfs"]["diff_ids"],
            serde_json::json!(["sha256:aa", "sha256:bb"])
        );
        assert_eq!(v["config"]["Env"], serde_json::json!(["PATH=/usr/bin"]));
        assert_eq!(v["config"]["Cmd"], serde_json::json!(["/bin/bash"]));
        assert_eq!(v["config"]["Entrypoint"], serde_json::json!(["/init"]));
        assert_eq!(v["config"]["WorkingDir"], "/work");
        assert_eq!(v["config"]["Labels"]["a"], "1");
        assert_eq!(v["config"]["Labels"]["etip.kind"], "env");
        assert_eq!(v["history"].as_array().unwrap().len(), 2);
        assert_eq!(v["history"][1]["created_by"], "sh /x.sh");
        assert_eq!(v["os"], "linux");
    }

    #[test]
    fn load_archive_names_parent_layers_and_the_new_one() {
        let layer = layer_tail(&[]).unwrap();
        let len = layer.len() as u64;
        let (pieces, id) = load_pieces(
            "ns/env:key",
            2,
            b"{}".to_vec(),
            vec![Piece::Bytes(Bytes::from(layer))],
            len,
        )
        .unwrap();
        assert_eq!(id, format!("sha256:{}", hex::encode(Sha256::digest(b"{}"))));
        let mut bytes = Vec::new();
        for p in pieces {
            match p {
                Piece::Bytes(b) => bytes.extend_from_slice(&b),
                Piece::File { .. } => unreachable!(),
            }
        }
        let mut a = tar::Archive::new(bytes.as_slice());
        let mut manifest = None;
        let mut names = Vec::new();
        for e in a.entries().unwrap() {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            if name == "manifest.json" {
                let mut s = String::new();
                e.read_to_string(&mut s).unwrap();
                manifest = Some(s);
            }
            names.push(name);
        }
        assert_eq!(names[0], "layer.tar");
        let m: serde_json::Value = serde_json::from_str(&manifest.unwrap()).unwrap();
        assert_eq!(m[0]["RepoTags"], serde_json::json!(["ns/env:key"]));
        assert_eq!(
            m[0]["Layers"],
            serde_json::json!(["parent-0/layer.tar", "parent-1/layer.tar", "layer.tar"])
        );
        let (_, _) = load_pieces("ns/env", 0, b"{}".to_vec(), vec![], 0).unwrap();
    }
}
