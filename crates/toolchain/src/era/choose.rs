//! Choosing the configured toolchain of a commit's time.

use super::{
    Choice, Evidence, PYTHON_RELEASES, PyVersion, PythonSupport, Unavailable, format_date,
    newest_python_at, python_released,
};
use crate::detect::{Request, normalize_jdk, python_satisfies};

/// What a project claims, with an exact requirement (`3.6.1`) counted as a declared version.
struct Claim<'a> {
    /// The specifier every candidate must satisfy (`>=3.6`), if any.
    hard: Option<&'a Request>,
    /// The versions the project declares, sorted.
    declared: Vec<PyVersion>,
    evidence: &'a [Evidence],
}

impl<'a> Claim<'a> {
    fn of(support: &'a PythonSupport) -> Self {
        let mut declared = support.versions.clone();
        let mut hard = support.requires.as_ref();
        if let Some(r) = hard.filter(|r| r.value.trim().starts_with(|c: char| c.is_ascii_digit())) {
            declared.extend(PyVersion::lenient(&r.value));
            hard = None;
        }
        declared.sort();
        declared.dedup();
        Claim {
            hard,
            declared,
            evidence: &support.evidence,
        }
    }

    fn fits(&self, v: PyVersion) -> bool {
        self.hard
            .is_none_or(|r| python_satisfies(&v.to_string(), &r.value))
    }

    /// Whether the requirement admits some released Python `major`; `None` without one.
    fn requires_admits(&self, major: u32) -> Option<bool> {
        self.hard.map(|r| {
            PYTHON_RELEASES.iter().any(|rel| {
                rel.version.major == major && python_satisfies(&rel.version.to_string(), &r.value)
            })
        })
    }

    fn declares(&self, major: u32) -> bool {
        self.declared.iter().any(|v| v.major == major)
    }

    /// The project runs on Python 2 only: it declares no Python 3 and its requirement admits none,
    /// while it declares Python 2 or its requirement admits it.
    fn python2_only(&self) -> bool {
        !self.declares(3)
            && self.requires_admits(3) != Some(true)
            && (self.declares(2) || self.requires_admits(2) == Some(true))
    }

    /// Python 2 is a fallback when the project declares it or its requirement admits it.
    fn admits_python2(&self) -> bool {
        self.declares(2) || self.requires_admits(2) == Some(true)
    }

    /// The sources whose evidence lists `v`.
    fn sources_of(&self, v: PyVersion) -> String {
        let sources: Vec<&str> = self
            .evidence
            .iter()
            .filter(|e| e.versions().any(|x| x == v))
            .map(|e| e.source.as_str())
            .collect();
        sources.join(", ")
    }

    /// All evidence, `source says` joined by `; `.
    fn summary(&self) -> String {
        let parts: Vec<String> = self
            .evidence
            .iter()
            .map(|e| format!("{} {}", e.source, e.says))
            .collect();
        parts.join("; ")
    }

    /// The target of a commit of `commit_time`: the newest Python 3 released by then, or the newest
    /// Python 3 the project declares if older; and a description of it for the messages.
    fn target(&self, commit_time: i64) -> (PyVersion, String) {
        let at_time = newest_python_at(commit_time);
        let declared_max = self.declared.iter().copied().filter(|v| v.major == 3).max();
        let date = format_date(commit_time);
        match declared_max {
            Some(d) if d <= at_time => {
                let sources = self.sources_of(d);
                let described =
                    format!("the newest Python the project supported on {date} ({d} in {sources})");
                (d, described)
            }
            _ => {
                let released = python_released(at_time).map_or_else(String::new, format_date);
                let described = format!(
                    "the newest Python released by {date} ({at_time}, released {released})"
                );
                (at_time, described)
            }
        }
    }

    /// `; the project requires X (source)` when it has a requirement.
    fn requirement_note(&self) -> String {
        self.hard
            .map(|r| format!("; the project requires {} ({})", r.value, r.source))
            .unwrap_or_default()
    }
}

