//! Long-lived containers ("sessions") that run many timed commands.
//!
//! [`Engine::run`](crate::Engine::run) starts a container per command, so its duration includes
//! the container's start-up. A session starts one container ([`Engine::start_session`]) whose
//! main process only sleeps, runs each command in it with the exec API ([`Engine::exec`]), copies
//! files out ([`Engine::copy_out`], [`extract_tar`]) and is removed at the end
//! ([`Engine::stop_session`]).
//!
//! # The container
//!
//! - network mode `none` (always: sessions run untrusted patches),
//! - CPU quota `limits.cpus` (none when `<= 0`) and/or a cpuset ([`SessionSpec::cpuset`]),
//!   memory `limits.memory_bytes` with swap off, `limits.pids` processes,
//! - the engine's init process as PID 1 (it reaps orphans), and `sleep infinity` as the main
//!   process (the image's entrypoint is not used),
//! - every path of [`SessionSpec::hidden`] masked by an empty read-only tmpfs,
//! - labels `etip.managed=true`, `etip.kind=session` and the caller's (e.g. `etip.namespace`), so
//!   [`Engine::clean`](crate::Engine::clean) removes forgotten sessions.
//!
//! # Stopping
//!
//! A `Session` is a handle only: dropping it does not remove the container (an `async` removal
//! cannot run in `Drop`). Callers must call [`Engine::stop_session`] on every path, errors and
//! panics included (e.g. run the work in a spawned task and stop the session after joining it);
//! [`Engine::clean`](crate::Engine::clean) removes what was left behind.
//!
//! # Time limits
//!
//! An exec cannot be killed through the API, so [`Engine::exec`] enforces [`ExecSpec::timeout`] in
//! three layers:
//!
//! 1. when the image has a working coreutils `timeout` (probed once by
//!    [`Engine::start_session`]), the command runs as
//!    `timeout -k 5s -s TERM <limit> argv...`: `timeout` puts the command in its own process
//!    group, sends `TERM` to the group at the limit and `KILL` 5 s ([`KILL_AFTER`]) later;
//! 2. when the exec has not ended [`HOST_GRACE`] after that (or at the limit itself without
//!    `timeout`), etip kills every process of the container except the init process and the main
//!    `sleep` from a second exec (`sh` builtins only, see [`Engine::kill_leftovers`]);
//! 3. when even that does not end it within [`HOST_GRACE`] (e.g. the pids limit is exhausted,
//!    so no exec can start), the whole container is killed and the session is dead
//!    ([`Session::is_dead`], [`ExecOutput::session_killed`]).
//!
//! After any timeout the leftovers are killed as in step 2, so processes that left the command's
//! process group (daemons started with `setsid`) do not survive it either.
//!
//! # Overhead
//!
//! [`ExecOutput::duration`] starts when the engine answers the exec start request, which it does
//! before it creates the process, and ends when the output stream closes. On this project's
//! machine (Docker 20.10, runc 1.1, cgroup v1, fuse-overlayfs, 2 shared cores) `true` measures
//! about 50 ms (median of 50; the whole `exec` call about 58 ms), almost all of it before the
//! process starts (runc setting up the exec), about 5 ms after it exits; the `timeout` wrapper
//! adds nothing measurable. The overhead is a constant added to every duration, so a timed round
//! stays within 5 % of harness cost only from about 1.1 s on; shorter commands should be timed
//! by what they report themselves (test reports) or repeated within one exec.

use crate::{Engine, EngineError, LABEL_KIND, LABEL_MANAGED, Limits, limited_host_config};
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::models::{ContainerCreateBody, Mount, MountTmpfsOptions, MountType};
use bollard::query_parameters::{
    DownloadFromContainerOptionsBuilder, KillContainerOptions, StartContainerOptions,
};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// At most this many bytes of each output stream of an exec are kept: the last ones (the end of a
/// log says why it failed); the number of bytes dropped before them is reported.
pub const OUTPUT_CAP: usize = 1 << 20;

/// Time between `TERM` and `KILL` when an exec's time limit is exceeded.
pub const KILL_AFTER: Duration = Duration::from_secs(5);

/// How long etip waits for each escalation step of a time limit to end the exec.
pub const HOST_GRACE: Duration = Duration::from_secs(5);

