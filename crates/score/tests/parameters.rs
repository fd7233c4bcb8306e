//! Every numeric parameter of the rules and of the audit has one valid range (`etip_score::param`),
//! checked by the library whoever calls it: out-of-range values are refused with a message that
//! names the parameter, its command-line flag and its range, instead of producing a score of `inf`,
//! 0 or a silently wrong one (issue 10, section 3).

use etip_score::ScoreError;
use etip_score::audit::{self, AuditParams};
use etip_score::input;
use etip_score::rules::{self, Params, Rule};
use std::path::{Path, PathBuf};

const HEADER: &str = "instance_id,raw_pred_speedup_ratio,pred_speedup_ratio,gold_speedup_ratio,\
human_speedup_ratio,correctness,correctness_pct,pre_edit_runtime,patch_length";

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).expect("temp file");
    p
}

/// A two-task SWE-fficiency report and an etip task-result file with timed runs.
fn inputs(dir: &Path) -> (input::Submission, input::Submission) {
    let csv = write(
        dir,
        "s.csv",
        &format!("{HEADER}\nx,1,1,2,0.5,1,1,1,1\ny,4,4,2,2,1,1,1,1\n"),
    );
    let base: Vec<f64> = (0..30).map(|i| 1.0 + 0.001 * f64::from(i)).collect();
    let patched: Vec<f64> = base.iter().map(|b| b * 0.8).collect();
    let task = serde_json::json!({"instance_id": "a", "correct": true,
        "tests": [{"name": "t", "base": base, "patched": patched, "reference": patched}]});
    let jsonl = write(dir, "runs.jsonl", &format!("{task}\n"));
    (
        input::load_file(&csv, None).expect("CSV loads"),
        input::load_file(&jsonl, None).expect("JSONL loads"),
    )
}

fn refused(sub: &input::Submission, rule: Rule, params: &Params, needles: &[&str]) {
    let err = rules::score(sub, rule, params).expect_err("out-of-range parameter refused");
    assert!(
        matches!(err, ScoreError::InvalidParameter(_)),
        "{rule}: {err:?}"
    );
    assert!(err.is_input_error());
    let msg = err.to_string();
    for needle in needles {
        assert!(msg.contains(needle), "{rule}: {msg:?} lacks {needle:?}");
    }
}

#[test]
fn out_of_range_rule_parameters_are_refused_with_flag_and_range() {
    let t = tempfile::tempdir().expect("temp dir");
    let (csv, runs) = inputs(t.path());
    for floor in [f64::INFINITY, f64::NAN, 0.0, -1.0, 1.5] {
        let p = Params {
            floor,
            ..Params::default()
        };
        refused(&csv, Rule::Swefficiency, &p, &["--floor", "(0, 1]"]);
    }
    for gso_sr_threshold in [f64::NAN, f64::INFINITY, 0.0, -1.0] {
        let p = Params {
            gso_sr_threshold,
            ..Params::default()
        };
        refused(&csv, Rule::Gso, &p, &["--gso-threshold", "> 0"]);
    }
    for min_impr in [f64::NAN, -0.1, 1.0, f64::INFINITY] {
        let mut p = Params::default();
        p.sign.min_impr = min_impr;
        refused(&runs, Rule::Jeto, &p, &["--min-impr", "[0, 1)"]);
    }
    for p_val in [f64::NAN, 0.0, -0.5, 0.6, 1.5] {
        let mut p = Params::default();
        p.sign.p_val = p_val;
        refused(&runs, Rule::Jeto, &p, &["--p-val", "(0, 0.5]"]);
    }
    let p = Params {
        total_instances: Some(0),
        ..Params::default()
    };
    refused(&runs, Rule::Jeto, &p, &["--total-instances", ">= 1"]);
    // The ranges hold whatever rule is applied: a bad floor is refused under the GSO rule too.
    let p = Params {
        floor: f64::INFINITY,
        ..Params::default()
    };
    refused(&csv, Rule::Gso, &p, &["--floor"]);
}

#[test]
fn out_of_range_audit_parameters_are_refused() {
    let t = tempfile::tempdir().expect("temp dir");
    let csv = write(
        t.path(),
        "s.csv",
        &format!("{HEADER}\nx,1,1,2,0.5,1,1,1,1\ny,4,4,2,2,1,1,1,1\n"),
    );
    let groups = input::load_grouped(&[csv]).expect("loads");
    let cases: [(&str, AuditParams); 5] = [
        (
            "--floor",
            AuditParams {
                floor: f64::INFINITY,
                ..AuditParams::default()
            },
        ),
        (
            "--bounded-floor",
            AuditParams {
                bounded_floor: -1.0,
                ..AuditParams::default()
            },
        ),
        (
            "--tolerance",
            AuditParams {
                tolerance: f64::NAN,
                ..AuditParams::default()
            },
        ),
        (
            "--gso-threshold",
            AuditParams {
                gso_sr_threshold: 0.0,
                ..AuditParams::default()
            },
        ),
        (
            "--floor",
            AuditParams {
                floor: 0.0,
                ..AuditParams::default()
            },
        ),
    ];
    for (flag, params) in cases {
        let err = audit::audit(&groups, &params).expect_err(flag);
        assert!(err.to_string().contains(flag), "{flag}: {err}");
        assert!(err.is_input_error());
    }
}
