//! The project's own benchmark suites as detectors (Python): which asv benchmarks and which
//! pytest-benchmark tests execute the changed code, decided exactly as for tests (rules §3.7).
//!
//! - **asv**: `etip_suites.py asv` finds `asv.conf.json`, imports the benchmark folder's modules
//!   as asv does and runs every timing benchmark once per parameter combination in the version's
//!   own session, with one coverage context per benchmark (`asv:<name>|run`); the data file is
//!   read like pytest-cov's ([`crate::coverage_py`]) and each benchmark judged by
//!   [`crate::code::hit`]. A benchmark that fails in either version is left out with a note.
//! - **pytest-benchmark**: the tests taking the `benchmark` fixture (found with `ast` by
//!   `etip_suites.py bench-tests`) already ran with per-test coverage in the selection run; those
//!   among the covering tests are also suite detectors.

use crate::code::{self, VersionCode};
use crate::coverage_py::{self, TestLines};
use crate::jmh::{self, JmhSuiteRun};
use crate::{SelectError, Selector};
use etip_core::detector::DetectorKind;
use etip_core::selection::{Hit, SuiteBenchmark};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The helper run inside sessions (`python3 -c SCRIPT COMMAND ...`).
pub const SUITES_SCRIPT: &str = include_str!("etip_suites.py");

/// At most this many asv benchmark runs (parameter combinations) per version.
pub const ASV_LIMIT: usize = 400;

/// One asv benchmark as `etip_suites.py asv` ran it.
#[derive(Debug, Clone, Deserialize)]
pub struct AsvEntry {
    pub name: String,
    pub module: String,
    pub target: String,
    #[serde(default)]
    pub params: Option<usize>,
    pub ok: bool,
    #[serde(default)]
    pub error: Option<String>,
    /// The call's time under coverage.
    #[serde(default)]
    pub secs: Option<f64>,
}

/// How long a timed asv sample should last at least under coverage: coverage slows Python code
/// down by 2 to 5 times, so samples then last at least about asv's default `sample_time` of 10 ms
/// when timed without it.
pub const ASV_SAMPLE_UNDER_COVERAGE: f64 = 0.05;

/// Calls per sample for a call that took `secs` under coverage: the fewest that reach
/// [`ASV_SAMPLE_UNDER_COVERAGE`], at most a million.
pub fn calibrated_number(secs: f64) -> u64 {
    if !secs.is_finite() || secs <= 0.0 {
        return 1;
    }
    ((ASV_SAMPLE_UNDER_COVERAGE / secs).ceil() as u64).clamp(1, 1_000_000)
}

/// What `etip_suites.py asv` printed.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AsvFound {
    pub conf: Option<String>,
    pub dir: Option<String>,
    #[serde(default)]
    pub benchmarks: Vec<AsvEntry>,
    #[serde(default)]
    pub errors: Vec<String>,
    #[serde(default)]
    pub skipped: Vec<String>,
    #[serde(default)]
    pub truncated: usize,
}

/// One version's suites: the asv run with its coverage, the pytest-benchmark tests (Python); the
/// JMH benchmarks with theirs (Java).
#[derive(Debug, Default)]
pub struct SuiteRun {
    pub asv: AsvFound,
    pub cov: TestLines,
    pub bench_tests: BTreeSet<String>,
    pub jmh: JmhSuiteRun,
}

/// The test function of a pytest node id (`t.py::C::f[x]` → `t.py::C::f`).
pub fn function_of(node: &str) -> &str {
    match node.find('[') {
        Some(i) => &node[..i],
        None => node,
    }
}

