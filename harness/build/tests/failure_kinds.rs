//! Failure kinds from what happened, against the real Docker engine (issue 11): the smoke check
//! after each version's build (`environment_incomplete`), Maven resolution failures offline
//! (`dependency_resolution`, `dependency_missing`), and the Maven wrapper's distribution installed
//! by the env layer so that `./mvnw` runs in the offline instance layer. Each test builds in its
//! own namespace, removed when it ends.

mod common;

use common::{TestBuilder, builder, etip, fixture_repo};
use etip_core::instance::{BuildOutcome, FailureKind, InstanceStatus, Language};
use etip_testkit::git;
use std::path::Path;

fn no_events(_: &etip_build::Event) {}

/// Writes `files` (path, content; `None` deletes) into `repo` and commits them; the commit id.
fn commit(repo: &Path, files: &[(&str, Option<&str>)], message: &str) -> String {
    for (path, content) in files {
        let at = repo.join(path);
        match content {
            Some(text) => {
                std::fs::create_dir_all(at.parent().unwrap()).unwrap();
                std::fs::write(&at, text).unwrap();
            }
            None if at.is_dir() => std::fs::remove_dir_all(&at).unwrap(),
            None => std::fs::remove_file(&at).unwrap(),
        }
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", message]);
    git(repo, &["rev-parse", "HEAD"])
}

/// The Maven fixture's source file (its last step does not compile).
const TEXT_UTIL: &str = "src/main/java/demo/TextUtil.java";

fn fixture(kind: &str, step: &str, path: &str) -> String {
    std::fs::read_to_string(etip_testkit::fixtures().join(kind).join(step).join(path)).unwrap()
}

fn assert_built(s: &InstanceStatus) {
    assert!(
        matches!(s.outcome, BuildOutcome::Built | BuildOutcome::Reused),
        "{} failed: {:?}\n{}",
        s.id,
        s.reason,
        s.detail.as_deref().unwrap_or("")
    );
}

fn build_log(tb: &TestBuilder, id: &str) -> String {
    let dir = tb
        .out
        .path()
        .join("logs")
        .join(etip_build::instance::log_slug(id));
    std::fs::read_to_string(dir.join("build.log")).unwrap()
}

/// A package importing a module the image does not have builds (pip installs with `--no-deps`,
/// compileall passes) but cannot run a test: the smoke check names the module, never `built`.
/// A tree without tests is no smoke failure (measure reports `no_tests`).
#[test]
fn python_package_importing_a_missing_module_is_environment_incomplete() {
    let tb = builder("smokepy");
    let (_tmp, repo, _c) = fixture_repo("python");
    let with_import = |step: &str| {
        fixture("python", step, "textutil/__init__.py").replacen(
            "\n\n",
            "\n\nimport urllib3\n\n",
            1,
        )
    };
    let a = commit(
        &repo,
        &[("textutil/__init__.py", Some(&with_import("1-original")))],
        "textutil needs urllib3",
    );
    let b = commit(
        &repo,
        &[("textutil/__init__.py", Some(&with_import("2-dedup-linear")))],
        "linear dedup",
    );
    let s = tb.builder.build_one(
        &etip("py-urllib3", Language::Python, &repo, &a, &b),
        &no_events,
    );
    assert_eq!(s.outcome, BuildOutcome::Failed, "{:?}", s.detail);
    assert_eq!(s.failure, Some(FailureKind::EnvironmentIncomplete));
    assert_eq!(
        s.reason.as_deref(),
        Some("environment incomplete (original)")
    );
    assert_eq!(s.modules, ["textutil"]);
    let detail = s.detail.unwrap();
    let lines: Vec<&str> = detail.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "original: cannot import textutil: No module named 'urllib3'",
            "patched: cannot import textutil: No module named 'urllib3'"
        ],
        "{detail}"
    );
    assert!(s.image.is_none());

    // Without the import, and without tests: built; a test importing a missing module is not.
    let no_tests = commit(
        &repo,
        &[
            (
                "textutil/__init__.py",
                Some(&fixture("python", "1-original", "textutil/__init__.py")),
            ),
            ("tests", None),
        ],
        "no tests",
    );
    let dedup = commit(
        &repo,
        &[(
            "textutil/__init__.py",
            Some(&fixture("python", "2-dedup-linear", "textutil/__init__.py")),
        )],
        "linear dedup",
    );
    let s = tb.builder.build_one(
        &etip("py-no-tests", Language::Python, &repo, &no_tests, &dedup),
        &no_events,
    );
    assert_built(&s);
    assert!(
        build_log(&tb, "py-no-tests").contains("etip: smoke: original: pytest collected no tests")
    );
    let test = "import hypothesis\n\n\ndef test_nothing():\n    pass\n";
    let with_test = commit(
        &repo,
        &[("tests/test_prop.py", Some(test))],
        "a property test",
    );
    let s = tb.builder.build_one(
        &etip("py-hypothesis", Language::Python, &repo, &dedup, &with_test),
        &no_events,
    );
    assert_eq!(
        s.failure,
        Some(FailureKind::EnvironmentIncomplete),
        "{:?}",
        s.detail
    );
    assert_eq!(
        s.reason.as_deref(),
        Some("environment incomplete (patched)")
    );
    assert!(
        s.detail.as_deref().unwrap().starts_with(
            "patched: pytest cannot collect the tests (exit 2): tests/test_prop.py: \
             ModuleNotFoundError: No module named 'hypothesis'"
        ),
        "{:?}",
        s.detail
    );
}

