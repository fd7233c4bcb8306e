//! The candidate's session: a container of the instance image in which the prediction is applied
//! to the container's own copy of the original tree, which is then built and smoke-checked exactly
//! as the instance layer built the original ([`spec::candidate_script`]).
//!
//! The candidate runs at the original's path, with the original's environment: a candidate
//! differs from the original by its patch only. (A copy under another path made the copy's
//! quadratic string-building test four times faster in some runs and never the original's: the
//! paths' lengths change what the interpreter allocates before the test, and with it where glibc
//! serves the test's large strings from. An unchanged candidate must time like the original.)
//!
//! The reference tree is hidden from the session (an empty read-only mount) and the image is never
//! changed: whatever the patch does happens in this container's own file system, which the
//! original's and the reference's sessions (other containers of the same image) never see.

use etip_build::config::BuildConfig;
use etip_build::instance::InstanceSpec;
use etip_build::spec;
use etip_exec::executor::{
    CommandOutput, CommandRequest, ExecError, Executor, Session, SessionRequest,
};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How a patch was applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApplyMethod {
    /// `git apply`: every hunk applied where the diff says.
    GitApply,
    /// `git apply --3way` on a throw-away repository of the original tree: needed when the hunks'
    /// context has moved.
    ThreeWay,
}

/// Why a candidate could not be prepared.
#[derive(Debug, Clone, PartialEq)]
pub enum PrepareFailure {
    /// Neither `git apply` nor a 3-way apply took the patch.
    DoesNotApply(String),
    /// The candidate does not build, or its smoke check fails.
    DoesNotCompile(String),
    /// Not the patch's fault: the engine, the copy, the harness's own time limit.
    Infra(String),
}

/// A prepared candidate: its running session and what it took.
pub struct Prepared {
    pub session: Box<dyn Session>,
    /// How the patch was applied (`None`: an empty patch, nothing to apply).
    pub apply: Option<ApplyMethod>,
}

/// What the preparation printed, step by step (the log folder keeps it).
#[derive(Debug, Default, Clone)]
pub struct PrepareLog {
    pub apply: String,
    pub build: String,
}

/// Applies `$1` in the current folder: `git apply`, else a 3-way apply on a throw-away repository
/// kept outside the tree (`$2`). The last line says which worked (`etip-apply: git_apply` or
/// `etip-apply: three_way`).
const APPLY: &str = r#"P=$1
if git apply --check --verbose "$P" 2>&1; then
  git apply "$P" && echo "etip-apply: git_apply" && exit 0
fi
echo "etip: git apply refused the patch; trying a 3-way apply"
export GIT_DIR="$2" GIT_WORK_TREE="$PWD"
rm -rf "$GIT_DIR"
git init -q && git add -A . >/dev/null 2>&1 && \
  git -c user.name=etip -c user.email=etip@localhost -c commit.gpgsign=false commit -q --no-verify -m original || { echo "etip: the 3-way apply could not record the original tree"; exit 3; }
if git apply --3way "$P" 2>&1; then
  rm -rf "$GIT_DIR"; echo "etip-apply: three_way"; exit 0
fi
git reset -q --hard >/dev/null 2>&1
rm -rf "$GIT_DIR"
echo "etip: the patch does not apply"
exit 1"#;

/// The candidate's session request: the original's (`original`: its request), labelled
/// `candidate`.
pub fn session_request(original: &SessionRequest) -> SessionRequest {
    SessionRequest {
        label: "candidate".into(),
        private: true,
        ..original.clone()
    }
}

fn run(
    session: &mut dyn Session,
    argv: Vec<String>,
    cwd: &str,
    timeout: Duration,
) -> Result<CommandOutput, ExecError> {
    session.run(&CommandRequest {
        argv,
        env: Vec::new(),
        cwd: cwd.to_string(),
        clean: Vec::new(),
        timeout,
    })
}

fn text(out: &CommandOutput) -> String {
    format!("{}{}", out.stdout, out.stderr)
}

fn sh(script: &str, args: &[&str]) -> Vec<String> {
    let mut v = vec!["sh".to_string(), "-c".into(), script.into(), "sh".into()];
    v.extend(args.iter().map(|a| a.to_string()));
    v
}

