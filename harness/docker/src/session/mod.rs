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
//!
//! # Modules
//!
//! Everything is re-exported here: starting and stopping sessions (`lifecycle`), running timed
//! commands in them (`exec`), and copying files out (`copy`).
//!
//! [`Engine::start_session`]: crate::Engine::start_session
//! [`Engine::exec`]: crate::Engine::exec
//! [`Engine::copy_out`]: crate::Engine::copy_out
//! [`Engine::stop_session`]: crate::Engine::stop_session
//! [`Engine::kill_leftovers`]: crate::Engine::kill_leftovers

use crate::Limits;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

mod copy;
mod exec;
mod lifecycle;

pub use copy::{Extracted, extract_tar};
pub use exec::{ExecOutput, ExecSpec};

/// At most this many bytes of each output stream of an exec are kept: the last ones (the end of a
/// log says why it failed); the number of bytes dropped before them is reported.
pub const OUTPUT_CAP: usize = 1 << 20;

/// Time between `TERM` and `KILL` when an exec's time limit is exceeded.
pub const KILL_AFTER: Duration = Duration::from_secs(5);

/// How long etip waits for each escalation step of a time limit to end the exec.
pub const HOST_GRACE: Duration = Duration::from_secs(5);

/// Value of [`LABEL_KIND`] on session containers.
///
/// [`LABEL_KIND`]: crate::LABEL_KIND
pub const KIND_SESSION: &str = "session";

/// A long-lived container to run commands in ([`Engine::start_session`]).
///
/// [`Engine::start_session`]: crate::Engine::start_session
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
///
/// [`Engine::stop_session`]: crate::Engine::stop_session
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
