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
    let image = built_image(status)?;
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

/// The image of a built ETIP, or why it cannot be a sandbox.
fn built_image(status: &InstanceStatus) -> Result<String, SandboxError> {
    if !status.runnable() {
        return Err(SandboxError::NotBuilt {
            id: status.id.clone(),
            why: status.not_runnable_reason().to_string(),
        });
    }
    status.image.clone().ok_or_else(|| SandboxError::NoImage {
        id: status.id.clone(),
    })
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

/// An image for agent frameworks that start their own container from an image rather than
/// `docker exec` into a running one (mini-swe-agent's Docker environment, SWE-agent's
/// deployment): the ETIP's image with the reference tree (and the reference version's virtual
/// environment) deleted, the original tree a git repository with the original committed, and
/// the original version's working directory and environment as the image's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ImagePlan {
    pub id: String,
    /// The ETIP's image the plan starts from.
    pub from: String,
    /// The command that prepares the file system (run with no network).
    pub script: Vec<String>,
    /// The original tree: the image's working directory.
    pub workdir: String,
    /// The original version's environment: the image's.
    pub env: Vec<String>,
    /// What the script deletes.
    pub removed: Vec<String>,
}

/// The plan of an agent image of `status` (see [`ImagePlan`]).
pub fn image_plan(status: &InstanceStatus, build: &BuildConfig) -> Result<ImagePlan, SandboxError> {
    let from = built_image(status)?;
    let spec = InstanceSpec::from_status(status, build);
    let request = etip_exec::session::session_request(
        status,
        &spec,
        Version::Original,
        "sandbox",
        None,
        Resources::default(),
    );
    let mut removed = request.hidden.clone();
    // The reference version's own virtual environment (an install of the reference tree).
    let reference_env = status
        .env
        .get(Version::Patched.as_str())
        .into_iter()
        .flatten()
        .filter_map(|kv| kv.strip_prefix("VIRTUAL_ENV="))
        .filter(|dir| {
            !request
                .env
                .iter()
                .any(|kv| kv == &format!("VIRTUAL_ENV={dir}"))
        });
    removed.extend(reference_env.map(str::to_string));
    let base = &status.base_commit[..status.base_commit.len().min(12)];
    let message = format!("{}: original tree (base commit {base})", status.id);
    let script = format!(
        "set -e\nfor d in \"$@\"; do rm -rf -- \"$d\"; done\ncd {tree}\nsh -c '{init}' sh '{exclude}' '{message}'\n",
        tree = shell_word(&request.tree),
        init = GIT_INIT.replace('\'', r"'\''"),
        exclude = EXCLUDE,
        message = message.replace('\'', ""),
    );
    let mut argv = vec!["sh".to_string(), "-c".into(), script, "sh".into()];
    argv.extend(removed.iter().cloned());
    Ok(ImagePlan {
        id: status.id.clone(),
        from,
        script: argv,
        workdir: request.tree.clone(),
        env: request.env.clone(),
        removed,
    })
}

/// `s` quoted for `sh`.
fn shell_word(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
