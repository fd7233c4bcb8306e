//! A container an agent works in (`etip sandbox`): the ETIP's original tree in the session an
//! evaluated candidate gets (the reference tree masked, no network, the candidate's CPU, memory
//! and process limits), made a git repository whose one commit is the original tree (so the
//! agent's change is `git diff`, the shape `etip eval` reads as a prediction), optionally with
//! a patch applied and built first, and left running for an agent framework to exec into.

use crate::candidate::{self, ApplyMethod, PrepareFailure, PrepareLog};
use crate::patch::{self, PatchProblem};
use etip_build::config::BuildConfig;
use etip_build::instance::InstanceSpec;
use etip_core::instance::InstanceStatus;
use etip_core::measure::Version;
use etip_exec::executor::{CommandRequest, Executor, Resources, Session};
use std::time::Duration;

/// Build outputs kept out of the sandbox's git repository (an agent's `git diff` is its source
/// change, not what a rebuild rewrote).
const EXCLUDE: &str = "target/\n__pycache__/\n*.pyc\n*.egg-info/\n.pytest_cache/\n*.so\n*.class\n";

/// Makes the tree a git repository whose one commit is the original tree (when it is not one
/// already). The last line says which.
const GIT_INIT: &str = r#"if [ -d .git ]; then echo "etip-sandbox: git repository kept"; exit 0; fi
git init -q . && printf '%s' "$1" > .git/info/exclude && git add -A . && \
  git -c user.name=etip -c user.email=etip@localhost -c commit.gpgsign=false \
    commit -q --no-verify -m "$2" && echo "etip-sandbox: git repository made""#;

/// A running sandbox.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sandbox {
    pub id: String,
    pub image: String,
    /// The container's id.
    pub container: String,
    /// The original tree: the working directory.
    pub workdir: String,
    /// Folders masked by an empty read-only file system (the reference tree).
    pub hidden: Vec<String>,
    /// The container's environment (every `docker exec` inherits it).
    pub env: Vec<String>,
    pub resources: SandboxLimits,
    /// How the given patch was applied (`None`: no patch).
    pub applied: Option<ApplyMethod>,
    /// Whether the tree is a git repository with the original committed.
    pub git: bool,
}

/// The limits a sandbox runs under.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SandboxLimits {
    pub cpus: f64,
    pub memory_mb: u64,
    pub pids: i64,
    /// Always `none`.
    pub network: &'static str,
}

/// Why no sandbox was started.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("{id} was not built: {why}")]
    NotBuilt { id: String, why: String },
    #[error("{id} has no image (built without containers): a sandbox is a container")]
    NoImage { id: String },
    #[error("the patch is refused: {0}")]
    Patch(#[from] PatchProblem),
    #[error("the patch does not apply to the original tree:\n{0}")]
    DoesNotApply(String),
    #[error("the patched tree does not build:\n{0}")]
    DoesNotCompile(String),
    #[error("{0}")]
    Infra(String),
}

impl SandboxError {
    /// Whether the user's input is at fault (an ETIP that cannot be a sandbox, a bad patch).
    pub fn is_input(&self) -> bool {
        !matches!(self, SandboxError::Infra(_))
    }
}

/// Starts the sandbox of `status` (with `patch` applied and built, when given) and leaves it
/// running. The session is stopped again on any failure.
pub fn start(
    executor: &dyn Executor,
    status: &InstanceStatus,
    build: &BuildConfig,
    resources: Resources,
    patch: Option<&str>,
    limit: Duration,
) -> Result<Sandbox, SandboxError> {
    if !status.runnable() {
        return Err(SandboxError::NotBuilt {
            id: status.id.clone(),
            why: status.not_runnable_reason().to_string(),
        });
    }
    let image = status.image.clone().ok_or_else(|| SandboxError::NoImage {
        id: status.id.clone(),
    })?;
    if let Some(p) = patch {
        patch::check(status.language, p, true)?;
    }
    let spec = InstanceSpec::from_status(status, build);
    let mut request = etip_exec::session::session_request(
        status,
        &spec,
        Version::Original,
        "sandbox",
        None,
        resources,
    );
    request.private = true;
    let mut session = executor
        .start(&request)
        .map_err(|e| SandboxError::Infra(format!("starting the sandbox: {e}")))?;
    let prepared = prepare(
        &mut *session,
        status,
        &spec,
        build,
        patch,
        &request.tree,
        limit,
    );
    match prepared {
        Ok((applied, git)) => {
            let container = session.detach().ok_or_else(|| {
                SandboxError::Infra(format!(
                    "the {} executor cannot leave a session running",
                    executor.name()
                ))
            })?;
            Ok(Sandbox {
                id: status.id.clone(),
                image,
                container,
                workdir: request.tree.clone(),
                hidden: request.hidden.clone(),
                env: request.env.clone(),
                resources: SandboxLimits {
                    cpus: resources.cpus,
                    memory_mb: resources.memory_mb,
                    pids: resources.pids,
                    network: "none",
                },
                applied,
                git,
            })
        }
        Err(e) => {
            if let Err(stop) = session.stop() {
                tracing::warn!("stopping the sandbox: {stop}");
            }
            Err(e)
        }
    }
}

fn prepare(
    session: &mut dyn Session,
    status: &InstanceStatus,
    spec: &InstanceSpec,
    build: &BuildConfig,
    patch: Option<&str>,
    tree: &str,
    limit: Duration,
) -> Result<(Option<ApplyMethod>, bool), SandboxError> {
    let base = &status.base_commit[..status.base_commit.len().min(12)];
    let message = format!("{}: original tree (base commit {base})", status.id);
    let out = session
        .run(&CommandRequest {
            argv: vec![
                "sh".into(),
                "-c".into(),
                GIT_INIT.into(),
                "sh".into(),
                EXCLUDE.into(),
                message,
            ],
            env: Vec::new(),
            cwd: tree.to_string(),
            clean: Vec::new(),
            timeout: limit,
        })
        .map_err(|e| SandboxError::Infra(format!("making the git repository: {e}")))?;
    let git = out.success() && out.stdout.contains("etip-sandbox: git repository");
    if !git {
        tracing::warn!(
            "the sandbox's tree is not a git repository (git failed: {}); an agent's change cannot be read with `git diff`",
            etip_core::clip::clip(&format!("{}{}", out.stdout, out.stderr), 400)
        );
    }
    let Some(patch) = patch.filter(|p| !p.trim().is_empty()) else {
        return Ok((None, git));
    };
    let mut log = PrepareLog::default();
    match candidate::prepare_in(session, tree, spec, build, patch, limit, &mut log) {
        Ok(applied) => Ok((applied, git)),
        Err(PrepareFailure::DoesNotApply(d)) => Err(SandboxError::DoesNotApply(d)),
        Err(PrepareFailure::DoesNotCompile(d)) => Err(SandboxError::DoesNotCompile(d)),
        Err(PrepareFailure::Infra(d)) => Err(SandboxError::Infra(d)),
    }
}
