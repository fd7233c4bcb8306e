//! The measurement protocol, written out plainly (rules §3; hyperfine's `benchmark/mod.rs` is the
//! model).
//!
//! For one ETIP:
//!
//! 1. start one session per side (original, patched; for an A/A run two sessions of the original),
//!    once — container start-up is never part of a round;
//! 2. run `warmup` warm-up rounds (recorded, never used in verdicts), then timed rounds 1, 2, ...:
//!    round k runs the patched version first when k is odd and the original first when k is even
//!    (`Order::Alternate`), or in an order drawn per round from a recorded seed (`Order::Random`);
//! 3. in each round and for each side: run the test command (module `testrun`: stale reports
//!    deleted first, the round's time limit, per-class times read from the XML reports, never
//!    from console text; a failing class, a missing or unreadable report, a timeout end the ETIP
//!    as not executable), then each workload the side carries in a fresh process
//!    ([`crate::workload`]: a failing workload is a failed detector, recorded, not the end);
//! 4. where the kernel reports pressure stall information, a round that ran while some task was
//!    stalled for more than `pressure_threshold` of its wall time is run again (at most
//!    `max_repeats` times; the repeats are recorded);
//! 5. every completed round is handed to the [`RoundSink`] at once (the store), so a killed run
//!    resumes from the stored rounds; rounds given in `resumed` are not run again;
//! 6. with adaptive rounds, after the first `rounds` rounds and after each further batch, the
//!    caller's `more` callback says whether some series is still inconclusive
//!    ([`crate::verdict::needs_more_rounds`]); rounds stop at `max_rounds`;
//! 7. the sessions are stopped whatever happened.

use etip_records::measure::{NotExecutable, PressureRecord, RoundSummary};

use etip_core::detector::{DetectorKind, Workload};
use etip_core::measure::Version;
use etip_exec::executor::{Executor, Session, SessionRequest};
use etip_exec::noise::{self, Pressure};
use etip_toolchain::testcmd::TestCommand;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Order of the two versions within a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Order {
    /// Patched first in odd rounds, original first in even rounds (JETO).
    Alternate,
    /// Drawn per round from this seed (ChaCha20 keyed by seed and round: reproducible on resume).
    Random { seed: u64 },
}

impl Order {
    /// The version that runs first in round `k` (0 = warm-up).
    pub fn first(&self, k: usize) -> Version {
        match self {
            Order::Alternate => {
                if k % 2 == 1 {
                    Version::Patched
                } else {
                    Version::Original
                }
            }
            Order::Random { seed } => {
                let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed.wrapping_add(k as u64));
                if rng.random_bool(0.5) {
                    Version::Patched
                } else {
                    Version::Original
                }
            }
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Order::Alternate => "alternate",
            Order::Random { .. } => "random",
        }
    }

    /// The order in which `n` sides run in round `k`, as side indices. Two sides follow
    /// [`Order::first`] (side 1 is the patched one). More sides (an evaluation's original,
    /// candidate and reference) rotate: round k starts with side `k mod n` and goes on in index
    /// order, so over n consecutive rounds every side runs once in every position; a random order
    /// is a shuffle drawn from the seed and the round.
    pub fn sequence(&self, k: usize, n: usize) -> Vec<usize> {
        if n == 2 {
            return match self.first(k) {
                Version::Original => vec![0, 1],
                Version::Patched => vec![1, 0],
            };
        }
        match self {
            Order::Alternate => (0..n).map(|i| (k + i) % n.max(1)).collect(),
            Order::Random { seed } => {
                use rand::seq::SliceRandom;
                let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed.wrapping_add(k as u64));
                let mut v: Vec<usize> = (0..n).collect();
                v.shuffle(&mut rng);
                v
            }
        }
    }
}

/// One side of the comparison.
#[derive(Debug, Clone)]
pub struct SidePlan {
    /// The version this side runs (both sides run `Original` in an A/A run).
    pub version: Version,
    pub session: SessionRequest,
    /// The test command; `None` when the run times no tests (`etip measure --detectors
    /// workloads`).
    pub command: Option<TestCommand>,
    /// Workloads timed after the tests in every round, each in a fresh process.
    pub workloads: Vec<WorkloadRun>,
}

