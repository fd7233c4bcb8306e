//! The Python versions a commit says it supports, read from its packaging, test and CI files.

use super::{Evidence, PyVersion, PythonSupport, yaml};
use crate::detect;

/// Reads what a commit's files say about the Python versions it supports.
///
/// `paths` are the commit's file paths (to find its GitHub workflows); `read` returns a file's text
/// by repository path. The hard requirement is that of [`detect::detect_python_requires`]; the
/// declared versions come from trove classifiers (`Programming Language :: Python :: 3.5` in
/// `setup.py`, `setup.cfg` and `pyproject.toml`), the `tox.ini` `envlist` (`py27`, `py3{5,6}`),
/// the `python:` lists of `.travis.yml`, the `python-version:` values and matrices of
/// `.github/workflows/*.yml`, AppVeyor's `PYTHON_VERSION` and `PYTHON` paths, `.python-version`
/// and Heroku's `runtime.txt`. Only Python 2 and 3 versions (`major.minor`) count; PyPy, `nightly`
/// and `3.x` do not.
pub fn python_support(paths: &[&str], read: &dyn Fn(&str) -> Option<String>) -> PythonSupport {
    let requires = detect::detect_python_requires(read);
    let mut evidence: Vec<Evidence> = requires
        .iter()
        .map(|r| Evidence {
            source: r.source.clone(),
            says: r.value.clone(),
        })
        .collect();
    let mut versions: Vec<PyVersion> = Vec::new();
    let mut add = |source: String, mut found: Vec<PyVersion>| {
        found.sort();
        found.dedup();
        if found.is_empty() {
            return;
        }
        let says: Vec<String> = found.iter().map(PyVersion::to_string).collect();
        versions.extend(&found);
        evidence.push(Evidence {
            source,
            says: says.join(", "),
        });
    };
    for file in ["setup.py", "setup.cfg", "pyproject.toml"] {
        if let Some(text) = read(file) {
            add(format!("{file}: classifiers"), classifiers(&text));
        }
    }
    if let Some(text) = read("tox.ini") {
        add("tox.ini: envlist".into(), tox_envlist(&text));
    }
    if let Some(text) = read(".travis.yml") {
        add(
            ".travis.yml: python".into(),
            yaml_versions(&text, &["python"]),
        );
    }
    for path in workflows(paths) {
        if let Some(text) = read(path) {
            let keys = ["python-version", "python"];
            add(
                format!("{path}: python-version"),
                yaml_versions(&text, &keys),
            );
        }
    }
    for file in ["appveyor.yml", ".appveyor.yml"] {
        if let Some(text) = read(file) {
            add(format!("{file}: PYTHON_VERSION"), appveyor(&text));
        }
    }
    for (file, prefix) in [(".python-version", ""), ("runtime.txt", "python-")] {
        if let Some(text) = read(file) {
            add(
                file.into(),
                first_line_version(&text, prefix).into_iter().collect(),
            );
        }
    }
    versions.sort();
    versions.dedup();
    PythonSupport {
        requires,
        versions,
        evidence,
    }
}

/// The GitHub workflow files among `paths` (`.github/workflows/*.yml|*.yaml`), sorted.
fn workflows<'a>(paths: &[&'a str]) -> Vec<&'a str> {
    let mut found: Vec<&str> = paths
        .iter()
        .copied()
        .filter(|p| {
            p.strip_prefix(".github/workflows/").is_some_and(|name| {
                !name.contains('/') && (name.ends_with(".yml") || name.ends_with(".yaml"))
            })
        })
        .collect();
    found.sort_unstable();
    found
}

/// The versions of the trove classifiers `Programming Language :: Python :: X.Y` anywhere in the
/// text (string literals of `setup.py`, `setup.cfg` lines, `pyproject.toml` arrays).
fn classifiers(text: &str) -> Vec<PyVersion> {
    text.match_indices("Programming Language")
        .filter_map(|(at, _)| {
            let rest = &text[at..];
            let end = rest.find(['"', '\'', '\n', ',']).unwrap_or(rest.len());
            let parts: Vec<&str> = rest[..end].split("::").map(str::trim).collect();
            match parts.as_slice() {
                [_, "Python", v] => v.parse::<PyVersion>().ok(),
                _ => None,
            }
        })
        .filter(|v| v.major == 2 || v.major == 3)
        .collect()
}

