//! The project's own benchmark suites as detectors, on the real Docker engine: the Python
//! fixture with an asv suite (`asv.conf.json`, `benchmarks/`) and pytest-benchmark tests, whose
//! dedup ETIP (a quadratic `dedup` made linear) changes what one benchmark of each suite runs.
//! `etip select` keeps the benchmarks that execute the changed code (per parameter combination
//! for asv) and names the others; `etip measure --detectors suites` times each selected one in a
//! fresh process per round and version and sees the improvement; an A/A run flags nothing.
//!
//! pytest-benchmark is the project's declared test dependency, installed by the env layer from
//! PyPI as of the commit's date (as for any real project); asv itself is never installed: etip
//! runs asv's benchmarks by asv's rules in the ETIP's own environment.

mod common;

use common::{SERIAL, class, config, direction, env, fixture_steps, repo, suite_files};
use etip_build::config::BuildConfig;
use etip_core::Language;
use etip_core::detector::DetectorKind;
use etip_core::selection::SelectionOutcome;
use etip_exec::executor::Resources;
use etip_measure::measure::{Covering, Detectors, MeasureConfig, Tests};
use etip_select::{SelectConfig, select_one};
use etip_stats::Direction;
use std::collections::BTreeMap;
use std::time::Duration;

const ASV_SMALL: &str = "asv:bench_text.TimeDedup.time_dedup(2000)";
const ASV_LARGE: &str = "asv:bench_text.TimeDedup.time_dedup(4000)";
const PB_DEDUP: &str = "pytest_benchmark:tests/test_speed.py::test_dedup_speed";

#[test]
fn suite_benchmarks_covering_the_change_are_selected_and_see_the_improvement() {
    let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let e = env("suites");
    let dir = e.dir.path().join("python");
    let mut steps = fixture_steps("python");
    steps.insert(1, suite_files());
    let c = repo(&dir, steps);
    let status = e.build("py-suites", Language::Python, &dir, &c[1], &c[2]);

    let cfg = SelectConfig {
        build: BuildConfig::default(),
        resources: Resources::default(),
        timeout: Duration::from_secs(600),
        work: e.dir.path().join("select"),
        force: false,
    };
    let s = select_one(&e.executor, &status, &cfg, None);
    assert_eq!(s.outcome, SelectionOutcome::Selected, "{s:#?}");
    let names: Vec<String> = s.suites.iter().map(|b| b.detector()).collect();
    assert_eq!(names, [ASV_SMALL, ASV_LARGE, PB_DEDUP], "{s:#?}");
    assert_eq!(
        s.suites_not_covering,
        [
            "asv:bench_text.time_join",
            "pytest_benchmark:tests/test_speed.py::test_join_speed"
        ],
        "{s:#?}"
    );
    let asv = &s.suites[0];
    assert_eq!(asv.kind, DetectorKind::Asv);
    assert_eq!(
        (asv.dir.as_str(), asv.module.as_str(), asv.target.as_str()),
        ("benchmarks", "bench_text", "TimeDedup.time_dedup")
    );
    assert_eq!(asv.params, Some(0));
    assert_eq!(asv.original.functions, ["textutil.dedup"]);
    assert_eq!(asv.patched.functions, ["textutil.dedup"]);
    // The pytest-benchmark test is a covering test as well: it is the correctness gate too.
    assert!(
        s.tests()
            .contains(&"tests/test_speed.py::test_dedup_speed".to_string()),
        "{s:#?}"
    );

    // Measure the suites alone: each selected benchmark is a detector of its kind.
    let rounds = 8;
    let measure_cfg = |aa: bool| MeasureConfig {
        tests: Tests::Covering(BTreeMap::from([(
            "py-suites".to_string(),
            Covering::from_selection(&s),
        )])),
        detectors: Detectors::parse("suites").unwrap(),
        ..config(rounds, aa)
    };
    let m = e.measure(&status, &measure_cfg(false));
    assert!(m.executable, "{:?}: {:?}", m.reason, m.detail);
    let names: Vec<&str> = m.classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [ASV_SMALL, ASV_LARGE, PB_DEDUP],
        "only the suites ran"
    );
    for (name, kind) in [
        (ASV_SMALL, DetectorKind::Asv),
        (ASV_LARGE, DetectorKind::Asv),
        (PB_DEDUP, DetectorKind::PytestBenchmark),
    ] {
        let c = class(&m, name);
        assert_eq!(c.kind, kind);
        assert!(c.eligible, "{c:#?}");
        assert_eq!(direction(&m, name), Direction::PatchedFaster, "{c:#?}");
        let ratio = c.effect.as_ref().unwrap().median_ratio;
        assert!(ratio < 0.3, "{name}: median ratio {ratio}");
        let own = c.own.as_ref().expect("the benchmark's own statistic");
        assert_eq!(own.original.len(), rounds, "{own:?}");
    }
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

    // A/A on the same suites: no effect of consequence, and no chance verdict that repeats.
    let aa = e.measure(&status, &measure_cfg(true));
    assert_eq!(aa.classes.len(), 3, "{aa:#?}");
    let first = common::aa_flagged(&aa);
    if !first.is_empty() {
        eprintln!("A/A flagged {first:?}: running an independent second A/A");
        let second = common::aa_flagged(&e.measure(
            &status,
            &MeasureConfig {
                force: true,
                ..measure_cfg(true)
            },
        ));
        let again: Vec<_> = first.iter().filter(|f| second.contains(f)).collect();
        assert!(
            again.is_empty(),
            "two independent A/A runs flagged {again:?}"
        );
    }
}
