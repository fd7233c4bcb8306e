//! Tests of the report readers.
use super::parser::parse_time;
use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn data(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/reports")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn surefire(xml: &str) -> Result<Report, ReportError> {
    parse(ReportFormat::Surefire, xml.as_bytes(), "TEST-x.xml")
}

fn malformed_detail(r: Result<Report, ReportError>) -> (Position, String) {
    match r {
        Err(ReportError::Malformed {
            position, detail, ..
        }) => (position, detail),
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn time_formats() {
    assert_eq!(parse_time("0"), Ok((0.0, 0)));
    assert_eq!(parse_time("0.0"), Ok((0.0, 1)));
    assert_eq!(parse_time("0.012"), Ok((0.012, 3)));
    assert_eq!(parse_time("1,234.5"), Ok((1234.5, 1)));
    assert_eq!(parse_time("1,234,567.891"), Ok((1_234_567.891, 3)));
    assert_eq!(parse_time("12,345"), Ok((12345.0, 0)));
    assert_eq!(parse_time(" 2.5 "), Ok((2.5, 1)));
    assert_eq!(parse_time(".5"), Ok((0.5, 1)));
    assert_eq!(parse_time("1.0E7"), Ok((1.0e7, 0)));
    assert_eq!(parse_time("1.2345E2"), Ok((123.45, 2)));
    assert_eq!(parse_time("5.0E-4"), Ok((0.0005, 5)));
    assert_eq!(parse_time("0.0012345678901"), Ok((0.0012345678901, 9)));
    for bad in [
        "", "abc", "-1", "-0.5", "NaN", "Infinity", "inf", "1,23", "1,2345", ",123", "1.2.3", "1e",
        "1e99999", "+1", "0x10", "1 2", "1e400", "1e13",
    ] {
        assert!(parse_time(bad).is_err(), "{bad:?} should be rejected");
    }
}

#[test]
fn surefire_2_22_report() {
    let r = parse(
        ReportFormat::Surefire,
        &data("surefire-2.22/TEST-com.example.CalculatorTest.xml"),
        "a",
    )
    .expect("parses");
    assert_eq!(r.classes.len(), 1);
    let c = &r.classes[0];
    assert_eq!(c.name, "com.example.CalculatorTest");
    assert_eq!(c.secs, 1234.5);
    assert_eq!(c.time_source, TimeSource::Suite);
    assert_eq!((c.tests, c.failures, c.errors, c.skipped), (4, 1, 0, 1));
    assert!(!c.passed());
    assert_eq!(r.resolution, 0.001);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.files, vec!["a".to_string()]);
}

#[test]
fn surefire_3_report_with_reruns_and_nested() {
    let r = parse(
        ReportFormat::Surefire,
        &data("surefire-3/TEST-com.example.ParserTest.xml"),
        "b",
    )
    .expect("parses");
    let c = r.class("com.example.ParserTest").expect("class");
    assert_eq!(c.secs, 0.257);
    assert_eq!(
        (c.tests, c.failures, c.errors, c.skipped, c.flaky),
        (5, 0, 1, 0, 1)
    );
    // The nested class's testcases (classname Outer$Inner) belong to the suite.
    assert_eq!(r.classes.len(), 1);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn surefire_dir_merges_and_skips_empty_suites() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reports/surefire-3");
    let r = read_surefire_dir(&dir).expect("reads");
    let names: Vec<_> = r.classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "com.example.OuterTest$Inner",
            "com.example.ParserTest",
            "com.example.ZeroTest"
        ]
    );
    let zero = r.class("com.example.ZeroTest").expect("zero");
    assert_eq!(zero.secs, 0.0);
    assert!(zero.passed());
    let inner = r.class("com.example.OuterTest$Inner").expect("inner");
    assert_eq!(inner.time_source, TimeSource::TestcaseSum);
    assert!((inner.secs - 0.003).abs() < 1e-12);
    assert_eq!(r.files.len(), 4);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("com.example.OuterTest has no testcase")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn missing_dir_and_dir_without_reports() {
    let tmp = tempfile::tempdir().expect("tempdir");
    assert!(matches!(
        read_surefire_dir(&tmp.path().join("nope")),
        Err(ReportError::Missing { .. })
    ));
    std::fs::write(tmp.path().join("com.example.Foo.txt"), "x").expect("write");
    assert!(matches!(
        read_surefire_dir(tmp.path()),
        Err(ReportError::Missing { .. })
    ));
}

