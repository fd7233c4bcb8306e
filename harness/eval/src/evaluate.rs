//! One prediction on one built ETIP, start to end: the patch checks, the candidate's session
//! ([`crate::candidate`]), then the rounds of `etip measure`'s protocol with three sides —
//! original, candidate, reference (the ground-truth patched version) — in rotated order, and the
//! verdicts of `etip measure` on the candidate against the original (SPEC 3.1).
//!
//! The result is a line of etip's task results ([`TaskResult`]), with the category, the per-test
//! runs of the three versions and the speedups, so that `etip score` and `etip audit` read an
//! evaluation's output directly.

use crate::candidate::{self, PrepareFailure, PrepareLog};
use crate::patch::{self, PatchProblem};
use crate::predictions::{Kind, Prediction};
use crate::{gso_check, repeat_check};
use etip_build::instance::InstanceSpec;
use etip_core::instance::InstanceStatus;
use etip_core::measure::Version;
use etip_exec::executor::{ExecError, Executor, Session};
use etip_measure::measure::{self, MeasureConfig};
use etip_measure::protocol::{self, Plan, RoundResult, RoundSink, SidePlan, SinkError, Stop};
use etip_measure::{consistency, verdict};
use etip_records::measure::NotExecutable;
use etip_records::results::{TaskResult, TestRuns};
use etip_stats::Direction;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use etip_core::category::Category;

/// The category of a patch the checks refuse.
fn category_of_problem(p: &PatchProblem) -> Category {
    match p {
        PatchProblem::Empty => Category::NotGenerated,
        PatchProblem::Malformed { .. } | PatchProblem::Binary { .. } => Category::Malformed,
        PatchProblem::Protected { .. } => Category::Protected,
        PatchProblem::TooLarge { .. } => Category::TooLarge,
    }
}

/// Everything an evaluation is asked to do. Serializable: a cluster node's runner gets it with
/// the unit.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EvalConfig {
    /// The protocol, verdicts, tests, resources and build configuration, as `etip measure` has
    /// them. `logs` is unused: the evaluation's log folder is given per prediction.
    pub measure: MeasureConfig,
    /// Let patches change tests and other protected files.
    pub allow_test_changes: bool,
    /// Time limit of each preparation step of the candidate (copy, apply, build).
    pub setup_timeout: Duration,
    /// The run's id, copied into every result.
    pub run_id: Option<String>,
}

/// Progress of one evaluation.
pub trait EvalProgress: Sync {
    fn stage(&self, _stage: &str) {}
    fn round(&self, _round: usize, _total: usize) {}
}

impl EvalProgress for () {}

pub(crate) struct Rounds<'a>(pub(crate) &'a dyn EvalProgress);

impl protocol::Progress for Rounds<'_> {
    fn round_started(&self, round: usize, total: usize) {
        self.0.round(round, total);
    }
}

/// Keeps the rounds in the log folder as they complete (one JSON line each).
pub(crate) struct LogSink(pub(crate) Option<PathBuf>);

impl RoundSink for LogSink {
    fn round_done(&mut self, round: &RoundResult) -> Result<(), SinkError> {
        let Some(path) = &self.0 else {
            return Ok(());
        };
        use std::io::Write;
        let line = serde_json::to_string(round)?;
        let write = |source| SinkError::Write {
            path: path.clone(),
            source,
        };
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(write)?;
        writeln!(f, "{line}").map_err(write)
    }
}

/// Side labels of an evaluation's rounds, by index.
pub const SIDES: [&str; 3] = ["original", "candidate", "reference"];

