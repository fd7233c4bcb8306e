//! The interpreter of a commit's time: which Python (or JDK) to build an old commit with.
//!
//! A commit from 2015 was written for the Python of 2015; today's default interpreter may no longer
//! run it (Python 3.10 removed the `collections.Mapping` aliases, 3.12 removed `distutils`). This
//! module reads what a commit says about the versions it supports and picks the configured
//! interpreter closest to that time.
//!
//! - [`python_support`] gathers the evidence of a commit's files: the hard requirement
//!   (`requires-python`, Poetry's `python`, `python_requires`) and the versions it declares
//!   (trove classifiers, `tox.ini` environments, Travis CI, GitHub Actions and AppVeyor matrices,
//!   `.python-version`, `runtime.txt`);
//! - [`newest_python_at`] knows when each CPython feature release came out ([`PYTHON_RELEASES`]);
//! - [`choose_python`] picks the newest configured Python the project supported at the commit's
//!   date, or the nearest newer one, and lists the older ones to fall back to;
//! - [`jdk_evidence`] and [`choose_jdk`] do the same for Java: the JDK the build files or CI name,
//!   and the nearest configured JDK at or above it.
//!
//! When nothing configured fits, the choice is an [`Unavailable`] naming the version that would and
//! a public registry image that provides it.
//!
//! ```
//! use etip_toolchain::era::{choose_python, python_support};
//! let setup_py = r#"setup(classifiers=["Programming Language :: Python :: 2.7",
//!                                      "Programming Language :: Python :: 3.5"])"#;
//! let read = |path: &str| (path == "setup.py").then(|| setup_py.to_string());
//! let support = python_support(&["setup.py"], &read);
//! let available = ["3.9".to_string(), "3.11".to_string()];
//! // 2016-01-01: the project supports Python up to 3.5; 3.9 is the nearest configured one.
//! let choice = choose_python(&support, 1_451_606_400, &available).expect("3.9 fits");
//! assert_eq!(choice.version, "3.9");
//! ```

mod choose;
mod java;
mod python;
mod releases;
mod yaml;

use crate::detect::Request;
use std::fmt;
use std::str::FromStr;

pub use choose::{choose_jdk, choose_python};
pub use java::jdk_evidence;
pub use python::python_support;
pub use releases::{PYTHON_RELEASES, Release, format_date, newest_python_at, python_released};

/// A Python feature version, `major.minor` (`3.9`), ordered numerically (`3.9` < `3.10`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PyVersion {
    /// The major version: 2 or 3.
    pub major: u32,
    /// The minor version.
    pub minor: u32,
}

impl PyVersion {
    /// The version `major.minor`.
    pub const fn new(major: u32, minor: u32) -> Self {
        Self { major, minor }
    }

    /// Reads the version a token starts with, as CI files write it: `3.6`, `"3.6.1"`, `3.7-dev`,
    /// `3.12.0-alpha.1`. Only Python 2 and 3 count; `pypy3`, `nightly`, `3.x` and `3` give `None`.
    pub fn lenient(token: &str) -> Option<Self> {
        let t = token.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        let (major, rest) = split_number(t)?;
        let rest = rest.strip_prefix('.')?;
        let (minor, _) = split_number(rest)?;
        (major == 2 || major == 3).then_some(Self::new(major, minor))
    }
}

/// The leading decimal number of `s` and the rest.
fn split_number(s: &str) -> Option<(u32, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    Some((s[..end].parse().ok()?, &s[end..]))
}

impl fmt::Display for PyVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A Python version that is not `major.minor` (optionally followed by `.patch`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a Python version of the form 3.9 or 3.9.1")]
pub struct ParsePyVersionError(pub String);

impl FromStr for PyVersion {
    type Err = ParsePyVersionError;

    /// Parses `3.9` or `3.9.1` (the patch level is dropped).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParsePyVersionError(s.to_string());
        let mut parts = s.trim().split('.');
        let mut number = || -> Result<u32, ParsePyVersionError> {
            let p = parts.next().ok_or_else(err)?;
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err());
            }
            p.parse().map_err(|_| err())
        };
        let version = Self::new(number()?, number()?);
        match parts.next() {
            None => Ok(version),
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                parts.next().map_or(Ok(version), |_| Err(err()))
            }
            Some(_) => Err(err()),
        }
    }
}