#[test]
fn pytest_report() {
    let r = parse(ReportFormat::Pytest, &data("pytest/junit.xml"), "junit.xml").expect("parses");
    let names: Vec<_> = r.classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "tests.test_broken",
            "tests.test_join",
            "tests.test_mod.TestParse",
            "tests.test_mod.TestSlow"
        ]
    );
    let join = r.class("tests.test_join").expect("join");
    assert!((join.secs - 0.015).abs() < 1e-12);
    assert_eq!(
        (join.tests, join.failures, join.errors, join.skipped),
        (3, 0, 0, 1)
    );
    assert!(join.passed());
    let parse_c = r.class("tests.test_mod.TestParse").expect("parse");
    assert_eq!((parse_c.tests, parse_c.failures, parse_c.errors), (3, 1, 1));
    assert!(!parse_c.passed());
    let slow = r.class("tests.test_mod.TestSlow").expect("slow");
    assert_eq!((slow.tests, slow.skipped), (1, 1));
    assert!(!slow.passed(), "only skipped tests: not passed");
    let broken = r.class("tests.test_broken").expect("collection error");
    assert_eq!(broken.errors, 1);
    assert!(
        r.classes
            .iter()
            .all(|c| c.time_source == TimeSource::TestcaseSum)
    );
    assert_eq!(r.resolution, 0.001);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // The failed and errored testcases, by class and name (what `etip select` leaves out).
    let failed: Vec<(&str, &str)> = r
        .failed
        .iter()
        .map(|f| (f.class.as_str(), f.name.as_str()))
        .collect();
    assert_eq!(failed.len(), 3, "{failed:?}");
    // Every testcase with its own time (what a selection of tests costs).
    assert_eq!(r.cases.len(), 8);
    let slow = r
        .cases
        .iter()
        .find(|c| c.name == "test_bad")
        .expect("test_bad");
    assert_eq!(
        (slow.class.as_str(), slow.secs),
        ("tests.test_mod.TestParse", 0.2)
    );
    assert!(
        failed.iter().all(|(c, n)| !n.is_empty()
            && (c.starts_with("tests.test_mod.TestParse") || *c == "tests.test_broken")),
        "{failed:?}"
    );
}

#[test]
fn pytest_without_testsuites_wrapper_and_long_decimals() {
    let xml = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuite errors="0" failures="0" name="pytest" skipped="0" tests="2" time="0.05">
<testcase classname="t.test_a" file="t/test_a.py" line="1" name="test_x" time="0.0012345678"/>
<testcase classname="t.test_a" file="t/test_a.py" line="5" name="test_y" time="0.02"/>
</testsuite>"#;
    let r = parse(ReportFormat::Pytest, xml.as_bytes(), "old.xml").expect("parses");
    assert_eq!(r.classes.len(), 1);
    assert_eq!(r.resolution, 1e-9);
    assert!((r.classes[0].secs - 0.0212345678).abs() < 1e-12);
}

