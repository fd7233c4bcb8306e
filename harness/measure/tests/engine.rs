//! `etip measure` on the real Docker engine: the Maven and Python fixtures of `etip build` (one
//! genuinely faster class, one unchanged class), the A/A calibration (Python), and the failure kinds of a
//! real run (a test failing in round k, a hanging test, a malformed or missing report, the engine
//! losing a session midway).
//!
//! The timing tests take turns (one lock), so that they do not disturb each other's rounds.

mod common;

use common::{SERIAL, Step, config, env, fixture_steps, repo};
use etip_core::Language;
use etip_records::measure::{Measurement, NotExecutable};
use etip_stats::Direction;
use std::path::Path;
use std::time::Duration;

fn direction(m: &Measurement, class: &str) -> Direction {
    m.classes
        .iter()
        .find(|c| c.name == class)
        .unwrap_or_else(|| {
            panic!(
                "no class {class} in {:?}",
                m.classes.iter().map(|c| &c.name).collect::<Vec<_>>()
            )
        })
        .sign_test
        .as_ref()
        .unwrap_or_else(|| panic!("{class} has no verdict"))
        .direction
}

fn overall(m: &Measurement) -> Direction {
    m.overall
        .as_ref()
        .unwrap()
        .sign_test
        .as_ref()
        .unwrap()
        .direction
}

fn check_fixture(
    lang: Language,
    kind: &str,
    [faster, unchanged, trivial]: [&str; 3],
    rounds: usize,
    aa: bool,
) {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let e = env(kind);
    let commits = repo(&e.dir.path().join(kind), fixture_steps(kind));
    let id = format!("{kind}-dedup");
    let status = e.build(
        &id,
        lang,
        &e.dir.path().join(kind),
        &commits[0],
        &commits[1],
    );
    let mut m = e.measure(&status, &config(rounds, false));
    assert!(m.executable, "{:?}: {:?}", m.reason, m.detail);
    // The unchanged class is flagged by chance at the sign test's level (2/2^rounds with no
    // ties: 3% at 6 rounds). As in the A/A check below, such a verdict is accepted only if an
    // independent second run does not flag it in the same direction again; the rest is checked
    // on that second run (so the test flakes with probability about α² instead of α).
    let chance = direction(&m, unchanged);
    if chance != Direction::NotSignificant {
        eprintln!("{unchanged} flagged {chance:?} by chance or by bias: measuring again");
        let fresh = etip_measure::measure::MeasureConfig {
            force: true,
            ..config(rounds, false)
        };
        m = e.measure(&status, &fresh);
        assert!(m.executable, "{:?}: {:?}", m.reason, m.detail);
    }
    assert_eq!(m.rounds, rounds);
    assert_eq!(m.executor, "docker");
    assert_eq!(direction(&m, faster), Direction::PatchedFaster, "{m:#?}");
    assert_eq!(
        direction(&m, unchanged),
        Direction::NotSignificant,
        "{m:#?}"
    );
    eprintln!(
        "per-round seconds (original, patched): {:?}",
        m.classes
            .iter()
            .map(|c| (&c.name, &c.original, &c.patched))
            .collect::<Vec<_>>()
    );
    assert_eq!(overall(&m), Direction::PatchedFaster, "{m:#?}");
    assert_eq!(m.detectors, vec![faster.to_string()]);
    // A class that takes no measurable time is never significant: too fast to time, left out.
    let t = m
        .classes
        .iter()
        .find(|c| c.name == trivial)
        .expect("the trivial class ran");
    assert_eq!(t.excluded.as_deref(), Some("too_fast"), "{t:#?}");
    assert!(t.sign_test.is_none() && !t.eligible);
    // No session container is left behind.
    let left = e.builder.block_on(
        e.builder
            .engine()
            .list_containers(&[format!("etip.namespace={}", e.ns)]),
    );
    assert!(left.unwrap().is_empty());

    if aa {
        // A/A: both sides run the original tree.
        check_aa(&e, &status, rounds);
    }
}

/// The A/A calibration: both sides run the original tree, so no class may show an effect of
/// consequence (median ratio within 0.8–1.25, where the real run's faster class is several times
/// faster). A significant A/A verdict happens by chance at the test's level (up to 2/2^rounds per
/// class and direction), so one is accepted only if an independent second A/A run does not
/// flag the same class in the same direction again: a systematic bias between the two sides
/// fails, while the test flakes with probability about α² instead of α.
fn check_aa(e: &common::Env, status: &etip_core::instance::InstanceStatus, rounds: usize) {
    let first = common::aa_flagged(&e.measure(status, &config(rounds, true)));
    if first.is_empty() {
        return;
    }
    eprintln!("A/A flagged {first:?} by chance or by bias: running an independent second A/A");
    // `force`: measured afresh, not the stored first run.
    let fresh = etip_measure::measure::MeasureConfig {
        force: true,
        ..config(rounds, true)
    };
    let second = common::aa_flagged(&e.measure(status, &fresh));
    let again: Vec<_> = first.iter().filter(|f| second.contains(f)).collect();
    assert!(
        again.is_empty(),
        "two independent A/A runs flagged {again:?}"
    );
}

#[test]
fn maven_fixture_detects_the_faster_class() {
    check_fixture(
        Language::Java,
        "maven",
        ["demo.TextDedupTest", "demo.JoinTest", "demo.TrivialTest"],
        6,
        // The A/A calibration runs on the Python fixture (the same protocol and executor): a
        // Maven A/A doubles this test's 3 minutes. `etip measure --aa` runs it on any ETIP.
        false,
    );
}

#[test]
fn python_fixture_detects_the_faster_class_and_an_aa_run_flags_nothing() {
    check_fixture(
        Language::Python,
        "python",
        [
            "tests.test_text_dedup",
            "tests.test_join",
            "tests.test_trivial",
        ],
        10,
        true,
    );
}

