//! JMH benchmarks in the protocol: each benchmark `etip select` found covering the change (one
//! parameter set, one mode) is a detector run like a workload, in a fresh process per round and
//! version: `org.openjdk.jmh.Main` on the module's class path with one fork and the pinned
//! iterations of [`JMH_MEASURE`] (recorded in the measurement's notes), its JSON result read back
//! by `etip_exec::reports::jmh`.
//!
//! The class path (the module's class folders and what Maven resolves in test scope) is resolved
//! once per session, before the first round. etip's figure for a run is JMH's time per operation
//! (the mean of the measurement iterations, throughputs inverted) times the `number` of
//! operations `etip select` calibrated on the original ([`etip_build::jvm::jmh_number`]); JMH's
//! own score, in seconds per operation, is recorded beside it.
//!
//! JMH is on Maven Central only: the path runs where the project's build resolved it. etip's own
//! tests exercise the commands and the reading of real JMH result files, not a JMH run.

use crate::protocol::{JavaBuild, WorkloadRun};
use etip_build::jvm::{self, JMH_MEASURE, JmhInvocation};
use etip_build::spec::sh_quote;
use etip_core::detector::{DetectorKind, Workload};
use etip_core::selection::SuiteBenchmark;
use std::collections::BTreeMap;

/// What a JMH detector runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JmhBench {
    /// The Maven module (empty: the root project).
    pub module: String,
    /// The class folder holding the benchmark list, relative to the tree.
    pub list_dir: String,
    pub benchmark: String,
    pub values: BTreeMap<String, String>,
    pub mode: String,
    /// Operations one figure stands for.
    pub number: u64,
}

/// The JMH benchmarks among `benchmarks` as runs of one version (its tree, its Maven command).
pub fn runs(benchmarks: &[SuiteBenchmark], tree: &str, maven: &[String]) -> Vec<WorkloadRun> {
    benchmarks
        .iter()
        .filter(|b| b.kind == DetectorKind::Jmh)
        .map(|b| WorkloadRun {
            workload: Workload {
                name: b.name.clone(),
                script: None,
                file: None,
                repeat: Some(1),
            },
            kind: DetectorKind::Jmh,
            python: "java".into(),
            cwd: tree.to_string(),
            java: Some(JavaBuild {
                maven: maven.to_vec(),
                modules: vec![if b.dir.is_empty() {
                    ".".into()
                } else {
                    b.dir.clone()
                }],
            }),
            jmh: Some(JmhBench {
                module: b.dir.clone(),
                list_dir: b.module.clone(),
                benchmark: b.target.clone(),
                values: b.values.clone(),
                mode: b.mode.clone(),
                number: b.number.unwrap_or(1).max(1),
            }),
        })
        .collect()
}

/// Where detector `j`'s class path goes under the scratch `folder`.
fn work_dir(folder: &str, j: usize) -> String {
    format!("{folder}/jmh-{j}")
}

/// The shell script that resolves detector `j`'s class path (once per session).
pub fn prepare_script(java: &JavaBuild, j: usize, folder: &str) -> String {
    format!(
        "set -u\nD={d}\nrm -rf \"$D\" && mkdir -p \"$D\" || exit 2\n{cp}printf '%s' \"$CP\" > \"$D/classpath\"\n",
        d = sh_quote(&work_dir(folder, j)),
        cp = jvm::classpath_lines(&java.maven, &java.modules, "test"),
    )
}

/// The command that runs detector `j` once (after [`prepare_script`]), JMH's result to `report`.
pub fn run_argv(bench: &JmhBench, j: usize, folder: &str, report: &str) -> Vec<String> {
    let classpath = format!("{}/classpath", work_dir(folder, j));
    let inv = JmhInvocation {
        list_dir: &bench.list_dir,
        classpath_file: &classpath,
        benchmark: &bench.benchmark,
        values: &bench.values,
        mode: &bench.mode,
        settings: JMH_MEASURE,
        report,
        jvm_args: None,
    };
    vec!["sh".into(), "-c".into(), inv.script()]
}

/// The line of a failed JMH run's output that says why: the first exception or `Error:` line
/// (`Error: Could not find or load main class org.openjdk.jmh.Main`), else the last line.
pub fn failure_reason(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let line = lines
        .iter()
        .find(|l| l.starts_with("Error") || l.contains("Exception") || l.contains("Error:"))
        .or(lines.last())
        .copied()
        .unwrap_or("no output");
    etip_core::clip::clip(line, 300).into_owned()
}

/// What one JMH run gave: etip's figure and JMH's own score (seconds per operation).
#[derive(Debug, Clone, PartialEq)]
pub struct JmhFigure {
    pub secs: f64,
    pub own: f64,
}

