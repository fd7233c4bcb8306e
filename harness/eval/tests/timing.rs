//! Candidates that fake the times which score them (rules §3.8), on real built ETIPs with the real
//! Docker engine: the candidate's code runs in the process that writes its test report, so it can
//! change what the report says, but not the wall time etip measures around the test command.
//!
//! Python (the fixture's dedup ETIP): the clock pytest reads divided by 100 with `dedup` made
//! *slower* (the hostile-user probe that scored 46.6x), pytest's XML writer told a hundredth of each
//! duration, and the report file rewritten at interpreter exit. Java (the Maven fixture's dedup
//! ETIP): the forked test JVM rewrites Surefire's reports with a hundredth of each time as it exits.
//! Each is `timing_inconsistent`, with no speedup credited; the reference (the ETIP's own patch)
//! passes the same check in the same rounds.

#[path = "../../measure/tests/common/mod.rs"]
mod common;

use common::{Env, Step};
use etip_core::Language;
use etip_eval::evaluate::{EvalConfig, evaluate};
use etip_eval::generated::evaluate_test;
use etip_eval::predictions::{Kind, Prediction};
use etip_records::results::TaskResult;
use std::time::Duration;

fn config(rounds: usize) -> EvalConfig {
    let mut measure = common::config(rounds, false);
    measure.protocol.fresh_rounds = false;
    EvalConfig {
        measure,
        allow_test_changes: false,
        setup_timeout: Duration::from_secs(600),
        run_id: Some("timing".into()),
    }
}

/// The fixture's dedup ETIP of `kind` (`python`, `maven`), built in a test namespace.
fn built(name: &str, kind: &str, lang: Language) -> (Env, etip_core::instance::InstanceStatus) {
    let env = common::env(name);
    let repo = env.dir.path().join("repo");
    let steps: Vec<Step> = common::fixture_steps(kind).into_iter().take(2).collect();
    let commits = common::repo(&repo, steps);
    let status = env.build("dedup", lang, &repo, &commits[0], &commits[1]);
    (env, status)
}

/// A patch replacing the whole of `path` (as in the fixture's first commit) by `new`.
fn replace_file(kind: &str, path: &str, new: &str) -> String {
    let old = std::fs::read_to_string(
        etip_testkit::fixtures()
            .join(kind)
            .join("1-original")
            .join(path),
    )
    .unwrap();
    let (o, n): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut patch = format!(
        "--- a/{path}\n+++ b/{path}\n@@ -1,{} +1,{} @@\n",
        o.len(),
        n.len()
    );
    for l in o {
        patch.push_str(&format!("-{l}\n"));
    }
    for l in n {
        patch.push_str(&format!("+{l}\n"));
    }
    patch
}

fn original(kind: &str, path: &str) -> String {
    std::fs::read_to_string(
        etip_testkit::fixtures()
            .join(kind)
            .join("1-original")
            .join(path),
    )
    .unwrap()
}

fn prediction(model: &str, patch: String) -> Prediction {
    Prediction {
        instance_id: "dedup".into(),
        model: model.into(),
        patch: Some(patch),
        line: 1,
        kind: Kind::Agent,
        classes: Vec::new(),
        workload: None,
    }
}

/// The checks every faked candidate must meet.
fn assert_caught(model: &str, r: &TaskResult) {
    assert_eq!(
        r.category.as_deref(),
        Some("timing_inconsistent"),
        "{model}: {:?}\n{:#?}",
        r.detail,
        r.timing
    );
    // Never credited: not correct for the scoring rules, no speedup.
    assert_eq!(r.correct, Some(false), "{model}");
    assert_eq!(r.speedup, None, "{model}");
    assert_eq!(r.pass_fraction, Some(1.0), "{model}: every test passed");
    let cand = r.timing.iter().find(|t| t.side == "candidate").unwrap();
    assert!(!cand.consistent, "{model}: {cand:?}");
    // The report claims a large speedup the wall clock does not see.
    assert!(
        cand.speedup_by_report > 5.0 * cand.speedup_by_wall,
        "{model}: {cand:?}"
    );
    assert!(cand.excess > cand.tolerance, "{model}: {cand:?}");
    let d = r.detail.as_deref().unwrap();
    assert!(d.contains("wall clock does not see"), "{model}: {d}");
    // The reference (the ETIP's own patch), timed in the same rounds, is consistent: on a busy
    // machine the time outside its tests swings by tenths of a second either way, in about half
    // the rounds, never in every one.
    let reference = r.timing.iter().find(|t| t.side == "reference").unwrap();
    assert!(reference.consistent, "{model}: {reference:?}");
}

const INIT: &str = "textutil/__init__.py";

