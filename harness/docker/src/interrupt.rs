//! Stopping on a signal without leaving containers or snapshot images behind.
//!
//! A signal can arrive while the engine is serving a request that creates an object: the
//! container or snapshot image appears after the signal's handler listed what to remove, and a
//! process that exits without waiting for the answer leaves it behind. So every request that
//! creates a container or commits a session to a snapshot image runs as its own task and is
//! registered here while it is in flight; what it created is recorded until the process removes
//! it. [`interrupt`] stops new creations (under the same lock, so none
//! can slip in between), and [`Engine::remove_own_objects`] then waits for the requests in flight,
//! removes every container and snapshot image this process created and has not removed (found by
//! [`crate::LABEL_OWNER`] and by what the requests returned), waits out removals another part of
//! the process started, and counts the objects removed since the interrupt.

use crate::{Engine, EngineError, LABEL_KIND, LABEL_OWNER};
use std::collections::{BTreeSet, HashSet};
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

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

impl State {
    fn begin_create(&mut self, what: &str) -> Result<(), EngineError> {
        if self.interrupted {
            return Err(EngineError::Interrupted {
                what: what.to_string(),
            });
        }
        self.in_flight += 1;
        Ok(())
    }

    fn created(&mut self, kind: Object, id: &str) {
        match kind {
            Object::Container => {
                self.containers.insert(id.to_string());
            }
            Object::Snapshot => {
                self.committed.insert(id.to_string());
                self.snapshots.insert(id.to_string());
            }
        }
    }

    fn gone(&mut self, kind: Object, id: &str, confirmed: bool) {
        let ours = match kind {
            Object::Container => self.containers.remove(id) || confirmed,
            Object::Snapshot => self.snapshots.remove(id) | self.committed.contains(id),
        };
        if confirmed && ours && self.interrupted {
            match kind {
                Object::Container => self.removed_containers.insert(id.to_string()),
                Object::Snapshot => self.removed_snapshots.insert(id.to_string()),
            };
        }
    }
}

/// Marks the process as interrupted (a signal arrived): from now on no container is created and
/// no session is committed, so that [`Engine::remove_own_objects`] leaves none behind.
pub fn interrupt() {
    let mut s = state();
    s.interrupted = true;
    etip_core::cancel::process().cancel();
}

/// Whether the process was interrupted: [`interrupt`] was called, or the process's cancellation
/// token ([`etip_core::cancel::process`]) was cancelled.
pub fn interrupted() -> bool {
    etip_core::cancel::process().is_cancelled()
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
    state().begin_create(what)?;
    Ok(InFlight(()))
}

/// Registers a removal (allowed after the interrupt: it is how objects go away).
pub(crate) fn begin_removal() -> InFlight {
    state().in_flight += 1;
    InFlight(())
}

/// Records an object a request created (before its registration ends).
pub(crate) fn created(kind: Object, id: &str) {
    state().created(kind, id);
}

/// Records that `id` is gone: `confirmed` when this process's request removed it (or waited
/// until it was), which counts it as removed after an interrupt. A container removed after the
/// interrupt counts; an image only when it is a snapshot this process committed (counted once
/// when two requests removed it, whichever answer came first).
pub(crate) fn gone(kind: Object, id: &str, confirmed: bool) {
    state().gone(kind, id, confirmed);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creations_stop_at_the_interrupt_and_removals_count_after_it() {
        let mut s = State::default();
        assert!(s.begin_create("a container").is_ok());
        s.created(Object::Container, "c1");
        s.created(Object::Container, "c2");
        s.created(Object::Snapshot, "sha256:i1");
        s.gone(Object::Container, "c1", true);
        s.interrupted = true;
        let refused = s.begin_create("a container").map_err(|e| e.to_string());
        assert_eq!(
            refused,
            Err(
                "the run was interrupted: no container or snapshot image is created any more \
                 (a container)"
                    .to_string()
            )
        );
        assert_eq!(s.in_flight, 1);
        // Removed before the interrupt: not counted; a container found gone by someone else's
        // removal: not counted either.
        s.gone(Object::Container, "c2", false);
        s.gone(Object::Container, "c3", true);
        assert!(s.containers.is_empty());
        assert_eq!(s.removed_containers, BTreeSet::from(["c3".to_string()]));
    }

    #[test]
    fn a_snapshot_removed_by_two_requests_counts_once_whichever_answers_first() {
        let mut s = State::default();
        s.created(Object::Snapshot, "sha256:i1");
        s.created(Object::Snapshot, "sha256:i2");
        s.interrupted = true;
        // The other request's "no such image" is read before the removal's own answer.
        s.gone(Object::Snapshot, "sha256:i1", false);
        s.gone(Object::Snapshot, "sha256:i1", true);
        s.gone(Object::Snapshot, "sha256:i2", true);
        s.gone(Object::Snapshot, "sha256:i2", false);
        // An image this process did not commit is not a snapshot of its own.
        s.gone(Object::Snapshot, "etip/base:x", true);
        assert!(s.snapshots.is_empty());
        assert_eq!(
            s.removed_snapshots,
            BTreeSet::from(["sha256:i1".to_string(), "sha256:i2".to_string()])
        );
    }
}
