//! `measurements.jsonl` of `etip measure` as input of `etip score`: detection, conversion, the JETO
//! verdict against the measurement's own, the other rules, names and malformed lines.
//!
//! The measurements are built by hand the way `etip_measure::verdict` builds them with JETO's literal
//! timer rule and fixed rounds (the runner is not a dependency of this crate): per eligible class and
//! over the per-round totals of the eligible classes, `etip_stats::sign_test_with`.

use etip_records::measure::{
    ClassRecord, Environment, MEASUREMENT_SCHEMA_VERSION, Measurement, NotExecutable, Protocol,
};

use etip_stats::{Direction, SignTestRecord};

use etip_core::measure::Version;
use etip_score::input::{self, Format};
use etip_score::rules::{self, Params, Rule};
use etip_score::{ScoreError, audit};
use etip_stats::{SignTestConfig, TimerRule};
use std::path::{Path, PathBuf};

const ROUNDS: usize = 30;

fn direction(d: etip_stats::Direction) -> Direction {
    match d {
        etip_stats::Direction::PatchedFaster => Direction::PatchedFaster,
        etip_stats::Direction::OriginalFaster => Direction::OriginalFaster,
        etip_stats::Direction::NotSignificant => Direction::NotSignificant,
    }
}

/// An eligible class (or the overall record) judged as the runner judges it at fixed rounds.
fn judged(name: &str, o: &[f64], p: &[f64], cfg: &SignTestConfig, timer: TimerRule) -> ClassRecord {
    let v = etip_stats::sign_test_with(o, p, cfg, timer).expect("valid");
    ClassRecord {
        kind: Default::default(),
        own: None,
        name: name.into(),
        eligible: true,
        excluded: None,
        sign_test: Some(SignTestRecord {
            direction: direction(v.direction),
            n: v.n,
            wins_patched: v.wins_patched,
            p_patched: v.p_patched,
            wins_original: v.wins_original,
            p_original: v.p_original,
            ties: 0,
            median_ratio: v.median_ratio,
            improvement: v.improvement,
            stopped_at: None,
        }),
        mann_whitney: None,
        effect: None,
        original: o.to_vec(),
        patched: p.to_vec(),
    }
}

fn excluded(name: &str, why: &str, o: &[f64], p: &[f64]) -> ClassRecord {
    ClassRecord {
        kind: Default::default(),
        own: None,
        name: name.into(),
        eligible: false,
        excluded: Some(why.into()),
        sign_test: None,
        mann_whitney: None,
        effect: None,
        original: o.to_vec(),
        patched: p.to_vec(),
    }
}

fn protocol(timer_rule: &str) -> Protocol {
    Protocol {
        rounds: ROUNDS,
        warmup: 1,
        max_rounds: None,
        order: "alternate".into(),
        seed: None,
        min_impr: 0.05,
        p_val: 0.1,
        timer_rule: timer_rule.into(),
        min_class_secs: 0.01,
        tests: "modules".into(),
    }
}

fn base(id: &str) -> Measurement {
    Measurement {
        schema_version: MEASUREMENT_SCHEMA_VERSION,
        id: id.into(),
        executable: true,
        reason: None,
        detail: None,
        rounds: ROUNDS,
        warmup: 1,
        order: (1..=ROUNDS)
            .map(|k| {
                if k % 2 == 1 {
                    Version::Patched
                } else {
                    Version::Original
                }
            })
            .collect(),
        aa: false,
        executor: "scripted".into(),
        cpus: Vec::new(),
        protocol: protocol("literal"),
        environment: Environment {
            executor: "scripted".into(),
            ..Environment::default()
        },
        modules: vec![".".into()],
        resolution: Some(0.001),
        classes: Vec::new(),
        overall: None,
        detectors: Vec::new(),
        round_log: Vec::new(),
        timing: None,
        node: None,
    }
}

