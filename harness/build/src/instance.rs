//! The one spec object per instance (SWE-bench's `TestSpec` idea): where each version's tree lives,
//! the environment its tools run with, its build tool, the modules to test, the image and log
//! folder names, and the test command of each version. `etip build` makes it while building and
//! records its facts in `status.json`; `etip measure` (and later `etip eval`) rebuilds it from that
//! status with [`InstanceSpec::from_status`], so the three commands share one definition.

use crate::config::BuildConfig;
use crate::spec;
use etip_core::Language;
use etip_core::instance::InstanceStatus;
use etip_core::measure::Version;
use etip_toolchain::testcmd::{Selection, TestCommand, TestCommandSpec, test_command};
use sha2::{Digest, Sha256};

/// Where pytest writes its report inside a container session.
pub const PYTEST_REPORT: &str = "/tmp/etip-reports/pytest.xml";

/// One version of an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionSpec {
    /// Absolute path of the tree inside the image.
    pub tree: String,
    /// Environment of the build tool and the tests (`KEY=value`).
    pub env: Vec<String>,
    /// `./mvnw`, `mvn`, a configured Maven command, or `pip`.
    pub build_tool: String,
}

/// Everything build, measure and eval need to know about one instance.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceSpec {
    pub id: String,
    /// Image namespace (repositories `<namespace>/env`, `<namespace>/instance`).
    pub namespace: String,
    pub language: Language,
    pub base_commit: String,
    pub patched_commit: String,
    /// The instance image, once built.
    pub image: Option<String>,
    pub original: VersionSpec,
    pub patched: VersionSpec,
    /// Maven arguments of every Maven run (offline flag, local repository, settings).
    pub maven_args: Vec<String>,
    /// Extra arguments of the timed test runs (configuration `java.test_args`/`python.test_args`).
    pub test_args: Vec<String>,
    /// Modules the change touches (Maven module folders; Python packages).
    pub modules: Vec<String>,
    /// The folder of a local build ([`crate::local`]), under which the container paths lie.
    pub local_root: Option<String>,
}

impl InstanceSpec {
    /// The spec of an instance about to be built.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: &BuildConfig,
        id: &str,
        language: Language,
        base_commit: &str,
        patched_commit: &str,
        tools: [&str; 2],
        modules: Vec<String>,
    ) -> InstanceSpec {
        let version = |v: Version, tool: &str| VersionSpec {
            tree: match v {
                Version::Original => spec::ORIGINAL_DIR.to_string(),
                Version::Patched => spec::PATCHED_DIR.to_string(),
            },
            env: spec::run_env(cfg, language, v.as_str(), tool),
            build_tool: tool.to_string(),
        };
        InstanceSpec {
            id: id.to_string(),
            namespace: cfg.namespace.clone(),
            language,
            base_commit: base_commit.to_string(),
            patched_commit: patched_commit.to_string(),
            image: None,
            original: version(Version::Original, tools[0]),
            patched: version(Version::Patched, tools[1]),
            maven_args: spec::maven_args(cfg),
            test_args: match language {
                Language::Java => cfg.java.test_args.clone(),
                Language::Python => cfg.python.test_args.clone(),
            },
            modules,
            local_root: None,
        }
    }

    /// A container path of etip's scripts (`/work/...`, `/opt/etip/...`, `/tmp/etip*`) or a
    /// script naming them, where this instance has them: moved under the local build's folder
    /// ([`spec::relocate`]) for a local build, as is for an image.
    pub fn place(&self, text: &str) -> String {
        match &self.local_root {
            Some(root) => spec::relocate(text, root),
            None => text.to_string(),
        }
    }

    /// The spec of a built instance, from its status and the build configuration.
    pub fn from_status(status: &InstanceStatus, cfg: &BuildConfig) -> InstanceSpec {
        let tool = |v: Version| {
            status
                .env
                .get(v.as_str())
                .and_then(|env| {
                    env.iter()
                        .find_map(|kv| kv.strip_prefix("ETIP_BUILD_TOOL=").map(str::to_string))
                })
                .or_else(|| status.toolchain.as_ref().map(|t| t.build_tool.clone()))
                .unwrap_or_else(|| match status.language {
                    Language::Java => "mvn".to_string(),
                    Language::Python => "pip".to_string(),
                })
        };
        let (to, tp) = (tool(Version::Original), tool(Version::Patched));
        let mut s = InstanceSpec::new(
            cfg,
            &status.id,
            status.language,
            &status.base_commit,
            &status.patched_commit,
            [&to, &tp],
            status.modules.clone(),
        );
        s.image = status.image.clone();
        s.local_root = status.local_root.clone();
        s.original.tree = status.original_dir.clone();
        s.patched.tree = status.patched_dir.clone();
        for (v, vs) in [
            (Version::Original, &mut s.original),
            (Version::Patched, &mut s.patched),
        ] {
            if let Some(env) = status.env.get(v.as_str()) {
                vs.env = env.clone();
            }
        }
        s
    }

    pub fn version(&self, v: Version) -> &VersionSpec {
        match v {
            Version::Original => &self.original,
            Version::Patched => &self.patched,
        }
    }

    /// Paths a session of version `v` must not see: the other version's tree.
    pub fn hidden(&self, v: Version) -> Vec<String> {
        vec![self.version(v.other()).tree.clone()]
    }

    /// Tag of the env layer: shared by the instances of one repository whose content key (base
    /// image, toolchain, scripts, build descriptors) is the same.
    pub fn env_tag(&self, repo_slug: &str, key: &str) -> String {
        format!("{}/env:{}-{repo_slug}-{key}", self.namespace, self.language)
    }

    /// Tag of the instance layer, by its content key.
    pub fn instance_tag(&self, key: &str) -> String {
        format!(
            "{}/instance:{}-{key}",
            self.namespace,
            spec::id_slug(&self.id)
        )
    }

    /// A readable, injective folder name for the instance: a slug of the id plus a short hash of
    /// the exact id (so `a/b`, `A_B` and `a b` get different folders).
    pub fn log_slug(&self) -> String {
        log_slug(&self.id)
    }

    /// The default test selection: Java, the changed modules (the root project when the change
    /// touches no module); Python, every test of the repository.
    pub fn default_selection(&self) -> Selection {
        match self.language {
            Language::Java => Selection::Modules(if self.modules.is_empty() {
                vec![String::new()]
            } else {
                self.modules.clone()
            }),
            Language::Python => Selection::All,
        }
    }

    /// The test command of version `v` for a selection (see [`etip_toolchain::testcmd`]).
    pub fn test_command(
        &self,
        v: Version,
        selection: &Selection,
        pytest_report: &str,
    ) -> TestCommand {
        self.test_command_in(self.version(v), selection, pytest_report)
    }

    /// The test command in a tree of this instance (a version's or a candidate's).
    pub fn test_command_in(
        &self,
        vs: &VersionSpec,
        selection: &Selection,
        pytest_report: &str,
    ) -> TestCommand {
        let mut c = test_command(&TestCommandSpec {
            language: self.language,
            tree: &vs.tree,
            build_tool: &vs.build_tool,
            maven_args: &self.maven_args,
            selection,
            pytest_report,
        });
        if !self.test_args.is_empty() {
            // Extra arguments go before the test targets (pytest) or at the end (Maven).
            match self.language {
                Language::Java => c.argv.extend(self.test_args.iter().cloned()),
                Language::Python => after_junitxml(&mut c.argv, self.test_args.iter().cloned()),
            }
        }
        c
    }
}

