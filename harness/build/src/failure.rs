//! Why an instance failed: the failure kinds of `status.json` and how a failed layer build is
//! classified from its exit code and log (see the README, "Failure kinds").
//!
//! The scripts' exit codes say which step failed ([`spec::EXIT_TOOLCHAIN`], the versions' builds,
//! their smoke checks); the log says why: a Maven wrapper that cannot download its distribution,
//! an artifact Maven cannot resolve, a requirement pip finds no distribution for, a build backend
//! that is not installed. Only a build that failed for none of these is a compile failure.

use crate::spec;
use etip_core::instance::{FailureKind, Language};
use etip_docker::EngineError;

/// A failure of one instance, with its reason.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) kind: FailureKind,
    pub(crate) reason: String,
    pub(crate) detail: String,
}

impl Failure {
    pub(crate) fn new(kind: FailureKind, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            reason: kind.reason().to_string(),
            detail: detail.into(),
        }
    }

    /// A failed build of an ETIP whose patch changes compiled-extension sources says so: the
    /// image must compile them, which the default bootstrap image (no C compiler) cannot.
    pub(crate) fn with_extensions(mut self, extension_files: &[String]) -> Failure {
        let building = matches!(
            self.kind,
            FailureKind::OriginalCompile
                | FailureKind::PatchedCompile
                | FailureKind::EnvironmentIncomplete
                | FailureKind::DependencyResolution
        );
        if building && !extension_files.is_empty() {
            let shown: Vec<&str> = extension_files.iter().take(5).map(String::as_str).collect();
            let more = extension_files.len().saturating_sub(shown.len());
            self.detail = format!(
                "note: this ETIP changes compiled-extension sources ({}{}): the image must compile \
                 the project's extensions, which needs a C/C++ compiler and their build tools; \
                 with the bootstrap base image, add e.g. build-essential, cython3 and meson to \
                 [bootstrap] packages, or use a base image that has them\n{}",
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                },
                self.detail
            );
        }
        self
    }
}

pub(crate) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// `log` without ANSI colour codes (Maven colours some lines even in batch mode).
fn plain(log: &str) -> String {
    let mut out = String::with_capacity(log.len());
    let mut chars = log.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// What a build log says about the environment, when a build failed because of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cause {
    /// The Maven wrapper could not download its jar or its Maven distribution.
    Wrapper {
        /// The wrapper's `distributionUrl` (and `wrapperUrl`), as etip's script printed them.
        urls: Option<String>,
        /// The wrapper's own error line.
        error: String,
    },
    /// Maven could not resolve an artifact.
    Artifact {
        /// `parent POM`, `build extension`, `plugin`, `dependency` or `artifact`.
        role: &'static str,
        /// `group:artifact[:type]:version` as Maven named it.
        artifact: String,
        /// The repository or the URL Maven tried, if it said.
        from: Option<String>,
        /// Maven ran offline (`-o`) and the artifact was not in the local repository.
        offline: bool,
    },
    /// pip found no distribution of a requirement.
    Pip { requirement: String },
    /// The PEP 517 build backend could not be imported.
    Backend { error: String },
    /// The project's own metadata step (`setup.py egg_info`) failed: typically code written for
    /// an older Python than the image's.
    PythonInstall { error: String },
}

/// The first whitespace-separated word after `marker` in `line`, without trailing punctuation.
fn word_after<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    let at = line.find(marker)? + marker.len();
    let word = line[at..].split_whitespace().next()?;
    let word = word.trim_end_matches(['.', ',', ':', ';', ')', '\'']);
    (!word.is_empty()).then_some(word)
}

