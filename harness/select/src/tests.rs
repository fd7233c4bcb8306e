use super::changes::Range;
use super::code::{VersionCode, changed_code, hit, savings};
use super::python::{node_parts, pytest_case, pytest_class};
use super::*;
use etip_core::detector::DetectorKind;
use etip_core::selection::CoveringTest;

const ORIGINAL: &str = "\"\"\"Text.\"\"\"
SEP = ','


def dedup(values):
    out = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def join(parts):
    return SEP.join(parts)
";

const PATCHED: &str = "\"\"\"Text.\"\"\"
SEP = ';'


def dedup(values):
    return list(dict.fromkeys(values))


def join(parts):
    return SEP.join(parts)
";

fn ranges(text: &str) -> Vec<Range> {
    // What etip_select.py's `ranges` gives for these two texts.
    let start = |name: &str| {
        text.lines()
            .position(|l| l.starts_with(&format!("def {name}")))
            .unwrap() as u32
            + 1
    };
    let d = start("dedup");
    let j = start("join");
    vec![
        Range {
            name: "pkg.dedup".into(),
            first: d,
            last: j - 3,
        },
        Range {
            name: "pkg.join".into(),
            first: j,
            last: j + 1,
        },
    ]
}

fn code() -> Vec<VersionCode> {
    let f = "pkg/__init__.py".to_string();
    let texts = vec![
        BTreeMap::from([(f.clone(), ORIGINAL.to_string())]),
        BTreeMap::from([(f.clone(), PATCHED.to_string())]),
    ];
    let ranges = vec![
        BTreeMap::from([(f.clone(), ranges(ORIGINAL))]),
        BTreeMap::from([(f.clone(), ranges(PATCHED))]),
    ];
    changed_code(Language::Python, &[f], &texts, &ranges)
}

fn lines(v: &[u32]) -> coverage_py::FileLines {
    BTreeMap::from([("pkg/__init__.py".to_string(), v.iter().copied().collect())])
}

#[test]
fn changed_code_names_lines_functions_and_module_level_changes() {
    let c = code();
    assert_eq!(c[0].files[0].lines, [2, 6, 7, 8, 9, 10]);
    assert_eq!(c[0].files[0].functions, ["pkg", "pkg.dedup"]);
    assert_eq!(c[1].files[0].lines, [2, 6]);
    assert_eq!(c[1].files[0].functions, ["pkg", "pkg.dedup"]);
    assert_eq!(c[0].module_level, ["pkg/__init__.py"]);
}

#[test]
fn a_test_covers_what_it_executes_of_either_version() {
    let c = code();
    let outside = lines(&[1, 2, 5, 13]);
    // A dedup test of the original runs the loop.
    let h = hit(&c[0], Some(&lines(&[6, 7, 8, 9, 10])), &outside);
    assert_eq!(h.functions, ["pkg", "pkg.dedup"], "{h:?}");
    assert_eq!(h.lines, 5);
    // A join test executes no changed function body, but SEP changed at import and the test
    // runs this module: the module-level change counts.
    let h = hit(&c[0], Some(&lines(&[14])), &outside);
    assert_eq!(h.functions, ["pkg"]);
    assert_eq!(h.lines, 0);
    // A test that runs nothing of the file covers nothing.
    assert!(!hit(&c[0], Some(&BTreeMap::new()), &outside).any());
    assert!(!hit(&c[0], None, &outside).any());
    // Without the import-time hit, the join test would not cover the change.
    let h = hit(&c[0], Some(&lines(&[14])), &BTreeMap::new());
    assert!(!h.any(), "{h:?}");
}

#[test]
fn node_ids_map_to_the_classes_pytest_reports() {
    assert_eq!(pytest_class("tests/test_a.py::test_b"), "tests.test_a");
    assert_eq!(
        pytest_class("tests/test_a.py::TestB::test_c[x-y]"),
        "tests.test_a.TestB"
    );
    assert_eq!(
        pytest_class("test_top.py::TestB::Inner::t"),
        "test_top.TestB.Inner"
    );
    // `::` inside parameters (an IPv6 URL) is not a separator.
    assert_eq!(
        pytest_case(
            "tests/test_requests.py::TestRequests::test_errors[http://fe80::5054:ff:fe5a:fc0]"
        ),
        (
            "tests.test_requests.TestRequests".to_string(),
            "test_errors[http://fe80::5054:ff:fe5a:fc0]".to_string()
        )
    );
    assert_eq!(node_parts("a.py"), ["a.py"]);
}

