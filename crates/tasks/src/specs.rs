//! A benchmark's environment specs (`etip import --specs FILE`): per repository and version,
//! the Python version, the extra packages, the pre-install and install commands, in the shape
//! SWE-bench's harness keeps them (`MAP_REPO_VERSION_TO_SPECS`, as JSON:
//! `{"sympy/sympy": {"1.1": {"python": "3.9", "packages": "mpmath flake8", "pip_packages":
//! ["gmpy2"], "install": "python -m pip install -e .", ...}}}`). Each task whose repository and
//! version have a spec carries it ([`EnvironmentSpec`]) into `etip build`, which honours it
//! and records the source of each setting.

use crate::{Imported, ReadError};
use etip_core::task::EnvironmentSpec;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The specs of a file, by repository and version.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Specs {
    by: BTreeMap<(String, String), EnvironmentSpec>,
}

/// A version key as datasets write it (`1.1`, or the number `1.1`).
fn version_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn strings(key: &str, v: &Value) -> Result<Vec<String>, String> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{key} holds an item that is not a string ({i})"))
            })
            .collect(),
        other => Err(format!(
            "{key} is not a string or a list of strings ({other})"
        )),
    }
}

fn clip(v: &Value) -> String {
    etip_core::clip::clip(&v.to_string(), 120).into_owned()
}

/// One spec object as etip reads it; `source` names where it was read.
pub fn spec(source: String, o: &Map<String, Value>) -> Result<EnvironmentSpec, String> {
    let mut s = EnvironmentSpec {
        source,
        ..EnvironmentSpec::default()
    };
    for (k, v) in o {
        match k.as_str() {
            "python" => {
                s.python = Some(version_of(v).ok_or_else(|| format!("python is not a version ({v})"))?)
            }
            // SWE-bench's `packages` is a requirement list, or the name of the repository's
            // own requirements file, which etip's inference reads anyway.
            "packages" => match v {
                Value::String(p) if p.ends_with(".txt") || p.ends_with(".yml") || p.ends_with(".yaml") => {
                    s.not_used.push(format!(
                        "packages: {p} (the repository's own file: etip reads the build descriptors itself)"
                    ))
                }
                Value::String(p) => s.packages.extend(p.split_whitespace().map(str::to_string)),
                other => s.packages.extend(strings(k, other)?),
            },
            "pip_packages" => s.packages.extend(strings(k, v)?),
            "pre_install" => s.pre_install.extend(strings(k, v)?),
            "install" => s.install = v.as_str().map(str::to_string),
            _ => s.not_used.push(format!("{k}: {}", clip(v))),
        }
    }
    Ok(s)
}

/// Reads a specs file: a JSON object of repositories (`owner/name`), each an object of
/// versions, each a spec object. A malformed file or spec is an error naming it.
pub fn read_specs(path: &Path) -> Result<Specs, ReadError> {
    let shown = path.display().to_string();
    let text = etip_core::bounded::read_to_string_capped(path, 64 << 20).map_err(|source| {
        ReadError::Io {
            path: shown.clone(),
            source,
        }
    })?;
    let bad = |detail: String| ReadError::Shape {
        path: shown.clone(),
        detail,
    };
    let name = path
        .file_name()
        .map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
    let doc: Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON ({e})")))?;
    let Value::Object(repos) = doc else {
        return Err(bad("the document is not an object of repositories".into()));
    };
    let mut by = BTreeMap::new();
    for (repo, versions) in repos {
        let Value::Object(versions) = versions else {
            return Err(bad(format!("{repo}: not an object of versions")));
        };
        for (version, o) in versions {
            let Value::Object(o) = o else {
                return Err(bad(format!("{repo} {version}: not a spec object")));
            };
            let s = spec(format!("{name}: {repo} {version}"), &o)
                .map_err(|e| bad(format!("{repo} {version}: {e}")))?;
            by.insert((repo.clone(), version), s);
        }
    }
    if by.is_empty() {
        return Err(ReadError::Empty { path: shown });
    }
    Ok(Specs { by })
}

impl Specs {
    /// How many specs the file holds.
    pub fn len(&self) -> usize {
        self.by.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by.is_empty()
    }

    /// Gives each task the spec of its repository and version; a task without one gets a
    /// warning (its environment is inferred).
    pub fn attach(&self, imported: &mut Imported) {
        for t in &mut imported.tasks {
            let Some(version) = t.task.version.clone() else {
                t.warnings.push(
                    "no version: no environment spec applies (the environment is inferred)".into(),
                );
                continue;
            };
            match self.by.get(&(t.repo.clone(), version.clone())) {
                Some(s) => t.task.environment.spec = Some(s.clone()),
                None => t.warnings.push(format!(
                    "no environment spec for {} {version} (the environment is inferred)",
                    t.repo
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swebench_spec_is_read_setting_by_setting() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("specs.json");
        std::fs::write(
            &path,
            r#"{"sympy/sympy": {"1.1": {"python": "3.9", "packages": "mpmath flake8",
                 "pip_packages": ["gmpy2"], "install": "python -m pip install -e .",
                 "pre_install": ["apt-get install -y locales"], "test_cmd": "bin/test -C"},
                "1.12": {"python": 3.11, "packages": "requirements.txt"}}}"#,
        )
        .unwrap();
        let specs = read_specs(&path).unwrap();
        assert_eq!(specs.len(), 2);
        let s = &specs.by[&("sympy/sympy".to_string(), "1.1".to_string())];
        assert_eq!(s.source, "specs.json: sympy/sympy 1.1");
        assert_eq!(s.python.as_deref(), Some("3.9"));
        assert_eq!(s.packages, ["mpmath", "flake8", "gmpy2"]);
        assert_eq!(s.pre_install, ["apt-get install -y locales"]);
        assert_eq!(s.install.as_deref(), Some("python -m pip install -e ."));
        assert_eq!(s.not_used, [r#"test_cmd: "bin/test -C""#]);
        let s = &specs.by[&("sympy/sympy".to_string(), "1.12".to_string())];
        assert_eq!(s.python.as_deref(), Some("3.11"));
        assert!(s.packages.is_empty());
        assert!(
            s.not_used[0].starts_with("packages: requirements.txt"),
            "{s:?}"
        );
    }

    #[test]
    fn malformed_specs_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("specs.json");
        std::fs::write(&path, r#"{"a/b": {"1.0": {"pip_packages": [1]}}}"#).unwrap();
        let e = read_specs(&path).unwrap_err().to_string();
        assert!(e.contains("a/b 1.0") && e.contains("pip_packages"), "{e}");
        std::fs::write(&path, r#"["a"]"#).unwrap();
        assert!(read_specs(&path).is_err());
    }
}