/// A Maven wrapper that failed to download (see `tests/fixtures/logs/mvnw-*.log`).
fn wrapper_cause(log: &str) -> Option<Cause> {
    let lines: Vec<&str> = log.lines().collect();
    let java_download = log.contains("Exception in thread \"main\"")
        && (log.contains("at org.apache.maven.wrapper.") || log.contains("at Downloader.main("));
    let error = lines.iter().find_map(|l| {
        let l = l.trim();
        if l.starts_with("- Error downloading:")
            || l.starts_with("Error: Failed to validate Maven wrapper")
            || l.contains("Could not find or load main class org.apache.maven.wrapper.")
            || ((l.starts_with("wget:") || l.starts_with("curl:")) && l.contains("Failed to fetch"))
            || (java_download && l.starts_with("Exception in thread \"main\""))
        {
            Some(
                l.trim_start_matches("Exception in thread \"main\" ")
                    .to_string(),
            )
        } else {
            None
        }
    })?;
    let urls = lines.iter().rev().find_map(|l| {
        l.find(spec::WRAPPER_MARKER)
            .map(|at| l[at + spec::WRAPPER_MARKER.len()..].trim().to_string())
    });
    let urls = urls.filter(|u| !u.is_empty());
    Some(Cause::Wrapper { urls, error })
}

/// An artifact Maven could not resolve (see `tests/fixtures/logs/maven-*.log`).
fn maven_cause(log: &str) -> Option<Cause> {
    let line = log
        .lines()
        .find(|l| spec::MAVEN_RESOLUTION_ERRORS.iter().any(|s| l.contains(s)))?
        .trim_start_matches("[FATAL] ")
        .trim_start_matches("[ERROR] ");
    let role = if line.contains("Non-resolvable parent POM") {
        "parent POM"
    } else if line.starts_with("Extension ") {
        "build extension"
    } else if line.starts_with("Plugin ") {
        "plugin"
    } else if line.contains("Could not resolve dependencies") {
        "dependency"
    } else {
        "artifact"
    };
    let artifact = [
        "the artifact ",
        "Could not transfer artifact ",
        "Could not find artifact ",
        "Failed to collect dependencies at ",
        "following artifacts could not be resolved: ",
        "Extension ",
        "Plugin ",
    ]
    .iter()
    .find_map(|m| word_after(line, m))
    .unwrap_or("an artifact")
    .to_string();
    // The URL of a failed download is often only in a later `Caused by:` line.
    let from = log
        .lines()
        .find_map(|l| word_after(l, "transfer failed for "))
        .or_else(|| {
            let at = line
                .find("Cannot access ")
                .or_else(|| line.find("from/to "))?;
            let rest = &line[at..];
            let open = rest.find('(')? + 1;
            Some(&rest[open..open + rest[open..].find(')')?])
        })
        .map(str::to_string);
    Some(Cause::Artifact {
        role,
        artifact,
        from,
        offline: line.contains("in offline mode"),
    })
}

/// A requirement pip found no distribution of (see `tests/fixtures/logs/pip-no-index.log`).
fn pip_cause(log: &str) -> Option<Cause> {
    let requirement = log.lines().find_map(|l| {
        word_after(l, "No matching distribution found for ").or_else(|| {
            word_after(
                l,
                "Could not find a version that satisfies the requirement ",
            )
        })
    })?;
    Some(Cause::Pip {
        requirement: requirement.to_string(),
    })
}

/// A build backend pip could not import (see `tests/fixtures/logs/pip-build-backend.log`).
fn backend_cause(log: &str) -> Option<Cause> {
    let at = log.find("BackendUnavailable")?;
    let error = log[at..]
        .lines()
        .rfind(|l| l.starts_with("ModuleNotFoundError:") || l.starts_with("ImportError:"))
        .map(|l| l.split_once(": ").map_or(l, |(_, m)| m).to_string())
        .unwrap_or_else(|| "the build backend is unavailable".to_string());
    Some(Cause::Backend { error })
}

fn python_install_cause(log: &str) -> Option<Cause> {
    let at = log.find("metadata-generation-failed")?;
    let error = log[..at]
        .lines()
        .map(str::trim)
        .rfind(|l| {
            l.split_once(": ")
                .is_some_and(|(kind, _)| kind.ends_with("Error") && !kind.contains(' '))
        })
        .unwrap_or("the project's setup.py failed")
        .to_string();
    Some(Cause::PythonInstall { error })
}

/// What went wrong with the environment, according to a build log.
pub(crate) fn cause(log: &str) -> Option<Cause> {
    let log = plain(log);
    wrapper_cause(&log)
        .or_else(|| maven_cause(&log))
        .or_else(|| pip_cause(&log))
        .or_else(|| backend_cause(&log))
        .or_else(|| python_install_cause(&log))
}

