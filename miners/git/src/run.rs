//! One mining run: the history walk feeding the workers, the parent recording and linking their
//! decisions, and the candidates file and summary at the end.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use etip_store::{CommitRecord, Store};
use git2::Oid;

use crate::linker::Linker;
use crate::output::{self, Counts, write_output};
use crate::{
    Decision, EvalSettings, MineConfig, MineError, Prepared, Progress, RejectReason, Summary,
    Worker, feed, history, in_window, open, procs, run_key,
};

/// The end of a run: the walked history, its date window, and what the candidates file holds.
type Finished = (history::Chain, Arc<Vec<Oid>>, Counts);

/// Feeds the workers the commits of the window that are not decided yet (newest first, in blocks
/// so that they start at once), then ends the feed with the window.
fn feed_window(
    cfg: &MineConfig,
    p: &Prepared,
    feed: &feed::Feed,
    stop: &AtomicBool,
    decided: &HashSet<Oid>,
) -> history::Chain {
    let mut fresh = Vec::new();
    let mut resumed = 0;
    for (ids, time) in &p.walked {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if !in_window(cfg, *time) {
            continue;
        }
        if decided.contains(&ids.commit) {
            resumed += 1;
        } else {
            fresh.push(*ids);
            if fresh.len() >= 64 {
                feed.push(&mut fresh);
            }
        }
    }
    feed.push(&mut fresh);
    end_feed(cfg, p, feed, resumed)
}

/// Ends the feed with the date window of the walked history (`resumed` of its commits were
/// decided before), and returns that history.
fn end_feed(cfg: &MineConfig, p: &Prepared, feed: &feed::Feed, resumed: u64) -> history::Chain {
    let chain = p.chain();
    let window = chain
        .0
        .iter()
        .filter(|(_, t)| in_window(cfg, *t))
        .map(|(o, _)| *o)
        .collect();
    feed.finish(resumed, window);
    chain
}

/// One worker thread (`--jobs 1`, or no worker command): evaluates the blocks `feed` hands out and
/// sends the decisions on in batches, until the work is done, the run stops or the receiver is gone.
fn thread_worker(
    repo_path: &std::path::Path,
    settings: Arc<EvalSettings>,
    feed: &feed::Feed,
    stop: &AtomicBool,
    jobs: usize,
    tx: &procs::Sink,
) {
    let mut worker = match Worker::new(repo_path, settings) {
        Ok(w) => w,
        Err(e) => {
            let _ = tx.send(vec![Err(e)]);
            return;
        }
    };
    while !stop.load(Ordering::Relaxed) {
        let Some(block) = feed.grab(jobs) else { break };
        let mut batch = Vec::with_capacity(16);
        for ids in &block {
            let r = worker.evaluate_ids(ids).map(|d| to_record(ids.commit, d));
            let failed = r.is_err();
            batch.push(r);
            if (batch.len() >= 16 || failed) && tx.send(std::mem::take(&mut batch)).is_err() {
                return;
            }
            if failed || stop.load(Ordering::Relaxed) {
                break;
            }
        }
        if !batch.is_empty() && tx.send(batch).is_err() {
            return;
        }
    }
}

/// A run under way: its id in the state store, the walked history, the linker (with the JIRA
/// prefixes the walk found) and whether no earlier run decided any of its commits.
struct Begun {
    run: i64,
    walked: history::Chain,
    linker: Linker,
    nothing_decided: bool,
}

/// Walks the history, feeding the workers the window's commits as it reads them when `stream`
/// (a state file with no decision), then opens the run in the store (its key depends on the JIRA
/// prefixes the walk finds), feeds what is left to decide and ends the feed.
fn begin(
    cfg: &MineConfig,
    p: &mut Prepared,
    store: &mut Store,
    feed: &feed::Feed,
    stop: &AtomicBool,
    stream: bool,
) -> Result<Begun, MineError> {
    // The parent links the candidates as they arrive ([`linker`]); the walk reads through it, so
    // that its commit graph starts with the first-parent history.
    let mut linker = Linker::open(&p.repo_path, Arc::clone(&p.settings))?;
    let mut fresh = Vec::new();
    p.walk(
        cfg,
        |oid| linker.read_commit(oid),
        |ids, time| {
            if stream && in_window(cfg, time) {
                fresh.push(*ids);
                if fresh.len() >= 64 {
                    feed.push(&mut fresh);
                }
            }
        },
    )?;
    let (key, params) = run_key(cfg, p);
    let run = store.mine_run(&key, &params)?;
    let decided: HashSet<Oid> = store
        .decided(run)?
        .iter()
        .filter_map(|sha| Oid::from_str(sha).ok())
        .collect();
    tracing::info!(
        decided = decided.len(),
        state = %cfg.state_path().display(),
        "mining {}",
        p.settings.source
    );
    let walked = if stream {
        feed.push(&mut fresh);
        end_feed(cfg, p, feed, 0)
    } else {
        feed_window(cfg, p, feed, stop, &decided)
    };
    linker.set_settings(Arc::clone(&p.settings));
    Ok(Begun {
        run,
        walked,
        linker,
        nothing_decided: decided.is_empty(),
    })
}

