//! Runtimes and ratios the rules cannot compute with are refused when the file is read, with the file
//! and the line (issue 10, section 4): runtimes must be finite and positive (not subnormal), and the
//! sums and ratios the rules form from them must neither overflow to infinity nor underflow to zero.
//! Measurements of `etip measure` keep their zero readings (a class too fast for the timer).

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

fn load_err(path: &Path) -> String {
    match input::load_file(path, None) {
        Ok(sub) => {
            let scores: Vec<String> = [Rule::Swefficiency, Rule::Sweperf, Rule::Jeto, Rule::Gso]
                .into_iter()
                .map(|r| format!("{r}: {:?}", rules::score(&sub, r, &Params::default())))
                .collect();
            panic!("{} was accepted; scores {scores:?}", path.display())
        }
        Err(e) => {
            assert!(e.is_input_error(), "{e}");
            e.to_string()
        }
    }
}

fn expect_err(path: &Path, needles: &[&str]) {
    let e = load_err(path);
    for n in needles {
        assert!(e.contains(n), "{e:?} lacks {n:?}");
    }
}

/// One task-result line with one test of the given runs.
fn task(id: &str, base: &[f64], patched: &[f64], reference: &[f64]) -> String {
    serde_json::json!({"instance_id": id, "correct": true,
        "tests": [{"name": "t", "base": base, "patched": patched, "reference": reference}]})
    .to_string()
}

fn good(id: &str) -> String {
    task(id, &[1.0; 10], &[0.5; 10], &[0.5; 10])
}

#[test]
fn swefficiency_ratios_that_overflow_are_refused() {
    let t = tempfile::tempdir().expect("temp dir");
    // SR = 1e308 / 1e-10 overflows: the task would weigh nothing in the harmonic mean.
    let f = write(
        t.path(),
        "big.csv",
        &format!("{HEADER}\nx,1,1,2,0.5,1,1,1,1\ny,1e308,1e308,1e-10,1,1,1,1,1\n"),
    );
    expect_err(&f, &["big.csv:3:", "overflows"]);
    // ... or underflows to 0.
    let f = write(
        t.path(),
        "small.csv",
        &format!("{HEADER}\nx,1e-300,1e-300,1e300,1,1,1,1,1\n"),
    );
    expect_err(&f, &["small.csv:2:", "underflows"]);
    let f = write(
        t.path(),
        "zero-runtime.csv",
        &format!("{HEADER}\nx,1,1,2,0.5,1,1,0,1\n"),
    );
    expect_err(&f, &["zero-runtime.csv:2:", "pre_edit_runtime"]);
    let f = write(
        t.path(),
        "zero-speedup.csv",
        &format!("{HEADER}\nx,0,0,2,0.5,1,1,1,1\n"),
    );
    expect_err(&f, &["zero-speedup.csv:2:", "raw_pred_speedup_ratio"]);
}

#[test]
fn etip_runtimes_and_their_ratios_are_checked() {
    let t = tempfile::tempdir().expect("temp dir");
    // The mean of 1e308 and 1e308 overflows: the SWE-fficiency score came out wrong.
    let f = write(
        t.path(),
        "overflow.jsonl",
        &format!(
            "{}\n{}\n",
            good("a"),
            task("b", &[1e308, 1e308], &[1.0, 1.0], &[1.0, 1.0])
        ),
    );
    expect_err(&f, &["overflow.jsonl:2:", "overflows"]);
    // Subnormal runtimes: (1 - min_impr)·t rounds back to t and every pair is a win of both sides,
    // so JETO called equal runtimes significantly faster.
    let tiny = [5e-324; 10];
    let f = write(
        t.path(),
        "subnormal.jsonl",
        &format!("{}\n", task("a", &tiny, &tiny, &tiny)),
    );
    expect_err(&f, &["subnormal.jsonl:1:", "5e-324"]);
    // Zero runtimes in task results (SWE-Perf scored them).
    let f = write(
        t.path(),
        "zero.jsonl",
        &format!(
            "{}\n{}\n",
            good("a"),
            task("b", &[0.0; 10], &[0.0; 10], &[])
        ),
    );
    expect_err(&f, &["zero.jsonl:2:", "base runtime", "> 0"]);
    // A ratio of two valid runtimes that overflows.
    let f = write(
        t.path(),
        "ratio.jsonl",
        &format!("{}\n", task("a", &[1e300; 3], &[1e-300; 3], &[1.0; 3])),
    );
    expect_err(&f, &["ratio.jsonl:1:", "overflows"]);
    // Speedups given directly: their ratio must be finite and not 0.
    let f = write(
        t.path(),
        "speedups.jsonl",
        "{\"instance_id\":\"a\",\"correct\":true,\"speedup\":1e-300,\"gold_speedup\":1e300}\n",
    );
    expect_err(&f, &["speedups.jsonl:1:", "underflows"]);
    let f = write(
        t.path(),
        "per-test-means.jsonl",
        "{\"instance_id\":\"a\",\"correct\":true,\"per_test_means\":{\"base\":[1e300],\"patch\":[1e-300],\"commit\":[1]}}\n",
    );
    expect_err(&f, &["per-test-means.jsonl:1:", "overflows"]);
}

#[test]
fn gso_per_test_means_are_checked() {
    let t = tempfile::tempdir().expect("temp dir");
    let report = |means: &str| {
        format!(
            "{{\"schema_version\": 1, \"summary\": {{\"total_instances\": 2, \"score\": 50.0}},
              \"instance_sets\": {{\"completed_ids\": [\"a\", \"b\"], \"passed_ids\": [\"a\", \"b\"],
                \"opt_base_ids\": [\"a\"], \"opt_commit_ids\": [\"a\"]}},
              \"opt_stats\": {{\"a\": {{\"per_test_means\": {means}}}}}}}"
        )
    };
    let f = write(
        t.path(),
        "ok.json",
        &report("{\"base\": [2.0], \"patch\": [1.0], \"commit\": [1.0]}"),
    );
    input::load_file(&f, None).expect("a valid report loads");
    let f = write(
        t.path(),
        "ratio.json",
        &report("{\"base\": [1e300], \"patch\": [1e-300], \"commit\": [1.0]}"),
    );
    expect_err(&f, &["ratio.json", "opt_stats.", "overflows"]);
    let f = write(
        t.path(),
        "subnormal.json",
        &report("{\"base\": [5e-324], \"patch\": [5e-324], \"commit\": [5e-324]}"),
    );
    expect_err(&f, &["subnormal.json", "5e-324"]);
}

#[test]
fn an_empty_patched_list_is_named_as_such() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = write(
        t.path(),
        "empty.jsonl",
        &format!(
            "{}\n{}\n",
            good("a"),
            task("b", &[1.0, 1.0], &[], &[0.5, 0.5])
        ),
    );
    let e = load_err(&f);
    assert!(
        e.contains("empty.jsonl:2:") && e.contains("patched runtimes") && e.contains("empty"),
        "{e}"
    );
    assert!(!e.contains("gold"), "{e}");
}