#[test]
fn python_candidates_that_fake_their_times_are_timing_inconsistent() {
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (env, status) = built("timing-py", "python", Language::Python);
    // A faked report disagrees in nearly every round; on a busy machine an honest round can
    // swing as far as this small fixture's fake (0.3 s), and 12 rounds leave room for that.
    let cfg = config(12);
    let source = original("python", INIT);
    let header = |code: &str| -> String {
        source.replacen(
            "\"\"\"Small text utilities.\"\"\"\n",
            &format!("\"\"\"Small text utilities.\"\"\"\n{code}\n"),
            1,
        )
    };
    // The hostile-user probe: pytest's clock divided by 100, and `dedup` 0.3 s slower.
    let clock = header(
        "import _pytest.timing as _pt\n_r = _pt.perf_counter\n_pt.perf_counter = lambda: _r() / 100.0",
    )
    .replacen(
        "    out = []\n    for v in values:",
        "    import time\n    time.sleep(0.3)\n    out = []\n    for v in values:",
        1,
    );
    // pytest's XML writer writes a hundredth of each duration (the algorithm is unchanged).
    let writer = header(
        "import _pytest.junitxml as _jx\n_to_xml = _jx._NodeReporter.to_xml\ndef _fast(self):\n    self.duration = self.duration / 100.0\n    return _to_xml(self)\n_jx._NodeReporter.to_xml = _fast",
    );
    // The report rewritten when the interpreter exits, after pytest wrote it.
    let at_exit = header(
        "import atexit, re, sys\ndef _rewrite():\n    for a in sys.argv:\n        if a.startswith('--junitxml='):\n            p = a.split('=', 1)[1]\n            t = open(p).read()\n            t = re.sub(r'time=\"([0-9.]+)\"', lambda m: 'time=\"%.6f\"' % (float(m.group(1)) / 100), t)\n            open(p, 'w').write(t)\natexit.register(_rewrite)",
    );
    let logs = env.dir.path().join("logs");
    for (model, text) in [
        ("fake-clock", clock),
        ("fake-xml-writer", writer),
        ("fake-report-at-exit", at_exit),
    ] {
        let dir = logs.join(model);
        let r = evaluate(
            &env.executor,
            &status,
            &prediction(model, replace_file("python", INIT, &text)),
            &cfg,
            Some(&dir),
            &(),
        );
        if std::env::var_os("ETIP_KEEP").is_some() {
            let _ = std::fs::create_dir_all("/tmp/timing-logs");
            let _ = std::fs::copy(
                dir.join("rounds.jsonl"),
                format!("/tmp/timing-logs/{model}.jsonl"),
            );
        }
        assert_caught(model, &r);
        if model == "fake-clock" {
            // Slower by wall time, as in the probe.
            let cand = r.timing.iter().find(|t| t.side == "candidate").unwrap();
            assert!(cand.speedup_by_wall < 1.0, "{cand:?}");
            assert!(cand.saved_by_wall < 0.0, "{cand:?}");
        }
    }
}

const JAVA: &str = "src/main/java/demo/TextUtil.java";

#[test]
fn a_java_candidate_whose_test_jvm_rewrites_its_reports_is_timing_inconsistent() {
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (env, status) = built("timing-java", "maven", Language::Java);
    let cfg = config(10);
    // Loaded by the first test that calls TextUtil, in Surefire's forked JVM: as that JVM exits
    // (after the Maven process wrote the reports of the classes that ran), every time in the
    // reports becomes a hundredth.
    let hook = r#"    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Thread.sleep(500);
                java.io.File[] files = new java.io.File("target/surefire-reports").listFiles();
                if (files == null) {
                    return;
                }
                java.util.regex.Pattern time = java.util.regex.Pattern.compile("time=\"([0-9.,]+)\"");
                for (java.io.File f : files) {
                    if (!f.getName().startsWith("TEST-") || !f.getName().endsWith(".xml")) {
                        continue;
                    }
                    String text = new String(java.nio.file.Files.readAllBytes(f.toPath()), "UTF-8");
                    java.util.regex.Matcher m = time.matcher(text);
                    StringBuffer out = new StringBuffer();
                    while (m.find()) {
                        double t = Double.parseDouble(m.group(1).replace(",", ""));
                        m.appendReplacement(out, "time=\"" + String.format(java.util.Locale.ROOT, "%.3f", t / 100) + "\"");
                    }
                    m.appendTail(out);
                    java.nio.file.Files.write(f.toPath(), out.toString().getBytes("UTF-8"));
                }
            } catch (Exception e) {
                // nothing to see
            }
        }));
    }

    private TextUtil() {}"#;
    let text = original("maven", JAVA).replacen("    private TextUtil() {}", hook, 1);
    assert_ne!(text, original("maven", JAVA));
    let dir = env.dir.path().join("logs").join("jvm-rewrites-reports");
    let r = evaluate(
        &env.executor,
        &status,
        &prediction("jvm-rewrites-reports", replace_file("maven", JAVA, &text)),
        &cfg,
        Some(&dir),
        &(),
    );
    if std::env::var_os("ETIP_KEEP").is_some() {
        let _ = std::fs::create_dir_all("/tmp/timing-logs");
        let _ = std::fs::copy(dir.join("rounds.jsonl"), "/tmp/timing-logs/java.jsonl");
    }
    assert_caught("jvm-rewrites-reports", &r);

    // eval-test: a generated Java workload, compiled in each session against the version's
    // classes and timed in a fresh JVM per round on the original and the reference.
    let mut generated = prediction("gen", String::new());
    generated.kind = Kind::Test;
    generated.patch = None;
    generated.workload = Some(common::JAVA_DEDUP.into());
    let logs = env.dir.path().join("logs").join("gen");
    let r = evaluate_test(&env.executor, &status, &generated, &cfg, Some(&logs), &());
    assert_eq!(r.category.as_deref(), Some("detector"), "{r:#?}");
    assert_eq!(r.tests[0].name, "workload:generated");
    assert!(r.gold_speedup.unwrap() > 3.0, "{r:#?}");
    assert!(logs.join("Workload.java").is_file());
    let mut broken = generated.clone();
    broken.workload =
        Some("public class Broken { public static void workload() { nothing(); } }".into());
    let r = evaluate_test(&env.executor, &status, &broken, &cfg, None, &());
    assert_eq!(r.category.as_deref(), Some("fails_on_original"), "{r:#?}");
    assert!(
        r.detail.as_deref().unwrap().contains("does not compile"),
        "{r:#?}"
    );
}
