//! Generated tests (`etip eval-test`): does a test that a tool or an agent wrote detect the ETIP?
//!
//! Rules §4.4 (JETO): the test is applied to the original and to the reference (ground-truth
//! patched) version; it is an **ETIP detector test** when it passes on both in every round and the
//! sign test of §3.1 on its per-round times finds the reference significantly faster.
//!
//! Each version gets its own container of the instance image, where the test patch is applied to
//! that container's copy of the version's tree (as [`crate::candidate`] applies an agent's patch)
//! and the tree is rebuilt with the instance layer's own build function, so the new test classes
//! compile (Java) or are collected (Python). Then `etip measure`'s protocol times the named test
//! classes only, the two versions alternating which runs first, and `etip measure`'s verdicts
//! decide. The result is a line of etip's task results: `base` are the original's times, `patched`
//! the reference's, so `etip score --rule jeto` on an eval-test run counts the detector tests.

use crate::candidate::{self, PrepareFailure, PrepareLog};
use crate::evaluate::{
    EvalConfig, EvalProgress, LogSink, Rounds, eligible_runs, floor_at_resolution, mean, orders,
    pass_fraction,
};
use crate::patch;
use crate::predictions::Prediction;
use etip_build::instance::InstanceSpec;
use etip_core::detector::Workload;
use etip_core::instance::InstanceStatus;
use etip_exec::executor::{Executor, Session, SessionRequest};
use etip_measure::measure::{self, Detectors, MeasureConfig, Tests};
use etip_measure::protocol::{self, Plan, SidePlan, Stop};
use etip_measure::{consistency, verdict};
use etip_records::measure::NotExecutable;
use etip_records::results::TaskResult;
use etip_stats::Direction;
use std::path::Path;

pub use etip_core::category::TestCategory;

/// Side labels of a generated test's rounds, by index.
pub const TEST_SIDES: [&str; 2] = ["original", "reference"];

/// Evaluates one generated test (`test.patch` adds or changes test files, `test.classes` names
/// what to run) on one built instance. Never fails: what went wrong is the category and detail.
pub fn evaluate_test(
    executor: &dyn Executor,
    status: &InstanceStatus,
    test: &Prediction,
    cfg: &EvalConfig,
    log_dir: Option<&Path>,
    progress: &dyn EvalProgress,
) -> TaskResult {
    let result = TaskResult {
        instance_id: status.id.clone(),
        model: Some(test.model.clone()),
        run_id: cfg.run_id.clone(),
        ..TaskResult::default()
    };
    if let Some(dir) = log_dir {
        let _ = std::fs::create_dir_all(dir);
        if let Some(p) = &test.patch {
            let _ = std::fs::write(dir.join("patch.diff"), p);
        }
    }
    if let Some(script) = test.workload.as_deref() {
        return evaluate_workload(executor, status, script, cfg, log_dir, progress, result);
    }
    let Some(text) = test.patch.as_deref().filter(|p| !p.trim().is_empty()) else {
        return finish(result, TestCategory::NotGenerated, "no test patch".into());
    };
    progress.stage("checking the test patch");
    if let Err((c, why)) = check(status, text, &test.classes) {
        return finish(result, c, why);
    }
    if let Some(why) = not_built(status) {
        return finish(result, TestCategory::Error, why);
    }
    let mcfg = MeasureConfig {
        tests: Tests::Classes(test.classes.clone()),
        ..cfg.measure.clone()
    };
    let plan = measure::plan(status, &mcfg, executor.name());
    let spec = InstanceSpec::from_status(status, &mcfg.build);
    let mut sessions: Vec<Box<dyn Session>> = Vec::new();
    let mut sides = Vec::new();
    for (i, side) in plan.sides.iter().enumerate() {
        progress.stage(&format!("applying the test to the {}", TEST_SIDES[i]));
        let request = SessionRequest {
            label: format!("{}-with-test", TEST_SIDES[i]),
            private: true,
            ..side.session.clone()
        };
        let mut log = PrepareLog::default();
        let prepared = candidate::prepare(
            executor,
            &request,
            &spec,
            &mcfg.build,
            text,
            cfg.setup_timeout,
            &mut log,
        );
        if let Some(dir) = log_dir {
            let _ = std::fs::write(dir.join(format!("apply-{}.log", TEST_SIDES[i])), &log.apply);
            let _ = std::fs::write(dir.join(format!("build-{}.log", TEST_SIDES[i])), &log.build);
        }
        match prepared {
            Ok(p) => sessions.push(p.session),
            Err(f) => {
                for s in sessions.iter_mut() {
                    let _ = s.stop();
                }
                let (c, d) = match f {
                    PrepareFailure::DoesNotApply(d) => (TestCategory::DoesNotApply, d),
                    PrepareFailure::DoesNotCompile(d) => (TestCategory::DoesNotCompile, d),
                    PrepareFailure::Infra(d) => (TestCategory::Error, d),
                };
                return finish(result, c, format!("{}: {d}", TEST_SIDES[i]));
            }
        }
        sides.push(SidePlan {
            version: side.version,
            command: side.command.clone(),
            workloads: side.workloads.clone(),
            session: request,
        });
    }
    let two = Plan {
        id: plan.id.clone(),
        sides,
        log_dir: log_dir.map(Path::to_path_buf),
    };
    progress.stage("timing the test on original and reference");
    let mut sink = LogSink(log_dir.map(|d| d.join("rounds.jsonl")));
    if let Some(p) = &sink.0 {
        let _ = std::fs::remove_file(p);
    }
    let run = protocol::run_in(
        &two,
        &mcfg.protocol,
        sessions,
        Vec::new(),
        &mut sink,
        &|_| false,
        &Rounds(progress),
    );
    judge(result, &run.rounds, run.stop, &mcfg)
}

