//! The JSON lines of `EtipCovReport.java` (`etip_select::java::read_report`): per test
//! class the lines it ran of the changed files, and the methods' line ranges.
#![no_main]

use etip_select::java::read_report;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match read_report(text) {
        Ok((cov, ranges)) => {
            for t in cov.tests.keys() {
                assert!(!t.is_empty() && !t.starts_with("etip.cov:"), "test {t:?}");
                assert!(!t.contains(char::is_whitespace), "test {t:?} not split");
            }
            for (file, list) in &ranges {
                for r in list {
                    assert!(r.first >= 1 && r.first <= r.last, "{file}: range {r:?}");
                    assert!(r.name.contains('#'), "{file}: method name {}", r.name);
                }
                let mut seen = list.clone();
                seen.dedup();
                assert_eq!(seen.len(), list.len(), "{file}: a range twice in a row");
            }
        }
        Err(e) => etip_fuzz::check_error("jacoco_report", &e.to_string()),
    }
});
