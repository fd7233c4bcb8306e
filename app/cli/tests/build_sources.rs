//! `etip build` never writes to a source repository: a commit the user's clone lacks comes from
//! its origin through etip's own cache clone, and a commit found nowhere is a recorded checkout
//! failure (data, exit 0). Against the real Docker engine, in a test namespace cleaned up after.

use assert_cmd::Command;
use etip_testkit::git;
use std::path::{Path, PathBuf};

mod common;

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built by cargo test")
}

/// Removes the namespace's images and containers, also when the test fails.
struct Namespace(String);

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = etip().args(["clean", "--namespace", &self.0]).output();
    }
}

fn etips_file(dir: &Path, id: &str, base: &str, patched: &str, source: &Path) -> PathBuf {
    let f = dir.join(format!("{id}.jsonl"));
    let line = serde_json::json!({
        "id": id, "language": "python", "base_commit": base, "patched_commit": patched,
        "source": source.to_str().unwrap(),
    });
    std::fs::write(&f, format!("{line}\n")).unwrap();
    f
}

/// The Python fixture as upstream (`main`, `feature`), a bare clone of it (the user's, with a
/// local commit on `feature`), then upstream moves both branches to a new commit. Returns the
/// upstream, the clone, the fixture's commits and the new commit.
fn moved_upstream(tmp: &Path) -> (PathBuf, PathBuf, Vec<String>, String) {
    let up = tmp.join("up");
    let c = common::python_fixture(&up);
    git(&up, &["branch", "feature", &c[1]]);
    let url = format!("file://{}", up.display());
    git(tmp, &["clone", "-q", "--bare", &url, "user.git"]);
    let user = tmp.join("user.git");
    let tree = git(&user, &["rev-parse", "feature^{tree}"]);
    let local = git(
        &user,
        &["commit-tree", &tree, "-p", "feature", "-m", "local work"],
    );
    git(&user, &["update-ref", "refs/heads/feature", &local]);
    git(&up, &["checkout", "-q", "--detach", &c[1]]);
    std::fs::write(up.join("NOTES.txt"), "upstream only\n").unwrap();
    git(&up, &["add", "-A"]);
    git(&up, &["commit", "-q", "-m", "upstream only"]);
    let new = git(&up, &["rev-parse", "HEAD"]);
    git(&up, &["branch", "-f", "main", &new]);
    git(&up, &["branch", "-f", "feature", &new]);
    (up, user, c, new)
}

#[test]
fn a_commit_only_upstream_is_built_from_a_cache_clone_and_the_source_is_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let (_up, user, c, new) = moved_upstream(tmp.path());
    let refs = git(&user, &["for-each-ref"]);
    let files = etip_testkit::tree_snapshot(&user);
    let ns = Namespace(format!("etiptest-upstream-{}", std::process::id()));
    let f = etips_file(tmp.path(), "upstream-only", &c[0], &new, &user);
    let out = tmp.path().join("out");
    let run = etip()
        .args(["build", "--namespace", &ns.0, "--etips"])
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).to_string();
    let status: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(status["outcome"], "built", "{stdout}");
    assert_eq!(status["patched_commit"], new.as_str());
    // The user's refs and files are exactly as they were: nothing fetched, nothing written.
    assert_eq!(git(&user, &["for-each-ref"]), refs);
    assert_eq!(etip_testkit::tree_snapshot(&user), files);
    // The commits were read from etip's cache clone of the origin.
    let context = std::fs::read_to_string(
        out.join("logs")
            .join(etip_build::instance::log_slug("upstream-only"))
            .join("context.txt"),
    )
    .unwrap();
    let read_from = context
        .lines()
        .find_map(|l| l.strip_prefix("read from "))
        .unwrap();
    assert!(
        Path::new(read_from).starts_with(out.join("repos")),
        "{context}"
    );
}

#[test]
fn a_commit_found_nowhere_is_a_recorded_checkout_failure_and_exit_0() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let c = common::python_fixture(&repo);
    let refs = git(&repo, &["for-each-ref"]);
    let files = etip_testkit::tree_snapshot(&repo);
    let missing = "0123456789abcdef0123456789abcdef01234567";
    let f = etips_file(tmp.path(), "nowhere", &c[0], missing, &repo);
    let ns = Namespace(format!("etiptest-nowhere-{}", std::process::id()));
    let run = etip()
        .args(["build", "--namespace", &ns.0, "--etips"])
        .arg(&f)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).to_string();
    let status: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(status["failure"], "checkout", "{stdout}");
    let detail = status["detail"].as_str().unwrap();
    assert!(
        detail.contains(missing) && detail.contains(repo.to_str().unwrap()),
        "{detail}"
    );
    assert!(detail.contains("no `origin` remote"), "{detail}");
    assert_eq!(git(&repo, &["for-each-ref"]), refs);
    assert_eq!(etip_testkit::tree_snapshot(&repo), files);
}
