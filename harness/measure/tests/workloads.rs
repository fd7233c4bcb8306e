//! Workloads as detectors on the real Docker engine: the Python fixture's ETIP (a quadratic
//! `dedup` made linear) timed by a workload the ETIP carries while the tests that run do not see
//! the change; a failing, a silent and a hanging workload recorded with their reasons, never
//! dropped and never the end of the measurement; an A/A run on the workloads flags nothing.

mod common;

use common::{SERIAL, class, config, direction, env, fixture_steps, repo};
use etip_core::Language;
use etip_core::detector::{DetectorKind, Workload};
use etip_core::selection::{Hit, SuiteBenchmark};
use etip_measure::measure::{Covering, MeasureConfig, Tests};
use etip_stats::Direction;
use std::time::Duration;

fn workload(name: &str, script: &str) -> Workload {
    Workload {
        name: name.into(),
        script: Some(script.into()),
        file: None,
        repeat: Some(3),
    }
}

/// SWE-fficiency's shape: `setup()` and `workload()`, then the script's own timing harness
/// (which etip's runner leaves out and replaces).
const DEDUP: &str = r#"import statistics
import timeit

from textutil import dedup

values = None


def setup():
    global values
    values = [(i * 7919) % 3000 for i in range(6000)]


def workload():
    dedup(values)


runtimes = timeit.repeat(workload, number=1, repeat=10, setup=setup)
print("Mean:", statistics.mean(runtimes[-5:]))
"#;

/// A script that times itself and prints its statistic: `join` is the same in both versions.
const JOIN_SELF_TIMED: &str = r#"import time

from textutil import join

parts = ["part%d" % i for i in range(20000)]
t0 = time.perf_counter()
join(parts, ",")
print("Mean: %.6f" % (time.perf_counter() - t0))
"#;

fn workloads() -> Vec<Workload> {
    vec![
        workload("dedup", DEDUP),
        workload("join_self_timed", JOIN_SELF_TIMED),
        workload("boom", "def workload():\n    return 1 / 0\n"),
        workload("silent", "x = sum(range(10))\n"),
        workload(
            "hang",
            "import time\n\n\ndef workload():\n    time.sleep(3600)\n",
        ),
    ]
}

fn cfg(rounds: usize, aa: bool) -> MeasureConfig {
    let mut c = config(rounds, aa);
    // Only the unchanged class runs: the tests do not see the change.
    c.tests = Tests::Classes(vec!["tests/test_join.py".into()]);
    c.protocol.workload_timeout = Duration::from_secs(20);
    c
}

