//! Official inputs that contradict themselves are refused with the file and what is inconsistent,
//! instead of being scored silently (issue 10, section 3): GSO reports with duplicate ids, an id in
//! two status sets, an unknown id among the opt sets, an unknown `schema_version`; SWE-fficiency rows
//! with a negative or fractional `patch_length` or a bad summary beside the CSV; aliases that name no
//! submission or map two submissions of one benchmark to one model; a call with no submission.
//! The vendored official data has none of these quirks (`official.rs` reads all of it).

use etip_score::audit::{self, AuditParams};
use etip_score::input;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const HEADER: &str = "instance_id,raw_pred_speedup_ratio,pred_speedup_ratio,gold_speedup_ratio,\
human_speedup_ratio,correctness,correctness_pct,pre_edit_runtime,patch_length";

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).expect("temp file");
    p
}

fn load_err(path: &Path) -> String {
    match input::load_file(path, None) {
        Ok(sub) => panic!(
            "{} was accepted with {} tasks",
            path.display(),
            sub.tasks.len()
        ),
        Err(e) => {
            assert!(e.is_input_error(), "{e}");
            e.to_string()
        }
    }
}

fn gso(sets: &str, extra: &str) -> String {
    format!(
        "{{{extra}\"summary\": {{\"total_instances\": 100, \"score\": 1.0}},
          \"instance_sets\": {{{sets}}}}}"
    )
}

const SETS: &str = "\"completed_ids\": [\"a\", \"b\", \"c\"], \"passed_ids\": [\"a\", \"b\"], \
    \"test_failed_ids\": [\"c\"], \"opt_base_ids\": [\"a\"], \"opt_commit_ids\": [\"a\"]";

#[test]
fn inconsistent_gso_reports_are_refused() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = write(t.path(), "ok.json", &gso(SETS, "\"schema_version\": 1, "));
    let sub = input::load_file(&f, None).expect("a consistent report loads");
    assert_eq!(sub.tasks.len(), 3);
    let cases = [
        (
            "dup.json",
            SETS.replace(
                "\"completed_ids\": [\"a\",",
                "\"completed_ids\": [\"a\", \"a\",",
            ),
            "",
            "completed_ids lists \"a\" twice",
        ),
        (
            "both.json",
            SETS.replace(
                "\"test_failed_ids\": [\"c\"]",
                "\"test_failed_ids\": [\"c\", \"b\"]",
            ),
            "",
            "\"b\" is in both passed_ids and test_failed_ids",
        ),
        (
            "unknown.json",
            SETS.replace(
                "\"opt_commit_ids\": [\"a\"]",
                "\"opt_commit_ids\": [\"a\", \"zzz\"]",
            ),
            "",
            "opt_commit_ids lists \"zzz\"",
        ),
        (
            "not-passed.json",
            SETS.replace(
                "\"opt_base_ids\": [\"a\"]",
                "\"opt_base_ids\": [\"a\", \"c\"]",
            ),
            "",
            "opt_base_ids lists \"c\", which is not in passed_ids",
        ),
        (
            "commit-not-base.json",
            SETS.replace(
                "\"opt_commit_ids\": [\"a\"]",
                "\"opt_commit_ids\": [\"a\", \"b\"]",
            ),
            "",
            "opt_commit_ids lists \"b\", which is not in opt_base_ids",
        ),
        (
            "schema.json",
            SETS.to_owned(),
            "\"schema_version\": 2, ",
            "schema_version 2",
        ),
        (
            "schema-text.json",
            SETS.to_owned(),
            "\"schema_version\": \"1\", ",
            "schema_version",
        ),
    ];
    for (name, sets, extra, needle) in cases {
        let f = write(t.path(), name, &gso(&sets, extra));
        let e = load_err(&f);
        assert!(e.contains(name) && e.contains(needle), "{name}: {e}");
    }
}

#[test]
fn patch_length_is_a_whole_number() {
    let t = tempfile::tempdir().expect("temp dir");
    for (name, value) in [("neg.csv", "-3"), ("frac.csv", "2.5"), ("inf.csv", "inf")] {
        let f = write(
            t.path(),
            name,
            &format!("{HEADER}\nx,1,1,2,0.5,1,1,1,12\ny,1,1,2,0.5,1,1,1,{value}\n"),
        );
        let e = load_err(&f);
        assert!(
            e.contains(&format!("{name}:3: patch_length is")) && e.contains("whole number"),
            "{e}"
        );
    }
    let f = write(
        t.path(),
        "float.csv",
        &format!("{HEADER}\nx,1,1,2,0.5,1,1,1,12.0\n"),
    );
    input::load_file(&f, None).expect("a whole number written as 12.0 is accepted");
}