/// A workload as one side runs it: etip's runner (`scripts/etip_workload.py`) and the script,
/// put into the session before the first round, run by the version's interpreter in its tree.
/// A benchmark of the project's own suites runs the same way, as a script etip writes for it
/// ([`crate::suites`]).
#[derive(Debug, Clone)]
pub struct WorkloadRun {
    pub workload: Workload,
    /// [`DetectorKind::Workload`], or the suite the benchmark comes from.
    pub kind: DetectorKind,
    /// The interpreter, found on the session's `PATH` (the version's virtual environment).
    pub python: String,
    /// Working directory: the version's tree.
    pub cwd: String,
    /// A Java workload: how its session compiles it ([`crate::java_workload`]); `None` for Python.
    /// A JMH benchmark: how its session resolves the class path.
    pub java: Option<JavaBuild>,
    /// A JMH benchmark of the project's: what runs ([`crate::jmh`]).
    pub jmh: Option<crate::jmh::JmhBench>,
}

/// How a Java workload is compiled in its session: the version's Maven command (build tool and
/// arguments, offline as in every session) and the changed modules whose classes it uses.
#[derive(Debug, Clone)]
pub struct JavaBuild {
    pub maven: Vec<String>,
    /// Modules relative to the tree; empty for the root project.
    pub modules: Vec<String>,
}

impl WorkloadRun {
    /// An ETIP's own workload.
    pub fn own(workload: Workload, python: impl Into<String>, cwd: impl Into<String>) -> Self {
        WorkloadRun {
            workload,
            kind: DetectorKind::Workload,
            python: python.into(),
            cwd: cwd.into(),
            java: None,
            jmh: None,
        }
    }

    /// The detector's name in measurements (`workload:<name>`, `asv:<name>`, ...).
    pub fn detector(&self) -> String {
        match self.kind {
            DetectorKind::Workload => self.workload.detector(),
            kind => format!("{}:{}", kind.as_str(), self.workload.name),
        }
    }
}

/// etip's workload runner, put into every session that times a workload.
pub const WORKLOAD_RUNNER: &str = include_str!("../scripts/etip_workload.py");

/// File name of the runner in a session's scratch folder.
pub(crate) const RUNNER_FILE: &str = "etip_workload.py";

/// What to measure for one ETIP. `sides[0]` is the original side, `sides[1]` the patched side
/// (an evaluation adds a third: `[original, candidate, reference]`).
#[derive(Debug, Clone)]
pub struct Plan {
    pub id: String,
    pub sides: Vec<SidePlan>,
    /// Folder for raw reports of the first rounds and the commands (optional).
    pub log_dir: Option<PathBuf>,
}

/// Parameters of the protocol.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProtocolConfig {
    /// Timed rounds before any adaptive extension.
    pub rounds: usize,
    pub warmup: usize,
    /// Upper bound of adaptive rounds (`None`: fixed `rounds`).
    pub max_rounds: Option<usize>,
    /// Rounds per adaptive batch.
    pub batch: usize,
    pub order: Order,
    /// Time limit of each version's test command in a round.
    pub round_timeout: Duration,
    /// Stall share (0..1) above which a round is repeated.
    pub pressure_threshold: f64,
    pub max_repeats: u32,
    /// Root of `/proc` for pressure readings (`None`: not read).
    pub proc_root: Option<PathBuf>,
    /// Raw reports of this many first rounds (warm-up included) are kept in the log folder.
    pub keep_reports: usize,
    /// Every round (warm-up included) runs in fresh sessions that start from the state the
    /// sessions had when the protocol began ([`Session::checkpoint`], [`Session::renew`]): nothing
    /// one round writes is seen by the next (`etip eval`: a candidate cannot cache results across
    /// rounds). Executors that cannot renew run the rounds in one session each.
    pub fresh_rounds: bool,
    /// Time limit of one workload process; a workload that runs longer is a failed detector.
    pub workload_timeout: Duration,
}

