//! Path knowledge per language: source files, test files, modules, qualified-name prefixes and build tools.

use etip_core::Language;

/// True when `path` (repository-relative, `/`-separated) is a source file of `lang`
/// (`.java`; `.py` — stubs `.pyi` are not sources).
pub fn is_source(lang: Language, path: &str) -> bool {
    match lang {
        Language::Java => path.ends_with(".java"),
        Language::Python => path.ends_with(".py"),
    }
}

/// Why a path counts as a test file, or `None` when it does not.
///
/// Java (Maven): a `src/test/` directory pair anywhere in the path, or a file named `*Test.java`,
/// `*Tests.java` or `*IT.java` (case-sensitive suffixes, so `Latest.java` is not a test).
/// Python: a directory named exactly `tests` or `test` anywhere in the path, or a file named
/// `test_*.py`, `*_test.py` or `conftest.py`.
///
/// Unlike JETO's "path contains `test`", these rules look at whole path components and file-name
/// affixes, so `Latest.java`, `attestation/Verifier.java`, `contest.py` or `testing_utils/` are sources.
pub fn test_rule(lang: Language, path: &str) -> Option<&'static str> {
    let components: Vec<&str> = path.split('/').collect();
    let (file, dirs) = components
        .split_last()
        .expect("split always yields at least one component");
    match lang {
        Language::Java => {
            if dirs.windows(2).any(|w| w[0] == "src" && w[1] == "test") {
                return Some("Maven test directory src/test/");
            }
            if let Some(stem) = file.strip_suffix(".java") {
                if stem.len() > "Test".len() && stem.ends_with("Test") {
                    return Some("file name *Test.java");
                }
                if stem.len() > "Tests".len() && stem.ends_with("Tests") {
                    return Some("file name *Tests.java");
                }
                if stem.len() > "IT".len() && stem.ends_with("IT") {
                    return Some("file name *IT.java");
                }
            }
            None
        }
        Language::Python => {
            if dirs.iter().any(|d| *d == "tests" || *d == "test") {
                return Some("directory tests/ or test/");
            }
            if *file == "conftest.py" {
                return Some("file name conftest.py");
            }
            if file.starts_with("test_") && file.ends_with(".py") {
                return Some("file name test_*.py");
            }
            if file.ends_with("_test.py") && file.len() > "_test.py".len() {
                return Some("file name *_test.py");
            }
            None
        }
    }
}

/// Why `path` is protected in a `lang` repository, if it is: a test, a build descriptor, test
/// configuration or a benchmark or workload folder — files a candidate patch may not change
/// (`etip eval` refuses them; the hack screen reports them as out of scope).
pub fn protected(lang: Language, path: &str) -> Option<&'static str> {
    if let Some(why) = test_rule(lang, path) {
        return Some(why);
    }
    if crate::descriptors::is_descriptor(lang, path) {
        return Some("build descriptor");
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    if matches!(
        name,
        "pytest.ini" | "tox.ini" | "noxfile.py" | ".coveragerc" | "setup.cfg"
    ) {
        return Some("test configuration");
    }
    let dirs = path.split('/').rev().skip(1);
    for d in dirs {
        if matches!(
            d,
            "benchmark" | "benchmarks" | "bench" | "asv_bench" | "jmh"
        ) {
            return Some("benchmark or workload folder");
        }
    }
    None
}

/// True when `path` is a test file of `lang` (see [`test_rule`]).
pub fn is_test(lang: Language, path: &str) -> bool {
    test_rule(lang, path).is_some()
}

/// The module a changed file belongs to.
///
/// Java (Maven): the nearest ancestor directory of the file that holds a `pom.xml`
/// (`has_pom(dir)` answers for a repository-relative directory, `""` being the root);
/// the root module is reported as `"."`, and a file with no `pom.xml` above it as `""`.
/// Python: the top-level package, i.e. the first path component after an optional leading
/// `src/`; a file at the top level (`setup.py`, `six.py`) is its own module (`six`).
pub fn module_of(lang: Language, path: &str, has_pom: &mut dyn FnMut(&str) -> bool) -> String {
    match lang {
        Language::Java => {
            let mut dir = match path.rfind('/') {
                Some(i) => &path[..i],
                None => "",
            };
            loop {
                if has_pom(dir) {
                    return if dir.is_empty() {
                        ".".into()
                    } else {
                        dir.into()
                    };
                }
                if dir.is_empty() {
                    return String::new();
                }
                dir = match dir.rfind('/') {
                    Some(i) => &dir[..i],
                    None => "",
                };
            }
        }
        Language::Python => {
            let rel = path.strip_prefix("src/").unwrap_or(path);
            match rel.split_once('/') {
                Some((first, _)) => first.to_string(),
                None => rel.strip_suffix(".py").unwrap_or(rel).to_string(),
            }
        }
    }
}

/// Dotted Python module path of a file: `src/` stripped, `.py` stripped, `__init__` dropped
/// (`src/pkg/sub/__init__.py` → `pkg.sub`).
pub fn python_module_path(path: &str) -> String {
    let rel = path.strip_prefix("src/").unwrap_or(path);
    let rel = rel.strip_suffix(".py").unwrap_or(rel);
    let rel = rel.strip_suffix("/__init__").unwrap_or(rel);
    rel.replace('/', ".")
}

