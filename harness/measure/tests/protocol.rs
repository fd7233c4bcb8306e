//! The protocol and the verdicts on a scripted executor: deterministic rounds, every failure kind,
//! resumption, pressure repeats and adaptive rounds.

use etip_stats::Direction;

use etip_records::measure::NotExecutable;

use etip_core::measure::Version;
use etip_exec::executor::{Resources, SessionRequest};
use etip_exec::scripted::{Call, Scripted, ScriptedExecutor};
use etip_measure::protocol::{
    self, Order, Plan, ProtocolConfig, RoundResult, RoundSink, SidePlan, SinkError,
};
use etip_measure::verdict::{self, VerdictConfig};
use etip_stats::TimerRule;
use etip_toolchain::testcmd::{ReportKind, ReportLocation, TestCommand};
use std::path::PathBuf;
use std::time::Duration;

const REPORTS: &str = "/work/x/target/surefire-reports";

/// A Surefire report of one class.
fn suite(class: &str, secs: f64, failed: bool) -> String {
    let failure = if failed {
        "<failure message=\"boom\" type=\"java.lang.AssertionError\">boom</failure>"
    } else {
        ""
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"{class}\" time=\"{secs:.3}\" tests=\"1\" errors=\"0\" skipped=\"0\" failures=\"{}\">\
         <testcase name=\"t\" classname=\"{class}\" time=\"{secs:.3}\">{failure}</testcase></testsuite>\n",
        u8::from(failed)
    )
}

/// A round's reports: (class, seconds, failed).
fn reports(classes: &[(&str, f64, bool)]) -> Scripted {
    let wall: f64 = classes.iter().map(|c| c.1).sum::<f64>() + 1.0;
    let mut s = Scripted::ok(wall);
    for (c, secs, failed) in classes {
        s = s.file(REPORTS, &format!("TEST-{c}.xml"), suite(c, *secs, *failed));
    }
    s
}

fn side(label: &str, version: Version) -> SidePlan {
    SidePlan {
        version,
        session: SessionRequest {
            instance: "demo".into(),
            label: label.into(),
            image: Some("img".into()),
            tree: format!("/work/{}", version.as_str()),
            hidden: vec![],
            env: vec![],
            cpuset: None,
            resources: Resources::default(),
            private: false,
        },
        workloads: Vec::new(),
        command: Some(TestCommand {
            argv: vec!["mvn".into(), "test".into()],
            cwd: "/work/x".into(),
            clean: vec![REPORTS.into()],
            reports: vec![ReportLocation {
                path: REPORTS.into(),
                kind: ReportKind::SurefireDir,
                module: String::new(),
            }],
        }),
    }
}

fn plan() -> Plan {
    Plan {
        id: "demo".into(),
        sides: vec![
            side("original", Version::Original),
            side("patched", Version::Patched),
        ],
        log_dir: None,
    }
}

fn cfg(rounds: usize) -> ProtocolConfig {
    ProtocolConfig {
        rounds,
        warmup: 1,
        proc_root: None,
        ..ProtocolConfig::default()
    }
}

#[derive(Default)]
struct VecSink {
    rounds: Vec<RoundResult>,
    fail_after: Option<usize>,
}

impl RoundSink for VecSink {
    fn round_done(&mut self, round: &RoundResult) -> Result<(), SinkError> {
        if self.fail_after.is_some_and(|n| self.rounds.len() >= n) {
            return Err(SinkError::Write {
                path: "rounds.jsonl".into(),
                source: std::io::Error::other("disk full"),
            });
        }
        self.rounds.push(round.clone());
        Ok(())
    }
}

