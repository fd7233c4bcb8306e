//! Toolchain detection from repository files (rules §3).
//!
//! Java: `.java-version`, `.sdkmanrc`, `.mvn/jvm.config`, then the root `pom.xml` (compiler plugin
//! `release|target|source`, then the properties `maven.compiler.release|target|source` and
//! `java.version`, all with `${property}` expansion). Python: `.python-version`, `pyproject.toml`
//! (`project.requires-python`, Poetry's `python`), `setup.cfg` (`python_requires`), `setup.py`.
//!
//! Detection reads files through a closure so it works on a git tree without a checkout.

use std::collections::HashMap;

/// What a repository asks for, and where it says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// A JDK feature version (`"17"`) or a Python version/specifier (`"3.11.4"`, `">=3.8,<4"`).
    pub value: String,
    /// File and key, e.g. `"pom.xml: maven.compiler.release"`.
    pub source: String,
}

/// Normalises a Java version string: `1.8` → `8`, `17.0.2` → `17`, `temurin-21` → `21`,
/// `11.0.2-tem` → `11`.
pub fn normalize_jdk(raw: &str) -> Option<String> {
    let s = raw.trim();
    let start = s.find(|c: char| c.is_ascii_digit())?;
    let s = &s[start..];
    let mut parts = s.split(|c: char| !c.is_ascii_digit());
    let first: u32 = parts.next()?.parse().ok()?;
    let feature = if first == 1 {
        parts
            .next()
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(1)
    } else {
        first
    };
    (feature >= 5).then(|| feature.to_string())
}

/// Detects the JDK a Maven/Java repository asks for. `read` returns a file's text by path.
pub fn detect_jdk(read: &dyn Fn(&str) -> Option<String>) -> Option<Request> {
    if let Some(text) = read(".java-version")
        && let Some(v) = text.lines().next().and_then(normalize_jdk)
    {
        return Some(Request {
            value: v,
            source: ".java-version".into(),
        });
    }
    if let Some(text) = read(".sdkmanrc") {
        for line in text.lines() {
            if let Some(rest) = line.trim().strip_prefix("java=")
                && let Some(v) = normalize_jdk(rest)
            {
                return Some(Request {
                    value: v,
                    source: ".sdkmanrc: java".into(),
                });
            }
        }
    }
    if let Some(text) = read(".mvn/jvm.config")
        && let Some(v) = jdk_from_jvm_config(&text)
    {
        return Some(Request {
            value: v,
            source: ".mvn/jvm.config".into(),
        });
    }
    let pom = read("pom.xml")?;
    jdk_from_pom(&pom)
}

fn jdk_from_jvm_config(text: &str) -> Option<String> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    for (i, t) in tokens.iter().enumerate() {
        if *t == "--release"
            && let Some(v) = tokens.get(i + 1).and_then(|v| normalize_jdk(v))
        {
            return Some(v);
        }
        for key in [
            "-Dmaven.compiler.release=",
            "-Djava.version=",
            "-Dmaven.compiler.target=",
        ] {
            if let Some(v) = t.strip_prefix(key).and_then(normalize_jdk) {
                return Some(v);
            }
        }
    }
    None
}

/// A minimal XML element tree, enough for reading pom.xml and Maven's toolchains.xml.
#[derive(Debug, Default, Clone)]
pub(crate) struct Element {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) children: Vec<Element>,
}

impl Element {
    pub(crate) fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    pub(crate) fn path(&self, names: &[&str]) -> Option<&Element> {
        names.iter().try_fold(self, |e, n| e.child(n))
    }
}

/// Parses an XML document and returns its root element named `root` (`project`, `toolchains`).
pub(crate) fn parse_xml_root(text: &str, root: &str) -> Option<Element> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack: Vec<Element> = vec![Element::default()];
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) => stack.push(Element {
                name: String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
                ..Default::default()
            }),
            Event::Empty(e) => {
                let el = Element {
                    name: String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
                    ..Default::default()
                };
                stack.last_mut()?.children.push(el);
            }
            Event::Text(t) => stack
                .last_mut()?
                .text
                .push_str(&String::from_utf8_lossy(&t)),
            Event::CData(t) => stack
                .last_mut()?
                .text
                .push_str(&String::from_utf8_lossy(&t)),
            Event::End(_) => {
                let el = stack.pop()?;
                stack.last_mut()?.children.push(el);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let top = stack.pop()?;
    top.children.into_iter().find(|c| c.name == root)
}