/// The parent's side of the decisions: it links each candidate, records the decisions in the
/// state store in batches (keeping them for the output when no earlier run decided any), reports
/// progress and rewrites the candidates file at checkpoints.
struct Recorder<'a> {
    cfg: &'a MineConfig,
    feed: &'a feed::Feed,
    run: i64,
    linker: Linker,
    batch: Vec<CommitRecord>,
    memory: Option<Vec<CommitRecord>>,
    last_flush: Instant,
    last_checkpoint: Instant,
    recorded: u64,
    started_bar: bool,
}

impl Recorder<'_> {
    /// Takes one worker's decision.
    fn take(
        &mut self,
        mut record: CommitRecord,
        store: &mut Store,
        progress: &mut dyn Progress,
    ) -> Result<(), MineError> {
        self.linker.link_record(&mut record)?;
        self.batch.push(record);
        if self.batch.len() >= 256 || self.last_flush.elapsed() >= Duration::from_millis(200) {
            self.flush(store, progress)?;
            self.last_flush = Instant::now();
            if self.last_checkpoint.elapsed() >= self.cfg.checkpoint {
                if let Some(window) = self.feed.window() {
                    let state = self.cfg.state_path();
                    write_output(self.cfg, &state, store, self.run, &window, None)?;
                }
                self.last_checkpoint = Instant::now();
            }
        }
        Ok(())
    }

    /// Records the decisions taken since the last flush.
    fn flush(&mut self, store: &mut Store, progress: &mut dyn Progress) -> Result<(), MineError> {
        if !self.batch.is_empty() {
            store.record_commits(self.run, &self.batch)?;
            self.report(self.batch.len() as u64, progress);
            match self.memory.as_mut() {
                Some(kept) => kept.append(&mut self.batch),
                None => self.batch.clear(),
            }
        }
        Ok(())
    }

    /// Advances the progress bar by `n`. The bar starts when the walk has counted the work; what
    /// was recorded before is reported then.
    fn report(&mut self, n: u64, progress: &mut dyn Progress) {
        self.recorded += n;
        if !self.started_bar {
            let Some((pending, resumed)) = self.feed.totals() else {
                return;
            };
            progress.start(pending, resumed);
            self.started_bar = true;
            progress.advance(self.recorded);
        } else if n > 0 {
            progress.advance(n);
        }
    }
}

/// Starts the worker processes of a run (none for one job, or without a worker command) and
/// greets them: they open the repository while the parent walks the history. They judge the rules
/// only, which do not need the JIRA prefixes the walk finds.
fn start_workers(
    cfg: &MineConfig,
    p: &Prepared,
    jobs: usize,
) -> Vec<Result<procs::Started, MineError>> {
    match &cfg.worker {
        Some(cmd) if jobs > 1 => {
            let hello = serde_json::to_string(&procs::Hello {
                repo_path: p.repo_path.clone(),
                settings: (*p.settings).clone(),
            })
            .expect("settings always serialise");
            (0..jobs).map(|_| procs::start(cmd, &hello)).collect()
        }
        _ => Vec::new(),
    }
}