#[test]
fn a_bad_summary_beside_the_csv_is_named() {
    let t = tempfile::tempdir().expect("temp dir");
    let rows = format!("{HEADER}\nx,1,1,2,0.5,1,1,1,1\ny,1,1,2,0.5,1,1,1,1\n");
    let cases = [
        (
            "broken",
            "{\"overall_score\": 0.5,\n \"total_instances\": }",
        ),
        ("array", "[1, 2]"),
        (
            "small-n",
            "{\"overall_score\": 0.5, \"total_instances\": 1}",
        ),
        (
            "frac-n",
            "{\"overall_score\": 0.5, \"total_instances\": 2.5}",
        ),
        (
            "text-score",
            "{\"overall_score\": \"high\", \"total_instances\": 2}",
        ),
    ];
    for (stem, summary) in cases {
        let csv = write(t.path(), &format!("{stem}.csv"), &rows);
        write(t.path(), &format!("{stem}.json"), summary);
        let e = load_err(&csv);
        assert!(
            e.contains(&format!("{stem}.json")),
            "{stem}: the summary, not the CSV, is at fault: {e}"
        );
    }
    let csv = write(t.path(), "fine.csv", &rows);
    write(
        t.path(),
        "fine.json",
        "{\"overall_score\": 0.5, \"total_instances\": 2, \"report\": \"fine.csv\"}",
    );
    let sub = input::load_file(&csv, None).expect("a valid summary is read");
    assert_eq!(
        (sub.official_score, sub.total_instances),
        (Some(0.5), Some(2))
    );
}

fn leaderboards() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../datasets/leaderboards")
}

const OPUS45: &str = "eval_report_claude-opus-4-5-20251101_maxiter_100_N_v0.61.0-no-hint-run_1";
const OPUS46: &str = "eval_report_claude-opus-4-6_maxiter_100_N_v0.61.0-no-hint-run_1";

fn aliases(pairs: &[(&str, &str)]) -> AuditParams {
    AuditParams {
        aliases: pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect::<BTreeMap<_, _>>(),
        ..AuditParams::default()
    }
}

#[test]
fn aliases_must_name_submissions_and_keep_them_apart() {
    let d = leaderboards();
    let paths = vec![
        d.join(format!("swefficiency/{OPUS45}.csv")),
        d.join(format!("swefficiency/{OPUS46}.csv")),
        d.join("gso/claude-opus-4.5.json"),
        d.join("gso/claude-opus-4.6.json"),
    ];
    let groups = input::load_grouped(&paths).expect("loads");
    let ok = aliases(&[(OPUS45, "claude-opus-4.5"), (OPUS46, "claude-opus-4.6")]);
    let a = audit::audit(&groups, &ok).expect("valid aliases");
    let cross = a
        .rankings
        .iter()
        .find(|r| r.baseline == "gso_score")
        .expect("compared");
    assert_eq!(cross.agreement.n, 2);

    let typo = aliases(&[
        (OPUS45, "claude-opus-4.5"),
        ("eval_report_claude-opus-4-6_typo", "claude-opus-4.6"),
    ]);
    let e = audit::audit(&groups, &typo).expect_err("an alias for no submission");
    assert!(e.is_input_error());
    let msg = e.to_string();
    assert!(
        msg.contains("\"eval_report_claude-opus-4-6_typo\"") && msg.contains("no submission"),
        "{msg}"
    );

    // Two SWE-fficiency submissions mapped to one model: one of them would silently drop out of the
    // cross-benchmark ranking.
    let two = aliases(&[(OPUS45, "claude-opus-4.5"), (OPUS46, "claude-opus-4.5")]);
    let e = audit::audit(&groups, &two).expect_err("two submissions, one model");
    let msg = e.to_string();
    assert!(
        msg.contains(OPUS45) && msg.contains(OPUS46) && msg.contains("\"claude-opus-4.5\""),
        "{msg}"
    );
    // Mapping a submission onto another submission's own name of the same benchmark, likewise.
    let onto = aliases(&[("claude-opus-4.5", "claude-opus-4.6")]);
    let e = audit::audit(&groups, &onto).expect_err("a GSO report mapped onto another");
    assert!(e.to_string().contains("\"claude-opus-4.6\""), "{e}");
}

#[test]
fn manifests_alone_are_no_submission() {
    let manifest = leaderboards().join("gso/manifest.json");
    for err in [
        input::load_grouped(std::slice::from_ref(&manifest)).map(|_| ()),
        input::load_files(std::slice::from_ref(&manifest), &[]).map(|_| ()),
    ] {
        let e = err.expect_err("a manifest holds no submission");
        assert!(e.is_input_error());
        let msg = e.to_string();
        assert!(
            msg.contains("no submission") && msg.contains("manifest.json"),
            "{msg}"
        );
    }
}