/// An executable measurement of the given classes: the eligible ones (name, original, patched)
/// are judged, the others are kept as given; `overall` over the eligible classes' totals.
fn executable(
    id: &str,
    eligible: &[(&str, Vec<f64>, Vec<f64>)],
    others: Vec<ClassRecord>,
) -> Measurement {
    executable_with(id, eligible, others, &SignTestConfig::default())
}

/// [`executable`] judged with `cfg` (recorded in the protocol).
fn executable_with(
    id: &str,
    eligible: &[(&str, Vec<f64>, Vec<f64>)],
    others: Vec<ClassRecord>,
    cfg: &SignTestConfig,
) -> Measurement {
    let mut m = base(id);
    m.protocol.min_impr = cfg.min_impr;
    m.protocol.p_val = cfg.p_val;
    let mut to = vec![0.0; ROUNDS];
    let mut tp = vec![0.0; ROUNDS];
    for (name, o, p) in eligible {
        for k in 0..ROUNDS {
            to[k] += o[k];
            tp[k] += p[k];
        }
        m.classes.push(judged(name, o, p, cfg, TimerRule::Literal));
    }
    m.classes.extend(others);
    m.overall = Some(judged("overall", &to, &tp, cfg, TimerRule::Literal));
    m.detectors = m
        .classes
        .iter()
        .filter(|c| {
            c.sign_test
                .as_ref()
                .is_some_and(|s| s.direction == Direction::PatchedFaster)
        })
        .map(|c| c.name.clone())
        .collect();
    m
}

fn not_executable(id: &str, reason: NotExecutable) -> Measurement {
    let mut m = base(id);
    m.executable = false;
    m.reason = Some(reason);
    m.detail = Some("the build failed: compile error".into());
    m.rounds = 0;
    m.warmup = 0;
    m.order.clear();
    m
}

/// A deterministic pseudo-random stream in [0, 1) (no dependency on `rand` needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `ROUNDS` times around `level` with relative noise `noise`, rounded to the millisecond.
    fn series(&mut self, level: f64, noise: f64) -> Vec<f64> {
        (0..ROUNDS)
            .map(|_| (level * (1.0 + noise * (self.next() - 0.5)) * 1000.0).round() / 1000.0)
            .collect()
    }
}

fn write_jsonl(dir: &Path, folder: &str, file: &str, ms: &[Measurement]) -> PathBuf {
    let d = dir.join(folder);
    std::fs::create_dir_all(&d).expect("folder");
    let path = d.join(file);
    let text: String = ms
        .iter()
        .map(|m| serde_json::to_string(m).expect("serialises") + "\n")
        .collect();
    std::fs::write(&path, text).expect("write");
    path
}

/// Four ETIPs: patched faster (with a too-fast class that would detect the improvement if it
/// counted, and a class missing in some round), no difference, original faster, build failed.
fn four() -> Vec<Measurement> {
    let mut rng = Lcg(7);
    let fast_o = rng.series(1.0, 0.02);
    let fast_p = rng.series(0.8, 0.02);
    let same_o = rng.series(0.5, 0.3);
    let same_p = rng.series(0.5, 0.3);
    let slow_o = rng.series(0.3, 0.02);
    let slow_p = rng.series(0.4, 0.02);
    vec![
        executable(
            "demo__fast-1",
            &[("demo.FastTest", fast_o, fast_p)],
            vec![
                excluded(
                    "demo.TinyTest",
                    "too_fast",
                    &[0.008; ROUNDS],
                    &[0.004; ROUNDS],
                ),
                excluded("demo.FlakyTest", "missing_in_some_round", &[], &[]),
            ],
        ),
        executable("demo__same-2", &[("demo.SameTest", same_o, same_p)], vec![]),
        executable("demo__slow-3", &[("demo.SlowTest", slow_o, slow_p)], vec![]),
        not_executable("demo__broken-4", NotExecutable::BuildFailed),
    ]
}