/// One file's word on the Python versions a commit supports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// File and key, e.g. `"setup.py: classifiers"`.
    pub source: String,
    /// What it says: the versions (`"2.7, 3.4, 3.5"`) or a requirement (`">=3.6"`).
    pub says: String,
}

impl Evidence {
    /// The versions this evidence lists (none for a requirement such as `">=3.6"`).
    fn versions(&self) -> impl Iterator<Item = PyVersion> + '_ {
        self.says.split(", ").filter_map(|v| v.parse().ok())
    }
}

/// What a commit's files say about the Python versions it supports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PythonSupport {
    /// The hard requirement of its packaging metadata (`requires-python`, Poetry's `python`,
    /// `python_requires`), if any.
    pub requires: Option<Request>,
    /// The versions it declares (classifiers, test environments, CI matrices), sorted, deduplicated.
    pub versions: Vec<PyVersion>,
    /// Each file's word, the requirement first.
    pub evidence: Vec<Evidence>,
}

/// The toolchain chosen for a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The configured version chosen: `"3.9"`, `"17"`.
    pub version: String,
    /// Why, in one sentence.
    pub why: String,
    /// The evidence the choice rests on.
    pub evidence: Vec<Evidence>,
    /// The other fitting configured versions older than the chosen one, newest first: what to try
    /// if the chosen one proves incompatible.
    pub older: Vec<String>,
}

/// No configured toolchain fits a commit: what would, and where to get it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{wanted} is needed but not configured (the registry image {registry_image} provides it): {why}"
)]
pub struct Unavailable {
    /// The toolchain that would fit: `"Python 2.7"`, `"JDK 8"`.
    pub wanted: String,
    /// Its version alone, as configuration keys write it: `"2.7"`, `"8"`.
    pub version: String,
    /// A public image that provides it: `"python:2.7"`, `"eclipse-temurin:8-jdk"`.
    pub registry_image: String,
    /// Why it is needed and what is configured.
    pub why: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_order() {
        assert_eq!("3.9".parse(), Ok(PyVersion::new(3, 9)));
        assert_eq!("3.10.2".parse(), Ok(PyVersion::new(3, 10)));
        assert!(PyVersion::new(3, 9) < PyVersion::new(3, 10));
        assert!(PyVersion::new(2, 7) < PyVersion::new(3, 0));
        assert_eq!(PyVersion::new(3, 10).to_string(), "3.10");
        for bad in ["*", "3", "3.", "3.x", "3.9-dev", "py3.9", "3.9.1.2", ""] {
            assert!(bad.parse::<PyVersion>().is_err(), "{bad}");
        }
        let err = "3.x".parse::<PyVersion>().err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("\"3.x\" is not a Python version of the form 3.9 or 3.9.1")
        );
    }

    #[test]
    fn lenient_tokens() {
        let v = |t: &str| PyVersion::lenient(t).map(|v| v.to_string());
        assert_eq!(v("\"3.6\"").as_deref(), Some("3.6"));
        assert_eq!(v("'3.10'").as_deref(), Some("3.10"));
        assert_eq!(v("3.7-dev").as_deref(), Some("3.7"));
        assert_eq!(v("3.12.0-alpha.1").as_deref(), Some("3.12"));
        for none in [
            "nightly",
            "pypy3",
            "pypy3.6",
            "3.x",
            "3",
            "4.0",
            "1.5",
            "${{ matrix.py }}",
        ] {
            assert_eq!(v(none), None, "{none}");
        }
    }

    #[test]
    fn unavailable_names_version_and_image() {
        let u = Unavailable {
            wanted: "Python 2.7".into(),
            version: "2.7".into(),
            registry_image: "python:2.7".into(),
            why: "the project declares only Python 2".into(),
        };
        let text = u.to_string();
        assert!(
            text.contains("Python 2.7") && text.contains("python:2.7"),
            "{text}"
        );
    }
}
