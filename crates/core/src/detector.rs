//! Detectors: the named units of timed work whose times say whether an ETIP is faster.
//!
//! A detector is a test class (what `etip select` picks), a **workload** the ETIP carries (a
//! script that exercises the changed code, in the shape SWE-fficiency and GSO use), or a
//! benchmark of the project's own suites (asv, pytest-benchmark, JMH). Every kind is timed by the
//! same protocol and judged by the same verdicts; the kind travels with each detector's series so
//! that reports can say which kind saw an improvement.

use serde::{Deserialize, Serialize};

/// What a detector is.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum DetectorKind {
    /// A test class (Java) or test file/class (pytest), timed from the framework's report.
    #[default]
    Test,
    /// A workload script the ETIP carries, run in a fresh process per round and version.
    Workload,
    /// A benchmark of the project's asv suite.
    Asv,
    /// A test using pytest-benchmark's `benchmark` fixture.
    PytestBenchmark,
    /// A JMH `@Benchmark` method.
    Jmh,
}

impl DetectorKind {
    pub const ALL: [DetectorKind; 5] = [
        DetectorKind::Test,
        DetectorKind::Workload,
        DetectorKind::Asv,
        DetectorKind::PytestBenchmark,
        DetectorKind::Jmh,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DetectorKind::Test => "test",
            DetectorKind::Workload => "workload",
            DetectorKind::Asv => "asv",
            DetectorKind::PytestBenchmark => "pytest_benchmark",
            DetectorKind::Jmh => "jmh",
        }
    }

    /// Whether this is a kind that is skipped when serialising (records of test-only runs keep
    /// the shape they always had).
    pub fn is_test(&self) -> bool {
        *self == DetectorKind::Test
    }
}

impl std::fmt::Display for DetectorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Within-process repetitions of a workload when the ETIP names none: one timed call per
/// repetition, as GSO's and SWE-fficiency's scripts run `timeit.repeat(number=1, ...)`.
pub const DEFAULT_WORKLOAD_REPEAT: u32 = 5;

/// Longest workload name (it names the detector in every report).
pub const MAX_WORKLOAD_NAME: usize = 80;

/// Largest workload script an ETIP may carry inline or name.
pub const MAX_WORKLOAD_BYTES: usize = 256 * 1024;

/// A workload an ETIP carries: a Python script with a `workload()` function (and optionally
/// `setup()`), timed by etip's runner in a fresh process per round and version; or a script
/// without `workload()`, whose whole run is timed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Detector name (`[A-Za-z0-9_.-]`, at most [`MAX_WORKLOAD_NAME`] characters).
    pub name: String,
    /// The script's text (inline in the ETIP record, or read from `file` when the record is
    /// loaded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// A script file, relative to the ETIP file's folder; read into `script` on loading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Timed calls of `workload()` per process (each preceded by `setup()`); default
    /// [`DEFAULT_WORKLOAD_REPEAT`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
}

impl Workload {
    /// The repetitions per process.
    pub fn repeat(&self) -> u32 {
        self.repeat.unwrap_or(DEFAULT_WORKLOAD_REPEAT).max(1)
    }

    /// What is wrong with the workload as given, if anything (before `file` is read).
    pub fn problem(&self) -> Option<String> {
        if self.name.is_empty()
            || self.name.len() > MAX_WORKLOAD_NAME
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        {
            return Some(format!(
                "workload name {:?} is not 1 to {MAX_WORKLOAD_NAME} of [A-Za-z0-9_.-]",
                self.name
            ));
        }
        match (&self.script, &self.file) {
            (Some(_), Some(_)) => {
                return Some(format!(
                    "workload {}: give `script` or `file`, not both",
                    self.name
                ));
            }
            (None, None) => {
                return Some(format!(
                    "workload {}: neither `script` nor `file` is given",
                    self.name
                ));
            }
            _ => {}
        }
        if let Some(s) = &self.script
            && s.len() > MAX_WORKLOAD_BYTES
        {
            return Some(format!(
                "workload {}: the script has {} bytes, more than {MAX_WORKLOAD_BYTES}",
                self.name,
                s.len()
            ));
        }
        if self.repeat == Some(0) {
            return Some(format!("workload {}: repeat must be at least 1", self.name));
        }
        None
    }

