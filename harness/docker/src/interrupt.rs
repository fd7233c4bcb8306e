//! Stopping on a signal without leaving containers or snapshot images behind.
//!
//! A signal can arrive while the engine is serving a request that creates an object: the
//! container or the snapshot image it returns exists only after the signal's handler listed what
//! to remove. So every request that creates a container or commits a session to a snapshot image
//! runs as its own task and is registered here while it is in flight; what it created is recorded
//! until the process removes it. [`interrupt`] stops new creations (under the same lock, so none
//! can slip in between), and [`Engine::remove_own_objects`] then waits for the requests in flight,
//! removes every container and snapshot image this process created and has not removed (found by
//! [`crate::LABEL_OWNER`] and by what the requests returned), waits out removals another part of
//! the process started, and counts the objects removed since the interrupt.

use crate::{Engine, EngineError, LABEL_KIND, LABEL_OWNER};
use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

/// How long a removal waits for a removal already in progress (or retries a conflicting one).
pub(crate) const REMOVAL_WAIT: Duration = Duration::from_secs(60);

/// Value of [`LABEL_KIND`] on the images [`Engine::snapshot_session`] commits.
pub const KIND_SNAPSHOT: &str = "snapshot";

/// What the process created and removed, and which engine requests are in flight.
#[derive(Default)]
struct State {
    interrupted: bool,
    /// Requests in flight that create or remove a container or a snapshot image.
    in_flight: usize,
    /// Containers created and not removed yet.
    containers: HashSet<String>,
    /// Snapshot images committed and not removed yet.
    snapshots: HashSet<String>,
    /// Every snapshot image committed (two requests may remove one: the first answer may be the
    /// other's "no such image").
    committed: HashSet<String>,
    /// Containers removed since the interrupt.
    removed_containers: BTreeSet<String>,
    /// Snapshot images removed since the interrupt.
    removed_snapshots: BTreeSet<String>,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(Mutex::default);
/// Mirror of `State::interrupted` for reads without the lock.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Marks the process as interrupted (a signal arrived): from now on no container is created and
/// no session is committed, so that [`Engine::remove_own_objects`] leaves none behind.
pub fn interrupt() {
    let mut s = state();
    s.interrupted = true;
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether [`interrupt`] was called.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Engine requests in flight that create or remove a container or a snapshot image.
pub fn in_flight() -> usize {
    state().in_flight
}

/// The kinds of objects a signal removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Object {
    Container,
    Snapshot,
}

/// One registered engine request; the registration ends when it is dropped.
pub(crate) struct InFlight(());

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut s = state();
        s.in_flight = s.in_flight.saturating_sub(1);
    }
}

/// Registers a request that creates an object; refuses once the process is interrupted.
pub(crate) fn begin_create(what: &str) -> Result<InFlight, EngineError> {
    let mut s = state();
    if s.interrupted {
        return Err(EngineError::Interrupted {
            what: what.to_string(),
        });
    }
    s.in_flight += 1;
    Ok(InFlight(()))
}

/// Registers a removal (allowed after the interrupt: it is how objects go away).
pub(crate) fn begin_removal() -> InFlight {
    state().in_flight += 1;
    InFlight(())
}

/// Records an object a request created (before its registration ends).
pub(crate) fn created(kind: Object, id: &str) {
    let mut s = state();
    match kind {
        Object::Container => s.containers.insert(id.to_string()),
        Object::Snapshot => {
            s.committed.insert(id.to_string());
            s.snapshots.insert(id.to_string())
        }
    };
}

/// Records that `id` is gone: `confirmed` when this process's request removed it (or waited
/// until it was), which counts it as removed after an interrupt. A container removed after the
/// interrupt counts; an image only when it is a snapshot this process committed.
pub(crate) fn gone(kind: Object, id: &str, confirmed: bool) {
    let mut s = state();
    let ours = match kind {
        Object::Container => s.containers.remove(id) || confirmed,
        Object::Snapshot => s.snapshots.remove(id) | s.committed.contains(id),
    };
    if confirmed && ours && s.interrupted {
        match kind {
            Object::Container => s.removed_containers.insert(id.to_string()),
            Object::Snapshot => s.removed_snapshots.insert(id.to_string()),
        };
    }
}