#[test]
fn savings_share_a_class_time_among_its_tests() {
    let class = |name: &str, secs: f64, tests: u32| reports::ClassResult {
        name: name.into(),
        secs,
        tests,
        failures: 0,
        errors: 0,
        skipped: 0,
        flaky: 0,
        time_source: reports::TimeSource::TestcaseSum,
        file: "pytest.xml".into(),
    };
    let report = reports::Report {
        classes: vec![class("tests.test_a", 2.0, 4), class("tests.test_b", 6.0, 2)],
        resolution: 0.001,
        files: Vec::new(),
        warnings: Vec::new(),
        failed: Vec::new(),
        cases: Vec::new(),
    };
    let covering = vec![CoveringTest {
        test: "tests/test_a.py::t1".into(),
        class: "tests.test_a".into(),
        original: Hit::default(),
        patched: Hit::default(),
    }];
    let s = savings(
        Language::Python,
        &covering,
        &[report.clone(), report.clone()],
    );
    let j = savings(Language::Java, &covering, &[report.clone(), report.clone()]);
    assert_eq!((j.tests_all, j.tests_selected), (2, 1));
    assert!((j.secs_selected - 2.0).abs() < 1e-9);
    // With testcase times, the covering test's own time counts.
    let mut timed = report.clone();
    timed.cases = vec![
        reports::CaseTime {
            class: "tests.test_a".into(),
            name: "t1".into(),
            secs: 1.75,
        },
        reports::CaseTime {
            class: "tests.test_a".into(),
            name: "t2".into(),
            secs: 0.25,
        },
    ];
    let p = savings(Language::Python, &covering, &[timed]);
    assert!((p.secs_selected - 1.75).abs() < 1e-9, "{p:?}");
    assert_eq!((s.tests_all, s.tests_selected), (6, 1));
    assert!((s.secs_all - 8.0).abs() < 1e-9 && (s.secs_selected - 0.5).abs() < 1e-9);
}

/// Two parameter sets of one benchmark, as JMH's JSON result gives them.
const JMH_RESULT: &str = r#"[
 {"jmhVersion":"1.37","benchmark":"org.acme.Bench.dedup","mode":"avgt","forks":1,"params":{"size":"10"},
  "primaryMetric":{"score":2.0,"scoreError":"NaN","scoreUnit":"us/op","rawData":[[2.0]]}},
 {"jmhVersion":"1.37","benchmark":"org.acme.Bench.dedup","mode":"avgt","forks":1,"params":{"size":"1000"},
  "primaryMetric":{"score":300.0,"scoreError":"NaN","scoreUnit":"us/op","rawData":[[300.0]]}}
]"#;

#[test]
fn jmh_benchmarks_are_selected_by_coverage_one_detector_per_parameter_set() {
    let c = code();
    let runs = etip_exec::reports::jmh::parse(JMH_RESULT.as_bytes(), "r.json").unwrap();
    let bench = |name: &str, error: Option<&str>| jmh::JmhBenchmark {
        benchmark: name.into(),
        module: "bench".into(),
        list_dir: "bench/target/classes".into(),
        runs: if name.ends_with("dedup") {
            runs.clone()
        } else {
            Vec::new()
        },
        error: error.map(str::to_string),
    };
    let side = |broken: Option<&str>| {
        let mut cov = coverage_py::TestLines::default();
        cov.tests
            .insert("jmh:org.acme.Bench.dedup".into(), lines(&[6, 7, 8, 9, 10]));
        cov.tests
            .insert("jmh:org.acme.Bench.broken".into(), lines(&[6, 7]));
        cov.tests
            .insert("jmh:org.acme.Bench.idle".into(), lines(&[]));
        suites::SuiteRun {
            jmh: jmh::JmhSuiteRun {
                benchmarks: vec![
                    bench("org.acme.Bench.dedup", None),
                    bench("org.acme.Bench.broken", broken),
                    bench("org.acme.Bench.idle", None),
                ],
                cov,
                notes: vec!["JMH benchmarks of module other not listed: exit 3".into()],
                truncated: 0,
            },
            ..Default::default()
        }
    };
    let runs = [
        side(None),
        side(Some("exit 1: java.lang.IllegalStateException")),
    ];
    let mut notes = Vec::new();
    let (chosen, not_covering) = suites::decide(&runs, &c, &[], &[], &mut notes);
    let names: Vec<String> = chosen.iter().map(|b| b.detector()).collect();
    assert_eq!(
        names,
        [
            "jmh:org.acme.Bench.dedup[size=1000]",
            "jmh:org.acme.Bench.dedup[size=10]"
        ]
    );
    let b = &chosen[1];
    assert_eq!(b.kind, DetectorKind::Jmh);
    assert_eq!(b.target, "org.acme.Bench.dedup");
    assert_eq!(
        (b.dir.as_str(), b.module.as_str()),
        ("bench", "bench/target/classes")
    );
    assert_eq!(b.values["size"], "10");
    assert_eq!(b.mode, "avgt");
    // 2 µs per operation in the original: a figure stands for 500,000 operations.
    assert_eq!(b.number, Some(500_000));
    assert!(b.original.any());
    assert_eq!(not_covering, ["jmh:org.acme.Bench.idle"]);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("org.acme.Bench.broken (patched: exit 1")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("jmh (original): JMH benchmarks of module other"))
    );
}
