//! Old commits build with the toolchain of their time (real Docker engine, offline): the base
//! images of three Debian suites (bullseye: Python 3.9, JDK 11 and 17; bookworm: 3.11, 17;
//! trixie: 3.13, 21 and 25), the Python a commit's files and date point to, an interpreter too
//! new for the code replaced by the next older one, the JDK a pom asks for (not always the image's
//! default), and `interpreter_unavailable` for what no image has.

mod common;

use common::{builder, commit_at, etip};
use etip_core::instance::{BuildOutcome, FailureKind, InstanceStatus, Language};
use etip_docker::{LABEL_NAMESPACE, RunSpec};
use std::path::Path;

fn no_events(_: &etip_build::Event) {}

fn assert_built(s: &InstanceStatus) {
    assert!(
        matches!(s.outcome, BuildOutcome::Built | BuildOutcome::Reused),
        "{}: {:?}\n{}",
        s.id,
        s.reason,
        s.detail.as_deref().unwrap_or_default()
    );
}

/// Runs `cmd` in `image` (no network) and returns its stdout and stderr together.
fn output(tb: &common::TestBuilder, image: &str, cmd: &[&str]) -> String {
    let spec = RunSpec::new(image, cmd.iter().copied()).label(LABEL_NAMESPACE, tb.ns.clone());
    let out = tb.builder.block_on(tb.builder.engine().run(&spec)).unwrap();
    assert_eq!(out.exit_code, Some(0), "{cmd:?}: {out:?}");
    format!("{}{}", out.stdout, out.stderr)
}

/// A Python package `old` whose module imports an ABC from `collections` (removed in Python
/// 3.10), with a test; `head` goes first in its setup.py or pyproject.toml.
fn old_python(repo: &Path, when: &str, later: &str, descriptor: (&str, &str)) -> (String, String) {
    let code = "from collections import Mapping\n\n\ndef keys(m):\n    assert isinstance(m, Mapping)\n    return sorted(m)\n";
    let test = "from old import keys\n\n\ndef test_keys():\n    assert keys({'b': 1, 'a': 2}) == ['a', 'b']\n";
    let base = commit_at(
        repo,
        when,
        &[
            descriptor,
            ("old/__init__.py", code),
            ("tests/test_old.py", test),
        ],
        "an old project",
    );
    let faster = code.replace("sorted(m)", "sorted(m.keys())");
    let patched = commit_at(repo, later, &[("old/__init__.py", &faster)], "faster");
    (base, patched)
}

const SETUP_2019: &str = "from setuptools import setup\n\nsetup(\n    name='old',\n    version='1.0',\n    packages=['old'],\n    classifiers=[\n        'Programming Language :: Python :: 3.6',\n        'Programming Language :: Python :: 3.7',\n    ],\n)\n";

/// A commit of 2019 declaring Python 3.6 and 3.7 builds with Python 3.9 (bullseye's, the nearest
/// configured), where its `collections.Mapping` still imports; the choice and its evidence are
/// in the status.
#[test]
fn a_2019_commit_builds_with_python_3_9() {
    let tb = builder("py2019");
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("old");
    let (base, patched) = old_python(
        &repo,
        "2019-06-01T12:00:00Z",
        "2019-06-02T12:00:00Z",
        ("setup.py", SETUP_2019),
    );
    let s = tb.builder.build_one(
        &etip("py2019", Language::Python, &repo, &base, &patched),
        &no_events,
    );
    assert_built(&s);
    let tc = s.toolchain.clone().unwrap();
    assert_eq!(tc.version, "3.9", "{tc:?}");
    assert_eq!(tc.replaced, None);
    assert!(
        tc.evidence
            .iter()
            .any(|e| e.contains("classifiers") && e.contains("3.7")),
        "{tc:?}"
    );
    assert!(tc.why.contains("3.9"), "{tc:?}");
    assert!(s.layers[0].tag.contains(":bullseye-"), "{:?}", s.layers[0]);
    let year = s.commit_time.map(|t| t / 86_400 / 365 + 1970);
    assert_eq!(year, Some(2019));
    let image = s.image.unwrap();
    let version = output(
        &tb,
        &image,
        &["/opt/etip/venvs/original/bin/python", "--version"],
    );
    assert!(version.starts_with("Python 3.9"), "{version}");
}

/// A commit of 2023 that declares nothing gets the Python of 2023 that is configured (3.11);
/// its smoke check fails on `from collections import Mapping`, which reads as the interpreter
/// being too new, and the next older one (3.9) is tried once and builds.
#[test]
fn an_interpreter_too_new_for_the_code_is_replaced_once() {
    let tb = builder("pyretry");
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("old");
    // No version in it; a setup.py, because bullseye's pip 20.3 installs editable from one only.
    let setup =
        "from setuptools import setup\n\nsetup(name='old', version='1.0', packages=['old'])\n";
    let (base, patched) = old_python(
        &repo,
        "2023-06-01T12:00:00Z",
        "2023-06-02T12:00:00Z",
        ("setup.py", setup),
    );
    let s = tb.builder.build_one(
        &etip("pyretry", Language::Python, &repo, &base, &patched),
        &no_events,
    );
    assert_built(&s);
    let tc = s.toolchain.clone().unwrap();
    assert_eq!(tc.version, "3.9", "{tc:?}");
    assert_eq!(tc.replaced.as_deref(), Some("3.11"), "{tc:?}");
    assert!(tc.why.contains("collections"), "{tc:?}");
    let log = std::fs::read_to_string(
        etip_build::output::log_dir(tb.out.path(), "pyretry").join("build.log"),
    )
    .unwrap_or_default();
    assert!(log.contains("trying Python 3.9 once"), "{log}");
}

