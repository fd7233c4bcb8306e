//! `etip measure` as a library: built instances in, one [`Measurement`] per ETIP out.
//!
//! For each instance of `etip build`'s `status.jsonl`: an instance that was not built is reported
//! as not executable (`build_failed`, with the build's reason); a built one gets its spec
//! ([`etip_build::instance::InstanceSpec`]), a plan of two sessions and two test commands, the
//! protocol ([`crate::protocol`]) and the verdicts ([`crate::verdict`]).
//!
//! Every completed round is stored in the SQLite store under a run key made of everything that
//! shapes the rounds (image, sessions, test selection, order, A/A) — not the number of rounds and
//! not the verdict thresholds: a re-run resumes from the stored rounds, runs only what is missing
//! (e.g. `--rounds 40` after `--rounds 30`) and recomputes the verdicts, so changing `--min-impr`
//! costs no new round. A not-executable outcome (a failing test, a timeout, a missing report) is
//! stored too and not retried; an engine error is retried on the next run.

use crate::consistency;
use crate::protocol::{
    self, JavaBuild, Order, Plan, ProtocolConfig, RoundResult, RoundSink, SidePlan, SinkError,
    Stop, WorkloadRun,
};
use crate::verdict::{self, VerdictConfig};
use etip_build::config::BuildConfig;
use etip_build::instance::{InstanceSpec, PYTEST_REPORT};
use etip_core::instance::InstanceStatus;
use etip_core::measure::Version;
use etip_core::selection::{SuiteBenchmark, TestSelection};
use etip_exec::executor::{Executor, Resources};
use etip_exec::session::{parent_of, session_request};
use etip_records::measure::{
    Environment, MEASUREMENT_SCHEMA_VERSION, Measurement, NotExecutable, Protocol,
};
use etip_stats::Direction;
use etip_store::Store;
use etip_toolchain::testcmd::Selection;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Which tests run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tests {
    /// The changed modules (Java); every test of the repository (Python).
    Modules,
    All,
    Classes(Vec<String>),
    /// Per ETIP, what `etip select` found ([`Covering`]); ETIPs without an entry run
    /// [`Tests::Modules`] (`--tests auto`).
    Covering(BTreeMap<String, Covering>),
}

/// The covering detectors of one ETIP, as `etip select` found them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Covering {
    /// Pytest node ids or Java test classes, sorted; empty when no test executes the change.
    pub tests: Vec<String>,
    /// Why no test covers the change (the selection's detail), when `tests` is empty.
    pub detail: String,
    /// The benchmarks of the project's own suites that execute the change.
    pub suites: Vec<SuiteBenchmark>,
}

impl Covering {
    /// What a usable selection (not `failed`) says covers the change.
    pub fn from_selection(s: &TestSelection) -> Covering {
        Covering {
            tests: s.tests(),
            detail: s.detail.clone().unwrap_or_default(),
            suites: s.suites.clone(),
        }
    }
}

impl Tests {
    pub fn describe(&self) -> String {
        match self {
            Tests::Modules => "modules".into(),
            Tests::All => "all".into(),
            Tests::Classes(c) => c.join(","),
            Tests::Covering(_) => "covering".into(),
        }
    }

    /// What runs for ETIP `id`, as the store key and the measurement record name it: `covering`
    /// with a digest of the covering tests, else [`Tests::describe`].
    pub fn describe_for(&self, id: &str) -> String {
        match self {
            Tests::Covering(map) => match map.get(id) {
                Some(c) if !c.tests.is_empty() => format!(
                    "covering ({} tests, {})",
                    c.tests.len(),
                    &hex::encode(Sha256::digest(c.tests.join("\n").as_bytes()))[..12]
                ),
                Some(_) => "covering (none)".into(),
                None => "modules".into(),
            },
            other => other.describe(),
        }
    }
}

/// Which kinds of detector `etip measure` times (`--detectors`): by default everything the ETIP
/// has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detectors {
    /// The tests ([`Tests`] says which).
    pub tests: bool,
    /// The workloads the ETIP carries.
    pub workloads: bool,
    /// The benchmarks of the project's own suites that `etip select` found covering the change
    /// (asv, pytest-benchmark, JMH).
    #[serde(default)]
    pub suites: bool,
}

impl Default for Detectors {
    fn default() -> Self {
        Detectors {
            tests: true,
            workloads: true,
            suites: true,
        }
    }
}

