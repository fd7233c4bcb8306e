//! Which toolchain version an instance gets and the base image that provides it: the interpreter
//! or JDK of the commit's time ([`etip_toolchain::era`]) among those the toolchain tables
//! (`python.base_images`, `java.base_images`) configure, or the Python a benchmark's environment
//! spec sets ([`pinned_python`]), and where each setting of such a spec came from
//! ([`spec_settings`]).

use crate::config::{BaseRef, BuildConfig, PythonChoice};
use crate::failure::Failure;
use etip_core::instance::{FailureKind, Language};
use etip_toolchain::{detect, era};

/// A chosen toolchain.
#[derive(Debug, Clone)]
pub(crate) struct Chosen {
    /// `"3.9"`, `"17"`.
    pub(crate) version: String,
    /// What the repository asked for, if anything.
    pub(crate) requested: Option<detect::Request>,
    pub(crate) base: BaseRef,
    /// Why this version, in one sentence.
    pub(crate) why: String,
    /// What the commit's files say (`"setup.py: classifiers: 2.7, 3.4"`).
    pub(crate) evidence: Vec<String>,
    /// Other configured versions that fit and their images, newest first: what to try when this
    /// one proves incompatible.
    pub(crate) older: Vec<(String, BaseRef)>,
}

/// What the toolchain choice reads of a commit: its paths, a file reader, its date.
pub(crate) struct Commit<'a> {
    pub(crate) paths: &'a [&'a str],
    pub(crate) read: &'a dyn Fn(&str) -> Option<String>,
    /// Committer date, unix seconds.
    pub(crate) time: i64,
}

/// Chooses the toolchain version and the base image for a language.
pub(crate) fn select(
    cfg: &BuildConfig,
    lang: Language,
    commit: &Commit,
) -> Result<Chosen, Failure> {
    match lang {
        Language::Java => select_java(cfg, commit),
        Language::Python => match cfg.python.choose {
            PythonChoice::Commit => select_python(cfg, commit),
            PythonChoice::Default => select_python_default(cfg, commit.read),
        },
    }
}

/// The image of `version` in a toolchain table (`var` is `{jdk}` or `{version}`), the `"*"`
/// entry standing for any version.
fn image_of(
    images: &std::collections::BTreeMap<String, String>,
    version: &str,
    var: &str,
    default_suite: &str,
) -> Option<BaseRef> {
    images
        .get(version)
        .or_else(|| images.get("*"))
        .map(|v| BaseRef::parse(&v.replace(var, version), default_suite))
}

fn unavailable(lang: Language, u: era::Unavailable, evidence: Vec<String>) -> Failure {
    let (section, example) = match lang {
        Language::Java => ("java", "eclipse-temurin:{jdk}-jdk"),
        Language::Python => ("python", "python:{version}"),
    };
    let mut detail = format!(
        "{}. With a registry, add {section}.base_images entry for it, e.g. {:?} (or \"*\" = {example:?}).",
        u.why, u.registry_image
    );
    if !evidence.is_empty() {
        detail.push_str(&format!("\nevidence: {}", evidence.join("; ")));
    }
    Failure {
        kind: FailureKind::InterpreterUnavailable,
        reason: format!("no image for {}", u.wanted),
        detail,
    }
}

fn evidence_lines(evidence: &[era::Evidence]) -> Vec<String> {
    evidence
        .iter()
        .map(|e| format!("{}: {}", e.source, e.says))
        .collect()
}