/// Expands `${name}` references from `props` (repeatedly, to a fixed depth).
fn expand(value: &str, props: &HashMap<String, String>) -> String {
    let mut v = value.trim().to_string();
    for _ in 0..8 {
        let Some(start) = v.find("${") else { break };
        let Some(len) = v[start..].find('}') else {
            break;
        };
        let name = &v[start + 2..start + len];
        let Some(rep) = props.get(name) else { break };
        v = format!("{}{}{}", &v[..start], rep.trim(), &v[start + len + 1..]);
    }
    v
}

fn jdk_from_pom(text: &str) -> Option<Request> {
    let project = parse_xml_root(text, "project")?;
    let mut props: HashMap<String, String> = HashMap::new();
    if let Some(p) = project.child("properties") {
        for c in &p.children {
            props.insert(c.name.clone(), c.text.trim().to_string());
        }
    }
    let plugins = project
        .path(&["build", "plugins"])
        .into_iter()
        .chain(project.path(&["build", "pluginManagement", "plugins"]));
    for plugins in plugins {
        for plugin in plugins.children.iter().filter(|p| p.name == "plugin") {
            let is_compiler = plugin
                .child("artifactId")
                .is_some_and(|a| a.text.trim() == "maven-compiler-plugin");
            if !is_compiler {
                continue;
            }
            for key in ["release", "target", "source"] {
                if let Some(v) = plugin.path(&["configuration", key])
                    && let Some(n) = normalize_jdk(&expand(&v.text, &props))
                {
                    return Some(Request {
                        value: n,
                        source: format!("pom.xml: maven-compiler-plugin <{key}>"),
                    });
                }
            }
        }
    }
    for key in [
        "maven.compiler.release",
        "maven.compiler.target",
        "maven.compiler.source",
        "java.version",
    ] {
        if let Some(v) = props.get(key)
            && let Some(n) = normalize_jdk(&expand(v, &props))
        {
            return Some(Request {
                value: n,
                source: format!("pom.xml: {key}"),
            });
        }
    }
    None
}

/// Detects the Python version a repository asks for: `.python-version` first, then the
/// requirement of its packaging metadata ([`detect_python_requires`]).
pub fn detect_python(read: &dyn Fn(&str) -> Option<String>) -> Option<Request> {
    if let Some(text) = read(".python-version")
        && let Some(v) = text.lines().map(str::trim).find(|l| !l.is_empty())
    {
        return Some(Request {
            value: v.to_string(),
            source: ".python-version".into(),
        });
    }
    detect_python_requires(read)
}

/// The Python requirement of a project's packaging metadata, the versions it installs on:
/// `pyproject.toml` (`project.requires-python`, then Poetry's `python`, as PEP 440), `setup.cfg`
/// (`python_requires`), then `setup.py` (`python_requires="..."`).
pub fn detect_python_requires(read: &dyn Fn(&str) -> Option<String>) -> Option<Request> {
    if let Some(text) = read("pyproject.toml")
        && let Ok(doc) = toml::from_str::<toml::Table>(&text)
    {
        let get = |path: &[&str]| -> Option<String> {
            let mut v: &toml::Value = doc.get(path[0])?;
            for p in &path[1..] {
                v = v.get(p)?;
            }
            v.as_str().map(str::to_string)
        };
        if let Some(v) = get(&["project", "requires-python"]) {
            return Some(Request {
                value: v,
                source: "pyproject.toml: project.requires-python".into(),
            });
        }
        if let Some(v) = get(&["tool", "poetry", "dependencies", "python"]) {
            return Some(Request {
                value: poetry_to_pep440(&v),
                source: "pyproject.toml: tool.poetry.dependencies.python".into(),
            });
        }
    }
    if let Some(text) = read("setup.cfg") {
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("python_requires") {
                let v = rest.trim_start().trim_start_matches('=').trim();
                if !v.is_empty() {
                    return Some(Request {
                        value: v.to_string(),
                        source: "setup.cfg: python_requires".into(),
                    });
                }
            }
        }
    }
    if let Some(text) = read("setup.py")
        && let Some(at) = text.find("python_requires")
    {
        let rest = &text[at + "python_requires".len()..];
        let rest = rest.trim_start().strip_prefix('=')?.trim_start();
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let body = &rest[1..];
        let end = body.find(quote)?;
        return Some(Request {
            value: body[..end].to_string(),
            source: "setup.py: python_requires".into(),
        });
    }
    None
}