/// Evaluates one prediction on one built instance (see the module docs). `log_dir`, when given,
/// receives the patch, the apply and build logs and the rounds. Never fails: what went wrong is
/// the result's category and detail.
pub fn evaluate(
    executor: &dyn Executor,
    status: &InstanceStatus,
    prediction: &Prediction,
    cfg: &EvalConfig,
    log_dir: Option<&Path>,
    progress: &dyn EvalProgress,
) -> TaskResult {
    let mut result = TaskResult {
        instance_id: status.id.clone(),
        model: Some(prediction.model.clone()),
        run_id: cfg.run_id.clone(),
        ..TaskResult::default()
    };
    let finish = |mut r: TaskResult, c: Category, detail: Option<String>| {
        r.category = Some(c.name().to_string());
        r.status = Some(c.name().to_string());
        if r.correct.is_none() && c != Category::Error {
            r.correct = Some(false);
        }
        r.detail = detail;
        r
    };
    if let Some(dir) = log_dir {
        let _ = std::fs::create_dir_all(dir);
        if let Some(p) = &prediction.patch {
            let _ = std::fs::write(dir.join("patch.diff"), p);
        }
    }
    let empty = prediction.kind == Kind::Empty;
    let text = match prediction.patch.as_deref().filter(|p| !p.trim().is_empty()) {
        Some(t) => t,
        None if empty => "",
        None => return finish(result, Category::NotGenerated, Some("no patch".into())),
    };
    progress.stage("checking the patch");
    let allow = cfg.allow_test_changes || prediction.kind == Kind::Gold;
    let files = if empty {
        Vec::new()
    } else {
        match patch::check(status.language, text, allow) {
            Ok(v) => v.files,
            Err(p) => {
                result.check = Some(p.category().to_string());
                let c = category_of_problem(&p);
                return finish(result, c, Some(p.to_string()));
            }
        }
    };
    // The patch's own verdicts above need no image; everything below does.
    if !status.runnable() {
        let why = status.not_runnable_reason();
        return finish(
            result,
            Category::Error,
            Some(format!("the instance was not built: {why}")),
        );
    }
    let spec = InstanceSpec::from_status(status, &cfg.measure.build);
    let plan = measure::plan(status, &cfg.measure, executor.name());
    let request = candidate::session_request(&plan.sides[0].session);
    progress.stage("applying and building the candidate");
    let mut log = PrepareLog::default();
    let prepared = candidate::prepare(
        executor,
        &request,
        &spec,
        &cfg.measure.build,
        text,
        cfg.setup_timeout,
        &mut log,
    );
    if let Some(dir) = log_dir {
        let _ = std::fs::write(dir.join("apply.log"), &log.apply);
        let _ = std::fs::write(dir.join("build.log"), &log.build);
    }
    let mut prepared = match prepared {
        Ok(p) => p,
        Err(f) => {
            let (c, d) = match f {
                PrepareFailure::DoesNotApply(d) => (Category::DoesNotApply, d),
                PrepareFailure::DoesNotCompile(d) => (Category::DoesNotCompile, d),
                PrepareFailure::Infra(d) => (Category::Error, d),
            };
            return finish(result, c, Some(d));
        }
    };
    if !empty {
        result.apply = prepared
            .apply
            .and_then(|a| serde_json::to_value(a).ok())
            .and_then(|v| v.as_str().map(str::to_string));
    }
    if let Some(dir) = log_dir {
        copy_changed(
            &mut *prepared.session,
            &request.tree,
            &files,
            &dir.join(CHANGED_FILES),
        );
    }
    // The candidate runs the original's tests and workloads in its own tree.
    let cand_side = SidePlan {
        version: Version::Patched,
        command: plan.sides[0].command.clone(),
        workloads: plan.sides[0]
            .workloads
            .iter()
            .map(|w| etip_measure::protocol::WorkloadRun {
                cwd: request.tree.clone(),
                ..w.clone()
            })
            .collect(),
        session: request,
    };
    let [original, reference] = match <[SidePlan; 2]>::try_from(plan.sides) {
        Ok(s) => s,
        Err(_) => {
            return finish(
                result,
                Category::Error,
                Some("a plan without two sides".into()),
            );
        }
    };
    let mut three = Plan {
        id: plan.id.clone(),
        sides: vec![original, cand_side, reference],
        log_dir: log_dir.map(Path::to_path_buf),
    };
    // Rules §6: each repeating workload also once per process, for the repeat check.
    let repeats: Vec<(String, u32)> = three.sides[0]
        .workloads
        .iter()
        .filter(|w| w.kind == etip_core::detector::DetectorKind::Workload)
        .map(|w| (w.workload.name.clone(), w.workload.repeat()))
        .filter(|(_, r)| *r > 1)
        .collect();
    let checked = !empty && repeat_check::add_fresh(&mut three.sides);
    let mut sessions = match start_others(executor, &three, prepared.session) {
        Ok(s) => s,
        Err(e) => return finish(result, Category::Error, Some(e.to_string())),
    };
    // GSO's tests are its correctness gate too: the candidate's results must equal the
    // original's before its times count.
    let gso = gso_check::tests_of(&three.sides[0]);
    if !gso.is_empty() {
        progress.stage("checking GSO's equivalence");
    }
    if let Err(f) = gso_check::check(&gso, &mut sessions, cfg.setup_timeout, log_dir) {
        for s in &mut sessions {
            let _ = s.stop();
        }
        return match f {
            gso_check::CheckFailure::Candidate(d) => finish(result, Category::TestsFail, Some(d)),
            gso_check::CheckFailure::Harness(d) => finish(result, Category::Error, Some(d)),
        };
    }
    progress.stage("timing original, candidate and reference");
    let mut sink = LogSink(log_dir.map(|d| d.join("rounds.jsonl")));
    if let Some(p) = &sink.0 {
        let _ = std::fs::remove_file(p);
    }
    let run = protocol::run_in(
        &three,
        &cfg.measure.protocol,
        sessions,
        Vec::new(),
        &mut sink,
        &|_| false,
        &Rounds(progress),
    );
    let rounds = repeat_check::without_fresh(&run.rounds);
    let mut result = judge(result, &rounds, run.stop, cfg, finish);
    if checked && result.correct == Some(true) {
        let findings = repeat_check::findings(&run.rounds, 1, &repeats);
        result.hack = Some(etip_core::hack::HackVerdict::from_findings(findings));
    }
    result
}

