//! Per-class times from the test frameworks' XML reports, read with quick-xml's streaming reader,
//! and JMH's JSON results ([`jmh`]: one detector per benchmark and parameter set, in seconds per
//! operation).
//!
//! Two formats are understood ([`ReportFormat`]):
//!
//! - **Surefire** (`target/surefire-reports/TEST-*.xml`, also JUnit/Ant XML in general): every
//!   `<testsuite>` is one test class. Its time is the suite's `time` attribute, which Surefire
//!   measures around the whole class (class-level setup and teardown included); where the
//!   attribute is missing (Surefire 3.1.1+ omits it when it has no elapsed time) the class time
//!   is the sum of its `<testcase time=…>` children, and [`ClassResult::time_source`] says which.
//!   A `<testsuites>` wrapper and testsuites nested in testsuites are accepted; each testsuite is
//!   its own class and owns only its direct testcases. JUnit 5 `@Nested` classes need nothing
//!   special: Surefire up to 3.5.2 writes them as their own `TEST-Outer$Inner.xml` suites (and
//!   may leave the outer suite empty), 3.5.3 and later put their testcases, with
//!   `classname="Outer$Inner"`, into the outer class's suite. Either way the class is the suite
//!   name. A suite with no testcase at all ran nothing and is left out, with a warning.
//! - **pytest** `--junitxml`: one `<testsuite name="pytest">` (inside `<testsuites>` since pytest
//!   5.1) whose `<testcase classname=… name=… time=…>` children are grouped by `classname`:
//!   `pkg.tests.test_mod.TestX` for a test class, the module path (`tests.test_join`) for free
//!   test functions. A class's time is the sum of its testcases. A collection error has an empty
//!   `classname` and the module path as `name`; it is counted under that module.
//!
//! Counts ([`ClassResult::tests`], `failures`, `errors`, `skipped`) come from the testcase
//! children, never from the suite's attributes: a testcase with a `<failure>` child is a failure
//! even if its suite says `failures="0"`. The attributes are checked against the counted values
//! and a mismatch is reported in [`Report::warnings`], not as an error. A testcase with both a
//! `<failure>` and an `<error>` child (pytest: failed call plus failed teardown) counts as both,
//! as pytest counts it. Surefire's `<rerunFailure>`/`<rerunError>` children accompany a
//! `<failure>`/`<error>` and add nothing; `<flakyFailure>`/`<flakyError>` mark a test that passed
//! on a rerun ([`ClassResult::flaky`]): its suite time includes the failed runs.
//!
//! # How the `time` attributes are written (and parsed here)
//!
//! Read in apache/maven-surefire,
//! `maven-surefire-common/src/main/java/org/apache/maven/plugin/surefire/report/StatelessXmlReporter.java`
//! and `ReporterUtils.java`:
//!
//! - Surefire 2.12 to 3.1.0 (so 2.22.x and 3.0.x) write
//!   `ReporterUtils.formatElapsedTime(ms)`: `NumberFormat.getInstance(Locale.ENGLISH)` with
//!   grouping on, 0 to 3 fraction digits, of `ms / 1000`. The locale is pinned to English, so the
//!   text does not depend on the JVM's locale, but a suite of 1000 s or more gets grouping
//!   commas: `time="1,234.5"`, `time="12,345"`. Trailing zeros are dropped (`"0"`, `"0.1"`).
//! - Surefire 3.1.1 and later (SUREFIRE-2164) write `String.valueOf(elapsedMs / 1000.0f)`,
//!   Java's `Float.toString`: `"0.0"`, `"0.05"`, `"1234.567"`, and computer notation from 10⁷ s
//!   on (`"1.0E7"`); the attribute is left out when the elapsed time is unknown.
//! - pytest 4.2 and later write `"%.3f"` (`"0.012"`) for testcases and suites; older pytest wrote
//!   the full float (`"0.0012345678"`).
//!
//! Accepted here: plain decimals (`12`, `0.5`, `.5`), English grouping with groups of exactly three
//! digits (`1,234.5`; `1,23` is rejected, since it might be a decimal comma), and an exponent
//! (`1.0E7`). Negative, NaN, infinite, empty, or otherwise non-numeric values, and values above
//! 10¹² s, make the file [`ReportError::Malformed`].
//!
//! # Resolution
//!
//! [`Report::resolution`] is the smallest time step the report can express: `10^-d` seconds with
//! `d` the largest number of decimals seen in any `time` attribute (an exponent shifts it:
//! `1.5E2` has none), but never coarser than 0.001 s. Both Surefire formats drop trailing zeros
//! (`"0.1"` may be 100 ms measured to the millisecond), and every writer above measures at least
//! to the millisecond, so seeing fewer than three decimals, or none, does not mean a coarser
//! clock: 0.001 s is assumed for both formats. Old pytest's long decimals give a finer step,
//! capped at 1 ns. The caller treats two times that are both at or below the resolution as ties.
//!
//! # Limits
//!
//! Files above [`MAX_REPORT_BYTES`] are refused ([`ReportError::TooLarge`]); the parser keeps
//! per-class totals only, and at most [`MAX_WARNINGS`] warnings per report.

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest report file read (256 MiB).
pub const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;
/// Most warnings kept in one [`Report`]; further ones are summed up in a last line.
pub const MAX_WARNINGS: usize = 100;
/// Largest time accepted in a `time` attribute, in seconds (about 31,700 years).
const MAX_SECS: f64 = 1e12;
/// Decimals assumed when a report shows fewer (see the module docs).
const DEFAULT_DECIMALS: u32 = 3;
/// Finest resolution reported: 1 ns.
const MAX_DECIMALS: u32 = 9;