#[test]
fn a_workload_detects_what_the_tests_do_not_and_failing_workloads_are_recorded() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let e = env("workloads");
    let dir = e.dir.path().join("python");
    let commits = repo(&dir, fixture_steps("python"));
    let status = e.build_with(
        "wl",
        Language::Python,
        &dir,
        &commits[0],
        &commits[1],
        workloads(),
    );
    assert_eq!(status.workloads.len(), 5, "the build carries the workloads");
    let rounds = 10;
    let t = std::time::Instant::now();
    let mut m = e.measure(&status, &cfg(rounds, false));
    assert!(m.executable, "{:?}: {:?}", m.reason, m.detail);
    // Unchanged detectors are flagged by chance at the sign test's level; as in the fixture
    // tests, such a verdict stands only if an independent second run repeats it.
    let unchanged = ["tests.test_join", "workload:join_self_timed"];
    if unchanged
        .iter()
        .any(|u| direction(&m, u) != Direction::NotSignificant)
    {
        eprintln!("an unchanged detector was flagged by chance or by bias: measuring again");
        m = e.measure(
            &status,
            &MeasureConfig {
                force: true,
                ..cfg(rounds, false)
            },
        );
        assert!(m.executable, "{:?}: {:?}", m.reason, m.detail);
    }
    eprintln!("measured in {:?}", t.elapsed());
    for u in unchanged {
        assert_eq!(direction(&m, u), Direction::NotSignificant, "{u}: {m:#?}");
    }
    let dedup = class(&m, "workload:dedup");
    assert_eq!(dedup.kind, DetectorKind::Workload);
    assert_eq!(direction(&m, "workload:dedup"), Direction::PatchedFaster);
    let ratio = dedup.effect.as_ref().unwrap().median_ratio;
    assert!(ratio < 0.2, "dedup's median ratio {ratio}");
    // The script's own statistic (mean of the last half of the calls) is recorded beside etip's.
    let own = dedup.own.as_ref().expect("dedup's own statistic");
    assert_eq!(own.original.len(), rounds);
    assert!(own.median_ratio.unwrap() < 0.2, "{own:?}");
    let selftimed = class(&m, "workload:join_self_timed");
    assert!(
        selftimed.eligible && selftimed.own.is_some(),
        "{selftimed:#?}"
    );
    // Only the workload saw the improvement; the tests' overall did not.
    assert_eq!(m.detectors, vec!["workload:dedup".to_string()]);
    assert_eq!(
        m.overall
            .as_ref()
            .unwrap()
            .sign_test
            .as_ref()
            .unwrap()
            .direction,
        Direction::NotSignificant
    );
    // Failures are recorded detectors with their reason, not drops.
    for (name, why) in [
        ("workload:boom", "ZeroDivisionError: division by zero"),
        ("workload:silent", "printed no statistic"),
        ("workload:hang", "ran past the workload time limit of 20 s"),
    ] {
        let c = class(&m, name);
        assert_eq!(c.kind, DetectorKind::Workload);
        assert!(!c.eligible, "{c:#?}");
        let excluded = c.excluded.as_deref().unwrap_or_default();
        assert!(
            excluded.starts_with("failed in the warm-up round (original): ")
                && excluded.contains(why),
            "{name}: {excluded}"
        );
    }
    // The hanging workload cost its limit once, not in every round.
    assert!(t.elapsed() < Duration::from_secs(600));

    // A/A on the same detectors: both sides run the original tree; nothing may show an effect
    // of consequence, and a chance verdict must not repeat in an independent second run.
    let aa = e.measure(&status, &cfg(rounds, true));
    assert!(
        class(&aa, "workload:dedup").sign_test.is_some(),
        "the A/A run times the workloads: {aa:#?}"
    );
    let first = common::aa_flagged(&aa);
    if !first.is_empty() {
        eprintln!("A/A flagged {first:?}: running an independent second A/A");
        let second = common::aa_flagged(&e.measure(
            &status,
            &MeasureConfig {
                force: true,
                ..cfg(rounds, true)
            },
        ));
        let again: Vec<_> = first.iter().filter(|f| second.contains(f)).collect();
        assert!(
            again.is_empty(),
            "two independent A/A runs flagged {again:?}"
        );
    }
}

/// `--detectors workloads`: no test command runs; the workloads alone decide, and the overall
/// verdict totals them.
#[test]
fn workloads_alone_measure_an_etip() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let e = env("wlonly");
    let dir = e.dir.path().join("python");
    let commits = repo(&dir, fixture_steps("python"));
    let status = e.build_with(
        "wlonly",
        Language::Python,
        &dir,
        &commits[0],
        &commits[1],
        vec![workload("dedup", DEDUP)],
    );
    let mut c = cfg(6, false);
    c.detectors = etip_measure::measure::Detectors::parse("workloads").unwrap();
    let m = e.measure(&status, &c);
    assert!(m.executable, "{:?}: {:?}", m.reason, m.detail);
    assert_eq!(
        m.classes
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        vec!["workload:dedup"],
        "no test ran"
    );
    assert_eq!(m.detectors, vec!["workload:dedup".to_string()]);
    assert_eq!(
        m.overall
            .as_ref()
            .unwrap()
            .sign_test
            .as_ref()
            .unwrap()
            .direction,
        Direction::PatchedFaster
    );
    // An ETIP without workloads measured with --detectors workloads has nothing to time.
    let bare = etip_core::instance::InstanceStatus {
        workloads: Vec::new(),
        ..status.clone()
    };
    let none = e.measure(&bare, &c);
    assert!(!none.executable);
    assert!(
        none.detail.unwrap().contains("carries no workload"),
        "a clear reason"
    );
}

/// A `main` class in a package of its own: `join` is the same in both versions.
const JAVA_JOIN_MAIN: &str = r#"package bench;