/// Value of [`LABEL_KIND`] on session containers.
pub const KIND_SESSION: &str = "session";

/// Time limit of the start-up probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Time limit of an exec killing leftovers.
const SWEEP_TIMEOUT: Duration = Duration::from_secs(10);

/// Finds the main process (the only child of PID 1 at start-up) and a working `timeout`.
const PROBE: &str = r#"for d in /proc/[0-9]*; do
  read -r s 2>/dev/null <"$d/stat" || continue
  s=${s##*) }
  set -- $s
  [ "$2" = 1 ] && echo "main=${d#/proc/}"
done
t=$(command -v timeout) && "$t" -k 1s -s TERM 10s true 2>/dev/null && echo "timeout=$t"
"#;

/// Kills every process but PID 1 (init), `$1` (the main process) and itself, pass after pass until
/// no live one is left (zombies aside; at most 200 passes), with `sh` builtins only. Prints
/// `killed=<n>`, the number of distinct processes signalled.
const SWEEP: &str = r#"main=$1; total=0; seen=" "; i=0
while [ $i -lt 200 ]; do
  n=0
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    case $p in 1|"$main"|$$) continue;; esac
    read -r s 2>/dev/null <"$d/stat" || continue
    s=${s##*) }
    case $s in Z*|X*) continue;; esac
    kill -9 "$p" 2>/dev/null || continue
    n=$((n+1))
    case $seen in *" $p "*) ;; *) seen="$seen$p "; total=$((total+1));; esac
  done
  [ $n -eq 0 ] && break
  i=$((i+1))
done
echo "killed=$total"
"#;

/// A long-lived container to run commands in ([`Engine::start_session`]).
#[derive(Debug, Clone)]
pub struct SessionSpec {
    pub image: String,
    /// Extra labels (e.g. [`LABEL_NAMESPACE`](crate::LABEL_NAMESPACE)); `etip.managed` and
    /// `etip.kind` are set by etip.
    pub labels: HashMap<String, String>,
    /// Environment of the container (`KEY=value`), inherited by every exec.
    pub env: Vec<String>,
    /// Working directory of the container (default of every exec).
    pub workdir: Option<String>,
    /// CPU quota (`cpus <= 0`: none), memory (swap off) and pids limits. `limits.timeout` is not
    /// used: each exec has its own ([`ExecSpec::timeout`]).
    pub limits: Limits,
    /// CPUs the container may run on, in cpuset syntax (`"0-1"`, `"1"`, `"0,2"`).
    pub cpuset: Option<String>,
    /// Absolute folders masked by an empty read-only tmpfs (e.g. the other version's source tree).
    pub hidden: Vec<String>,
}

impl SessionSpec {
    /// A session on `image` with default limits, no cpuset and nothing hidden.
    pub fn new(image: impl Into<String>) -> Self {
        SessionSpec {
            image: image.into(),
            labels: HashMap::new(),
            env: Vec::new(),
            workdir: None,
            limits: Limits::default(),
            cpuset: None,
            hidden: Vec::new(),
        }
    }

    pub fn label(mut self, k: impl Into<String>, v: impl Into<String>) -> Self {
        self.labels.insert(k.into(), v.into());
        self
    }

    pub fn env(mut self, kv: impl Into<String>) -> Self {
        self.env.push(kv.into());
        self
    }

    pub fn workdir(mut self, dir: impl Into<String>) -> Self {
        self.workdir = Some(dir.into());
        self
    }

    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    pub fn cpuset(mut self, cpus: impl Into<String>) -> Self {
        self.cpuset = Some(cpus.into());
        self
    }

    pub fn hide(mut self, path: impl Into<String>) -> Self {
        self.hidden.push(path.into());
        self
    }
}

/// A running session container. Stop it with [`Engine::stop_session`]: dropping the handle does not.
#[derive(Debug, Clone)]
pub struct Session {
    id: String,
    image: String,
    /// PID (in the container) of the main `sleep`, when the probe found it.
    main_pid: Option<u32>,
    /// Absolute path of a working coreutils `timeout`, when the image has one.
    timeout_bin: Option<String>,
    dead: Arc<AtomicBool>,
}

