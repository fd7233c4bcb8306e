//! The JDK a commit builds with, when its build files say nothing: its CI files and Maven
//! toolchains.

use crate::detect::{self, Request, normalize_jdk, parse_xml_root};

use super::yaml;

/// The JDK feature version a commit asks for, and where it says so.
///
/// In order: [`detect::detect_jdk`] (`.java-version`, `.sdkmanrc`, `.mvn/jvm.config`, the root
/// `pom.xml`'s compiler settings); then CI: `.travis.yml` `jdk:` (`openjdk8`, `oraclejdk8`, lists)
/// and the `java-version:` values and `java:` matrices of `.github/workflows/*.yml`; then Maven
/// toolchains: a `toolchains.xml` jdk toolchain's `<version>` and the `pom.xml`'s
/// maven-toolchains-plugin `<jdk><version>`. Where a file lists several JDKs the oldest counts: the
/// one the project was certainly built with.
pub fn jdk_evidence(paths: &[&str], read: &dyn Fn(&str) -> Option<String>) -> Option<Request> {
    detect::detect_jdk(read)
        .or_else(|| {
            let text = read(".travis.yml")?;
            oldest(yaml::values(&text, "jdk"), ".travis.yml: jdk".into())
        })
        .or_else(|| workflows_jdk(paths, read))
        .or_else(|| toolchains_xml_jdk(paths, read))
        .or_else(|| pom_toolchains_jdk(&read("pom.xml")?))
}

/// The oldest JDK among raw CI values, as a request from `source`.
fn oldest(values: Vec<String>, source: String) -> Option<Request> {
    let oldest = values
        .iter()
        .filter(|v| !v.starts_with('$'))
        .filter_map(|v| normalize_jdk(v)?.parse::<u32>().ok())
        .min()?;
    Some(Request {
        value: oldest.to_string(),
        source,
    })
}

/// The oldest JDK of the GitHub workflows' `java-version:` values and `java:` matrices.
fn workflows_jdk(paths: &[&str], read: &dyn Fn(&str) -> Option<String>) -> Option<Request> {
    let mut workflows: Vec<&str> = paths
        .iter()
        .copied()
        .filter(|p| {
            p.strip_prefix(".github/workflows/").is_some_and(|name| {
                !name.contains('/') && (name.ends_with(".yml") || name.ends_with(".yaml"))
            })
        })
        .collect();
    workflows.sort_unstable();
    workflows
        .into_iter()
        .filter_map(|path| {
            let text = read(path)?;
            let mut values = yaml::values(&text, "java-version");
            values.extend(yaml::values(&text, "java"));
            oldest(values, format!("{path}: java-version"))
        })
        .min_by_key(|r| r.value.parse::<u32>().unwrap_or(u32::MAX))
}

/// The oldest JDK a `toolchains.xml` provides (`<toolchain><type>jdk</type><provides><version>`).
fn toolchains_xml_jdk(paths: &[&str], read: &dyn Fn(&str) -> Option<String>) -> Option<Request> {
    let mut files: Vec<&str> = paths
        .iter()
        .copied()
        .filter(|p| p.rsplit('/').next() == Some("toolchains.xml"))
        .collect();
    files.sort_by_key(|p| (p.matches('/').count(), *p));
    files.into_iter().find_map(|path| {
        let root = parse_xml_root(&read(path)?, "toolchains")?;
        let versions = root
            .children
            .iter()
            .filter(|t| t.name == "toolchain")
            .filter(|t| t.child("type").is_some_and(|ty| ty.text.trim() == "jdk"))
            .filter_map(|t| t.path(&["provides", "version"]))
            .map(|v| v.text.clone())
            .collect();
        oldest(versions, format!("{path}: jdk toolchain <version>"))
    })
}