/// Chooses the configured Python to build a commit of `commit_time` (unix seconds) with.
///
/// The target is the newest Python 3 released by the commit's date, or the newest Python 3 the
/// project declares if that is older. Among the `available` versions (`"3.9"`; others such as `"*"`
/// are skipped) that satisfy the project's requirement, the choice is the newest at or below the
/// target, else the oldest above it; a configured Python 2 is the last resort of a project that
/// also supports Python 2. A project that declares only Python 2 gets a configured Python 2 or
/// [`Unavailable`] `Python 2.7`. When nothing fits, [`Unavailable`] names the newest version the
/// requirement admits by the target (else its oldest) and its `python:X.Y` image.
pub fn choose_python(
    support: &PythonSupport,
    commit_time: i64,
    available: &[String],
) -> Result<Choice, Unavailable> {
    let claim = Claim::of(support);
    let mut configured: Vec<PyVersion> = available.iter().filter_map(|a| a.parse().ok()).collect();
    configured.sort();
    configured.dedup();
    let fitting: Vec<PyVersion> = configured
        .iter()
        .copied()
        .filter(|v| claim.fits(*v))
        .collect();
    if claim.python2_only() {
        return choose_python2(&claim, &fitting, &configured);
    }
    let (target, described) = claim.target(commit_time);
    let threes = fitting.iter().copied().filter(|v| v.major == 3);
    let at_or_below = threes.clone().filter(|v| *v <= target).max();
    let above = threes.filter(|v| *v > target).min();
    let python2 = fitting
        .iter()
        .copied()
        .filter(|v| v.major == 2 && claim.admits_python2())
        .max();
    let (chosen, why) = if let Some(v) = at_or_below {
        let why = if v == target {
            format!("{v} is {described}")
        } else {
            format!("{v} is the newest configured Python before {target}, {described}")
        };
        (v, why)
    } else if let Some(v) = above {
        (
            v,
            format!("{described} is not configured; {v} is the nearest newer"),
        )
    } else if let Some(v) = python2 {
        let why = format!(
            "no configured Python 3 fits and the project also supports Python 2 ({})",
            claim.summary()
        );
        (v, why)
    } else {
        return Err(nothing_fits(&claim, target, &configured, &described));
    };
    Ok(Choice {
        version: chosen.to_string(),
        why: format!("{why}{}", claim.requirement_note()),
        evidence: support.evidence.clone(),
        older: older_than(chosen, &fitting, claim.admits_python2()),
    })
}

/// The fitting versions older than `chosen`, newest first (Python 2 only if the project admits it).
fn older_than(chosen: PyVersion, fitting: &[PyVersion], python2: bool) -> Vec<String> {
    fitting
        .iter()
        .rev()
        .filter(|v| **v < chosen && (v.major == 3 || python2))
        .map(PyVersion::to_string)
        .collect()
}

/// The choice for a project that runs on Python 2 only.
fn choose_python2(
    claim: &Claim<'_>,
    fitting: &[PyVersion],
    configured: &[PyVersion],
) -> Result<Choice, Unavailable> {
    let twos: Vec<PyVersion> = fitting.iter().copied().filter(|v| v.major == 2).collect();
    let says = format!("the project declares only Python 2 ({})", claim.summary());
    let Some(chosen) = twos.last().copied() else {
        return Err(Unavailable {
            wanted: "Python 2.7".into(),
            version: "2.7".into(),
            registry_image: "python:2.7".into(),
            why: format!("{says}; configured: {}", list(configured)),
        });
    };
    Ok(Choice {
        version: chosen.to_string(),
        why: format!("{says}; {chosen} is the newest configured Python 2"),
        evidence: claim.evidence.to_vec(),
        older: older_than(chosen, &twos, true),
    })
}

