//! Build configuration: one TOML file, every key optional, defaults defined here and only here.
//!
//! ```toml
//! namespace = "etip"            # image repositories etip/<kind> and label etip.namespace
//! timeout_secs = 1800           # per layer build (at least 1)
//! env_network = "bridge"        # network of the env layer build (downloads): "bridge", "none"
//!                               # or a user-defined Docker network (e.g. one with a mirror)
//! build_cpus = 0.0              # CPUs of a layer build container (0: all)
//! build_memory_mb = 4096        # memory of a layer build container (at least 6)
//! parallel_versions = true      # build the original and patched trees at the same time
//!
//! [bootstrap]
//! repository = "etip/base"     # tag etip/base:<suite>-<content key>
//! suite = "bookworm"            # the suite of "bootstrap" and of `etip base-image bootstrap`
//! packages = ["maven", "python3", ...]   # in every suite's image
//! mirror = ""                   # empty: the URIs of /etc/apt/sources.list.d/debian.sources
//! [bootstrap.suites]            # a suite's own packages (its JDKs), added to `packages`
//! bullseye = { packages = ["openjdk-11-jdk-headless", "openjdk-17-jdk-headless"] }
//! bookworm = { packages = ["openjdk-17-jdk-headless"] }
//! trixie = { packages = ["openjdk-21-jdk-headless", "openjdk-25-jdk-headless"] }
//!
//! # The toolchain tables: which image provides a JDK or a Python. "bootstrap:<suite>" is the
//! # bootstrapped image of that suite ("bootstrap": of `bootstrap.suite`); any other value is an
//! # image reference, e.g. "eclipse-temurin:{jdk}-jdk" or "python:{version}" with a registry.
//! [java]
//! default_jdk = "17"            # when the repository names no JDK
//! allow_newer_jdk = true        # a JDK-8 project builds on the nearest newer JDK configured
//! base_images = { "11" = "bootstrap:bullseye", "17" = "bootstrap:bookworm", "21" = "bootstrap:trixie", "25" = "bootstrap:trixie" }
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
//! default_version = "3.11"      # used when `choose = "default"`
//! choose = "commit"             # "commit": the Python of the commit's time (declared support and
//!                               # commit date); "default": default_version when it fits
//! base_images = { "3.9" = "bootstrap:bullseye", "3.11" = "bootstrap:bookworm", "3.13" = "bootstrap:trixie" }
//! deps_as_of = "commit"         # "commit": dependencies released before the base commit's date;
//!                               # "none": today's releases; or a date "2019-06-30"
//! relax_deps = true             # a requirement with no release before that date comes from
//!                               # later releases (recorded) instead of failing the build
//! deps_command = ""             # run in the env layer with the env venv active
//! install_command = "python -m pip install --no-build-isolation --no-deps -e ."
//! test_args = []
//!
//! # Where the env layer's downloads go. Applied inside the env layer's build container only
//! # (variables at its creation, files under /tmp), never to an image, the instance layer or a
//! # test run (always network "none"). "auto": what this machine uses (see `network::host`);
//! # "" or []: nothing (the tools' defaults). Credentials in URLs are masked in --print-config
//! # and kept out of content keys, images and logs.
//! [network]
//! pip_index_url = "auto"        # PIP_INDEX_URL, pip.conf index-url
//! pip_extra_index_urls = ["auto"]   # PIP_EXTRA_INDEX_URL, pip.conf extra-index-url
//! pip_trusted_hosts = ["auto"]  # PIP_TRUSTED_HOST, pip.conf trusted-host
//! maven_mirror_url = "auto"     # ~/.m2/settings.xml: first mirror of `*` or `central`; mirrors
//!                               # every repository, and makes the env layer's Maven run online;
//!                               # with none, Maven Central when it answers
//! http_proxy = "auto"           # http_proxy/HTTP_PROXY, ~/.m2/settings.xml proxies
//! https_proxy = "auto"          # https_proxy/HTTPS_PROXY, ~/.m2/settings.xml proxies
//! no_proxy = "auto"             # no_proxy/NO_PROXY, the proxies' nonProxyHosts
//! ca_bundle = "auto"            # PEM file: PIP_CERT, pip.conf cert, REQUESTS_CA_BUNDLE, SSL_CERT_FILE
//! ```
//!
//! Maven: `java.args` keep `-o` for the instance layer and test runs. The env layer runs Maven
//! online, without `-o`, when it has a network and a `maven_mirror_url`: the generated settings
//! (mirror of `*` with id `central`, proxies, credentials) under `/tmp` are passed with `-s`
//! (`-gs` when `java.settings` is set) and the CA bundle becomes a truststore under `/tmp` on
//! `MAVEN_OPTS`. With `"auto"` and no mirror on the host, etip asks Maven Central once per run
//! from the env layer's network (one `HEAD` request, same proxies and CA bundle) and runs Maven
//! online against it when it answers; otherwise, and with `""`, Maven stays offline (Debian's
//! repository of the base image).
//!
//! [`BuildConfig::load`] checks the values with [`BuildConfig::validate`] (image names, limits,
//! suite and package names) before anything reaches the Docker engine or a command line.