impl Default for ProtocolConfig {
    fn default() -> Self {
        ProtocolConfig {
            rounds: 30,
            warmup: 1,
            max_rounds: None,
            batch: 10,
            order: Order::Alternate,
            round_timeout: Duration::from_secs(1800),
            pressure_threshold: 0.10,
            max_repeats: 3,
            proc_root: Some(PathBuf::from("/proc")),
            keep_reports: 2,
            fresh_rounds: false,
            workload_timeout: Duration::from_secs(600),
        }
    }
}

/// Time and status of one detector (a test class, a workload) in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassTime {
    pub name: String,
    pub secs: f64,
    pub passed: bool,
    /// Absent for test classes (stored rounds of test-only runs keep their shape).
    #[serde(default, skip_serializing_if = "DetectorKind::is_test")]
    pub kind: DetectorKind,
    /// Why the detector failed in this run (a workload's exception, time limit, missing report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The benchmark's own statistic in this run (seconds), beside `secs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own: Option<f64>,
}

impl ClassTime {
    /// A test class's time and status, as its report gives them.
    pub fn test(name: impl Into<String>, secs: f64, passed: bool) -> ClassTime {
        ClassTime {
            name: name.into(),
            secs,
            passed,
            kind: DetectorKind::Test,
            error: None,
            own: None,
        }
    }
}

/// What one side did in one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideResult {
    pub version: Version,
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    pub command_secs: f64,
    pub classes: Vec<ClassTime>,
    /// Resolution of the report's times (seconds).
    pub resolution: f64,
}

/// One completed round, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundResult {
    pub summary: RoundSummary,
    /// `[original side, patched side]` (in an evaluation `[original, candidate, reference]`).
    pub sides: Vec<SideResult>,
}

/// Why the protocol stopped early.
#[derive(Debug, Clone, PartialEq)]
pub struct Stop {
    pub reason: NotExecutable,
    pub detail: String,
    /// The side (index in the plan) whose command stopped the run, when one did.
    pub side: Option<usize>,
    /// The classes its report named when it stopped on failing tests (an evaluation's pass
    /// fraction), else empty.
    pub classes: Vec<ClassTime>,
}

impl Stop {
    /// A stop not tied to a side's report (the side is set where a side's command stopped it).
    pub fn new(reason: NotExecutable, detail: impl Into<String>) -> Stop {
        Stop {
            reason,
            detail: detail.into(),
            side: None,
            classes: Vec::new(),
        }
    }
}

/// Result of [`run`]: every round (resumed and new, in order), and the stop if the ETIP is not
/// executable.
#[derive(Debug, Clone)]
pub struct Run {
    pub rounds: Vec<RoundResult>,
    pub stop: Option<Stop>,
}

/// Receives every completed round (to persist it) before the next one starts.
pub trait RoundSink {
    fn round_done(&mut self, round: &RoundResult) -> Result<(), SinkError>;
}