/// Poetry's constraint syntax as PEP 440: `^3.9` → `>=3.9,<4`, `~3.6` → `>=3.6,<3.7`, and each
/// alternative of `^2.7 || ^3.5` on its own (kept joined by `||`, which [`python_satisfies`] reads).
fn poetry_to_pep440(v: &str) -> String {
    if v.contains("||") {
        let parts: Vec<String> = v.split("||").map(poetry_to_pep440).collect();
        return parts.join(" || ");
    }
    let v = v.trim();
    if let Some(rest) = v.strip_prefix('^') {
        let rest = rest.trim();
        let major = rest.split('.').next().unwrap_or(rest);
        let next = major.parse::<u32>().map(|m| m + 1).unwrap_or(4);
        format!(">={rest},<{next}")
    } else if let Some(rest) = v.strip_prefix('~').filter(|r| !r.starts_with('=')) {
        let rest = rest.trim();
        let nums: Vec<u32> = rest.split('.').map_while(|p| p.parse().ok()).collect();
        match nums.as_slice() {
            [major] => format!(">={rest},<{}", major + 1),
            [major, minor, ..] => format!(">={rest},<{major}.{}", minor + 1),
            [] => format!("~={rest}"),
        }
    } else {
        v.to_string()
    }
}

fn version_tuple(v: &str) -> Option<Vec<u64>> {
    v.trim()
        .split('.')
        .take(2)
        .map(|p| p.trim().parse::<u64>().ok())
        .collect()
}

/// Whether Python `candidate` (`"3.11"`) satisfies `request`: an exact version (`"3.11.4"`,
/// compared at major.minor), a PEP 440 specifier set (`">=3.8,<4"`, `"~=3.9"`, `"==3.*"`), `*`
/// (any version) or alternatives joined by `||` (as Poetry writes them). Versions are compared at
/// major.minor precision.
pub fn python_satisfies(candidate: &str, request: &str) -> bool {
    let Some(cand) = version_tuple(candidate) else {
        return false;
    };
    if request.contains("||") {
        return request
            .split("||")
            .any(|alt| python_satisfies(candidate, alt));
    }
    let request = request.trim();
    if request == "*" {
        return true;
    }
    if request.starts_with(|c: char| c.is_ascii_digit()) {
        return version_tuple(request).is_some_and(|r| r == cand);
    }
    request
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .all(|clause| clause_holds(&cand, clause))
}