mod toolchain;

use crate::network;
pub use crate::network::NetworkConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
pub use toolchain::{
    BaseRef, DEFAULT_SUITES, DepsAsOf, DepsAsOfError, PythonChoice, SuiteConfig, day_start,
};

/// The value of a `base_images` entry that means "the image of `etip base-image bootstrap`".
pub const BOOTSTRAP: &str = "bootstrap";

/// Docker's smallest memory limit of a container, in MB.
pub const MIN_MEMORY_MB: u64 = 6;

/// The network of the env layer build (the instance layer and test runs never have one).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum EnvNetwork {
    /// No network: dependencies must be in the base image.
    None,
    /// Docker's default bridge network: the env layer may download dependencies.
    #[default]
    Bridge,
    /// A user-defined Docker network (e.g. the one a mirror container is on).
    Named(String),
}

/// Words refused as network names: they read as a setting, not a network (`"off"` is not
/// `"none"`), or name Docker's modes etip does not use (`host` shares the host's network).
const NOT_NETWORKS: &[&str] = &[
    "none", "bridge", "host", "default", "off", "on", "no", "yes", "true", "false", "null",
    "disabled", "enabled", "offline", "online",
];

impl EnvNetwork {
    /// The value as written in the configuration.
    pub fn as_str(&self) -> &str {
        match self {
            EnvNetwork::None => "none",
            EnvNetwork::Bridge => "bridge",
            EnvNetwork::Named(n) => n,
        }
    }

    /// Whether the build container gets a network.
    pub fn enabled(&self) -> bool {
        *self != EnvNetwork::None
    }

    /// The user-defined network, if one is named.
    pub fn named(&self) -> Option<&str> {
        match self {
            EnvNetwork::Named(n) => Some(n),
            _ => None,
        }
    }
}

/// An `env_network` value that names no usable network.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "env_network {:?} is not usable: `none` or `bridge` (exactly), or the name of a user-defined Docker network (letters, digits, `_`, `.`, `-`, starting with a letter or digit; not a word like \"off\" or \"host\")",
    clip(.value)
)]
pub struct EnvNetworkError {
    /// The value given.
    pub value: String,
}

impl TryFrom<String> for EnvNetwork {
    type Error = EnvNetworkError;

    fn try_from(s: String) -> Result<EnvNetwork, EnvNetworkError> {
        match s.as_str() {
            "none" => return Ok(EnvNetwork::None),
            "bridge" => return Ok(EnvNetwork::Bridge),
            _ => {}
        }
        if etip_docker::is_network_name(&s) && !NOT_NETWORKS.contains(&s.to_lowercase().as_str()) {
            Ok(EnvNetwork::Named(s))
        } else {
            Err(EnvNetworkError { value: s })
        }
    }
}