/// No configured version fits: the version that would (the newest the requirement admits by the
/// target, else its oldest, else the target) and why.
fn nothing_fits(
    claim: &Claim<'_>,
    target: PyVersion,
    configured: &[PyVersion],
    described: &str,
) -> Unavailable {
    let admitted: Vec<PyVersion> = PYTHON_RELEASES
        .iter()
        .map(|r| r.version)
        .filter(|v| claim.hard.is_some() && claim.fits(*v))
        .collect();
    let wanted = admitted
        .iter()
        .copied()
        .filter(|v| *v <= target)
        .max()
        .or_else(|| admitted.iter().copied().min())
        .unwrap_or(target);
    let why = match claim.hard {
        Some(r) => format!(
            "the project requires Python {} ({}), which no configured version ({}) satisfies",
            r.value,
            r.source,
            list(configured)
        ),
        None => format!("{described}; configured: {}", list(configured)),
    };
    Unavailable {
        wanted: format!("Python {wanted}"),
        version: wanted.to_string(),
        registry_image: format!("python:{wanted}"),
        why,
    }
}

/// Configured versions for a message: `3.9, 3.11`, or `none`.
fn list<T: ToString>(versions: &[T]) -> String {
    if versions.is_empty() {
        return "none".into();
    }
    let parts: Vec<String> = versions.iter().map(T::to_string).collect();
    parts.join(", ")
}

