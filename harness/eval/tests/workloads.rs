//! `etip eval` and `etip eval-test` with workloads, on the real Docker engine: the Python
//! fixture's dedup ETIP carries a workload, and the tests that run do not see the change. The
//! ground truth is `correct_faster` judged on the workload; a candidate whose tests pass but
//! that breaks the workload is `tests_fail`; a generated workload that times the change is a
//! `detector`, one that fails on the original `fails_on_original`. With a selection, the covering
//! benchmarks of the project's asv and pytest-benchmark suites time the candidate.

#[path = "../../measure/tests/common/mod.rs"]
mod common;

use common::{Env, Step};
use etip_core::Language;
use etip_core::detector::Workload;
use etip_eval::evaluate::{EvalConfig, evaluate};
use etip_eval::generated::evaluate_test;
use etip_eval::predictions::{Kind, Prediction};
use etip_measure::measure::{Covering, Tests};
use std::time::Duration;

const DEDUP: &str = "from textutil import dedup\n\nvalues = [(i * 7919) % 3000 for i in range(6000)]\n\n\ndef workload():\n    dedup(values)\n";

fn config() -> EvalConfig {
    let mut measure = common::config(6, false);
    measure.protocol.fresh_rounds = true;
    measure.protocol.workload_timeout = Duration::from_secs(60);
    // Only the unchanged class runs: the tests do not see the change.
    measure.tests = Tests::Classes(vec!["tests/test_join.py".into()]);
    EvalConfig {
        measure,
        allow_test_changes: false,
        setup_timeout: Duration::from_secs(300),
        run_id: Some("test".into()),
    }
}

fn built(name: &str) -> (Env, etip_core::instance::InstanceStatus) {
    let env = common::env(name);
    let repo = env.dir.path().join("repo");
    let steps: Vec<Step> = common::fixture_steps("python")
        .into_iter()
        .take(2)
        .collect();
    let commits = common::repo(&repo, steps);
    let status = env.build_with(
        "py-dedup",
        Language::Python,
        &repo,
        &commits[0],
        &commits[1],
        vec![Workload {
            name: "dedup".into(),
            script: Some(DEDUP.into()),
            file: None,
            repeat: Some(3),
        }],
    );
    (env, status)
}

fn prediction(model: &str, kind: Kind, patch: Option<String>) -> Prediction {
    Prediction {
        instance_id: "py-dedup".into(),
        model: model.into(),
        patch,
        line: 1,
        kind,
        classes: Vec::new(),
        workload: None,
    }
}

/// A candidate that remembers every input's answer in a module-level dictionary: the first call
/// is as slow as the original's, the repeats in the same process are free.
const CACHE: &str = "--- a/textutil/__init__.py\n+++ b/textutil/__init__.py\n@@ -1,13 +1,20 @@\n \"\"\"Small text utilities.\"\"\"\n+\n+\n+_SEEN = {}\n \n \n def dedup(values):\n     \"\"\"The distinct values, in first-seen order.\"\"\"\n+    key = tuple(values)\n+    if key in _SEEN:\n+        return list(_SEEN[key])\n     out = []\n     for v in values:\n         if v not in out:\n             out.append(v)\n-    return out\n+    _SEEN[key] = out\n+    return list(out)\n \n \n def join(parts, sep):\n";

/// A candidate that fails for exactly the workload's input (tests pass: none of them uses it).
const SPECIAL_CASE: &str = "--- a/textutil/__init__.py\n+++ b/textutil/__init__.py\n@@ -4,6 +4,8 @@\n def dedup(values):\n     \"\"\"The distinct values, in first-seen order.\"\"\"\n+    if len(values) == 6000:\n+        raise ValueError(\"special\")\n     out = []\n     for v in values:\n         if v not in out:\n             out.append(v)\n";

