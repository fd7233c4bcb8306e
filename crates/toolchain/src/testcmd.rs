//! How to run a version's tests and where their XML reports land (rules §3: Surefire on the compiled
//! trees, alphabetical class order; pytest with `--junitxml`, no random-order plugins).
//!
//! Java: Maven runs the Surefire goal alone (`org.apache.maven.plugins:maven-surefire-plugin:test`),
//! so nothing is recompiled in a timed round: the instance image holds both trees compiled by
//! `test-compile`. Each round is a fresh `mvn` process, and Surefire forks a fresh JVM for the tests.
//! Classes run in alphabetical order (`-Dsurefire.runOrder=alphabetical`). Reports:
//! `<module>/target/surefire-reports/TEST-*.xml`.
//!
//! Python: `python -m pytest -p no:randomly -p no:cacheprovider -p etip_sorted --junitxml=FILE` in
//! the version's virtual environment: `etip_sorted` is a small plugin the image provides (on
//! `PYTHONPATH`, `harness/build/scripts/etip_sorted.py`) that runs the collected tests in sorted
//! node-id order and, when the project configures no `testpaths`, limits collection to the root's
//! `tests`, `test` and `testing` folders.

use etip_core::Language;

/// Which tests a run covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The tests of these modules (Maven module folders relative to the root, `""` for the root
    /// project; Python test paths relative to the root). Empty: the whole project.
    Modules(Vec<String>),
    /// Every test of the project.
    All,
    /// These test classes (Java: simple or qualified class names; Python: node ids or paths).
    Classes(Vec<String>),
    /// These test classes of these modules (Java: `-pl` the modules, `-Dtest` the classes, the
    /// modules' reports; Python: the classes, as [`Selection::Classes`]).
    ClassesIn {
        modules: Vec<String>,
        classes: Vec<String>,
    },
}

/// The format of a report location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportKind {
    /// A folder of Surefire `TEST-*.xml` files.
    SurefireDir,
    /// One JUnit-XML file written by pytest's `--junitxml`.
    JunitFile,
}

/// Where one part of a run's reports lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportLocation {
    /// Absolute path inside the version's environment.
    pub path: String,
    pub kind: ReportKind,
    /// Module the reports belong to (`""` for the root); class names are reported with this
    /// prefix (`module:Class`) when the run covers more than one module.
    pub module: String,
}

/// A version's test command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCommand {
    /// Program and arguments (no shell).
    pub argv: Vec<String>,
    /// Working directory (the version's tree).
    pub cwd: String,
    /// Paths to delete before each run so that no stale report is read.
    pub clean: Vec<String>,
    pub reports: Vec<ReportLocation>,
}

/// Inputs of [`test_command`].
#[derive(Debug, Clone)]
pub struct TestCommandSpec<'a> {
    pub language: Language,
    /// Absolute path of the version's tree.
    pub tree: &'a str,
    /// Java: `"./mvnw"`, `"mvn"` or a configured command; Python: unused.
    pub build_tool: &'a str,
    /// Java: Maven arguments of the build (offline flag, local repository, settings).
    pub maven_args: &'a [String],
    pub selection: &'a Selection,
    /// Where pytest writes its report (absolute).
    pub pytest_report: &'a str,
}

/// The Surefire goal a timed round runs: the plugin's `test` goal alone, on compiled classes.
pub const SUREFIRE_TEST_GOAL: &str = "org.apache.maven.plugins:maven-surefire-plugin:test";

/// The test command of one version (see the module docs).
pub fn test_command(spec: &TestCommandSpec) -> TestCommand {
    match spec.language {
        Language::Java => maven(spec),
        Language::Python => pytest(spec),
    }
}

fn join_path(tree: &str, rel: &str) -> String {
    if rel.is_empty() || rel == "." {
        tree.to_string()
    } else {
        format!("{}/{}", tree.trim_end_matches('/'), rel.trim_matches('/'))
    }
}