#[test]
fn failure_child_beats_attribute() {
    let xml = r#"<testsuite name="a.B" time="0.5" tests="1" failures="0" errors="0" skipped="0">
  <testcase name="t" classname="a.B" time="0.4"><failure message="boom" type="java.lang.AssertionError">trace</failure></testcase>
</testsuite>"#;
    let r = surefire(xml).expect("parses");
    assert_eq!(r.classes[0].failures, 1);
    assert_eq!(
        r.failed,
        [FailedCase {
            class: "a.B".into(),
            name: "t".into()
        }]
    );
    assert!(!r.classes[0].passed());
    assert_eq!(r.warnings.len(), 1);
    assert!(
        r.warnings[0].contains("failures=\"0\" but 1 counted"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn missing_suite_time_falls_back_to_testcases() {
    let xml = r#"<testsuite name="a.B" tests="2" failures="0" errors="0" skipped="0">
  <testcase name="t1" classname="a.B" time="0.25"/>
  <testcase name="t2" classname="a.B" time="1.5"/>
</testsuite>"#;
    let r = surefire(xml).expect("parses");
    assert_eq!(r.classes[0].secs, 1.75);
    assert_eq!(r.classes[0].time_source, TimeSource::TestcaseSum);
}

#[test]
fn testsuites_wrapper_and_nested_suites() {
    let xml = r#"<testsuites>
  <testsuite name="a.A" time="2">
<testcase name="t" classname="a.A" time="1"/>
<testsuite name="a.A$Inner" time="0.75"><testcase name="u" classname="a.A$Inner" time="0.7"/></testsuite>
  </testsuite>
  <testsuite name="a.C" time="0.1"><testcase name="t" classname="a.C" time="0.1"/></testsuite>
</testsuites>"#;
    let r = surefire(xml).expect("parses");
    let got: Vec<_> = r
        .classes
        .iter()
        .map(|c| (c.name.as_str(), c.secs, c.tests))
        .collect();
    assert_eq!(
        got,
        [("a.A", 2.0, 1), ("a.A$Inner", 0.75, 1), ("a.C", 0.1, 1)]
    );
}

#[test]
fn truncated_file() {
    let full = data("surefire-2.22/TEST-com.example.CalculatorTest.xml");
    let cut = &full[..full.len() * 2 / 3];
    let err = parse(ReportFormat::Surefire, cut, "cut.xml").expect_err("truncated");
    let msg = err.to_string();
    assert!(msg.contains("cut.xml"), "{msg}");
    assert!(matches!(err, ReportError::Malformed { .. }), "{msg}");
    // Cut inside a tag, too.
    let cut = &full[..full.len() - 5];
    assert!(matches!(
        parse(ReportFormat::Surefire, cut, "cut.xml"),
        Err(ReportError::Malformed { .. })
    ));
}

#[test]
fn bad_time_names_line() {
    let xml = "<testsuite name=\"a.B\" time=\"1\">\n  <testcase name=\"t\" classname=\"a.B\" time=\"abc\"/>\n</testsuite>";
    let (pos, detail) = malformed_detail(surefire(xml));
    assert_eq!(pos.line, 2);
    assert!(detail.contains("abc"), "{detail}");
    for t in ["-1", "NaN", "Infinity", "1e400"] {
        let xml = format!(
            "<testsuite name=\"a.B\" time=\"{t}\"><testcase name=\"t\" time=\"1\"/></testsuite>"
        );
        malformed_detail(surefire(&xml));
    }
}

#[test]
fn empty_and_non_xml_files() {
    let (_, d) = malformed_detail(surefire(""));
    assert!(d.contains("empty"), "{d}");
    malformed_detail(surefire("  \n"));
    let (_, d) = malformed_detail(surefire("Tests run: 3, Failures: 0\n"));
    assert!(d.contains("not an XML report"), "{d}");
    let (_, d) = malformed_detail(surefire("<html><body>no</body></html>"));
    assert!(d.contains("<html>"), "{d}");
    malformed_detail(parse(
        ReportFormat::Surefire,
        &[0xff, 0xfe, 0x00, 0x3c],
        "bin",
    ));
    malformed_detail(surefire(
        "<testsuite name=\"a\"><testcase name=\"t\"/></testsuite><testsuite/>",
    ));
    malformed_detail(surefire("<testsuite name=\"a\" tests=\"x\"/>"));
    malformed_detail(surefire(
        "<testsuite time=\"1\"><testcase name=\"t\"/></testsuite>",
    ));
    let (_, d) = malformed_detail(surefire(
        "<testsuite name=\"a\"><testcase name=\"t\"></testsuite>",
    ));
    assert!(d.contains("not well-formed"), "{d}");
    malformed_detail(surefire(
        "<testsuite name=\"a\"><testcase name=\"t\" time=\"1\" time=\"2\"/></testsuite>",
    ));
    malformed_detail(surefire(
        "<testsuite name=\"a&bogus;\"><testcase name=\"t\"/></testsuite>",
    ));
}

#[test]
fn byte_order_mark_and_entities_are_fine() {
    let mut xml = vec![0xef, 0xbb, 0xbf];
    xml.extend_from_slice(b"<?xml version=\"1.0\"?>\n<testsuite name=\"a.&lt;B&gt;\" time=\"0.5\"><testcase name=\"t\" time=\"0.5\"/></testsuite>\n");
    let r = parse(ReportFormat::Surefire, &xml, "bom.xml").expect("parses");
    assert_eq!(r.classes[0].name, "a.<B>");
}

#[test]
fn merge_rejects_duplicates_and_prefix_fixes_them() {
    let xml = r#"<testsuite name="a.B" time="0.5"><testcase name="t" time="0.5"/></testsuite>"#;
    let one = parse(ReportFormat::Surefire, xml.as_bytes(), "m1/TEST-a.B.xml").expect("one");
    let two = parse(ReportFormat::Surefire, xml.as_bytes(), "m2/TEST-a.B.xml").expect("two");
    match merge([one.clone(), two.clone()]) {
        Err(e @ ReportError::Duplicate { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("m1/TEST-a.B.xml") && msg.contains("m2/TEST-a.B.xml"),
                "{msg}"
            );
        }
        other => panic!("expected Duplicate, got {other:?}"),
    }
    let merged = merge([one.prefixed("m1/"), two.prefixed("m2/")]).expect("merges");
    let names: Vec<_> = merged.classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["m1/a.B", "m2/a.B"]);
    assert_eq!(merged.files.len(), 2);
    // Duplicates inside one file are refused too.
    let dup = format!("<testsuites>{xml}{xml}</testsuites>");
    assert!(matches!(surefire(&dup), Err(ReportError::Duplicate { .. })));
    let empty = merge(Vec::new()).expect("empty merge");
    assert!(empty.classes.is_empty());
}

#[test]
fn too_large_file_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("TEST-big.xml");
    let f = std::fs::File::create(&path).expect("create");
    f.set_len(MAX_REPORT_BYTES + 1).expect("sparse file");
    assert!(matches!(
        read_report(ReportFormat::Surefire, &path),
        Err(ReportError::TooLarge { .. })
    ));
}

#[test]
fn serialises() {
    let r = parse(ReportFormat::Pytest, &data("pytest/junit.xml"), "junit.xml").expect("parses");
    let json = serde_json::to_string(&r).expect("json");
    assert!(json.contains("\"time_source\":\"testcase_sum\""), "{json}");
}

/// Random byte mutations of valid reports never panic, and what parses stays sane.
#[test]
fn mutations_never_panic() {
    let seeds = [
        (
            ReportFormat::Surefire,
            data("surefire-2.22/TEST-com.example.CalculatorTest.xml"),
        ),
        (
            ReportFormat::Surefire,
            data("surefire-3/TEST-com.example.ParserTest.xml"),
        ),
        (ReportFormat::Pytest, data("pytest/junit.xml")),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_e71b);
    let interesting = b"<>/=\"',.-0123456789eE&;! \n";
    let mut parsed_ok = 0;
    for round in 0..6000 {
        let (format, base) = &seeds[round % seeds.len()];
        let mut xml = base.clone();
        let edits = rng.random_range(1..=8);
        for _ in 0..edits {
            if xml.is_empty() {
                break;
            }
            let at = rng.random_range(0..xml.len());
            match rng.random_range(0..5) {
                0 => xml[at] = rng.random(),
                1 => xml[at] = interesting[rng.random_range(0..interesting.len())],
                2 => {
                    xml.remove(at);
                }
                3 => xml.insert(at, interesting[rng.random_range(0..interesting.len())]),
                _ => xml.truncate(at),
            }
        }
        let parsed = parse(*format, &xml, "mutated.xml");
        if parsed.is_ok() {
            parsed_ok += 1;
        }
        if let Ok(r) = parsed {
            assert!(r.resolution > 0.0 && r.resolution <= 0.001);
            for c in &r.classes {
                assert!(c.secs.is_finite() && c.secs >= 0.0, "{c:?}");
                assert!(c.skipped <= c.tests && c.failures <= c.tests && c.errors <= c.tests);
            }
            assert!(r.classes.windows(2).all(|w| w[0].name < w[1].name));
        }
    }
    // Both paths were exercised.
    assert!(
        parsed_ok > 100 && parsed_ok < 5900,
        "{parsed_ok} of 6000 parsed"
    );
}

/// Found by `fuzz/fuzz_targets/xml_reports.rs`: names and entities of the input were quoted in
/// full in errors (a mismatched end tag, an unknown entity, a duplicate class), so an error could
/// be as long as the report. Errors now quote a clipped piece.
#[test]
fn errors_do_not_echo_long_names() {
    let long = "A".repeat(5000);
    let inputs = [
        format!("<testsuite><{long}></b></testsuite>"),
        format!("<testsuite name=\"&{long};\"><testcase name=\"t\"/></testsuite>"),
        format!(
            "<testsuites><testsuite name=\"{long}\"><testcase name=\"t\"/></testsuite>\
             <testsuite name=\"{long}\"><testcase name=\"t\"/></testsuite></testsuites>"
        ),
    ];
    for xml in &inputs {
        for format in [ReportFormat::Surefire, ReportFormat::Pytest] {
            let Err(e) = parse(format, xml.as_bytes(), "TEST-long.xml") else {
                continue;
            };
            let msg = e.to_string();
            assert!(msg.len() < 1024, "{} bytes: {}", msg.len(), &msg[..300]);
            assert!(msg.contains("TEST-long.xml"), "{msg}");
        }
    }
    // The duplicate's error keeps the whole name for callers, and shows a clipped one.
    match surefire(&inputs[2]) {
        Err(ReportError::Duplicate { class, .. }) => assert_eq!(class, long),
        other => panic!("expected Duplicate, got {other:?}"),
    }
    let one = surefire(&format!(
        "<testsuite name=\"{long}\"><testcase name=\"t\"/></testsuite>"
    ))
    .expect("one long class");
    let e = merge([one.clone(), one]).expect_err("duplicate");
    assert!(e.to_string().len() < 1024, "{e}");
}
