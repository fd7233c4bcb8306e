//! GSO per-model report `.json` through `etip_score::input::load_file` (scratch file `*.json`; a
//! manifest or other JSON is refused with an error, JSON Lines are read as etip results).
#![no_main]

use etip_score::input::Format;
use libfuzzer_sys::fuzz_target;

const STATUSES: [&str; 7] = [
    "passed",
    "test_failed",
    "patch_failed",
    "base_failed",
    "empty_patch",
    "error",
    "incomplete",
];

fuzz_target!(|data: &[u8]| {
    let Some(sub) = etip_fuzz::load_score("gso_json", "fuzz-model.json", data) else {
        return;
    };
    if sub.format != Format::GsoReport {
        return;
    }
    assert_eq!(sub.name, "fuzz-model");
    let total = sub.total_instances.expect("a GSO report states its size");
    assert_eq!(
        sub.official_summary.get("total_instances").copied(),
        Some(total as f64)
    );
    for t in &sub.tasks {
        let status = t.status.as_deref().expect("every GSO task has a status");
        assert!(STATUSES.contains(&status), "unknown status {status:?}");
        assert_eq!(t.correct, Some(status == "passed"));
        let official = t
            .official
            .as_ref()
            .expect("GSO tasks carry opt_base/opt_commit");
        assert!(official.opt_base.is_some() && official.opt_commit.is_some());
        if let Some(m) = &t.per_test_means {
            assert!(!m.base.is_empty(), "empty per_test_means accepted");
            for &x in m.base.iter().chain(&m.patch).chain(&m.commit) {
                assert!(x > 0.0, "a zero runtime in per_test_means accepted");
            }
        }
    }
});
