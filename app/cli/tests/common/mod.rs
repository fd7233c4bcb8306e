//! Helpers shared by the binary's tests that need real repositories.

#![allow(dead_code)]

use std::path::Path;

/// The Python fixture of harness/build as a git repository in `dir`; returns its commits.
pub fn python_fixture(dir: &Path) -> Vec<String> {
    etip_testkit::fixture_repo("python", dir)
}

/// The Python fixture's dedup ETIP (`id`) built by `etip build` in namespace `ns` under `tmp`;
/// returns the status.jsonl.
pub fn build_python(tmp: &Path, id: &str, ns: &str) -> std::path::PathBuf {
    let repo = tmp.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let c = python_fixture(&repo);
    let etips = tmp.join("etips.jsonl");
    std::fs::write(
        &etips,
        format!(
            "{{\"id\":\"{id}\",\"language\":\"python\",\"base_commit\":\"{}\",\"patched_commit\":\"{}\",\"source\":\"repo\"}}\n",
            c[0], c[1]
        ),
    )
    .unwrap();
    let build = tmp.join("build");
    assert_cmd::Command::cargo_bin("etip")
        .expect("the etip binary is built by cargo test")
        .args(["build", "--namespace", ns, "--etips"])
        .arg(&etips)
        .arg("--out")
        .arg(&build)
        .assert()
        .success();
    build.join("status.jsonl")
}
