//! Build configuration: one TOML file, every key optional, defaults defined here and only here.
//!
//! ```toml
//! namespace = "etip"            # image repositories etip/<kind> and label etip.namespace
//! timeout_secs = 1800           # per layer build
//! env_network = "none"          # network of the env layer build ("bridge" to download deps)
//! build_cpus = 0.0              # CPUs of a layer build container (0: all)
//! build_memory_mb = 4096        # memory of a layer build container
//! parallel_versions = true      # build the original and patched trees at the same time
//!
//! [bootstrap]
//! repository = "etip/base"     # tag etip/base:<suite>-<content key>
//! suite = "bookworm"
//! packages = ["openjdk-17-jdk-headless", "maven", ...]
//! mirror = ""                   # empty: the URIs of /etc/apt/sources.list.d/debian.sources
//!
//! [java]
//! default_jdk = "17"
//! allow_newer_jdk = false       # build a JDK-11 project on the JDK-17 image
//! base_images = { "17" = "bootstrap" }   # or "eclipse-temurin:{jdk}-jdk"; "*" matches any JDK
//! command = "auto"              # ./mvnw when present, else mvn
//! args = ["-o", "-B", "-Dmaven.repo.local=/opt/etip/m2"]
//! maven_opts = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"   # MAVEN_OPTS of image builds only
//! settings = ""                 # path of a settings.xml copied into the image (-s)
//! env_setup = ["ln -s /usr/share/maven-repo /opt/etip/m2"]
//! resolve_goals = ["test", "-DfailIfNoTests=false", "-Dsurefire.failIfNoSpecifiedTests=false"]   # env layer; skipped when args has -o
//! compile_goals = ["test-compile"]
//! test_args = []               # extra arguments of the timed test runs (etip measure)
//!
//! [python]
//! default_version = "3.11"
//! base_images = { "3.11" = "bootstrap" }  # or "python:{version}"
//! deps_command = ""             # run in the env layer with the env venv active
//! install_command = "python -m pip install --no-build-isolation --no-deps -e ."
//! test_args = []
//! ```

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The value of a `base_images` entry that means "the image of `etip base-image bootstrap`".
pub const BOOTSTRAP: &str = "bootstrap";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BuildConfig {
    pub namespace: String,
    pub timeout_secs: u64,
    pub env_network: String,
    pub build_cpus: f64,
    pub build_memory_mb: u64,
    pub parallel_versions: bool,
    pub bootstrap: BootstrapConfig,
    pub java: JavaConfig,
    pub python: PythonConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BootstrapConfig {
    /// Image repository of the bootstrapped image; its first component is the image's namespace
    /// label. Shared by every namespace that uses the default.
    pub repository: String,
    pub suite: String,
    pub packages: Vec<String>,
    /// Debian mirror; empty means "read it from the machine's apt sources".
    pub mirror: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JavaConfig {
    pub default_jdk: String,
    pub allow_newer_jdk: bool,
    pub base_images: BTreeMap<String, String>,
    pub command: String,
    pub args: Vec<String>,
    /// `MAVEN_OPTS` of the image builds only (not of test runs): C1-only JIT and the serial GC
    /// roughly halve the time of short Maven runs.
    pub maven_opts: String,
    pub settings: String,
    pub env_setup: Vec<String>,
    pub resolve_goals: Vec<String>,
    pub compile_goals: Vec<String>,
    /// Extra arguments of the timed test runs of `etip measure` (e.g. `-DforkCount=0`).
    pub test_args: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PythonConfig {
    pub default_version: String,
    pub base_images: BTreeMap<String, String>,
    pub deps_command: String,
    pub install_command: String,
    /// Extra arguments of the timed pytest runs of `etip measure`.
    pub test_args: Vec<String>,
}

impl Default for BuildConfig {
    fn default() -> Self {
        BuildConfig {
            namespace: "etip".into(),
            timeout_secs: 1800,
            env_network: "none".into(),
            build_cpus: 0.0,
            build_memory_mb: 4096,
            parallel_versions: true,
            bootstrap: BootstrapConfig::default(),
            java: JavaConfig::default(),
            python: PythonConfig::default(),
        }
    }
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        BootstrapConfig {
            repository: "etip/base".into(),
            suite: "bookworm".into(),
            packages: [
                "openjdk-17-jdk-headless",
                "maven",
                "libsurefire-java",
                "junit4",
                "libmaven-compiler-plugin-java",
                "libmaven-resources-plugin-java",
                "python3",
                "python3-pytest",
                "python3-venv",
                "python3-pip",
                "python3-setuptools",
                "python3-wheel",
                "git",
            ]
            .map(String::from)
            .to_vec(),
            mirror: String::new(),
        }
    }
}

impl Default for JavaConfig {
    fn default() -> Self {
        JavaConfig {
            default_jdk: "17".into(),
            allow_newer_jdk: false,
            base_images: BTreeMap::from([("17".into(), BOOTSTRAP.into())]),
            command: "auto".into(),
            args: ["-o", "-B", "-Dmaven.repo.local=/opt/etip/m2"]
                .map(String::from)
                .to_vec(),
            maven_opts: "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC".into(),
            settings: String::new(),
            env_setup: vec!["ln -s /usr/share/maven-repo /opt/etip/m2".into()],
            resolve_goals: [
                "test",
                "-DfailIfNoTests=false",
                "-Dsurefire.failIfNoSpecifiedTests=false",
            ]
            .map(String::from)
            .to_vec(),
            compile_goals: vec!["test-compile".into()],
            test_args: Vec::new(),
        }
    }
}

impl Default for PythonConfig {
    fn default() -> Self {
        PythonConfig {
            default_version: "3.11".into(),
            base_images: BTreeMap::from([("3.11".into(), BOOTSTRAP.into())]),
            deps_command: String::new(),
            install_command: "python -m pip install --no-build-isolation --no-deps -e .".into(),
            test_args: Vec::new(),
        }
    }
}

/// A configuration file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading build configuration {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "build configuration {path} is not valid: {source} (see harness/build/README.md for the keys)"
    )]
    Parse {
        path: String,
        #[source]
        source: toml::de::Error,
    },
}

impl BuildConfig {
    /// Reads a TOML file; keys it does not set keep their defaults.
    pub fn load(path: &Path) -> Result<BuildConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        toml::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.display().to_string(),
            source,
        })
    }

    /// The defaults as TOML (for `etip build --print-config`).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("the configuration is plain data and always serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_file_keeps_defaults() {
        let cfg: BuildConfig = toml::from_str(
            "namespace = \"t1\"\n[java]\nbase_images = { \"*\" = \"eclipse-temurin:{jdk}-jdk\" }\n",
        )
        .unwrap();
        assert_eq!(cfg.namespace, "t1");
        assert_eq!(cfg.java.base_images["*"], "eclipse-temurin:{jdk}-jdk");
        assert_eq!(cfg.java.default_jdk, "17");
        assert_eq!(cfg.python, PythonConfig::default());
    }

    #[test]
    fn defaults_round_trip() {
        let cfg = BuildConfig::default();
        let back: BuildConfig = toml::from_str(&cfg.to_toml()).unwrap();
        assert_eq!(back, cfg);
    }

    #[test]
    fn unknown_keys_are_rejected() {
        assert!(toml::from_str::<BuildConfig>("nmespace = \"x\"").is_err());
    }
}
