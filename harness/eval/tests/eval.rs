//! `etip eval` on a real built ETIP (the Python fixture: `dedup` made linear) with the real Docker
//! engine: the ground-truth patch, the failing sample patches of `etip demo` (`etip-fixtures`),
//! no patch and the unchanged candidate, each with its category; hostile patches contained;
//! nothing left running.

#[path = "../../measure/tests/common/mod.rs"]
mod common;

use common::{Env, Step};
use etip_core::Language;
use etip_eval::evaluate::{EvalConfig, evaluate};
use etip_eval::predictions::{Kind, Prediction};
use std::time::Duration;

fn prediction(model: &str, patch: Option<String>) -> Prediction {
    Prediction {
        instance_id: "py-dedup".into(),
        model: model.into(),
        patch,
        line: 1,
        kind: if model == "gold" {
            Kind::Gold
        } else {
            Kind::Agent
        },
        classes: Vec::new(),
        workload: None,
    }
}

fn config() -> EvalConfig {
    let mut measure = common::config(8, false);
    // As `etip eval` runs: every round in fresh containers.
    measure.protocol.fresh_rounds = true;
    EvalConfig {
        measure,
        allow_test_changes: false,
        setup_timeout: Duration::from_secs(300),
        run_id: Some("test".into()),
    }
}

/// The Python fixture's dedup ETIP, built in a test namespace.
fn built(name: &str) -> (Env, etip_core::instance::InstanceStatus) {
    let env = common::env(name);
    let repo = env.dir.path().join("repo");
    let steps: Vec<Step> = common::fixture_steps("python")
        .into_iter()
        .take(2)
        .collect();
    let commits = common::repo(&repo, steps);
    let status = env.build(
        "py-dedup",
        Language::Python,
        &repo,
        &commits[0],
        &commits[1],
    );
    (env, status)
}

fn leftovers(env: &Env) -> usize {
    let out = std::process::Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=etip.namespace={}", env.ns),
        ])
        .output()
        .expect("docker ps");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn predictions_on_a_python_etip_get_their_categories() {
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (env, status) = built("eval-py");
    let gold = etip_eval::gold::patch(&status, &env.dir.path().join("cache")).unwrap();
    assert!(
        gold.contains("+    return list(dict.fromkeys(values))"),
        "{gold}"
    );
    let cfg = config();
    let logs = env.dir.path().join("logs");
    // The demo's sample patches that fail (one breaks a test, one does not apply), no patch and
    // the unchanged candidate. The ground truth and the samples that come out correct (an exact
    // match, an equivalent rewrite, a slower one) are checked end to end through the binary by
    // tests/e2e/demo.rs.
    let mut cases: Vec<(&str, Option<String>, &str)> = Vec::new();
    cases.extend(
        etip_fixtures::SAMPLES
            .iter()
            .filter(|s| !s.expected.starts_with("correct"))
            .map(|s| (s.model, Some(s.patch().to_string()), s.expected)),
    );
    cases.push(("none", None, "not_generated"));
    cases.push(("empty", None, "correct_not_faster"));
    for (model, patch, want) in cases {
        let dir = logs.join(model);
        let p = if model == "empty" {
            Prediction::empty("py-dedup")
        } else {
            prediction(model, patch)
        };
        let r = evaluate(&env.executor, &status, &p, &cfg, Some(&dir), &());
        assert_eq!(
            r.category.as_deref(),
            Some(want),
            "{model}: {:?}\n{}",
            r.detail,
            std::fs::read_to_string(dir.join("build.log")).unwrap_or_default()
        );
        assert_eq!(r.model.as_deref(), Some(model));
        assert_eq!(r.run_id.as_deref(), Some("test"));
        match want {
            // The unchanged candidate.
            "correct_not_faster" => {
                assert_eq!(r.correct, Some(true));
                assert_eq!(r.apply, None);
                // Every eligible class has 8 paired runs of each version.
                assert!(!r.tests.is_empty());
                for t in &r.tests {
                    assert_eq!(
                        (t.base.len(), t.patched.len(), t.reference.len()),
                        (8, 8, 8)
                    );
                }
                // The rounds rotate: each version runs first in some round.
                assert_eq!(r.orders.len(), 8);
                for side in ["original", "candidate", "reference"] {
                    assert!(r.orders.iter().any(|o| o[0] == side), "{:?}", r.orders);
                }
                let (s, g) = (r.speedup.unwrap(), r.gold_speedup.unwrap());
                assert!(g > 1.1, "gold speedup {g}");
                // An unchanged candidate times like the original (no harness bias): the sign
                // test found no improvement (the category), and no class's median per-round
                // ratio is an effect of consequence (the A/A criterion of the measure tests).
                // The ratio of means (`speedup`) is only bounded loosely: at 8 rounds one slow
                // round of a loaded machine moves it by 20% (CI saw 1.23).
                assert!((0.67..1.5).contains(&s), "{model}: speedup {s}");
                // Per class, what 8 rounds can tell: the median per-round ratio within the same
                // loose bounds, and no direction in every round (the sign test's p < 0.01 at 8
                // rounds; 6 of 8, p = 0.14, happened on a loaded CI machine with this short
                // test, where a fixed band of [0.8, 1.25] on the median did not hold).
                for t in &r.tests {
                    let mut ratios: Vec<f64> =
                        t.base.iter().zip(&t.patched).map(|(b, p)| b / p).collect();
                    ratios.sort_by(f64::total_cmp);
                    let median = (ratios[3] + ratios[4]) / 2.0;
                    assert!(
                        (0.67..1.5).contains(&median),
                        "{model}: {} median ratio {median} ({ratios:?})",
                        t.name
                    );
                    let slower = ratios.iter().filter(|r| **r < 1.0).count();
                    let faster = ratios.iter().filter(|r| **r > 1.0).count();
                    assert!(
                        slower < 8 && faster < 8,
                        "{model}: {} one version faster in every round ({ratios:?})",
                        t.name
                    );
                }
                assert!(dir.join("rounds.jsonl").is_file());
            }
            "tests_fail" => {
                assert_eq!(r.correct, Some(false));
                let f = r.pass_fraction.unwrap();
                assert!(f > 0.0 && f < 1.0, "pass fraction {f}");
                assert!(
                    r.detail.as_deref().unwrap().contains("candidate"),
                    "{:?}",
                    r.detail
                );
            }
            "does_not_apply" => {
                let log = std::fs::read_to_string(dir.join("apply.log")).unwrap();
                assert!(log.contains("3-way"), "{log}");
            }
            _ => {}
        }
        assert_eq!(leftovers(&env), 0, "{model}: containers left");
    }
}

