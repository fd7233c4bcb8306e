//! coverage.py data files (`etip_select::coverage_py::read`): any bytes as the SQLite file
//! of a selection run, read for two files; plus the numbits and context decoders on the raw bytes.
#![no_main]

use etip_select::coverage_py::{self, context_test, numbits_to_lines};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let lines = numbits_to_lines(data);
    assert!(lines.windows(2).all(|w| w[0] < w[1]), "numbits lines not ascending");
    assert!(lines.iter().all(|l| (*l as usize) < data.len() * 8));
    assert_eq!(lines.len(), data.iter().map(|b| b.count_ones() as usize).sum::<usize>());
    if let Ok(text) = std::str::from_utf8(data)
        && let Some(id) = context_test(text)
    {
        assert!(text.starts_with(id) && !text.is_empty());
    }
    let db = etip_fuzz::write_scratch("coverage/coverage.db", data);
    let files = ["textutil/__init__.py".to_string(), "pkg/mod.py".to_string()];
    match coverage_py::read(&db, "/work/original", &files) {
        Ok(cov) => {
            for per_file in cov.tests.values().chain(std::iter::once(&cov.outside)) {
                assert!(per_file.keys().all(|f| files.contains(f)), "a file not asked for");
            }
            assert!(cov.tests.keys().all(|t| !t.is_empty()), "a test without a name");
        }
        Err(e) => etip_fuzz::check_error("coverage_py", &e.to_string()),
    }
});