/// The name a generated workload's detector has (`workload:generated`).
pub const GENERATED_WORKLOAD: &str = "generated";

/// Evaluates a generated workload: timed on the original and the reference trees (nothing is
/// applied), each run in a fresh process per round and version as an ETIP's own workloads are;
/// a failure on either side is `fails_on_original` / `fails_on_reference`, else the verdicts
/// decide `detector` or `not_detecting`.
fn evaluate_workload(
    executor: &dyn Executor,
    status: &InstanceStatus,
    script: &str,
    cfg: &EvalConfig,
    log_dir: Option<&Path>,
    progress: &dyn EvalProgress,
    result: TaskResult,
) -> TaskResult {
    if let Some(dir) = log_dir {
        let file = match status.language {
            etip_core::Language::Java => "Workload.java",
            etip_core::Language::Python => "workload.py",
        };
        let _ = std::fs::write(dir.join(file), script);
    }
    let workload = Workload {
        name: GENERATED_WORKLOAD.into(),
        script: Some(script.to_string()),
        file: None,
        repeat: None,
    };
    if let Some(why) = workload.problem() {
        return finish(result, TestCategory::Malformed, why);
    }
    if status.language == etip_core::Language::Java
        && etip_core::detector::java_workload_class(script).is_none()
    {
        return finish(
            result,
            TestCategory::Malformed,
            "a Java workload declares a public class (with `workload()` or `main`)".into(),
        );
    }
    if let Some(why) = not_built(status) {
        return finish(result, TestCategory::Error, why);
    }
    let with = InstanceStatus {
        workloads: vec![workload],
        ..status.clone()
    };
    let mcfg = MeasureConfig {
        detectors: Detectors {
            tests: false,
            workloads: true,
            suites: false,
        },
        ..cfg.measure.clone()
    };
    let mut plan = measure::plan(&with, &mcfg, executor.name());
    plan.log_dir = log_dir.map(Path::to_path_buf);
    for (i, side) in plan.sides.iter_mut().enumerate() {
        // Untrusted code: a container of its own, like a generated test's.
        side.session.label = format!("{}-with-workload", TEST_SIDES[i]);
        side.session.private = true;
    }
    progress.stage("timing the workload on original and reference");
    let mut sink = LogSink(log_dir.map(|d| d.join("rounds.jsonl")));
    if let Some(p) = &sink.0 {
        let _ = std::fs::remove_file(p);
    }
    let run = protocol::run(
        executor,
        &plan,
        &mcfg.protocol,
        Vec::new(),
        &mut sink,
        &|_| false,
        &Rounds(progress),
    );
    // A workload that fails is a recorded detector, not a stop: say which side it failed on.
    let failed = run.rounds.iter().find_map(|r| {
        r.sides.iter().enumerate().find_map(|(i, s)| {
            s.classes
                .iter()
                .find(|c| !c.passed)
                .map(|c| (i, c.error.clone().unwrap_or_default()))
        })
    });
    if run.stop.is_none()
        && let Some((side, error)) = failed
    {
        let mut result = result;
        result.orders = orders(&run.rounds, &TEST_SIDES);
        let c = if side == 0 {
            TestCategory::FailsOnOriginal
        } else {
            TestCategory::FailsOnReference
        };
        return finish(
            result,
            c,
            etip_measure::workload::headline(&error).to_string(),
        );
    }
    judge(result, &run.rounds, run.stop, &mcfg)
}

/// Why a test or workload cannot be evaluated on this instance: it was not built.
fn not_built(status: &InstanceStatus) -> Option<String> {
    (!status.runnable()).then(|| {
        format!(
            "the instance was not built: {}",
            status.not_runnable_reason()
        )
    })
}

fn finish(mut r: TaskResult, c: TestCategory, detail: String) -> TaskResult {
    r.category = Some(c.name().to_string());
    r.status = Some(c.name().to_string());
    if r.correct.is_none() && c != TestCategory::Error {
        r.correct = Some(false);
    }
    r.detail = Some(detail);
    r
}

