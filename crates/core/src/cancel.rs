//! One cancellation token for the whole pipeline.
//!
//! A run is cancelled when the user interrupts it (SIGINT, SIGTERM): from then on no new work unit
//! starts, the protocol stops between rounds, the Docker layer creates no container and commits no
//! session, and nothing that a cancellation cut short is recorded as an outcome (a re-run does it
//! again). Every stage and every executor reads the same token, [`process`], so that one signal
//! reaches them all whichever executor or backend runs the work; a test or a library user that
//! wants a cancellation of its own makes a [`CancelToken`] and passes it down.
//!
//! ```
//! use etip_core::cancel::CancelToken;
//! let token = CancelToken::new();
//! let seen_by_a_worker = token.clone();
//! assert!(!seen_by_a_worker.is_cancelled());
//! token.cancel();
//! assert!(seen_by_a_worker.is_cancelled());
//! ```

use std::sync::Arc;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// A shared flag: cloned into every worker, set once, never reset.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token of its own, not cancelled.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Cancels every holder of this token (and of its clones).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether [`CancelToken::cancel`] was called on this token or a clone of it.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

static PROCESS: LazyLock<CancelToken> = LazyLock::new(CancelToken::new);

/// The process's token: the binary's signal handler cancels it; stages, executors and the Docker
/// layer read it.
pub fn process() -> &'static CancelToken {
    &PROCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_flag_and_tokens_are_independent() {
        let a = CancelToken::new();
        let b = CancelToken::new();
        let a2 = a.clone();
        a2.cancel();
        assert!(a.is_cancelled());
        assert!(!b.is_cancelled());
    }

    #[test]
    fn a_cancellation_is_seen_by_other_threads() {
        let token = CancelToken::new();
        let worker = token.clone();
        let handle = std::thread::spawn(move || {
            while !worker.is_cancelled() {
                std::thread::yield_now();
            }
            true
        });
        token.cancel();
        assert!(handle.join().unwrap());
    }
}