impl Detectors {
    /// Reads `tests`, `workloads`, `suites` or `all`, or a comma-separated list of them.
    pub fn parse(text: &str) -> Result<Detectors, String> {
        let mut d = Detectors {
            tests: false,
            workloads: false,
            suites: false,
        };
        for part in text.split(',').map(str::trim) {
            match part {
                "tests" => d.tests = true,
                "workloads" => d.workloads = true,
                "suites" => d.suites = true,
                "all" => d = Detectors::default(),
                other => {
                    return Err(format!(
                        "unknown detector kind {other:?} (tests, workloads, suites or all)"
                    ));
                }
            }
        }
        Ok(d)
    }

    /// `all`, or the kinds joined by commas (`tests,workloads`), `none` for none.
    pub fn describe(&self) -> String {
        if *self == Detectors::default() {
            return "all".into();
        }
        let kinds: Vec<&str> = [
            (self.tests, "tests"),
            (self.workloads, "workloads"),
            (self.suites, "suites"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        if kinds.is_empty() {
            "none".into()
        } else {
            kinds.join(",")
        }
    }
}

/// Everything `etip measure` is asked to do. Serializable: a cluster node's runner gets it
/// with the unit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeasureConfig {
    pub protocol: ProtocolConfig,
    pub verdict: VerdictConfig,
    pub tests: Tests,
    /// Which kinds of detector run.
    pub detectors: Detectors,
    /// Both sides run the original version (A/A calibration).
    pub aa: bool,
    pub resources: Resources,
    /// CPU sets of the two sessions (`None`: not pinned).
    pub cpusets: Option<[String; 2]>,
    /// Notes on the environment (pinning decisions), copied into every measurement.
    pub notes: Vec<String>,
    /// The build configuration the instances were built with (Maven arguments, ...).
    pub build: BuildConfig,
    /// Where per-ETIP log folders go (`<logs>/<slug>/`).
    pub logs: Option<PathBuf>,
    /// Forget stored rounds and outcomes and measure again.
    pub force: bool,
}

/// Failures of the measurement as a whole (per-ETIP failures are in the measurements).
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error(transparent)]
    Store(#[from] etip_store::StoreError),
    #[error("{0}")]
    Infeasible(String),
}

/// What is stored as an ETIP's outcome when it is not executable.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredStop {
    reason: NotExecutable,
    detail: String,
}

struct StoreSink<'a> {
    store: &'a mut Store,
    run: i64,
    id: &'a str,
}

impl RoundSink for StoreSink<'_> {
    fn round_done(&mut self, round: &RoundResult) -> Result<(), SinkError> {
        let json = serde_json::to_string(round)?;
        self.store
            .record_round(self.run, self.id, round.summary.round as i64, &json)?;
        Ok(())
    }
}

/// Checks that the chosen rounds and p-value can give a significant verdict at all.
pub fn feasibility(cfg: &MeasureConfig) -> Result<(), MeasureError> {
    check_feasible(
        cfg.protocol.max_rounds.unwrap_or(cfg.protocol.rounds),
        cfg.verdict.sign.p_val,
    )
}

/// Whether `n` rounds can give a sign-test p-value below `p` (with 2 rounds the smallest is 0.25).
pub fn check_feasible(n: usize, p: f64) -> Result<(), MeasureError> {
    if !etip_stats::sign_test_feasible(n, p) {
        return Err(MeasureError::Infeasible(format!(
            "with {n} rounds no outcome can be significant at p < {p}: the smallest sign-test \
             p-value of {n} rounds is {:.4} (all {n} rounds won); use more rounds (at least {}) \
             or a larger --p-val",
            etip_stats::min_sign_p_value(n),
            (1..=200)
                .find(|k| etip_stats::sign_test_feasible(*k, p))
                .unwrap_or(200)
        )));
    }
    Ok(())
}