const MAVEN_HINT: &str = "the instance layer builds without network from the env layer's local \
     Maven repository, which the env layer fills online only when a Maven mirror is configured or, \
     with none, when Maven Central answers from its network (the build log says which): \
     set network.maven_mirror_url (or a mirror in ~/.m2/settings.xml) to a repository that has it, \
     reachable from the env layer (env_network not \"none\", network.https_proxy, network.ca_bundle)";

impl Cause {
    /// One line naming what is missing, and a hint what to configure.
    fn explain(&self) -> (String, String) {
        match self {
            Cause::Wrapper { urls, error } => (
                format!(
                    "the Maven wrapper (./mvnw) cannot download {}: {error}",
                    urls.as_deref().unwrap_or("its Maven distribution")
                ),
                "the env layer installs the wrapper's distribution: check that the URL is right and \
                 reachable from it (env_network not \"none\", network.https_proxy, \
                 network.ca_bundle), or set java.command = \"mvn\" to build with the image's Maven"
                    .to_string(),
            ),
            Cause::Artifact {
                role,
                artifact,
                from,
                offline,
            } => {
                let from = from
                    .as_ref()
                    .map(|f| format!(" from {f}"))
                    .unwrap_or_default();
                let how = if *offline {
                    "is not in the local repository and Maven runs offline"
                } else {
                    "could not be downloaded"
                };
                (
                    format!("Maven cannot resolve the {role} {artifact}{from}: it {how}"),
                    MAVEN_HINT.to_string(),
                )
            }
            Cause::Pip { requirement } => (
                format!("pip found no distribution for {requirement}"),
                "point network.pip_index_url (or the host's PIP_INDEX_URL / pip.conf) at an index \
                 that has it, reachable from the env layer (env_network not \"none\"), or use a \
                 base image that has it"
                    .to_string(),
            ),
            Cause::Backend { error } => (
                format!("cannot import the build backend: {error}"),
                "the env layer installs pyproject.toml's [build-system] requires (the instance \
                 layer installs without build isolation): check that the backend is on \
                 network.pip_index_url, or install it with python.deps_command"
                    .to_string(),
            ),
            Cause::PythonInstall { error } => (
                format!("the project does not install (its setup.py fails): {error}"),
                "code written for an older Python fails on the image's Python (the toolchain \
                 says which): give python.base_images an image of the Python the project \
                 supported then, e.g. \"python:{version}\" for \"3.8\""
                    .to_string(),
            ),
        }
    }
}

#[derive(Debug)]
pub(crate) enum LayerFailure {
    Engine(EngineError),
    Context(crate::context::ContextError),
    Build(EngineError, String),
}

/// The failures every layer shares (engine, context, time limit); a failed build run comes back
/// as its error and log for the layer's own classification.
fn common_failure(f: LayerFailure, layer: &str) -> Result<Failure, (EngineError, String)> {
    match f {
        LayerFailure::Engine(e) => Ok(Failure::new(FailureKind::Engine, e.to_string())),
        LayerFailure::Context(e) => Ok(Failure::new(FailureKind::Checkout, e.to_string())),
        LayerFailure::Build(EngineError::BuildTimeout { secs, .. }, _) => Ok(Failure::new(
            FailureKind::Timeout,
            format!("the {layer} layer build exceeded {secs} s"),
        )),
        LayerFailure::Build(e, log) => Err((e, log)),
    }
}