/// Mines the history described by `cfg`, resuming from its state store, and writes the candidates file.
///
/// Refuses at once an empty date window, a candidates path that is not a regular file, a shallow
/// clone, and a state file that another run holds ([`etip_store::StoreError::Locked`]).
pub fn mine(cfg: &MineConfig, progress: &mut dyn Progress) -> Result<Summary, MineError> {
    let started = Instant::now();
    cfg.check_window()?;
    output::check_target(&cfg.out)?;
    let mut p = open(cfg)?;
    let state_path = cfg.state_path();
    let mut store = Store::open_exclusive(&state_path)?;
    let jobs = cfg.jobs.max(1);
    let mut children = start_workers(cfg, &p, jobs);
    // A state file with no decision yet: the workers take the window's commits as the walk
    // reads them. Otherwise the walk comes first, and the commits an earlier run decided are
    // left out.
    let stream = !store.has_decisions()?;
    let feed = feed::Feed::default();
    let stop = AtomicBool::new(false);
    let (tx, rx) = crossbeam_channel::bounded::<Vec<Result<CommitRecord, MineError>>>(64);
    let mut outcome: Result<(), MineError> = Ok(());
    let mut finished: Result<Finished, MineError> = Err(MineError::WorkerPanic);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let (feed, stop) = (&feed, &stop);
            if let Some(child) = children.pop() {
                scope.spawn(move || procs::drive(child, || feed.grab(jobs), stop, tx));
                continue;
            }
            let settings = Arc::clone(&p.settings);
            let repo_path = p.repo_path.clone();
            scope.spawn(move || thread_worker(&repo_path, settings, feed, stop, jobs, &tx));
        }
        drop(tx);
        let begun = begin(cfg, &mut p, &mut store, &feed, &stop, stream);
        let Begun {
            run,
            walked,
            linker,
            nothing_decided,
        } = match begun {
            Ok(b) => b,
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                feed.close();
                for _ in rx.iter() {}
                finished = Err(e);
                return;
            }
        };
        let mut rec = Recorder {
            cfg,
            feed: &feed,
            run,
            linker,
            batch: Vec::new(),
            memory: nothing_decided.then(Vec::new),
            last_flush: Instant::now(),
            last_checkpoint: Instant::now(),
            recorded: 0,
            started_bar: false,
        };
        for msg in rx.iter().flatten() {
            if let Err(e) = msg.and_then(|r| rec.take(r, &mut store, progress)) {
                stop.store(true, Ordering::Relaxed);
                feed.close();
                outcome = Err(e);
                break;
            }
        }
        if outcome.is_ok() {
            outcome = rec.flush(&mut store, progress);
        } else {
            // Keep what was decided before the error.
            let _ = rec.flush(&mut store, progress);
        }
        // Drain so that blocked workers can finish.
        for _ in rx.iter() {}
        // When nothing was recorded, the bar starts (and ends) here.
        rec.report(0, progress);
        // The output is written while the worker processes exit.
        finished = (|| {
            outcome?;
            if !feed.drained() {
                return Err(MineError::WorkerPanic);
            }
            let window = feed.window().ok_or(MineError::WorkerPanic)?;
            progress.finish();
            tracing::debug!(elapsed = ?started.elapsed(), "every commit decided");
            let counts = write_output(cfg, &state_path, &store, run, &window, rec.memory.take())?;
            tracing::debug!(elapsed = ?started.elapsed(), "candidates written");
            Ok((walked, window, counts))
        })();
    });
    let (chain, window, counts) = finished?;
    let (pending, resumed) = feed.totals().unwrap_or_default();
    let mut summary = summarize(cfg, &p, chain, &window, counts, started);
    summary.resumed = resumed;
    summary.commits_per_second = if summary.elapsed_seconds > 0.0 {
        pending as f64 / summary.elapsed_seconds
    } else {
        0.0
    };
    summary.state = state_path.to_string_lossy().into_owned();
    Ok(summary)
}

/// The summary of a finished run (`resumed`, `commits_per_second` and `state` left for the caller).
fn summarize(
    cfg: &MineConfig,
    p: &Prepared,
    (chain, unreadable): history::Chain,
    window: &[Oid],
    counts: Counts,
    started: Instant,
) -> Summary {
    let mut rejected: BTreeMap<RejectReason, u64> =
        RejectReason::ALL.into_iter().map(|r| (r, 0)).collect();
    for (r, n) in counts.rejected {
        *rejected.entry(r).or_default() += n;
    }
    rejected.insert(RejectReason::Duplicate, counts.duplicates);
    let skipped = unreadable.len();
    Summary {
        repo: p.settings.repo_name.clone(),
        source: p.settings.source.clone(),
        language: cfg.lang,
        tip: p.tip.to_string(),
        commits_in_history: chain.len() as u64,
        outside_window: (chain.len() - window.len() - skipped) as u64,
        skipped_unreadable: skipped as u64,
        unreadable,
        commits_scanned: window.len() as u64,
        resumed: 0,
        kept: counts.kept,
        candidates: counts.kept - counts.duplicates,
        rejected,
        with_issue_links: counts.with_issue_links,
        with_jira_keys: counts.with_jira_keys,
        jira_projects: p.settings.jira_projects.clone(),
        classified: counts.answers.clone(),
        classifier: cfg
            .classify
            .then(|| etip_classify::Offline::NAME.to_string()),
        with_pr_number: counts.with_pr_number,
        build_tools: p
            .build_tools
            .iter()
            .map(|t| t.marker().to_string())
            .collect(),
        build_tool_supported: etip_lang::profile::build_tool_supported(cfg.lang, &p.build_tools),
        semantic_filter: cfg.semantic,
        jobs: cfg.jobs.max(1),
        elapsed_seconds: started.elapsed().as_secs_f64(),
        commits_per_second: 0.0,
        output: cfg.out.to_string_lossy().into_owned(),
        state: String::new(),
    }
}

pub(crate) fn to_record(oid: Oid, d: Decision) -> CommitRecord {
    let sha = oid.to_string();
    match d {
        Decision::Kept(c) => {
            let payload = serde_json::to_string(&c).expect("a candidate always serialises");
            let detail = c.changed_functions.join(", ");
            CommitRecord::kept(&sha, payload, c.diff_hash.clone(), detail)
        }
        Decision::Rejected { reason, detail } => {
            CommitRecord::rejected(&sha, reason.as_str(), &detail)
        }
    }
}