impl Selector<'_> {
    /// Finds and runs side `i`'s suites (Python only), reading the coverage of `files`.
    pub(crate) fn suite_run(
        &mut self,
        i: usize,
        files: &[String],
    ) -> Result<SuiteRun, SelectError> {
        let tree = self.sides[i].tree.clone();
        let data = format!("{}/suites.db", self.sides[i].data_dir);
        let tests = self.suites_script(i, &["bench-tests".into(), tree.clone()])?;
        let bench_tests: Vec<String> =
            serde_json::from_value(tests).map_err(|source| SelectError::UnexpectedOutput {
                command: "bench-tests",
                source,
            })?;
        let v = self.suites_script(
            i,
            &[
                "asv".into(),
                tree.clone(),
                data.clone(),
                ASV_LIMIT.to_string(),
            ],
        )?;
        let asv: AsvFound =
            serde_json::from_value(v).map_err(|source| SelectError::UnexpectedOutput {
                command: "asv",
                source,
            })?;
        let mut cov = TestLines::default();
        if asv.conf.is_some() && !asv.benchmarks.is_empty() {
            let side = &mut self.sides[i];
            let tmp = tempfile::tempdir().map_err(|source| SelectError::TempDir { source })?;
            if side.session.copy_out(&data, tmp.path())? {
                cov = coverage_py::read(&tmp.path().join("suites.db"), &tree, files)?;
            }
        }
        Ok(SuiteRun {
            asv,
            cov,
            bench_tests: bench_tests.into_iter().collect(),
            jmh: JmhSuiteRun::default(),
        })
    }

    fn suites_script(
        &mut self,
        i: usize,
        args: &[String],
    ) -> Result<serde_json::Value, SelectError> {
        let mut argv = vec!["python3".to_string(), "-c".into(), SUITES_SCRIPT.into()];
        argv.extend(args.iter().cloned());
        let side = &mut self.sides[i];
        let out = side.session.run(&etip_exec::executor::CommandRequest {
            argv,
            env: Vec::new(),
            cwd: side.tree.clone(),
            clean: Vec::new(),
            timeout: self.cfg.timeout.max(Duration::from_secs(60)),
        })?;
        let command = if args.first().map(String::as_str) == Some("asv") {
            "etip_suites.py asv"
        } else {
            "etip_suites.py bench-tests"
        };
        if out.timed_out {
            return Err(SelectError::Command {
                label: side.label,
                what: format!("{command} ran past {} s", self.cfg.timeout.as_secs()),
                exit_code: out.exit_code,
                output: String::new(),
            });
        }
        let line = out.stdout.lines().rev().find(|l| l.starts_with(['{', '[']));
        match line.map(serde_json::from_str) {
            Some(Ok(v)) if out.success() => Ok(v),
            _ => Err(SelectError::Command {
                label: side.label,
                what: format!("{command} failed"),
                exit_code: out.exit_code,
                output: etip_core::clip::clip(format!("{}{}", out.stdout, out.stderr).trim(), 2000)
                    .into_owned(),
            }),
        }
    }
}

/// The covering suite benchmarks from both versions' runs: asv benchmarks that ran in both
/// versions and hit the changed code in either, and the covering tests (`covering`, node ids)
/// that take the `benchmark` fixture (`uncovered`: the tests that ran and cover nothing). Notes
/// say what was left out and why; the second value lists the detectors that ran and cover nothing.
pub fn decide(
    runs: &[SuiteRun],
    code: &[VersionCode],
    covering: &[(String, Hit, Hit)],
    uncovered: &[String],
    notes: &mut Vec<String>,
) -> (Vec<SuiteBenchmark>, Vec<String>) {
    let mut out = Vec::new();
    let mut not_covering = Vec::new();
    let labels = ["original", "patched"];
    for (r, label) in runs.iter().zip(labels) {
        for e in &r.asv.errors {
            notes.push(format!("asv ({label}): {e}"));
        }
        for s in &r.asv.skipped {
            notes.push(format!("asv ({label}): {s}"));
        }
        if r.asv.truncated > 0 {
            notes.push(format!(
                "asv ({label}): {} benchmark runs past the first {ASV_LIMIT} were not run",
                r.asv.truncated
            ));
        }
    }
    // Benchmarks by name in each version; those of both versions that ran are candidates.
    let by_name: Vec<BTreeMap<&str, &AsvEntry>> = runs
        .iter()
        .map(|r| {
            r.asv
                .benchmarks
                .iter()
                .map(|b| (b.name.as_str(), b))
                .collect()
        })
        .collect();
    let dir = runs
        .iter()
        .find_map(|r| r.asv.dir.clone())
        .unwrap_or_default();
    let names: BTreeSet<&str> = by_name.iter().flat_map(|m| m.keys().copied()).collect();
    let mut failing = Vec::new();
    for name in names {
        let entries: Vec<Option<&&AsvEntry>> = by_name.iter().map(|m| m.get(name)).collect();
        let bad = entries.iter().zip(labels).find_map(|(e, label)| match e {
            None => Some(format!("{name} ({label}: absent)")),
            Some(e) if !e.ok => Some(format!(
                "{name} ({label}: {})",
                e.error.as_deref().unwrap_or("failed")
            )),
            _ => None,
        });
        let context = format!("asv:{name}");
        let hits: Vec<Hit> = runs
            .iter()
            .zip(code)
            .map(|(r, c)| code::hit(c, r.cov.tests.get(&context), &r.cov.outside))
            .collect();
        if !hits.iter().any(Hit::any) {
            not_covering.push(context);
            continue;
        }
        if let Some(why) = bad {
            failing.push(why);
            continue;
        }
        let Some(Some(e)) = entries.iter().find(|e| e.is_some()) else {
            continue;
        };
        out.push(SuiteBenchmark {
            kind: DetectorKind::Asv,
            name: name.to_string(),
            dir: dir.clone(),
            module: e.module.clone(),
            target: e.target.clone(),
            params: e.params,
            // Calibrated on the original (the version both are compared against).
            number: entries[0].and_then(|o| o.secs).map(calibrated_number),
            values: BTreeMap::new(),
            mode: String::new(),
            original: hits[0].clone(),
            patched: hits[1].clone(),
        });
    }
    if !failing.is_empty() {
        notes.push(format!(
            "{} covering asv benchmark(s) do not run in both versions and are left out: {}",
            failing.len(),
            etip_core::clip::clip(&failing.join("; "), 600)
        ));
    }
    let bench: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.bench_tests.iter().map(String::as_str))
        .collect();
    for (test, original, patched) in covering {
        if bench.contains(function_of(test)) {
            out.push(SuiteBenchmark {
                kind: DetectorKind::PytestBenchmark,
                name: test.clone(),
                dir: String::new(),
                module: String::new(),
                target: String::new(),
                params: None,
                number: None,
                values: BTreeMap::new(),
                mode: String::new(),
                original: original.clone(),
                patched: patched.clone(),
            });
        }
    }
    for test in uncovered {
        if bench.contains(function_of(test)) {
            not_covering.push(format!("{}:{test}", DetectorKind::PytestBenchmark.as_str()));
        }
    }
    decide_jmh(runs, code, notes, &mut out, &mut not_covering);
    out.sort_by_key(|b| b.detector());
    not_covering.sort();
    (out, not_covering)
}