impl From<EnvNetwork> for String {
    fn from(n: EnvNetwork) -> String {
        n.as_str().to_string()
    }
}

/// A value quoted in a message, at most 80 characters of it.
fn clip(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BuildConfig {
    pub namespace: String,
    pub timeout_secs: u64,
    pub env_network: EnvNetwork,
    pub build_cpus: f64,
    pub build_memory_mb: u64,
    pub parallel_versions: bool,
    pub bootstrap: BootstrapConfig,
    pub java: JavaConfig,
    pub python: PythonConfig,
    pub network: NetworkConfig,
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
    /// Each suite's own packages (its JDKs), added to [`BootstrapConfig::packages`].
    pub suites: BTreeMap<String, SuiteConfig>,
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
    pub choose: PythonChoice,
    pub base_images: BTreeMap<String, String>,
    pub deps_as_of: DepsAsOf,
    /// Install a requirement with no release before the dependency date from later releases
    /// (recorded), instead of failing with `dependency_unavailable_before`.
    pub relax_deps: bool,
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
            env_network: EnvNetwork::Bridge,
            build_cpus: 0.0,
            build_memory_mb: 4096,
            parallel_versions: true,
            bootstrap: BootstrapConfig::default(),
            java: JavaConfig::default(),
            python: PythonConfig::default(),
            network: NetworkConfig::default(),
        }
    }
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        BootstrapConfig {
            repository: "etip/base".into(),
            suite: "bookworm".into(),
            packages: [
                "maven",
                "libsurefire-java",
                "junit4",
                "libmaven-compiler-plugin-java",
                "libmaven-resources-plugin-java",
                // build-classpath: the class path Java workloads compile and run against.
                "libmaven-dependency-plugin-java",
                "python3",
                "python3-pytest",
                "python3-venv",
                "python3-pip",
                "python3-setuptools",
                "python3-wheel",
                "python3-coverage",
                "python3-pytest-cov",
                "libjacoco-java",
                "junit5",
                "git",
                // Old releases of C extensions (cffi, brotlipy, ...) have no wheel for the
                // image's Python: the env layer builds them from their sdists.
                "gcc",
                "python3-dev",
                "libffi-dev",
                // /etc/protocols and /etc/services: socket.getprotobyname('tcp') fails without
                // them (dnspython, which eventlet imports, calls it at import).
                "netbase",
            ]
            .map(String::from)
            .to_vec(),
            mirror: String::new(),
            suites: DEFAULT_SUITES
                .iter()
                .map(|(name, packages)| {
                    let packages = packages.iter().map(|p| p.to_string()).collect();
                    (name.to_string(), SuiteConfig { packages })
                })
                .collect(),
        }
    }
}

impl Default for JavaConfig {
    fn default() -> Self {
        JavaConfig {
            default_jdk: "17".into(),
            allow_newer_jdk: true,
            base_images: BTreeMap::from([
                ("11".into(), format!("{BOOTSTRAP}:bullseye")),
                ("17".into(), format!("{BOOTSTRAP}:bookworm")),
                ("21".into(), format!("{BOOTSTRAP}:trixie")),
                ("25".into(), format!("{BOOTSTRAP}:trixie")),
            ]),
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
            choose: PythonChoice::Commit,
            base_images: BTreeMap::from([
                ("3.9".into(), format!("{BOOTSTRAP}:bullseye")),
                ("3.11".into(), format!("{BOOTSTRAP}:bookworm")),
                ("3.13".into(), format!("{BOOTSTRAP}:trixie")),
            ]),
            deps_as_of: DepsAsOf::Commit,
            relax_deps: true,
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
        "build configuration {path} is not valid: {} (see harness/build/README.md for the keys)",
        clip_toml_error(.source)
    )]
    Parse {
        path: String,
        #[source]
        source: toml::de::Error,
    },
    #[error(
        "build configuration {path} is not valid: {source} (see harness/build/README.md for the keys)"
    )]
    Invalid {
        path: String,
        #[source]
        source: InvalidConfig,
    },
}

