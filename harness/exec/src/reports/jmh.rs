//! JMH's JSON results (`java -jar benchmarks.jar -rf json -rff FILE`, or the project's own build
//! with the same flags), read into one detector per benchmark and parameter set.
//!
//! A result is an array of runs; each run names its `benchmark` (the `@Benchmark` method),
//! `mode` (`thrpt`, `avgt`, `sample`, `ss`), `params` (the `@Param` values) and a
//! `primaryMetric` with `score`, `scoreError`, `scoreUnit` and `rawData` (per fork, the
//! measurement iterations' scores; `sample` mode has `rawDataHistogram` instead). Every run is
//! converted to **seconds per operation** so that every mode compares the same way ("lower is
//! faster"): a time unit per operation (`ns/op`, `us/op`, `ms/op`, `s/op`, and the minute and hour
//! forms) is scaled, a throughput (`ops/ns`, ..., `ops/s`, `ops/min`, `ops/hr`) is inverted.
//!
//! The detector name is `jmh:<benchmark>` with the parameters in name order
//! (`jmh:org.acme.Bench.parse[size=100,warm=true]`) and the mode when the file has one
//! benchmark in several modes (`...parse[size=100]#thrpt`).

use serde::Deserialize;
use std::collections::BTreeMap;

/// One benchmark run of a JMH result, in seconds per operation.
#[derive(Debug, Clone, PartialEq)]
pub struct JmhRun {
    /// `jmh:<benchmark>[params]` (see the module docs).
    pub detector: String,
    pub benchmark: String,
    pub params: BTreeMap<String, String>,
    pub mode: String,
    /// The unit JMH reported (`ops/ms`, `ms/op`, ...).
    pub unit: String,
    /// JMH's score in seconds per operation.
    pub secs_per_op: f64,
    /// JMH's score error (99.9% half-width) in seconds per operation, when JMH gave a finite one
    /// (a throughput's is taken at the interval's ends, so it is not symmetric; the larger side).
    pub error_secs_per_op: Option<f64>,
    /// Every measurement iteration of every fork, in seconds per operation.
    pub iterations: Vec<f64>,
    pub forks: u32,
    pub jmh_version: Option<String>,
}

/// Why a JMH result could not be read.
#[derive(Debug, thiserror::Error)]
pub enum JmhError {
    #[error("{source_name} is not a JMH JSON result: {detail}")]
    Malformed { source_name: String, detail: String },
    #[error("{source_name}: {benchmark}: unknown score unit {unit:?}")]
    Unit {
        source_name: String,
        benchmark: String,
        unit: String,
    },
    #[error("{source_name}: {benchmark}: the score {score} is not a positive number")]
    Score {
        source_name: String,
        benchmark: String,
        score: f64,
    },
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRun {
    benchmark: String,
    mode: String,
    #[serde(default)]
    forks: u32,
    #[serde(default)]
    jmh_version: Option<String>,
    #[serde(default)]
    params: BTreeMap<String, String>,
    primary_metric: RawMetric,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMetric {
    score: f64,
    #[serde(default)]
    score_confidence: Option<Vec<f64>>,
    score_unit: String,
    #[serde(default)]
    raw_data: Vec<Vec<f64>>,
}

/// Seconds in one unit of time as JMH names them.
fn unit_secs(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "min" => 60.0,
        "hr" => 3600.0,
        _ => return None,
    })
}

/// The function from a score in `unit` to seconds per operation.
fn to_secs_per_op(unit: &str) -> Option<Box<dyn Fn(f64) -> f64>> {
    if let Some(time) = unit.strip_suffix("/op") {
        let k = unit_secs(time)?;
        return Some(Box::new(move |v| v * k));
    }
    if let Some(time) = unit.strip_prefix("ops/") {
        let k = unit_secs(time)?;
        // v operations per `k` seconds: k / v seconds per operation.
        return Some(Box::new(move |v| k / v));
    }
    None
}

/// Reads a JMH JSON result held in memory; `source_name` names it in errors.
pub fn parse(json: &[u8], source_name: &str) -> Result<Vec<JmhRun>, JmhError> {
    let raw: Vec<RawRun> = serde_json::from_slice(json).map_err(|e| JmhError::Malformed {
        source_name: source_name.to_string(),
        detail: e.to_string(),
    })?;
    let mut modes: BTreeMap<(&str, String), Vec<&str>> = BTreeMap::new();
    for r in &raw {
        modes
            .entry((r.benchmark.as_str(), params_text(&r.params)))
            .or_default()
            .push(r.mode.as_str());
    }
    let mut out = Vec::with_capacity(raw.len());
    for r in &raw {
        let m = &r.primary_metric;
        let convert = to_secs_per_op(&m.score_unit).ok_or_else(|| JmhError::Unit {
            source_name: source_name.to_string(),
            benchmark: r.benchmark.clone(),
            unit: m.score_unit.clone(),
        })?;
        if !(m.score.is_finite() && m.score > 0.0) {
            return Err(JmhError::Score {
                source_name: source_name.to_string(),
                benchmark: r.benchmark.clone(),
                score: m.score,
            });
        }
        let secs = convert(m.score);
        let error = m.score_confidence.as_ref().and_then(|c| {
            let ends: Vec<f64> = c
                .iter()
                .filter(|v| v.is_finite() && **v > 0.0)
                .map(|v| (convert(*v) - secs).abs())
                .collect();
            (ends.len() == 2).then(|| ends[0].max(ends[1]))
        });
        let iterations = m
            .raw_data
            .iter()
            .flatten()
            .filter(|v| v.is_finite() && **v > 0.0)
            .map(|v| convert(*v))
            .collect();
        let params = params_text(&r.params);
        let several_modes = modes
            .get(&(r.benchmark.as_str(), params.clone()))
            .is_some_and(|m| m.len() > 1);
        let mut detector = format!("jmh:{}{params}", r.benchmark);
        if several_modes {
            detector.push('#');
            detector.push_str(&r.mode);
        }
        out.push(JmhRun {
            detector,
            benchmark: r.benchmark.clone(),
            params: r.params.clone(),
            mode: r.mode.clone(),
            unit: m.score_unit.clone(),
            secs_per_op: secs,
            error_secs_per_op: error,
            iterations,
            forks: r.forks,
            jmh_version: r.jmh_version.clone(),
        });
    }
    Ok(out)
}