/// Folder of an evaluation's log folder holding the candidate's version of every file its patch
/// changes (a deleted file is absent), as applied in the candidate's tree.
pub const CHANGED_FILES: &str = "files";

/// Copies the candidate's version of the files its patch changes out of its session.
fn copy_changed(session: &mut dyn Session, tree: &str, files: &[patch::FilePatch], dest: &Path) {
    for path in files.iter().filter_map(|f| f.new_path.as_deref()) {
        let to = match Path::new(path).parent() {
            Some(p) => dest.join(p),
            None => dest.to_path_buf(),
        };
        if let Err(e) = session.copy_out(&format!("{tree}/{path}"), &to) {
            tracing::warn!("copying {path} out of the candidate's session: {e}");
        }
    }
}

/// A session of an evaluation could not be started.
#[derive(Debug, thiserror::Error)]
#[error("starting the {side} session: {source}")]
pub struct StartError {
    /// `original`, `candidate` or `reference`.
    pub side: &'static str,
    #[source]
    pub source: ExecError,
}

/// Starts the original's and the reference's sessions around the prepared candidate's, in the
/// plan's order; on failure every started session (the candidate's too) is stopped.
fn start_others(
    executor: &dyn Executor,
    plan: &Plan,
    candidate: Box<dyn Session>,
) -> Result<Vec<Box<dyn Session>>, StartError> {
    let mut started: Vec<Box<dyn Session>> = vec![candidate];
    let mut out: Vec<Option<Box<dyn Session>>> = vec![None, None, None];
    for i in [0usize, 2] {
        match executor.start(&plan.sides[i].session) {
            Ok(s) => out[i] = Some(s),
            Err(e) => {
                for s in started.iter_mut().chain(out.iter_mut().flatten()) {
                    let _ = s.stop();
                }
                return Err(StartError {
                    side: SIDES[i],
                    source: e,
                });
            }
        }
    }
    out[1] = started.pop();
    Ok(out.into_iter().flatten().collect())
}

/// Rounds with the sides `[0, i]` only: the candidate (`i` = 1) or the reference (`i` = 2)
/// against the original, as `etip measure`'s verdicts read them.
fn pair(rounds: &[RoundResult], i: usize) -> Vec<RoundResult> {
    rounds
        .iter()
        .filter(|r| r.sides.len() > i)
        .map(|r| RoundResult {
            summary: r.summary.clone(),
            sides: vec![r.sides[0].clone(), r.sides[i].clone()],
        })
        .collect()
}

/// The order of the sides in each timed round, by their labels.
pub(crate) fn orders(rounds: &[RoundResult], labels: &[&str]) -> Vec<Vec<String>> {
    rounds
        .iter()
        .filter(|r| !r.summary.warmup)
        .map(|r| {
            r.summary
                .sequence
                .iter()
                .map(|i| labels.get(*i).copied().unwrap_or("?").to_string())
                .collect()
        })
        .collect()
}