/// Which writer produced the XML.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportFormat {
    /// Maven Surefire / Failsafe `TEST-*.xml` (JUnit/Ant XML): one testsuite per class.
    Surefire,
    /// pytest `--junitxml`: testcases grouped by their `classname`.
    Pytest,
}

/// Where a class's time came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeSource {
    /// The testsuite's own `time` attribute (Surefire; includes class-level setup).
    Suite,
    /// The sum of the testcases' `time` attributes (pytest always; Surefire without suite time).
    TestcaseSum,
}

/// One test class: its time and what happened to its tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct ClassResult {
    /// Class name: Surefire's testsuite `name`, pytest's testcase `classname`.
    pub name: String,
    /// Elapsed time in seconds (finite, not negative).
    pub secs: f64,
    /// Testcases run (skipped ones included).
    pub tests: u32,
    /// Testcases with a `<failure>` child.
    pub failures: u32,
    /// Testcases with an `<error>` child.
    pub errors: u32,
    /// Testcases with a `<skipped>` child and neither failure nor error.
    pub skipped: u32,
    /// Testcases that passed only on a rerun (Surefire `<flakyFailure>`/`<flakyError>`).
    pub flaky: u32,
    /// Where [`secs`](Self::secs) came from.
    pub time_source: TimeSource,
    /// The report file the class was read from.
    pub file: String,
}

impl ClassResult {
    /// No failure or error, and at least one test that was not skipped.
    pub fn passed(&self) -> bool {
        self.failures == 0 && self.errors == 0 && self.tests > self.skipped
    }
}

/// The classes of one report file, or of several merged ([`merge`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct Report {
    /// Classes, sorted by name, each name once.
    pub classes: Vec<ClassResult>,
    /// Smallest time step the report can express, in seconds (see the module docs).
    pub resolution: f64,
    /// The files read, in the order read.
    pub files: Vec<String>,
    /// Things that looked wrong but did not stop the parse (count mismatches, empty suites).
    pub warnings: Vec<String>,
    /// The testcases that failed or errored (at most [`MAX_FAILED_CASES`]).
    #[serde(default)]
    pub failed: Vec<FailedCase>,
    /// pytest: every testcase's own time (at most [`MAX_CASES`]), for what a selection of tests
    /// costs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<CaseTime>,
}

/// Most testcases a pytest report lists with their times.
pub const MAX_CASES: usize = 200_000;

/// A testcase's class, name and time (seconds; 0 without a time attribute).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseTime {
    pub class: String,
    pub name: String,
    pub secs: f64,
}

/// Most failed testcases a report lists by name.
pub const MAX_FAILED_CASES: usize = 10_000;

/// A testcase that failed or errored: its class (pytest's `classname`, Surefire's suite) and name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedCase {
    pub class: String,
    pub name: String,
}

impl Report {
    /// The class called `name`, if any.
    pub fn class(&self, name: &str) -> Option<&ClassResult> {
        self.classes
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.classes.get(i))
    }

    /// A copy with `prefix` put before every class name (e.g. `"module-a/"`), so that reports
    /// of several modules can be [`merge`]d even where they share class names.
    pub fn prefixed(&self, prefix: &str) -> Report {
        let mut out = self.clone();
        for c in &mut out.classes {
            c.name.insert_str(0, prefix);
        }
        out
    }
}

/// A byte offset in a report file, with its 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// 1-based line number.
    pub line: u64,
    /// 0-based byte offset.
    pub byte: u64,
}