/// The Maven fixture with a parent POM from Maven Central: offline, the parent cannot be read;
/// a resolution failure naming it, not a compile failure.
/// A project that configures no `testpaths` but doctests every module (`--doctest-modules`, as
/// psf/requests did) and keeps a documentation helper whose import the environment lacks: pytest
/// run from the root would import the helper and fail collection; etip's plugin limits collection
/// to the root's test folder, so the image is built and the tests are found. The same tree with
/// `testpaths` naming the docs shows the project's own configuration still wins.
#[test]
fn collection_is_limited_to_the_test_folder_when_the_project_names_none() {
    let tb = builder("smokepaths");
    let (_tmp, repo, c) = fixture_repo("python");
    let docs = "import pygments_not_installed\n";
    let ini = "[pytest]\naddopts = --doctest-modules\n";
    let base = commit(
        &repo,
        &[
            ("docs/theme_support.py", Some(docs)),
            ("pytest.ini", Some(ini)),
            (
                "textutil/__init__.py",
                Some(&fixture("python", "1-original", "textutil/__init__.py")),
            ),
        ],
        "docs helper and doctests everywhere",
    );
    let patched = commit(
        &repo,
        &[(
            "textutil/__init__.py",
            Some(&fixture("python", "2-dedup-linear", "textutil/__init__.py")),
        )],
        "linear dedup",
    );
    assert_ne!(base, c[0]);
    let s = tb.builder.build_one(
        &etip("py-paths", Language::Python, &repo, &base, &patched),
        &no_events,
    );
    assert_built(&s);
    let log = build_log(&tb, "py-paths");
    assert!(
        log.contains("etip: smoke: original: pytest collects"),
        "{log}"
    );
    assert!(!log.contains("pygments_not_installed"), "{log}");

    let ini = "[pytest]\naddopts = --doctest-modules\ntestpaths = docs tests\n";
    let base = commit(
        &repo,
        &[("pytest.ini", Some(ini))],
        "testpaths names the docs",
    );
    let patched = commit(
        &repo,
        &[(
            "textutil/__init__.py",
            Some(&fixture("python", "1-original", "textutil/__init__.py")),
        )],
        "back",
    );
    let s = tb.builder.build_one(
        &etip("py-testpaths", Language::Python, &repo, &base, &patched),
        &no_events,
    );
    assert_eq!(
        s.failure,
        Some(FailureKind::EnvironmentIncomplete),
        "{:?}",
        s.detail
    );
    let detail = s.detail.unwrap_or_default();
    assert!(detail.contains("pygments_not_installed"), "{detail}");
}

#[test]
fn maven_remote_parent_is_dependency_resolution_offline() {
    let tb = builder("mvnparent");
    let (_tmp, repo, _c) = fixture_repo("maven");
    let pom = fixture("maven", "1-original", "pom.xml").replace(
        "  <groupId>demo</groupId>\n",
        "  <parent>\n    <groupId>org.sonatype.oss</groupId>\n    <artifactId>oss-parent</artifactId>\n    <version>7</version>\n  </parent>\n  <groupId>demo</groupId>\n",
    );
    let text_util = fixture("maven", "1-original", TEXT_UTIL);
    let head = commit(
        &repo,
        &[("pom.xml", Some(&pom)), (TEXT_UTIL, Some(&text_util))],
        "a parent POM from Central",
    );
    let s = tb.builder.build_one(
        &etip("mvn-remote-parent", Language::Java, &repo, &head, &head),
        &no_events,
    );
    assert_eq!(
        s.failure,
        Some(FailureKind::DependencyResolution),
        "{:?}",
        s.detail
    );
    assert_eq!(
        s.reason.as_deref(),
        Some("dependency resolution failed (original)")
    );
    let detail = s.detail.unwrap();
    assert!(
        detail.starts_with(
            "original: Maven cannot resolve the parent POM org.sonatype.oss:oss-parent:pom:7 from \
             https://repo.maven.apache.org/maven2: it is not in the local repository and Maven \
             runs offline\nhint: "
        ),
        "{detail}"
    );
    assert!(detail.contains("settings.xml"), "{detail}");
}