#[test]
fn jeto_scores_measurements_and_agrees_with_their_verdicts() {
    let t = tempfile::tempdir().expect("temp dir");
    let ms = four();
    assert_eq!(
        ms.iter()
            .map(|m| m
                .overall
                .as_ref()
                .map(|o| o.sign_test.as_ref().unwrap().direction))
            .collect::<Vec<_>>(),
        vec![
            Some(Direction::PatchedFaster),
            Some(Direction::NotSignificant),
            Some(Direction::OriginalFaster),
            None
        ],
        "the fixture covers every verdict"
    );
    let path = write_jsonl(t.path(), "run-a", "measurements.jsonl", &ms);
    let sub = input::load_file(&path, None).expect("loads");
    assert_eq!(sub.format, Format::EtipMeasurements);
    assert_eq!(
        sub.name, "run-a",
        "the default stem is replaced by the folder's name"
    );
    assert_eq!(sub.tasks.len(), 4);
    assert_eq!(sub.measurements, ms);
    assert_eq!(sub.tasks[0], ms[0].to_task_result());

    let row = rules::score(&sub, Rule::Jeto, &Params::default()).expect("scores");
    assert_eq!((row.n_tasks, row.total_instances), (4, 4));
    assert_eq!((row.n_correct, row.n_success, row.score), (3, 1, 25.0));
    assert_eq!(
        row.details["detector_classes"], 1,
        "the too-fast class is not a detector"
    );
    let mv = &row.details["measured_verdicts"];
    assert_eq!(mv["compared"], 3);
    assert_eq!(mv["agree"], 3);
    assert_eq!(mv["expected_to_agree"], 3);
    assert_eq!(mv["disagree"].as_array().map(Vec::len), Some(0));

    // Per task, the rule's verdict is the measurement's own, and its classes are the eligible ones.
    for (task, m) in sub.tasks.iter().zip(&ms) {
        if !m.executable {
            continue;
        }
        let v = rules::jeto_task_verdict(task, &SignTestConfig::default()).expect("verdict");
        let own = m.overall.as_ref().unwrap().sign_test.as_ref().unwrap();
        let overall = v.overall.expect("an eligible class");
        assert_eq!(direction(overall.direction), own.direction, "{}", m.id);
        assert_eq!(
            (overall.wins_patched, overall.wins_original),
            (own.wins_patched, own.wins_original)
        );
        let eligible: Vec<&str> = m
            .classes
            .iter()
            .filter(|c| c.eligible)
            .map(|c| c.name.as_str())
            .collect();
        let judged: Vec<&str> = v.classes.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(judged, eligible);
    }
    assert_eq!(
        rules::jeto_task_verdict(&sub.tasks[0], &SignTestConfig::default())
            .expect("verdict")
            .ineligible,
        vec!["demo.TinyTest", "demo.FlakyTest"]
    );
}

#[test]
fn agreement_holds_over_many_random_measurements() {
    let mut rng = Lcg(42);
    let ms: Vec<Measurement> = (0..60)
        .map(|i| {
            let classes = 1 + (rng.next() * 4.0) as usize;
            let eligible: Vec<(String, Vec<f64>, Vec<f64>)> = (0..classes)
                .map(|c| {
                    let level = 0.02 + rng.next();
                    let factor = 0.85 + 0.3 * rng.next();
                    let noise = 0.2 * rng.next();
                    (
                        format!("demo.C{c}Test"),
                        rng.series(level, noise),
                        rng.series(level * factor, noise),
                    )
                })
                .collect();
            let refs: Vec<(&str, Vec<f64>, Vec<f64>)> = eligible
                .iter()
                .map(|(n, o, p)| (n.as_str(), o.clone(), p.clone()))
                .collect();
            executable(&format!("demo__r-{i}"), &refs, vec![])
        })
        .collect();
    let t = tempfile::tempdir().expect("temp dir");
    let path = write_jsonl(t.path(), "random", "measurements.jsonl", &ms);
    let sub = input::load_file(&path, None).expect("loads");
    let row = rules::score(&sub, Rule::Jeto, &Params::default()).expect("scores");
    let faster = ms
        .iter()
        .filter(|m| {
            m.overall
                .as_ref()
                .unwrap()
                .sign_test
                .as_ref()
                .unwrap()
                .direction
                == Direction::PatchedFaster
        })
        .count();
    assert!(
        faster > 5 && faster < 55,
        "the fixture mixes verdicts ({faster})"
    );
    assert_eq!(row.n_success, faster);
    assert_eq!(row.details["measured_verdicts"]["agree"], 60);
    assert_eq!(
        row.details["detector_classes"],
        ms.iter().map(|m| m.detectors.len()).sum::<usize>()
    );
}

