//! Mining workers as child processes.
//!
//! libgit2 keeps its pack files, and the locks around them, in one process-wide cache. Two threads
//! that read objects at the same time take turns on those locks, so threads scale poorly: on netty's
//! history, two threads do only about 1.3 times the work of one. Separate processes share nothing but
//! the page cache, so each can run at full speed.
//!
//! [`mine`](crate::mine) starts `jobs` copies of a [`WorkerCommand`] (the `etip` binary runs
//! `etip mine worker`). It hands each one blocks of commits over its stdin, and reads the decisions
//! from its stdout. Only the parent writes the state store, so a killed run resumes as before; the
//! parent also adds the candidates' issue links ([`crate::linker`]), so a child judges the rules
//! only. A child whose parent dies sees its stdin close or its stdout break, and exits.
//!
//! The protocol is line-framed and binary-safe:
//! - **Parent to child.** The first line is a JSON [`Hello`], sent as the child starts (it opens
//!   the repository while the parent walks the history). Then there is one line per block. For
//!   each commit it holds four hex ids separated by spaces: the commit, its tree, its first parent
//!   and that parent's tree (`-` for none). End of input means no more work.
//! - **Child to parent.** Each decision is a frame:
//!   - `K <sha> <diff-hash> <payload-len> <detail-len>\n`, then the payload and detail bytes;
//!   - `R <sha> <reason> <detail-len>\n`, then the detail bytes.
//!
//!   `E\n` closes a block. `X <len>\n` and a message report a failure, after which the child exits.

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use etip_store::CommitRecord;
use git2::Oid;
use serde::{Deserialize, Serialize};

use crate::analyze::{EvalSettings, Worker};
use crate::history::CommitIds;
use crate::{MineError, to_record};

/// How to start one mining worker process: a program and its arguments. The program must call
/// [`serve`] with its stdin and stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    /// Executable (the `etip` binary: `std::env::current_exe()`).
    pub program: PathBuf,
    /// Arguments (`["mine", "worker"]` for `etip`).
    pub args: Vec<String>,
}

/// First line a worker reads: what to open and how to judge.
#[derive(Debug, Serialize, Deserialize)]
pub struct Hello {
    /// Repository directory.
    pub repo_path: PathBuf,
    /// Rule settings.
    pub settings: EvalSettings,
}

/// A child's records are sent on in batches of this many.
const BATCH: usize = 16;

/// Serves one parent: evaluates the blocks of commits read from `input`, writes the decisions to
/// `output`, and returns at the end of input. A failed evaluation is reported to the parent, then
/// returned. Meant to run once, at the end of a worker process: the worker's repository and caches
/// are left for the process exit to reclaim.
pub fn serve(input: impl Read, output: impl Write) -> Result<(), MineError> {
    let mut input = BufReader::new(input);
    let mut out = BufWriter::with_capacity(1 << 16, output);
    let mut line = String::new();
    if input.read_line(&mut line).map_err(MineError::WorkerPipe)? == 0 {
        return Ok(());
    }
    let hello: Hello = serde_json::from_str(&line).map_err(|e| {
        MineError::WorkerProcess(format!(
            "the first line from the parent is not a Hello: {e}"
        ))
    })?;
    git2::opts::strict_hash_verification(false);
    let mut worker = match Worker::new(&hello.repo_path, Arc::new(hello.settings)) {
        Ok(w) => w,
        Err(e) => return fail(&mut out, e),
    };
    loop {
        line.clear();
        if input.read_line(&mut line).map_err(MineError::WorkerPipe)? == 0 {
            out.flush().map_err(MineError::WorkerPipe)?;
            // The process ends here: freeing the repository's caches object by object would
            // only delay the exit the parent waits for.
            std::mem::forget(worker);
            return Ok(());
        }
        let mut fields = line.split_ascii_whitespace();
        let mut i = 0;
        while let Some(commit) = fields.next() {
            let ids = match parse_ids(commit, &mut fields) {
                Some(ids) => ids,
                None => {
                    let e = MineError::WorkerProcess(format!(
                        "the parent sent a block that does not read as commit ids: {line:?}"
                    ));
                    return fail(&mut out, e);
                }
            };
            match worker.evaluate_ids(&ids) {
                Ok(d) => write_record(&mut out, &to_record(ids.commit, d))
                    .map_err(MineError::WorkerPipe)?,
                Err(e) => return fail(&mut out, e),
            }
            i += 1;
            if i % BATCH == 0 {
                out.flush().map_err(MineError::WorkerPipe)?;
            }
        }
        out.write_all(b"E\n").map_err(MineError::WorkerPipe)?;
        out.flush().map_err(MineError::WorkerPipe)?;
    }
}

