//! Where test commands run: the [`Executor`] trait and what its sessions can do.
//!
//! A *session* is one version of one instance, ready to run commands: a long-lived container for
//! [`crate::docker::DockerExecutor`], a checked-out tree for [`crate::local::LocalExecutor`], a
//! script for [`crate::scripted::ScriptedExecutor`]. The timing protocol of `etip-measure` starts two
//! sessions per ETIP, runs every round in them and stops them at the end, whatever happened.
//!
//! The trait is synchronous: the protocol is sequential by nature (one round after another, one
//! version after the other), and an executor that talks to an async engine blocks on the runtime
//! handle the binary gives it.

use std::path::Path;
use std::time::Duration;

/// Resource limits of a session.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Resources {
    /// CPUs the session may use (when no CPU set is given).
    pub cpus: f64,
    pub memory_mb: u64,
    pub pids: i64,
}

impl Default for Resources {
    fn default() -> Self {
        Resources {
            cpus: 1.0,
            memory_mb: 4096,
            pids: 4096,
        }
    }
}

/// What a session is for.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRequest {
    /// Instance id (for labels and messages).
    pub instance: String,
    /// Label of the session: `original`, `patched`, or `original-b` for the second side of an A/A run.
    pub label: String,
    /// The image holding the trees (container executors).
    pub image: Option<String>,
    /// The version's tree (absolute path inside the session).
    pub tree: String,
    /// Paths the session must neither see nor write (the other version's tree).
    pub hidden: Vec<String>,
    /// Environment of every command (`KEY=value`).
    pub env: Vec<String>,
    /// CPU set to pin the session to (`"2,3"`), if any.
    pub cpuset: Option<String>,
    pub resources: Resources,
    /// The session changes its tree (an evaluated candidate: the patch is applied and built
    /// there) and must do it in a copy of its own. Container executors always give a session its
    /// own file system; the local executor copies the local build's folder for it
    /// ([`crate::local`]).
    pub private: bool,
}

/// One command to run in a session.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandRequest {
    pub argv: Vec<String>,
    /// Extra environment (`KEY=value`) on top of the session's.
    pub env: Vec<String>,
    pub cwd: String,
    /// Files or folders to delete just before the command starts (stale reports). Executors do
    /// it without a round trip of their own: the Docker executor prefixes the command with
    /// `rm -rf` in the same exec (a few milliseconds inside the command's wall time), the local
    /// executor deletes them before it starts the clock.
    pub clean: Vec<String>,
    /// The command is killed when it runs longer.
    pub timeout: Duration,
}

/// What a command did.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandOutput {
    /// Exit code; `None` when killed.
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    /// The command's own wall time.
    pub wall: Duration,
}

impl CommandOutput {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// Failures of an executor (not of the tests it runs: those are outputs).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("{executor}: {detail}")]
    Failed {
        executor: &'static str,
        detail: String,
    },
    #[error("{executor}: {action} {path}: {source}")]
    Io {
        executor: &'static str,
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl ExecError {
    pub fn failed(executor: &'static str, detail: impl Into<String>) -> ExecError {
        ExecError::Failed {
            executor,
            detail: detail.into(),
        }
    }
}

/// Facts about an executor, recorded with every measurement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecutorInfo {
    /// `docker`, `local` or `scripted`.
    pub name: String,
    /// Engine version and storage driver, or the host's description.
    pub engine: Option<String>,
    pub kernel: Option<String>,
    pub cpu_model: Option<String>,
    /// Whether sessions can be pinned to CPU sets.
    pub can_pin: bool,
}

/// Starts sessions. Implementations: Docker, local processes, scripted (tests).
pub trait Executor: Send + Sync {
    /// `docker`, `local` or `scripted`: named in every output.
    fn name(&self) -> &'static str;

    fn info(&self) -> ExecutorInfo;

    /// Starts a session; paid once per ETIP and version, not per round.
    fn start(&self, request: &SessionRequest) -> Result<Box<dyn Session>, ExecError>;
}

/// One running version of one instance.
pub trait Session: Send {
    /// Runs a command to completion (or to its time limit).
    fn run(&mut self, command: &CommandRequest) -> Result<CommandOutput, ExecError>;

    /// Deletes files or folders (stale reports) before a run; missing paths are fine.
    fn remove(&mut self, paths: &[String]) -> Result<(), ExecError>;

    /// Copies a file or folder out of the session into `dest` (created); `Ok(false)` when the path
    /// does not exist.
    fn copy_out(&mut self, path: &str, dest: &Path) -> Result<bool, ExecError>;

    /// Writes a file into the session's own scratch folder (outside every tree: a patch to apply)
    /// and returns its absolute path inside the session. `name` is a plain file name.
    fn put_file(&mut self, name: &str, data: &[u8]) -> Result<String, ExecError>;

    /// Stops the session and removes what it created; idempotent.
    fn stop(&mut self) -> Result<(), ExecError>;

    /// Leaves the session running when this handle is dropped and returns how to reach it (the
    /// container's id), for a person or an agent framework to work in (`etip sandbox`); `None`
    /// when the executor's sessions cannot outlive the process.
    fn detach(&mut self) -> Option<String> {
        None
    }

    /// Makes the session's present state the one [`Session::renew`] returns to (Docker: the
    /// container committed to a temporary image). `Ok(false)` when the executor cannot: its
    /// rounds then share one session.
    fn checkpoint(&mut self) -> Result<bool, ExecError> {
        Ok(false)
    }

    /// Replaces the session by a fresh one in the checkpointed state, so nothing a round wrote
    /// (files, caches, processes) is there for the next: a candidate cannot carry results from
    /// one round to another. `Ok(false)` when the executor cannot.
    fn renew(&mut self) -> Result<bool, ExecError> {
        Ok(false)
    }
}