/// Whether an engine error is the given HTTP status.
pub(crate) fn status(e: &bollard::errors::Error) -> Option<u16> {
    match e {
        bollard::errors::Error::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

/// What [`Engine::remove_own_objects`] removed and what it could not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnRemoval {
    /// Containers removed since the interrupt (by this call or by another part of the process).
    pub containers: Vec<String>,
    /// Snapshot images removed since the interrupt.
    pub snapshots: Vec<String>,
    /// What is still there, one entry per object (`container <id>: <why>`).
    pub left: Vec<String>,
    /// Engine requests still in flight when the wait ended: what they create may appear later.
    pub unfinished: usize,
}

impl OwnRemoval {
    /// Whether everything this process created is gone.
    pub fn complete(&self) -> bool {
        self.left.is_empty() && self.unfinished == 0
    }
}

/// Waits until no registered request is in flight or `deadline` passes; returns how many are.
async fn settle(deadline: Instant) -> usize {
    loop {
        let n = in_flight();
        if n == 0 || Instant::now() >= deadline {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn short(id: &str) -> &str {
    let hex = id.strip_prefix("sha256:").unwrap_or(id);
    &hex[..hex.len().min(12)]
}

impl Engine {
    /// Called after [`interrupt`] when a signal stops a run: waits up to `wait` for the engine
    /// requests in flight that create or remove a container or a snapshot image, then
    /// force-removes (kills) every container and removes every snapshot image this process
    /// created and has not removed — found by [`LABEL_OWNER`] and by what the requests returned,
    /// so an object created after the listing is not missed. A removal already in progress is
    /// waited out. Built images are never touched. Never fails: what could not be removed is in
    /// [`OwnRemoval::left`].
    pub async fn remove_own_objects(&self, wait: Duration) -> OwnRemoval {
        let mut report = OwnRemoval {
            unfinished: settle(Instant::now() + wait).await,
            ..OwnRemoval::default()
        };
        let owner = format!("{LABEL_OWNER}={}", crate::owner());
        let (mut containers, mut snapshots) = {
            let s = state();
            (
                s.containers.iter().cloned().collect::<BTreeSet<_>>(),
                s.snapshots.iter().cloned().collect::<BTreeSet<_>>(),
            )
        };
        match self.list_containers(std::slice::from_ref(&owner)).await {
            Ok(listed) => containers.extend(listed.into_iter().map(|c| c.id)),
            Err(e) => report.left.push(format!("containers: {e}")),
        }
        let kind = format!("{LABEL_KIND}={KIND_SNAPSHOT}");
        match self.list_images(&[owner, kind]).await {
            Ok(listed) => snapshots.extend(listed.into_iter().map(|i| i.id)),
            Err(e) => report.left.push(format!("snapshot images: {e}")),
        }
        // Containers first: a snapshot image cannot go while a container of it exists.
        let removals = containers.iter().map(|id| async move {
            let limit = REMOVAL_WAIT + Duration::from_secs(10);
            match tokio::time::timeout(limit, self.remove_container(id)).await {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(format!("container {}: {e}", short(id))),
                Err(_) => Some(format!(
                    "container {}: the engine did not answer within {} s",
                    short(id),
                    limit.as_secs()
                )),
            }
        });
        report.left.extend(
            futures_util::future::join_all(removals)
                .await
                .into_iter()
                .flatten(),
        );
        // A snapshot may be the parent of another: retry the ones that fail until all are gone.
        let give_up = Instant::now() + REMOVAL_WAIT;
        let mut todo: Vec<String> = snapshots.into_iter().collect();
        loop {
            let attempts = todo.iter().map(|id| async move {
                let r = tokio::time::timeout(Duration::from_secs(30), self.remove_image(id)).await;
                match r {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) => Some((id.clone(), e.to_string())),
                    Err(_) => Some((id.clone(), "the engine did not answer".to_string())),
                }
            });
            let failed: Vec<(String, String)> = futures_util::future::join_all(attempts)
                .await
                .into_iter()
                .flatten()
                .collect();
            if failed.is_empty() || Instant::now() >= give_up {
                report.left.extend(
                    failed
                        .into_iter()
                        .map(|(id, e)| format!("snapshot image {}: {e}", short(&id))),
                );
                break;
            }
            todo = failed.into_iter().map(|(id, _)| id).collect();
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        // Removals other threads started finish (and are counted) before the report.
        report.unfinished = settle(Instant::now() + Duration::from_secs(10)).await;
        let s = state();
        report.containers = s.removed_containers.iter().cloned().collect();
        report.snapshots = s.removed_snapshots.iter().cloned().collect();
        report
    }
}