fn maven(spec: &TestCommandSpec) -> TestCommand {
    let mut argv: Vec<String> = match spec.build_tool {
        "./mvnw" => vec!["sh".into(), "./mvnw".into()],
        tool => tool.split_whitespace().map(str::to_string).collect(),
    };
    if argv.is_empty() {
        argv.push("mvn".into());
    }
    argv.extend(spec.maven_args.iter().cloned());
    let modules: Vec<String> = match spec.selection {
        Selection::Modules(m) | Selection::ClassesIn { modules: m, .. } => {
            let mut m: Vec<String> = m.iter().map(|s| s.trim_matches('/').to_string()).collect();
            m.sort();
            m.dedup();
            m
        }
        _ => Vec::new(),
    };
    let listed: Vec<&String> = modules
        .iter()
        .filter(|m| !m.is_empty() && *m != ".")
        .collect();
    // The root project alone runs without -pl (a single-module project has no reactor).
    if !listed.is_empty() && listed.len() == modules.len() {
        argv.push("-pl".into());
        argv.push(
            listed
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    argv.push(SUREFIRE_TEST_GOAL.into());
    argv.push("-Dsurefire.runOrder=alphabetical".into());
    argv.push("-DfailIfNoTests=false".into());
    argv.push("-Dsurefire.failIfNoSpecifiedTests=false".into());
    argv.push("-DtrimStackTrace=false".into());
    if let Selection::Classes(classes) | Selection::ClassesIn { classes, .. } = spec.selection {
        let mut c = classes.clone();
        c.sort();
        argv.push(format!("-Dtest={}", c.join(",")));
    }
    let report_modules: Vec<String> = if listed.is_empty() || listed.len() != modules.len() {
        if modules.is_empty() || modules.iter().any(|m| m.is_empty() || m == ".") {
            vec![String::new()]
        } else {
            modules.clone()
        }
    } else {
        modules.clone()
    };
    let reports: Vec<ReportLocation> = report_modules
        .iter()
        .map(|m| ReportLocation {
            path: join_path(&join_path(spec.tree, m), "target/surefire-reports"),
            kind: ReportKind::SurefireDir,
            module: m.clone(),
        })
        .collect();
    TestCommand {
        argv,
        cwd: spec.tree.to_string(),
        clean: reports.iter().map(|r| r.path.clone()).collect(),
        reports,
    }
}

fn pytest(spec: &TestCommandSpec) -> TestCommand {
    let mut argv: Vec<String> = [
        "python",
        "-m",
        "pytest",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        "-p",
        "etip_sorted",
        "-q",
        "-o",
        "junit_family=xunit1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    argv.push(format!("--junitxml={}", spec.pytest_report));
    let mut targets: Vec<String> = match spec.selection {
        Selection::All => Vec::new(),
        Selection::Modules(m) => m
            .iter()
            .filter(|s| !s.is_empty() && *s != ".")
            .cloned()
            .collect(),
        Selection::Classes(c) | Selection::ClassesIn { classes: c, .. } => c.clone(),
    };
    targets.sort();
    targets.dedup();
    argv.extend(targets);
    TestCommand {
        argv,
        cwd: spec.tree.to_string(),
        clean: vec![spec.pytest_report.to_string()],
        reports: vec![ReportLocation {
            path: spec.pytest_report.to_string(),
            kind: ReportKind::JunitFile,
            module: String::new(),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>(
        language: Language,
        tool: &'a str,
        args: &'a [String],
        selection: &'a Selection,
    ) -> TestCommandSpec<'a> {
        TestCommandSpec {
            language,
            tree: "/work/patched",
            build_tool: tool,
            maven_args: args,
            selection,
            pytest_report: "/tmp/etip/report.xml",
        }
    }

    #[test]
    fn maven_runs_surefire_alone_in_alphabetical_order() {
        let args = vec!["-o".to_string(), "-B".to_string()];
        let sel = Selection::Modules(vec![String::new()]);
        let c = test_command(&spec(Language::Java, "mvn", &args, &sel));
        assert_eq!(c.argv[..3], ["mvn", "-o", "-B"]);
        assert!(c.argv.contains(&SUREFIRE_TEST_GOAL.to_string()));
        assert!(!c.argv.contains(&"-pl".to_string()));
        assert!(
            c.argv
                .contains(&"-Dsurefire.runOrder=alphabetical".to_string())
        );
        assert_eq!(c.reports[0].path, "/work/patched/target/surefire-reports");
        assert_eq!(c.clean, vec!["/work/patched/target/surefire-reports"]);

        let sel = Selection::Modules(vec!["core/".into(), "api".into()]);
        let c = test_command(&spec(Language::Java, "./mvnw", &args, &sel));
        assert_eq!(c.argv[..2], ["sh", "./mvnw"]);
        let pl = c.argv.iter().position(|a| a == "-pl").expect("-pl");
        assert_eq!(c.argv[pl + 1], "api,core");
        assert_eq!(c.reports.len(), 2);
        assert_eq!(
            c.reports[1].path,
            "/work/patched/core/target/surefire-reports"
        );
        assert_eq!(c.reports[1].module, "core");

        let sel = Selection::ClassesIn {
            modules: vec!["core".into()],
            classes: vec!["demo.B".into(), "demo.A".into()],
        };
        let c = test_command(&spec(Language::Java, "mvn", &args, &sel));
        let pl = c.argv.iter().position(|a| a == "-pl").expect("-pl");
        assert_eq!(c.argv[pl + 1], "core");
        assert!(c.argv.contains(&"-Dtest=demo.A,demo.B".to_string()));
        assert_eq!(
            c.reports[0].path,
            "/work/patched/core/target/surefire-reports"
        );

        let sel = Selection::Classes(vec!["demo.JoinTest".into(), "demo.DedupTest".into()]);
        let c = test_command(&spec(Language::Java, "mvn", &args, &sel));
        assert!(
            c.argv
                .contains(&"-Dtest=demo.DedupTest,demo.JoinTest".to_string())
        );
    }

    #[test]
    fn pytest_without_random_order() {
        let sel = Selection::Classes(vec!["tests/test_b.py".into(), "tests/test_a.py".into()]);
        let c = test_command(&spec(Language::Python, "pip", &[], &sel));
        assert_eq!(c.argv[..3], ["python", "-m", "pytest"]);
        assert!(c.argv.windows(2).any(|w| w == ["-p", "no:randomly"]));
        assert!(
            c.argv
                .contains(&"--junitxml=/tmp/etip/report.xml".to_string())
        );
        assert_eq!(
            c.argv[c.argv.len() - 2..],
            ["tests/test_a.py", "tests/test_b.py"]
        );
        assert_eq!(c.reports[0].kind, ReportKind::JunitFile);
    }
}
