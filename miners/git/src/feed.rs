//! The work queue between the history walk and the mining workers.
//!
//! The walk appends the commits to evaluate while the workers already take blocks of them, so the
//! first-parent walk (about a tenth of a second on netty's 12,000 commits) overlaps the mining
//! instead of preceding it. (A run that resumes from a state file with decisions walks first: the
//! commits decided before are left out, and which run's they are depends on what the walk finds.)
//!
//! Workers take blocks of consecutive commits. While the walk goes on, blocks have a fixed size.
//! Once the walk has ended, blocks shrink as the work runs out (guided scheduling): large blocks
//! first, so that a file's consecutive changes mostly land on the same worker and its caches, and
//! small ones at the end, so that the workers finish together.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use git2::Oid;

use crate::history::CommitIds;

/// Block size while the walk is still going on.
const WALKING_BLOCK: usize = 64;
/// Smallest and largest guided block.
const MIN_BLOCK: usize = 16;
const MAX_BLOCK: usize = 1024;

#[derive(Default)]
struct State {
    items: Vec<CommitIds>,
    next: usize,
    /// The walk has ended (or failed, or the run stops): no more items will come.
    done: bool,
    /// Commits of the window that an earlier run decided (known once `done`).
    resumed: u64,
    /// The date window's commits, oldest first (once the walk has ended).
    window: Option<Arc<Vec<Oid>>>,
}

/// The shared queue.
#[derive(Default)]
pub(crate) struct Feed {
    state: Mutex<State>,
    more: Condvar,
}

impl Feed {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked while holding the lock cannot have left the queue half-updated:
        // every update is a single assignment or push.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends commits to evaluate.
    pub(crate) fn push(&self, items: &mut Vec<CommitIds>) {
        if items.is_empty() {
            return;
        }
        self.lock().items.append(items);
        self.more.notify_all();
    }

    /// The walk has ended: `window` holds the date window's commits, oldest first, and `resumed` of
    /// them were decided before.
    pub(crate) fn finish(&self, resumed: u64, window: Vec<Oid>) {
        let mut s = self.lock();
        s.done = true;
        s.resumed = resumed;
        s.window = Some(Arc::new(window));
        drop(s);
        self.more.notify_all();
    }

    /// No more work is handed out (an error stops the run).
    pub(crate) fn close(&self) {
        let mut s = self.lock();
        s.done = true;
        s.next = s.items.len();
        drop(s);
        self.more.notify_all();
    }

    /// The next block for one of `jobs` workers; `None` when the work is done. Waits while the walk
    /// has not produced enough.
    pub(crate) fn grab(&self, jobs: usize) -> Option<Vec<CommitIds>> {
        let mut s = self.lock();
        loop {
            let available = s.items.len() - s.next;
            let size = if s.done {
                if available == 0 {
                    return None;
                }
                (available / (jobs.max(1) * 2))
                    .clamp(MIN_BLOCK, MAX_BLOCK)
                    .min(available)
            } else if available >= WALKING_BLOCK {
                WALKING_BLOCK
            } else {
                s = self
                    .more
                    .wait(s)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            };
            let start = s.next;
            s.next += size;
            return Some(s.items[start..start + size].to_vec());
        }
    }

    /// `(pending, resumed)` once the walk has ended.
    pub(crate) fn totals(&self) -> Option<(u64, u64)> {
        let s = self.lock();
        s.done.then_some((s.items.len() as u64, s.resumed))
    }

    /// The date window's commits, oldest first, once the walk has ended.
    pub(crate) fn window(&self) -> Option<Arc<Vec<Oid>>> {
        self.lock().window.clone()
    }

    /// Whether every item was handed out.
    pub(crate) fn drained(&self) -> bool {
        let s = self.lock();
        s.next >= s.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: u8) -> CommitIds {
        let oid = Oid::from_bytes(&[n; 20]).expect("20 bytes");
        CommitIds {
            commit: oid,
            tree: oid,
            parent: None,
            parent_tree: None,
        }
    }

    #[test]
    fn blocks_are_fixed_while_walking_then_guided() {
        let feed = Feed::default();
        let mut items: Vec<CommitIds> = (0..200).map(|i| ids(i as u8)).collect();
        feed.push(&mut items);
        assert!(items.is_empty());
        assert_eq!(feed.grab(2).map(|b| b.len()), Some(WALKING_BLOCK));
        assert_eq!(feed.totals(), None);
        feed.finish(7, Vec::new());
        assert_eq!(feed.totals(), Some((200, 7)));
        // 136 left for 2 workers: 136 / 4 = 34, then 102 / 4 = 25, ...
        assert_eq!(feed.grab(2).map(|b| b.len()), Some(34));
        assert_eq!(feed.grab(2).map(|b| b.len()), Some(25));
        let mut taken = WALKING_BLOCK + 34 + 25;
        while let Some(b) = feed.grab(2) {
            assert!(b.len() >= MIN_BLOCK.min(200 - taken));
            taken += b.len();
        }
        assert_eq!(taken, 200);
        assert!(feed.drained());
    }

    #[test]
    fn a_waiting_worker_wakes_when_the_walk_ends() {
        let feed = Feed::default();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| feed.grab(2).map(|b| b.len()));
            std::thread::sleep(std::time::Duration::from_millis(20));
            feed.push(&mut vec![ids(1), ids(2), ids(3)]);
            feed.finish(0, Vec::new());
            assert_eq!(waiter.join().expect("no panic"), Some(3));
        });
        assert_eq!(feed.grab(2), None);
    }

    #[test]
    fn close_hands_out_nothing_more() {
        let feed = Feed::default();
        feed.push(&mut (0..100).map(|i| ids(i as u8)).collect());
        feed.close();
        assert_eq!(feed.grab(1), None);
        assert!(feed.drained());
    }
}
