//! Host processes with a time limit: each command runs in its own process group, and at its
//! limit the whole group (the command and everything it started) is killed. Shared by the local
//! executor's test runs and the local builder's scripts.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a command ended.
#[derive(Debug)]
pub struct Finished {
    /// The exit status (of the killed process when `timed_out`).
    pub status: ExitStatus,
    /// From spawn to exit.
    pub wall: Duration,
    /// Killed at the time limit.
    pub timed_out: bool,
}

impl Finished {
    /// The exit code; `None` when killed (by the limit or a signal).
    pub fn code(&self) -> Option<i32> {
        if self.timed_out {
            None
        } else {
            self.status.code()
        }
    }
}

/// Runs `cmd` in a new process group to completion or to `limit` (then the group is killed).
pub fn run_with_limit(cmd: &mut Command, limit: Duration) -> io::Result<Finished> {
    cmd.process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let wall = start.elapsed();
        let _ = tx.send((status, wall));
    });
    let (status, wall, timed_out) = match rx.recv_timeout(limit) {
        Ok((status, wall)) => (status, wall, false),
        Err(_) => {
            // `--`: procps' kill reads a bare `-<pgid>` as a signal name.
            let _ = Command::new("kill")
                .args(["-s", "KILL", "--", &format!("-{pid}")])
                .status();
            match rx.recv() {
                Ok((status, wall)) => (status, wall, true),
                Err(_) => return Err(io::Error::other("lost the command's exit status")),
            }
        }
    };
    let _ = waiter.join();
    Ok(Finished {
        status: status?,
        wall,
        timed_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_and_the_limit() {
        let ok = run_with_limit(
            Command::new("sh").args(["-c", "exit 3"]),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!((ok.code(), ok.timed_out), (Some(3), false));
        // The child of the shell is killed with it: the wait ends at the limit, not after 30 s.
        let t = Instant::now();
        let slow = run_with_limit(
            Command::new("sh").args(["-c", "sleep 30 & wait"]),
            Duration::from_millis(300),
        )
        .unwrap();
        assert!(slow.timed_out && slow.code().is_none());
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }
}