/// `[k=v,...]` in name order, or nothing without parameters.
fn params_text(params: &BTreeMap<String, String>) -> String {
    if params.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("[{}]", inner.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real result: casbin/jcasbin's `jmh-result.json` at commit 0b7774d9 (Apache-2.0; see
    /// `tests/data/jmh/README.md`): JMH 1.37, throughput (`ops/ms`) and single-shot (`ms/op`) runs.
    const JCASBIN: &str = include_str!("../../tests/data/jmh/jcasbin-0b7774d9-jmh-result.json");

    #[test]
    fn a_real_result_gives_every_run_in_seconds_per_operation() {
        let runs = parse(JCASBIN.as_bytes(), "jcasbin").unwrap();
        assert_eq!(runs.len(), 37);
        let names: std::collections::BTreeSet<&str> =
            runs.iter().map(|r| r.detector.as_str()).collect();
        assert_eq!(
            names.len(),
            37,
            "one detector per benchmark and parameter set"
        );
        // Throughput: 20.339... ops/ms is 1/20339.4 s per operation.
        let t = runs
            .iter()
            .find(|r| {
                r.detector
                    == "jmh:org.casbin.jcasbin.main.benchmark.BenchmarkEnforce.enforce\
                        [dataScale=small,modelType=rbac,useCache=false]"
            })
            .unwrap();
        assert_eq!((t.mode.as_str(), t.unit.as_str()), ("thrpt", "ops/ms"));
        assert!((t.secs_per_op - 1e-3 / 20.33940552161268).abs() < 1e-15);
        assert_eq!(t.iterations.len(), 3);
        assert!((t.iterations[0] - 1e-3 / 15.889612079979479).abs() < 1e-15);
        // The interval's lower end is negative (-55.5 ops/ms): only one end converts, so no error.
        assert_eq!(t.error_secs_per_op, None);
        assert_eq!(t.jmh_version.as_deref(), Some("1.37"));
        // Single shot: 364.05 ms/op.
        let ss = runs
            .iter()
            .find(|r| {
                r.detector
                    .ends_with("BenchmarkMemory.measureMemory[scenario=ACL]")
            })
            .unwrap();
        assert_eq!(ss.mode, "ss");
        assert!((ss.secs_per_op - 0.3640456663333334).abs() < 1e-12);
        for (got, want) in ss
            .iterations
            .iter()
            .zip([0.3645893, 0.3699723, 0.357575399])
        {
            assert!((got - want).abs() < 1e-12, "{got} {want}");
        }
        let e = ss.error_secs_per_op.unwrap();
        assert!((e - 0.11340853550532148).abs() < 1e-9, "{e}");
    }

    #[test]
    fn one_benchmark_in_two_modes_is_two_detectors() {
        let json = r#"[
          {"benchmark":"a.B.m","mode":"thrpt","forks":1,"params":{"n":"10"},
           "primaryMetric":{"score":2.0,"scoreUnit":"ops/s","rawData":[[2.0]]}},
          {"benchmark":"a.B.m","mode":"avgt","forks":1,"params":{"n":"10"},
           "primaryMetric":{"score":500.0,"scoreUnit":"us/op","rawData":[[400.0,600.0]]}}
        ]"#;
        let runs = parse(json.as_bytes(), "two").unwrap();
        assert_eq!(runs[0].detector, "jmh:a.B.m[n=10]#thrpt");
        assert_eq!(runs[1].detector, "jmh:a.B.m[n=10]#avgt");
        assert_eq!(runs[0].secs_per_op, 0.5);
        assert!((runs[1].secs_per_op - 5e-4).abs() < 1e-15);
        assert_eq!(runs[1].iterations.len(), 2);
    }

    #[test]
    fn broken_results_are_refused_with_the_reason() {
        let e = parse(b"{\"benchmark\":1}", "x.json").unwrap_err();
        assert!(
            e.to_string().starts_with("x.json is not a JMH JSON result"),
            "{e}"
        );
        let unit = r#"[{"benchmark":"a.B.m","mode":"avgt","primaryMetric":{"score":1.0,"scoreUnit":"furlongs/op"}}]"#;
        let e = parse(unit.as_bytes(), "u.json").unwrap_err();
        assert!(
            e.to_string().contains("unknown score unit \"furlongs/op\""),
            "{e}"
        );
        let zero = r#"[{"benchmark":"a.B.m","mode":"thrpt","primaryMetric":{"score":0.0,"scoreUnit":"ops/s"}}]"#;
        let e = parse(zero.as_bytes(), "z.json").unwrap_err();
        assert!(e.to_string().contains("not a positive number"), "{e}");
    }
}
