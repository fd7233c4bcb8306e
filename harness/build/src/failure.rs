//! Why an instance failed: the failure kinds of `status.json` and how a failed layer build is
//! classified from its error and log.

use crate::spec;
use etip_core::instance::{FailureKind, Language};
use etip_docker::EngineError;

/// A failure of one instance, with its reason.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) kind: FailureKind,
    pub(crate) reason: String,
    pub(crate) detail: String,
}

impl Failure {
    pub(crate) fn new(kind: FailureKind, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            reason: kind.reason().to_string(),
            detail: detail.into(),
        }
    }
}

pub(crate) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn is_dependency_failure(log: &str) -> bool {
    [
        "Could not resolve dependencies",
        "could not be resolved",
        "Non-resolvable parent POM",
        "Cannot access",
        "has not been downloaded from it before",
        "Could not find artifact",
        "No matching distribution found",
    ]
    .iter()
    .any(|p| log.contains(p))
}

#[derive(Debug)]
pub(crate) enum LayerFailure {
    Engine(EngineError),
    Context(String),
    Build(EngineError, String),
}

/// The failures every layer shares (engine, context, time limit); a failed build run comes back
/// as its error and log for the layer's own classification.
fn common_failure(f: LayerFailure, layer: &str) -> Result<Failure, (EngineError, String)> {
    match f {
        LayerFailure::Engine(e) => Ok(Failure::new(FailureKind::Engine, e.to_string())),
        LayerFailure::Context(e) => Ok(Failure::new(FailureKind::Checkout, e)),
        LayerFailure::Build(EngineError::BuildTimeout { secs, .. }, _) => Ok(Failure::new(
            FailureKind::Timeout,
            format!("the {layer} layer build exceeded {secs} s"),
        )),
        LayerFailure::Build(e, log) => Err((e, log)),
    }
}

pub(crate) fn classify_env_failure(f: LayerFailure, version: &str, lang: Language) -> Failure {
    let (e, log) = match common_failure(f, "env") {
        Ok(failure) => return failure,
        Err(build) => build,
    };
    match (e, log) {
        (
            EngineError::Build {
                exit_code: Some(spec::EXIT_TOOLCHAIN),
                ..
            },
            log,
        ) => Failure {
            kind: FailureKind::NoBaseImage,
            reason: match lang {
                Language::Java => format!("no base image for JDK {version}"),
                Language::Python => format!("no base image for Python {version}"),
            },
            detail: tail(&log, 20),
        },
        (e @ EngineError::Build { .. }, log) => Failure::new(
            FailureKind::DependencyResolution,
            format!("{e}\n{}", tail(&log, 40)),
        ),
        (e, log) => Failure::new(FailureKind::Engine, format!("{e}\n{}", tail(&log, 20))),
    }
}

pub(crate) fn classify_instance_failure(f: LayerFailure) -> Failure {
    let (e, log) = match common_failure(f, "instance") {
        Ok(failure) => return failure,
        Err(build) => build,
    };
    match (e, log) {
        (
            e @ EngineError::Build {
                exit_code: Some(code @ (spec::EXIT_ORIGINAL | spec::EXIT_PATCHED)),
                ..
            },
            log,
        ) => {
            let which = if code == spec::EXIT_ORIGINAL {
                "original"
            } else {
                "patched"
            };
            let marker = format!("etip: building {which}");
            let section = match log.rfind(&marker) {
                Some(at) => {
                    let rest = &log[at + marker.len()..];
                    let end = rest.find("etip: building ").unwrap_or(rest.len());
                    &log[at..at + marker.len() + end]
                }
                None => &log,
            };
            let detail = format!("{e}\n{}", tail(section, 40));
            if is_dependency_failure(section) {
                Failure {
                    kind: FailureKind::DependencyResolution,
                    reason: format!("dependency resolution failed ({which})"),
                    detail,
                }
            } else if code == spec::EXIT_ORIGINAL {
                Failure::new(FailureKind::OriginalCompile, detail)
            } else {
                Failure::new(FailureKind::PatchedCompile, detail)
            }
        }
        (e, log) => Failure::new(FailureKind::Engine, format!("{e}\n{}", tail(&log, 20))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_failures_are_recognised() {
        assert!(is_dependency_failure(
            "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project"
        ));
        assert!(!is_dependency_failure(
            "[ERROR] /work/patched/src/main/java/A.java:[3,1] ';' expected"
        ));
    }
}
