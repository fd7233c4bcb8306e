//! `etip select` on the real Docker engine, with the Python fixture of `etip build`: the dedup
//! ETIP changes `dedup`, which one test of three executes; an ETIP that changes a function no
//! test calls has no covering test. Then `etip measure --tests covering` times only the covering
//! test and reaches the verdict a full run reaches on it.

mod common;

use common::{SERIAL, Step, config, env, fixture_steps, repo};
use etip_build::config::BuildConfig;
use etip_core::Language;
use etip_core::selection::SelectionOutcome;
use etip_exec::executor::Resources;
use etip_measure::measure::{Covering, Tests};
use etip_records::measure::{Measurement, NotExecutable};
use etip_select::{SelectConfig, select_one};
use etip_stats::Direction;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const DEDUP_TEST: &str = "tests/test_text_dedup.py::test_dedup_keeps_first_seen_order";

/// The fixture's last good tree (`3-join-builder`) plus `shout`, which no test calls.
fn with_shout(body: &str) -> Step<'static> {
    let text = std::fs::read_to_string(
        etip_testkit::fixtures().join("python/3-join-builder/textutil/__init__.py"),
    )
    .unwrap();
    Step::Files(vec![(
        "textutil/__init__.py",
        format!("{text}\n\ndef shout(s):\n    \"\"\"Upper case.\"\"\"\n{body}\n"),
    )])
}

fn select_config(work: &std::path::Path) -> SelectConfig {
    SelectConfig {
        build: BuildConfig::default(),
        resources: Resources::default(),
        timeout: Duration::from_secs(300),
        work: work.to_path_buf(),
        force: false,
    }
}

fn direction(m: &Measurement, class: &str) -> Direction {
    let c = m.classes.iter().find(|c| c.name == class);
    c.and_then(|c| c.sign_test.as_ref())
        .unwrap_or_else(|| panic!("no verdict for {class}: {m:#?}"))
        .direction
}

#[test]
fn python_selection_keeps_the_covering_test_and_measure_times_only_it() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let e = env("select");
    let dir = e.dir.path().join("python");
    let mut steps = fixture_steps("python");
    steps.push(with_shout("    return \"\".join(c.upper() for c in s)"));
    steps.push(with_shout("    return s.upper()"));
    let c = repo(&dir, steps);
    let dedup = e.build("py-dedup", Language::Python, &dir, &c[0], &c[1]);
    let uncovered = e.build("py-uncovered", Language::Python, &dir, &c[4], &c[5]);
    let cfg = select_config(&e.dir.path().join("select"));

    let s = select_one(&e.executor, &dedup, &cfg, None);
    assert_eq!(s.outcome, SelectionOutcome::Selected, "{s:#?}");
    assert_eq!(s.tests(), [DEDUP_TEST], "{s:#?}");
    assert_eq!(s.not_covering, 2, "test_join and test_trivial: {s:#?}");
    let cov = &s.covering[0];
    assert_eq!(cov.class, "tests.test_text_dedup");
    assert_eq!(cov.original.functions, ["textutil.dedup"]);
    assert_eq!(cov.patched.functions, ["textutil.dedup"]);
    // The original's loop (5 changed lines) and the patched one-liner ran.
    assert_eq!((cov.original.lines, cov.patched.lines), (5, 1), "{cov:#?}");
    assert_eq!(s.runs.len(), 2);
    for r in &s.runs {
        assert_eq!((r.tests, r.failed), (3, 0), "{r:#?}");
        assert_eq!(r.changed[0].path, "textutil/__init__.py");
        assert_eq!(r.changed[0].functions, ["textutil.dedup"]);
    }
    let sv = s.savings.as_ref().unwrap();
    assert_eq!((sv.tests_all, sv.tests_selected), (3, 1));
    assert!(sv.secs_selected < sv.secs_all, "{sv:?}");
    // Nothing of the selection run is left in the trees, and no container is left behind.
    let left = e.builder.block_on(
        e.builder
            .engine()
            .list_containers(&[format!("etip.namespace={}", e.ns)]),
    );
    assert!(left.unwrap().is_empty());
    // A re-run with the same image reuses the stored selection.
    let t = Instant::now();
    let again = select_one(&e.executor, &dedup, &cfg, Some(&s));
    assert_eq!(again, s);
    assert!(t.elapsed() < Duration::from_secs(1));

    let none = select_one(&e.executor, &uncovered, &cfg, None);
    assert_eq!(none.outcome, SelectionOutcome::NoCoveringTests, "{none:#?}");
    assert_eq!(none.not_covering, 3);
    assert!(
        none.detail
            .as_deref()
            .unwrap()
            .contains("textutil/__init__.py"),
        "{none:#?}"
    );
    assert_eq!(none.runs[1].changed[0].functions, ["textutil.shout"]);

    // Measure: only the covering test runs, and its verdict is the full run's.
    let rounds = 10;
    let mut covering = config(rounds, false);
    covering.tests = Tests::Covering(BTreeMap::from([
        ("py-dedup".to_string(), Covering::from_selection(&s)),
        ("py-uncovered".to_string(), Covering::from_selection(&none)),
    ]));
    let m = e.measure(&dedup, &covering);
    assert!(m.executable, "{:?}: {:?}", m.reason, m.detail);
    let names: Vec<&str> = m.classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["tests.test_text_dedup"], "{m:#?}");
    assert_eq!(
        direction(&m, "tests.test_text_dedup"),
        Direction::PatchedFaster
    );
    assert!(
        m.protocol.tests.starts_with("covering (1 tests"),
        "{}",
        m.protocol.tests
    );
    // (The full run's verdict on the same fixture: tests/engine.rs, python_fixture_...)
    let m = e.measure(&uncovered, &covering);
    assert!(!m.executable);
    assert_eq!(m.reason, Some(NotExecutable::NoCoveringTests));
    assert!(m.detail.unwrap().contains("none of the 3 tests"));
}

#[test]
fn maven_selection_keeps_the_covering_class() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let e = env("selectmvn");
    let dir = e.dir.path().join("maven");
    let c = repo(&dir, fixture_steps("maven"));
    let dedup = e.build("mvn-dedup", Language::Java, &dir, &c[0], &c[1]);
    let cfg = select_config(&e.dir.path().join("select"));
    let s = select_one(&e.executor, &dedup, &cfg, None);
    assert_eq!(s.outcome, SelectionOutcome::Selected, "{s:#?}");
    assert_eq!(s.tool, "jacoco");
    // JoinTest and TrivialTest run TextUtil too, but not its changed method.
    assert_eq!(s.tests(), ["demo.TextDedupTest"], "{s:#?}");
    assert_eq!(s.not_covering, 2, "{s:#?}");
    let cov = &s.covering[0];
    assert_eq!(cov.class, "demo.TextDedupTest");
    assert_eq!(cov.original.functions, ["demo.TextUtil#dedup"]);
    assert_eq!(cov.patched.functions, ["demo.TextUtil#dedup"]);
    assert!(cov.original.lines > 0 && cov.patched.lines > 0, "{cov:#?}");
    for r in &s.runs {
        assert_eq!((r.tests, r.failed), (3, 0), "{r:#?}");
        assert_eq!(r.changed[0].path, "src/main/java/demo/TextUtil.java");
        // The added import is no code a test executes: only the method is named.
        assert_eq!(r.changed[0].functions, ["demo.TextUtil#dedup"], "{r:#?}");
    }
    let sv = s.savings.as_ref().unwrap();
    assert_eq!((sv.tests_all, sv.tests_selected), (3, 1));

    // Measuring only the covering tests is the same code for both languages: checked on the
    // Python fixture above.
}
