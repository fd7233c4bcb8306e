//! Java's side of `etip select`: the JSON lines of `EtipCovReport.java`
//! (`harness/build/coverage-java`), which reads the JaCoCo sessions of a coverage run (one per
//! top-level test class) and analyzes the classes compiled from the changed files.
//!
//! A line per session (`{"test": "demo.FooTest", "classes_hit": N, "exclusive": true}`) and one
//! per session and changed class (`{"test", "class": "demo/Foo", "file": "src/main/java/demo/Foo.java",
//! "methods": [{"name", "desc", "first", "last", "covered"}], "lines": [covered line numbers]}`).
//! Sessions of classes that ran in parallel name them all, blank-separated; pseudo sessions
//! (`etip.cov:rest`, `etip.cov:discovery`) hold what ran outside any test class.

use super::changes::Range;
use super::coverage_py::TestLines;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Where the coverage tools are in a Java image (built by the env layer).
pub const COVERAGE_DIR: &str = "/opt/etip/cov";

#[derive(Debug, Deserialize)]
struct Line {
    test: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    class: Option<String>,
    #[serde(default)]
    methods: Vec<Method>,
    #[serde(default)]
    lines: Vec<u32>,
}

#[derive(Debug, Deserialize)]
struct Method {
    name: String,
    first: i64,
    last: i64,
}

/// The qualified name of a method as etip's miner writes it (`demo.Outer.Inner#member`): `$` of
/// nested classes as `.`, a lambda (`lambda$dedup$0`) as the member it is written in.
pub fn method_name(class: &str, method: &str) -> String {
    let class = class.replace(['/', '$'], ".");
    let member = method
        .strip_prefix("lambda$")
        .and_then(|m| m.split('$').next())
        .filter(|m| !m.is_empty())
        .unwrap_or(method);
    format!("{class}#{member}")
}

/// The class a changed file declares, for class-level changes (`src/main/java/demo/Foo.java` →
/// `demo.Foo`): the path after a `java/` source root (or the whole path) without `.java`.
pub fn file_class(path: &str) -> String {
    let p = path.strip_suffix(".java").unwrap_or(path);
    let p = match p.rfind("/java/") {
        Some(i) => &p[i + 6..],
        None => p.strip_prefix("java/").unwrap_or(p),
    };
    p.replace('/', ".")
}

/// A line of the coverage report that is not what `EtipCovReport.java` writes.
#[derive(Debug, thiserror::Error)]
#[error("line {line} of the coverage report is not what EtipCovReport writes ({source}): {text}")]
pub struct ReportLineError {
    /// 1-based line number.
    pub line: usize,
    #[source]
    pub source: serde_json::Error,
    /// The line, clipped to 200 characters.
    pub text: String,
}