pub(crate) fn classify_env_failure(f: LayerFailure, version: &str, lang: Language) -> Failure {
    let (e, log) = match common_failure(f, "env") {
        Ok(failure) => return failure,
        Err(build) => build,
    };
    let code = match &e {
        EngineError::Build { exit_code, .. } => *exit_code,
        _ => return Failure::new(FailureKind::Engine, format!("{e}\n{}", tail(&log, 20))),
    };
    match code {
        Some(spec::EXIT_TOOLCHAIN) => Failure {
            kind: FailureKind::NoBaseImage,
            reason: match lang {
                Language::Java => format!("no base image for JDK {version}"),
                Language::Python => format!("no base image for Python {version}"),
            },
            detail: tail(&log, 20),
        },
        // pip could not install a declared requirement; the env script named it.
        Some(spec::EXIT_DEPENDENCY) => {
            let named = log.lines().rev().find_map(|l| {
                l.split_once(spec::REQUIREMENT_FAILED)
                    .map(|(_, r)| r.trim().to_string())
            });
            Failure {
                kind: FailureKind::DependencyResolution,
                reason: format!(
                    "{}: {}",
                    FailureKind::DependencyResolution.reason(),
                    named.as_deref().unwrap_or("a declared Python requirement")
                ),
                detail: format!(
                    "env layer: pip could not install the declared requirements\n{}{e}\n{}",
                    cause(&log)
                        .map(|c| format!("hint: {}\n", c.explain().1))
                        .unwrap_or_default(),
                    tail(&log, 40)
                ),
            }
        }
        // A requirement had no release before the dependency date, and was not relaxed.
        Some(spec::EXIT_UNAVAILABLE_BEFORE) => {
            let named = log.lines().rev().find_map(|l| {
                l.split_once(spec::UNAVAILABLE_BEFORE)
                    .map(|(_, r)| r.trim().to_string())
            });
            Failure {
                kind: FailureKind::DependencyUnavailableBefore,
                reason: format!(
                    "{}: {}",
                    FailureKind::DependencyUnavailableBefore.reason(),
                    named.as_deref().unwrap_or("a declared Python requirement")
                ),
                detail: format!(
                    "env layer: nothing released before the dependency date satisfies a requirement \
                     (python.relax_deps = true installs a later release instead; \
                     python.deps_as_of = \"none\" installs today's)\n{e}\n{}",
                    tail(&log, 40)
                ),
            }
        }
        // The image lacks what the env layer sets up (a venv module, the configured setup).
        Some(spec::EXIT_SETUP) => Failure::new(
            FailureKind::EnvironmentIncomplete,
            format!(
                "env layer: the environment setup failed\n{e}\n{}",
                tail(&log, 40)
            ),
        ),
        _ => {
            let head = match cause(&log) {
                Some(c) => {
                    let (what, hint) = c.explain();
                    format!("env layer: {what}\nhint: {hint}\n")
                }
                None => String::new(),
            };
            Failure::new(
                FailureKind::DependencyResolution,
                format!("{head}{e}\n{}", tail(&log, 40)),
            )
        }
    }
}

/// The part of an instance build log that belongs to version `which`.
fn section<'a>(log: &'a str, which: &str) -> &'a str {
    let marker = format!("etip: building {which}");
    match log.rfind(&marker) {
        Some(at) => {
            let rest = &log[at + marker.len()..];
            let end = rest.find("etip: building ").unwrap_or(rest.len());
            &log[at..at + marker.len() + end]
        }
        None => log,
    }
}

/// A failed smoke check: what each failing version could not import, collect or find.
fn smoke_failure(e: &EngineError, log: &str, which: &str) -> Failure {
    let found: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split_once(spec::SMOKE_FAILED).map(|(_, m)| m.trim()))
        .collect();
    let summary = if found.is_empty() {
        format!("{which}: the smoke check failed")
    } else {
        found.join("\n")
    };
    Failure {
        kind: FailureKind::EnvironmentIncomplete,
        reason: format!("{} ({which})", FailureKind::EnvironmentIncomplete.reason()),
        detail: format!("{summary}\n{e}\n{}", tail(section(log, which), 40)),
    }
}