/// Starts the candidate's session and prepares it (apply, build, smoke check), within `limit`
/// per step. The session is stopped on failure.
pub fn prepare(
    executor: &dyn Executor,
    request: &SessionRequest,
    spec: &InstanceSpec,
    cfg: &BuildConfig,
    patch: &str,
    limit: Duration,
    log: &mut PrepareLog,
) -> Result<Prepared, PrepareFailure> {
    let mut session = executor
        .start(request)
        .map_err(|e| PrepareFailure::Infra(format!("starting the candidate's session: {e}")))?;
    let result = prepare_in(&mut *session, &request.tree, spec, cfg, patch, limit, log);
    match result {
        Ok(apply) => Ok(Prepared { session, apply }),
        Err(f) => {
            if let Err(e) = session.stop() {
                tracing::warn!("stopping the candidate's session: {e}");
            }
            Err(f)
        }
    }
}

/// Applies `patch` (nothing when empty) in the session's `tree` and builds it, as [`prepare`]
/// does after starting the session.
pub fn prepare_in(
    session: &mut dyn Session,
    tree: &str,
    spec: &InstanceSpec,
    cfg: &BuildConfig,
    patch: &str,
    limit: Duration,
    log: &mut PrepareLog,
) -> Result<Option<ApplyMethod>, PrepareFailure> {
    let method = if patch.is_empty() {
        None
    } else {
        Some(apply(session, tree, spec, patch, limit, log)?)
    };
    build(session, tree, spec, cfg, limit, log).map(|()| method)
}

/// Applies the patch in the candidate's tree (see [`APPLY`]).
fn apply(
    session: &mut dyn Session,
    tree: &str,
    spec: &InstanceSpec,
    patch: &str,
    limit: Duration,
    log: &mut PrepareLog,
) -> Result<ApplyMethod, PrepareFailure> {
    let infra = |what: &str, e: ExecError| PrepareFailure::Infra(format!("{what}: {e}"));
    let path = session
        .put_file("prediction.diff", patch.as_bytes())
        .map_err(|e| infra("putting the patch into the session", e))?;
    let out = run(
        session,
        sh(APPLY, &[&path, &spec.place("/tmp/etip-3way.git")]),
        tree,
        limit,
    )
    .map_err(|e| infra("applying the patch", e))?;
    log.apply = text(&out);
    let method = if out.success() && out.stdout.contains("etip-apply: three_way") {
        ApplyMethod::ThreeWay
    } else if out.success() && out.stdout.contains("etip-apply: git_apply") {
        ApplyMethod::GitApply
    } else if out.timed_out || out.exit_code != Some(1) {
        return Err(PrepareFailure::Infra(format!(
            "applying the patch ended {}: {}",
            if out.timed_out {
                "at the time limit".to_string()
            } else {
                format!("with exit code {:?}", out.exit_code)
            },
            etip_core::clip::clip(&log.apply, 2000)
        )));
    } else {
        return Err(PrepareFailure::DoesNotApply(tail(&log.apply, 20)));
    };
    Ok(method)
}

/// Builds and smoke-checks the candidate's tree ([`spec::candidate_script`]).
fn build(
    session: &mut dyn Session,
    tree: &str,
    spec: &InstanceSpec,
    cfg: &BuildConfig,
    limit: Duration,
    log: &mut PrepareLog,
) -> Result<(), PrepareFailure> {
    let infra = |what: &str, e: ExecError| PrepareFailure::Infra(format!("{what}: {e}"));
    // The version whose tree the session holds.
    let version = if tree.trim_end_matches('/') == spec.place(spec::PATCHED_DIR) {
        "patched"
    } else {
        "original"
    };
    let script = spec.place(&spec::candidate_script(
        cfg,
        spec.language,
        &spec.modules,
        version,
    ));
    let path = session
        .put_file("build-candidate.sh", script.as_bytes())
        .map_err(|e| infra("putting the build script into the session", e))?;
    let out = run(session, vec!["sh".into(), path], "/", limit)
        .map_err(|e| infra("building the candidate", e))?;
    log.build = text(&out);
    if out.success() {
        return Ok(());
    }
    if out.timed_out {
        return Err(PrepareFailure::DoesNotCompile(format!(
            "the candidate's build exceeded the time limit of {} s",
            limit.as_secs()
        )));
    }
    match out.exit_code {
        Some(spec::EXIT_CANDIDATE) => Err(PrepareFailure::DoesNotCompile(format!(
            "the candidate does not build:\n{}",
            tail(&log.build, 25)
        ))),
        Some(spec::EXIT_SMOKE_CANDIDATE) => Err(PrepareFailure::DoesNotCompile(format!(
            "the candidate's smoke check failed:\n{}",
            tail(&log.build, 25)
        ))),
        other => Err(PrepareFailure::Infra(format!(
            "the candidate's build script ended with exit code {other:?}:\n{}",
            tail(&log.build, 25)
        ))),
    }
}

/// The last `n` lines of `s`.
pub(crate) fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