/// A project that declares only Python 2 is `interpreter_unavailable`: no configured image has
/// Python 2.7, and the detail names the registry image that would.
#[test]
fn python_2_only_is_interpreter_unavailable() {
    let tb = builder("py27");
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("py27");
    let setup = "from setuptools import setup\nsetup(name='x', classifiers=['Programming Language :: Python :: 2.7', 'Programming Language :: Python :: 2 :: Only'])\n";
    let base = commit_at(
        &repo,
        "2014-03-01T00:00:00Z",
        &[("setup.py", setup), ("x.py", "a = 1\n")],
        "a Python 2 project",
    );
    let patched = commit_at(
        &repo,
        "2014-03-02T00:00:00Z",
        &[("x.py", "a = 2\n")],
        "a change",
    );
    let s = tb.builder.build_one(
        &etip("py27", Language::Python, &repo, &base, &patched),
        &no_events,
    );
    assert_eq!(
        s.failure,
        Some(FailureKind::InterpreterUnavailable),
        "{s:?}"
    );
    assert_eq!(s.reason.as_deref(), Some("no image for Python 2.7"));
    let detail = s.detail.unwrap_or_default();
    assert!(detail.contains("python:2.7"), "{detail}");
    assert!(detail.contains("classifiers"), "{detail}");
    assert!(s.layers.is_empty(), "nothing was built: {:?}", s.layers);
}

/// A Maven project pinned to plugin versions Debian's repository of `suite` has.
fn maven_project(
    repo: &Path,
    when: &str,
    release: &str,
    plugins: [&str; 3],
    junit: &str,
) -> (String, String) {
    let [resources, compiler, surefire] = plugins;
    let pom = format!(
        r#"<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>demo</groupId>
  <artifactId>era</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>{release}</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>{junit}</version><scope>test</scope></dependency>
  </dependencies>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>{resources}</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>{compiler}</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>{surefire}</version></plugin>
  </plugins></build>
</project>
"#
    );
    let main = "package demo;\n\npublic class Join {\n    public static String join(String[] parts) {\n        String out = \"\";\n        for (String p : parts) out += p;\n        return out;\n    }\n}\n";
    let test = "package demo;\n\nimport org.junit.Test;\nimport static org.junit.Assert.assertEquals;\n\npublic class JoinTest {\n    @Test public void joins() { assertEquals(\"ab\", Join.join(new String[] {\"a\", \"b\"})); }\n}\n";
    let base = commit_at(
        repo,
        when,
        &[
            ("pom.xml", &pom),
            ("src/main/java/demo/Join.java", main),
            ("src/test/java/demo/JoinTest.java", test),
        ],
        "a Maven project",
    );
    let faster = main.replace(
        "String out = \"\";\n        for (String p : parts) out += p;\n        return out;",
        "return String.join(\"\", parts);",
    );
    let patched = commit_at(
        repo,
        when,
        &[("src/main/java/demo/Join.java", &faster)],
        "faster",
    );
    (base, patched)
}

/// `javac -version` of an image.
fn javac(tb: &common::TestBuilder, image: &str) -> String {
    output(tb, image, &["javac", "-version"]).trim().to_string()
}

/// A pom asking for release 11 builds offline on bullseye's JDK 11 (bullseye's Maven plugins),
/// one asking for release 21 on trixie's JDK 21, made the image's default over trixie's JDK 25.
#[test]
fn maven_projects_build_with_the_jdk_their_pom_asks_for() {
    let tb = builder("jdks");
    let tmp = tempfile::tempdir().unwrap();
    let (r11, r21) = (tmp.path().join("j11"), tmp.path().join("j21"));
    let (b11, p11) = maven_project(
        &r11,
        "2021-03-01T00:00:00Z",
        "11",
        ["3.1.0", "3.8.1", "2.22.3"],
        "4.13.1",
    );
    let (b21, p21) = maven_project(
        &r21,
        "2025-03-01T00:00:00Z",
        "21",
        ["3.3.1", "3.13.0", "2.22.3"],
        "4.13.2",
    );
    let statuses = tb.builder.build_all(
        &[
            etip("jdk11", Language::Java, &r11, &b11, &p11),
            etip("jdk21", Language::Java, &r21, &b21, &p21),
        ],
        1,
        &no_events,
    );
    for (s, jdk, suite) in [
        (&statuses[0], "11", "bullseye"),
        (&statuses[1], "21", "trixie"),
    ] {
        assert_built(s);
        let tc = s.toolchain.clone().unwrap();
        assert_eq!(tc.version, jdk, "{tc:?}");
        assert_eq!(tc.source, "pom.xml: maven.compiler.release", "{tc:?}");
        assert!(
            s.layers[0].tag.contains(&format!(":{suite}-")),
            "{:?}",
            s.layers[0]
        );
        let image = s.image.clone().unwrap();
        assert!(
            javac(&tb, &image).starts_with(&format!("javac {jdk}")),
            "{}",
            javac(&tb, &image)
        );
        let classes = output(
            &tb,
            &image,
            &["ls", "/work/original/target/test-classes/demo"],
        );
        assert!(classes.contains("JoinTest.class"), "{classes}");
    }
}
