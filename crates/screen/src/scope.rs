//! `scope`: files outside the sources the task is about — tests, build descriptors, test
//! configuration and benchmark or workload folders (the files `etip eval` refuses,
//! [`etip_toolchain::paths::protected`]), interpreter start-up hooks (`sitecustomize.py`,
//! `usercustomize.py`, `.pth` files run code in every Python process, the timed ones included),
//! workload or benchmark files elsewhere, and a new script at the repository's root.
//! Documentation, change logs and data files are no finding.

use etip_core::Language;
use etip_core::hack::{Finding, HackKind};
use etip_toolchain::paths;

/// The finding for one file of a patch, if it is out of scope. `added`: the patch creates it.
pub fn screen(lang: Language, path: &str, added: bool) -> Option<Finding> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    let why = if let Some(why) = paths::protected(lang, path) {
        format!("changes a file of the kind {why}")
    } else if matches!(name, "sitecustomize.py" | "usercustomize.py") || name.ends_with(".pth") {
        "adds or changes an interpreter start-up hook, run in every Python process".to_string()
    } else if [
        "workload",
        "benchmark",
        "bench_",
        "_bench",
        "perf_test",
        "timing",
    ]
    .iter()
    .any(|w| lower.contains(w))
        && is_code(name)
    {
        "changes a workload, benchmark or timing file".to_string()
    } else if added && !path.contains('/') && is_code(name) {
        "adds a script at the repository's root".to_string()
    } else {
        return None;
    };
    Some(Finding::new(HackKind::Scope, path, 0, "", why))
}

fn is_code(name: &str) -> bool {
    [".py", ".java", ".sh", ".bash", ".pyx", ".c", ".kt"]
        .iter()
        .any(|e| name.ends_with(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_docs_and_data_are_in_scope() {
        for p in [
            "pkg/core.py",
            "docs/perf.rst",
            "CHANGES.md",
            "pkg/data/table.json",
            "setup_utils/x.txt",
        ] {
            assert_eq!(screen(Language::Python, p, true), None, "{p}");
        }
        assert_eq!(
            screen(Language::Java, "core/src/main/java/a/B.java", false),
            None
        );
    }

    #[test]
    fn tests_hooks_workloads_and_root_scripts_are_not() {
        for (p, added, why) in [
            ("tests/test_core.py", false, "test"),
            ("conftest.py", true, "test"),
            ("sitecustomize.py", true, "start-up hook"),
            ("pkg/zz_fast.pth", true, "start-up hook"),
            ("asv_bench/benchmarks.py", false, "benchmark"),
            ("pkg/workload_cache.py", true, "workload"),
            ("run_fast.py", true, "root"),
        ] {
            let f = screen(Language::Python, p, added).unwrap_or_else(|| panic!("{p}"));
            assert!(f.detail.contains(why), "{p}: {}", f.detail);
        }
        assert!(screen(Language::Java, "src/test/java/a/BTest.java", false).is_some());
        assert!(screen(Language::Java, "pom.xml", false).is_some());
    }
}