/// The store key of an ETIP's rounds (everything that shapes a round), and its parameters as
/// JSON text.
pub fn run_key(status: &InstanceStatus, cfg: &MeasureConfig, executor: &str) -> (String, String) {
    let order = match cfg.protocol.order {
        Order::Alternate => "alternate".to_string(),
        Order::Random { seed } => format!("random:{seed}"),
    };
    let params = serde_json::json!({
        "id": status.id,
        "image": status.image,
        "layers": status.layers.iter().map(|l| l.image_id.clone()).collect::<Vec<_>>(),
        "executor": executor,
        "tests": cfg.tests.describe_for(&status.id),
        "aa": cfg.aa,
        "order": order,
        "warmup": cfg.protocol.warmup,
        "cpusets": cfg.cpusets,
        "memory_mb": cfg.resources.memory_mb,
        "cpus": cfg.resources.cpus,
        "test_args": [cfg.build.java.test_args.clone(), cfg.build.python.test_args.clone()],
        "maven_args": cfg.build.java.args,
        "detectors": cfg.detectors.describe(),
        "workloads": workloads_digest(status, cfg),
        "suites": suites_digest(status, cfg),
        "workload_timeout": cfg.protocol.workload_timeout.as_secs(),
    });
    let text = params.to_string();
    let mut h = Sha256::new();
    h.update(text.as_bytes());
    (hex::encode(h.finalize()), text)
}

/// A digest of the workloads a run times (`None` when it times none): a changed script is a new
/// run.
fn workloads_digest(status: &InstanceStatus, cfg: &MeasureConfig) -> Option<String> {
    if !cfg.detectors.workloads || status.workloads.is_empty() {
        return None;
    }
    let text = serde_json::to_string(&status.workloads).unwrap_or_default();
    Some(hex::encode(Sha256::digest(text.as_bytes()))[..16].to_string())
}

/// A digest of the suite benchmarks a run times (`None` when it times none).
fn suites_digest(status: &InstanceStatus, cfg: &MeasureConfig) -> Option<String> {
    let suites = suite_benchmarks(status, cfg);
    if suites.is_empty() {
        return None;
    }
    let text = serde_json::to_string(suites).unwrap_or_default();
    let script = crate::suites::asv_script(&suites[0])
        + &crate::suites::pytest_benchmark_script(&suites[0], 0);
    Some(hex::encode(Sha256::digest((text + &script).as_bytes()))[..16].to_string())
}

/// The tests a configuration runs for one instance (see [`Tests`]).
pub fn selection(status: &InstanceStatus, spec: &InstanceSpec, cfg: &MeasureConfig) -> Selection {
    match &cfg.tests {
        Tests::Modules => spec.default_selection(),
        Tests::All => Selection::All,
        Tests::Classes(c) => Selection::Classes(c.clone()),
        Tests::Covering(map) => match map.get(&status.id) {
            Some(c) if !c.tests.is_empty() => Selection::ClassesIn {
                modules: match spec.default_selection() {
                    Selection::Modules(m) => m,
                    _ => Vec::new(),
                },
                classes: c.tests.clone(),
            },
            // Not measured (measure_one stops first) or not selected: the default.
            Some(_) | None => spec.default_selection(),
        },
    }
}

/// The plan of one built instance.
pub fn plan(status: &InstanceStatus, cfg: &MeasureConfig, executor: &str) -> Plan {
    let spec = InstanceSpec::from_status(status, &cfg.build);
    let selection = selection(status, &spec, cfg);
    let versions = if cfg.aa {
        [Version::Original, Version::Original]
    } else {
        [Version::Original, Version::Patched]
    };
    let labels = if cfg.aa {
        ["original", "original-b"]
    } else {
        ["original", "patched"]
    };
    let log_dir = cfg.logs.as_ref().map(|l| l.join(spec.log_slug()));
    let side = |i: usize| {
        let v = versions[i];
        let vs = spec.version(v);
        // In a container each session has its own /tmp; local sessions keep reports beside
        // their tree.
        let report = if executor == "docker" {
            PYTEST_REPORT.to_string()
        } else {
            format!(
                "{}.etip-reports/{}/pytest.xml",
                parent_of(&vs.tree),
                labels[i]
            )
        };
        SidePlan {
            version: v,
            session: session_request(
                status,
                &spec,
                v,
                labels[i],
                cfg.cpusets.as_ref().map(|c| c[i].clone()),
                cfg.resources,
            ),
            command: times_tests(status, cfg).then(|| spec.test_command(v, &selection, &report)),
            workloads: {
                let tree = spec.version(v).tree.as_str();
                let mut runs = if cfg.detectors.workloads {
                    workload_runs(status, &spec, v)
                } else {
                    Vec::new()
                };
                let suites = suite_benchmarks(status, cfg);
                runs.extend(crate::suites::runs(suites, tree));
                runs.extend(crate::jmh::runs(suites, tree, &maven_command(&spec, v)));
                runs
            },
        }
    };
    Plan {
        id: status.id.clone(),
        sides: vec![side(0), side(1)],
        log_dir,
    }
}