/// toml's message with every line clipped to 200 characters, and at most 12 lines: it quotes the
/// offending line of the file, underlines the offending span and names the offending key, each in
/// full, so one long line would come back three times.
fn clip_toml_error(e: &toml::de::Error) -> String {
    const LINE: usize = 200;
    const LINES: usize = 12;
    let full = e.to_string();
    let mut out: Vec<String> = full
        .lines()
        .take(LINES)
        .map(|l| match l.char_indices().nth(LINE) {
            Some((cut, _)) => format!("{}…", &l[..cut]),
            None => l.to_string(),
        })
        .collect();
    if full.lines().count() > LINES {
        out.push("…".into());
    }
    out.join("\n")
}

/// Values of a configuration that etip cannot use (every problem found, one per entry).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .problems.join("; "))]
pub struct InvalidConfig {
    pub problems: Vec<String>,
}

impl InvalidConfig {
    /// At most [`InvalidConfig::SHOWN`] problems are kept (and a count of the rest), each cut to
    /// [`etip_core::clip::FOREIGN_CHARS`] characters: a message never echoes a huge value in full.
    pub const SHOWN: usize = 10;

    fn of(mut problems: Vec<String>) -> InvalidConfig {
        let more = problems.len().saturating_sub(Self::SHOWN);
        problems.truncate(Self::SHOWN);
        for p in &mut problems {
            *p = etip_core::clip::foreign(p.as_str());
        }
        if more > 0 {
            problems.push(format!("and {more} more"));
        }
        InvalidConfig { problems }
    }
}

/// Top-level tables of an `etip.toml` that belong to other commands (`[mine]`: `etip mine
/// github`; `[swarm]`: `--backend swarm`); the build reads around them.
pub const OTHER_SECTIONS: &[&str] = &["mine", "swarm"];