fn select_java(cfg: &BuildConfig, commit: &Commit) -> Result<Chosen, Failure> {
    let req = era::jdk_evidence(commit.paths, commit.read);
    let images = &cfg.java.base_images;
    let suite = &cfg.bootstrap.suite;
    let want = req
        .as_ref()
        .map(|r| r.value.clone())
        .unwrap_or_else(|| cfg.java.default_jdk.clone());
    let evidence: Vec<String> = req
        .iter()
        .map(|r| format!("{}: {}", r.source, r.value))
        .collect();
    // Exactly the JDK asked for, from its own entry or the "*" entry.
    if images.contains_key(&want) || images.contains_key("*") || !cfg.java.allow_newer_jdk {
        let Some(base) = image_of(images, &want, "{jdk}", suite) else {
            let u = era::Unavailable {
                wanted: format!("JDK {want}"),
                version: want.clone(),
                registry_image: format!("eclipse-temurin:{want}-jdk"),
                why: format!(
                    "JDK {want} ({}) is not configured (java.base_images: {:?}) and java.allow_newer_jdk is off",
                    req.as_ref().map(|r| r.source.as_str()).unwrap_or("default"),
                    images.keys().collect::<Vec<_>>()
                ),
            };
            return Err(unavailable(Language::Java, u, evidence));
        };
        return Ok(Chosen {
            why: format!(
                "JDK {want}, {}",
                req.as_ref()
                    .map(|r| format!("as {} asks", r.source))
                    .unwrap_or_else(|| "the configured default".into())
            ),
            version: want,
            requested: req,
            base,
            evidence,
            older: Vec::new(),
        });
    }
    let available: Vec<String> = images.keys().cloned().collect();
    let choice = era::choose_jdk(req.as_ref(), &cfg.java.default_jdk, &available)
        .map_err(|u| unavailable(Language::Java, u, evidence.clone()))?;
    let base = image_of(images, &choice.version, "{jdk}", suite)
        .expect("choose_jdk picks a configured JDK");
    Ok(Chosen {
        version: choice.version,
        requested: req,
        base,
        why: choice.why,
        evidence,
        older: Vec::new(),
    })
}

/// The Python of the commit's time ([`era::choose_python`]) among the configured ones; with a
/// `"*"` entry every released Python 3 is available.
fn select_python(cfg: &BuildConfig, commit: &Commit) -> Result<Chosen, Failure> {
    let support = era::python_support(commit.paths, commit.read);
    let images = &cfg.python.base_images;
    let mut available: Vec<String> = images.keys().filter(|k| *k != "*").cloned().collect();
    if images.contains_key("*") {
        available.extend(
            era::PYTHON_RELEASES
                .iter()
                .filter(|r| r.version.major == 3)
                .map(|r| r.version.to_string()),
        );
        available.sort();
        available.dedup();
    }
    let evidence = evidence_lines(&support.evidence);
    let choice = era::choose_python(&support, commit.time, &available)
        .map_err(|u| unavailable(Language::Python, u, evidence.clone()))?;
    let base = image_of(images, &choice.version, "{version}", &cfg.bootstrap.suite)
        .expect("choose_python picks a configured version");
    let older = choice
        .older
        .into_iter()
        .filter_map(|v| {
            let base = image_of(images, &v, "{version}", &cfg.bootstrap.suite)?;
            Some((v, base))
        })
        .collect();
    Ok(Chosen {
        version: choice.version,
        requested: support.requires,
        base,
        why: choice.why,
        evidence,
        older,
    })
}

/// `python.default_version` when it fits the project's request, else the newest configured
/// version that does (`python.choose = "default"`).
fn select_python_default(
    cfg: &BuildConfig,
    read: &dyn Fn(&str) -> Option<String>,
) -> Result<Chosen, Failure> {
    let req = detect::detect_python(read);
    let images = &cfg.python.base_images;
    let default = &cfg.python.default_version;
    let fits = |v: &str| {
        req.as_ref()
            .is_none_or(|r| detect::python_satisfies(v, &r.value))
    };
    let mut candidates: Vec<&String> = images.keys().filter(|k| *k != "*").collect();
    candidates.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
    if images.contains_key(default) && fits(default) {
        candidates.insert(0, default);
    }
    let chosen = candidates
        .into_iter()
        .find(|v| fits(v))
        .cloned()
        .or_else(|| {
            images.get("*")?;
            match &req {
                Some(r) if r.value.starts_with(|c: char| c.is_ascii_digit()) => {
                    Some(r.value.split('.').take(2).collect::<Vec<_>>().join("."))
                }
                _ if fits(default) => Some(default.clone()),
                _ => None,
            }
        });
    let evidence: Vec<String> = req
        .iter()
        .map(|r| format!("{}: {}", r.source, r.value))
        .collect();
    let Some(v) = chosen else {
        let want = req
            .as_ref()
            .map(|r| r.value.clone())
            .unwrap_or_else(|| default.clone());
        let u = era::Unavailable {
            wanted: format!("Python {want}"),
            version: want.clone(),
            registry_image: "python:{version}".into(),
            why: format!(
                "Python {want} requested by {}; configured versions: {:?}",
                req.as_ref().map(|r| r.source.as_str()).unwrap_or("default"),
                images.keys().collect::<Vec<_>>()
            ),
        };
        return Err(unavailable(Language::Python, u, evidence));
    };
    let base = image_of(images, &v, "{version}", &cfg.bootstrap.suite)
        .expect("a configured version or the \"*\" entry");
    Ok(Chosen {
        why: format!("Python {v}: the configured default, or the newest configured that fits"),
        version: v,
        requested: req,
        base,
        evidence,
        older: Vec::new(),
    })
}

