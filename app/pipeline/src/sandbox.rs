//! The `sandbox` stage: one built ETIP's original tree in a running container for an agent
//! framework to work in ([`etip_eval::sandbox`]), with what the framework needs to attach to it.

use crate::InputError;
use crate::executor::{ExecutorChoice, ExecutorKind};
use etip_eval::sandbox::{Sandbox, SandboxError};
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

/// Starts the sandbox; a bad ETIP or patch is bad input.
pub fn start(cfg: &SandboxConfig) -> anyhow::Result<Sandbox> {
    let statuses = crate::records::select_statuses(&cfg.etips, std::slice::from_ref(&cfg.id))?;
    let status = statuses.first().ok_or_else(|| {
        InputError(format!(
            "no ETIP with id {} in {}",
            cfg.id,
            cfg.etips.display()
        ))
    })?;
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
        &statuses,
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