#[test]
fn disagreements_name_their_cause() {
    // A class whose every round reads 0 s: the resolution rule makes the pairs ties, JETO's literal
    // rule counts them as wins of both versions (the patched side's test comes first).
    let zeros = vec![0.0; ROUNDS];
    let mut m = base("demo__zero-1");
    m.protocol = protocol("resolution");
    m.protocol.min_class_secs = 0.0;
    let cfg = SignTestConfig::default();
    let r = TimerRule::Resolution(0.001);
    m.classes = vec![judged("demo.ZeroTest", &zeros, &zeros, &cfg, r)];
    m.overall = Some(judged("overall", &zeros, &zeros, &cfg, r));
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
    // Judged with other parameters than the score's.
    let mut rng = Lcg(3);
    let strict_cfg = SignTestConfig {
        min_impr: 0.1,
        p_val: 0.1,
    };
    let strict = executable_with(
        "demo__strict-2",
        &[("demo.ATest", rng.series(1.0, 0.02), rng.series(0.93, 0.02))],
        vec![],
        &strict_cfg,
    );
    let t = tempfile::tempdir().expect("temp dir");
    let path = write_jsonl(t.path(), "x", "zero.jsonl", &[m, strict]);
    let sub = input::load_file(&path, None).expect("loads");
    assert_eq!(sub.name, "zero", "a stem other than `measurements` is kept");
    let row = rules::score(&sub, Rule::Jeto, &Params::default()).expect("scores");
    let mv = &row.details["measured_verdicts"];
    assert_eq!(mv["compared"], 2);
    assert_eq!(mv["expected_to_agree"], 0);
    let disagree = mv["disagree"].as_array().expect("list");
    let zero = disagree
        .iter()
        .find(|d| d["id"] == "demo__zero-1")
        .expect("the literal rule disagrees on (0, 0) pairs");
    assert_eq!(zero["measured"], "not_significant");
    assert_eq!(zero["jeto"], "patched_faster");
    assert!(
        zero["causes"][0]
            .as_str()
            .is_some_and(|c| c.starts_with("timer_rule resolution")),
        "{zero}"
    );
    // Scored with the measurement's own parameters, the strict one agrees again.
    let strict_row = disagree
        .iter()
        .find(|d| d["id"] == "demo__strict-2")
        .expect("min_impr 0.05 finds the 7% improvement, 0.1 does not");
    assert_eq!(strict_row["measured"], "not_significant");
    assert_eq!(strict_row["jeto"], "patched_faster");
    assert_eq!(strict_row["causes"][0], "min_impr 0.1 (scored with 0.05)");
    let params = Params {
        sign: strict_cfg,
        ..Params::default()
    };
    let row = rules::score(&sub, Rule::Jeto, &params).expect("scores");
    assert!(
        row.details["measured_verdicts"]["disagree"]
            .as_array()
            .expect("list")
            .iter()
            .all(|d| d["id"] != "demo__strict-2")
    );
}

#[test]
fn aa_measurements_are_flagged() {
    let mut ms = four();
    for m in &mut ms {
        m.aa = true;
    }
    let t = tempfile::tempdir().expect("temp dir");
    let path = write_jsonl(t.path(), "aa", "measurements.jsonl", &ms);
    let sub = input::load_file(&path, None).expect("loads");
    let row = rules::score(&sub, Rule::Jeto, &Params::default()).expect("scores");
    assert_eq!(row.details["aa_measurements"], 4);
    assert!(row.method.contains("false positives"), "{}", row.method);
}