/// Deterministic jitter in [-1, 1] from the call.
fn jitter(call: &Call, salt: u64) -> f64 {
    let mut x = (call.run as u64 + 1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(salt.wrapping_mul(0xBF58_476D_1CE4_E5B9))
        .wrapping_add(call.label.len() as u64 * 7919);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 29;
    (x % 2001) as f64 / 1000.0 - 1.0
}

/// The fixture's shape: `demo.DedupTest` is 3x faster on the patched side, `demo.JoinTest` is the
/// same on both sides (±2% noise), `demo.EmptyTest` takes 0 ms on both.
fn fixture_script(call: &Call) -> Scripted {
    let patched = call.label == "patched";
    let dedup = if patched { 0.15 } else { 0.45 } * (1.0 + 0.02 * jitter(call, 1));
    let join = 0.80 * (1.0 + 0.02 * jitter(call, 2));
    reports(&[
        ("demo.DedupTest", dedup, false),
        ("demo.EmptyTest", 0.0, false),
        ("demo.JoinTest", join, false),
    ])
}

fn run(ex: &ScriptedExecutor, cfg: &ProtocolConfig, sink: &mut VecSink) -> protocol::Run {
    protocol::run(ex, &plan(), cfg, Vec::new(), sink, &|_| false, &())
}

#[test]
fn faster_class_detected_unchanged_class_not_and_zero_ms_never() {
    let ex = ScriptedExecutor::new(fixture_script);
    let mut sink = VecSink::default();
    let r = run(&ex, &cfg(30), &mut sink);
    assert_eq!(r.stop, None);
    assert_eq!(r.rounds.len(), 31);
    assert!(r.rounds[0].summary.warmup);
    assert_eq!(sink.rounds.len(), 31, "every round is handed to the sink");
    // Round k runs the patched version first when k is odd.
    for round in &r.rounds[1..] {
        let k = round.summary.round;
        let want = if k % 2 == 1 {
            Version::Patched
        } else {
            Version::Original
        };
        assert_eq!(round.summary.first, want, "round {k}");
    }
    assert_eq!(*ex.counts.lock().unwrap(), (2, 2), "both sessions stopped");

    let (classes, overall) = verdict::verdicts(&r.rounds, &VerdictConfig::default()).unwrap();
    let get = |n: &str| classes.iter().find(|c| c.name == n).unwrap();
    let dedup = get("demo.DedupTest");
    assert!(dedup.eligible);
    let st = dedup.sign_test.as_ref().unwrap();
    assert_eq!(st.direction, Direction::PatchedFaster);
    assert_eq!((st.n, st.wins_patched, st.wins_original), (30, 30, 0));
    let mw = dedup.mann_whitney.as_ref().unwrap();
    assert!(mw.p_patched_faster < 1e-9 && mw.p_original_faster > 0.99);
    let ef = dedup.effect.as_ref().unwrap();
    assert!((ef.median_ratio - 1.0 / 3.0).abs() < 0.02);
    assert!(ef.ratio_ci[0] <= ef.median_ratio && ef.median_ratio <= ef.ratio_ci[1]);
    assert_eq!(ef.cliffs_delta, 1.0);
    let join = get("demo.JoinTest");
    assert_eq!(
        join.sign_test.as_ref().unwrap().direction,
        Direction::NotSignificant
    );
    let empty = get("demo.EmptyTest");
    assert!(!empty.eligible);
    assert_eq!(empty.excluded.as_deref(), Some("too_fast"));
    assert!(empty.sign_test.is_none());
    let overall = overall.unwrap();
    assert_eq!(
        overall.sign_test.as_ref().unwrap().direction,
        Direction::PatchedFaster
    );
    // Totals are over eligible classes only: 0.45 + 0.80 against 0.15 + 0.80.
    assert!(
        (overall.original[0] - 1.25).abs() < 0.05,
        "{:?}",
        overall.original
    );
}

#[test]
fn zero_time_pairs_are_ties_unless_the_literal_jeto_rule_is_asked_for() {
    let ex = ScriptedExecutor::new(|_call: &Call| reports(&[("demo.ZeroTest", 0.0, false)]));
    let mut sink = VecSink::default();
    let r = run(&ex, &cfg(30), &mut sink);
    let no_floor = VerdictConfig {
        min_class_secs: 0.0,
        ..VerdictConfig::default()
    };
    let (classes, _) = verdict::verdicts(&r.rounds, &no_floor).unwrap();
    let st = classes[0].sign_test.as_ref().unwrap();
    assert_eq!(st.direction, Direction::NotSignificant);
    assert_eq!((st.wins_patched, st.wins_original, st.ties), (0, 0, 30));
    // JETO's literal rule: (0, 0) satisfies p <= 0.95·o, a "win" for both sides.
    let literal = VerdictConfig {
        timer: TimerRule::Literal,
        ..no_floor
    };
    let (classes, _) = verdict::verdicts(&r.rounds, &literal).unwrap();
    let st = classes[0].sign_test.as_ref().unwrap();
    assert_eq!((st.wins_patched, st.wins_original), (30, 30));
    assert_eq!(st.direction, Direction::PatchedFaster);
    // By default the class is too fast to time and stays out of every verdict.
    let (classes, overall) = verdict::verdicts(&r.rounds, &VerdictConfig::default()).unwrap();
    assert_eq!(classes[0].excluded.as_deref(), Some("too_fast"));
    assert!(overall.is_none());
}

#[test]
fn a_test_failing_in_round_k_names_the_round_the_version_and_the_class() {
    let ex = ScriptedExecutor::new(|call: &Call| {
        // The patched side's 4th command is timed round 3 (warm-up is its 1st).
        let fail = call.label == "patched" && call.run == 3;
        let mut s = reports(&[("demo.JoinTest", 0.5, fail), ("demo.DedupTest", 0.5, false)]);
        if fail {
            s.exit_code = Some(1);
        }
        s
    });
    let mut sink = VecSink::default();
    let r = run(&ex, &cfg(10), &mut sink);
    let stop = r.stop.expect("not executable");
    assert_eq!(stop.reason, NotExecutable::TestFailed);
    assert!(
        stop.detail
            .contains("round 3, patched, class demo.JoinTest"),
        "{}",
        stop.detail
    );
    assert_eq!(protocol::timed(&sink.rounds), 2, "rounds 1 and 2 were kept");
    assert_eq!(*ex.counts.lock().unwrap(), (2, 2));
}

#[test]
fn a_failing_command_with_a_passing_report_is_a_failure() {
    let ex = ScriptedExecutor::new(|call: &Call| {
        let mut s = reports(&[("demo.JoinTest", 0.5, false)]);
        if call.label == "original" && call.run == 2 {
            s.exit_code = Some(137);
        }
        s
    });
    let r = run(&ex, &cfg(5), &mut VecSink::default());
    let stop = r.stop.unwrap();
    assert_eq!(stop.reason, NotExecutable::TestFailed);
    assert!(stop.detail.contains("round 2, original"), "{}", stop.detail);
    assert!(stop.detail.contains("exited 137"), "{}", stop.detail);
}

type Script = dyn Fn(&Call) -> Scripted + Send + Sync;

#[test]
fn hanging_malformed_missing_and_engine_failures_are_recorded() {
    let cases: Vec<(NotExecutable, &str, Box<Script>)> = vec![
        (
            NotExecutable::Timeout,
            "round 1, original: the test command exceeded",
            Box::new(|c: &Call| {
                if c.label == "original" && c.run == 1 {
                    Scripted::hang()
                } else {
                    reports(&[("a.B", 0.5, false)])
                }
            }),
        ),
        (
            NotExecutable::ReportMissing,
            "round 2, patched",
            Box::new(|c: &Call| {
                if c.label == "patched" && c.run == 2 {
                    Scripted::ok(1.0).file(
                        REPORTS,
                        "TEST-a.B.xml",
                        "<testsuite name=\"a.B\" time=\"0.5",
                    )
                } else {
                    reports(&[("a.B", 0.5, false)])
                }
            }),
        ),
        (
            NotExecutable::NoTests,
            "the warm-up round, original: no test ran",
            Box::new(|_c: &Call| Scripted::ok(1.0)),
        ),
        (
            NotExecutable::EngineError,
            "round 2, original",
            Box::new(|c: &Call| {
                if c.label == "original" && c.run == 2 {
                    Scripted::engine_error("the engine went away")
                } else {
                    reports(&[("a.B", 0.5, false)])
                }
            }),
        ),
    ];
    for (want, detail, script) in cases {
        let ex = ScriptedExecutor::new(script);
        let mut sink = VecSink::default();
        let r = run(&ex, &cfg(5), &mut sink);
        let stop = r
            .stop
            .unwrap_or_else(|| panic!("{want:?}: expected a stop"));
        assert_eq!(stop.reason, want, "{}", stop.detail);
        assert!(stop.detail.contains(detail), "{want:?}: {}", stop.detail);
        assert_eq!(
            *ex.counts.lock().unwrap(),
            (2, 2),
            "{want:?}: sessions stopped"
        );
    }
    // A session that cannot start is an engine error; nothing is left running.
    let mut ex = ScriptedExecutor::new(fixture_script);
    ex.fail_start = Some("no such image".into());
    let r = run(&ex, &cfg(5), &mut VecSink::default());
    assert_eq!(r.stop.unwrap().reason, NotExecutable::EngineError);
    // A round that cannot be stored stops the run.
    let ex = ScriptedExecutor::new(fixture_script);
    let mut sink = VecSink {
        fail_after: Some(3),
        ..VecSink::default()
    };
    let r = run(&ex, &cfg(5), &mut sink);
    assert!(r.stop.unwrap().detail.contains("disk full"));
}

#[test]
fn a_resumed_run_measures_only_the_missing_rounds_and_gives_the_same_verdicts() {
    let ex = ScriptedExecutor::new(fixture_script);
    let whole = run(&ex, &cfg(12), &mut VecSink::default());
    // Interrupted after the warm-up and 5 rounds.
    let ex = ScriptedExecutor::new(fixture_script);
    let mut first = VecSink {
        fail_after: Some(6),
        ..VecSink::default()
    };
    assert!(run(&ex, &cfg(12), &mut first).stop.is_some());
    assert_eq!(protocol::timed(&first.rounds), 5);
    // Resumed: a fresh warm-up (new sessions are cold) that is not stored again, then rounds 6..12.
    let ex = ScriptedExecutor::new(fixture_script);
    let mut second = VecSink::default();
    let resumed = protocol::run(
        &ex,
        &plan(),
        &cfg(12),
        first.rounds.clone(),
        &mut second,
        &|_| false,
        &(),
    );
    assert_eq!(resumed.stop, None);
    assert_eq!(
        second
            .rounds
            .iter()
            .map(|r| r.summary.round)
            .collect::<Vec<_>>(),
        (6..=12).collect::<Vec<_>>()
    );
    assert_eq!(protocol::timed(&resumed.rounds), 12);
    let order = |rs: &[RoundResult]| rs.iter().map(|r| r.summary.first).collect::<Vec<_>>();
    assert_eq!(order(&resumed.rounds), order(&whole.rounds));
    let v = |rs: &[RoundResult]| {
        let (c, o) = verdict::verdicts(rs, &VerdictConfig::default()).unwrap();
        (
            c.iter()
                .map(|c| (c.name.clone(), c.sign_test.as_ref().map(|s| s.direction)))
                .collect::<Vec<_>>(),
            o.and_then(|o| o.sign_test.map(|s| s.direction)),
        )
    };
    assert_eq!(v(&resumed.rounds), v(&whole.rounds));
}

#[test]
fn random_order_is_reproducible_from_its_seed_and_recorded() {
    let o = Order::Random { seed: 42 };
    let a: Vec<Version> = (1..=40).map(|k| o.first(k)).collect();
    let b: Vec<Version> = (1..=40).map(|k| o.first(k)).collect();
    assert_eq!(a, b);
    let patched_first = a.iter().filter(|v| **v == Version::Patched).count();
    assert!((10..=30).contains(&patched_first), "{patched_first}");
    let other: Vec<Version> = (1..=40)
        .map(|k| Order::Random { seed: 7 }.first(k))
        .collect();
    assert_ne!(a, other);
    let ex = ScriptedExecutor::new(fixture_script);
    let r = run(
        &ex,
        &ProtocolConfig {
            order: o,
            ..cfg(10)
        },
        &mut VecSink::default(),
    );
    let firsts: Vec<Version> = r.rounds[1..].iter().map(|r| r.summary.first).collect();
    assert_eq!(firsts, a[..10].to_vec());
}

/// A fake `/proc/pressure` whose I/O stall counter the script advances while a chosen round runs.
#[test]
fn rounds_under_io_pressure_are_repeated_a_bounded_number_of_times() {
    let proc = tempfile::tempdir().unwrap();
    let dir = proc.path().join("pressure");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |io_total: u64| {
        for (name, total) in [("cpu", 0u64), ("io", io_total), ("memory", 0)] {
            std::fs::write(
                dir.join(name),
                format!(
                    "some avg10=0.00 avg60=0.00 avg300=0.00 total={total}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                ),
            )
            .unwrap();
        }
    };
    write(0);
    let root: PathBuf = proc.path().to_path_buf();
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let c2 = counter.clone();
    let d2 = dir.clone();
    // Timed round 2 (each side's 3rd command) stalls on I/O for 10 s: its first two runs.
    let ex = ScriptedExecutor::new(move |call: &Call| {
        if call.label == "original" && (call.run == 2 || call.run == 3) {
            let t = c2.fetch_add(10_000_000, std::sync::atomic::Ordering::SeqCst) + 10_000_000;
            std::fs::write(
                d2.join("io"),
                format!("some avg10=50.00 avg60=0.00 avg300=0.00 total={t}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
            )
            .unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        reports(&[("a.B", 0.5, false)])
    });
    let c = ProtocolConfig {
        proc_root: Some(root),
        pressure_threshold: 0.10,
        max_repeats: 1,
        ..cfg(4)
    };
    let r = run(&ex, &c, &mut VecSink::default());
    assert_eq!(r.stop, None);
    let round2 = &r.rounds[2].summary;
    assert_eq!(round2.round, 2);
    assert_eq!(round2.repeats, 1, "repeated once, then kept (bounded)");
    assert!(round2.pressure.unwrap().io.unwrap() > 0.10);
    assert!(
        r.rounds
            .iter()
            .filter(|r| r.summary.round != 2)
            .all(|r| r.summary.repeats == 0)
    );
}

#[test]
fn adaptive_rounds_extend_inconclusive_classes_up_to_the_maximum() {
    // A class 8% faster with ±6% noise: often inconclusive after 30 rounds.
    let script = |call: &Call| {
        let patched = call.label == "patched";
        let t = if patched { 0.92 } else { 1.0 } * (1.0 + 0.06 * jitter(call, 3));
        reports(&[("a.Slow", t, false)])
    };
    let design = etip_stats::SequentialDesign::recommended(30, 0.1).unwrap();
    let vcfg = VerdictConfig {
        sequential: Some(design.clone()),
        ..VerdictConfig::default()
    };
    let ex = ScriptedExecutor::new(script);
    let pcfg = ProtocolConfig {
        max_rounds: Some(60),
        batch: design.batch(),
        ..cfg(30)
    };
    let more = |rs: &[RoundResult]| verdict::needs_more_rounds(rs, &vcfg);
    let r = protocol::run(
        &ex,
        &plan(),
        &pcfg,
        Vec::new(),
        &mut VecSink::default(),
        &more,
        &(),
    );
    let n = protocol::timed(&r.rounds);
    assert!(
        n > 30 && n <= 60,
        "an inconclusive class gets more rounds: {n}"
    );
    let (classes, _) = verdict::verdicts(&r.rounds, &vcfg).unwrap();
    let st = classes[0].sign_test.as_ref().unwrap();
    // The verdict is taken at a look of the design, never beyond the rounds run.
    assert!(design.look_rounds().any(|l| l == st.n), "{}", st.n);
    assert!(st.n <= n);
    if n < 60 {
        assert!(!verdict::needs_more_rounds(&r.rounds, &vcfg));
    }
    // A clear improvement (and a clearly unchanged class, stopped for futility) needs no more.
    let ex = ScriptedExecutor::new(fixture_script);
    let r = protocol::run(
        &ex,
        &plan(),
        &pcfg,
        Vec::new(),
        &mut VecSink::default(),
        &more,
        &(),
    );
    assert_eq!(protocol::timed(&r.rounds), 30);
}

/// A built instance's status, as `etip build` writes it (only what `measure::record` reads).
fn status() -> etip_core::instance::InstanceStatus {
    serde_json::from_value(serde_json::json!({
        "id": "demo",
        "language": "java",
        "outcome": "built",
        "image": "img",
        "base_commit": "a",
        "patched_commit": "b",
        "original_dir": "/work/original",
        "patched_dir": "/work/patched",
        "build_secs": 1.0,
    }))
    .unwrap()
}

fn measure_config(rounds: usize) -> etip_measure::measure::MeasureConfig {
    etip_measure::measure::MeasureConfig {
        detectors: Default::default(),
        protocol: cfg(rounds),
        verdict: VerdictConfig::default(),
        tests: etip_measure::measure::Tests::Modules,
        aa: false,
        resources: Resources::default(),
        cpusets: None,
        notes: Vec::new(),
        build: etip_build::config::BuildConfig::default(),
        logs: None,
        force: false,
    }
}

/// Rules §3.8 in `etip measure`: a patched version whose reports give a hundredth of the time its
/// test command took is not executable (`timing_inconsistent`) and has no detector; the honest
/// fixture passes the same check.
#[test]
fn a_patched_version_whose_reports_fake_its_times_is_timing_inconsistent() {
    let faked = ScriptedExecutor::new(|call: &Call| {
        let mut s = fixture_script(call);
        if call.label == "patched" {
            // The same work as the original (1.25 s of tests, 1 s around them), reported as a
            // hundredth.
            let real = 0.45 + 0.80;
            let scale = |c: &str, secs: f64| suite(c, secs / 100.0, false);
            s = Scripted::ok(real * (1.0 + 0.02 * jitter(call, 3)) + 1.0)
                .file(
                    REPORTS,
                    "TEST-demo.DedupTest.xml",
                    scale("demo.DedupTest", 0.45),
                )
                .file(
                    REPORTS,
                    "TEST-demo.JoinTest.xml",
                    scale("demo.JoinTest", 0.80),
                );
        }
        s
    });
    let mcfg = measure_config(10);
    let env = etip_records::measure::Environment::default();
    let mut sink = VecSink::default();
    let r = run(&faked, &mcfg.protocol, &mut sink);
    assert!(r.stop.is_none(), "{:?}", r.stop);
    let m = etip_measure::measure::record(&status(), &mcfg, &env, &r.rounds, r.stop);
    assert!(!m.executable);
    assert_eq!(
        m.reason,
        Some(NotExecutable::TimingInconsistent),
        "{:?}",
        m.detail
    );
    assert!(m.detectors.is_empty());
    // The verdicts stay on record, and say what the reports claimed.
    let overall = m.overall.as_ref().unwrap();
    assert_eq!(
        overall.sign_test.as_ref().unwrap().direction,
        Direction::PatchedFaster
    );
    let t = m.timing.as_ref().unwrap();
    assert!(!t.consistent && t.disagreeing == 10, "{t:?}");
    assert!(
        t.speedup_by_report > 50.0 && t.speedup_by_wall < 1.1,
        "{t:?}"
    );
    assert!(
        m.detail
            .as_deref()
            .unwrap()
            .contains("wall clock does not see"),
        "{:?}",
        m.detail
    );

    // The honest fixture: 3x faster by report and by wall time alike.
    let honest = ScriptedExecutor::new(fixture_script);
    let mut sink = VecSink::default();
    let r = run(&honest, &mcfg.protocol, &mut sink);
    let m = etip_measure::measure::record(&status(), &mcfg, &env, &r.rounds, r.stop);
    assert!(m.executable, "{:?}", m.detail);
    assert_eq!(m.detectors, ["demo.DedupTest"]);
    let t = m.timing.as_ref().unwrap();
    assert!(t.consistent && t.over_wall == [0, 0], "{t:?}");
}