/// A build tool recognised from files at a repository's root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BuildTool {
    /// `mvnw` (Maven wrapper), JETO's requirement for Java.
    MavenWrapper,
    /// `pom.xml`.
    Maven,
    /// `build.gradle` / `build.gradle.kts` (recognised, not supported by the harness).
    Gradle,
    /// `pyproject.toml`.
    Pyproject,
    /// `setup.py`.
    SetupPy,
    /// `setup.cfg`.
    SetupCfg,
}

impl BuildTool {
    /// The root file that reveals this tool.
    pub fn marker(self) -> &'static str {
        match self {
            BuildTool::MavenWrapper => "mvnw",
            BuildTool::Maven => "pom.xml",
            BuildTool::Gradle => "build.gradle",
            BuildTool::Pyproject => "pyproject.toml",
            BuildTool::SetupPy => "setup.py",
            BuildTool::SetupCfg => "setup.cfg",
        }
    }
}

/// Build tools present at a repository root; `has_root_file(name)` answers for a root file name.
pub fn detect_build_tools(has_root_file: &mut dyn FnMut(&str) -> bool) -> Vec<BuildTool> {
    let mut found = Vec::new();
    for tool in [
        BuildTool::MavenWrapper,
        BuildTool::Maven,
        BuildTool::Gradle,
        BuildTool::Pyproject,
        BuildTool::SetupPy,
        BuildTool::SetupCfg,
    ] {
        let present = has_root_file(tool.marker())
            || (tool == BuildTool::Gradle && has_root_file("build.gradle.kts"));
        if present {
            found.push(tool);
        }
    }
    found
}

/// Whether the repository criteria of rules §2 accept these build tools for `lang`:
/// Java needs the Maven wrapper `mvnw` at the root (JETO); Python needs `pyproject.toml`,
/// `setup.py` or `setup.cfg`.
pub fn build_tool_supported(lang: Language, tools: &[BuildTool]) -> bool {
    match lang {
        Language::Java => tools.contains(&BuildTool::MavenWrapper),
        Language::Python => tools.iter().any(|t| {
            matches!(
                t,
                BuildTool::Pyproject | BuildTool::SetupPy | BuildTool::SetupCfg
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_test_paths() {
        let j = Language::Java;
        assert!(is_test(j, "buffer/src/test/java/io/netty/buffer/Foo.java"));
        assert!(is_test(j, "src/test/resources/x.txt"));
        assert!(is_test(j, "a/FooTest.java"));
        assert!(is_test(j, "a/FooTests.java"));
        assert!(is_test(j, "a/FooIT.java"));
        assert!(!is_test(j, "a/Latest.java"));
        assert!(!is_test(j, "attestation/Verifier.java"));
        assert!(
            !is_test(j, "src/main/java/Test.java"),
            "bare Test.java has no prefix"
        );
        assert!(!is_test(j, "src/main/java/testing/Util.java"));
        assert!(!is_test(j, "src/main/java/Contest.java"));
    }

    #[test]
    fn python_test_paths() {
        let p = Language::Python;
        assert!(is_test(p, "tests/test_x.py"));
        assert!(is_test(p, "pkg/test/helpers.py"));
        assert!(is_test(p, "pkg/test_models.py"));
        assert!(is_test(p, "pkg/models_test.py"));
        assert!(is_test(p, "conftest.py"));
        assert!(!is_test(p, "pkg/attestation.py"));
        assert!(!is_test(p, "pkg/latest.py"));
        assert!(!is_test(p, "pkg/testing/util.py"));
        assert!(!is_test(p, "pkg/contest.py"));
    }

    #[test]
    fn sources() {
        assert!(is_source(Language::Java, "a/B.java"));
        assert!(!is_source(Language::Java, "pom.xml"));
        assert!(is_source(Language::Python, "a/b.py"));
        assert!(!is_source(Language::Python, "a/b.pyi"));
    }

    #[test]
    fn modules() {
        let poms = ["", "buffer", "codec/http"];
        let mut has = |d: &str| poms.contains(&d);
        assert_eq!(
            module_of(Language::Java, "buffer/src/main/java/A.java", &mut has),
            "buffer"
        );
        assert_eq!(
            module_of(Language::Java, "codec/http/src/main/java/A.java", &mut has),
            "codec/http"
        );
        assert_eq!(
            module_of(Language::Java, "codec/dns/src/A.java", &mut has),
            "."
        );
        let mut none = |_: &str| false;
        assert_eq!(module_of(Language::Java, "A.java", &mut none), "");
        assert_eq!(
            module_of(Language::Python, "src/requests/models.py", &mut none),
            "requests"
        );
        assert_eq!(module_of(Language::Python, "six.py", &mut none), "six");
        assert_eq!(python_module_path("src/pkg/sub/__init__.py"), "pkg.sub");
        assert_eq!(python_module_path("pkg/mod.py"), "pkg.mod");
    }

    #[test]
    fn build_tools() {
        let files = ["mvnw", "pom.xml"];
        let tools = detect_build_tools(&mut |f| files.contains(&f));
        assert_eq!(tools, vec![BuildTool::MavenWrapper, BuildTool::Maven]);
        assert!(build_tool_supported(Language::Java, &tools));
        assert!(!build_tool_supported(Language::Python, &tools));
        let py = detect_build_tools(&mut |f| f == "setup.cfg");
        assert!(build_tool_supported(Language::Python, &py));
        assert!(!build_tool_supported(Language::Java, &py));
    }
}
