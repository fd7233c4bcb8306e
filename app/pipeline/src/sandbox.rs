//! The `sandbox` stage: one built ETIP's original tree in a running container for an agent
//! framework to work in ([`etip_eval::sandbox`]), with what the framework needs to attach to it;
//! or, for frameworks that start their own container from an image, an image of the original
//! tree without the reference tree ([`image`]).

use crate::InputError;
use crate::executor::{ExecutorChoice, ExecutorKind};
use etip_eval::sandbox::{ImagePlan, Sandbox, SandboxError};
use etip_exec::executor::Resources;
use std::path::PathBuf;
use std::time::Duration;

/// Which sandbox to start.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxConfig {
    /// `etip build`'s status.jsonl.
    pub etips: PathBuf,
    pub id: String,
    /// A patch to apply (and build) first.
    pub patch: Option<PathBuf>,
    /// The configuration file the ETIPs were built with.
    pub build_config: Option<PathBuf>,
    pub namespace: String,
    pub resources: Resources,
    /// Time limit of applying and building the patch.
    pub setup_timeout: Duration,
}

/// The status of the configured ETIP.
fn status_of(cfg: &SandboxConfig) -> anyhow::Result<etip_core::instance::InstanceStatus> {
    let statuses = crate::records::select_statuses(&cfg.etips, std::slice::from_ref(&cfg.id))?;
    statuses.into_iter().next().ok_or_else(|| {
        InputError(format!(
            "no ETIP with id {} in {}",
            cfg.id,
            cfg.etips.display()
        ))
        .into()
    })
}

/// An image made for agent frameworks ([`image`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AgentImage {
    /// `repo:tag`.
    pub image: String,
    pub image_id: String,
    #[serde(flatten)]
    pub plan: ImagePlan,
}

/// Makes the image of the configured ETIP for agent frameworks that start their own container:
/// the ETIP's image with the reference tree deleted and the original tree a git repository
/// ([`etip_eval::sandbox::image_plan`]), committed as `reference` (default
/// `<namespace>/sandbox:<id>`) with etip's labels, so `etip clean` removes it.
pub fn image(cfg: &SandboxConfig, reference: Option<&str>) -> anyhow::Result<AgentImage> {
    if cfg.patch.is_some() {
        return Err(InputError(
            "--image makes the original tree's image; apply a patch with `etip sandbox --patch` (a running sandbox) instead".into(),
        )
        .into());
    }
    let status = status_of(cfg)?;
    let build = crate::records::build_config(cfg.build_config.as_deref())?;
    let plan =
        etip_eval::sandbox::image_plan(&status, &build).map_err(|e| InputError(e.to_string()))?;
    let reference = reference.map_or_else(
        || {
            format!(
                "{}/sandbox:{}",
                cfg.namespace,
                etip_build::spec::id_slug(&status.id)
            )
        },
        str::to_string,
    );
    let rt = crate::runtime::get()?;
    let engine = rt.block_on(etip_docker::Engine::connect()).map_err(|e| {
        anyhow::anyhow!("an agent image needs the Docker engine that built the ETIP: {e}")
    })?;
    let mut spec = etip_docker::RunSpec::new(plan.from.clone(), plan.script.clone())
        .limits(etip_docker::Limits {
            cpus: cfg.resources.cpus,
            memory_bytes: (cfg.resources.memory_mb as i64).saturating_mul(1 << 20),
            timeout: cfg.setup_timeout,
            pids: cfg.resources.pids,
        })
        .label(etip_docker::LABEL_NAMESPACE, cfg.namespace.clone())
        .label(etip_docker::LABEL_KIND, "sandbox-image");
    spec.env = plan.env.clone();
    let labels = [
        (etip_docker::LABEL_NAMESPACE, cfg.namespace.as_str()),
        (etip_docker::LABEL_KIND, "sandbox"),
        ("etip.instance", status.id.as_str()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let commit = etip_docker::Commit {
        reference: reference.clone(),
        workdir: plan.workdir.clone(),
        env: plan.env.clone(),
        cmd: vec!["sleep".into(), "infinity".into()],
        labels,
        comment: format!(
            "etip sandbox image of {} (reference tree removed)",
            status.id
        ),
    };
    let (out, id) = rt.block_on(engine.run_and_commit(&spec, &commit))?;
    let image_id = id.ok_or_else(|| {
        anyhow::anyhow!(
            "preparing the image of {} failed (exit {:?}{}): {}",
            status.id,
            out.exit_code,
            if out.timed_out { ", timed out" } else { "" },
            etip_core::clip::clip(&format!("{}{}", out.stdout, out.stderr), 2000)
        )
    })?;
    Ok(AgentImage {
        image: reference,
        image_id,
        plan,
    })
}

/// Starts the sandbox; a bad ETIP or patch is bad input.
pub fn start(cfg: &SandboxConfig) -> anyhow::Result<Sandbox> {
    let status = &status_of(cfg)?;
    let statuses = std::slice::from_ref(status);
    let patch = match &cfg.patch {
        Some(p) => Some(crate::input::read_text_capped(
            p,
            crate::input::MAX_INPUT_BYTES,
        )?),
        None => None,
    };
    let build = crate::records::build_config(cfg.build_config.as_deref())?;
    let choice = ExecutorChoice {
        kind: ExecutorKind::Docker,
        namespace: cfg.namespace.clone(),
    };
    let chosen = crate::executor::choose(
        &choice,
        statuses,
        crate::executor::Workload::Candidates,
        &crate::Silent,
    )?;
    etip_eval::sandbox::start(
        chosen.executor.as_ref(),
        status,
        &build,
        cfg.resources,
        patch.as_deref(),
        cfg.setup_timeout,
    )
    .map_err(|e| match e {
        e @ SandboxError::Infra(_) => anyhow::Error::from(e),
        e => InputError(e.to_string()).into(),
    })
}