impl Position {
    fn at(xml: &[u8], byte: u64) -> Position {
        let end = usize::try_from(byte).unwrap_or(usize::MAX).min(xml.len());
        let newlines = xml
            .get(..end)
            .map_or(0, |s| s.iter().filter(|&&b| b == b'\n').count());
        Position {
            line: newlines as u64 + 1,
            byte,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, byte {}", self.line, self.byte)
    }
}

/// Why a report could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The report file (or folder, or any `TEST-*.xml` in it) does not exist.
    #[error("no test report at {}: did the tests run?", path.display())]
    Missing { path: PathBuf },
    /// The file is not a complete, well-formed report.
    #[error("malformed test report {path} at {position}: {detail}")]
    Malformed {
        path: String,
        position: Position,
        detail: String,
    },
    /// The file is larger than [`MAX_REPORT_BYTES`].
    #[error("test report {} is larger than the limit of {limit} bytes", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
    /// The same class name in two places (the message shows at most 40 characters of it).
    #[error(
        "class {} appears in both {first} and {second} (prefix each module's class names before merging)",
        parser::clip(.class)
    )]
    Duplicate {
        class: String,
        first: String,
        second: String,
    },
    /// Reading failed.
    #[error("reading test report {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Parse one report held in memory. `source_name` names it in errors and in [`Report::files`].
pub fn parse(format: ReportFormat, xml: &[u8], source_name: &str) -> Result<Report, ReportError> {
    Parser::new(format, xml, source_name).run()
}

/// Read and parse one report file.
pub fn read_report(format: ReportFormat, path: &Path) -> Result<Report, ReportError> {
    let bytes = read_capped(path)?;
    parse(format, &bytes, &path.display().to_string())
}

/// Read every `TEST-*.xml` in `dir` (not its subfolders) as Surefire reports and merge them.
/// A missing folder, or one without such files, is [`ReportError::Missing`].
pub fn read_surefire_dir(dir: &Path) -> Result<Report, ReportError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ReportError::Missing {
                path: dir.to_path_buf(),
            });
        }
        Err(source) => {
            return Err(ReportError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| ReportError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("TEST-") && name.ends_with(".xml") {
            let path = entry.path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    if files.is_empty() {
        return Err(ReportError::Missing {
            path: dir.join("TEST-*.xml"),
        });
    }
    files.sort();
    let mut reports = Vec::with_capacity(files.len());
    for path in &files {
        reports.push(read_report(ReportFormat::Surefire, path)?);
    }
    merge(reports)
}

/// Merge several reports (e.g. of the modules of one build) into one. A class name found in
/// two reports is [`ReportError::Duplicate`]; use [`Report::prefixed`] first where modules may
/// share class names. The merged resolution is the coarsest of the parts (no parts: 0.001 s).
pub fn merge(reports: impl IntoIterator<Item = Report>) -> Result<Report, ReportError> {
    let mut by_name: BTreeMap<String, ClassResult> = BTreeMap::new();
    let mut resolution: Option<f64> = None;
    let mut files = Vec::new();
    let mut warnings = Warnings::default();
    let mut failed = Vec::new();
    let mut cases = Vec::new();
    for r in reports {
        failed.extend(r.failed);
        cases.extend(r.cases);
        resolution = Some(resolution.map_or(r.resolution, |x| x.max(r.resolution)));
        files.extend(r.files);
        for w in r.warnings {
            warnings.push(w);
        }
        for c in r.classes {
            if let Some(prev) = by_name.get(&c.name) {
                return Err(ReportError::Duplicate {
                    class: c.name.clone(),
                    first: prev.file.clone(),
                    second: c.file,
                });
            }
            by_name.insert(c.name.clone(), c);
        }
    }
    Ok(Report {
        classes: by_name.into_values().collect(),
        resolution: resolution.unwrap_or(decimals_to_step(DEFAULT_DECIMALS)),
        files,
        warnings: warnings.finish(),
        failed,
        cases,
    })
}

fn read_capped(path: &Path) -> Result<Vec<u8>, ReportError> {
    let io_err = |source: std::io::Error| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ReportError::Missing {
                path: path.to_path_buf(),
            }
        } else {
            ReportError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    if len > MAX_REPORT_BYTES {
        return Err(ReportError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_REPORT_BYTES,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(MAX_REPORT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if bytes.len() as u64 > MAX_REPORT_BYTES {
        return Err(ReportError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_REPORT_BYTES,
        });
    }
    Ok(bytes)
}

pub mod jmh;
mod parser;
#[cfg(test)]
mod tests;

use parser::{Parser, Warnings, decimals_to_step};