fn parse_ids<'a>(commit: &str, rest: &mut impl Iterator<Item = &'a str>) -> Option<CommitIds> {
    let opt = |hex: &str| -> Option<Option<Oid>> {
        if hex == "-" {
            Some(None)
        } else {
            Oid::from_str(hex).ok().map(Some)
        }
    };
    Some(CommitIds {
        commit: Oid::from_str(commit).ok()?,
        tree: Oid::from_str(rest.next()?).ok()?,
        parent: opt(rest.next()?)?,
        parent_tree: opt(rest.next()?)?,
    })
}

fn push_ids(line: &mut String, ids: &CommitIds) {
    use std::fmt::Write as _;
    let opt = |o: Option<Oid>| o.map_or_else(|| "-".to_string(), |o| o.to_string());
    let _ = write!(
        line,
        "{} {} {} {} ",
        ids.commit,
        ids.tree,
        opt(ids.parent),
        opt(ids.parent_tree)
    );
}

fn fail(out: &mut impl Write, e: MineError) -> Result<(), MineError> {
    let msg = e.to_string();
    // The parent may be gone already; the error is returned either way.
    let _ = write!(out, "X {}\n{msg}", msg.len()).and_then(|()| out.flush());
    Err(e)
}

fn write_record(out: &mut impl Write, r: &CommitRecord) -> std::io::Result<()> {
    let detail = r.detail.as_deref().unwrap_or("");
    if r.kept {
        let payload = r.payload.as_deref().unwrap_or("");
        let hash = r.diff_hash.as_deref().unwrap_or("-");
        writeln!(out, "K {} {hash} {} {}", r.sha, payload.len(), detail.len())?;
        out.write_all(payload.as_bytes())?;
    } else {
        let reason = r.reason.as_deref().unwrap_or("-");
        writeln!(out, "R {} {reason} {}", r.sha, detail.len())?;
    }
    out.write_all(detail.as_bytes())
}

enum Frame {
    Record(CommitRecord),
    End,
    Failed(String),
}

fn protocol(what: &str) -> MineError {
    MineError::WorkerProcess(format!("a mining worker process sent {what}"))
}

fn read_string(input: &mut impl Read, len: &str) -> Result<String, MineError> {
    let n: usize = len.parse().map_err(|_| protocol("a bad length"))?;
    let mut buf = vec![0; n];
    input.read_exact(&mut buf).map_err(MineError::WorkerPipe)?;
    String::from_utf8(buf).map_err(|_| protocol("text that is not UTF-8"))
}

/// The next frame, or `None` at the end of the child's output.
fn read_frame(input: &mut impl BufRead, header: &mut String) -> Result<Option<Frame>, MineError> {
    header.clear();
    if input.read_line(header).map_err(MineError::WorkerPipe)? == 0 {
        return Ok(None);
    }
    if !header.ends_with('\n') {
        // Cut off in the middle of a header: the child died while writing it.
        return Err(MineError::WorkerPipe(
            std::io::ErrorKind::UnexpectedEof.into(),
        ));
    }
    let fields: Vec<&str> = header.trim_end_matches('\n').split(' ').collect();
    let frame = match fields.as_slice() {
        ["E"] => Frame::End,
        ["X", len] => Frame::Failed(read_string(input, len)?),
        ["K", sha, hash, payload_len, detail_len] => {
            let payload = read_string(input, payload_len)?;
            let detail = read_string(input, detail_len)?;
            CommitRecord::kept(sha, payload, (*hash).to_string(), detail).into()
        }
        ["R", sha, reason, detail_len] => {
            let detail = read_string(input, detail_len)?;
            CommitRecord::rejected(sha, reason, &detail).into()
        }
        _ => return Err(protocol(&format!("an unknown frame {header:?}"))),
    };
    Ok(Some(frame))
}

impl From<CommitRecord> for Frame {
    fn from(r: CommitRecord) -> Self {
        Frame::Record(r)
    }
}

/// Kills and reaps the child when the driver returns early.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// Where a driver sends its child's decisions.
pub(crate) type Sink = crossbeam_channel::Sender<Vec<Result<CommitRecord, MineError>>>;