#[test]
fn candidates_are_judged_on_the_workload_and_generated_workloads_are_evaluated() {
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (env, status) = built("eval-wl");
    let cfg = config();
    let logs = env.dir.path().join("logs");

    let gold = etip_eval::gold::patch(&status, &env.dir.path().join("cache")).unwrap();
    let r = evaluate(
        &env.executor,
        &status,
        &prediction("gold", Kind::Gold, Some(gold)),
        &cfg,
        Some(&logs.join("gold")),
        &(),
    );
    assert_eq!(r.category.as_deref(), Some("correct_faster"), "{r:#?}");
    let detail = r.detail.as_deref().unwrap();
    assert!(
        detail.contains("judged on the ETIP's 1 workload"),
        "{detail}"
    );
    let names: Vec<&str> = r.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["workload:dedup"], "the speed is the workload's");
    assert!(r.speedup.unwrap() > 3.0, "{r:#?}");
    // The repeat check ran beside the rounds (rules §6): the expert's speed-up is there with one
    // call per process too, and the check's runs are no detector of the verdict.
    assert_eq!(
        r.hack,
        Some(etip_core::hack::HackVerdict::clean()),
        "{r:#?}"
    );

    // A cross-call cache: faster with 3 calls per process, not with one.
    let r = evaluate(
        &env.executor,
        &status,
        &prediction("cache", Kind::Agent, Some(CACHE.into())),
        &cfg,
        Some(&logs.join("cache")),
        &(),
    );
    assert_eq!(r.correct, Some(true), "{r:#?}");
    let names: Vec<&str> = r.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["workload:dedup"]);
    let hack = r.hack.as_ref().expect("the repeat check ran");
    let f = &hack.findings()[0];
    assert_eq!(
        f.kind,
        etip_core::hack::HackKind::CrossRepeatState,
        "{hack:?}"
    );
    assert_eq!(f.file, "workload:dedup");
    assert!(
        f.detail.contains("with 3 calls per process"),
        "{}",
        f.detail
    );
    // The logs keep the check's runs.
    let rounds = std::fs::read_to_string(logs.join("cache").join("rounds.jsonl")).unwrap();
    assert!(rounds.contains("workload:dedup.fresh1"));

    let r = evaluate(
        &env.executor,
        &status,
        &prediction("special", Kind::Agent, Some(SPECIAL_CASE.into())),
        &cfg,
        Some(&logs.join("special")),
        &(),
    );
    assert_eq!(r.category.as_deref(), Some("tests_fail"), "{r:#?}");
    let detail = r.detail.as_deref().unwrap();
    assert!(
        detail.contains("workload:dedup runs on the original but fails on the candidate")
            && detail.contains("ValueError: special"),
        "{detail}"
    );
    assert_eq!(r.correct, Some(false));

    // eval-test: a generated workload instead of a test patch.
    let mut detector = prediction("gen", Kind::Test, None);
    detector.workload = Some(DEDUP.into());
    let r = evaluate_test(
        &env.executor,
        &status,
        &detector,
        &cfg,
        Some(&logs.join("gen")),
        &(),
    );
    assert_eq!(r.category.as_deref(), Some("detector"), "{r:#?}");
    assert_eq!(r.tests[0].name, "workload:generated");
    assert!(r.gold_speedup.unwrap() > 3.0, "{r:#?}");
    let mut broken = prediction("broken", Kind::Test, None);
    broken.workload = Some("from textutil import nothing_here\n".into());
    let r = evaluate_test(
        &env.executor,
        &status,
        &broken,
        &cfg,
        Some(&logs.join("broken")),
        &(),
    );
    assert_eq!(r.category.as_deref(), Some("fails_on_original"), "{r:#?}");
    assert!(
        r.detail.as_deref().unwrap().contains("ImportError"),
        "{r:#?}"
    );
}

/// `etip eval --tests covering --selection`: the covering tests are the correctness gate and the
/// covering suite benchmarks time the candidate.
#[test]
fn with_a_selection_candidates_are_judged_on_the_covering_suite_benchmarks() {
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = common::env("eval-suites");
    let repo = env.dir.path().join("repo");
    let mut steps: Vec<Step> = common::fixture_steps("python")
        .into_iter()
        .take(2)
        .collect();
    steps.insert(1, common::suite_files());
    let c = common::repo(&repo, steps);
    let status = env.build("py-suites", Language::Python, &repo, &c[1], &c[2]);
    let sel = etip_select::select_one(
        &env.executor,
        &status,
        &etip_select::SelectConfig {
            build: etip_build::config::BuildConfig::default(),
            resources: etip_exec::executor::Resources::default(),
            timeout: Duration::from_secs(600),
            work: env.dir.path().join("select"),
            force: false,
        },
        None,
    );
    assert_eq!(sel.suites.len(), 3, "{sel:#?}");
    let mut cfg = config();
    cfg.measure.tests = Tests::Covering(std::collections::BTreeMap::from([(
        "py-suites".to_string(),
        Covering::from_selection(&sel),
    )]));
    let gold = etip_eval::gold::patch(&status, &env.dir.path().join("cache")).unwrap();
    let r = evaluate(
        &env.executor,
        &status,
        &prediction("gold", Kind::Gold, Some(gold)),
        &cfg,
        Some(&env.dir.path().join("logs")),
        &(),
    );
    assert_eq!(r.category.as_deref(), Some("correct_faster"), "{r:#?}");
    let names: Vec<&str> = r.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "asv:bench_text.TimeDedup.time_dedup(2000)",
            "asv:bench_text.TimeDedup.time_dedup(4000)",
            "pytest_benchmark:tests/test_speed.py::test_dedup_speed"
        ],
        "{r:#?}"
    );
    assert!(
        r.detail
            .as_deref()
            .unwrap()
            .contains("judged on the ETIP's 3 workload(s) and suite benchmark(s)"),
        "{r:#?}"
    );
}