/// The Python a benchmark's environment spec sets (`etip import --specs`), from its configured
/// image; `source` names the spec.
pub(crate) fn pinned_python(
    cfg: &BuildConfig,
    version: &str,
    source: &str,
) -> Result<Chosen, Failure> {
    let Some(base) = image_of(
        &cfg.python.base_images,
        version,
        "{version}",
        &cfg.bootstrap.suite,
    ) else {
        let u = era::Unavailable {
            wanted: format!("Python {version}"),
            version: version.to_string(),
            registry_image: format!("python:{version}"),
            why: format!(
                "Python {version} is set by the environment spec ({source}) and not configured (python.base_images: {:?})",
                cfg.python.base_images.keys().collect::<Vec<_>>()
            ),
        };
        return Err(unavailable(Language::Python, u, Vec::new()));
    };
    Ok(Chosen {
        version: version.to_string(),
        requested: Some(detect::Request {
            value: version.to_string(),
            source: format!("environment spec ({source})"),
        }),
        base,
        why: format!("Python {version}, as the task's environment spec sets it ({source})"),
        evidence: Vec::new(),
        older: Vec::new(),
    })
}

/// Where each environment setting of an ETIP with a benchmark's environment spec came from:
/// the spec's Python, pre-install commands and packages are applied; its install command is
/// recorded with why it is not run.
pub(crate) fn spec_settings(
    cfg: &BuildConfig,
    s: &etip_core::task::EnvironmentSpec,
    chosen: &Chosen,
    date: Option<&crate::spec::DepsDate>,
) -> Vec<etip_core::instance::SettingSource> {
    use etip_core::instance::SettingSource;
    let from_spec = format!("spec ({})", s.source);
    let setting = |setting: &str, value: String, source: String| SettingSource {
        setting: setting.into(),
        value,
        source,
    };
    let mut out = vec![setting(
        "python",
        chosen.version.clone(),
        if s.python.is_some() {
            from_spec.clone()
        } else {
            format!("inferred: {}", chosen.why)
        },
    )];
    out.push(setting(
        "dependencies",
        "the build descriptors of the base commit".into(),
        match date {
            Some(d) => format!("inferred: resolved as of {}", d.as_of),
            None => "inferred: resolved at build time".into(),
        },
    ));
    if !s.packages.is_empty() {
        out.push(setting("packages", s.packages.join(" "), from_spec.clone()));
    }
    for cmd in &s.pre_install {
        out.push(setting(
            "pre_install",
            cmd.clone(),
            format!("{from_spec}: run in the env layer, before the dependencies"),
        ));
    }
    if let Some(cmd) = &s.install {
        out.push(setting(
            "install",
            cmd.clone(),
            format!(
                "{from_spec}: not run: etip installs the project itself (`{}`) on the env layer's dependencies",
                cfg.python.install_command
            ),
        ));
    }
    for n in &s.not_used {
        out.push(setting(
            "other",
            n.clone(),
            format!("{from_spec}: not used"),
        ));
    }
    out
}

fn version_key(v: &str) -> Vec<u64> {
    v.split('.').filter_map(|p| p.parse().ok()).collect()
}