/// The report's coverage per test class (pseudo sessions as what ran outside tests) and the
/// method ranges of each changed file.
pub fn read_report(
    text: &str,
) -> Result<(TestLines, BTreeMap<String, Vec<Range>>), ReportLineError> {
    let mut cov = TestLines::default();
    let mut ranges: BTreeMap<String, Vec<Range>> = BTreeMap::new();
    for (n, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let line: Line = serde_json::from_str(raw).map_err(|source| ReportLineError {
            line: n + 1,
            source,
            text: etip_core::clip::clip(raw, 200).into_owned(),
        })?;
        let tests: Vec<&str> = line
            .test
            .split_whitespace()
            .filter(|t| *t != "+" && !t.starts_with("etip.cov:"))
            .collect();
        let pseudo = tests.is_empty();
        let (Some(file), Some(class)) = (&line.file, &line.class) else {
            // A session line: the test classes that ran, whatever they hit.
            if !pseudo {
                for t in &tests {
                    cov.tests.entry(t.to_string()).or_default();
                }
            }
            continue;
        };
        let entry = ranges.entry(file.clone()).or_default();
        for m in &line.methods {
            if m.first < 1 || m.last < m.first {
                continue;
            }
            let r = Range {
                name: method_name(class, &m.name),
                first: m.first as u32,
                last: m.last as u32,
            };
            if !entry.contains(&r) {
                entry.push(r);
            }
        }
        if pseudo {
            cov.outside
                .entry(file.clone())
                .or_default()
                .extend(&line.lines);
        } else {
            for t in &tests {
                cov.tests
                    .entry(t.to_string())
                    .or_default()
                    .entry(file.clone())
                    .or_default()
                    .extend(&line.lines);
            }
        }
    }
    Ok((cov, ranges))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report of the Maven fixture's coverage run (coverage-java/README.md), abridged.
    const REPORT: &str = r#"{"test":"demo.JoinTest","classes_hit":1,"exclusive":true}
{"test":"demo.JoinTest","class":"demo/TextUtil","source":"demo/TextUtil.java","file":"src/main/java/demo/TextUtil.java","methods":[{"name":"dedup","desc":"(Ljava/util/List;)Ljava/util/List;","first":13,"last":13,"covered":false},{"name":"join","desc":"(Ljava/util/List;Ljava/lang/String;)Ljava/lang/String;","first":18,"last":25,"covered":true}],"lines":[18,19,20,21,23,25]}
{"test":"demo.TextDedupTest","classes_hit":1,"exclusive":true}
{"test":"demo.TextDedupTest","class":"demo/TextUtil","source":"demo/TextUtil.java","file":"src/main/java/demo/TextUtil.java","methods":[{"name":"dedup","desc":"(Ljava/util/List;)Ljava/util/List;","first":13,"last":13,"covered":true},{"name":"lambda$dedup$0","desc":"()V","first":-1,"last":-1,"covered":false}],"lines":[13]}
{"test":"demo.Idle","classes_hit":0,"exclusive":true}
{"test":"etip.cov:rest","classes_hit":1,"exclusive":true,"pseudo":true}
{"test":"etip.cov:rest","class":"demo/TextUtil","source":"demo/TextUtil.java","file":"src/main/java/demo/TextUtil.java","methods":[],"lines":[5]}
{"test":"a.P b.Q","class":"demo/TextUtil","file":"src/main/java/demo/TextUtil.java","methods":[],"lines":[18]}
"#;

    #[test]
    fn the_report_gives_lines_per_test_class_and_method_ranges() {
        let (cov, ranges) = read_report(REPORT).unwrap();
        let f = "src/main/java/demo/TextUtil.java";
        let lines = |t: &str| -> Vec<u32> { cov.tests[t][f].iter().copied().collect() };
        assert_eq!(lines("demo.TextDedupTest"), [13]);
        assert_eq!(lines("demo.JoinTest"), [18, 19, 20, 21, 23, 25]);
        // A class that hit no changed class is still a test that ran.
        assert!(cov.tests["demo.Idle"].is_empty());
        // Classes that ran in parallel share their session.
        assert_eq!(lines("a.P"), [18]);
        assert_eq!(lines("b.Q"), [18]);
        assert_eq!(cov.outside[f].iter().copied().collect::<Vec<_>>(), [5]);
        assert!(!cov.tests.contains_key("etip.cov:rest"));
        let names: Vec<&str> = ranges[f].iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["demo.TextUtil#dedup", "demo.TextUtil#join"]);
        let err = read_report("{\"classes_hit\":1}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn names_follow_the_miner() {
        assert_eq!(
            method_name("demo/Outer$Inner", "run"),
            "demo.Outer.Inner#run"
        );
        assert_eq!(method_name("demo/A", "lambda$dedup$0"), "demo.A#dedup");
        assert_eq!(method_name("demo/A", "<init>"), "demo.A#<init>");
        assert_eq!(file_class("core/src/main/java/demo/Foo.java"), "demo.Foo");
        assert_eq!(file_class("Foo.java"), "Foo");
    }
}