fn clause_holds(cand: &[u64], clause: &str) -> bool {
    let ops = ["===", "~=", "==", "!=", "<=", ">=", "<", ">"];
    let Some(op) = ops.iter().find(|o| clause.starts_with(**o)) else {
        return false;
    };
    let ver = clause[op.len()..].trim();
    let wildcard = ver.ends_with(".*");
    let ver = ver.trim_end_matches(".*");
    let Some(v) = version_tuple(ver) else {
        return false;
    };
    let n = v.len().min(cand.len());
    let c = &cand[..n];
    let v2 = &v[..n];
    match *op {
        "==" | "===" if wildcard => cand.starts_with(&v),
        "==" | "===" => c == v2,
        "!=" if wildcard => !cand.starts_with(&v),
        "!=" => c != v2,
        "<=" => c <= v2,
        ">=" => c >= v2,
        "<" => c < v2,
        ">" => c > v2,
        "~=" => {
            // ~=X.Y means >=X.Y, ==X.*
            c >= v2 && cand.first() == v.first()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = list
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |p: &str| map.get(p).cloned()
    }

    #[test]
    fn jdk_versions_normalise() {
        assert_eq!(normalize_jdk("1.8").as_deref(), Some("8"));
        assert_eq!(normalize_jdk("17.0.2").as_deref(), Some("17"));
        assert_eq!(normalize_jdk("temurin-21").as_deref(), Some("21"));
        assert_eq!(normalize_jdk("11.0.2-tem").as_deref(), Some("11"));
        assert_eq!(normalize_jdk("${x}"), None);
    }

    #[test]
    fn java_version_file_wins() {
        let f = files(&[(".java-version", "11\n"), ("pom.xml", "<project/>")]);
        let r = detect_jdk(&f).unwrap();
        assert_eq!(
            (r.value.as_str(), r.source.as_str()),
            ("11", ".java-version")
        );
    }

    #[test]
    fn sdkmanrc_and_jvm_config() {
        let f = files(&[(".sdkmanrc", "# tools\njava=21.0.1-tem\n")]);
        assert_eq!(detect_jdk(&f).unwrap().value, "21");
        let f = files(&[(".mvn/jvm.config", "-Xmx1g -Dmaven.compiler.release=11")]);
        assert_eq!(detect_jdk(&f).unwrap().value, "11");
    }

    #[test]
    fn pom_properties_with_expansion() {
        let pom = r#"<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <properties>
    <jdk>1.8</jdk>
    <java.version>${jdk}</java.version>
    <maven.compiler.source>${java.version}</maven.compiler.source>
  </properties>
</project>"#;
        let r = detect_jdk(&files(&[("pom.xml", pom)])).unwrap();
        assert_eq!(r.value, "8");
        assert_eq!(r.source, "pom.xml: maven.compiler.source");
    }

    #[test]
    fn compiler_plugin_configuration() {
        let pom = r#"<project>
  <properties><rel>17</rel><maven.compiler.source>1.8</maven.compiler.source></properties>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId>
      <configuration><release>${rel}</release></configuration></plugin>
  </plugins></build>
</project>"#;
        let r = detect_jdk(&files(&[("pom.xml", pom)])).unwrap();
        assert_eq!(r.value, "17");
        assert!(r.source.contains("maven-compiler-plugin"));
    }

    #[test]
    fn no_hint_means_none() {
        assert_eq!(
            detect_jdk(&files(&[("pom.xml", "<project></project>")])),
            None
        );
        assert_eq!(detect_python(&files(&[])), None);
    }

    #[test]
    fn python_sources() {
        let f = files(&[(
            "pyproject.toml",
            "[project]\nname='x'\nrequires-python = \">=3.8\"\n",
        )]);
        assert_eq!(detect_python(&f).unwrap().value, ">=3.8");
        let f = files(&[(
            "pyproject.toml",
            "[tool.poetry.dependencies]\npython = \"^3.9\"\n",
        )]);
        assert_eq!(detect_python(&f).unwrap().value, ">=3.9,<4");
        let f = files(&[("setup.cfg", "[options]\npython_requires = >=3.7\n")]);
        assert_eq!(detect_python(&f).unwrap().value, ">=3.7");
        let f = files(&[("setup.py", "setup(name='a', python_requires='>=3.6')")]);
        assert_eq!(detect_python(&f).unwrap().value, ">=3.6");
        let f = files(&[
            (".python-version", "3.12.1\n"),
            ("setup.cfg", "python_requires=>=3"),
        ]);
        assert_eq!(detect_python(&f).unwrap().value, "3.12.1");
        assert_eq!(detect_python_requires(&f).unwrap().value, ">=3");
    }

    #[test]
    fn poetry_constraints() {
        assert_eq!(poetry_to_pep440("~3.6"), ">=3.6,<3.7");
        assert_eq!(poetry_to_pep440("~3"), ">=3,<4");
        assert_eq!(poetry_to_pep440("~=3.6"), "~=3.6");
        assert_eq!(poetry_to_pep440("^2.7 || ^3.5"), ">=2.7,<3 || >=3.5,<4");
        assert!(python_satisfies("2.7", ">=2.7,<3 || >=3.5,<4"));
        assert!(!python_satisfies("3.4", ">=2.7,<3 || >=3.5,<4"));
        assert!(python_satisfies("3.9", ">=2.7,<3 || >=3.5,<4"));
        assert!(python_satisfies("3.9", "*"));
    }

    #[test]
    fn python_specifiers() {
        assert!(python_satisfies("3.11", ">=3.8"));
        assert!(python_satisfies("3.11", ">=3.8.1,<4"));
        assert!(!python_satisfies("3.11", "<3.10"));
        assert!(python_satisfies("3.11", "~=3.9"));
        assert!(python_satisfies("3.11", "==3.*"));
        assert!(!python_satisfies("3.11", "!=3.11.*"));
        assert!(python_satisfies("3.11", "3.11.4"));
        assert!(!python_satisfies("3.11", "3.12.1"));
        assert!(python_satisfies("3.11", "<=3.11"));
    }
}