/// The checks before anything runs: a readable diff that only touches test files, and classes
/// to run.
fn check(
    status: &InstanceStatus,
    text: &str,
    classes: &[String],
) -> Result<(), (TestCategory, String)> {
    patch::check_size(text).map_err(|p| (TestCategory::Malformed, p.to_string()))?;
    let files = patch::parse(text).map_err(|p| (TestCategory::Malformed, p.to_string()))?;
    if !files.iter().any(patch::FilePatch::changes_something) {
        return Err((
            TestCategory::NotGenerated,
            "the test patch changes nothing".into(),
        ));
    }
    if let Some(f) = files.iter().find(|f| f.binary) {
        return Err((
            TestCategory::Malformed,
            format!("binary hunks ({})", f.paths().next().unwrap_or_default()),
        ));
    }
    let outside: Vec<&str> = files
        .iter()
        .flat_map(|f| f.paths())
        .filter(|p| etip_toolchain::paths::test_rule(status.language, p).is_none())
        .collect();
    if !outside.is_empty() {
        return Err((
            TestCategory::NotTestOnly,
            format!(
                "a generated test may change test files only; this patch also changes {}",
                outside
                    .iter()
                    .take(5)
                    .map(|p| etip_core::clip::clip(p, 120).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if classes.is_empty() {
        return Err((
            TestCategory::Malformed,
            "the record names no test class to run (test_classes)".into(),
        ));
    }
    Ok(())
}

/// The category from the rounds: a failing side, else the verdicts of `etip measure` on the
/// reference against the original.
fn judge(
    mut result: TaskResult,
    rounds: &[protocol::RoundResult],
    stop: Option<Stop>,
    cfg: &MeasureConfig,
) -> TaskResult {
    result.orders = orders(rounds, &TEST_SIDES);
    if let Some(s) = stop {
        let failing = match s.side {
            Some(0) if s.reason != NotExecutable::EngineError => TestCategory::FailsOnOriginal,
            Some(1) if s.reason != NotExecutable::EngineError => TestCategory::FailsOnReference,
            _ => {
                let who = s.side.map_or("the harness", |i| TEST_SIDES[i]);
                return finish(
                    result,
                    TestCategory::Error,
                    format!("{who}: {} ({:?})", s.detail, s.reason),
                );
            }
        };
        result.pass_fraction = Some(pass_fraction(&s));
        return finish(result, failing, s.detail);
    }
    let (classes, overall) = match verdict::verdicts(rounds, &cfg.verdict) {
        Ok(v) => v,
        Err(e) => {
            return finish(
                result,
                TestCategory::Error,
                format!("the times cannot be compared: {e}"),
            );
        }
    };
    result.correct = Some(true);
    result.pass_fraction = Some(1.0);
    result.tests = eligible_runs(&classes, |_| Vec::new());
    let resolution = verdict::series(rounds).resolution;
    let floored = floor_at_resolution(&mut result.tests, resolution);
    let (b, p): (f64, f64) = (
        result.tests.iter().map(|t| mean(&t.base)).sum(),
        result.tests.iter().map(|t| mean(&t.patched)).sum(),
    );
    if b > 0.0 && p > 0.0 {
        // What the test sees of the ETIP: original time over reference time.
        result.gold_speedup = Some(b / p);
    }
    // Rules §3.8: the test runs in the process that writes its report; the reference's reports
    // (and, through the bound, the original's) are held against the measured wall time.
    if let Some(t) = consistency::check(
        rounds,
        &consistency::timed_classes(&classes),
        1,
        TEST_SIDES[1],
        resolution,
        cfg.verdict.timing,
    ) {
        let consistent = t.consistent;
        let detail = t.detail.clone();
        result.timing = vec![t];
        if !consistent {
            result.gold_speedup = None;
            result.correct = Some(false);
            return finish(
                result,
                TestCategory::TimingInconsistent,
                format!(
                    "the test passed on both versions, but its reported times disagree with the measured wall time: {}",
                    detail.as_deref().unwrap_or("")
                ),
            );
        }
    }
    let Some(overall) = overall else {
        return finish(
            result,
            TestCategory::NotDetecting,
            "the test passed on both versions; no class ran long enough in every round to be timed"
                .into(),
        );
    };
    let sign = overall.sign_test.as_ref();
    let detects = sign.is_some_and(|s| s.direction == Direction::PatchedFaster);
    let mut words = sign.map_or(String::new(), |s| {
        format!(
            "sign test over {} rounds: reference faster in {} (p = {:.2e}), original faster in {} (p = {:.2e}); improvement {:.1}%",
            s.n,
            s.wins_patched,
            s.p_patched,
            s.wins_original,
            s.p_original,
            s.improvement * 100.0
        )
    });
    if floored > 0 {
        words.push_str(&format!(
            "; {floored} run(s) reported 0 s, below the report's resolution of {:.0} ms, are counted at the resolution",
            resolution * 1000.0
        ));
    }
    let c = if detects {
        TestCategory::Detector
    } else {
        TestCategory::NotDetecting
    };
    finish(result, c, words)
}