/// The share of the stopping side's classes that passed (0 when its report named none).
pub(crate) fn pass_fraction(stop: &Stop) -> f64 {
    let total = stop.classes.len();
    let passed = stop.classes.iter().filter(|c| c.passed).count();
    if total == 0 {
        0.0
    } else {
        passed as f64 / total as f64
    }
}

/// The paired runs of the classes eligible for a verdict (all passed), with `reference`'s runs of
/// each class (empty when there is no third version).
pub(crate) fn eligible_runs(
    classes: &[etip_records::measure::ClassRecord],
    reference: impl Fn(&str) -> Vec<f64>,
) -> Vec<TestRuns> {
    classes
        .iter()
        .filter(|c| c.eligible)
        .map(|c| TestRuns {
            name: c.name.clone(),
            base: c.original.clone(),
            patched: c.patched.clone(),
            reference: reference(&c.name),
            passed: true,
        })
        .collect()
}

pub(crate) fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

fn judge(
    mut result: TaskResult,
    rounds: &[RoundResult],
    stop: Option<Stop>,
    cfg: &EvalConfig,
    finish: impl Fn(TaskResult, Category, Option<String>) -> TaskResult,
) -> TaskResult {
    result.orders = orders(rounds, &SIDES);
    if let Some(s) = stop {
        if s.side == Some(1) && s.reason != NotExecutable::EngineError {
            result.pass_fraction = Some(pass_fraction(&s));
            return finish(result, Category::TestsFail, Some(s.detail));
        }
        let who = s.side.map_or("the harness", |i| SIDES[i]);
        return finish(
            result,
            Category::Error,
            Some(format!("{who}: {} ({:?})", s.detail, s.reason)),
        );
    }
    let all = pair(rounds, 1);
    if let Some(broken) = broken_detector(&all) {
        result.pass_fraction = Some(1.0);
        return finish(result, Category::TestsFail, Some(broken));
    }
    // Rules §3.9: an ETIP with workloads or suite benchmarks is judged on those.
    let (cand, judged_on) = performance_rounds(&all);
    let gold = performance_rounds(&pair(rounds, 2)).0;
    let (classes, overall) = match verdict::verdicts(&cand, &cfg.measure.verdict) {
        Ok(v) => v,
        Err(e) => {
            return finish(
                result,
                Category::Error,
                Some(format!("the times cannot be compared: {e}")),
            );
        }
    };
    let gold_series = verdict::series(&gold);
    result.correct = Some(true);
    result.pass_fraction = Some(1.0);
    result.tests = eligible_runs(&classes, |name| {
        gold_series
            .classes
            .get(name)
            .map(|(_, r)| r.clone())
            .unwrap_or_default()
    });
    // A report with a timer resolution (Surefire: 1 ms) says 0 for a test faster than it; the
    // scoring rules need times above 0, so such runs count at the resolution, an upper bound:
    // the speedups below are then lower bounds, and the detail says so.
    let resolution = verdict::series(&cand)
        .resolution
        .max(gold_series.resolution);
    let floored = floor_at_resolution(&mut result.tests, resolution);
    let sum = |f: &dyn Fn(&TestRuns) -> &Vec<f64>| -> f64 {
        result.tests.iter().map(|t| mean(f(t))).sum()
    };
    let (b, p, r) = (
        sum(&|t| &t.base),
        sum(&|t| &t.patched),
        sum(&|t| &t.reference),
    );
    if b > 0.0 && p > 0.0 {
        result.speedup = Some(b / p);
    }
    if b > 0.0 && r > 0.0 && result.tests.iter().all(|t| !t.reference.is_empty()) {
        result.gold_speedup = Some(b / r);
    }
    // Rules §3.8: the candidate's (and the reference's) reports held against the wall time.
    let timed = match verdict::verdicts(&all, &cfg.measure.verdict) {
        Ok((every, _)) => consistency::timed_classes(&every),
        Err(_) => consistency::timed_classes(&classes),
    };
    let tolerance = cfg.measure.verdict.timing;
    result.timing = [(1, SIDES[1]), (2, SIDES[2])]
        .into_iter()
        .filter_map(|(i, label)| {
            consistency::check(rounds, &timed, i, label, resolution, tolerance)
        })
        .collect();
    if let Some(t) = result
        .timing
        .iter()
        .find(|t| t.side == SIDES[1] && !t.consistent)
    {
        // Tests passed, but the times cannot be credited: no speedup, not correct for scoring.
        let detail = format!(
            "every test passed, but the candidate's reported times disagree with the measured wall time: {}",
            t.detail.as_deref().unwrap_or("")
        );
        result.speedup = None;
        result.correct = Some(false);
        return finish(result, Category::TimingInconsistent, Some(detail));
    }
    let Some(overall) = overall else {
        return finish(
            result,
            Category::CorrectNotFaster,
            Some(
                "every test passed; no test class ran long enough in every round to be timed"
                    .into(),
            ),
        );
    };
    let sign = overall.sign_test.as_ref();
    let faster = sign.is_some_and(|s| s.direction == Direction::PatchedFaster);
    let words = sign.map_or(String::new(), |s| {
        format!(
            "sign test over {} rounds: candidate faster in {} (p = {:.2e}), original faster in {} (p = {:.2e}); improvement {:.1}%",
            s.n,
            s.wins_patched,
            s.p_patched,
            s.wins_original,
            s.p_original,
            s.improvement * 100.0
        )
    });
    let c = if faster {
        Category::CorrectFaster
    } else {
        Category::CorrectNotFaster
    };
    let words = match judged_on {
        JudgedOn::Tests => words,
        JudgedOn::Workloads(n) => format!(
            "{words}; judged on the ETIP's {n} workload(s) and suite benchmark(s), the tests passing as the correctness gate"
        ),
    };
    let mut words = if floored > 0 {
        format!(
            "{words}; {floored} run(s) reported 0 s, below the report's resolution of {:.0} ms, are counted at the resolution (the speedups are lower bounds)",
            resolution * 1000.0
        )
    } else {
        words
    };
    // The ground truth's reports are the ETIP's, not the candidate's: a disagreement there says
    // the gold speedup is doubtful, not that the candidate cheated.
    if let Some(t) = result
        .timing
        .iter()
        .find(|t| t.side == SIDES[2] && !t.consistent)
    {
        words.push_str(&format!(
            "; the reference's gold speedup is doubtful: {}",
            t.detail.as_deref().unwrap_or("")
        ));
    }
    finish(result, c, Some(words))
}