/// A Python project whose patched version misbehaves in the way `mode` says.
fn failing_project(dir: &Path, mode: &str) -> Vec<String> {
    let base = vec![
        ("pyproject.toml", "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"failing\"\nversion = \"0.1.0\"\n\n[tool.setuptools]\npackages = [\"failing\"]\n".to_string()),
        ("failing/__init__.py", "def work():\n    return sum(range(200000))\n".to_string()),
        ("tests/test_work.py", "import os\nfrom failing import work\n\n\ndef test_work():\n    assert work() == sum(range(200000))\n".to_string()),
    ];
    let patched = match mode {
        // The 3rd run of the patched session (warm-up, round 1, round 2) fails.
        "fails_in_round_2" => {
            "import os\n\n\ndef work():\n    n = int(open('/tmp/etip-runs').read()) if os.path.exists('/tmp/etip-runs') else 0\n    open('/tmp/etip-runs', 'w').write(str(n + 1))\n    return -1 if n == 2 else sum(range(200000))\n"
        }
        "hangs" => "import time\n\n\ndef work():\n    time.sleep(1000)\n",
        _ => "def work():\n    return sum(range(0, 200000))\n",
    };
    let mut steps = vec![
        Step::Files(base),
        Step::Files(vec![("failing/__init__.py", patched.to_string())]),
    ];
    // A conftest that breaks or removes the report after pytest wrote it.
    let conftest = match mode {
        "malformed_report" => Some(
            "def pytest_unconfigure(config):\n    p = getattr(config.option, 'xmlpath', None)\n    if p:\n        open(p, 'w').write('<testsuites><testsuite name=\"pytest\" tests=\"1\"><testcase classname=\"tests.test_work\" name=\"test_work\" time=\"0.1')\n",
        ),
        "missing_report" => Some(
            "import os\n\n\ndef pytest_unconfigure(config):\n    p = getattr(config.option, 'xmlpath', None)\n    if p and os.path.exists(p):\n        os.remove(p)\n",
        ),
        _ => None,
    };
    if let Some(c) = conftest {
        steps.push(Step::Files(vec![("tests/conftest.py", c.to_string())]));
        // Only the patched commit (the last step) carries the conftest.
        let commits = repo(dir, steps);
        return vec![commits[0].clone(), commits[2].clone()];
    }
    repo(dir, steps)
}

#[test]
fn real_failures_are_recorded_with_their_kind_round_and_version() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let e = env("failures");
    let mut cfg = config(4, false);
    cfg.protocol.round_timeout = Duration::from_secs(8);
    for (mode, want, detail) in [
        (
            "fails_in_round_2",
            NotExecutable::TestFailed,
            "round 2, patched, class tests.test_work",
        ),
        (
            "hangs",
            NotExecutable::Timeout,
            "the warm-up round, patched",
        ),
        (
            "malformed_report",
            NotExecutable::ReportMissing,
            "the warm-up round, patched: malformed",
        ),
        (
            "missing_report",
            NotExecutable::ReportMissing,
            "wrote no report",
        ),
    ] {
        let dir = e.dir.path().join(mode);
        let c = failing_project(&dir, mode);
        let status = e.build(mode, Language::Python, &dir, &c[0], &c[1]);
        let t = std::time::Instant::now();
        let m = e.measure(&status, &cfg);
        assert!(!m.executable, "{mode}");
        assert_eq!(m.reason, Some(want), "{mode}: {:?}", m.detail);
        let d = m.detail.clone().unwrap_or_default();
        assert!(d.contains(detail), "{mode}: {d}");
        if mode == "hangs" {
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "the time limit stopped it"
            );
        }
        // A failure is stored: a re-run reports it again without running anything.
        let again = e.measure(&status, &cfg);
        assert_eq!(again.reason, Some(want));
    }
    let left = e
        .builder
        .block_on(
            e.builder
                .engine()
                .list_containers(&[format!("etip.namespace={}", e.ns)]),
        )
        .unwrap();
    assert!(left.is_empty(), "sessions left behind: {left:?}");
}

#[test]
fn a_session_killed_midway_is_an_engine_error_and_a_rerun_resumes() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let e = env("enginekill");
    let dir = e.dir.path().join("python");
    let commits = repo(&dir, fixture_steps("python"));
    let status = e.build("kill", Language::Python, &dir, &commits[0], &commits[1]);
    let cfg = config(12, false);
    let engine = e.builder.engine().clone();
    let ns = e.ns.clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Kill the patched session's container a few seconds in, from outside.
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(6));
        rt.block_on(async {
            let found = engine
                .list_containers(&[format!("etip.namespace={ns}"), "etip.side=patched".into()])
                .await
                .unwrap();
            for c in found {
                let _ = engine
                    .client()
                    .kill_container(
                        &c.id,
                        None::<bollard::query_parameters::KillContainerOptions>,
                    )
                    .await;
            }
        });
    });
    let m = e.measure(&status, &cfg);
    killer.join().unwrap();
    assert_eq!(m.reason, Some(NotExecutable::EngineError), "{:?}", m.detail);
    let done = m.round_log.iter().filter(|r| !r.warmup).count();
    assert!(done < 12);
    // The engine error is not stored as the outcome: the re-run resumes from the stored rounds.
    let m2 = e.measure(&status, &cfg);
    assert!(m2.executable, "{:?}", m2.detail);
    assert_eq!(m2.rounds, 12);
    for (a, b) in m
        .round_log
        .iter()
        .zip(&m2.round_log)
        .filter(|(a, _)| !a.warmup)
    {
        assert_eq!(
            a.started, b.started,
            "round {} was kept, not measured again",
            a.round
        );
    }
}