/// The covering JMH benchmarks: those that ran in both versions and hit the changed code in
/// either, one detector per parameter set (and mode) of the original's run.
fn decide_jmh(
    runs: &[SuiteRun],
    code: &[VersionCode],
    notes: &mut Vec<String>,
    out: &mut Vec<SuiteBenchmark>,
    not_covering: &mut Vec<String>,
) {
    let labels = ["original", "patched"];
    for (r, label) in runs.iter().zip(labels) {
        for n in &r.jmh.notes {
            notes.push(format!("jmh ({label}): {n}"));
        }
        if r.jmh.truncated > 0 {
            notes.push(format!(
                "jmh ({label}): {} benchmarks past the first {} were not run",
                r.jmh.truncated,
                jmh::JMH_LIMIT
            ));
        }
    }
    let by_name: Vec<BTreeMap<&str, &jmh::JmhBenchmark>> = runs
        .iter()
        .map(|r| {
            r.jmh
                .benchmarks
                .iter()
                .map(|b| (b.benchmark.as_str(), b))
                .collect()
        })
        .collect();
    let names: BTreeSet<&str> = by_name.iter().flat_map(|m| m.keys().copied()).collect();
    let mut failing = Vec::new();
    for name in names {
        let context = jmh::context(name);
        let hits: Vec<Hit> = runs
            .iter()
            .zip(code)
            .map(|(r, c)| code::hit(c, r.jmh.cov.tests.get(&context), &r.jmh.cov.outside))
            .collect();
        if !hits.iter().any(Hit::any) {
            not_covering.push(context);
            continue;
        }
        let entries: Vec<Option<&&jmh::JmhBenchmark>> =
            by_name.iter().map(|m| m.get(name)).collect();
        let bad = entries.iter().zip(labels).find_map(|(e, label)| match e {
            None => Some(format!("{name} ({label}: absent)")),
            Some(e) => e.error.as_ref().map(|why| {
                format!(
                    "{name} ({label}: {})",
                    why.lines().next().unwrap_or("failed")
                )
            }),
        });
        if let Some(why) = bad {
            failing.push(why);
            continue;
        }
        let Some(Some(b)) = entries.first() else {
            continue;
        };
        for run in &b.runs {
            out.push(SuiteBenchmark {
                kind: DetectorKind::Jmh,
                name: run
                    .detector
                    .strip_prefix("jmh:")
                    .unwrap_or(&run.detector)
                    .to_string(),
                dir: b.module.clone(),
                module: b.list_dir.clone(),
                target: b.benchmark.clone(),
                params: None,
                number: Some(etip_build::jvm::jmh_number(run.secs_per_op)),
                values: run.params.clone(),
                mode: run.mode.clone(),
                original: hits[0].clone(),
                patched: hits[1].clone(),
            });
        }
    }
    if !failing.is_empty() {
        notes.push(format!(
            "{} covering JMH benchmark(s) do not run in both versions and are left out: {}",
            failing.len(),
            etip_core::clip::clip(&failing.join("; "), 600)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_asv_calls_are_repeated_to_a_sample_of_asvs_length() {
        assert_eq!(calibrated_number(0.2), 1);
        assert_eq!(calibrated_number(0.05), 1);
        assert_eq!(calibrated_number(0.001), 50);
        assert_eq!(calibrated_number(0.0003), 167);
        assert_eq!(calibrated_number(0.0), 1);
        assert_eq!(calibrated_number(1e-12), 1_000_000);
    }

    #[test]
    fn node_ids_name_their_test_function() {
        assert_eq!(function_of("t.py::C::f[x-1]"), "t.py::C::f");
        assert_eq!(function_of("t.py::f"), "t.py::f");
    }
}