/// A worker process started and sent its [`Hello`]: it opens the repository while the parent
/// walks the history.
pub(crate) struct Started {
    child: Reaped,
    to_child: BufWriter<ChildStdin>,
    from_child: BufReader<ChildStdout>,
}

/// Starts one worker process and sends it `hello`.
pub(crate) fn start(cmd: &WorkerCommand, hello: &str) -> Result<Started, MineError> {
    let child = Command::new(&cmd.program)
        .args(&cmd.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|source| MineError::WorkerSpawn {
            program: cmd.program.clone(),
            source,
        })?;
    let mut child = Reaped(child);
    let pid = child.0.id();
    let (Some(stdin), Some(stdout)) = (child.0.stdin.take(), child.0.stdout.take()) else {
        return Err(MineError::WorkerProcess(format!(
            "mining worker process {pid} has no pipes"
        )));
    };
    let mut to_child = BufWriter::new(stdin);
    if writeln!(to_child, "{hello}")
        .and_then(|()| to_child.flush())
        .is_err()
    {
        return Err(ended(&mut child));
    }
    Ok(Started {
        child,
        to_child,
        from_child: BufReader::with_capacity(1 << 16, stdout),
    })
}

/// The error for a child that ended before finishing its commits.
fn ended(child: &mut Reaped) -> MineError {
    let pid = child.0.id();
    let status = child
        .0
        .wait()
        .map_or_else(|e| e.to_string(), |s| s.to_string());
    MineError::WorkerProcess(format!(
        "mining worker process {pid} ended before finishing its commits ({status})"
    ))
}

/// Runs one worker process ([`start`]ed, or the error that prevented it): feeds it the blocks
/// `next_block` hands out until there are none left or `stop` is set, and sends its decisions, or
/// the error that ended it, to `sink`.
pub(crate) fn drive(
    started: Result<Started, MineError>,
    next_block: impl FnMut() -> Option<Vec<CommitIds>>,
    stop: &AtomicBool,
    sink: Sink,
) {
    match started.and_then(|s| feed_child(s, next_block, stop, &sink)) {
        Ok(Some((mut child, to_child))) => {
            // Every decision is in: the parent goes on while the child exits.
            drop(sink);
            // End of input: the child returns from `serve` and exits.
            drop(to_child);
            let pid = child.0.id();
            match child.0.wait() {
                Ok(status) if !status.success() && !stop.load(Ordering::Relaxed) => {
                    tracing::warn!(pid, %status, "mining worker process failed at exit after its last block");
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(pid, error = %e, "cannot reap a mining worker process"),
            }
        }
        // The parent stopped listening.
        Ok(None) => {}
        Err(e) => {
            let _ = sink.send(vec![Err(e)]);
        }
    }
}

type Fed = Option<(Reaped, BufWriter<ChildStdin>)>;

fn feed_child(
    started: Started,
    mut next_block: impl FnMut() -> Option<Vec<CommitIds>>,
    stop: &AtomicBool,
    sink: &Sink,
) -> Result<Fed, MineError> {
    let Started {
        mut child,
        mut to_child,
        mut from_child,
    } = started;
    let pid = child.0.id();
    let mut header = String::new();
    let started = std::time::Instant::now();
    let mut decided = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let Some(block) = next_block() else { break };
        let mut line = String::with_capacity(block.len() * 164);
        for ids in &block {
            push_ids(&mut line, ids);
        }
        line.push('\n');
        if to_child
            .write_all(line.as_bytes())
            .and_then(|()| to_child.flush())
            .is_err()
        {
            return Err(ended(&mut child));
        }
        let mut batch = Vec::with_capacity(BATCH);
        loop {
            let frame = match read_frame(&mut from_child, &mut header) {
                Ok(f) => f,
                // A torn frame: the child died while writing it.
                Err(MineError::WorkerPipe(_)) => return Err(ended(&mut child)),
                Err(e) => return Err(e),
            };
            match frame {
                Some(Frame::Record(r)) => {
                    decided += 1;
                    batch.push(Ok(r));
                    if batch.len() >= BATCH && sink.send(std::mem::take(&mut batch)).is_err() {
                        return Ok(None);
                    }
                }
                Some(Frame::End) => break,
                Some(Frame::Failed(message)) => return Err(MineError::WorkerFailed(message)),
                None => return Err(ended(&mut child)),
            }
        }
        if !batch.is_empty() && sink.send(batch).is_err() {
            return Ok(None);
        }
    }
    tracing::debug!(pid, decided, elapsed = ?started.elapsed(), "mining worker process done");
    Ok(Some((child, to_child)))
}