/// A patch replacing `dedup`'s body (the original algorithm stays after `prefix`).
fn hostile(prefix: &str) -> String {
    let mut body = String::new();
    for l in prefix.lines() {
        body.push_str(&format!("+    {l}\n"));
    }
    format!(
        "--- a/textutil/__init__.py\n+++ b/textutil/__init__.py\n@@ -4,6 +4,{} @@\n def dedup(values):\n     \"\"\"The distinct values, in first-seen order.\"\"\"\n{body}     out = []\n     for v in values:\n         if v not in out:\n             out.append(v)\n",
        6 + prefix.lines().count()
    )
}

/// Untrusted code is contained: it sees no network but loopback, cannot write the reference
/// tree, cannot outlive the time limit or fork without bound; each gets its category, the
/// reference's timings stay those of the ground truth, and no container is left.
#[test]
fn hostile_patches_are_contained() {
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (env, status) = built("eval-hostile");
    let mut cfg = config();
    cfg.measure.protocol.rounds = 6;
    cfg.measure.protocol.round_timeout = Duration::from_secs(12);
    cfg.measure.resources.pids = 256;
    let network = "import socket\nnames = sorted(n for _, n in socket.if_nameindex())\nif names != ['lo']:\n    raise RuntimeError('a network beyond loopback: %s' % names)";
    let reference = "try:\n    open('/work/patched/textutil/__init__.py', 'w').write('def dedup(v):\\n    raise SystemExit(1)\\n')\nexcept OSError:\n    pass";
    let network_and_reference = format!("{network}\n{reference}");
    let sleep = "import time\ntime.sleep(100000)";
    let fork = "import os\nn = 0\ntry:\n    while n < 100000:\n        if os.fork() == 0:\n            import time\n            time.sleep(60)\n            os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nraise RuntimeError('forked %d processes' % n)";
    // Pays 0.3 s on its first call and caches that in a file; later calls answer from the cache
    // at once. With every round in fresh containers each round pays the first call's price (the
    // 0.3 s make that unmistakable: without them, the fixture's allocation-heavy dedup test can
    // time 40% apart for the same loop after an unrelated allocation, a layout effect).
    let cache = "import os, time\nif os.path.exists('/work/original/.dedup-cache'):\n    return list(dict.fromkeys(values))\ntime.sleep(0.3)\nopen('/work/original/.dedup-cache', 'w').close()";
    for (model, prefix, want) in [
        ("caches-across-rounds", cache, "correct_not_faster"),
        // Looks for a network, then writes into the reference tree (one evaluation for both).
        (
            "network-and-reference-tree",
            network_and_reference.as_str(),
            "correct_not_faster",
        ),
        ("sleeps", sleep, "tests_fail"),
        ("fork-bomb", fork, "tests_fail"),
    ] {
        // Fresh containers per round matter to the cache only: network, hidden trees, pids and
        // time limits are properties of every container, shared or fresh (and rounds in shared
        // containers take half the time).
        cfg.measure.protocol.fresh_rounds = model == "caches-across-rounds";
        let r = evaluate(
            &env.executor,
            &status,
            &prediction(model, Some(hostile(prefix))),
            &cfg,
            None,
            &(),
        );
        assert_eq!(r.category.as_deref(), Some(want), "{model}: {:?}", r.detail);
        match model {
            // Each fresh round pays the first call's 0.3 s again: slower than the original.
            "caches-across-rounds" => {
                let sp = r.speedup.unwrap();
                assert!(sp < 1.0, "the cache survived a round: speedup {sp}");
            }
            "network-and-reference-tree" => {
                let g = r.gold_speedup.unwrap();
                assert!(g > 1.1, "the reference kept its speed: {g}");
            }
            "sleeps" => assert!(
                r.detail.as_deref().unwrap().contains("time limit"),
                "{:?}",
                r.detail
            ),
            "fork-bomb" => {
                let d = r.detail.as_deref().unwrap();
                assert!(d.contains("candidate"), "{d}");
            }
            _ => {}
        }
        assert_eq!(leftovers(&env), 0, "{model}: containers left");
    }
    assert_eq!(snapshots(&env), 0, "snapshot images left");
}

/// Snapshot images of fresh rounds left in the test's namespace.
fn snapshots(env: &Env) -> usize {
    let out = std::process::Command::new("docker")
        .args([
            "images",
            "-q",
            "--filter",
            "label=etip.kind=snapshot",
            "--filter",
            &format!("label=etip.namespace={}", env.ns),
        ])
        .output()
        .expect("docker images");
    String::from_utf8_lossy(&out.stdout).lines().count()
}