/// Progress of a whole measurement.
pub trait MeasureProgress: Sync {
    fn etip_started(&self, _id: &str) {}
    fn round(&self, _id: &str, _round: usize, _total: usize) {}
    fn etip_finished(&self, _m: &Measurement) {}
}

impl MeasureProgress for () {}

struct RoundProgress<'a> {
    id: &'a str,
    inner: &'a dyn MeasureProgress,
}

impl protocol::Progress for RoundProgress<'_> {
    fn round_started(&self, round: usize, total: usize) {
        self.inner.round(self.id, round, total);
    }
}

/// Measures one instance (see the module docs).
pub fn measure_one(
    executor: &dyn Executor,
    store: &mut Store,
    status: &InstanceStatus,
    cfg: &MeasureConfig,
    progress: &dyn MeasureProgress,
) -> Result<Measurement, MeasureError> {
    progress.etip_started(&status.id);
    let env = environment(executor, cfg, status);
    if !status.runnable() {
        let m = record(
            status,
            cfg,
            &env,
            &[],
            Some(Stop::new(
                NotExecutable::BuildFailed,
                format!(
                    "the build failed: {}{}",
                    status.reason.as_deref().unwrap_or("no image"),
                    status
                        .detail
                        .as_deref()
                        .map(|d| format!(" ({})", first_line(d)))
                        .unwrap_or_default()
                ),
            )),
        );
        progress.etip_finished(&m);
        return Ok(m);
    }
    // Without covering tests the workloads may still time the change; with neither, nothing
    // can.
    if !has_workloads(status, cfg) {
        let stop = if !cfg.detectors.tests {
            Some(Stop::new(
                NotExecutable::NoTests,
                "the ETIP carries no workload and --detectors leaves the tests out",
            ))
        } else if let Some(c) = covering(status, cfg)
            && c.tests.is_empty()
        {
            Some(Stop::new(
                NotExecutable::NoCoveringTests,
                format!("etip select: {}", c.detail),
            ))
        } else {
            None
        };
        if let Some(stop) = stop {
            let m = record(status, cfg, &env, &[], Some(stop));
            progress.etip_finished(&m);
            return Ok(m);
        }
    }
    let (key, params) = run_key(status, cfg, executor.name());
    let run = store.measure_run(&key, &params)?;
    if cfg.force {
        store.forget_etip(run, &status.id)?;
    }
    let mut rounds: Vec<RoundResult> = Vec::new();
    for r in store.rounds(run, &status.id)? {
        match serde_json::from_str::<RoundResult>(&r.payload) {
            Ok(round) => rounds.push(round),
            Err(e) => tracing::warn!(
                "{}: stored round {} is unreadable ({e}); it is measured again",
                status.id,
                r.round
            ),
        }
    }
    let stored_stop: Option<StoredStop> = store
        .outcome(run, &status.id)?
        .and_then(|s| serde_json::from_str(&s).ok());
    let plan = plan(status, cfg, executor.name());
    if let Some(dir) = &plan.log_dir {
        write_commands(dir, &plan);
    }
    let more = |r: &[RoundResult]| verdict::needs_more_rounds(r, &cfg.verdict);
    let stop = if let Some(s) = stored_stop {
        Some(Stop::new(s.reason, s.detail))
    } else if protocol::timed(&rounds) >= cfg.protocol.rounds
        && (cfg
            .protocol
            .max_rounds
            .is_none_or(|m| protocol::timed(&rounds) >= m)
            || !more(&rounds))
    {
        None
    } else {
        let mut sink = StoreSink {
            store,
            run,
            id: &status.id,
        };
        let rp = RoundProgress {
            id: &status.id,
            inner: progress,
        };
        let result = protocol::run(
            executor,
            &plan,
            &cfg.protocol,
            rounds,
            &mut sink,
            &more,
            &rp,
        );
        rounds = result.rounds;
        // A stop caused by the engine, or by a signal that is removing the containers, says
        // nothing about the ETIP: not stored, so a re-run measures again.
        if let Some(s) = &result.stop
            && s.reason != NotExecutable::EngineError
            && !etip_core::cancel::process().is_cancelled()
        {
            let json = serde_json::to_string(&StoredStop {
                reason: s.reason,
                detail: s.detail.clone(),
            })
            .unwrap_or_default();
            store.record_outcome(run, &status.id, &json)?;
        }
        result.stop
    };
    let m = record(status, cfg, &env, &rounds, stop);
    progress.etip_finished(&m);
    Ok(m)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn write_commands(dir: &std::path::Path, plan: &Plan) {
    let _ = std::fs::create_dir_all(dir);
    let quoted = |argv: &[String]| {
        argv.iter()
            .map(|a| etip_build::spec::sh_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut text = String::new();
    for s in &plan.sides {
        text.push_str(&format!(
            "# {} ({})\n# env: {}\n# hidden: {}\n",
            s.session.label,
            s.version,
            s.session.env.join(" "),
            s.session.hidden.join(" "),
        ));
        if let Some(c) = &s.command {
            text.push_str(&format!("# tests, cwd {}\n{}\n", c.cwd, quoted(&c.argv)));
        }
        for (j, w) in s.workloads.iter().enumerate() {
            // The session's scratch folder is known once the session runs.
            let placed = crate::workload::Placed {
                runner: "$ETIP_IN/etip_workload.py".into(),
                script: format!("$ETIP_IN/workload-{j}.py"),
                report: format!("$ETIP_IN/workload-{j}.json"),
                index: j,
                broken: None,
            };
            let c = crate::workload::command(w, &placed, std::time::Duration::ZERO);
            text.push_str(&format!(
                "# {}, cwd {}\n{}\n",
                w.detector(),
                c.cwd,
                quoted(&c.argv)
            ));
        }
        text.push('\n');
    }
    let _ = std::fs::write(dir.join("commands.sh"), text);
}

/// Whether a run times workloads or suite benchmarks of this instance.
fn has_workloads(status: &InstanceStatus, cfg: &MeasureConfig) -> bool {
    let own = cfg.detectors.workloads && !status.workloads.is_empty();
    own || !suite_benchmarks(status, cfg).is_empty()
}

/// Whether a run times tests of this instance: asked for, and some cover the change (with
/// `--tests covering`, an ETIP that `etip select` found no covering test for is timed by its
/// workloads alone).
fn times_tests(status: &InstanceStatus, cfg: &MeasureConfig) -> bool {
    let uncovered = covering(status, cfg).is_some_and(|c| c.tests.is_empty());
    cfg.detectors.tests && !uncovered
}

/// What `etip select` found covering this instance, when the run uses a selection.
fn covering<'a>(status: &InstanceStatus, cfg: &'a MeasureConfig) -> Option<&'a Covering> {
    match &cfg.tests {
        Tests::Covering(map) => map.get(&status.id),
        _ => None,
    }
}

/// The suite benchmarks a run times for this instance (`--detectors suites`).
fn suite_benchmarks<'a>(status: &InstanceStatus, cfg: &'a MeasureConfig) -> &'a [SuiteBenchmark] {
    match covering(status, cfg) {
        Some(c) if cfg.detectors.suites => &c.suites,
        _ => &[],
    }
}