/// Puts `args` right after pytest's `--junitxml=` argument (before the test targets).
fn after_junitxml(argv: &mut Vec<String>, args: impl IntoIterator<Item = String>) {
    let at = argv
        .iter()
        .position(|a| a.starts_with("--junitxml="))
        .map_or(argv.len(), |i| i + 1);
    for (j, a) in args.into_iter().enumerate() {
        argv.insert(at + j, a);
    }
}

/// The coverage tool of a selection run ([`InstanceSpec::coverage_command`]).
pub const PYTHON_COVERAGE_TOOL: &str = "pytest-cov";

impl InstanceSpec {
    /// The command of a selection run (`etip select`): version `v`'s test command for `selection`,
    /// with per-test coverage written under `data_dir` (a folder outside the tree), and the
    /// variables it needs. Python: pytest-cov with one coverage context per test
    /// (`--cov-context=test`), every file under the tree measured, the project's coverage
    /// configuration ignored (`--cov-config=/dev/null`: its `source`, `omit` or plugins would
    /// change what is recorded), the data in `data_dir/coverage.db`, the report in
    /// `data_dir/pytest.xml`. Java: Surefire's run with etip's coverage extension
    /// (`harness/build/coverage-java`), one JaCoCo session per test class in
    /// `data_dir/<artifactId>.exec`, the reports where the timed runs have them. The folder must
    /// exist, and stale data be removed, before the command runs (its `clean` names the reports
    /// only: executors may read what it names).
    pub fn coverage_command(
        &self,
        v: Version,
        selection: &Selection,
        data_dir: &str,
    ) -> (TestCommand, Vec<String>) {
        let dir = data_dir.trim_end_matches('/');
        let mut c = self.test_command(v, selection, &format!("{dir}/pytest.xml"));
        match self.language {
            Language::Python => {
                let tree = &self.version(v).tree;
                let cov = [
                    "-p".to_string(),
                    "pytest_cov".to_string(),
                    format!("--cov={tree}"),
                    "--cov-context=test".into(),
                    "--cov-report=".into(),
                    "--cov-config=/dev/null".into(),
                ];
                after_junitxml(&mut c.argv, cov);
                (c, vec![format!("COVERAGE_FILE={dir}/coverage.db")])
            }
            Language::Java => {
                // Both extensions in one class path: a -Dmaven.ext.class.path on the command line
                // replaces the one in MAVEN_OPTS (the Surefire fix).
                c.argv.push(format!(
                    "-Dmaven.ext.class.path={}:{}/etip-cov-ext.jar",
                    spec::SUREFIRE_FIX_JAR,
                    spec::COVERAGE_DIR
                ));
                c.argv.push(format!("-Detip.coverage.dir={dir}"));
                (c, Vec::new())
            }
        }
    }
}