/// Why a [`RoundSink`] could not keep a round (the run then stops with an engine error).
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The round could not be written as JSON.
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
    /// The store refused the round.
    #[error(transparent)]
    Store(#[from] etip_store::StoreError),
    /// Writing the round to a file failed.
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Progress of a run.
pub trait Progress {
    fn round_started(&self, _round: usize, _total: usize) {}
}

impl Progress for () {}

struct Sessions {
    sessions: Vec<Box<dyn Session>>,
}

impl Sessions {
    fn stop(&mut self) {
        for s in &mut self.sessions {
            if let Err(e) = s.stop() {
                tracing::warn!("stopping a session: {e}");
            }
        }
    }
}

/// Runs the protocol for one ETIP (see the module docs). `more(rounds)` is asked after the first
/// `cfg.rounds` timed rounds and after each batch whether to run more (adaptive rounds).
pub fn run(
    executor: &dyn Executor,
    plan: &Plan,
    cfg: &ProtocolConfig,
    resumed: Vec<RoundResult>,
    sink: &mut dyn RoundSink,
    more: &dyn Fn(&[RoundResult]) -> bool,
    progress: &dyn Progress,
) -> Run {
    let mut sessions = Vec::new();
    for side in &plan.sides {
        match executor.start(&side.session) {
            Ok(s) => sessions.push(s),
            Err(e) => {
                Sessions { sessions }.stop();
                let mut rounds = resumed;
                rounds.sort_by_key(|r| r.summary.round);
                return Run {
                    rounds,
                    stop: Some(Stop::new(
                        NotExecutable::EngineError,
                        format!("starting the {} session: {e}", side.session.label),
                    )),
                };
            }
        }
    }
    run_in(plan, cfg, sessions, resumed, sink, more, progress)
}

/// [`run`] in sessions the caller started, one per side of the plan, in the plan's order (an
/// evaluation prepares the candidate's session before the rounds: copy, apply, build). The
/// sessions are stopped at the end, whatever happened.
pub fn run_in(
    plan: &Plan,
    cfg: &ProtocolConfig,
    sessions: Vec<Box<dyn Session>>,
    resumed: Vec<RoundResult>,
    sink: &mut dyn RoundSink,
    more: &dyn Fn(&[RoundResult]) -> bool,
    progress: &dyn Progress,
) -> Run {
    let mut rounds = resumed;
    rounds.sort_by_key(|r| r.summary.round);
    let mut sessions = Sessions { sessions };
    if sessions.sessions.len() != plan.sides.len() {
        let n = sessions.sessions.len();
        sessions.stop();
        return Run {
            rounds,
            stop: Some(Stop::new(
                NotExecutable::EngineError,
                format!("{}: {n} sessions for {} sides", plan.id, plan.sides.len()),
            )),
        };
    }
    let stop = run_rounds(
        plan,
        cfg,
        &mut sessions.sessions,
        &mut rounds,
        sink,
        more,
        progress,
    );
    sessions.stop();
    Run { rounds, stop }
}

fn run_rounds(
    plan: &Plan,
    cfg: &ProtocolConfig,
    sessions: &mut [Box<dyn Session>],
    rounds: &mut Vec<RoundResult>,
    sink: &mut dyn RoundSink,
    more: &dyn Fn(&[RoundResult]) -> bool,
    progress: &dyn Progress,
) -> Option<Stop> {
    let scratch = match tempfile::Builder::new().prefix("etip-measure-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            return Some(Stop::new(
                NotExecutable::EngineError,
                format!("creating a temporary folder for reports: {e}"),
            ));
        }
    };
    // Workload scripts go in before the checkpoint, so fresh sessions have them too.
    let workloads = match crate::workload::State::put(&plan.sides, sessions) {
        Ok(w) => w,
        Err((i, e)) => {
            let mut stop = Stop::new(
                NotExecutable::EngineError,
                format!("{}: putting the workloads into the session: {e}", plan.id),
            );
            stop.side = Some(i);
            return Some(stop);
        }
    };
    let mut carry = Carry {
        fresh: Fresh {
            on: cfg.fresh_rounds,
            used: false,
        },
        workloads,
    };
    if carry.fresh.on {
        for (i, s) in sessions.iter_mut().enumerate() {
            match s.checkpoint() {
                Ok(true) => {}
                Ok(false) => carry.fresh.on = false,
                Err(e) => {
                    let mut stop = Stop::new(
                        NotExecutable::EngineError,
                        format!(
                            "{}: keeping the sessions' state for fresh rounds: {e}",
                            plan.id
                        ),
                    );
                    stop.side = Some(i);
                    return Some(stop);
                }
            }
        }
    }
    // Warm-up rounds run whenever sessions start (also on resume: the new sessions are cold), but
    // are stored only once.
    let have_warmup = rounds.iter().any(|r| r.summary.warmup);
    for w in 0..cfg.warmup {
        progress.round_started(0, cfg.rounds);
        match one_round(
            plan,
            cfg,
            sessions,
            Round { k: 0, warmup: true },
            scratch.path(),
            &mut carry,
        ) {
            Ok(r) => {
                if !have_warmup && w == 0 {
                    if let Err(e) = sink.round_done(&r) {
                        return Some(store_stop(e));
                    }
                    rounds.insert(0, r);
                }
            }
            Err(stop) => return Some(stop),
        }
    }
    let mut target = cfg.rounds;
    let limit = cfg.max_rounds.unwrap_or(cfg.rounds).max(cfg.rounds);
    loop {
        let done = timed(rounds);
        if done >= target {
            if target < limit && more(rounds) {
                target = (target + cfg.batch.max(1)).min(limit);
                continue;
            }
            return None;
        }
        let k = done + 1;
        progress.round_started(k, target);
        match one_round(
            plan,
            cfg,
            sessions,
            Round { k, warmup: false },
            scratch.path(),
            &mut carry,
        ) {
            Ok(r) => {
                if let Err(e) = sink.round_done(&r) {
                    return Some(store_stop(e));
                }
                rounds.push(r);
            }
            Err(stop) => return Some(stop),
        }
    }
}