/// `text` with the tables of [`OTHER_SECTIONS`] (`[mine]`, `[mine.github]`, ...) blanked: their
/// header and key lines become empty lines, every other line keeps its number.
fn without_other_sections(text: &str) -> String {
    let mut skipping = false;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with('[') {
            let name = t.trim_start_matches('[').trim_start();
            skipping = OTHER_SECTIONS.iter().any(|o| {
                name.strip_prefix(o).is_some_and(|rest| {
                    rest.starts_with(']')
                        || rest.starts_with('.')
                        || rest.trim_start().starts_with(']')
                })
            });
        }
        if !skipping {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

impl BuildConfig {
    /// Reads a TOML file; keys it does not set keep their defaults; the tables of
    /// [`OTHER_SECTIONS`] are left to their commands.
    pub fn load(path: &Path) -> Result<BuildConfig, ConfigError> {
        let text =
            etip_core::bounded::read_to_string_capped(path, etip_core::bounded::MAX_INPUT_BYTES)
                .map_err(|source| ConfigError::Read {
                    path: path.display().to_string(),
                    source,
                })?;
        let parse = |source| ConfigError::Parse {
            path: path.display().to_string(),
            source,
        };
        // The sections of other commands (`etip config init` writes them into the same file)
        // are blanked line by line, so that errors still name the file's own lines.
        let cfg: BuildConfig = toml::from_str(&without_other_sections(&text)).map_err(parse)?;
        cfg.validate().map_err(|source| ConfigError::Invalid {
            path: path.display().to_string(),
            source,
        })?;
        Ok(cfg)
    }

    /// Checks every value that reaches the Docker engine, a command line or an image name, so a
    /// bad value is reported before any container starts: the namespace and the bootstrap
    /// repository are image repository names, the suite a tag part, packages Debian package
    /// names, base images image references; time limit, CPUs and memory in range.
    pub fn validate(&self) -> Result<(), InvalidConfig> {
        let mut problems = Vec::new();
        // `<namespace>/instance` is the longest repository etip makes in a namespace.
        if !is_repository_path(&self.namespace) || self.namespace.len() + 9 > MAX_NAME {
            problems.push(format!(
                "namespace {:?} is not an image repository name: {REPOSITORY_RULE}",
                self.namespace
            ));
        }
        if self.timeout_secs == 0 {
            problems.push("timeout_secs must be at least 1 (seconds per layer build)".into());
        }
        if !self.build_cpus.is_finite() || self.build_cpus < 0.0 {
            problems.push(format!(
                "build_cpus must be a finite number of CPUs, 0 or more (0: all), not {}",
                self.build_cpus
            ));
        }
        if !(MIN_MEMORY_MB..=MAX_MEMORY_MB).contains(&self.build_memory_mb) {
            problems.push(format!(
                "build_memory_mb must be between {MIN_MEMORY_MB} (Docker's minimum) and {MAX_MEMORY_MB}, not {}",
                self.build_memory_mb
            ));
        }
        if let EnvNetwork::Named(n) = &self.env_network
            && let Err(e) = EnvNetwork::try_from(n.clone())
        {
            problems.push(e.to_string());
        }
        self.bootstrap.check(&mut problems);
        network::check_config(&self.network, &mut problems);
        for (section, images, var) in [
            ("java", &self.java.base_images, "{jdk}"),
            ("python", &self.python.base_images, "{version}"),
        ] {
            for (version, image) in images {
                let ok = match BaseRef::parse(image, &self.bootstrap.suite) {
                    BaseRef::Bootstrap(suite) => is_tag(&suite) && !suite.starts_with(['.', '_']),
                    BaseRef::Image(r) => is_image_reference(&r.replace(var, "1")),
                };
                if !ok {
                    problems.push(format!(
                        "{section}.base_images.{version:?} = {image:?} is neither \"{BOOTSTRAP}\", \"{BOOTSTRAP}:<suite>\" nor an image reference (e.g. \"eclipse-temurin:{{jdk}}-jdk\")"
                    ));
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(InvalidConfig::of(problems))
        }
    }

    /// The configuration as TOML with its credentials masked and the `[network]` keys explained
    /// (for `etip build --print-config`).
    pub fn to_toml(&self) -> String {
        self.to_toml_with(None)
    }

    /// [`BuildConfig::to_toml`], also saying what `"auto"` finds on `host` (masked).
    pub fn to_toml_with(&self, host: Option<&network::HostNetwork>) -> String {
        let mut shown = self.clone();
        shown.network = self.network.masked();
        let text = toml::to_string_pretty(&shown)
            .expect("the configuration is plain data and always serialises");
        network::annotate_toml(&text, host)
    }
}

/// What a repository name may hold (the Docker reference grammar of path components).
const REPOSITORY_RULE: &str = "lower-case letters and digits, separated inside a component by `.`, `_`, `__` or dashes, components separated by `/` (e.g. \"etip\" or \"team/etip\")";

/// Docker's longest repository name.
const MAX_NAME: usize = 255;

/// The largest memory limit whose byte count fits Docker's signed 64-bit field.
const MAX_MEMORY_MB: u64 = (i64::MAX >> 20) as u64;

impl BootstrapConfig {
    /// Adds the problems of the bootstrap section (its values become the base image's tag and
    /// debootstrap's arguments).
    fn check(&self, problems: &mut Vec<String>) {
        if !is_repository_path(&self.repository) || self.repository.len() > MAX_NAME {
            problems.push(format!(
                "bootstrap.repository {:?} is not an image repository name: {REPOSITORY_RULE}",
                self.repository
            ));
        }
        // The tag is `<suite>-<12 hex digits of the key>`.
        if !is_tag(&self.suite) || self.suite.len() > 115 || self.suite.starts_with(['.', '_']) {
            problems.push(format!(
                "bootstrap.suite {:?} is not a Debian suite name (letters, digits, `.`, `_`, `-`; starting with a letter or digit)",
                self.suite
            ));
        }
        for (suite, extra) in &self.suites {
            if !is_tag(suite) || suite.len() > 115 || suite.starts_with(['.', '_']) {
                problems.push(format!(
                    "bootstrap.suites: {suite:?} is not a Debian suite name"
                ));
            }
            for p in &extra.packages {
                if !is_debian_package(p) {
                    problems.push(format!(
                        "bootstrap.suites.{suite}.packages: {p:?} is not a Debian package name"
                    ));
                }
            }
        }
        for p in &self.packages {
            if !is_debian_package(p) {
                problems.push(format!(
                    "bootstrap.packages: {p:?} is not a Debian package name (lower-case letters, digits, `+`, `-`, `.`; at least 2, starting with a letter or digit)"
                ));
            }
        }
        if !self.mirror.is_empty() && !is_mirror_url(&self.mirror) {
            problems.push(format!(
                "bootstrap.mirror {:?} is not a URL (e.g. \"http://deb.debian.org/debian\"; empty: the machine's apt sources)",
                self.mirror
            ));
        }
    }
}

/// One path component of a Docker repository name: `[a-z0-9]+` runs joined by `.`, `_`, `__` or
/// dashes.
fn is_path_component(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !alnum(b[i]) {
            i += 1;
        }
        let sep = &b[start..i];
        if !(sep == b"." || sep == b"_" || sep == b"__" || sep.iter().all(|c| *c == b'-')) {
            return false;
        }
    }
    true
}

/// A repository name without registry host: path components separated by `/`.
pub fn is_repository_path(s: &str) -> bool {
    s.split('/').all(is_path_component)
}

/// A Docker tag: `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
pub fn is_tag(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= 128
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// An image reference: `[host[:port]/]path[:tag][@algorithm:hex]`.
pub fn is_image_reference(s: &str) -> bool {
    let (name, digest) = match s.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (s, None),
    };
    let digest_ok = digest.is_none_or(|d| {
        d.split_once(':').is_some_and(|(algo, hex)| {
            !algo.is_empty()
                && algo
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+._-".contains(c))
                && hex.len() >= 32
                && hex.chars().all(|c| c.is_ascii_hexdigit())
        })
    });
    let (name, tag) = match name.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => (n, Some(t)),
        _ => (name, None),
    };
    let (host, path) = match name.split_once('/') {
        Some((h, p)) if h.contains(['.', ':']) || h == "localhost" => (Some(h), p),
        _ => (None, name),
    };
    let host_ok = host.is_none_or(|h| {
        let (domain, port) = h.split_once(':').unwrap_or((h, "0"));
        !domain.is_empty()
            && domain
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            && !port.is_empty()
            && port.chars().all(|c| c.is_ascii_digit())
    });
    digest_ok
        && host_ok
        && tag.is_none_or(is_tag)
        && is_repository_path(path)
        && name.len() <= MAX_NAME
}

/// A Debian package name (Policy 5.6.1).
fn is_debian_package(s: &str) -> bool {
    s.len() >= 2
        && s.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
}

/// `scheme://rest` without blanks or commas (debootstrap's mirror argument).
fn is_mirror_url(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, rest)| {
        scheme.starts_with(|c: char| c.is_ascii_lowercase())
            && scheme
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+.-".contains(c))
            && !rest.is_empty()
            && !rest.contains(|c: char| c.is_whitespace() || c == ',')
    })
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

    #[test]
    fn env_network_is_bridge_none_or_a_named_network() {
        assert_eq!(BuildConfig::default().env_network, EnvNetwork::Bridge);
        assert!(!EnvNetwork::None.enabled() && EnvNetwork::Bridge.enabled());
        let none: BuildConfig = toml::from_str("env_network = \"none\"").unwrap();
        assert!(!none.env_network.enabled());
        let named: BuildConfig = toml::from_str("env_network = \"etip-mirror_1.net\"").unwrap();
        assert_eq!(named.env_network.named(), Some("etip-mirror_1.net"));
        assert!(named.env_network.enabled());
        assert_eq!(named.env_network.as_str(), "etip-mirror_1.net");
        let back: BuildConfig = toml::from_str(&named.to_toml()).unwrap();
        assert_eq!(back.env_network, named.env_network);
        for bad in [
            "None", "off", "OFF", "host", "Bridge", "default", "", "x", "-net", "my net", "a:b",
        ] {
            let err = toml::from_str::<BuildConfig>(&format!("env_network = {bad:?}"))
                .expect_err(bad)
                .to_string();
            assert!(err.contains("`none` or `bridge`"), "{bad}: {err}");
        }
        // Set in code, a bad name is caught by validate.
        let cfg = BuildConfig {
            env_network: EnvNetwork::Named("host".into()),
            ..BuildConfig::default()
        };
        assert!(problems(&cfg).contains("env_network"));
    }

    fn problems(cfg: &BuildConfig) -> String {
        cfg.validate()
            .expect_err("an invalid configuration")
            .to_string()
    }

    #[test]
    fn defaults_are_valid() {
        BuildConfig::default().validate().unwrap();
        let ok: BuildConfig = toml::from_str(
            "namespace = \"team/etip-test_1.x\"\nbuild_cpus = 1.5\n[java]\nbase_images = { \"*\" = \"eclipse-temurin:{jdk}-jdk\", \"11\" = \"localhost:5000/jdk/img:11@sha256:0123456789abcdef0123456789abcdef\" }\n[python]\nbase_images = { \"*\" = \"python:{version}\" }\n",
        )
        .unwrap();
        ok.validate().unwrap();
    }

    #[test]
    fn invalid_values_are_rejected_with_their_key() {
        for ns in [
            "Bad", "a//b", "-x", "x-", "a..b", "a___b", "", "a b", "etip/",
        ] {
            let cfg = BuildConfig {
                namespace: ns.into(),
                ..BuildConfig::default()
            };
            assert!(problems(&cfg).contains("namespace"), "{ns:?}");
        }
        let mut cfg = BuildConfig {
            timeout_secs: 0,
            build_cpus: f64::NAN,
            build_memory_mb: 0,
            ..BuildConfig::default()
        };
        let p = problems(&cfg);
        for key in ["timeout_secs", "build_cpus", "build_memory_mb"] {
            assert!(p.contains(key), "{key} in {p}");
        }
        for cpus in [-1.0, f64::INFINITY] {
            cfg = BuildConfig {
                build_cpus: cpus,
                ..BuildConfig::default()
            };
            assert!(problems(&cfg).contains("build_cpus"));
        }
        cfg = BuildConfig {
            build_memory_mb: u64::MAX,
            ..BuildConfig::default()
        };
        assert!(problems(&cfg).contains("build_memory_mb"));
        cfg = BuildConfig::default();
        cfg.bootstrap.repository = "Etip/Base".into();
        cfg.bootstrap.suite = "--foreign".into();
        cfg.bootstrap.packages.push("a,b".into());
        cfg.bootstrap.mirror = "--no-check-gpg".into();
        let p = problems(&cfg);
        for key in [
            "bootstrap.repository",
            "bootstrap.suite",
            "bootstrap.packages",
            "bootstrap.mirror",
        ] {
            assert!(p.contains(key), "{key} in {p}");
        }
        cfg = BuildConfig::default();
        cfg.java
            .base_images
            .insert("*".into(), "Temurin:{jdk}".into());
        cfg.python
            .base_images
            .insert("3.12".into(), "python:bad tag".into());
        let p = problems(&cfg);
        assert!(p.contains("java.base_images"), "{p}");
        assert!(p.contains("python.base_images"), "{p}");
    }

    #[test]
    fn load_validates_and_reports_where_the_toml_is_malformed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("etip.toml");
        std::fs::write(&p, "namespace = \"ok\"\ntimeout_secs = = 3\n").unwrap();
        let err = BuildConfig::load(&p).unwrap_err().to_string();
        assert!(err.contains("line 2, column"), "{err}");
        std::fs::write(&p, "timeout_secs = 0\nenv_network = \"bridge\"\n").unwrap();
        let err = BuildConfig::load(&p).unwrap_err();
        assert!(matches!(err, ConfigError::Invalid { .. }), "{err}");
        assert!(err.to_string().contains("timeout_secs"), "{err}");
        std::fs::write(&p, "env_network = \"off\"\n").unwrap();
        let err = BuildConfig::load(&p).unwrap_err().to_string();
        assert!(err.contains("line 1, column"), "{err}");
        assert!(err.contains("`none` or `bridge`"), "{err}");
    }

    /// The `[mine]` tables of `etip config init`'s file are left to `etip mine`; errors after
    /// them still name the right line.
    #[test]
    fn other_commands_sections_are_read_around() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("etip.toml");
        std::fs::write(
            &p,
            "namespace = \"ns\"\n[mine.github]\nmin_stars = 3\n[mine]\nx = 1\n[java]\ndefault_jdk = \"21\"\n",
        )
        .unwrap();
        let cfg = BuildConfig::load(&p).unwrap();
        assert_eq!(
            (cfg.namespace.as_str(), cfg.java.default_jdk.as_str()),
            ("ns", "21")
        );
        std::fs::write(&p, "[mine.github]\nmin_stars = 3\n[java]\nnope = 1\n").unwrap();
        let err = BuildConfig::load(&p).unwrap_err().to_string();
        assert!(err.contains("line 4") && err.contains("nope"), "{err}");
        // A table that only starts like one is not skipped.
        std::fs::write(&p, "[miner]\nx = 1\n").unwrap();
        assert!(BuildConfig::load(&p).is_err());
    }

    /// Found by `fuzz/fuzz_targets/build_config_toml.rs`: a parse error quoted the offending line,
    /// its underline and the key in full, about three times the length of a long line.
    #[test]
    fn parse_errors_do_not_echo_long_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("etip.toml");
        let long = "A".repeat(5000);
        for text in [
            format!("{long} = 1\n"),
            format!("namespace = \"{long}\" x\n"),
            format!("[java]\nargs = [\"{long}\n"),
        ] {
            std::fs::write(&p, &text).unwrap();
            let err = BuildConfig::load(&p).unwrap_err();
            assert!(matches!(err, ConfigError::Parse { .. }), "{err}");
            let msg = err.to_string();
            assert!(msg.len() < 4096, "{} bytes: {}", msg.len(), &msg[..300]);
            assert!(msg.contains("line "), "{msg}");
        }
    }

    #[test]
    fn image_names_follow_the_docker_grammar() {
        for ok in ["etip", "a/b/c", "a.b", "a_b", "a__b", "a---b", "0x"] {
            assert!(is_repository_path(ok), "{ok}");
        }
        for ref_ok in [
            "python:3.11",
            "eclipse-temurin:17-jdk",
            "registry.example.com:5000/team/img",
            "localhost/img:t",
        ] {
            assert!(is_image_reference(ref_ok), "{ref_ok}");
        }
        for ref_bad in ["Python:3", "img:", "img:-x", "host:x/img", "img@sha256:xyz"] {
            assert!(!is_image_reference(ref_bad), "{ref_bad}");
        }
        assert!(is_tag("bookworm") && is_tag("_x") && !is_tag("-x") && !is_tag(""));
    }
}