#[test]
fn other_rules_on_measurements() {
    let t = tempfile::tempdir().expect("temp dir");
    let path = write_jsonl(t.path(), "run", "measurements.jsonl", &four());
    let sub = input::load_file(&path, None).expect("loads");
    for rule in [Rule::Swefficiency, Rule::Gso] {
        let err = rules::score(&sub, rule, &Params::default()).expect_err("no reference patch");
        assert!(matches!(err, ScoreError::NotApplicable { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("measurements file") && text.contains("--rule jeto"),
            "{text}"
        );
    }
    // SWE-Perf: the executable ETIPs count, over their eligible classes (the too-fast class does
    // not make the task fail); the build failure counts as 0.
    let row = rules::score(&sub, Rule::Sweperf, &Params::default()).expect("scores");
    assert_eq!(row.n_correct, 3);
    assert!(row.n_success >= 1, "{row:?}");
    assert!(row.score > 0.0, "{row:?}");
}

#[test]
fn measurements_mix_with_task_results_and_audit() {
    let t = tempfile::tempdir().expect("temp dir");
    let m = write_jsonl(t.path(), "run", "measurements.jsonl", &four());
    let results = t.path().join("agent.jsonl");
    std::fs::write(
        &results,
        "{\"instance_id\":\"demo__fast-1\",\"correct\":false}\n",
    )
    .expect("write");
    let loaded = input::load_files(&[m.clone(), results.clone()], &[]).expect("one benchmark");
    let names: Vec<&str> = loaded.submissions.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["run", "agent"]);
    let rows = rules::score_all(&loaded.submissions, Rule::Jeto, &Params::default())
        .expect("an incorrect task needs no times");
    assert_eq!((rows[0].score, rows[1].score), (25.0, 0.0));
    let named = input::load_files(std::slice::from_ref(&m), &["mine".into()]).expect("loads");
    assert_eq!(named.submissions[0].name, "mine");

    let groups = input::load_grouped(&[m]).expect("loads");
    let a = audit::audit(&groups, &audit::AuditParams::default()).expect("audits");
    assert_eq!(a.submissions[0].rule, Rule::Jeto);
    assert_eq!(a.submissions[0].score, 25.0);
    assert!(a.coverage.is_empty(), "no reference version to cover");
}

fn load_err(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    input::load_file(&path, None)
        .expect_err("malformed")
        .to_string()
}

#[test]
fn malformed_measurement_lines_name_file_and_line() {
    let t = tempfile::tempdir().expect("temp dir");
    let ms = four();
    let good = serde_json::to_string(&ms[0]).expect("json");
    let second = serde_json::to_string(&ms[1]).expect("json");

    let e = load_err(
        t.path(),
        "measurements.jsonl",
        &format!("{good}\n{}\n", &second[..second.len() / 2]),
    );
    assert!(
        e.contains("measurements.jsonl:2: not an etip measurement: invalid JSON"),
        "{e}"
    );

    let e = load_err(
        t.path(),
        "v2.jsonl",
        &format!(
            "{good}\n{}\n",
            second.replace("\"schema_version\":1", "\"schema_version\":2")
        ),
    );
    assert!(
        e.contains("v2.jsonl:2: schema_version 2 of etip.measurement is not supported"),
        "{e}"
    );

    let e = load_err(
        t.path(),
        "missing.jsonl",
        &format!(
            "{good}\n{}\n",
            second.replace("\"executor\":\"scripted\",", "")
        ),
    );
    assert!(
        e.contains("missing.jsonl:2: not an etip measurement: missing field `executor`"),
        "{e}"
    );

    let mut short = ms[1].clone();
    short.classes[0].patched.pop();
    let e = load_err(
        t.path(),
        "short.jsonl",
        &format!("{good}\n{}\n", serde_json::to_string(&short).expect("json")),
    );
    assert!(
        e.contains("short.jsonl:2: class \"demo.SameTest\" has 30 original times but 29 patched"),
        "{e}"
    );

    let mut negative = ms[1].clone();
    negative.classes[0].original[3] = -1.0;
    let e = load_err(
        t.path(),
        "neg.jsonl",
        &format!("{}\n", serde_json::to_string(&negative).expect("json")),
    );
    assert!(
        e.contains("neg.jsonl:1: class \"demo.SameTest\" original time is -1"),
        "{e}"
    );

    let e = load_err(t.path(), "dup.jsonl", &format!("{good}\n\n{good}\n"));
    assert!(
        e.contains("dup.jsonl:3: duplicate id \"demo__fast-1\" (first seen on line 1)"),
        "{e}"
    );

    let e = load_err(
        t.path(),
        "mixed.jsonl",
        &format!("{good}\n{{\"instance_id\":\"a\",\"correct\":true}}\n"),
    );
    assert!(
        e.contains("mixed.jsonl:2: an etip task result (instance_id) in a measurements file"),
        "{e}"
    );

    let mut odd = ms[3].clone();
    odd.reason = None;
    let e = load_err(
        t.path(),
        "odd.jsonl",
        &format!("{}\n", serde_json::to_string(&odd).expect("json")),
    );
    assert!(
        e.contains("odd.jsonl:1: executable is false but reason is absent"),
        "{e}"
    );

    // Nothing parses: the file name decides, and the measurement reader reports line 1.
    let e = load_err(
        t.path(),
        "measurements-b.jsonl",
        "{\"schema_version\": 1,\n",
    );
    assert!(
        e.contains("measurements-b.jsonl:1: not an etip measurement"),
        "{e}"
    );

    let e = load_err(
        t.path(),
        "executable.jsonl",
        "{\"id\":\"a\",\"detectors\":[],\"overall\":\"patched_faster\",\"improvement\":0.2,\"rounds\":30,\"aa\":false}\n",
    );
    assert!(
        e.contains("executable.jsonl: unrecognised results format")
            && e.contains("score the measurements.jsonl beside it"),
        "{e}"
    );

    let e = load_err(t.path(), "array.json", &format!("[{good}]"));
    assert!(
        e.contains("array.json: unrecognised results format (a JSON array"),
        "{e}"
    );

    let e = load_err(t.path(), "empty-m.jsonl", "\n\n");
    assert!(e.contains("empty-m.jsonl"), "{e}");
}

#[test]
fn infinite_ratios_survive_the_file() {
    // An eligible class whose original side reads 0 s in every round while the patched side does
    // not: the median ratio is +∞ and the improvement −∞, written as "inf" and "-inf".
    let mut m = executable(
        "demo__inf-1",
        &[("demo.ZeroTest", vec![0.0; ROUNDS], vec![0.02; ROUNDS])],
        vec![],
    );
    let st = m.classes[0].sign_test.as_ref().expect("judged");
    assert_eq!(
        (st.median_ratio, st.improvement),
        (f64::INFINITY, f64::NEG_INFINITY)
    );
    m.classes[0].effect = Some(etip_stats::EffectRecord {
        median_ratio: f64::INFINITY,
        ratio_ci: [f64::INFINITY, f64::INFINITY],
        cliffs_delta: -1.0,
    });
    let line = serde_json::to_string(&m).expect("json");
    assert!(line.contains("\"improvement\":\"-inf\""), "{line}");
    let t = tempfile::tempdir().expect("temp dir");
    let path = t.path().join("inf.jsonl");
    std::fs::write(&path, line + "\n").expect("write");
    let sub = input::load_file(&path, None).expect("infinite statistics are read back");
    assert_eq!(sub.measurements[0], m);
    let row = rules::score(&sub, Rule::Jeto, &Params::default()).expect("scores");
    assert_eq!(row.details["measured_verdicts"]["agree"], 1);

    // A null elsewhere is still an error.
    let text = std::fs::read_to_string(&path).expect("read").replacen(
        "\"p_patched\":1.0",
        "\"p_patched\":null",
        1,
    );
    std::fs::write(&path, text).expect("write");
    let e = input::load_file(&path, None)
        .expect_err("null p-value")
        .to_string();
    assert!(
        e.contains("inf.jsonl:1: not an etip measurement: invalid type: null, expected f64"),
        "{e}"
    );
}
