//! `etip score` on the `measurements.jsonl` of `etip measure`, run as a user runs it: the JETO rule's
//! verdict per ETIP agrees with the measurement's own when the measurement used JETO's literal timer
//! rule and fixed rounds; bad lines exit with code 2 and name the file and the line.
//!
//! The measurements are made of hand-written rounds judged by the runner's real verdict code
//! (`etip_measure::verdict::verdicts`, literal timer rule, fixed rounds), in the envelope
//! `etip measure` writes.

use assert_cmd::Command;
use etip_core::measure::Version;
use etip_measure::protocol::{ClassTime, RoundResult, SideResult};
use etip_measure::verdict::VerdictConfig;
use etip_records::measure::{
    Environment, MEASUREMENT_SCHEMA_VERSION, Measurement, NotExecutable, Protocol, RoundSummary,
};
use etip_stats::Direction;
use etip_stats::TimerRule;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

const ROUNDS: usize = 30;

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built")
}

/// Per class: name and the (original, patched) times of timed round k (1-based; 0 = warm-up).
type Timing = (&'static str, fn(usize) -> (f64, f64));

fn side(version: Version, classes: &[Timing], k: usize, patched: bool) -> SideResult {
    SideResult {
        version,
        exit_code: Some(0),
        timed_out: false,
        command_secs: 5.0,
        classes: classes
            .iter()
            .map(|(name, f)| {
                let (o, p) = f(k);
                ClassTime::test(name.to_string(), if patched { p } else { o }, true)
            })
            .collect(),
        resolution: 0.001,
    }
}

/// One warm-up round and `ROUNDS` timed rounds, patched first in odd rounds.
fn rounds(classes: &[Timing]) -> Vec<RoundResult> {
    (0..=ROUNDS)
        .map(|k| RoundResult {
            summary: RoundSummary {
                round: k,
                warmup: k == 0,
                first: if k % 2 == 1 {
                    Version::Patched
                } else {
                    Version::Original
                },
                started: "2025-01-01T00:00:00Z".into(),
                wall_secs: 11.0,
                sequence: Vec::new(),
                command_secs: vec![5.0, 5.0],
                exit_codes: vec![Some(0), Some(0)],
                pressure: None,
                repeats: 0,
            },
            sides: vec![
                side(Version::Original, classes, k, false),
                side(Version::Patched, classes, k, true),
            ],
        })
        .collect()
}

fn verdict_config() -> VerdictConfig {
    VerdictConfig {
        timer: TimerRule::Literal,
        sequential: None,
        bootstrap_resamples: 200,
        ..VerdictConfig::default()
    }
}

fn protocol(cfg: &VerdictConfig) -> Protocol {
    Protocol {
        rounds: ROUNDS,
        warmup: 1,
        max_rounds: None,
        order: "alternate".into(),
        seed: None,
        min_impr: cfg.sign.min_impr,
        p_val: cfg.sign.p_val,
        timer_rule: "literal".into(),
        min_class_secs: cfg.min_class_secs,
        tests: "modules".into(),
    }
}

fn envelope(id: &str, cfg: &VerdictConfig) -> Measurement {
    Measurement {
        schema_version: MEASUREMENT_SCHEMA_VERSION,
        id: id.into(),
        executable: true,
        reason: None,
        detail: None,
        rounds: 0,
        warmup: 0,
        order: Vec::new(),
        aa: false,
        executor: "scripted".into(),
        cpus: Vec::new(),
        protocol: protocol(cfg),
        environment: Environment {
            executor: "scripted".into(),
            ..Environment::default()
        },
        modules: vec![".".into()],
        resolution: None,
        classes: Vec::new(),
        overall: None,
        detectors: Vec::new(),
        round_log: Vec::new(),
        timing: None,
        node: None,
    }
}

/// The measurement of an ETIP whose rounds give the classes these times.
fn measured(id: &str, classes: &[Timing]) -> Measurement {
    let cfg = verdict_config();
    let rounds = rounds(classes);
    let (classes, overall) = etip_measure::verdict::verdicts(&rounds, &cfg).expect("verdicts");
    let timed: Vec<&RoundResult> = rounds.iter().filter(|r| !r.summary.warmup).collect();
    let mut m = envelope(id, &cfg);
    m.rounds = timed.len();
    m.warmup = rounds.len() - timed.len();
    m.order = timed.iter().map(|r| r.summary.first).collect();
    m.resolution = Some(0.001);
    m.detectors = classes
        .iter()
        .filter(|c| {
            c.sign_test
                .as_ref()
                .is_some_and(|s| s.direction == Direction::PatchedFaster)
        })
        .map(|c| c.name.clone())
        .collect();
    m.classes = classes;
    m.overall = overall;
    m.round_log = rounds.iter().map(|r| r.summary.clone()).collect();
    m
}

/// A small deterministic wobble in [-1, 1] for round k and a salt.
fn wobble(k: usize, salt: usize) -> f64 {
    let x = ((k * 2_654_435_761 + salt * 40_503) % 1000) as f64 / 1000.0;
    2.0 * x - 1.0
}

fn ms(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn etips() -> Vec<Measurement> {
    let build_failed = {
        let mut m = envelope("demo__broken-5", &verdict_config());
        m.executable = false;
        m.reason = Some(NotExecutable::BuildFailed);
        m.detail = Some("the build failed: patched does not compile".into());
        m
    };
    vec![
        // 20% faster, with a class too fast to time that would detect the change if it counted.
        measured(
            "demo__join-1",
            &[
                ("demo.JoinTest", |k| {
                    (
                        ms(1.2 + 0.02 * wobble(k, 1)),
                        ms(0.96 + 0.02 * wobble(k, 2)),
                    )
                }),
                ("demo.TinyTest", |_| (0.008, 0.004)),
            ],
        ),
        // Noise only.
        measured(
            "demo__noise-2",
            &[("demo.NoiseTest", |k| {
                (ms(0.5 + 0.1 * wobble(k, 3)), ms(0.5 + 0.1 * wobble(k, 4)))
            })],
        ),
        // Slower.
        measured(
            "demo__slower-3",
            &[("demo.SlowerTest", |k| {
                (ms(0.4 + 0.01 * wobble(k, 5)), ms(0.5 + 0.01 * wobble(k, 6)))
            })],
        ),
        // On the min_impr boundary: 0.019 = 0.95 · 0.020 exactly in f64, a win only because the
        // rule compares with `<=`; the rule must see the very times the measurement judged.
        measured(
            "demo__edge-4",
            &[("demo.EdgeTest", |k| {
                (0.020, if k % 5 == 0 { 0.0195 } else { 0.019 })
            })],
        ),
        build_failed,
    ]
}

fn write_jsonl(dir: &Path, folder: &str, ms: &[Measurement]) -> PathBuf {
    let d = dir.join(folder);
    std::fs::create_dir_all(&d).expect("folder");
    let path = d.join("measurements.jsonl");
    let text: String = ms
        .iter()
        .map(|m| serde_json::to_string(m).expect("serialises") + "\n")
        .collect();
    std::fs::write(&path, text).expect("write");
    path
}

fn own(m: &Measurement) -> Option<Direction> {
    m.overall
        .as_ref()
        .and_then(|o| o.sign_test.as_ref())
        .map(|s| s.direction)
}

#[test]
fn jeto_score_of_measurements_agrees_with_their_verdicts() {
    let ms = etips();
    let directions: Vec<Option<Direction>> = ms.iter().map(own).collect();
    for d in [
        Direction::PatchedFaster,
        Direction::NotSignificant,
        Direction::OriginalFaster,
    ] {
        assert!(directions.contains(&Some(d)), "the fixture has {d:?}");
    }
    assert_eq!(ms[0].detectors, vec!["demo.JoinTest"]);
    assert_eq!(ms[0].classes[1].excluded.as_deref(), Some("too_fast"));
    let faster = directions
        .iter()
        .filter(|d| **d == Some(Direction::PatchedFaster))
        .count();

    let t = tempfile::tempdir().expect("temp dir");
    let path = write_jsonl(t.path(), "nightly", &ms);
    let out = etip()
        .args(["score", "--rule", "jeto", "--format", "json"])
        .arg(&path)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let row = &v.as_array().expect("array")[0];
    assert_eq!(row["submission"], "nightly", "named after the --out folder");
    assert_eq!(row["rule"], "jeto");
    assert_eq!(row["n_tasks"], 5);
    assert_eq!(row["n_correct"], 4);
    assert_eq!(row["n_success"], faster);
    assert_eq!(
        row["score"].as_f64(),
        Some(100.0 * faster as f64 / 5.0),
        "{row}"
    );
    assert_eq!(
        row["details"]["detector_classes"],
        ms[0].detectors.len() + { ms[1..].iter().map(|m| m.detectors.len()).sum::<usize>() }
    );
    let mv = &row["details"]["measured_verdicts"];
    assert_eq!(mv["compared"], 4, "{mv}");
    assert_eq!(mv["expected_to_agree"], 4, "{mv}");
    assert_eq!(mv["agree"], 4, "{mv}");
    assert_eq!(mv["disagree"], serde_json::json!([]));

    // The table names the submission and shows the score with JETO's two decimals.
    etip()
        .args(["score", "--rule", "jeto"])
        .arg(&path)
        .args(["--name", "mine"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("mine")
                .and(predicate::str::contains(format!(
                    "{:.2}",
                    100.0 * faster as f64 / 5.0
                )))
                .and(predicate::str::contains("nightly").not()),
        );
}

#[test]
fn malformed_measurements_exit_2_naming_file_and_line() {
    let ms = etips();
    let t = tempfile::tempdir().expect("temp dir");
    let path = write_jsonl(t.path(), "cut", &ms);
    let text = std::fs::read_to_string(&path).expect("read");
    let mut lines: Vec<&str> = text.lines().collect();
    let second = lines[1].to_string();
    lines[1] = &second[..second.len() / 2];
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    etip()
        .args(["score", "--rule", "jeto"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "measurements.jsonl:2: not an etip measurement: invalid JSON",
        ));

    let path = write_jsonl(t.path(), "unpaired", &ms);
    let text = std::fs::read_to_string(&path).expect("read").replacen(
        "\"schema_version\":1",
        "\"schema_version\":7",
        1,
    );
    std::fs::write(&path, text).expect("write");
    etip()
        .args(["score", "--rule", "jeto"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "measurements.jsonl:1: schema_version 7 of etip.measurement is not supported",
        ));
}

#[test]
fn rules_without_a_reference_refuse_measurements() {
    let t = tempfile::tempdir().expect("temp dir");
    let path = write_jsonl(t.path(), "nightly", &etips());
    for rule in ["swefficiency", "gso"] {
        etip()
            .args(["score", "--rule", rule])
            .arg(&path)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(format!("cannot score nightly with the {rule} rule"))
                    .and(predicate::str::contains("--rule jeto")),
            );
    }
    etip()
        .args(["score", "--rule", "sweperf", "--format", "csv"])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("nightly,sweperf,"));
}