impl Session {
    /// The container's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn image(&self) -> &str {
        &self.image
    }

    /// Whether commands run under the image's `timeout` (first layer of the time limit).
    pub fn has_timeout_wrapper(&self) -> bool {
        self.timeout_bin.is_some()
    }

    /// Whether etip killed the container (last resort of a time limit): no exec can run any more.
    pub fn is_dead(&self) -> bool {
        self.dead.load(Ordering::SeqCst)
    }
}

/// One command run in a session ([`Engine::exec`]).
#[derive(Debug, Clone)]
pub struct ExecSpec {
    /// The program and its arguments, run as is (no shell is added).
    pub argv: Vec<String>,
    /// Environment entries (`KEY=value`) added to the container's.
    pub env: Vec<String>,
    /// Working directory (the container's when `None`).
    pub workdir: Option<String>,
    /// Wall-clock limit of the command (see the module documentation).
    pub timeout: Duration,
}

impl ExecSpec {
    /// `argv` with a 10-minute limit.
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ExecSpec {
            argv: argv.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            workdir: None,
            timeout: Duration::from_secs(600),
        }
    }

    pub fn env(mut self, kv: impl Into<String>) -> Self {
        self.env.push(kv.into());
        self
    }

    pub fn workdir(mut self, dir: impl Into<String>) -> Self {
        self.workdir = Some(dir.into());
        self
    }

    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = limit;
        self
    }
}

/// What a command run in a session produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecOutput {
    /// Exit code; `None` when the command timed out (or the engine reported none).
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    /// The last [`OUTPUT_CAP`] bytes of standard output (invalid UTF-8 replaced).
    pub stdout: String,
    /// The last [`OUTPUT_CAP`] bytes of standard error (invalid UTF-8 replaced).
    pub stderr: String,
    /// Bytes of standard output dropped before `stdout` (0 when all was kept).
    pub stdout_dropped: u64,
    /// Bytes of standard error dropped before `stderr`.
    pub stderr_dropped: u64,
    /// Wall time of the command as seen from the host: from the engine's answer to the exec start
    /// request (sent before the engine creates the process) to the end of the command's output
    /// stream (the engine closes it when the process has exited and its output is drained). It
    /// includes the engine's process set-up and tear-down (runc exec: see "Overhead" in the
    /// [module documentation](self)) and, with the `timeout` wrapper, that program's start (below
    /// the noise); it excludes the exec create, start and inspect requests. A background process that keeps the command's stdout/stderr open after it
    /// exited makes the engine wait for it, up to 2 s, and that wait is included.
    pub duration: Duration,
    /// Processes killed after a timeout (the command's leftovers).
    pub killed_leftovers: usize,
    /// The container was killed to end the command (last resort): the session is dead.
    pub session_killed: bool,
}

/// What [`extract_tar`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    pub files: usize,
    pub dirs: usize,
    /// Entries not written: links, devices, FIFOs (their paths as in the archive).
    pub skipped: Vec<String>,
}

/// The last `cap` bytes of a stream and the number dropped before them.
#[derive(Debug)]
struct Tail {
    buf: Vec<u8>,
    dropped: u64,
    cap: usize,
}

impl Tail {
    fn new(cap: usize) -> Self {
        Tail {
            buf: Vec::new(),
            dropped: 0,
            cap,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        if bytes.len() >= self.cap {
            self.dropped += (self.buf.len() + bytes.len() - self.cap) as u64;
            self.buf.clear();
            self.buf.extend_from_slice(&bytes[bytes.len() - self.cap..]);
            return;
        }
        self.buf.extend_from_slice(bytes);
        // Trim only when twice the cap is reached: amortized O(1) per byte.
        if self.buf.len() >= 2 * self.cap {
            self.trim();
        }
    }

    fn trim(&mut self) {
        if self.buf.len() > self.cap {
            let cut = self.buf.len() - self.cap;
            self.dropped += cut as u64;
            self.buf.drain(..cut);
        }
    }

    fn finish(mut self) -> (String, u64) {
        self.trim();
        (
            String::from_utf8_lossy(&self.buf).into_owned(),
            self.dropped,
        )
    }
}

/// What one exec produced before interpretation.
struct Raw {
    exit_code: Option<i64>,
    stdout: Tail,
    stderr: Tail,
    duration: Duration,
    /// The host-side deadline passed (escalation step 2 or 3 ran).
    expired: bool,
    session_killed: bool,
    killed: usize,
}

/// Checks that `p` is an absolute path other than `/` without `.`/`..` components.
fn check_hidden(p: &str) -> Result<(), String> {
    let ok = p.starts_with('/')
        && p.trim_end_matches('/').len() > 1
        && !p.split('/').any(|c| c == "." || c == "..")
        && !p.contains(',')
        && !p.contains(':');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "hidden path {p:?} must be an absolute folder other than / without . or .. components"
        ))
    }
}

