//! Test-report XML (`etip_exec::reports::parse`): every input read both as Maven Surefire
//! `TEST-*.xml` and as pytest `--junitxml`.
#![no_main]

use etip_exec::reports::{self, MAX_WARNINGS, ReportFormat, TimeSource};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for format in [ReportFormat::Surefire, ReportFormat::Pytest] {
        match reports::parse(format, data, "TEST-fuzz.xml") {
            Ok(r) => {
                assert!(
                    r.classes.windows(2).all(|w| w[0].name < w[1].name),
                    "classes not sorted by name or a name twice"
                );
                assert!(
                    (1e-9..=1e-3).contains(&r.resolution),
                    "resolution {} outside [1 ns, 1 ms]",
                    r.resolution
                );
                assert!(r.warnings.len() <= MAX_WARNINGS + 1, "warnings not capped");
                assert_eq!(r.files, vec!["TEST-fuzz.xml".to_string()]);
                for c in &r.classes {
                    etip_fuzz::check_time("xml_reports", c.secs);
                    assert!(c.tests > 0, "class {} without tests", c.name);
                    assert!(c.failures <= c.tests && c.errors <= c.tests);
                    assert!(c.skipped <= c.tests && c.flaky <= c.tests);
                    assert_eq!(r.class(&c.name), Some(c));
                    if format == ReportFormat::Pytest {
                        assert_eq!(c.time_source, TimeSource::TestcaseSum);
                    } else {
                        assert!(!c.name.is_empty(), "a Surefire class without a name");
                    }
                    if c.time_source == TimeSource::Suite {
                        assert!(c.secs <= 1e12, "suite time above the 1e12 s cap");
                    }
                }
                // Merging a report with itself finds every class twice; merging with nothing
                // changes nothing.
                if let Some(first) = r.classes.first() {
                    let e = reports::merge([r.clone(), r.clone()])
                        .expect_err("a report merged with itself has duplicates");
                    etip_fuzz::check_error("xml_reports merge", &e.to_string());
                    assert!(e.to_string().contains("appears in both") || first.name.is_empty());
                }
                let alone = reports::merge([r.clone()]).expect("one report merges");
                assert_eq!(alone.classes, r.classes);
            }
            Err(e) => etip_fuzz::check_error("xml_reports", &e.to_string()),
        }
    }
});