fn store_stop(e: SinkError) -> Stop {
    Stop::new(
        NotExecutable::EngineError,
        format!("recording a round: {e}"),
    )
}

/// Timed rounds in `rounds`.
pub fn timed(rounds: &[RoundResult]) -> usize {
    rounds.iter().filter(|r| !r.summary.warmup).count()
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// What the rounds of one run carry from one to the next besides the sessions.
struct Carry {
    fresh: Fresh,
    workloads: crate::workload::State,
}

/// Which round a command runs in: timed round `k` (from 1), or a warm-up round (`k` = 0).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Round {
    pub(crate) k: usize,
    pub(crate) warmup: bool,
}

impl Round {
    /// The round as messages name it.
    pub(crate) fn name(self) -> String {
        if self.warmup {
            "the warm-up round".to_string()
        } else {
            format!("round {}", self.k)
        }
    }
}

/// Whether rounds run in fresh sessions, and whether the present sessions already ran one.
struct Fresh {
    on: bool,
    used: bool,
}

impl Fresh {
    /// Renews every session when the present ones already ran a round; the sessions are renewed
    /// at the same time (each renewal waits on the engine), before the round's timing starts.
    fn renew(&mut self, plan: &Plan, sessions: &mut [Box<dyn Session>]) -> Result<(), Stop> {
        if self.on && self.used {
            let results: Vec<Result<bool, etip_exec::executor::ExecError>> =
                std::thread::scope(|scope| {
                    let handles: Vec<_> = sessions
                        .iter_mut()
                        .map(|s| scope.spawn(move || s.renew()))
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| {
                            h.join().unwrap_or_else(|_| {
                                Err(etip_exec::executor::ExecError::failed(
                                    "protocol",
                                    "a session's renewal panicked",
                                ))
                            })
                        })
                        .collect()
                });
            for (i, r) in results.into_iter().enumerate() {
                if let Err(e) = r {
                    let mut stop = Stop::new(
                        NotExecutable::EngineError,
                        format!("{}: starting a fresh session: {e}", plan.id),
                    );
                    stop.side = Some(i);
                    return Err(stop);
                }
            }
        }
        self.used = true;
        Ok(())
    }
}