/// What an evaluation's speed verdict is judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JudgedOn {
    /// The test classes (JETO's protocol).
    Tests,
    /// This many workloads and suite benchmarks (SWE-fficiency's and GSO's protocol).
    Workloads(usize),
}

/// The rounds as the speed verdict reads them (rules §3.9): when the ETIP has workloads or suite
/// benchmarks, those alone (the workload is what is timed, the tests are the correctness gate);
/// else its test classes.
pub(crate) fn performance_rounds(rounds: &[RoundResult]) -> (Vec<RoundResult>, JudgedOn) {
    let names: std::collections::BTreeSet<&str> = rounds
        .iter()
        .flat_map(|r| &r.sides)
        .flat_map(|s| &s.classes)
        .filter(|c| !c.kind.is_test())
        .map(|c| c.name.as_str())
        .collect();
    if names.is_empty() {
        return (rounds.to_vec(), JudgedOn::Tests);
    }
    let only = rounds
        .iter()
        .map(|r| RoundResult {
            summary: r.summary.clone(),
            sides: r
                .sides
                .iter()
                .map(|s| protocol::SideResult {
                    classes: s
                        .classes
                        .iter()
                        .filter(|c| !c.kind.is_test())
                        .cloned()
                        .collect(),
                    ..s.clone()
                })
                .collect(),
        })
        .collect();
    (only, JudgedOn::Workloads(names.len()))
}

/// A workload or suite benchmark that ran on the original in every round but failed on the
/// candidate: the candidate broke what the benchmark times (SWE-fficiency counts a workload that
/// no longer runs as a failed task). `rounds` are `[original, candidate]` pairs.
pub(crate) fn broken_detector(rounds: &[RoundResult]) -> Option<String> {
    let mut original_ok: std::collections::BTreeMap<&str, bool> = Default::default();
    for r in rounds {
        for c in r.sides.first().into_iter().flat_map(|s| &s.classes) {
            if !c.kind.is_test() {
                *original_ok.entry(c.name.as_str()).or_insert(true) &= c.passed;
            }
        }
    }
    rounds.iter().find_map(|r| {
        r.sides.get(1)?.classes.iter().find_map(|c| {
            let broken =
                !c.kind.is_test() && !c.passed && original_ok.get(c.name.as_str()) == Some(&true);
            broken.then(|| {
                format!(
                    "{} runs on the original but fails on the candidate: {}",
                    c.name,
                    etip_measure::workload::headline(c.error.as_deref().unwrap_or("failed"))
                )
            })
        })
    })
}

