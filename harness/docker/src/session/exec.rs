//! Timed commands in a session: [`Engine::exec`] with its three-step time limit (see the
//! [session documentation](crate::session)), output capped at [`OUTPUT_CAP`] bytes per stream,
//! and [`Engine::kill_leftovers`].

use super::{HOST_GRACE, KILL_AFTER, OUTPUT_CAP, Session};
use crate::{Engine, EngineError, SessionError};
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::query_parameters::KillContainerOptions;
use futures_util::StreamExt;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

/// Time limit of an exec killing leftovers.
const SWEEP_TIMEOUT: Duration = Duration::from_secs(10);

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
    /// [module documentation](crate::session)) and, with the `timeout` wrapper, that program's start (below
    /// the noise); it excludes the exec create, start and inspect requests. A background process that keeps the command's stdout/stderr open after it
    /// exited makes the engine wait for it, up to 2 s, and that wait is included. On a loaded
    /// machine the engine's answer may be read after the process started, so the duration can
    /// fall short of the command's own time by that delay (seen: under 500 ms for `sleep 0.5`).
    pub duration: Duration,
    /// Processes killed after a timeout (the command's leftovers).
    pub killed_leftovers: usize,
    /// The container was killed to end the command (last resort): the session is dead.
    pub session_killed: bool,
}

/// The last `cap` bytes of a stream and the number dropped before them.
#[derive(Debug)]
pub(super) struct Tail {
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

    pub(super) fn finish(mut self) -> (String, u64) {
        self.trim();
        (
            String::from_utf8_lossy(&self.buf).into_owned(),
            self.dropped,
        )
    }
}

/// What one exec produced before interpretation.
pub(super) struct Raw {
    pub(super) exit_code: Option<i64>,
    pub(super) stdout: Tail,
    pub(super) stderr: Tail,
    pub(super) duration: Duration,
    /// The host-side deadline passed (escalation step 2 or 3 ran).
    pub(super) expired: bool,
    pub(super) session_killed: bool,
    pub(super) killed: usize,
}

/// The output stream of an attached exec.
type ExecStream = std::pin::Pin<
    Box<dyn futures_util::Stream<Item = Result<LogOutput, bollard::errors::Error>> + Send>,
>;

/// An exec's output read to its end (`Engine::drain_exec`).
struct Drained {
    stdout: Tail,
    stderr: Tail,
    /// When the output ended (or escalation gave up).
    end: Instant,
    /// Escalation steps taken (0: the exec ended within its limit).
    step: i32,
    /// Processes killed by escalation step 1.
    killed: usize,
}

/// The `timeout` argument: seconds with millisecond precision, at least 1 ms (0 disables it).
fn limit_arg(limit: Duration) -> String {
    let ms = limit.as_millis().max(1);
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

impl Engine {
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
                source: SessionError::EmptyCommand,
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
    pub(super) async fn exec_raw(
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
                source: SessionError::Dead,
            });
        }
        let (exec_id, output, t0) = self.start_exec(id, argv, env, workdir).await?;
        let far = Duration::from_secs(10 * 365 * 86_400);
        let deadline = t0 + host_limit.min(far);
        let drained = self
            .drain_exec(session, argv, output, deadline, sweep)
            .await?;
        let duration = drained.end - t0;
        let exit_code = if session.is_dead() {
            None
        } else {
            self.exit_code(&exec_id, id).await?
        };
        Ok(Raw {
            exit_code,
            stdout: drained.stdout,
            stderr: drained.stderr,
            duration,
            expired: drained.step > 0,
            session_killed: session.is_dead(),
            killed: drained.killed,
        })
    }

    /// Creates and starts an exec of `argv` in container `id`, attached to its output. Returns
    /// the exec's id, its output stream and when the engine answered the start request.
    async fn start_exec(
        &self,
        id: &str,
        argv: &[String],
        env: &[String],
        workdir: Option<&str>,
    ) -> Result<(String, ExecStream, Instant), EngineError> {
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
        let StartExecResults::Attached { output, input } = started else {
            return Err(EngineError::Session {
                id: id.to_string(),
                source: SessionError::Detached,
            });
        };
        drop(input);
        Ok((exec.id, output, t0))
    }

    /// Reads an exec's output to its end (the stream is closed on return). Past `deadline`,
    /// escalates step by step, each with [`HOST_GRACE`] to end the exec: kills the leftovers
    /// (when `sweep` and the main process is known), then the container.
    async fn drain_exec(
        &self,
        session: &Session,
        argv: &[String],
        mut output: ExecStream,
        mut deadline: Instant,
        sweep: bool,
    ) -> Result<Drained, EngineError> {
        let id = session.id.as_str();
        let (mut stdout, mut stderr) = (Tail::new(OUTPUT_CAP), Tail::new(OUTPUT_CAP));
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
        Ok(Drained {
            stdout,
            stderr,
            end,
            step,
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
                source: SessionError::NoMainProcess,
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
                source: SessionError::Sweep {
                    exit_code: raw.exit_code,
                    stderr: raw.stderr.finish().0.trim().to_string(),
                },
            }),
        }
    }
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
}