/// The versions of the `py` environments in `tox.ini`'s `[tox] envlist` (`py27`, `py3{5,6}`,
/// `py{27,36}-django{18,19}`, `py3.10`); PyPy and bare `py3` are not versions.
fn tox_envlist(text: &str) -> Vec<PyVersion> {
    let Some(list) = tox_envlist_text(text) else {
        return Vec::new();
    };
    split_outside_braces(&list)
        .into_iter()
        .flat_map(|item| expand_braces(item, 0))
        .flat_map(|env| {
            env.split('-')
                .filter_map(tox_factor_version)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The raw value of `envlist` (or `env_list`) in the `[tox]` section, continuation lines included.
fn tox_envlist_text(text: &str) -> Option<String> {
    let mut in_tox = false;
    let mut value: Option<String> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(v) = value.as_mut() {
            let continues = line.starts_with([' ', '\t']) && !t.is_empty();
            if !continues {
                break;
            }
            if !t.starts_with('#') {
                v.push('\n');
                v.push_str(t);
            }
            continue;
        }
        if t.starts_with('[') {
            in_tox = t == "[tox]";
        } else if in_tox
            && let Some((key, v)) = t.split_once('=')
            && matches!(key.trim(), "envlist" | "env_list")
        {
            value = Some(v.trim().to_string());
        }
    }
    value
}

/// Splits a tox list at commas, spaces and newlines that are not inside braces.
fn split_outside_braces(list: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (at, c) in list.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' | '\n' | ' ' | '\t' if depth == 0 => {
                items.push(&list[start..at]);
                start = at + c.len_utf8();
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    items
        .into_iter()
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .collect()
}

/// Expands tox's brace groups: `py{27,36}-a` → `py27-a`, `py36-a`.
fn expand_braces(item: &str, depth: usize) -> Vec<String> {
    let group = item
        .find('{')
        .and_then(|open| Some((open, open + item[open..].find('}')?)));
    let Some((open, close)) = group.filter(|_| depth < 8) else {
        return vec![item.to_string()];
    };
    let (head, tail) = (&item[..open], &item[close + 1..]);
    item[open + 1..close]
        .split(',')
        .flat_map(|alt| expand_braces(&format!("{head}{}{tail}", alt.trim()), depth + 1))
        .collect()
}

/// The Python version of a tox factor: `py27` → 2.7, `py310` → 3.10, `py3.10` → 3.10.
fn tox_factor_version(factor: &str) -> Option<PyVersion> {
    let digits = factor.strip_prefix("py")?;
    let mut chars = digits.chars();
    let major = chars.next()?.to_digit(10)?;
    let minor = chars.as_str().trim_start_matches('.');
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let minor = minor.parse().ok()?;
    (major == 2 || major == 3).then_some(PyVersion::new(major, minor))
}

/// The Python versions among the raw values of `keys` in a YAML file.
fn yaml_versions(text: &str, keys: &[&str]) -> Vec<PyVersion> {
    keys.iter()
        .flat_map(|key| yaml::values(text, key))
        .filter_map(|v| PyVersion::lenient(&v))
        .collect()
}

/// AppVeyor's `PYTHON_VERSION: "3.6"` values and `PYTHON: "C:\\Python36-x64"` install paths.
fn appveyor(text: &str) -> Vec<PyVersion> {
    let mut found = yaml_versions(text, &["PYTHON_VERSION"]);
    for path in yaml::values(text, "PYTHON") {
        let lower = path.to_ascii_lowercase();
        let Some(at) = lower.rfind("python") else {
            continue;
        };
        let rest = &lower[at + "python".len()..];
        let digits: &str = &rest[..rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len())];
        if (2..=3).contains(&digits.len())
            && let Some(v) = tox_factor_version(&format!("py{digits}"))
        {
            found.push(v);
        }
    }
    found
}

/// The version on the first non-empty line, after `prefix` (`.python-version`: `3.6.1`;
/// `runtime.txt`: `python-3.6.2`).
fn first_line_version(text: &str, prefix: &str) -> Option<PyVersion> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    PyVersion::lenient(line.strip_prefix(prefix).unwrap_or(line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn files(list: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> = list
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |p: &str| map.get(p).cloned()
    }

    fn vs(list: &[PyVersion]) -> Vec<String> {
        list.iter().map(PyVersion::to_string).collect()
    }

    #[test]
    fn setup_py_classifier_literals() {
        let setup = r#"
from setuptools import setup
PYTHONS = ['Programming Language :: Python :: 2.6', "Programming Language :: Python :: 2.7"]
setup(
    name='requests',
    classifiers=PYTHONS + (
        'Programming Language :: Python',
        'Programming Language :: Python :: 3',
        'Programming Language :: Python :: 3.3',
        'Programming Language :: Python :: 3.4',
        'Programming Language :: Python :: 3.5',
        'Programming Language :: Python :: 3 :: Only',
        'Programming Language :: Python :: Implementation :: PyPy',
    ),
)"#;
        let support = python_support(&["setup.py"], &files(&[("setup.py", setup)]));
        assert_eq!(vs(&support.versions), ["2.6", "2.7", "3.3", "3.4", "3.5"]);
        assert_eq!(support.requires, None);
        assert_eq!(
            support.evidence,
            [Evidence {
                source: "setup.py: classifiers".into(),
                says: "2.6, 2.7, 3.3, 3.4, 3.5".into(),
            }]
        );
    }

    #[test]
    fn setup_cfg_and_pyproject_classifiers_and_requirement() {
        let cfg = "[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.7\n    \
                   Programming Language :: Python :: 3.8\n[options]\npython_requires = >=3.7\n";
        let pyproject = "[project]\nname = \"x\"\nrequires-python = \">=3.9\"\nclassifiers = [\n  \
                         \"Programming Language :: Python :: 3.10\",\n  \
                         \"Programming Language :: Python :: 3.12\",\n]\n";
        let read = files(&[("setup.cfg", cfg), ("pyproject.toml", pyproject)]);
        let support = python_support(&[], &read);
        assert_eq!(vs(&support.versions), ["3.7", "3.8", "3.10", "3.12"]);
        let requires = support.requires.as_ref().map(|r| r.value.as_str());
        assert_eq!(requires, Some(">=3.9"));
        let sources: Vec<&str> = support.evidence.iter().map(|e| e.source.as_str()).collect();
        assert_eq!(
            sources,
            [
                "pyproject.toml: project.requires-python",
                "setup.cfg: classifiers",
                "pyproject.toml: classifiers"
            ]
        );
    }

    #[test]
    fn tox_envlists() {
        let tox = "[testenv]\ndeps = pytest\n[tox]\nenvlist = py{26,27,33,34}, pypy, flake8\n";
        assert_eq!(vs(&tox_envlist(tox)), ["2.6", "2.7", "3.3", "3.4"]);
        let tox = "[tox]\nenvlist =\n    py27, py34-{a,b},\n    # old\n    py3{5,6}\n    \
                   py{37,38}-django{111,22}, pypy3, py3, py310\nskipsdist = true\n";
        assert_eq!(
            vs(&tox_envlist(tox)),
            [
                "2.7", "3.4", "3.4", "3.5", "3.6", "3.7", "3.7", "3.8", "3.8", "3.10"
            ]
        );
        assert_eq!(
            vs(&tox_envlist("[tox]\nenv_list = py3.11, lint\n")),
            ["3.11"]
        );
        assert!(tox_envlist("[testenv]\nenvlist = py27\n").is_empty());
    }

    #[test]
    fn travis_lists_and_includes() {
        let travis = r#"language: python
python:
  - "2.7"
  - 3.6
  - "3.7-dev"
  - nightly
  - pypy
matrix:
  include:
    - python: 3.8
      dist: xenial
"#;
        let support = python_support(&[], &files(&[(".travis.yml", travis)]));
        assert_eq!(vs(&support.versions), ["2.7", "3.6", "3.7", "3.8"]);
        assert_eq!(support.evidence[0].source, ".travis.yml: python");
        let scalar = "language: python\npython: 3.5\n";
        assert_eq!(vs(&yaml_versions(scalar, &["python"])), ["3.5"]);
    }

    #[test]
    fn workflow_matrices_keep_the_written_version() {
        let ci = r#"jobs:
  test:
    strategy:
      matrix:
        python-version: ["3.8", "3.9", "3.10", 3.11, pypy-3.9, "3.x"]
    steps:
      - uses: actions/setup-python@v4
        with:
          python-version: ${{ matrix.python-version }}
"#;
        let lint = "jobs:\n  lint:\n    steps:\n      - with:\n          python-version: '3.12'\n";
        let paths = [
            ".github/workflows/lint.yaml",
            ".github/workflows/ci.yml",
            ".github/workflows/scripts/x.yml",
            "docs/ci.yml",
        ];
        let read = files(&[
            (".github/workflows/ci.yml", ci),
            (".github/workflows/lint.yaml", lint),
            (".github/workflows/scripts/x.yml", "python-version: 2.7"),
        ]);
        let support = python_support(&paths, &read);
        assert_eq!(
            vs(&support.versions),
            ["3.8", "3.9", "3.10", "3.11", "3.12"]
        );
        let sources: Vec<&str> = support.evidence.iter().map(|e| e.source.as_str()).collect();
        assert_eq!(
            sources,
            [
                ".github/workflows/ci.yml: python-version",
                ".github/workflows/lint.yaml: python-version"
            ]
        );
        let block = "matrix:\n  python-version:\n    - '3.10'\n    - 3.9\n";
        assert_eq!(
            vs(&yaml_versions(block, &["python-version"])),
            ["3.10", "3.9"]
        );
    }

    #[test]
    fn python_version_runtime_txt_and_appveyor() {
        let read = files(&[(".python-version", "\n3.6.1\n3.7.0\n")]);
        let support = python_support(&[], &read);
        assert_eq!(vs(&support.versions), ["3.6"]);
        assert_eq!(support.requires, None, ".python-version is no requirement");
        assert_eq!(support.evidence[0].source, ".python-version");
        let read = files(&[("runtime.txt", "python-3.6.2\n")]);
        assert_eq!(vs(&python_support(&[], &read).versions), ["3.6"]);
        let appveyor_yml = r#"environment:
  matrix:
    - PYTHON: "C:\\Python27-x64"
    - PYTHON: "C:\\Python35"
      PYTHON_VERSION: "3.5.x"
    - PYTHON_VERSION: "3.6"
"#;
        assert_eq!(vs(&appveyor(appveyor_yml)), ["3.5", "3.6", "2.7", "3.5"]);
    }

    #[test]
    fn nothing_said() {
        let support = python_support(&["README.md"], &files(&[("README.md", "py27")]));
        assert_eq!(support, PythonSupport::default());
    }
}