/// A version's Maven command: its build tool and the configured arguments.
fn maven_command(spec: &InstanceSpec, v: Version) -> Vec<String> {
    std::iter::once(spec.version(v).build_tool.clone())
        .chain(spec.maven_args.iter().cloned())
        .collect()
}

/// The workloads of an instance as one version runs them: Python, the version's interpreter in
/// its tree; Java, compiled in the session with the version's Maven command.
fn workload_runs(status: &InstanceStatus, spec: &InstanceSpec, v: Version) -> Vec<WorkloadRun> {
    let vs = spec.version(v);
    let java = (status.language == etip_core::Language::Java).then(|| JavaBuild {
        maven: maven_command(spec, v),
        modules: spec.modules.clone(),
    });
    status
        .workloads
        .iter()
        .map(|w| WorkloadRun {
            java: java.clone(),
            python: if java.is_some() { "java" } else { "python" }.into(),
            ..WorkloadRun::own(w.clone(), "python", vs.tree.as_str())
        })
        .collect()
}

/// Where and how the instance is measured; the JMH settings when it times JMH benchmarks.
fn environment(
    executor: &dyn Executor,
    cfg: &MeasureConfig,
    status: &InstanceStatus,
) -> Environment {
    let info = executor.info();
    let mut notes = cfg.notes.clone();
    let jmh = suite_benchmarks(status, cfg)
        .iter()
        .filter(|b| b.kind == etip_core::detector::DetectorKind::Jmh)
        .count();
    if jmh > 0 {
        notes.push(format!(
            "jmh: {jmh} benchmark(s) run with {} (one fork per round and version); etip's figure \
             is JMH's time per operation times the operations calibrated on the original",
            etip_build::jvm::JMH_MEASURE.describe()
        ));
    }
    Environment {
        executor: info.name,
        cpu_model: info.cpu_model,
        kernel: info.kernel,
        engine: info.engine,
        cpus: cfg.cpusets.as_ref().map(|c| c.to_vec()).unwrap_or_default(),
        notes,
    }
}