/// See [`InstanceSpec::log_slug`].
pub fn log_slug(id: &str) -> String {
    let mut h = Sha256::new();
    h.update(id.as_bytes());
    let hash = hex::encode(h.finalize());
    format!("{}-{}", spec::id_slug(id), &hash[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_names_come_from_one_place() {
        let cfg = BuildConfig::default();
        let s = InstanceSpec::new(
            &cfg,
            "demo/x-1",
            Language::Java,
            "a",
            "b",
            ["mvn", "./mvnw"],
            vec!["core".into()],
        );
        assert_eq!(
            s.hidden(Version::Patched),
            vec!["/work/original".to_string()]
        );
        let c = s.test_command(Version::Patched, &s.default_selection(), PYTEST_REPORT);
        assert_eq!(c.argv[..2], ["sh", "./mvnw"]);
        assert_eq!(c.cwd, "/work/patched");
        assert!(c.argv.contains(&"-o".to_string()));
        assert_eq!(
            c.reports[0].path,
            "/work/patched/core/target/surefire-reports"
        );
        assert_ne!(log_slug("a/b"), log_slug("A_B"));
        assert_ne!(log_slug("a/b"), log_slug("a b"));
        assert!(log_slug("a/b").starts_with("a-b-"));
    }

    #[test]
    fn coverage_commands_add_per_test_coverage_outside_the_tree() {
        let cfg = BuildConfig::default();
        let py = InstanceSpec::new(
            &cfg,
            "p",
            Language::Python,
            "a",
            "b",
            ["pip", "pip"],
            vec![],
        );
        let (c, env) = py.coverage_command(Version::Original, &py.default_selection(), "/tmp/s/");
        let at = |a: &str| c.argv.iter().position(|x| x == a).unwrap_or(usize::MAX);
        let junit = c
            .argv
            .iter()
            .position(|a| a == "--junitxml=/tmp/s/pytest.xml");
        assert_eq!(
            junit.map(|j| j + 3),
            Some(at("--cov=/work/original")),
            "{:?}",
            c.argv
        );
        assert!(
            at("--cov-context=test") < c.argv.len() && at("--cov-config=/dev/null") < c.argv.len()
        );
        assert_eq!(env, ["COVERAGE_FILE=/tmp/s/coverage.db"]);
        let java = InstanceSpec::new(&cfg, "j", Language::Java, "a", "b", ["mvn", "mvn"], vec![]);
        let (c, env) = java.coverage_command(Version::Patched, &java.default_selection(), "/tmp/s");
        assert!(env.is_empty());
        assert!(c.argv.contains(&format!(
            "-Dmaven.ext.class.path={}:{}/etip-cov-ext.jar",
            spec::SUREFIRE_FIX_JAR,
            spec::COVERAGE_DIR
        )));
        assert!(c.argv.contains(&"-Detip.coverage.dir=/tmp/s".to_string()));
        assert!(
            c.argv
                .contains(&etip_toolchain::testcmd::SUREFIRE_TEST_GOAL.to_string())
        );
    }

    #[test]
    fn status_round_trip() {
        let cfg = BuildConfig::default();
        let s = InstanceSpec::new(
            &cfg,
            "p",
            Language::Python,
            "a",
            "b",
            ["pip", "pip"],
            vec![],
        );
        let status = InstanceStatus {
            source: None,
            id: "p".into(),
            language: Language::Python,
            outcome: etip_core::instance::BuildOutcome::Built,
            reason: None,
            failure: None,
            detail: None,
            toolchain: None,
            image: Some("etip/instance:p-1".into()),
            local_root: None,
            layers: vec![],
            base_commit: "a".into(),
            patched_commit: "b".into(),
            commit_time: None,
            original_dir: s.original.tree.clone(),
            patched_dir: s.patched.tree.clone(),
            env: [
                ("original".to_string(), s.original.env.clone()),
                ("patched".to_string(), s.patched.env.clone()),
            ]
            .into(),
            modules: vec![],
            dependency_changes: Vec::new(),
            workloads: Vec::new(),
            patch: None,
            task: None,
            build_secs: 1.0,
        };
        let back = InstanceSpec::from_status(&status, &cfg);
        assert_eq!(back.image.as_deref(), Some("etip/instance:p-1"));
        assert_eq!(back.original, s.original);
        let c = back.test_command(Version::Original, &back.default_selection(), PYTEST_REPORT);
        assert!(c.argv.contains(&format!("--junitxml={PYTEST_REPORT}")));
        assert!(
            back.original
                .env
                .iter()
                .any(|e| e.starts_with("PATH=/opt/etip/venvs/original/bin"))
        );
    }
}
