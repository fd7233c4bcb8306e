//! The Python env layer's dependencies: `scripts/etip_pydeps.py` on the descriptor folders of
//! `tests/fixtures/pydeps/<case>/` (run with the host's `python3`), and, against the real Docker
//! engine, the env layer installing them offline, recording the lock, failing with the
//! requirement named, and reporting a patch that changes the build descriptors.

mod common;

use common::{TestBuilder, builder_with, etip, fixture_repo};
use etip_build::config::EnvNetwork;
use etip_core::instance::{FailureKind, Language};
use etip_docker::{LABEL_NAMESPACE, Limits, RunSpec};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/etip_pydeps.py")
}

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pydeps")
        .join(name)
}

/// The script's JSON for a fixture case (`python3 etip_pydeps.py DIR`).
fn pydeps(name: &str) -> Value {
    let out = Command::new("python3")
        .arg(script())
        .arg(case(name))
        .output()
        .expect("running python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the script prints JSON")
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is not a list: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// `skipped` as (file, line, why).
fn skipped(v: &Value) -> Vec<(String, Option<u64>, String)> {
    v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["file"].as_str().unwrap().to_string(),
                s["line"].as_u64(),
                s["why"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn skip(file: &str, line: Option<u64>, why: &str) -> (String, Option<u64>, String) {
    (file.to_string(), line, why.to_string())
}

/// psf/requests at 314e7c9c: `setup.py` (install_requires, tests_require, extras_require bound
/// to module-level lists), `requirements-dev.txt` starting with `-e .[socks]`, tox.ini's
/// `-rrequirements-dev.txt` and extras. The project itself (by path: its name is computed) is
/// never a requirement; the second spelling of pytest is reported.
#[test]
fn requests_setup_py_and_requirements_dev() {
    let v = pydeps("requests");
    assert_eq!(
        strings(&v, "requirements"),
        [
            "charset_normalizer>=2,<4",
            "idna>=2.5,<4",
            "urllib3>=1.21.1,<3",
            "certifi>=2017.4.17",
            "pytest-httpbin==2.1.0",
            "pytest-cov",
            "pytest-mock",
            "pytest-xdist",
            "PySocks>=1.5.6, !=1.5.7",
            "pytest>=3",
            "httpbin~=0.10.0",
            "trustme",
            "wheel",
        ]
    );
    assert_eq!(
        skipped(&v),
        [skip(
            "requirements-dev.txt",
            Some(2),
            "pytest>=2.8.0,<9: duplicate of pytest>=3 (setup.py); the first spelling is kept"
        )]
    );
    let sources: Vec<String> = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{}: {}",
                s["file"].as_str().unwrap(),
                s["what"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        sources,
        [
            "setup.py: install_requires",
            "setup.py: tests_require",
            "requirements-dev.txt: requirements",
            "setup.py: extras_require[socks]",
            "tox.ini: [testenv] deps",
            "setup.py: extras_require[security]",
        ]
    );
    assert!(v["project"].is_null());
    assert_eq!(strings(&v, "constraints"), Vec::<String>::new());
}

/// Poetry: `^`, `~`, `*`, bare versions and table forms (extras, python, markers, several
/// constraints) as PEP 508; optional dependencies through a test-like extra; test and dev
/// groups, not docs; git and path dependencies and `||` reported.
#[test]
fn poetry_constraints_become_pep_508() {
    let v = pydeps("poetry");
    assert_eq!(v["project"], "timekeeper");
    assert_eq!(
        strings(&v, "requirements"),
        [
            "python-dateutil>=2.6,<3.0",
            "tzdata>=2020.1",
            r#"backports.zoneinfo>=0.2.1,<0.3.0; python_version < "3.9""#,
            r#"importlib-resources>=5.9,<5.10; python_version < "3.9""#,
            "pytzdata",
            "requests[socks]>=2.28,<3.0",
            r#"numpy>=1.24,<1.25; python_version >= "3.8" and python_version < "3.9""#,
            r#"numpy>=1.26,<2.0; python_version >= "3.9""#,
            "legacy-tz==1.2.3",
            "oldstyle",
            "time-machine>=2.6.0,<3.0.0; implementation_name != 'pypy'",
            "pytest>=7.2,<8.0",
            "pytest-mock>=3.10.0,<4.0.0",
            "pytest-benchmark>=0.0.3,<0.0.4",
            "black>=22.3,<23.0",
            "poetry-core>=1.0.0",
        ]
    );
    let deps = "[tool.poetry.dependencies]";
    assert_eq!(
        skipped(&v),
        [
            skip(
                "pyproject.toml",
                Some(21),
                &format!(
                    "{deps} zonefile = https://github.com/example/zonefile.git: a VCS dependency, not installed"
                )
            ),
            skip(
                "pyproject.toml",
                Some(22),
                &format!(
                    "{deps} localclock = ../localclock: a local path dependency, not installed"
                )
            ),
            skip(
                "pyproject.toml",
                Some(24),
                &format!(
                    "{deps} oldstyle: version constraint alternatives (~2.7 || ^3.4) have no PEP 508 form; installed without one"
                )
            ),
        ]
    );
}

/// PEP 621 dependencies and a test-like extra that names another extra of the project itself;
/// PEP 735 groups with `include-group` (test, dev; not lint); Hatch's default environment
/// (features are the project's extras) and PDM's test group (`-e file:///${PROJECT_ROOT}/`).
#[test]
fn pep_735_groups_hatch_and_pdm() {
    let v = pydeps("pep735");
    assert_eq!(v["project"], "fancy-lib");
    assert_eq!(
        strings(&v, "requirements"),
        [
            "attrs>=22.2",
            "typing-extensions>=4.5; python_version < '3.11'",
            "hypothesis>=6.70",
            "click>=8",
            "pytest>=7.4",
            "coverage[toml]>=7",
            "mypy==1.8.0",
            "pre-commit",
            "pytest-xdist",
            "pytest-benchmark>=4",
            "hatchling",
        ]
    );
    assert_eq!(
        skipped(&v),
        [
            skip(
                "pyproject.toml",
                Some(22),
                "extra 'yaml' is not declared by the project"
            ),
            skip(
                "pyproject.toml",
                Some(26),
                "vendored @ {root:uri}/vendor/vendored: a local path, not installed"
            ),
        ]
    );
}

/// setup.cfg's install_requires, test-like extra and tests_require; `requirements/*.txt` with
/// `-r` and `-c` relative to the file, hashes, options, VCS URLs, local paths and `-e .[testing]`
/// (the project, from the root); documentation requirements not read.
#[test]
fn setup_cfg_and_a_requirements_folder() {
    let v = pydeps("setupcfg");
    assert_eq!(v["project"], "tinyweb");
    assert_eq!(
        strings(&v, "requirements"),
        [
            "webob>=1.8.3",
            "plaster-pastedeploy",
            r#"importlib-metadata; python_version < "3.8""#,
            "webtest>=1.3.1",
            "pytest>=5.4.2",
            "pytest-cov",
            "coverage",
            "pytest-timeout==2.1.0",
            r#"mock; python_version < "3.3""#,
        ]
    );
    assert_eq!(strings(&v, "constraints"), ["webob<2", "urllib3<2"]);
    let test = "requirements/test.txt";
    assert_eq!(
        skipped(&v),
        [
            skip(
                test,
                Some(3),
                "--index-url https://pypi.example.org/simple: a pip option, not used (pip's settings come from the build's PIP_* variables)"
            ),
            skip(
                test,
                Some(6),
                "git+https://github.com/example/webtest-plugin.git#egg=webtest-plugin: a VCS URL, not installed"
            ),
            skip(
                test,
                Some(7),
                "../sibling-package: a local path, not installed"
            ),
            skip(
                test,
                Some(8),
                "./vendor/tinyweb_helpers-1.0-py3-none-any.whl: a local path, not installed"
            ),
            skip(
                "requirements/docs.txt",
                None,
                "documentation requirements, not needed to run the tests: not read"
            ),
        ]
    );
}

/// tox.ini's `[testenv] deps` with a `{[base]deps}` substitution and `-r{toxinidir}/...`, a
/// factor-conditional line and an `{env:...}` field; extras. setup.py's computed tests_require,
/// `**kwargs` and a conditional `.append` are reported, not evaluated.
#[test]
fn tox_ini_and_a_dynamic_setup_py() {
    let v = pydeps("tox");
    assert_eq!(v["project"], "confkit");
    assert_eq!(
        strings(&v, "requirements"),
        [
            "six>=1.12",
            "pytest>=6",
            "freezegun",
            "flake8",
            "coverage[toml]",
            "PyYAML>=5.1"
        ]
    );
    assert_eq!(
        skipped(&v),
        [
            skip(
                "setup.py",
                Some(22),
                r#"tests_require: read_requirements("test-requirements.txt") is computed; not evaluated"#
            ),
            skip(
                "setup.py",
                Some(24),
                r#"setup(**{"zip_safe": False}): keyword arguments not read statically"#
            ),
            skip(
                "setup.py",
                Some(13),
                r#"install_requires.append("enum34"): changes install_requires; not evaluated"#
            ),
            skip(
                "tox.ini",
                Some(12),
                "py38: importlib-resources: a tox factor-conditional dependency, not evaluated"
            ),
            skip(
                "tox.ini",
                Some(13),
                "attrs>={env:ATTRS_MIN:21.3}: a {...} field of the tool's templating, not a requirement"
            ),
        ]
    );
}

/// setuptools' dynamic `file =` dependencies and optional dependencies; a self-reference with
/// an extra inside one of them; pytest added when the project does not name it.
#[test]
fn setuptools_dynamic_files() {
    let v = pydeps("dynamic");
    assert_eq!(
        strings(&v, "requirements"),
        [
            "anyio>=3.6,<5",
            "sniffio",
            "pytest-asyncio>=0.21",
            r#"uvloop>=0.17; sys_platform != "win32""#,
            "setuptools>=64",
            "pytest",
        ]
    );
    assert_eq!(skipped(&v), []);
    let last = v["sources"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["what"], "pytest, always installed");
}

/// Without a TOML parser (Python < 3.11 without tomli), pyproject.toml is reported, not read;
/// the script parses as Python 3.8.
#[test]
fn runs_on_older_pythons() {
    let check = Command::new("python3")
        .arg("-c")
        .arg("import ast, sys; ast.parse(open(sys.argv[1]).read(), feature_version=(3, 8))")
        .arg(script())
        .status()
        .unwrap();
    assert!(check.success(), "the script is not Python 3.8 syntax");
    let run = "import sys\n\
               for m in ('tomllib', 'tomli', 'pip._vendor.tomli', 'pip._vendor.toml'): sys.modules[m] = None\n\
               sys.argv = [sys.argv[1], sys.argv[2]]\n\
               exec(compile(open(sys.argv[0]).read(), sys.argv[0], 'exec'), {'__name__': '__main__'})\n";
    let out = Command::new("python3")
        .arg("-c")
        .arg(run)
        .arg(script())
        .arg(case("pep735"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(strings(&v, "requirements"), ["pytest"]);
    assert_eq!(
        skipped(&v),
        [skip(
            "pyproject.toml",
            None,
            "no TOML parser in this Python (tomllib is 3.11+, tomli is not installed): not read"
        )]
    );
}

// ------------------------------------------------------------------------------------------
// The env layer, with the real engine (offline: network none).

/// A builder in its own namespace whose env layer has no network (the tests never reach an
/// index); its images are removed on drop.
fn offline_builder(name: &str) -> TestBuilder {
    builder_with(name, |cfg| cfg.env_network = EnvNetwork::None)
}

/// A commit on top of `parent` (the fixture's HEAD is its broken step) whose `[project]` table
/// declares `dependencies = [deps]`.
fn commit_declaring(repo: &Path, parent: &str, deps: &str, message: &str) -> String {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["checkout", "-q", parent]);
    let path = repo.join("pyproject.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replace(
        "requires-python = \">=3.8\"\n",
        &format!("requires-python = \">=3.8\"\ndependencies = [{deps}]\n"),
    );
    std::fs::write(&path, text).unwrap();
    git(&["commit", "-q", "-am", message]);
    git(&["rev-parse", "HEAD"])
}

/// Offline, the Python fixture still builds: its only requirement (pytest) is satisfied by the
/// base image, so pip needs no index. The env image keeps the requirements and the lock; the
/// patched commit's new dependency declaration is reported in the status and the log.
#[test]
fn env_layer_installs_declared_requirements_offline_and_reports_descriptor_changes() {
    let tb = offline_builder("pydeps");
    let (_tmp, repo, c) = fixture_repo("python");
    let patched = commit_declaring(&repo, &c[1], "\"pytest>=3\"", "declare pytest");
    let s = tb.builder.build_one(
        &etip("py-deps", Language::Python, &repo, &c[0], &patched),
        &|_| {},
    );
    assert!(
        s.failure.is_none(),
        "{:?} {:?}",
        s.reason,
        s.detail.as_deref().unwrap_or("")
    );
    assert_eq!(
        s.dependency_changes,
        ["pyproject.toml changed: + `dependencies = [\"pytest>=3\"]`"]
    );
    let log = std::fs::read_to_string(
        etip_build::output::log_dir(tb.out.path(), "py-deps").join("build.log"),
    )
    .unwrap();
    for expected in [
        "etip: 2 Python requirements (/opt/etip/requirements.txt):",
        "  setuptools>=61\n  pytest\n",
        "etip: the env venv holds (/opt/etip/env-lock.txt):",
        "etip:   pyproject.toml changed: + `dependencies = [\"pytest>=3\"]`",
    ] {
        assert!(log.contains(expected), "{expected:?} not in:\n{log}");
    }
    let spec = RunSpec::new(
        s.image.clone().unwrap(),
        [
            "sh",
            "-c",
            "cat /opt/etip/requirements.txt; echo --; cat /opt/etip/env-lock.txt",
        ],
    )
    .limits(Limits {
        cpus: 1.0,
        memory_bytes: 1 << 30,
        timeout: Duration::from_secs(120),
        pids: 256,
    })
    .label(LABEL_NAMESPACE, tb.ns.clone());
    let out = tb.builder.block_on(tb.builder.engine().run(&spec)).unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
    let (reqs, lock) = out.stdout.split_once("--\n").unwrap();
    assert_eq!(reqs, "setuptools>=61\npytest\n");
    assert!(
        lock.lines().any(|l| l.starts_with("pytest==")),
        "no pytest in the lock:\n{lock}"
    );
}

/// A declared requirement pip cannot download (no network in the env layer) fails the instance
/// with `dependency_resolution`, the requirement named in the reason.
#[test]
fn unavailable_requirement_is_dependency_resolution_naming_it() {
    let tb = offline_builder("pydeps-absent");
    let (_tmp, repo, c) = fixture_repo("python");
    let absent = "\"etip-absent-package>=1.0\"";
    let head = commit_declaring(&repo, &c[0], absent, "depend on a package nobody has");
    let s = tb.builder.build_one(
        &etip("py-absent", Language::Python, &repo, &head, &head),
        &|_| {},
    );
    assert_eq!(
        s.failure,
        Some(FailureKind::DependencyResolution),
        "{:?}",
        s.detail
    );
    assert_eq!(
        s.reason.as_deref(),
        Some("dependency resolution failed: etip-absent-package>=1.0 (pip exit 1)")
    );
    assert!(s.dependency_changes.is_empty());
}

/// setup.py requirements formatted from module-level strings are evaluated: sympy of 2019 named
/// mpmath as `'mpmath>=%s' % mpmath_version`, and without it the env layer lacked mpmath.
#[test]
fn setup_py_formatted_requirements() {
    let v = pydeps("setupformat");
    assert_eq!(
        strings(&v, "requirements"),
        [
            "mpmath>=0.19",
            "numpy>=1.15",
            "pytest>=1.15",
            "hypothesis>=4"
        ]
    );
    assert_eq!(skipped(&v), []);
}

/// pipenv's Pipfile (psf/requests of 2019: its test and documentation tools are dev-packages,
/// and `--doctest-modules` imports the docs' theme, which needs Sphinx's Pygments): versions,
/// `*`, platform keys and markers, extras; the project itself by path brings its extras; a VCS
/// source is reported.
#[test]
fn pipfile_packages_and_dev_packages() {
    let v = pydeps("pipfile");
    assert_eq!(
        strings(&v, "requirements"),
        [
            "chardet>=3.0.2,<3.1.0",
            "idna>=2.5,<2.9",
            "PySocks>=1.5.6, !=1.5.7",
            "pytest>=2.8.0,<=3.10.1",
            "codecov",
            "pytest-httpbin>=0.0.7,<1.0",
            "sphinx<=1.5.5",
            "flake8",
            "pywin32; (sys_platform == 'win32')",
            "requests-toolbelt[socks]>=0.8; (python_version >= '3')",
        ]
    );
    assert_eq!(
        skipped(&v),
        [skip(
            "Pipfile",
            Some(14),
            "[dev-packages] httpbin: a VCS source (git), not installed"
        )]
    );
}