/// The `timeout` argument: seconds with millisecond precision, at least 1 ms (0 disables it).
fn limit_arg(limit: Duration) -> String {
    let ms = limit.as_millis().max(1);
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

impl Engine {
    /// Creates and starts a session container (see the module documentation) and probes it (one
    /// exec of `sh`) for its main process and a working `timeout`. On failure the container is
    /// removed. An image without `sh` still works, with the container kill as the only way to
    /// end a command that exceeds its limit.
    pub async fn start_session(&self, spec: &SessionSpec) -> Result<Session, EngineError> {
        let invalid = |detail: String| EngineError::Session {
            id: spec.image.clone(),
            detail,
        };
        for p in &spec.hidden {
            check_hidden(p).map_err(invalid)?;
        }
        let mut labels = spec.labels.clone();
        labels.insert(LABEL_MANAGED.into(), "true".into());
        labels.insert(LABEL_KIND.into(), KIND_SESSION.into());
        let mut host_config = limited_host_config(&spec.limits, false);
        if spec.limits.cpus <= 0.0 {
            host_config.nano_cpus = None;
        }
        host_config.cpuset_cpus = spec.cpuset.clone();
        host_config.init = Some(true);
        host_config.mounts = Some(
            spec.hidden
                .iter()
                .map(|p| Mount {
                    target: Some(p.clone()),
                    typ: Some(MountType::TMPFS),
                    read_only: Some(true),
                    tmpfs_options: Some(MountTmpfsOptions {
                        size_bytes: Some(4096),
                        mode: Some(0o555),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .collect(),
        );
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            entrypoint: Some(Vec::new()),
            cmd: Some(vec!["sleep".into(), "infinity".into()]),
            env: Some(spec.env.clone()),
            working_dir: spec.workdir.clone(),
            labels: Some(labels),
            network_disabled: Some(true),
            host_config: Some(host_config),
            ..Default::default()
        };
        let id = self
            .create_from_body(None, body, "creating a session container", &spec.image)
            .await?;
        match self.prepare_session(&id, &spec.image).await {
            Ok(session) => Ok(session),
            Err(e) => {
                let _ = self.remove_container(&id).await;
                Err(e)
            }
        }
    }

    async fn prepare_session(&self, id: &str, image: &str) -> Result<Session, EngineError> {
        self.docker
            .start_container(id, None::<StartContainerOptions>)
            .await
            .map_err(|e| EngineError::api("starting session container", id, e))?;
        let mut session = Session {
            id: id.to_string(),
            image: image.to_string(),
            main_pid: None,
            timeout_bin: None,
            dead: Arc::new(AtomicBool::new(false)),
        };
        let argv = ["sh", "-c", PROBE].map(String::from);
        let probe = self
            .exec_raw(&session, &argv, &[], None, PROBE_TIMEOUT, false)
            .await?;
        if probe.expired || probe.exit_code.is_none() {
            return Err(EngineError::Session {
                id: id.to_string(),
                detail: "the start-up probe did not finish".into(),
            });
        }
        let (out, _) = probe.stdout.finish();
        let mains: Vec<u32> = out
            .lines()
            .filter_map(|l| l.strip_prefix("main="))
            .filter_map(|p| p.trim().parse().ok())
            .collect();
        if let [main] = mains[..] {
            session.main_pid = Some(main);
        }
        session.timeout_bin = out
            .lines()
            .find_map(|l| l.strip_prefix("timeout="))
            .map(|t| t.trim().to_string());
        tracing::debug!(
            session = %id,
            main_pid = ?session.main_pid,
            timeout = ?session.timeout_bin,
            "session started"
        );
        Ok(session)
    }

    /// Runs `spec.argv` in the session and waits for it, within `spec.timeout` (see the module
    /// documentation for how the limit is enforced and [`ExecOutput::duration`] for what the
    /// duration includes). Only the last [`OUTPUT_CAP`] bytes of each stream are kept. A
    /// non-zero exit is a normal result; errors are the engine's (or a dead session).
    pub async fn exec(
        &self,
        session: &Session,
        spec: &ExecSpec,
    ) -> Result<ExecOutput, EngineError> {
        if spec.argv.is_empty() {
            return Err(EngineError::Session {
                id: session.id.clone(),
                detail: "exec of an empty command".into(),
            });
        }
        let (argv, host_limit) = match &session.timeout_bin {
            Some(t) => {
                let mut argv = vec![
                    t.clone(),
                    "-k".into(),
                    limit_arg(KILL_AFTER),
                    "-s".into(),
                    "TERM".into(),
                    limit_arg(spec.timeout),
                ];
                argv.extend(spec.argv.iter().cloned());
                (
                    argv,
                    spec.timeout
                        .saturating_add(KILL_AFTER)
                        .saturating_add(HOST_GRACE),
                )
            }
            None => (spec.argv.clone(), spec.timeout),
        };
        let raw = self
            .exec_raw(
                session,
                &argv,
                &spec.env,
                spec.workdir.as_deref(),
                host_limit,
                true,
            )
            .await?;
        let by_wrapper = session.timeout_bin.is_some()
            && matches!(raw.exit_code, Some(124 | 137))
            && raw.duration >= spec.timeout;
        let timed_out = raw.expired || by_wrapper;
        let mut killed = raw.killed;
        if timed_out && !raw.expired && !session.is_dead() {
            // The group is gone; processes that left it are not.
            killed += self.kill_leftovers(session).await.unwrap_or(0);
        }
        let (stdout, stdout_dropped) = raw.stdout.finish();
        let (stderr, stderr_dropped) = raw.stderr.finish();
        Ok(ExecOutput {
            exit_code: if timed_out { None } else { raw.exit_code },
            timed_out,
            stdout,
            stderr,
            stdout_dropped,
            stderr_dropped,
            duration: raw.duration,
            killed_leftovers: killed,
            session_killed: raw.session_killed,
        })
    }

    /// Runs `argv` as is; past `host_limit` escalates: kills the leftovers (when `sweep`, so
    /// etip's own helper execs never start another), then the container.
    async fn exec_raw(
        &self,
        session: &Session,
        argv: &[String],
        env: &[String],
        workdir: Option<&str>,
        host_limit: Duration,
        sweep: bool,
    ) -> Result<Raw, EngineError> {
        let id = session.id.as_str();
        if session.is_dead() {
            return Err(EngineError::Session {
                id: id.to_string(),
                detail: "the session was stopped, or killed after a command exceeded its time \
                         limit"
                    .into(),
            });
        }
        let config = CreateExecOptions {
            attach_stdin: Some(false),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            tty: Some(false),
            env: (!env.is_empty()).then(|| env.to_vec()),
            cmd: Some(argv.to_vec()),
            working_dir: workdir.map(str::to_string),
            ..Default::default()
        };
        let exec = self
            .docker
            .create_exec(id, config)
            .await
            .map_err(|e| EngineError::api("creating an exec in session", id, e))?;
        let started = self
            .docker
            .start_exec(&exec.id, None)
            .await
            .map_err(|e| EngineError::api("starting an exec in session", id, e))?;
        // The engine answers before it creates the process: the command's time starts here.
        let t0 = Instant::now();
        let StartExecResults::Attached { mut output, input } = started else {
            return Err(EngineError::Session {
                id: id.to_string(),
                detail: "the engine started the exec detached".into(),
            });
        };
        drop(input);
        let (mut stdout, mut stderr) = (Tail::new(OUTPUT_CAP), Tail::new(OUTPUT_CAP));
        let far = Duration::from_secs(10 * 365 * 86_400);
        let mut deadline = t0 + host_limit.min(far);
        let mut step = 0;
        let mut killed = 0;
        let end = loop {
            match tokio::time::timeout_at(deadline, output.next()).await {
                Ok(Some(Ok(LogOutput::StdErr { message }))) => stderr.push(&message),
                Ok(Some(Ok(other))) => stdout.push(&other.into_bytes()),
                Ok(None) => break Instant::now(),
                Ok(Some(Err(e))) => {
                    if step >= 2 {
                        // The container was killed under the stream.
                        break Instant::now();
                    }
                    return Err(EngineError::api("reading the output of an exec in", id, e));
                }
                Err(_) => {
                    step += 1;
                    match (step, session.main_pid.filter(|_| sweep)) {
                        (1, Some(_)) => {
                            tracing::warn!(session = %id, ?argv, "exec over its limit: killing its processes");
                            killed += self.kill_leftovers(session).await.unwrap_or(0);
                            deadline = Instant::now() + HOST_GRACE;
                        }
                        (1 | 2, _) => {
                            step = 2;
                            tracing::warn!(session = %id, ?argv, "exec still running: killing the session container");
                            session.dead.store(true, Ordering::SeqCst);
                            let _ = self
                                .docker
                                .kill_container(id, None::<KillContainerOptions>)
                                .await;
                            deadline = Instant::now() + HOST_GRACE;
                        }
                        _ => break Instant::now(),
                    }
                }
            }
        };
        let duration = end - t0;
        drop(output);
        let exit_code = if session.is_dead() {
            None
        } else {
            self.exit_code(&exec.id, id).await?
        };
        Ok(Raw {
            exit_code,
            stdout,
            stderr,
            duration,
            expired: step > 0,
            session_killed: session.is_dead(),
            killed,
        })
    }

    /// The exit code of a finished exec (the engine may record it just after the stream ends).
    async fn exit_code(&self, exec_id: &str, session: &str) -> Result<Option<i64>, EngineError> {
        let give_up = Instant::now() + Duration::from_secs(5);
        let mut pause = Duration::from_millis(1);
        loop {
            let info = self
                .docker
                .inspect_exec(exec_id)
                .await
                .map_err(|e| EngineError::api("inspecting an exec in session", session, e))?;
            if info.running != Some(true) || Instant::now() >= give_up {
                return Ok(info.exit_code);
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// Kills (SIGKILL) every process of the session except its init process and main `sleep`,
    /// from an exec of `sh` (builtins only), until none is left; returns how many it killed. Use
    /// it between commands that may leave processes behind (it also kills execs running
    /// concurrently in the session). Needs `sh` in the image and the main process's PID found at
    /// start-up; otherwise returns an error.
    pub async fn kill_leftovers(&self, session: &Session) -> Result<usize, EngineError> {
        let Some(main) = session.main_pid else {
            return Err(EngineError::Session {
                id: session.id.clone(),
                detail: "the session's main process is unknown (no sh in the image?)".into(),
            });
        };
        let argv = [
            "sh".to_string(),
            "-c".into(),
            SWEEP.into(),
            "etip-sweep".into(),
            main.to_string(),
        ];
        let raw =
            Box::pin(self.exec_raw(session, &argv, &[], Some("/"), SWEEP_TIMEOUT, false)).await?;
        let (out, _) = raw.stdout.finish();
        let killed = out
            .lines()
            .find_map(|l| l.strip_prefix("killed="))
            .and_then(|n| n.trim().parse().ok());
        match (raw.exit_code, killed) {
            (Some(0), Some(n)) => Ok(n),
            _ => Err(EngineError::Session {
                id: session.id.clone(),
                detail: format!(
                    "killing leftover processes failed (exit code {:?}): {}",
                    raw.exit_code,
                    raw.stderr.finish().0.trim()
                ),
            }),
        }
    }

    /// A tar archive of `path` (file or folder) in the session, as the engine's archive API makes
    /// it (entries named from the last component of `path`: `/work/out` gives `out/...`), held in
    /// memory; `None` when the path does not exist.
    pub async fn copy_out(
        &self,
        session: &Session,
        path: &str,
    ) -> Result<Option<Vec<u8>>, EngineError> {
        let options = DownloadFromContainerOptionsBuilder::new()
            .path(path)
            .build();
        let mut s = self
            .docker
            .download_from_container(&session.id, Some(options));
        let mut tar = Vec::new();
        while let Some(chunk) = s.next().await {
            match chunk {
                Ok(bytes) => tar.extend_from_slice(&bytes),
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => return Ok(None),
                Err(e) => {
                    return Err(EngineError::api(
                        "copying files out of session",
                        format!("{}:{path}", session.id),
                        e,
                    ));
                }
            }
        }
        Ok(Some(tar))
    }

    /// Kills and removes the session's container. Removing a session that is already gone is not
    /// an error, so this can run on every exit path.
    pub async fn stop_session(&self, session: &Session) -> Result<(), EngineError> {
        session.dead.store(true, Ordering::SeqCst);
        self.remove_container(&session.id).await
    }
}

/// Extracts a tar archive (e.g. from [`Engine::copy_out`]) under `dest`, writing regular files
/// and directories only:
///
/// - entries with absolute paths, `..` components or (Windows) prefixes are refused (error, with
///   nothing more written);
/// - symbolic links, hard links, devices and FIFOs are skipped and listed in
///   [`Extracted::skipped`];
/// - no symbolic link is followed: when a folder on the way to an entry, inside `dest`, is a
///   symbolic link, extraction fails; an existing file or link at an entry's own path is removed
///   and the file created anew (`O_EXCL`), so a link planted there is not written through;
/// - file modes keep the permission bits (`0o777`, no set-id bits); owners and times are not
///   restored.
///
/// `dest` is created when missing.
pub fn extract_tar(bytes: &[u8], dest: &Path) -> std::io::Result<Extracted> {
    use std::io::{Error, ErrorKind};
    std::fs::create_dir_all(dest)?;
    let mut report = Extracted::default();
    let mut archive = tar::Archive::new(bytes);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let raw = entry.path()?.into_owned();
        let shown = raw.display().to_string();
        let mut rel = PathBuf::new();
        for c in raw.components() {
            match c {
                Component::Normal(n) => rel.push(n),
                Component::CurDir => {}
                _ => {
                    return Err(Error::new(
                        ErrorKind::InvalidData,
                        format!("refusing tar entry {shown:?}: absolute or with .."),
                    ));
                }
            }
        }
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind.is_dir()) {
            report.skipped.push(shown);
            continue;
        }
        if rel.as_os_str().is_empty() {
            // The archive's root (`./`): `dest` itself.
            continue;
        }
        // Every existing ancestor inside dest must be a real folder.
        let mut at = dest.to_path_buf();
        let parts: Vec<_> = rel.components().collect();
        for (i, c) in parts.iter().enumerate() {
            at.push(c);
            let last = i + 1 == parts.len();
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_symlink() && !last => {
                    return Err(Error::new(
                        ErrorKind::InvalidData,
                        format!(
                            "refusing tar entry {shown:?}: {} is a symbolic link",
                            at.display()
                        ),
                    ));
                }
                Ok(m) if !last && !m.is_dir() => {
                    return Err(Error::new(
                        ErrorKind::InvalidData,
                        format!(
                            "refusing tar entry {shown:?}: {} is not a folder",
                            at.display()
                        ),
                    ));
                }
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    if !last {
                        std::fs::create_dir(&at)?;
                    }
                }
                Err(e) => return Err(e),
            }
        }
        let mode = entry.header().mode().unwrap_or(0o644) & 0o777;
        if kind.is_dir() {
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    std::fs::remove_file(&at)?;
                    std::fs::create_dir(&at)?;
                }
                Err(_) => std::fs::create_dir(&at)?,
            }
            set_mode(&at, mode | 0o700)?;
            report.dirs += 1;
        } else {
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.is_dir() => {
                    return Err(Error::new(
                        ErrorKind::InvalidData,
                        format!("refusing tar entry {shown:?}: {} is a folder", at.display()),
                    ));
                }
                Ok(_) => std::fs::remove_file(&at)?,
                Err(_) => {}
            }
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&at)?;
            std::io::copy(&mut entry, &mut file)?;
            set_mode(&at, mode)?;
            report.files += 1;
        }
    }
    Ok(report)
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_bytes() {
        let mut t = Tail::new(4);
        t.push(b"ab");
        t.push(b"cdef");
        t.push(b"g");
        assert_eq!(t.finish(), ("defg".to_string(), 3));
        let mut t = Tail::new(4);
        t.push(b"0123456789");
        t.push(b"x");
        assert_eq!(t.finish(), ("789x".to_string(), 7));
        let mut t = Tail::new(4);
        for b in b"abcdefghijkl" {
            t.push(&[*b]);
        }
        assert_eq!(t.finish(), ("ijkl".to_string(), 8));
        let t = Tail::new(4);
        assert_eq!(t.finish(), (String::new(), 0));
    }

    #[test]
    fn limit_argument() {
        assert_eq!(limit_arg(Duration::from_secs(2)), "2.000s");
        assert_eq!(limit_arg(Duration::from_millis(1500)), "1.500s");
        assert_eq!(limit_arg(Duration::ZERO), "0.001s");
    }

    #[test]
    fn hidden_paths_are_checked() {
        assert!(check_hidden("/work/patched").is_ok());
        assert!(check_hidden("/work/patched/").is_ok());
        for bad in [
            "",
            "/",
            "//",
            "work",
            "/work/../etc",
            "/a/./b",
            "/a,b",
            "/a:b",
        ] {
            assert!(check_hidden(bad).is_err(), "{bad:?}");
        }
    }

    fn tar_of(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, kind, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_size(data.len() as u64);
            h.set_mode(if kind.is_dir() { 0o755 } else { 0o644 });
            if kind.is_symlink() || *kind == tar::EntryType::Link {
                h.set_link_name("/etc/passwd").unwrap();
            }
            // Bypass the builder's path checks: write the name bytes directly.
            let name = path.as_bytes();
            h.as_old_mut().name[..name.len()].copy_from_slice(name);
            h.set_cksum();
            b.append(&h, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn extract_writes_files_and_folders_and_skips_links() {
        let dir = tempfile::tempdir().unwrap();
        let tar = tar_of(&[
            ("out/", tar::EntryType::Directory, b""),
            ("out/a.txt", tar::EntryType::Regular, b"hello"),
            ("out/sub/b.txt", tar::EntryType::Regular, b"bye"),
            ("out/link", tar::EntryType::Symlink, b""),
            ("out/hard", tar::EntryType::Link, b""),
        ]);
        let r = extract_tar(&tar, dir.path()).unwrap();
        assert_eq!((r.files, r.dirs), (2, 1));
        assert_eq!(r.skipped, ["out/link", "out/hard"]);
        let p = dir.path();
        assert_eq!(std::fs::read(p.join("out/a.txt")).unwrap(), b"hello");
        assert_eq!(std::fs::read(p.join("out/sub/b.txt")).unwrap(), b"bye");
        assert!(!p.join("out/link").exists());
        // Extracting again overwrites.
        extract_tar(&tar, p).unwrap();
        assert_eq!(std::fs::read(p.join("out/a.txt")).unwrap(), b"hello");
    }

    #[test]
    fn extract_refuses_escapes() {
        for bad in ["/etc/x", "../x", "out/../../x"] {
            let dir = tempfile::tempdir().unwrap();
            let tar = tar_of(&[(bad, tar::EntryType::Regular, b"x")]);
            let e = extract_tar(&tar, &dir.path().join("d")).unwrap_err();
            assert!(e.to_string().contains("refusing"), "{bad}: {e}");
            assert!(!dir.path().join("x").exists());
        }
    }

    #[cfg(unix)]
    #[test]
    fn extract_does_not_follow_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let dest = dir.path().join("dest");
        std::fs::create_dir(&dest).unwrap();
        // A planted link to a folder outside dest.
        std::os::unix::fs::symlink(outside.path(), dest.join("out")).unwrap();
        let tar = tar_of(&[("out/a.txt", tar::EntryType::Regular, b"x")]);
        assert!(extract_tar(&tar, &dest).is_err());
        assert!(!outside.path().join("a.txt").exists());
        // A planted link at a file's own path is replaced, not written through.
        let target = outside.path().join("victim");
        std::fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, dest.join("f")).unwrap();
        let tar = tar_of(&[("f", tar::EntryType::Regular, b"new")]);
        extract_tar(&tar, &dest).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert_eq!(std::fs::read(dest.join("f")).unwrap(), b"new");
        assert!(
            !std::fs::symlink_metadata(dest.join("f"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}