/// What in a failed Python smoke check or build reads as the interpreter being too new for the
/// code (a standard-library name removed in a later Python, syntax it no longer accepts), if
/// anything: then an older interpreter is worth one more try.
pub(crate) fn python_incompatibility(detail: &str) -> Option<&'static str> {
    const SIGNS: [(&str, &str); 16] = [
        (
            "from 'collections'",
            "an ABC imported from collections (moved to collections.abc, removed in 3.10)",
        ),
        (
            "module 'collections' has no attribute",
            "an ABC used from collections (removed in 3.10)",
        ),
        ("No module named 'imp'", "the imp module (removed in 3.12)"),
        ("No module named 'distutils'", "distutils (removed in 3.12)"),
        ("No module named 'asyncore'", "asyncore (removed in 3.12)"),
        ("No module named 'asynchat'", "asynchat (removed in 3.12)"),
        ("No module named 'cgi'", "cgi (removed in 3.13)"),
        ("No module named 'pipes'", "pipes (removed in 3.13)"),
        ("No module named 'crypt'", "crypt (removed in 3.13)"),
        (
            "cannot import name 'formatargspec'",
            "inspect.formatargspec (removed in 3.11)",
        ),
        (
            "has no attribute 'getargspec'",
            "inspect.getargspec (removed in 3.11)",
        ),
        (
            "cannot import name 'getargspec'",
            "inspect.getargspec (removed in 3.11)",
        ),
        (
            "has no attribute 'makeSuite'",
            "unittest.makeSuite (removed in 3.13)",
        ),
        (
            "has no attribute 'encodestring'",
            "base64.encodestring (removed in 3.9)",
        ),
        (
            "cannot import name 'escape' from 'cgi'",
            "cgi.escape (removed in 3.8)",
        ),
        ("SyntaxError", "syntax the interpreter no longer accepts"),
    ];
    SIGNS
        .iter()
        .find(|(sign, _)| detail.contains(sign))
        .map(|(_, what)| *what)
}

/// A version's failed build: what its log says went wrong, else a compile failure.
fn build_failure(e: &EngineError, log: &str, which: &str) -> Failure {
    let part = section(log, which);
    let detail = |head: String| format!("{head}{e}\n{}", tail(part, 40));
    let Some(c) = cause(part) else {
        let kind = if which == "original" {
            FailureKind::OriginalCompile
        } else {
            FailureKind::PatchedCompile
        };
        return Failure::new(kind, detail(String::new()));
    };
    let (what, hint) = c.explain();
    let (kind, what) = match &c {
        Cause::Backend { .. } | Cause::PythonInstall { .. } => {
            (FailureKind::EnvironmentIncomplete, what)
        }
        // The original built with everything the env layer resolved: the patch needs more.
        Cause::Artifact { artifact, role, .. } if which == "patched" => (
            FailureKind::DependencyMissing,
            format!(
                "the patch needs the {role} {artifact}, which the original does not: it is not in \
                 the env layer's local Maven repository (resolved from the original's build \
                 descriptors) and the instance layer has no network ({what})"
            ),
        ),
        _ => (FailureKind::DependencyResolution, what),
    };
    Failure {
        kind,
        reason: format!("{} ({which})", kind.reason()),
        detail: detail(format!("{which}: {what}\nhint: {hint}\n")),
    }
}