/// A patch adding a dependency the env layer (resolved from the original's descriptors) does not
/// hold: the original builds offline, the patched tree cannot; the artifact is named. A test
/// module whose test classes are not compiled (`maven.test.skip`) fails the smoke check.
#[test]
fn maven_dependency_only_the_patch_needs_is_dependency_missing() {
    let tb = builder("mvnmissing");
    let (_tmp, repo, c) = fixture_repo("maven");
    let pom = fixture("maven", "1-original", "pom.xml").replace(
        "  <dependencies>\n",
        "  <dependencies>\n    <dependency>\n      <groupId>com.google.guava</groupId>\n      <artifactId>guava</artifactId>\n      <version>33.0.0-jre</version>\n    </dependency>\n",
    );
    // The fixture's last step does not compile: the patch starts from the linear dedup.
    let text_util = fixture("maven", "2-dedup-linear", TEXT_UTIL);
    let patched = commit(
        &repo,
        &[("pom.xml", Some(&pom)), (TEXT_UTIL, Some(&text_util))],
        "depend on Guava",
    );
    let s = tb.builder.build_one(
        &etip("mvn-guava", Language::Java, &repo, &c[1], &patched),
        &no_events,
    );
    assert_eq!(
        s.failure,
        Some(FailureKind::DependencyMissing),
        "{:?}",
        s.detail
    );
    assert_eq!(s.reason.as_deref(), Some("dependency missing (patched)"));
    let detail = s.detail.unwrap();
    assert!(
        detail.starts_with(
            "patched: the patch needs the dependency com.google.guava:guava:jar:33.0.0-jre, which \
             the original does not"
        ),
        "{detail}"
    );

    let pom = fixture("maven", "1-original", "pom.xml").replace(
        "  </properties>",
        "    <maven.test.skip>true</maven.test.skip>\n  </properties>",
    );
    let skip = commit(
        &repo,
        &[("pom.xml", Some(&pom)), (TEXT_UTIL, Some(&text_util))],
        "skip the tests",
    );
    let s = tb.builder.build_one(
        &etip("mvn-test-skip", Language::Java, &repo, &skip, &skip),
        &no_events,
    );
    assert_eq!(
        s.failure,
        Some(FailureKind::EnvironmentIncomplete),
        "{:?}",
        s.detail
    );
    let detail = s.detail.unwrap();
    assert!(
        detail.starts_with(
            "original: module .: 3 test class(es) not compiled to ./target/test-classes \
             (maven.test.skip set?): demo.JoinTest demo.TextDedupTest demo.TrivialTest"
        ),
        "{detail}"
    );
}

/// A stand-in for the Maven wrapper (`distributionType=only-script`): installs the distribution
/// named by `distributionUrl` under `MAVEN_USER_HOME` (`~/.m2`) when it is not there, then runs it.
/// `file://` URLs are copied; any other URL fails as the real script does without network.
const STAND_IN_MVNW: &str = r#"#!/bin/sh
dir=$(cd "$(dirname "$0")" && pwd)
url=$(sed -n 's/^distributionUrl=//p' "$dir/.mvn/wrapper/maven-wrapper.properties")
home="${MAVEN_USER_HOME:-$HOME/.m2}/wrapper/dists/$(basename "$url")"
if [ ! -d "$home" ]; then
  src=${url#file://}
  [ "$src" != "$url" ] && [ -d "$src" ] || { echo "wget: Failed to fetch $url" >&2; exit 1; }
  mkdir -p "$(dirname "$home")" && cp -r "$src" "$home" || exit 1
fi
exec sh "$home/bin/mvn" "$@"
"#;

/// The Maven wrapper's distribution comes from where the env layer may download (here a
/// `file://` URL into the env layer's build descriptors, gone in the instance layer): the env
/// layer installs it and keeps it, so the offline instance layer and the test runs can use
/// `./mvnw`. Before, the instance layer's `./mvnw` could not download it ("does not compile").
#[test]
fn maven_wrapper_distribution_is_installed_by_the_env_layer() {
    let tb = builder("mvnw");
    let (_tmp, repo, c) = fixture_repo("maven");
    let url = "file:///opt/etip/env-src/.mvn/dist/apache-maven-stub";
    let props = format!("distributionUrl={url}\n");
    let stub = "echo 'etip-test: the wrapper distribution runs'\nexec mvn \"$@\"\n";
    let with_wrapper = commit(
        &repo,
        &[
            ("mvnw", Some(STAND_IN_MVNW)),
            (".mvn/wrapper/maven-wrapper.properties", Some(&props)),
            (".mvn/dist/apache-maven-stub/bin/mvn", Some(stub)),
        ],
        "the Maven wrapper",
    );
    let original = commit(
        &repo,
        &[(TEXT_UTIL, Some(&fixture("maven", "1-original", TEXT_UTIL)))],
        "back to the original",
    );
    let patched = commit(
        &repo,
        &[(
            TEXT_UTIL,
            Some(&fixture("maven", "2-dedup-linear", TEXT_UTIL)),
        )],
        "linear dedup",
    );
    assert_ne!(with_wrapper, c[0]);
    let s = tb.builder.build_one(
        &etip("mvnw-dist", Language::Java, &repo, &original, &patched),
        &no_events,
    );
    assert_built(&s);
    assert_eq!(s.toolchain.as_ref().unwrap().build_tool, "./mvnw");
    let log = build_log(&tb, "mvnw-dist");
    assert!(
        log.contains(
            "etip: the wrapper's Maven is kept in /root/.m2/wrapper/dists/apache-maven-stub"
        ),
        "{log}"
    );
    assert_eq!(
        log.matches("etip-test: the wrapper distribution runs")
            .count(),
        3,
        "env layer (-v), original and patched:\n{log}"
    );
}