/// Chooses the configured JDK for a commit: the nearest at or above the feature version it asks
/// for (`request`, see [`super::jdk_evidence`]) or else `default`. `available` lists configured
/// feature versions (`"17"`; others such as `"*"` are skipped).
pub fn choose_jdk(
    request: Option<&Request>,
    default: &str,
    available: &[String],
) -> Result<Choice, Unavailable> {
    let raw = request.map_or(default, |r| r.value.as_str()).trim();
    let asked = match request {
        Some(r) => format!("the project asks for JDK {raw} ({})", r.source),
        None => format!("the project names no JDK, so the default JDK {raw} applies"),
    };
    let wanted = raw
        .parse::<u32>()
        .ok()
        .or_else(|| normalize_jdk(raw)?.parse().ok());
    let mut configured: Vec<u32> = available
        .iter()
        .filter_map(|a| a.trim().parse().ok())
        .collect();
    configured.sort_unstable();
    configured.dedup();
    let unavailable = |version: String, why: String| Unavailable {
        wanted: format!("JDK {version}"),
        registry_image: format!("eclipse-temurin:{version}-jdk"),
        version,
        why,
    };
    let Some(wanted) = wanted else {
        let why = format!("{asked}, which is not a JDK feature version");
        return Err(unavailable(raw.to_string(), why));
    };
    let Some(chosen) = configured.iter().copied().find(|v| *v >= wanted) else {
        let why = format!(
            "{asked}; configured JDKs: {}, none at or above it",
            list(&configured)
        );
        return Err(unavailable(wanted.to_string(), why));
    };
    let why = if chosen == wanted {
        asked
    } else {
        format!("{asked}; {chosen} is the nearest configured JDK above it")
    };
    let evidence = request
        .map(|r| Evidence {
            source: r.source.clone(),
            says: r.value.clone(),
        })
        .into_iter()
        .collect();
    Ok(Choice {
        version: chosen.to_string(),
        why,
        evidence,
        older: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{python_support, releases::days_from_civil};
    use super::*;
    use std::collections::HashMap;

    fn day(y: i64, m: i64, d: i64) -> i64 {
        days_from_civil(y, m, d) * 86_400 + 12 * 3600
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// The machine's images: Python 3.9, 3.11, 3.13 (and a registry template).
    fn machine() -> Vec<String> {
        strings(&["3.11", "3.9", "3.13", "*"])
    }

    fn support(list: &[(&str, &str)]) -> PythonSupport {
        let map: HashMap<String, String> = list
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let paths: Vec<&str> = list.iter().map(|(k, _)| *k).collect();
        python_support(&paths, &move |p: &str| map.get(p).cloned())
    }

    fn classifiers(versions: &[&str]) -> String {
        let lines: Vec<String> = versions
            .iter()
            .map(|v| format!("        'Programming Language :: Python :: {v}',"))
            .collect();
        format!(
            "setup(\n    classifiers=[\n{}\n    ],\n)\n",
            lines.join("\n")
        )
    }

    fn requires(value: &str) -> PythonSupport {
        let setup = format!("setup(name='x', python_requires='{value}')");
        support(&[("setup.py", &setup)])
    }

    #[test]
    fn requests_of_2015_gets_the_nearest_newer() {
        let setup = classifiers(&["2.6", "2.7", "3.3", "3.4", "3.5"]);
        let s = support(&[("setup.py", &setup)]);
        let c = choose_python(&s, day(2015, 12, 1), &machine()).expect("3.9 fits");
        assert_eq!(c.version, "3.9");
        assert!(c.older.is_empty(), "{:?}", c.older);
        assert_eq!(
            c.why,
            "the newest Python the project supported on 2015-12-01 (3.5 in setup.py: classifiers) \
             is not configured; 3.9 is the nearest newer"
        );
        assert_eq!(c.evidence, s.evidence);
    }

    #[test]
    fn declared_versions_bound_the_choice() {
        let setup = classifiers(&["3.6", "3.7", "3.8", "3.9"]);
        let s = support(&[("setup.py", &setup)]);
        let c = choose_python(&s, day(2021, 6, 15), &machine()).expect("3.9 fits");
        assert_eq!((c.version.as_str(), c.older.len()), ("3.9", 0));
        assert_eq!(
            c.why,
            "3.9 is the newest Python the project supported on 2021-06-15 (3.9 in setup.py: \
             classifiers)"
        );
    }

    #[test]
    fn without_evidence_the_release_of_the_time() {
        let none = PythonSupport::default();
        let c = choose_python(&none, day(2023, 5, 10), &machine()).expect("3.11 fits");
        assert_eq!(c.version, "3.11", "3.12 was not out in May 2023");
        assert_eq!(c.older, ["3.9"]);
        assert_eq!(
            c.why,
            "3.11 is the newest Python released by 2023-05-10 (3.11, released 2022-10-24)"
        );
        let c = choose_python(&none, day(2026, 2, 1), &machine()).expect("3.13 fits");
        assert_eq!(c.version, "3.13");
        assert_eq!(c.older, ["3.11", "3.9"]);
        assert!(
            c.why
                .starts_with("3.13 is the newest configured Python before 3.14"),
            "{}",
            c.why
        );
    }

    #[test]
    fn older_lists_the_fallbacks_newest_first() {
        let available = strings(&["3.7", "3.9", "3.11"]);
        let c = choose_python(&PythonSupport::default(), day(2023, 1, 1), &available);
        let c = c.expect("3.11 fits");
        assert_eq!(
            (c.version.as_str(), c.older.clone()),
            ("3.11", strings(&["3.9", "3.7"]))
        );
    }

    #[test]
    fn requirement_filters_candidates() {
        let s = support(&[(
            "pyproject.toml",
            "[project]\nname = 'x'\nrequires-python = '>=3.10'\n",
        )]);
        let c = choose_python(&s, day(2022, 6, 1), &machine()).expect("3.11 fits");
        assert_eq!(c.version, "3.11");
        assert!(c.older.is_empty(), "3.9 does not satisfy >=3.10");
        assert!(
            c.why.ends_with(
                "is not configured; 3.11 is the nearest newer; the project requires >=3.10 \
                 (pyproject.toml: project.requires-python)"
            ),
            "{}",
            c.why
        );
    }

    #[test]
    fn requirement_excluding_every_configured_version() {
        let s = requires("<3.10");
        let u = choose_python(&s, day(2023, 3, 1), &strings(&["3.11", "3.13"]));
        let u = u.expect_err("nothing below 3.10 is configured");
        assert_eq!(
            (u.wanted.as_str(), u.version.as_str()),
            ("Python 3.9", "3.9")
        );
        assert_eq!(u.registry_image, "python:3.9");
        assert_eq!(
            u.why,
            "the project requires Python <3.10 (setup.py: python_requires), which no configured \
             version (3.11, 3.13) satisfies"
        );
        let u = choose_python(&requires(">=3.15"), day(2023, 3, 1), &machine());
        assert_eq!(
            u.map_err(|u| u.version),
            Err("3.11".into()),
            "nothing admitted: the target"
        );
        let u = choose_python(&requires(">=3.12"), day(2021, 3, 1), &strings(&["3.9"]));
        assert_eq!(
            u.map_err(|u| u.version),
            Err("3.12".into()),
            "the oldest admitted"
        );
    }

    #[test]
    fn python2_only_projects() {
        let s = support(&[("setup.py", &classifiers(&["2.6", "2.7"]))]);
        let u = choose_python(&s, day(2014, 1, 1), &machine()).expect_err("no Python 2 here");
        assert_eq!(
            (u.wanted.as_str(), u.registry_image.as_str()),
            ("Python 2.7", "python:2.7")
        );
        assert!(
            u.why
                .starts_with("the project declares only Python 2 (setup.py: classifiers 2.6, 2.7)")
        );
        assert!(u.to_string().contains("Python 2.7") && u.to_string().contains("python:2.7"));
        let mut available = machine();
        available.extend(strings(&["2.7", "2.6"]));
        let c = choose_python(&s, day(2014, 1, 1), &available).expect("2.7 is configured");
        assert_eq!(
            (c.version.as_str(), c.older.clone()),
            ("2.7", strings(&["2.6"]))
        );
        let u = choose_python(&requires(">=2.6,<3"), day(2012, 1, 1), &machine());
        assert_eq!(u.map_err(|u| u.wanted), Err("Python 2.7".into()));
    }

    #[test]
    fn python2_is_the_last_resort_of_projects_supporting_both() {
        let s = support(&[("setup.py", &classifiers(&["2.7", "3.5"]))]);
        let c = choose_python(&s, day(2016, 1, 1), &strings(&["2.7", "3.9"])).expect("3.9 fits");
        assert_eq!(
            (c.version.as_str(), c.older.clone()),
            ("3.9", strings(&["2.7"]))
        );
        let c = choose_python(&s, day(2016, 1, 1), &strings(&["2.7"])).expect("2.7 fits");
        assert_eq!(c.version, "2.7");
        assert!(
            c.why.starts_with("no configured Python 3 fits"),
            "{}",
            c.why
        );
        let c = choose_python(
            &PythonSupport::default(),
            day(2009, 1, 1),
            &strings(&["2.7", "3.9"]),
        );
        let c = c.expect("3.9 fits");
        assert_eq!(
            (c.version.as_str(), c.older.len()),
            ("3.9", 0),
            "no word of Python 2"
        );
    }

    #[test]
    fn exact_requirement_counts_as_declared() {
        let s = PythonSupport {
            requires: Some(Request {
                value: "3.6.1".into(),
                source: "pyproject.toml: tool.poetry.dependencies.python".into(),
            }),
            versions: Vec::new(),
            evidence: vec![Evidence {
                source: "pyproject.toml: tool.poetry.dependencies.python".into(),
                says: "3.6.1".into(),
            }],
        };
        let c = choose_python(&s, day(2019, 3, 1), &machine()).expect("3.9 fits");
        assert_eq!(c.version, "3.9");
        assert!(
            c.why
                .contains("(3.6 in pyproject.toml: tool.poetry.dependencies.python)"),
            "{}",
            c.why
        );
        let c = choose_python(&s, day(2019, 3, 1), &strings(&["3.5", "3.7"])).expect("3.5 fits");
        assert_eq!(c.version, "3.5");
    }

    #[test]
    fn python_version_file_and_ci_matrices() {
        let s = support(&[(".python-version", "3.6.1\n")]);
        let c = choose_python(&s, day(2019, 3, 1), &machine()).expect("3.9 fits");
        assert_eq!(c.version, "3.9");
        let ci =
            "jobs:\n  t:\n    strategy:\n      matrix:\n        python-version: [\"3.10\", 3.11]\n";
        let s = support(&[(".github/workflows/ci.yml", ci)]);
        let c = choose_python(&s, day(2023, 9, 1), &machine()).expect("3.11 fits");
        assert_eq!(c.version, "3.11");
        let travis = "python:\n  - 3.5\n  - 3.6\n  - 3.7-dev\n";
        let s = support(&[(".travis.yml", travis)]);
        let c = choose_python(&s, day(2018, 1, 1), &strings(&["3.5", "3.6", "3.7"]));
        let c = c.expect("3.6 fits");
        assert_eq!(c.version, "3.6", "3.7 was not released in January 2018");
        assert!(
            c.why
                .contains("released by 2018-01-01 (3.6, released 2016-12-23)"),
            "{}",
            c.why
        );
    }

    #[test]
    fn nothing_configured() {
        let u = choose_python(&PythonSupport::default(), day(2020, 1, 1), &strings(&["*"]));
        let u = u.expect_err("nothing parses");
        assert_eq!(
            (u.wanted.as_str(), u.registry_image.as_str()),
            ("Python 3.8", "python:3.8")
        );
        assert!(u.why.ends_with("; configured: none"), "{}", u.why);
    }

    fn jdks() -> Vec<String> {
        strings(&["17", "11", "21", "25", "*"])
    }

    fn asks(value: &str, source: &str) -> Request {
        Request {
            value: value.into(),
            source: source.into(),
        }
    }

    #[test]
    fn jdk_at_or_above_the_request() {
        let source6 = asks("6", "pom.xml: maven.compiler.source");
        let c = choose_jdk(Some(&source6), "17", &jdks()).expect("11 fits");
        assert_eq!(c.version, "11");
        assert_eq!(
            c.why,
            "the project asks for JDK 6 (pom.xml: maven.compiler.source); 11 is the nearest \
             configured JDK above it"
        );
        assert!(c.older.is_empty());
        let release17 = asks("17", "pom.xml: maven-compiler-plugin <release>");
        let c = choose_jdk(Some(&release17), "17", &jdks()).expect("17 fits");
        assert_eq!((c.version.as_str(), c.evidence.len()), ("17", 1));
        let travis = crate::era::jdk_evidence(&[], &|p: &str| {
            (p == ".travis.yml").then(|| "language: java\njdk: openjdk8\n".to_string())
        });
        let c = choose_jdk(travis.as_ref(), "17", &jdks()).expect("11 fits");
        assert_eq!(c.version, "11");
        assert!(c.why.contains("(.travis.yml: jdk)"), "{}", c.why);
    }

    #[test]
    fn jdk_default_and_unavailable() {
        let c = choose_jdk(None, "17", &jdks()).expect("17 fits");
        assert_eq!(c.version, "17");
        assert_eq!(
            c.why,
            "the project names no JDK, so the default JDK 17 applies"
        );
        assert!(c.evidence.is_empty());
        let u = choose_jdk(Some(&asks("26", ".java-version")), "17", &jdks()).expect_err("no 26");
        assert_eq!((u.wanted.as_str(), u.version.as_str()), ("JDK 26", "26"));
        assert_eq!(u.registry_image, "eclipse-temurin:26-jdk");
        assert!(
            u.why
                .ends_with("configured JDKs: 11, 17, 21, 25, none at or above it")
        );
        assert!(
            u.to_string().contains("JDK 26") && u.to_string().contains("eclipse-temurin:26-jdk")
        );
        let u = choose_jdk(None, "latest", &jdks()).expect_err("not a version");
        assert!(
            u.why.ends_with("which is not a JDK feature version"),
            "{}",
            u.why
        );
    }
}
