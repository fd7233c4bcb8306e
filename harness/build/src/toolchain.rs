//! Which toolchain version an instance gets and the base image that provides it.

use crate::config::BuildConfig;
use crate::failure::Failure;
use etip_core::instance::{FailureKind, Language};
use etip_toolchain::detect;

/// A chosen toolchain: version, what the repository asked for (if anything), base image
/// reference (or [`crate::config::BOOTSTRAP`]).
pub(crate) type Choice = (String, Option<detect::Request>, String);

/// Chooses the toolchain version and the base image reference for a language.
pub(crate) fn select(
    cfg: &BuildConfig,
    lang: Language,
    read: &dyn Fn(&str) -> Option<String>,
) -> Result<Choice, Failure> {
    match lang {
        Language::Java => select_java(cfg, read),
        Language::Python => select_python(cfg, read),
    }
}

fn select_java(
    cfg: &BuildConfig,
    read: &dyn Fn(&str) -> Option<String>,
) -> Result<Choice, Failure> {
    let req = detect::detect_jdk(read);
    let want = req
        .as_ref()
        .map(|r| r.value.clone())
        .unwrap_or_else(|| cfg.java.default_jdk.clone());
    let images = &cfg.java.base_images;
    if let Some(img) = images.get(&want) {
        return Ok((want.clone(), req, img.replace("{jdk}", &want)));
    }
    if let Some(img) = images.get("*") {
        return Ok((want.clone(), req, img.replace("{jdk}", &want)));
    }
    if cfg.java.allow_newer_jdk
        && let Ok(n) = want.parse::<u32>()
    {
        let newer = images
            .iter()
            .filter_map(|(k, v)| k.parse::<u32>().ok().map(|k| (k, v)))
            .filter(|(k, _)| *k >= n)
            .min_by_key(|(k, _)| *k);
        if let Some((k, v)) = newer {
            return Ok((k.to_string(), req, v.replace("{jdk}", &k.to_string())));
        }
    }
    Err(Failure {
        kind: FailureKind::NoBaseImage,
        reason: format!("no base image for JDK {want}"),
        detail: format!(
            "JDK {want} requested by {}; configured JDKs: {:?}. Add java.base_images.\"{want}\" (e.g. \"eclipse-temurin:{{jdk}}-jdk\" with a registry) or set java.allow_newer_jdk",
            req.as_ref().map(|r| r.source.as_str()).unwrap_or("default"),
            images.keys().collect::<Vec<_>>()
        ),
    })
}

fn select_python(
    cfg: &BuildConfig,
    read: &dyn Fn(&str) -> Option<String>,
) -> Result<Choice, Failure> {
    let req = detect::detect_python(read);
    let images = &cfg.python.base_images;
    let default = &cfg.python.default_version;
    let fits = |v: &str| {
        req.as_ref()
            .is_none_or(|r| detect::python_satisfies(v, &r.value))
    };
    // The default first, then the newest configured version that fits.
    let mut candidates: Vec<&String> = images.keys().filter(|k| *k != "*").collect();
    candidates.sort_by_key(|v| std::cmp::Reverse(detect_version_key(v)));
    if images.contains_key(default) && fits(default) {
        candidates.insert(0, default);
    }
    if let Some(v) = candidates.into_iter().find(|v| fits(v)) {
        return Ok((v.clone(), req, images[v].replace("{version}", v)));
    }
    if let Some(img) = images.get("*") {
        let v = match &req {
            Some(r) if r.value.starts_with(|c: char| c.is_ascii_digit()) => {
                r.value.split('.').take(2).collect::<Vec<_>>().join(".")
            }
            _ if fits(default) => default.clone(),
            _ => String::new(),
        };
        if !v.is_empty() {
            return Ok((v.clone(), req, img.replace("{version}", &v)));
        }
    }
    let want = req
        .as_ref()
        .map(|r| r.value.clone())
        .unwrap_or_else(|| default.clone());
    Err(Failure {
        kind: FailureKind::NoBaseImage,
        reason: format!("no base image for Python {want}"),
        detail: format!(
            "Python {want} requested by {}; configured versions: {:?}. Add python.base_images.\"X.Y\" (e.g. \"python:{{version}}\" with a registry)",
            req.as_ref().map(|r| r.source.as_str()).unwrap_or("default"),
            images.keys().collect::<Vec<_>>()
        ),
    })
}

fn detect_version_key(v: &str) -> Vec<u64> {
    v.split('.').filter_map(|p| p.parse().ok()).collect()
}