/// Replaces times of 0 (below the report's `resolution`) by the resolution; returns how many.
pub(crate) fn floor_at_resolution(tests: &mut [TestRuns], resolution: f64) -> usize {
    if resolution <= 0.0 {
        return 0;
    }
    let mut n = 0;
    for t in tests.iter_mut() {
        for v in t
            .base
            .iter_mut()
            .chain(t.patched.iter_mut())
            .chain(t.reference.iter_mut())
        {
            if *v <= 0.0 {
                *v = resolution;
                n += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::round;
    use etip_core::detector::DetectorKind;
    use etip_measure::protocol::{ClassTime, SideResult};

    fn side(classes: Vec<ClassTime>) -> SideResult {
        SideResult {
            version: Version::Original,
            exit_code: Some(0),
            timed_out: false,
            command_secs: 1.0,
            classes,
            resolution: 0.0,
        }
    }

    fn workload(secs: f64, error: Option<&str>) -> ClassTime {
        ClassTime {
            name: "workload:dedup".into(),
            secs,
            passed: error.is_none(),
            kind: DetectorKind::Workload,
            error: error.map(str::to_string),
            own: None,
        }
    }

    #[test]
    fn an_etip_with_workloads_is_judged_on_them_and_a_broken_one_is_named() {
        let both = |w: ClassTime| side(vec![ClassTime::test("tests.test_join", 0.2, true), w]);
        let rounds: Vec<RoundResult> = (0..3)
            .map(|k| {
                round(
                    k,
                    vec![both(workload(1.0, None)), both(workload(0.1, None))],
                )
            })
            .collect();
        let (only, on) = performance_rounds(&rounds);
        assert_eq!(on, JudgedOn::Workloads(1));
        assert!(
            only.iter()
                .flat_map(|r| &r.sides)
                .all(|s| s.classes.len() == 1 && s.classes[0].name == "workload:dedup")
        );
        assert_eq!(broken_detector(&rounds), None);
        // Tests only: judged on the tests, nothing dropped.
        let tests: Vec<RoundResult> = (0..2)
            .map(|k| {
                round(
                    k,
                    vec![
                        side(vec![ClassTime::test("a", 0.2, true)]),
                        side(vec![ClassTime::test("a", 0.1, true)]),
                    ],
                )
            })
            .collect();
        assert_eq!(performance_rounds(&tests), (tests.clone(), JudgedOn::Tests));
        // The candidate breaks the workload in round 2.
        let mut broken = rounds.clone();
        broken[2].sides[1] = both(workload(
            0.0,
            Some("Traceback (most recent call last):\n  x\nValueError: special\n"),
        ));
        assert_eq!(
            broken_detector(&broken).as_deref(),
            Some(
                "workload:dedup runs on the original but fails on the candidate: ValueError: special"
            )
        );
        // A workload failing on the original too says nothing about the candidate.
        let mut both_fail = broken.clone();
        both_fail[1].sides[0] = both(workload(0.0, Some("boom")));
        assert_eq!(broken_detector(&both_fail), None);
    }

    #[test]
    fn zero_times_count_at_the_resolution_and_nothing_else_changes() {
        let mut tests = vec![TestRuns {
            name: "demo.TextDedupTest".into(),
            base: vec![0.15, 0.16],
            patched: vec![0.0, 0.001],
            reference: vec![0.0, 0.0],
            passed: true,
        }];
        assert_eq!(floor_at_resolution(&mut tests, 0.001), 3);
        assert_eq!(tests[0].base, [0.15, 0.16]);
        assert_eq!(tests[0].patched, [0.001, 0.001]);
        assert_eq!(tests[0].reference, [0.001, 0.001]);
        // Without a known resolution (pytest's float durations) nothing is replaced.
        let mut t = tests.clone();
        t[0].patched[0] = 0.0;
        assert_eq!(floor_at_resolution(&mut t, 0.0), 0);
        assert_eq!(t[0].patched[0], 0.0);
    }
}
