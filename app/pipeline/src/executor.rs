//! Where the versions are built and run, chosen in this one place for every stage: the Docker
//! engine (images and containers) or the local executor (host processes on local builds, no
//! isolation). `build` gets a [`Builders`], `select`, `measure`, `eval` and `eval-test` a
//! [`Chosen`] executor; each refuses, as bad input, builds the chosen executor cannot run.

use crate::InputError;
use crate::progress::Progress;
use anyhow::Context;
use etip_build::Builder;
use etip_build::config::BuildConfig;
use etip_build::local::LocalBuilder;
use etip_build::units::BuildOne;
use etip_core::instance::InstanceStatus;
use etip_exec::executor::Executor;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where the versions run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutorKind {
    /// What the builds need: the local executor for local builds, else Docker (an error that
    /// says how to run locally when no engine answers). `build` and `eval` read it as Docker.
    #[default]
    Auto,
    /// The Docker engine: images, long-lived containers (network none, limits, pinned CPUs).
    Docker,
    /// Host processes on local builds (`etip build --executor local`): no isolation, code you
    /// trust only.
    Local,
}

/// The executor a stage runs its sessions on, and the labels of what it creates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutorChoice {
    pub kind: ExecutorKind,
    /// Namespace label of the containers (`etip clean --namespace` removes them).
    pub namespace: String,
}

/// What runs on the executor: it decides what the local executor may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// The ETIPs' own tests (`select`, `measure`).
    Tests,
    /// Code from elsewhere: agent patches, generated tests (`eval`, `eval-test`). Runs only in
    /// containers unless [`ExecutorKind::Local`] says the code is trusted.
    Candidates,
}

/// The chosen executor.
pub struct Chosen {
    pub executor: Box<dyn Executor>,
    /// The Docker engine's data root (for [`Workload::Candidates`] only, when the engine says).
    pub data_root: Option<PathBuf>,
}

/// Why no Docker engine answers, or `None` when one does.
pub fn engine_missing() -> anyhow::Result<Option<String>> {
    let rt = crate::runtime::get()?;
    Ok(rt
        .block_on(etip_docker::Engine::connect())
        .err()
        .map(|e| e.to_string()))
}

/// The executor `choice` names for `workload` on these builds. A build the executor cannot run is
/// bad input; so are local builds of candidates without [`ExecutorKind::Local`].
pub fn choose(
    choice: &ExecutorChoice,
    statuses: &[InstanceStatus],
    workload: Workload,
    progress: &dyn Progress,
) -> anyhow::Result<Chosen> {
    let runnable: Vec<&InstanceStatus> = statuses.iter().filter(|s| s.runnable()).collect();
    let local = runnable.iter().find(|s| s.local_root.is_some());
    let image = runnable.iter().find(|s| s.image.is_some());
    let kind = match (workload, choice.kind, local, image) {
        (Workload::Candidates, ExecutorKind::Local, _, _) => ExecutorKind::Local,
        (Workload::Candidates, _, _, _) => return candidates_in_docker(choice, statuses),
        (_, ExecutorKind::Auto, Some(_), None) => ExecutorKind::Local,
        (_, ExecutorKind::Auto, _, _) => ExecutorKind::Docker,
        (_, k, _, _) => k,
    };
    match (kind, local, image) {
        (ExecutorKind::Local, _, Some(s)) => Err(InputError(format!(
            "ETIP {} was built as an image ({}): run it with --executor docker, or build it with              `etip build --executor local`",
            s.id,
            s.image.as_deref().unwrap_or("-")
        ))
        .into()),
        (ExecutorKind::Docker, Some(s), _) => Err(InputError(format!(
            "ETIP {} was built without containers (in {}): run it with --executor local",
            s.id,
            s.local_root.as_deref().unwrap_or("-")
        ))
        .into()),
        (ExecutorKind::Local, _, None) => {
            progress.note("running as host processes (local executor: no isolation)");
            Ok(Chosen {
                executor: Box::new(etip_exec::local::LocalExecutor),
                data_root: None,
            })
        }
        _ => {
            let rt = crate::runtime::get()?;
            let engine = rt.block_on(etip_docker::Engine::connect()).map_err(|e| {
                anyhow::anyhow!(e).context(
                    "connecting to Docker (without an engine: `etip build --executor local` builds                      Python ETIPs to run with --executor local)",
                )
            })?;
            Ok(Chosen {
                executor: Box::new(etip_exec::docker::DockerExecutor::new(
                    engine,
                    rt.handle().clone(),
                    &choice.namespace,
                )),
                data_root: None,
            })
        }
    }
}

/// Candidates in containers: local builds are refused; the engine's data root is read for the
/// free-space check.
fn candidates_in_docker(
    choice: &ExecutorChoice,
    statuses: &[InstanceStatus],
) -> anyhow::Result<Chosen> {
    if let Some(s) = statuses.iter().find(|s| s.local_root.is_some()) {
        return Err(InputError(format!(
            "ETIP {} was built without containers, and etip eval runs patches only inside              containers: build it with Docker, or pass --local-trusted for patches you trust",
            s.id
        ))
        .into());
    }
    let rt = crate::runtime::get()?;
    let engine = rt.block_on(etip_docker::Engine::connect()).map_err(|e| {
        anyhow::anyhow!(
            "etip eval runs patches only inside containers, and the Docker engine does not answer: {e}"
        )
    })?;
    let root = rt
        .block_on(engine.describe())
        .map(|i| i.root_dir)
        .unwrap_or_default();
    Ok(Chosen {
        executor: Box::new(etip_exec::docker::DockerExecutor::new(
            engine,
            rt.handle().clone(),
            &choice.namespace,
        )),
        data_root: (!root.is_empty()).then(|| PathBuf::from(root)),
    })
}

/// Where `build` builds: image layers in the Docker engine, or host processes in the output
/// folder (Python only).
pub enum Builders {
    Docker(Box<Builder>),
    Local(Box<LocalBuilder>),
}

impl Builders {
    /// The builder of `kind` ([`ExecutorKind::Auto`] is Docker) writing under `out`.
    pub fn new(
        kind: ExecutorKind,
        cfg: BuildConfig,
        out: &Path,
        progress: &dyn Progress,
    ) -> anyhow::Result<Builders> {
        match kind {
            ExecutorKind::Auto | ExecutorKind::Docker => Ok(Builders::Docker(Box::new(
                docker_builder(cfg, out.to_path_buf())?,
            ))),
            ExecutorKind::Local => {
                progress.note(&format!(
                    "building as host processes under {} (no isolation: code you trust only)",
                    out.join("local").display()
                ));
                let out = std::path::absolute(out)
                    .with_context(|| format!("the absolute path of {}", out.display()))?;
                Ok(Builders::Local(Box::new(LocalBuilder::new(cfg, out))))
            }
        }
    }

    /// The builder that runs `build`'s units.
    pub fn one(&self) -> &dyn BuildOne {
        match self {
            Builders::Docker(b) => b.as_ref(),
            Builders::Local(b) => b.as_ref(),
        }
    }
}

/// The Docker builder (base images, `etip clean`) with its output folder.
pub fn docker_builder(cfg: BuildConfig, out: PathBuf) -> anyhow::Result<Builder> {
    Builder::new(cfg, out, crate::runtime::get()?.handle().clone()).context("connecting to Docker")
}