import demo.TextUtil;
import java.util.ArrayList;
import java.util.List;

public final class JoinMain {
    public static void main(String[] args) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < 6000; i++) {
            parts.add("part" + i);
        }
        if (TextUtil.join(parts, ",").isEmpty()) {
            throw new IllegalStateException("empty");
        }
    }
}
"#;

/// Java workloads: each compiled once per session against the version's classes and the runtime
/// class path Maven resolves, then timed in a fresh JVM per round and version; one that does
/// not compile is a recorded failure.
#[test]
fn java_workloads_are_timed_in_a_fresh_jvm_per_round() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let e = env("javawl");
    let dir = e.dir.path().join("maven");
    let commits = repo(&dir, fixture_steps("maven"));
    let java = |name: &str, src: &str| Workload {
        name: name.into(),
        script: Some(src.into()),
        file: None,
        repeat: Some(3),
    };
    let status = e.build_with(
        "javawl",
        Language::Java,
        &dir,
        &commits[0],
        &commits[1],
        vec![
            java("dedup", common::JAVA_DEDUP),
            java("join_main", JAVA_JOIN_MAIN),
            java(
                "broken",
                "public class Broken { public static void workload() { notThere(); } }",
            ),
        ],
    );
    let rounds = 8;
    // A JMH benchmark as `etip select` records one. The fixture's build has no JMH (Maven
    // Central only): the class path resolves in the image, JMH's launcher is not on it, and the
    // detector is a recorded failure that stops nothing else.
    let jmh = SuiteBenchmark {
        kind: DetectorKind::Jmh,
        name: "demo.DedupBench.dedup[size=100]".into(),
        dir: String::new(),
        module: "target/test-classes".into(),
        target: "demo.DedupBench.dedup".into(),
        params: None,
        number: Some(1000),
        values: [("size".to_string(), "100".to_string())].into(),
        mode: "avgt".into(),
        original: Hit::default(),
        patched: Hit::default(),
    };
    let covering = Covering {
        // Only the unchanged class runs: the tests do not see the change.
        tests: vec!["demo.JoinTest".into()],
        detail: String::new(),
        suites: vec![jmh],
    };
    let cfg = |force: bool| MeasureConfig {
        tests: Tests::Covering([(status.id.clone(), covering.clone())].into()),
        force,
        ..config(rounds, false)
    };
    let mut m = e.measure(&status, &cfg(false));
    assert!(m.executable, "{:?}: {:?}", m.reason, m.detail);
    if direction(&m, "workload:join_main") != Direction::NotSignificant {
        eprintln!("the unchanged main class was flagged by chance: measuring again");
        m = e.measure(&status, &cfg(true));
    }
    assert_eq!(
        direction(&m, "workload:join_main"),
        Direction::NotSignificant,
        "{m:#?}"
    );
    let dedup = class(&m, "workload:dedup");
    assert_eq!(dedup.kind, DetectorKind::Workload);
    assert_eq!(
        direction(&m, "workload:dedup"),
        Direction::PatchedFaster,
        "{dedup:#?}"
    );
    let ratio = dedup.effect.as_ref().unwrap().median_ratio;
    assert!(ratio < 0.2, "dedup's median ratio {ratio}");
    assert_eq!(dedup.own.as_ref().unwrap().original.len(), rounds);
    let broken = class(&m, "workload:broken");
    let why = broken.excluded.as_deref().unwrap_or_default();
    assert!(
        why.contains("the workload does not compile: Broken.java:1: error: cannot find symbol"),
        "{broken:#?}"
    );
    let bench = class(&m, "jmh:demo.DedupBench.dedup[size=100]");
    assert_eq!(bench.kind, DetectorKind::Jmh);
    let why = bench.excluded.as_deref().unwrap_or_default();
    assert!(
        why.contains("failed in the warm-up round (original): JMH wrote no result: Error: Could not find or load main class org.openjdk.jmh.Main"),
        "{bench:#?}"
    );
    assert!(
        m.environment
            .notes
            .iter()
            .any(|n| n.starts_with("jmh: 1 benchmark(s) run with -f 1 -wi 5 -w 1s -i 5 -r 1s")),
        "{:?}",
        m.environment.notes
    );
}