/// Reads JMH's JSON result of one run of `bench` (the file `source` names).
pub fn read_result(bytes: &[u8], source: &str, bench: &JmhBench) -> Result<JmhFigure, String> {
    let runs = etip_exec::reports::jmh::parse(bytes, source).map_err(|e| e.to_string())?;
    let run = match runs.as_slice() {
        [one] => one,
        [] => return Err("JMH's result names no run".into()),
        more => {
            return Err(format!(
                "JMH's result names {} runs, not the one asked for",
                more.len()
            ));
        }
    };
    if run.benchmark != bench.benchmark {
        return Err(format!(
            "JMH ran {}, not {}",
            run.benchmark, bench.benchmark
        ));
    }
    if run.iterations.is_empty() {
        return Err("JMH's result has no measurement iteration".into());
    }
    let per_op = run.iterations.iter().sum::<f64>() / run.iterations.len() as f64;
    Ok(JmhFigure {
        secs: per_op * bench.number as f64,
        own: run.secs_per_op,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use etip_core::selection::Hit;

    fn bench() -> SuiteBenchmark {
        SuiteBenchmark {
            kind: DetectorKind::Jmh,
            name: "org.casbin.jcasbin.main.benchmark.BenchmarkEnforce.enforce[dataScale=small,modelType=rbac,useCache=false]".into(),
            dir: "bench".into(),
            module: "bench/target/test-classes".into(),
            target: "org.casbin.jcasbin.main.benchmark.BenchmarkEnforce.enforce".into(),
            params: None,
            number: Some(1000),
            values: [("dataScale", "small"), ("modelType", "rbac"), ("useCache", "false")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            mode: "thrpt".into(),
            original: Hit::default(),
            patched: Hit::default(),
        }
    }

    #[test]
    fn a_jmh_benchmark_runs_on_its_modules_class_path_with_the_pinned_settings() {
        let r = runs(&[bench()], "/work/original", &["mvn".into(), "-o".into()]);
        assert_eq!(r.len(), 1);
        assert_eq!(
            r[0].detector(),
            "jmh:org.casbin.jcasbin.main.benchmark.BenchmarkEnforce.enforce[dataScale=small,modelType=rbac,useCache=false]"
        );
        let b = r[0].jmh.as_ref().unwrap();
        let s = prepare_script(r[0].java.as_ref().unwrap(), 3, "/tmp/etip-in");
        assert!(s.contains("D=/tmp/etip-in/jmh-3\n"), "{s}");
        assert!(s.contains("(cd bench && mvn -o -q \"$P\""), "{s}");
        assert!(s.contains("-Dmdep.includeScope=test"), "{s}");
        let argv = run_argv(b, 3, "/tmp/etip-in", "/tmp/etip-in/workload-3.json");
        assert_eq!(
            argv[2],
            "exec java -cp bench/target/test-classes:\"$(cat /tmp/etip-in/jmh-3/classpath)\" \
             org.openjdk.jmh.Main '^org\\.casbin\\.jcasbin\\.main\\.benchmark\\.BenchmarkEnforce\\.enforce$' \
             -f 1 -wi 5 -w 1s -i 5 -r 1s -bm thrpt -p dataScale=small -p modelType=rbac -p useCache=false \
             -foe true -rf json -rff /tmp/etip-in/workload-3.json"
        );
    }

    /// The first run of the real jcasbin result kept as test data (`harness/exec/tests/data/jmh`):
    /// `BenchmarkEnforce.enforce` with `dataScale=small, modelType=rbac, useCache=false`, 3
    /// throughput iterations in `ops/ms`.
    fn one_run() -> String {
        let text = include_str!("../../exec/tests/data/jmh/jcasbin-0b7774d9-jmh-result.json");
        let all: Vec<serde_json::Value> = serde_json::from_str(text).unwrap();
        let run = all.into_iter().next().unwrap();
        assert_eq!(run["params"]["dataScale"], "small");
        serde_json::to_string(&vec![run]).unwrap()
    }

    #[test]
    fn a_failed_runs_reason_is_its_first_error() {
        let out = "Error: Could not find or load main class org.openjdk.jmh.Main\nCaused by: java.lang.ClassNotFoundException: org.openjdk.jmh.Main\n";
        assert_eq!(
            failure_reason(out),
            "Error: Could not find or load main class org.openjdk.jmh.Main"
        );
        let out = "# Run progress: 0.00% complete\n<failure>\n\njava.lang.IllegalStateException: bad size\n\tat org.acme.Bench.parse(Bench.java:12)\n";
        assert_eq!(
            failure_reason(out),
            "java.lang.IllegalStateException: bad size"
        );
        assert_eq!(failure_reason("a\nlast words\n"), "last words");
        assert_eq!(failure_reason(""), "no output");
    }

    #[test]
    fn the_figure_is_jmhs_time_per_operation_times_the_calibrated_number() {
        let text = one_run();
        let r = runs(&[bench()], "/t", &[]);
        let b = r[0].jmh.as_ref().unwrap();
        let f = read_result(text.as_bytes(), "r.json", b).unwrap();
        let runs = etip_exec::reports::jmh::parse(text.as_bytes(), "r.json").unwrap();
        let its = &runs[0].iterations;
        let mean = its.iter().sum::<f64>() / its.len() as f64;
        assert!((f.secs - mean * 1000.0).abs() < 1e-12 * f.secs.max(1.0));
        assert_eq!(f.own, runs[0].secs_per_op);
        // A throughput's figure inverts each iteration: close to, not equal to, 1/mean throughput.
        assert!((f.secs / 1000.0 / f.own - 1.0).abs() < 0.05, "{f:?}");
        let mut other = b.clone();
        other.benchmark = "org.acme.Other.run".into();
        assert!(
            read_result(text.as_bytes(), "r.json", &other)
                .unwrap_err()
                .contains("not org.acme.Other.run")
        );
        assert!(
            read_result(b"[]", "r.json", b)
                .unwrap_err()
                .contains("no run")
        );
        assert!(read_result(b"{", "r.json", b).is_err());
    }
}
