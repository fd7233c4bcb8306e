//! The toolchain side of the build configuration: the Debian suites etip bootstraps and their
//! packages, where a toolchain table entry's image comes from, which Python a build uses and
//! which releases of its dependencies (see `harness/build/README.md`, "Toolchain").

use super::{BOOTSTRAP, BootstrapConfig, clip};
use serde::{Deserialize, Serialize};

/// The packages one Debian suite's image adds to the common ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SuiteConfig {
    pub packages: Vec<String>,
}

/// The Debian suites etip bootstraps by default, oldest first, each with its own packages: the
/// JDKs Debian serves in it (bullseye: Python 3.9, JDK 11 and 17; bookworm: 3.11, JDK 17;
/// trixie: 3.13, JDK 21 and 25).
pub const DEFAULT_SUITES: [(&str, &[&str]); 3] = [
    (
        "bullseye",
        &["openjdk-11-jdk-headless", "openjdk-17-jdk-headless"],
    ),
    ("bookworm", &["openjdk-17-jdk-headless"]),
    (
        "trixie",
        &["openjdk-21-jdk-headless", "openjdk-25-jdk-headless"],
    ),
];

impl BootstrapConfig {
    /// Every package of `suite`'s image: the common ones and the suite's own, sorted, once each.
    pub fn packages_of(&self, suite: &str) -> Vec<String> {
        let mut all: Vec<String> = self
            .packages
            .iter()
            .chain(self.suites.get(suite).into_iter().flat_map(|s| &s.packages))
            .cloned()
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// The suites with packages of their own, then the default suite if it has none.
    pub fn suite_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.suites.keys().cloned().collect();
        if !names.contains(&self.suite) {
            names.push(self.suite.clone());
        }
        names
    }
}

/// Where a toolchain table entry's image comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseRef {
    /// The bootstrapped image of a Debian suite.
    Bootstrap(String),
    /// An image reference (pulled when missing).
    Image(String),
}

impl BaseRef {
    /// Reads a `base_images` value: `"bootstrap"` (the suite `default_suite`),
    /// `"bootstrap:<suite>"`, or an image reference.
    pub fn parse(value: &str, default_suite: &str) -> BaseRef {
        match value.strip_prefix(BOOTSTRAP) {
            Some("") => BaseRef::Bootstrap(default_suite.to_string()),
            Some(rest) if rest.starts_with(':') => BaseRef::Bootstrap(rest[1..].to_string()),
            _ => BaseRef::Image(value.to_string()),
        }
    }
}

impl std::fmt::Display for BaseRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BaseRef::Bootstrap(suite) => write!(f, "{BOOTSTRAP}:{suite}"),
            BaseRef::Image(r) => f.write_str(r),
        }
    }
}

/// Which Python a build uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PythonChoice {
    /// The Python of the commit's time: the newest the project declared support for and that was
    /// released by the commit date, among the configured ones (see `etip_toolchain::era`).
    #[default]
    Commit,
    /// `default_version` when it fits the project's `requires-python`, else the newest that fits.
    Default,
}

/// Which releases of its dependencies an env layer installs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum DepsAsOf {
    /// Releases uploaded before the base commit's date.
    #[default]
    Commit,
    /// Today's releases (what the index serves now).
    None,
    /// Releases uploaded before this day (`YYYY-MM-DD`, UTC midnight).
    Date(String),
}

/// A `deps_as_of` value that is neither `commit`, `none` nor a date.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("deps_as_of {:?} is not usable: \"commit\", \"none\" or a date YYYY-MM-DD", clip(.value))]
pub struct DepsAsOfError {
    pub value: String,
}

impl DepsAsOf {
    pub fn as_str(&self) -> &str {
        match self {
            DepsAsOf::Commit => "commit",
            DepsAsOf::None => "none",
            DepsAsOf::Date(d) => d,
        }
    }
}

impl TryFrom<String> for DepsAsOf {
    type Error = DepsAsOfError;

    fn try_from(s: String) -> Result<DepsAsOf, DepsAsOfError> {
        match s.as_str() {
            "commit" => Ok(DepsAsOf::Commit),
            "none" => Ok(DepsAsOf::None),
            d if day_start(d).is_some() => Ok(DepsAsOf::Date(s)),
            _ => Err(DepsAsOfError { value: s }),
        }
    }
}

/// The first second (UTC) of a day written `YYYY-MM-DD`, as unix seconds.
pub fn day_start(day: &str) -> Option<i64> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    let date = time::Date::parse(day, format).ok()?;
    Some(date.midnight().assume_utc().unix_timestamp())
}

impl From<DepsAsOf> for String {
    fn from(d: DepsAsOf) -> String {
        d.as_str().to_string()
    }
}

impl std::str::FromStr for DepsAsOf {
    type Err = DepsAsOfError;

    fn from_str(s: &str) -> Result<DepsAsOf, DepsAsOfError> {
        DepsAsOf::try_from(s.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_refs_name_a_suite_or_an_image() {
        assert_eq!(
            BaseRef::parse("bootstrap", "bookworm"),
            BaseRef::Bootstrap("bookworm".into())
        );
        assert_eq!(
            BaseRef::parse("bootstrap:bullseye", "bookworm"),
            BaseRef::Bootstrap("bullseye".into())
        );
        assert_eq!(
            BaseRef::parse("python:3.9", "bookworm"),
            BaseRef::Image("python:3.9".into())
        );
        // Only the exact word: an image whose name starts with it is an image.
        assert_eq!(
            BaseRef::parse("bootstrapper:1", "bookworm"),
            BaseRef::Image("bootstrapper:1".into())
        );
        assert_eq!(
            BaseRef::Bootstrap("trixie".into()).to_string(),
            "bootstrap:trixie"
        );
    }

    #[test]
    fn deps_as_of_is_commit_none_or_a_day() {
        assert_eq!("commit".parse::<DepsAsOf>().unwrap(), DepsAsOf::Commit);
        assert_eq!("none".parse::<DepsAsOf>().unwrap(), DepsAsOf::None);
        assert_eq!(
            "2019-06-30".parse::<DepsAsOf>().unwrap(),
            DepsAsOf::Date("2019-06-30".into())
        );
        for bad in [
            "yesterday",
            "2019-13-01",
            "2019-06-31",
            "",
            "Commit",
            "2019-6-30",
        ] {
            let e = bad.parse::<DepsAsOf>().unwrap_err().to_string();
            assert!(e.contains("\"commit\", \"none\" or a date"), "{bad}: {e}");
        }
        assert_eq!(day_start("1970-01-02"), Some(86_400));
    }

    #[test]
    fn a_suites_packages_are_the_common_ones_and_its_own() {
        let cfg = BootstrapConfig::default();
        let bullseye = cfg.packages_of("bullseye");
        assert!(bullseye.contains(&"openjdk-11-jdk-headless".to_string()));
        assert!(bullseye.contains(&"python3-pytest".to_string()));
        assert!(
            !cfg.packages_of("bookworm")
                .contains(&"openjdk-11-jdk-headless".to_string())
        );
        // A suite without packages of its own gets the common ones.
        assert_eq!(cfg.packages_of("sid").len(), {
            let mut c = cfg.packages.clone();
            c.sort();
            c.dedup();
            c.len()
        });
        assert_eq!(cfg.suite_names(), ["bookworm", "bullseye", "trixie"]);
    }
}