pub(crate) fn classify_instance_failure(f: LayerFailure) -> Failure {
    let (e, log) = match common_failure(f, "instance") {
        Ok(failure) => return failure,
        Err(build) => build,
    };
    let code = match &e {
        EngineError::Build { exit_code, .. } => *exit_code,
        _ => return Failure::new(FailureKind::Engine, format!("{e}\n{}", tail(&log, 20))),
    };
    match code {
        Some(spec::EXIT_SMOKE_ORIGINAL) => smoke_failure(&e, &log, "original"),
        Some(spec::EXIT_SMOKE_PATCHED) => smoke_failure(&e, &log, "patched"),
        Some(spec::EXIT_ORIGINAL) => build_failure(&e, &log, "original"),
        Some(spec::EXIT_PATCHED) => build_failure(&e, &log, "patched"),
        Some(spec::EXIT_SETUP) => Failure::new(
            FailureKind::EnvironmentIncomplete,
            format!(
                "instance layer: the environment setup failed\n{e}\n{}",
                tail(&log, 40)
            ),
        ),
        _ => Failure::new(FailureKind::Engine, format!("{e}\n{}", tail(&log, 20))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real log excerpt of `tests/fixtures/logs/`.
    macro_rules! real {
        ($name:literal) => {
            include_str!(concat!("../tests/fixtures/logs/", $name))
        };
    }

    /// The wrapper URLs of mybatis-3's `.mvn/wrapper/maven-wrapper.properties`, as the instance
    /// script prints them.
    const MYBATIS_WRAPPER: &str = "distributionUrl=https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.16/apache-maven-3.9.16-bin.zip wrapperUrl=https://repo.maven.apache.org/maven2/org/apache/maven/wrapper/maven-wrapper/3.3.4/maven-wrapper-3.3.4.jar";

    /// An instance layer log as the script writes it (both versions, original first) and the
    /// failure the script's exit code `code` makes of it.
    fn instance(code: i64, original: &str, patched: &str) -> Failure {
        let log = format!(
            "etip: building original with sh ./mvnw\n{original}\netip: building patched with sh ./mvnw\n{patched}\n"
        );
        let e = EngineError::Build {
            tag: "etip/instance:x-1".into(),
            detail: format!("the build command exited with code {code}"),
            exit_code: Some(code),
            log: String::new(),
        };
        classify_instance_failure(LayerFailure::Build(e, log))
    }

    #[test]
    fn a_setup_py_failing_on_the_image_python_is_environment_incomplete() {
        let log = format!(
            "etip: building original\n{}etip: original does not install\n",
            real!("pip-setup-py-metadata-python311.log")
        );
        let e = EngineError::Build {
            tag: "etip/instance:x-1".into(),
            detail: "the build command exited with code 10".into(),
            exit_code: Some(spec::EXIT_ORIGINAL),
            log: String::new(),
        };
        let f = classify_instance_failure(LayerFailure::Build(e, log));
        assert_eq!(f.kind, FailureKind::EnvironmentIncomplete, "{}", f.detail);
        assert!(
            f.detail.contains(
                "original: the project does not install (its setup.py fails): ImportError: \
                 cannot import name 'Mapping' from 'collections'"
            ),
            "{}",
            f.detail
        );
        assert!(f.detail.contains("python.base_images"), "{}", f.detail);
    }

    fn env(code: i64, log: &str) -> Failure {
        let e = EngineError::Build {
            tag: "etip/env:java-x-1".into(),
            detail: format!("the build command exited with code {code}"),
            exit_code: Some(code),
            log: String::new(),
        };
        classify_env_failure(LayerFailure::Build(e, log.into()), "17", Language::Java)
    }

    const BUILT: &str =
        "[INFO] BUILD SUCCESS\netip: smoke: patched: module .: the test classes are compiled";

    /// The mybatis case of issue 11: `./mvnw` could not download the wrapper (or its Maven)
    /// without network. It was recorded as "original does not compile".
    #[test]
    fn maven_wrapper_download_failures_are_dependency_resolution() {
        for log in [
            real!("mvnw-downloader-offline.log"),
            real!("mvnw-downloader-nosha-offline.log"),
            real!("mvnw-jar-offline.log"),
            real!("mvnw-only-script-offline.log"),
        ] {
            let original = format!(
                "{}{MYBATIS_WRAPPER}\n{log}\netip: original does not build",
                spec::WRAPPER_MARKER
            );
            let f = instance(spec::EXIT_ORIGINAL, &original, BUILT);
            assert_eq!(f.kind, FailureKind::DependencyResolution, "{}", f.detail);
            assert_eq!(f.reason, "dependency resolution failed (original)");
            let first = f.detail.lines().next().unwrap();
            assert!(first.starts_with("original: the Maven wrapper (./mvnw) cannot download distributionUrl=https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.16/"), "{first}");
            assert!(first.contains("repo.maven.apache.org"), "{first}");
            assert!(f.detail.contains("java.command = \"mvn\""), "{}", f.detail);
        }
        // Without etip's line naming the URLs, the wrapper's own error still decides.
        let f = instance(spec::EXIT_ORIGINAL, real!("mvnw-jar-offline.log"), BUILT);
        assert_eq!(f.kind, FailureKind::DependencyResolution);
        assert!(f.detail.starts_with("original: the Maven wrapper (./mvnw) cannot download its Maven distribution: java.net.UnknownHostException: repo.maven.apache.org"), "{}", f.detail);
    }

    #[test]
    fn unresolvable_parent_extension_plugin_and_dependency_name_the_artifact() {
        for (log, what) in [
            (
                real!("maven-parent-offline.log"),
                "parent POM org.sonatype.oss:oss-parent:pom:7 from https://repo.maven.apache.org/maven2: it is not in the local repository and Maven runs offline",
            ),
            (
                real!("maven-parent-online.log"),
                "parent POM org.sonatype.oss:oss-parent:pom:7 from https://repo.maven.apache.org/maven2/org/sonatype/oss/oss-parent/7/oss-parent-7.pom: it could not be downloaded",
            ),
            (
                real!("maven-extension-offline.log"),
                "build extension kr.motd.maven:os-maven-plugin:jar:1.7.1 from https://repo.maven.apache.org/maven2: it is not in",
            ),
            (
                real!("maven-extension-online.log"),
                "build extension kr.motd.maven:os-maven-plugin:1.7.1 from https://repo.maven.apache.org/maven2/kr/motd/maven/os-maven-plugin/1.7.1/os-maven-plugin-1.7.1.pom: it could not",
            ),
            (
                real!("maven-plugin-offline.log"),
                "plugin org.jacoco:jacoco-maven-plugin:jar:0.8.11 from https://repo.maven.apache.org/maven2: it is not in",
            ),
            (
                real!("maven-dependency-offline.log"),
                "dependency com.google.guava:guava:jar:33.0.0-jre from https://repo.maven.apache.org/maven2: it is not in",
            ),
            (
                real!("maven-dependency-online.log"),
                "dependency com.google.guava:guava:pom:33.0.0-jre from https://repo.maven.apache.org/maven2/com/google/guava/guava/33.0.0-jre/guava-33.0.0-jre.pom",
            ),
        ] {
            let f = instance(spec::EXIT_ORIGINAL, log, "");
            assert_eq!(f.kind, FailureKind::DependencyResolution, "{}", f.detail);
            assert!(
                f.detail
                    .starts_with(&format!("original: Maven cannot resolve the {what}")),
                "{what}\n{}",
                f.detail
            );
            assert!(
                f.detail.contains("\nhint: ") && f.detail.contains("settings.xml"),
                "{}",
                f.detail
            );
            // The same failure of the env layer's resolution run.
            let f = env(spec::EXIT_DEPENDENCIES, log);
            assert_eq!(f.kind, FailureKind::DependencyResolution);
            assert!(
                f.detail
                    .starts_with(&format!("env layer: Maven cannot resolve the {what}")),
                "{}",
                f.detail
            );
        }
    }

    /// A failed build of an ETIP that changes compiled-extension sources names them and what
    /// the image lacks; other failures and other ETIPs are left as they are.
    #[test]
    fn compiled_extension_builds_say_what_the_image_needs() {
        let files: Vec<String> = ["scipy/special/_ufuncs.pyx", "scipy/special/meson.build"]
            .map(String::from)
            .to_vec();
        let f = instance(spec::EXIT_PATCHED, BUILT, "error: command 'gcc' failed")
            .with_extensions(&files);
        assert_eq!(f.kind, FailureKind::PatchedCompile);
        assert!(
            f.detail.starts_with(
                "note: this ETIP changes compiled-extension sources (scipy/special/_ufuncs.pyx, scipy/special/meson.build)"
            ),
            "{}",
            f.detail
        );
        assert!(f.detail.contains("build-essential"));
        let plain = instance(spec::EXIT_PATCHED, BUILT, "error: command 'gcc' failed");
        let before = plain.detail.clone();
        assert_eq!(plain.with_extensions(&[]).detail, before);
        let engine = Failure::new(FailureKind::Engine, "gone").with_extensions(&files);
        assert_eq!(engine.detail, "gone");
    }

    /// An artifact only the patched tree needs (the original built offline with what the env
    /// layer resolved) is missing, not unresolvable.
    #[test]
    fn artifact_missing_only_for_the_patched_tree_is_dependency_missing() {
        let f = instance(
            spec::EXIT_PATCHED,
            BUILT,
            real!("maven-dependency-offline.log"),
        );
        assert_eq!(f.kind, FailureKind::DependencyMissing, "{}", f.detail);
        assert_eq!(f.reason, "dependency missing (patched)");
        assert!(f.detail.starts_with("patched: the patch needs the dependency com.google.guava:guava:jar:33.0.0-jre, which the original does not"), "{}", f.detail);
        // The same artifact missing for the original is a resolution failure.
        let f = instance(
            spec::EXIT_ORIGINAL,
            real!("maven-dependency-offline.log"),
            "",
        );
        assert_eq!(f.kind, FailureKind::DependencyResolution);
    }

    #[test]
    fn compile_errors_stay_compile_failures() {
        let log = real!("maven-compile-error.log");
        assert_eq!(cause(log), None);
        let f = instance(spec::EXIT_ORIGINAL, log, "");
        assert_eq!(f.kind, FailureKind::OriginalCompile);
        assert!(f.detail.contains("cannot find symbol"), "{}", f.detail);
        let f = instance(spec::EXIT_PATCHED, BUILT, log);
        assert_eq!(f.kind, FailureKind::PatchedCompile);
        assert_eq!(f.reason, "patched does not compile");
        // The patched section only: the original's success says nothing about the failure.
        assert!(!f.detail.contains("BUILD SUCCESS"), "{}", f.detail);
    }

    #[test]
    fn pip_without_a_distribution_names_the_requirement() {
        let log = real!("pip-no-index.log");
        assert_eq!(
            cause(log),
            Some(Cause::Pip {
                requirement: "urllib3>=1.21.1".into()
            })
        );
        let e = EngineError::Build {
            tag: "etip/env:python-x-1".into(),
            detail: "exit 4".into(),
            exit_code: Some(spec::EXIT_DEPENDENCIES),
            log: String::new(),
        };
        let f = classify_env_failure(LayerFailure::Build(e, log.into()), "3.11", Language::Python);
        assert_eq!(f.kind, FailureKind::DependencyResolution);
        assert!(
            f.detail
                .starts_with("env layer: pip found no distribution for urllib3>=1.21.1\nhint: "),
            "{}",
            f.detail
        );
    }

    #[test]
    fn missing_build_backend_is_environment_incomplete() {
        let f = instance(spec::EXIT_ORIGINAL, real!("pip-build-backend.log"), "");
        assert_eq!(f.kind, FailureKind::EnvironmentIncomplete, "{}", f.detail);
        assert_eq!(f.reason, "environment incomplete (original)");
        assert!(
            f.detail.starts_with(
                "original: cannot import the build backend: No module named 'hatchling'"
            ),
            "{}",
            f.detail
        );
    }

    /// A failed smoke check names what each failing version is missing, first thing in the detail.
    #[test]
    fn smoke_failures_are_environment_incomplete() {
        let collect = real!("pytest-collect-missing-module.log");
        let original = format!(
            "{}original: cannot import requests: No module named 'urllib3'",
            spec::SMOKE_FAILED
        );
        let patched = format!(
            "{collect}\n{}patched: pytest cannot collect the tests (exit 2): tests/test_get.py: ModuleNotFoundError: No module named 'urllib3'",
            spec::SMOKE_FAILED
        );
        let f = instance(spec::EXIT_SMOKE_ORIGINAL, &original, &patched);
        assert_eq!(f.kind, FailureKind::EnvironmentIncomplete);
        assert_eq!(f.reason, "environment incomplete (original)");
        let lines: Vec<&str> = f.detail.lines().collect();
        assert_eq!(
            lines[0],
            "original: cannot import requests: No module named 'urllib3'"
        );
        assert!(
            lines[1].starts_with("patched: pytest cannot collect the tests"),
            "{}",
            f.detail
        );
        assert_eq!(
            instance(spec::EXIT_SMOKE_PATCHED, BUILT, &patched).reason,
            "environment incomplete (patched)"
        );
    }

    #[test]
    fn env_setup_failures_are_environment_incomplete() {
        let f = env(
            spec::EXIT_SETUP,
            "etip: env setup failed: ln -s /usr/share/maven-repo /opt/etip/m2",
        );
        assert_eq!(f.kind, FailureKind::EnvironmentIncomplete);
        assert_eq!(
            env(spec::EXIT_TOOLCHAIN, "").reason,
            "no base image for JDK 17"
        );
    }
}