    /// The detector name of the workload in reports and measurements: `workload:<name>`.
    pub fn detector(&self) -> String {
        format!("workload:{}", self.name)
    }
}

/// The class a Java workload's source declares: `(package-qualified name, simple name)` of its
/// first top-level `public class` (the file must be named after it to compile), or `None`.
pub fn java_workload_class(source: &str) -> Option<(String, String)> {
    let mut package = None;
    let mut in_comment = false;
    for raw in source.lines() {
        let mut line = raw.trim();
        if in_comment {
            match line.find("*/") {
                Some(i) => {
                    in_comment = false;
                    line = line[i + 2..].trim();
                }
                None => continue,
            }
        }
        if line.starts_with("/*") && !line.contains("*/") {
            in_comment = true;
            continue;
        }
        if line.starts_with("//") || line.starts_with('*') || line.starts_with('@') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("package ") {
            package = Some(rest.trim_end_matches(';').trim().to_string());
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&"public") {
            continue;
        }
        let at = words.iter().position(|w| *w == "class")?;
        if words[1..at]
            .iter()
            .all(|w| matches!(*w, "final" | "abstract" | "strictfp"))
        {
            let simple: String = words
                .get(at + 1)?
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            if simple.is_empty() {
                return None;
            }
            let full = match &package {
                Some(p) if !p.is_empty() => format!("{p}.{simple}"),
                _ => simple.clone(),
            };
            return Some((full, simple));
        }
    }
    None
}

/// The first problem of a list of workloads (each one's, then duplicate names).
pub fn workloads_problem(workloads: &[Workload]) -> Option<String> {
    let mut seen = std::collections::BTreeSet::new();
    for w in workloads {
        if let Some(p) = w.problem() {
            return Some(p);
        }
        if !seen.insert(w.name.as_str()) {
            return Some(format!("workload {} is named twice", w.name));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(name: &str, script: Option<&str>, file: Option<&str>) -> Workload {
        Workload {
            name: name.into(),
            script: script.map(str::to_string),
            file: file.map(str::to_string),
            repeat: None,
        }
    }

    #[test]
    fn a_java_workload_names_its_public_class() {
        let src = "/* a workload\n * of demo */\npackage demo.bench;\n\nimport java.util.List;\n\n// times dedup\npublic final class DedupWorkload {\n    public static void workload() {}\n}\n";
        assert_eq!(
            java_workload_class(src),
            Some(("demo.bench.DedupWorkload".into(), "DedupWorkload".into()))
        );
        assert_eq!(
            java_workload_class("public class Main{ public static void main(String[] a) {} }"),
            Some(("Main".into(), "Main".into()))
        );
        assert_eq!(java_workload_class("class Hidden {}"), None);
        assert_eq!(java_workload_class("def workload(): pass"), None);
    }

    #[test]
    fn kinds_serialise_in_snake_case() {
        for k in DetectorKind::ALL {
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::Value::String(k.as_str().into())
            );
        }
    }

    #[test]
    fn a_workload_needs_a_name_and_one_source() {
        assert_eq!(
            w("dedup", Some("def workload(): pass"), None).problem(),
            None
        );
        assert!(
            w("a b", Some("x"), None)
                .problem()
                .unwrap()
                .contains("is not 1 to")
        );
        assert!(w("x", None, None).problem().unwrap().contains("neither"));
        assert!(
            w("x", Some("s"), Some("f.py"))
                .problem()
                .unwrap()
                .contains("not both")
        );
        let mut zero = w("x", Some("s"), None);
        zero.repeat = Some(0);
        assert!(zero.problem().unwrap().contains("at least 1"));
        assert!(
            workloads_problem(&[w("x", Some("s"), None), w("x", Some("t"), None)])
                .unwrap()
                .contains("named twice")
        );
    }

    #[test]
    fn unknown_fields_are_refused() {
        let e = serde_json::from_str::<Workload>(r#"{"name":"x","script":"s","repeats":3}"#)
            .unwrap_err();
        assert!(e.to_string().contains("repeats"), "{e}");
    }
}