/// The measurement record of one ETIP from its rounds and its stop, if any.
pub fn record(
    status: &InstanceStatus,
    cfg: &MeasureConfig,
    env: &Environment,
    rounds: &[RoundResult],
    stop: Option<Stop>,
) -> Measurement {
    let timed: Vec<&RoundResult> = rounds.iter().filter(|r| !r.summary.warmup).collect();
    let (classes, overall, stop) = if stop.is_none() {
        match verdict::verdicts(rounds, &cfg.verdict) {
            Ok((c, o)) => (c, o, None),
            Err(e) => (
                Vec::new(),
                None,
                Some(Stop::new(
                    NotExecutable::ReportMissing,
                    format!("the report times cannot be compared: {e}"),
                )),
            ),
        }
    } else {
        (Vec::new(), None, stop)
    };
    let stop = match (stop, &overall) {
        (None, None) => Some(Stop::new(
            NotExecutable::NoTests,
            "no detector (test class or workload) ran and passed long enough in every round to be timed",
        )),
        (s, _) => s,
    };
    let resolution = timed
        .iter()
        .flat_map(|r| r.sides.iter().map(|s| s.resolution))
        .fold(None, |acc: Option<f64>, r| {
            Some(acc.map_or(r, |a| a.max(r)))
        });
    // Rules §3.8: the patched side's reports held against its measured wall time. A run that
    // stopped has no verdict to check.
    let timing = if stop.is_none() {
        consistency::check(
            rounds,
            &consistency::timed_classes(&classes),
            1,
            if cfg.aa { "original-b" } else { "patched" },
            resolution.unwrap_or(0.0),
            cfg.verdict.timing,
        )
    } else {
        None
    };
    let stop = match (stop, &timing) {
        (None, Some(t)) if !t.consistent => Some(Stop::new(
            NotExecutable::TimingInconsistent,
            format!(
                "the reported times disagree with the measured wall time: {}",
                t.detail.as_deref().unwrap_or("")
            ),
        )),
        (s, _) => s,
    };
    // An ETIP whose reports cannot be trusted has no detector.
    let detectors = classes
        .iter()
        .filter(|c| {
            stop.is_none()
                && c.sign_test
                    .as_ref()
                    .is_some_and(|s| s.direction == Direction::PatchedFaster)
        })
        .map(|c| c.name.clone())
        .collect();
    Measurement {
        schema_version: MEASUREMENT_SCHEMA_VERSION,
        id: status.id.clone(),
        executable: stop.is_none(),
        reason: stop.as_ref().map(|s| s.reason),
        detail: stop.map(|s| s.detail),
        rounds: timed.len(),
        warmup: rounds.iter().filter(|r| r.summary.warmup).count(),
        order: timed.iter().map(|r| r.summary.first).collect(),
        aa: cfg.aa,
        executor: env.executor.clone(),
        cpus: env.cpus.clone(),
        protocol: Protocol {
            rounds: cfg.protocol.rounds,
            warmup: cfg.protocol.warmup,
            max_rounds: cfg.protocol.max_rounds,
            order: cfg.protocol.order.name().into(),
            seed: match cfg.protocol.order {
                Order::Random { seed } => Some(seed),
                Order::Alternate => None,
            },
            min_impr: cfg.verdict.sign.min_impr,
            p_val: cfg.verdict.sign.p_val,
            timer_rule: cfg.verdict.timer.name().into(),
            min_class_secs: cfg.verdict.min_class_secs,
            tests: cfg.tests.describe_for(&status.id),
        },
        environment: env.clone(),
        modules: status.modules.clone(),
        resolution,
        classes,
        overall,
        detectors,
        round_log: rounds.iter().map(|r| r.summary.clone()).collect(),
        timing,
        // Named by whoever runs the unit (this machine, or a cluster node).
        node: None,
    }
}