/// The JDK version the `pom.xml`'s maven-toolchains-plugin asks for (`<jdk><version>`; a range
/// such as `[1.8,)` counts from its lower end).
fn pom_toolchains_jdk(pom: &str) -> Option<Request> {
    let project = parse_xml_root(pom, "project")?;
    let plugins = project
        .path(&["build", "plugins"])
        .into_iter()
        .chain(project.path(&["build", "pluginManagement", "plugins"]));
    plugins
        .flat_map(|p| p.children.iter().filter(|c| c.name == "plugin"))
        .filter(|p| {
            p.child("artifactId")
                .is_some_and(|a| a.text.trim() == "maven-toolchains-plugin")
        })
        .find_map(|p| {
            let version = p.path(&["configuration", "toolchains", "jdk", "version"])?;
            Some(Request {
                value: normalize_jdk(&version.text)?,
                source: "pom.xml: maven-toolchains-plugin <jdk><version>".into(),
            })
        })
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

    fn evidence(paths: &[&str], list: &[(&str, &str)]) -> Option<(String, String)> {
        jdk_evidence(paths, &files(list)).map(|r| (r.value, r.source))
    }

    #[test]
    fn build_files_come_first() {
        let pom = "<project><properties><maven.compiler.source>1.6</maven.compiler.source>\
                   </properties></project>";
        let got = evidence(&[], &[("pom.xml", pom), (".travis.yml", "jdk: openjdk11")]);
        assert_eq!(
            got,
            Some(("6".into(), "pom.xml: maven.compiler.source".into()))
        );
    }

    #[test]
    fn travis_jdk_scalars_and_lists() {
        let got = evidence(&[], &[(".travis.yml", "language: java\njdk: oraclejdk8\n")]);
        assert_eq!(got, Some(("8".into(), ".travis.yml: jdk".into())));
        let travis = "language: java\njdk:\n  - openjdk11\n  - openjdk8\n  - openjdk-ea\n";
        let got = evidence(&[], &[(".travis.yml", travis)]);
        assert_eq!(got.map(|g| g.0).as_deref(), Some("8"));
    }

    #[test]
    fn workflow_java_versions() {
        let ci = "jobs:\n  build:\n    strategy:\n      matrix:\n        java: [ 8, 11 ]\n    \
                  steps:\n      - uses: actions/setup-java@v4\n        with:\n          \
                  java-version: ${{ matrix.java }}\n";
        let release = "jobs:\n  r:\n    steps:\n      - with:\n          java-version: '17'\n";
        let paths = [".github/workflows/ci.yml", ".github/workflows/release.yaml"];
        let list = [
            (".github/workflows/ci.yml", ci),
            (".github/workflows/release.yaml", release),
        ];
        let got = evidence(&paths, &list);
        assert_eq!(
            got,
            Some(("8".into(), ".github/workflows/ci.yml: java-version".into()))
        );
        let got = evidence(&paths[1..], &list[1..]);
        assert_eq!(got.map(|g| g.0).as_deref(), Some("17"));
    }

    #[test]
    fn maven_toolchains() {
        let toolchains = r#"<?xml version="1.0"?>
<toolchains>
  <toolchain><type>netbeans</type><provides><version>5</version></provides></toolchain>
  <toolchain><type>jdk</type><provides><version>1.8</version><vendor>oracle</vendor></provides>
    <configuration><jdkHome>/opt/jdk8</jdkHome></configuration></toolchain>
</toolchains>"#;
        let paths = ["src/main/toolchains.xml", "pom.xml"];
        let got = evidence(&paths, &[("src/main/toolchains.xml", toolchains)]);
        assert_eq!(
            got,
            Some((
                "8".into(),
                "src/main/toolchains.xml: jdk toolchain <version>".into()
            ))
        );
        let pom = r#"<project><build><plugins><plugin>
  <groupId>org.apache.maven.plugins</groupId><artifactId>maven-toolchains-plugin</artifactId>
  <configuration><toolchains><jdk><version>[11,)</version></jdk></toolchains></configuration>
</plugin></plugins></build></project>"#;
        let got = evidence(&paths, &[("pom.xml", pom)]);
        assert_eq!(got.map(|g| g.0).as_deref(), Some("11"));
    }

    #[test]
    fn nothing_said() {
        let got = evidence(&["pom.xml"], &[("pom.xml", "<project></project>")]);
        assert_eq!(got, None);
    }
}