/// One round, repeated while it runs under pressure (bounded).
fn one_round(
    plan: &Plan,
    cfg: &ProtocolConfig,
    sessions: &mut [Box<dyn Session>],
    round: Round,
    scratch: &Path,
    carry: &mut Carry,
) -> Result<RoundResult, Stop> {
    let Round { k, warmup } = round;
    let n = plan.sides.len();
    let sequence = cfg.order.sequence(k, n);
    let first = plan.sides[sequence[0]].version;
    let mut repeats = 0;
    loop {
        carry.fresh.renew(plan, sessions)?;
        let started = now_rfc3339();
        let before = cfg.proc_root.as_deref().and_then(noise::read_pressure);
        let t0 = Instant::now();
        let mut results: Vec<Option<SideResult>> = vec![None; n];
        for &i in &sequence {
            let dir = scratch.join(format!("r{k}-{i}-{repeats}"));
            let r = run_side(
                plan,
                cfg,
                &mut *sessions[i],
                i,
                round,
                &dir,
                &mut carry.workloads,
            )
            .map_err(|mut s| {
                s.side = Some(i);
                s
            })?;
            results[i] = Some(r);
        }
        let wall = t0.elapsed();
        let after = cfg.proc_root.as_deref().and_then(noise::read_pressure);
        let pressure = match (&before, &after) {
            (Some(b), Some(a)) => Some(stall(b, a, wall)),
            _ => None,
        };
        let Some(sides) = results.into_iter().collect::<Option<Vec<SideResult>>>() else {
            return Err(Stop::new(
                NotExecutable::EngineError,
                format!("{}: a side of round {k} did not run", plan.id),
            ));
        };
        let hot = pressure
            .as_ref()
            .is_some_and(|p| under_pressure(p, cfg.pressure_threshold));
        if hot && repeats < cfg.max_repeats {
            repeats += 1;
            tracing::info!(
                "{}: round {k} ran under pressure {:?}; repeating it ({repeats}/{})",
                plan.id,
                pressure,
                cfg.max_repeats
            );
            continue;
        }
        return Ok(RoundResult {
            summary: RoundSummary {
                round: k,
                warmup,
                first,
                sequence: if n > 2 { sequence } else { Vec::new() },
                started,
                wall_secs: wall.as_secs_f64(),
                command_secs: sides.iter().map(|s| s.command_secs).collect(),
                exit_codes: sides.iter().map(|s| s.exit_code).collect(),
                pressure,
                repeats,
            },
            sides,
        });
    }
}

fn stall(before: &Pressure, after: &Pressure, wall: Duration) -> PressureRecord {
    let s = noise::stall_share(before, after, wall);
    PressureRecord {
        cpu: s.cpu,
        io: s.io,
        memory: s.memory,
    }
}

/// A round is repeated when I/O or memory stalls exceeded the threshold. CPU stalls are recorded
/// but not used: the tests themselves keep the machine's CPUs busy (Maven and the forked test JVM
/// run several threads), so system-wide CPU pressure mostly measures the round itself.
fn under_pressure(p: &PressureRecord, threshold: f64) -> bool {
    [p.io, p.memory].iter().flatten().any(|v| *v > threshold)
}

/// One side's part of a round: its tests, then each of its workloads in a fresh process.
fn run_side(
    plan: &Plan,
    cfg: &ProtocolConfig,
    session: &mut dyn Session,
    side: usize,
    round: Round,
    dir: &Path,
    workloads: &mut crate::workload::State,
) -> Result<SideResult, Stop> {
    let sp = &plan.sides[side];
    let mut result = match &sp.command {
        Some(command) => crate::testrun::run_tests(plan, cfg, session, side, command, round, dir)?,
        None => SideResult {
            version: sp.version,
            exit_code: Some(0),
            timed_out: false,
            command_secs: 0.0,
            classes: Vec::new(),
            resolution: 0.0,
        },
    };
    let when = round.name();
    let done = workloads
        .run_side(side, sp, session, cfg.workload_timeout, dir, &when)
        .map_err(|(name, e)| {
            Stop::new(
                NotExecutable::EngineError,
                format!("{when}, {}, {name}: {e}", sp.session.label),
            )
        })?;
    for r in done {
        if let Some(e) = &r.class.error {
            tracing::info!(
                "{}: {when}, {}, {}: {e}",
                plan.id,
                sp.session.label,
                r.class.name
            );
        }
        result.command_secs += r.wall;
        result.resolution = result.resolution.max(r.resolution);
        result.classes.push(r.class);
    }
    Ok(result)
}
