//! Per-class times from the test frameworks' XML reports, read with quick-xml's streaming reader.
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
    /// The same class name in two places.
    #[error(
        "class {class} appears in both {first} and {second} (prefix each module's class names before merging)"
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
    for r in reports {
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

fn decimals_to_step(decimals: u32) -> f64 {
    10f64.powi(-(decimals.min(MAX_DECIMALS) as i32))
}

/// Warnings with a cap.
#[derive(Default)]
struct Warnings {
    kept: Vec<String>,
    dropped: usize,
}

impl Warnings {
    fn push(&mut self, w: String) {
        if self.kept.len() < MAX_WARNINGS {
            self.kept.push(w);
        } else {
            self.dropped += 1;
        }
    }

    fn finish(mut self) -> Vec<String> {
        if self.dropped > 0 {
            self.kept
                .push(format!("... and {} more warnings", self.dropped));
        }
        self.kept
    }
}

/// Counts of testcase outcomes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    tests: u32,
    failures: u32,
    errors: u32,
    skipped: u32,
    flaky: u32,
}

impl Counts {
    fn add_case(&mut self, case: &Case) {
        self.tests = self.tests.saturating_add(1);
        if case.failure {
            self.failures = self.failures.saturating_add(1);
        }
        if case.error {
            self.errors = self.errors.saturating_add(1);
        }
        if case.skipped && !case.failure && !case.error {
            self.skipped = self.skipped.saturating_add(1);
        }
        if case.flaky && !case.failure && !case.error {
            self.flaky = self.flaky.saturating_add(1);
        }
    }

    fn add(&mut self, o: &Counts) {
        self.tests = self.tests.saturating_add(o.tests);
        self.failures = self.failures.saturating_add(o.failures);
        self.errors = self.errors.saturating_add(o.errors);
        self.skipped = self.skipped.saturating_add(o.skipped);
        self.flaky = self.flaky.saturating_add(o.flaky);
    }
}

/// The counts a testsuite claims in its attributes.
#[derive(Debug, Default, Clone, Copy)]
struct ClaimedCounts {
    tests: Option<u32>,
    failures: Option<u32>,
    errors: Option<u32>,
    skipped: Option<u32>,
}

impl ClaimedCounts {
    /// Differences between claimed and counted, as text (empty if none).
    fn mismatches(&self, counted: &Counts) -> Vec<String> {
        let pairs = [
            ("tests", self.tests, counted.tests),
            ("failures", self.failures, counted.failures),
            ("errors", self.errors, counted.errors),
            ("skipped", self.skipped, counted.skipped),
        ];
        pairs
            .iter()
            .filter_map(|&(k, claimed, seen)| match claimed {
                Some(c) if c != seen => Some(format!("{k}=\"{c}\" but {seen} counted")),
                _ => None,
            })
            .collect()
    }
}

/// An open testsuite.
struct Suite {
    depth: usize,
    start: u64,
    name: Option<String>,
    time: Option<f64>,
    claimed: ClaimedCounts,
    counts: Counts,
    case_secs: f64,
    cases_without_time: u32,
}

/// An open testcase.
struct Case {
    depth: usize,
    class: String,
    secs: Option<f64>,
    failure: bool,
    error: bool,
    skipped: bool,
    flaky: bool,
}

/// Per-class totals for pytest.
#[derive(Default)]
struct PyClass {
    secs: f64,
    counts: Counts,
}

/// The attributes of interest of one element.
#[derive(Default)]
struct Attrs {
    name: Option<String>,
    classname: Option<String>,
    time: Option<String>,
    tests: Option<String>,
    failures: Option<String>,
    errors: Option<String>,
    skipped: Option<String>,
}

struct Parser<'a> {
    format: ReportFormat,
    xml: &'a [u8],
    source: &'a str,
    depth: usize,
    root_seen: bool,
    root_closed: bool,
    suites: Vec<Suite>,
    case: Option<Case>,
    max_decimals: u32,
    classes: Vec<ClassResult>,
    py: BTreeMap<String, PyClass>,
    py_claimed: ClaimedCounts,
    py_claimed_any: bool,
    warnings: Warnings,
}

impl<'a> Parser<'a> {
    fn new(format: ReportFormat, xml: &'a [u8], source: &'a str) -> Self {
        Parser {
            format,
            xml,
            source,
            depth: 0,
            root_seen: false,
            root_closed: false,
            suites: Vec::new(),
            case: None,
            max_decimals: 0,
            classes: Vec::new(),
            py: BTreeMap::new(),
            py_claimed: ClaimedCounts::default(),
            py_claimed_any: false,
            warnings: Warnings::default(),
        }
    }

    fn malformed(&self, byte: u64, detail: impl Into<String>) -> ReportError {
        ReportError::Malformed {
            path: self.source.to_string(),
            position: Position::at(self.xml, byte),
            detail: detail.into(),
        }
    }

    fn run(mut self) -> Result<Report, ReportError> {
        if self.xml.iter().all(|b| b.is_ascii_whitespace()) {
            return Err(self.malformed(0, "the file is empty"));
        }
        if u64::try_from(self.xml.len()).map_or(true, |n| n > MAX_REPORT_BYTES) {
            return Err(self.malformed(
                0,
                format!("larger than the limit of {MAX_REPORT_BYTES} bytes"),
            ));
        }
        let mut reader = Reader::from_reader(self.xml);
        reader.config_mut().check_end_names = true;
        loop {
            let start = reader.buffer_position();
            let event = match reader.read_event() {
                Ok(e) => e,
                Err(e) => {
                    let at = reader.error_position();
                    return Err(self.malformed(at, format!("not well-formed XML: {e}")));
                }
            };
            match event {
                Event::Start(e) => {
                    self.open(&reader, &e, start)?;
                }
                Event::Empty(e) => {
                    self.open(&reader, &e, start)?;
                    self.close(start)?;
                }
                Event::End(_) => self.close(start)?,
                Event::Text(t) => {
                    if self.depth == 0 && !t.iter().all(|b| b.is_ascii_whitespace()) {
                        return Err(self.malformed(
                            start,
                            "text outside the root element (not an XML report?)",
                        ));
                    }
                }
                Event::CData(_) | Event::GeneralRef(_) => {
                    if self.depth == 0 {
                        return Err(self.malformed(
                            start,
                            "text outside the root element (not an XML report?)",
                        ));
                    }
                }
                Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) => {}
                Event::Eof => break,
            }
        }
        let end = self.xml.len() as u64;
        if self.depth > 0 {
            let inside = if self.case.is_some() {
                "a <testcase>"
            } else if self.suites.is_empty() {
                "the root element"
            } else {
                "a <testsuite>"
            };
            return Err(self.malformed(
                end,
                format!(
                    "truncated: the file ends inside {inside} ({} element(s) still open)",
                    self.depth
                ),
            ));
        }
        if !self.root_seen {
            return Err(self.malformed(end, "no root element (not an XML report?)"));
        }
        self.finish()
    }

    fn attrs(
        &self,
        reader: &Reader<&[u8]>,
        e: &BytesStart<'_>,
        at: u64,
    ) -> Result<Attrs, ReportError> {
        let mut out = Attrs::default();
        for attr in e.attributes() {
            let attr = attr.map_err(|err| self.malformed(at, format!("bad attribute: {err}")))?;
            let key = attr.key.local_name();
            let slot = match key.as_ref() {
                b"name" => &mut out.name,
                b"classname" => &mut out.classname,
                b"time" => &mut out.time,
                b"tests" => &mut out.tests,
                b"failures" => &mut out.failures,
                b"errors" => &mut out.errors,
                b"skipped" => &mut out.skipped,
                _ => continue,
            };
            let value = attr
                .decode_and_unescape_value(reader.decoder())
                .map_err(|err| {
                    self.malformed(
                        at,
                        format!(
                            "bad value of attribute {}: {err}",
                            String::from_utf8_lossy(key.as_ref())
                        ),
                    )
                })?;
            *slot = Some(value.into_owned());
        }
        Ok(out)
    }

    fn time(&mut self, value: &str, element: &str, at: u64) -> Result<f64, ReportError> {
        match parse_time(value) {
            Ok((secs, decimals)) => {
                self.max_decimals = self.max_decimals.max(decimals);
                Ok(secs)
            }
            Err(why) => {
                Err(self.malformed(at, format!("{element} time=\"{}\": {why}", clip(value))))
            }
        }
    }

    fn count(&self, value: Option<&str>, attr: &str, at: u64) -> Result<Option<u32>, ReportError> {
        match value {
            None => Ok(None),
            Some(v) => v.trim().parse::<u32>().map(Some).map_err(|_| {
                self.malformed(
                    at,
                    format!("testsuite {attr}=\"{}\" is not a count", clip(v)),
                )
            }),
        }
    }

    fn open(
        &mut self,
        reader: &Reader<&[u8]>,
        e: &BytesStart<'_>,
        at: u64,
    ) -> Result<(), ReportError> {
        let depth = self.depth;
        self.depth += 1;
        let local = e.local_name();
        let tag = local.as_ref();
        if depth == 0 {
            if self.root_closed {
                return Err(self.malformed(at, "a second root element"));
            }
            if tag != b"testsuite" && tag != b"testsuites" {
                return Err(self.malformed(
                    at,
                    format!(
                        "the root element is <{}>, not <testsuite> or <testsuites>",
                        clip(&String::from_utf8_lossy(tag))
                    ),
                ));
            }
            self.root_seen = true;
        }
        // Children of an open testcase: only direct ones matter.
        if let Some(case) = &mut self.case {
            if depth == case.depth + 1 {
                match tag {
                    b"failure" => case.failure = true,
                    b"error" => case.error = true,
                    b"skipped" => case.skipped = true,
                    b"flakyFailure" | b"flakyError" => case.flaky = true,
                    _ => {}
                }
            }
            return Ok(());
        }
        match tag {
            b"testsuite" => {
                let a = self.attrs(reader, e, at)?;
                let time = match a.time.as_deref() {
                    Some(v) => Some(self.time(v, "testsuite", at)?),
                    None => None,
                };
                let claimed = ClaimedCounts {
                    tests: self.count(a.tests.as_deref(), "tests", at)?,
                    failures: self.count(a.failures.as_deref(), "failures", at)?,
                    errors: self.count(a.errors.as_deref(), "errors", at)?,
                    skipped: self.count(a.skipped.as_deref(), "skipped", at)?,
                };
                if self.format == ReportFormat::Pytest {
                    self.py_claimed_any = true;
                    let add = |x: Option<u32>, y: Option<u32>| match (x, y) {
                        (None, None) => None,
                        (x, y) => Some(x.unwrap_or(0).saturating_add(y.unwrap_or(0))),
                    };
                    self.py_claimed = ClaimedCounts {
                        tests: add(self.py_claimed.tests, claimed.tests),
                        failures: add(self.py_claimed.failures, claimed.failures),
                        errors: add(self.py_claimed.errors, claimed.errors),
                        skipped: add(self.py_claimed.skipped, claimed.skipped),
                    };
                }
                self.suites.push(Suite {
                    depth,
                    start: at,
                    name: a.name,
                    time,
                    claimed,
                    counts: Counts::default(),
                    case_secs: 0.0,
                    cases_without_time: 0,
                });
            }
            b"testcase" => {
                if self.suites.is_empty() {
                    return Err(self.malformed(at, "<testcase> outside any <testsuite>"));
                }
                let a = self.attrs(reader, e, at)?;
                let secs = match a.time.as_deref() {
                    Some(v) => Some(self.time(v, "testcase", at)?),
                    None => None,
                };
                let class = match self.format {
                    ReportFormat::Surefire => String::new(),
                    ReportFormat::Pytest => match (a.classname, a.name) {
                        (Some(c), _) if !c.is_empty() => c,
                        (_, Some(n)) if !n.is_empty() => n,
                        _ => {
                            return Err(
                                self.malformed(at, "pytest <testcase> without classname and name")
                            );
                        }
                    },
                };
                self.case = Some(Case {
                    depth,
                    class,
                    secs,
                    failure: false,
                    error: false,
                    skipped: false,
                    flaky: false,
                });
            }
            _ => {}
        }
        Ok(())
    }

    fn close(&mut self, at: u64) -> Result<(), ReportError> {
        self.depth = self.depth.saturating_sub(1);
        let depth = self.depth;
        if depth == 0 {
            self.root_closed = true;
        }
        if self.case.as_ref().is_some_and(|c| c.depth == depth) {
            if let Some(case) = self.case.take() {
                self.end_case(case, at)?;
            }
            return Ok(());
        }
        if self.case.is_none()
            && self.suites.last().is_some_and(|s| s.depth == depth)
            && let Some(suite) = self.suites.pop()
        {
            self.end_suite(suite)?;
        }
        Ok(())
    }

    fn end_case(&mut self, case: Case, at: u64) -> Result<(), ReportError> {
        let Some(suite) = self.suites.last_mut() else {
            return Err(self.malformed(at, "<testcase> outside any <testsuite>"));
        };
        suite.counts.add_case(&case);
        match case.secs {
            Some(s) => suite.case_secs += s,
            None => suite.cases_without_time = suite.cases_without_time.saturating_add(1),
        }
        if self.format == ReportFormat::Pytest {
            let entry = self.py.entry(case.class.clone()).or_default();
            entry.secs += case.secs.unwrap_or(0.0);
            entry.counts.add_case(&case);
            if case.secs.is_none() {
                self.warnings.push(format!(
                    "{}: a testcase of {} has no time attribute (counted as 0 s)",
                    self.source, case.class
                ));
            }
        }
        Ok(())
    }

    fn end_suite(&mut self, suite: Suite) -> Result<(), ReportError> {
        if self.format == ReportFormat::Pytest {
            return Ok(());
        }
        let Some(name) = suite.name.filter(|n| !n.is_empty()) else {
            return Err(self.malformed(suite.start, "<testsuite> without a name"));
        };
        if suite.counts.tests == 0 {
            self.warnings.push(format!(
                "{}: testsuite {name} has no testcase; left out",
                self.source
            ));
            return Ok(());
        }
        let mismatches = suite.claimed.mismatches(&suite.counts);
        if !mismatches.is_empty() {
            self.warnings.push(format!(
                "{}: testsuite {name}: {} (the testcases are taken)",
                self.source,
                mismatches.join(", ")
            ));
        }
        let (secs, time_source) = match suite.time {
            Some(t) => (t, TimeSource::Suite),
            None => {
                if suite.cases_without_time > 0 {
                    self.warnings.push(format!(
                        "{}: testsuite {name} has no time and {} of its testcases have none (counted as 0 s)",
                        self.source, suite.cases_without_time
                    ));
                }
                (suite.case_secs, TimeSource::TestcaseSum)
            }
        };
        if !secs.is_finite() {
            return Err(self.malformed(
                suite.start,
                format!("testsuite {name}: the time is not finite"),
            ));
        }
        self.classes.push(ClassResult {
            name,
            secs,
            tests: suite.counts.tests,
            failures: suite.counts.failures,
            errors: suite.counts.errors,
            skipped: suite.counts.skipped,
            flaky: suite.counts.flaky,
            time_source,
            file: self.source.to_string(),
        });
        Ok(())
    }

    fn finish(mut self) -> Result<Report, ReportError> {
        if self.format == ReportFormat::Pytest {
            let mut total = Counts::default();
            for (name, c) in std::mem::take(&mut self.py) {
                total.add(&c.counts);
                if !c.secs.is_finite() {
                    return Err(self.malformed(
                        0,
                        format!("class {name}: the sum of the times is not finite"),
                    ));
                }
                self.classes.push(ClassResult {
                    name,
                    secs: c.secs,
                    tests: c.counts.tests,
                    failures: c.counts.failures,
                    errors: c.counts.errors,
                    skipped: c.counts.skipped,
                    flaky: c.counts.flaky,
                    time_source: TimeSource::TestcaseSum,
                    file: self.source.to_string(),
                });
            }
            if self.py_claimed_any {
                let mismatches = self.py_claimed.mismatches(&total);
                if !mismatches.is_empty() {
                    self.warnings.push(format!(
                        "{}: testsuite attributes {} (the testcases are taken)",
                        self.source,
                        mismatches.join(", ")
                    ));
                }
            }
        }
        self.classes.sort_by(|a, b| a.name.cmp(&b.name));
        for pair in self.classes.windows(2) {
            if let [a, b] = pair
                && a.name == b.name
            {
                return Err(ReportError::Duplicate {
                    class: a.name.clone(),
                    first: a.file.clone(),
                    second: b.file.clone(),
                });
            }
        }
        Ok(Report {
            classes: self.classes,
            resolution: decimals_to_step(self.max_decimals.max(DEFAULT_DECIMALS)),
            files: vec![self.source.to_string()],
            warnings: self.warnings.finish(),
        })
    }
}

/// At most 40 characters of a value, for messages.
fn clip(s: &str) -> String {
    if s.chars().count() <= 40 {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(40).collect();
        out.push('…');
        out
    }
}

/// Parse a `time` attribute (see the module docs): seconds and the decimals it shows.
fn parse_time(raw: &str) -> Result<(f64, u32), String> {
    let s = raw.trim();
    if s.is_empty() {
        return Err("empty".into());
    }
    let bytes = s.as_bytes();
    let mut i = 0;
    // Integer part, possibly with English grouping.
    let int_start = i;
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b',') {
        i += 1;
    }
    let int_part = &s[int_start..i];
    if int_part.contains(',') {
        let mut groups = int_part.split(',');
        let first_ok = groups.next().is_some_and(|g| (1..=3).contains(&g.len()));
        if !first_ok || !groups.all(|g| g.len() == 3) {
            return Err(
                "not a number (grouping commas must separate groups of three digits)".into(),
            );
        }
    }
    let mut frac_digits: u32 = 0;
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            frac_digits = frac_digits.saturating_add(1);
            i += 1;
        }
    }
    if int_part.is_empty() && frac_digits == 0 {
        return Err(if s.starts_with('-') {
            "negative".into()
        } else {
            "not a number".into()
        });
    }
    let mut exponent: i64 = 0;
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        i += 1;
        let exp_start = i;
        if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
            i += 1;
        }
        let digits_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == digits_start || i - digits_start > 4 {
            return Err("not a number (bad exponent)".into());
        }
        exponent = s[exp_start..i]
            .parse::<i64>()
            .map_err(|_| "not a number (bad exponent)".to_string())?;
    }
    if i != bytes.len() {
        return Err("not a number".into());
    }
    let plain: String = s.chars().filter(|&c| c != ',').collect();
    let secs: f64 = plain.parse().map_err(|_| "not a number".to_string())?;
    if !secs.is_finite() {
        return Err("not finite".into());
    }
    if secs > MAX_SECS {
        return Err(format!("implausibly large (over {MAX_SECS} s)"));
    }
    let decimals = (i64::from(frac_digits) - exponent).clamp(0, i64::from(MAX_DECIMALS));
    Ok((secs, u32::try_from(decimals).unwrap_or(MAX_DECIMALS)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn data(name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/reports")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn surefire(xml: &str) -> Result<Report, ReportError> {
        parse(ReportFormat::Surefire, xml.as_bytes(), "TEST-x.xml")
    }

    fn malformed_detail(r: Result<Report, ReportError>) -> (Position, String) {
        match r {
            Err(ReportError::Malformed {
                position, detail, ..
            }) => (position, detail),
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    #[test]
    fn time_formats() {
        assert_eq!(parse_time("0"), Ok((0.0, 0)));
        assert_eq!(parse_time("0.0"), Ok((0.0, 1)));
        assert_eq!(parse_time("0.012"), Ok((0.012, 3)));
        assert_eq!(parse_time("1,234.5"), Ok((1234.5, 1)));
        assert_eq!(parse_time("1,234,567.891"), Ok((1_234_567.891, 3)));
        assert_eq!(parse_time("12,345"), Ok((12345.0, 0)));
        assert_eq!(parse_time(" 2.5 "), Ok((2.5, 1)));
        assert_eq!(parse_time(".5"), Ok((0.5, 1)));
        assert_eq!(parse_time("1.0E7"), Ok((1.0e7, 0)));
        assert_eq!(parse_time("1.2345E2"), Ok((123.45, 2)));
        assert_eq!(parse_time("5.0E-4"), Ok((0.0005, 5)));
        assert_eq!(parse_time("0.0012345678901"), Ok((0.0012345678901, 9)));
        for bad in [
            "", "abc", "-1", "-0.5", "NaN", "Infinity", "inf", "1,23", "1,2345", ",123", "1.2.3",
            "1e", "1e99999", "+1", "0x10", "1 2", "1e400", "1e13",
        ] {
            assert!(parse_time(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn surefire_2_22_report() {
        let r = parse(
            ReportFormat::Surefire,
            &data("surefire-2.22/TEST-com.example.CalculatorTest.xml"),
            "a",
        )
        .expect("parses");
        assert_eq!(r.classes.len(), 1);
        let c = &r.classes[0];
        assert_eq!(c.name, "com.example.CalculatorTest");
        assert_eq!(c.secs, 1234.5);
        assert_eq!(c.time_source, TimeSource::Suite);
        assert_eq!((c.tests, c.failures, c.errors, c.skipped), (4, 1, 0, 1));
        assert!(!c.passed());
        assert_eq!(r.resolution, 0.001);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert_eq!(r.files, vec!["a".to_string()]);
    }

    #[test]
    fn surefire_3_report_with_reruns_and_nested() {
        let r = parse(
            ReportFormat::Surefire,
            &data("surefire-3/TEST-com.example.ParserTest.xml"),
            "b",
        )
        .expect("parses");
        let c = r.class("com.example.ParserTest").expect("class");
        assert_eq!(c.secs, 0.257);
        assert_eq!(
            (c.tests, c.failures, c.errors, c.skipped, c.flaky),
            (5, 0, 1, 0, 1)
        );
        // The nested class's testcases (classname Outer$Inner) belong to the suite.
        assert_eq!(r.classes.len(), 1);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn surefire_dir_merges_and_skips_empty_suites() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reports/surefire-3");
        let r = read_surefire_dir(&dir).expect("reads");
        let names: Vec<_> = r.classes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "com.example.OuterTest$Inner",
                "com.example.ParserTest",
                "com.example.ZeroTest"
            ]
        );
        let zero = r.class("com.example.ZeroTest").expect("zero");
        assert_eq!(zero.secs, 0.0);
        assert!(zero.passed());
        let inner = r.class("com.example.OuterTest$Inner").expect("inner");
        assert_eq!(inner.time_source, TimeSource::TestcaseSum);
        assert!((inner.secs - 0.003).abs() < 1e-12);
        assert_eq!(r.files.len(), 4);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("com.example.OuterTest has no testcase")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn missing_dir_and_dir_without_reports() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert!(matches!(
            read_surefire_dir(&tmp.path().join("nope")),
            Err(ReportError::Missing { .. })
        ));
        std::fs::write(tmp.path().join("com.example.Foo.txt"), "x").expect("write");
        assert!(matches!(
            read_surefire_dir(tmp.path()),
            Err(ReportError::Missing { .. })
        ));
    }

    #[test]
    fn pytest_report() {
        let r =
            parse(ReportFormat::Pytest, &data("pytest/junit.xml"), "junit.xml").expect("parses");
        let names: Vec<_> = r.classes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "tests.test_broken",
                "tests.test_join",
                "tests.test_mod.TestParse",
                "tests.test_mod.TestSlow"
            ]
        );
        let join = r.class("tests.test_join").expect("join");
        assert!((join.secs - 0.015).abs() < 1e-12);
        assert_eq!(
            (join.tests, join.failures, join.errors, join.skipped),
            (3, 0, 0, 1)
        );
        assert!(join.passed());
        let parse_c = r.class("tests.test_mod.TestParse").expect("parse");
        assert_eq!((parse_c.tests, parse_c.failures, parse_c.errors), (3, 1, 1));
        assert!(!parse_c.passed());
        let slow = r.class("tests.test_mod.TestSlow").expect("slow");
        assert_eq!((slow.tests, slow.skipped), (1, 1));
        assert!(!slow.passed(), "only skipped tests: not passed");
        let broken = r.class("tests.test_broken").expect("collection error");
        assert_eq!(broken.errors, 1);
        assert!(
            r.classes
                .iter()
                .all(|c| c.time_source == TimeSource::TestcaseSum)
        );
        assert_eq!(r.resolution, 0.001);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn pytest_without_testsuites_wrapper_and_long_decimals() {
        let xml = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuite errors="0" failures="0" name="pytest" skipped="0" tests="2" time="0.05">
<testcase classname="t.test_a" file="t/test_a.py" line="1" name="test_x" time="0.0012345678"/>
<testcase classname="t.test_a" file="t/test_a.py" line="5" name="test_y" time="0.02"/>
</testsuite>"#;
        let r = parse(ReportFormat::Pytest, xml.as_bytes(), "old.xml").expect("parses");
        assert_eq!(r.classes.len(), 1);
        assert_eq!(r.resolution, 1e-9);
        assert!((r.classes[0].secs - 0.0212345678).abs() < 1e-12);
    }

    #[test]
    fn failure_child_beats_attribute() {
        let xml = r#"<testsuite name="a.B" time="0.5" tests="1" failures="0" errors="0" skipped="0">
  <testcase name="t" classname="a.B" time="0.4"><failure message="boom" type="java.lang.AssertionError">trace</failure></testcase>
</testsuite>"#;
        let r = surefire(xml).expect("parses");
        assert_eq!(r.classes[0].failures, 1);
        assert!(!r.classes[0].passed());
        assert_eq!(r.warnings.len(), 1);
        assert!(
            r.warnings[0].contains("failures=\"0\" but 1 counted"),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn missing_suite_time_falls_back_to_testcases() {
        let xml = r#"<testsuite name="a.B" tests="2" failures="0" errors="0" skipped="0">
  <testcase name="t1" classname="a.B" time="0.25"/>
  <testcase name="t2" classname="a.B" time="1.5"/>
</testsuite>"#;
        let r = surefire(xml).expect("parses");
        assert_eq!(r.classes[0].secs, 1.75);
        assert_eq!(r.classes[0].time_source, TimeSource::TestcaseSum);
    }

    #[test]
    fn testsuites_wrapper_and_nested_suites() {
        let xml = r#"<testsuites>
  <testsuite name="a.A" time="2">
    <testcase name="t" classname="a.A" time="1"/>
    <testsuite name="a.A$Inner" time="0.75"><testcase name="u" classname="a.A$Inner" time="0.7"/></testsuite>
  </testsuite>
  <testsuite name="a.C" time="0.1"><testcase name="t" classname="a.C" time="0.1"/></testsuite>
</testsuites>"#;
        let r = surefire(xml).expect("parses");
        let got: Vec<_> = r
            .classes
            .iter()
            .map(|c| (c.name.as_str(), c.secs, c.tests))
            .collect();
        assert_eq!(
            got,
            [("a.A", 2.0, 1), ("a.A$Inner", 0.75, 1), ("a.C", 0.1, 1)]
        );
    }

    #[test]
    fn truncated_file() {
        let full = data("surefire-2.22/TEST-com.example.CalculatorTest.xml");
        let cut = &full[..full.len() * 2 / 3];
        let err = parse(ReportFormat::Surefire, cut, "cut.xml").expect_err("truncated");
        let msg = err.to_string();
        assert!(msg.contains("cut.xml"), "{msg}");
        assert!(matches!(err, ReportError::Malformed { .. }), "{msg}");
        // Cut inside a tag, too.
        let cut = &full[..full.len() - 5];
        assert!(matches!(
            parse(ReportFormat::Surefire, cut, "cut.xml"),
            Err(ReportError::Malformed { .. })
        ));
    }

    #[test]
    fn bad_time_names_line() {
        let xml = "<testsuite name=\"a.B\" time=\"1\">\n  <testcase name=\"t\" classname=\"a.B\" time=\"abc\"/>\n</testsuite>";
        let (pos, detail) = malformed_detail(surefire(xml));
        assert_eq!(pos.line, 2);
        assert!(detail.contains("abc"), "{detail}");
        for t in ["-1", "NaN", "Infinity", "1e400"] {
            let xml = format!(
                "<testsuite name=\"a.B\" time=\"{t}\"><testcase name=\"t\" time=\"1\"/></testsuite>"
            );
            malformed_detail(surefire(&xml));
        }
    }

    #[test]
    fn empty_and_non_xml_files() {
        let (_, d) = malformed_detail(surefire(""));
        assert!(d.contains("empty"), "{d}");
        malformed_detail(surefire("  \n"));
        let (_, d) = malformed_detail(surefire("Tests run: 3, Failures: 0\n"));
        assert!(d.contains("not an XML report"), "{d}");
        let (_, d) = malformed_detail(surefire("<html><body>no</body></html>"));
        assert!(d.contains("<html>"), "{d}");
        malformed_detail(parse(
            ReportFormat::Surefire,
            &[0xff, 0xfe, 0x00, 0x3c],
            "bin",
        ));
        malformed_detail(surefire(
            "<testsuite name=\"a\"><testcase name=\"t\"/></testsuite><testsuite/>",
        ));
        malformed_detail(surefire("<testsuite name=\"a\" tests=\"x\"/>"));
        malformed_detail(surefire(
            "<testsuite time=\"1\"><testcase name=\"t\"/></testsuite>",
        ));
        let (_, d) = malformed_detail(surefire(
            "<testsuite name=\"a\"><testcase name=\"t\"></testsuite>",
        ));
        assert!(d.contains("not well-formed"), "{d}");
        malformed_detail(surefire(
            "<testsuite name=\"a\"><testcase name=\"t\" time=\"1\" time=\"2\"/></testsuite>",
        ));
        malformed_detail(surefire(
            "<testsuite name=\"a&bogus;\"><testcase name=\"t\"/></testsuite>",
        ));
    }

    #[test]
    fn byte_order_mark_and_entities_are_fine() {
        let mut xml = vec![0xef, 0xbb, 0xbf];
        xml.extend_from_slice(b"<?xml version=\"1.0\"?>\n<testsuite name=\"a.&lt;B&gt;\" time=\"0.5\"><testcase name=\"t\" time=\"0.5\"/></testsuite>\n");
        let r = parse(ReportFormat::Surefire, &xml, "bom.xml").expect("parses");
        assert_eq!(r.classes[0].name, "a.<B>");
    }

    #[test]
    fn merge_rejects_duplicates_and_prefix_fixes_them() {
        let xml = r#"<testsuite name="a.B" time="0.5"><testcase name="t" time="0.5"/></testsuite>"#;
        let one = parse(ReportFormat::Surefire, xml.as_bytes(), "m1/TEST-a.B.xml").expect("one");
        let two = parse(ReportFormat::Surefire, xml.as_bytes(), "m2/TEST-a.B.xml").expect("two");
        match merge([one.clone(), two.clone()]) {
            Err(e @ ReportError::Duplicate { .. }) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("m1/TEST-a.B.xml") && msg.contains("m2/TEST-a.B.xml"),
                    "{msg}"
                );
            }
            other => panic!("expected Duplicate, got {other:?}"),
        }
        let merged = merge([one.prefixed("m1/"), two.prefixed("m2/")]).expect("merges");
        let names: Vec<_> = merged.classes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["m1/a.B", "m2/a.B"]);
        assert_eq!(merged.files.len(), 2);
        // Duplicates inside one file are refused too.
        let dup = format!("<testsuites>{xml}{xml}</testsuites>");
        assert!(matches!(surefire(&dup), Err(ReportError::Duplicate { .. })));
        let empty = merge(Vec::new()).expect("empty merge");
        assert!(empty.classes.is_empty());
    }

    #[test]
    fn too_large_file_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("TEST-big.xml");
        let f = std::fs::File::create(&path).expect("create");
        f.set_len(MAX_REPORT_BYTES + 1).expect("sparse file");
        assert!(matches!(
            read_report(ReportFormat::Surefire, &path),
            Err(ReportError::TooLarge { .. })
        ));
    }

    #[test]
    fn serialises() {
        let r =
            parse(ReportFormat::Pytest, &data("pytest/junit.xml"), "junit.xml").expect("parses");
        let json = serde_json::to_string(&r).expect("json");
        assert!(json.contains("\"time_source\":\"testcase_sum\""), "{json}");
    }

    /// Random byte mutations of valid reports never panic, and what parses stays sane.
    #[test]
    fn mutations_never_panic() {
        let seeds = [
            (
                ReportFormat::Surefire,
                data("surefire-2.22/TEST-com.example.CalculatorTest.xml"),
            ),
            (
                ReportFormat::Surefire,
                data("surefire-3/TEST-com.example.ParserTest.xml"),
            ),
            (ReportFormat::Pytest, data("pytest/junit.xml")),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_e71b);
        let interesting = b"<>/=\"',.-0123456789eE&;! \n";
        let mut parsed_ok = 0;
        for round in 0..6000 {
            let (format, base) = &seeds[round % seeds.len()];
            let mut xml = base.clone();
            let edits = rng.random_range(1..=8);
            for _ in 0..edits {
                if xml.is_empty() {
                    break;
                }
                let at = rng.random_range(0..xml.len());
                match rng.random_range(0..5) {
                    0 => xml[at] = rng.random(),
                    1 => xml[at] = interesting[rng.random_range(0..interesting.len())],
                    2 => {
                        xml.remove(at);
                    }
                    3 => xml.insert(at, interesting[rng.random_range(0..interesting.len())]),
                    _ => xml.truncate(at),
                }
            }
            let parsed = parse(*format, &xml, "mutated.xml");
            if parsed.is_ok() {
                parsed_ok += 1;
            }
            if let Ok(r) = parsed {
                assert!(r.resolution > 0.0 && r.resolution <= 0.001);
                for c in &r.classes {
                    assert!(c.secs.is_finite() && c.secs >= 0.0, "{c:?}");
                    assert!(c.skipped <= c.tests && c.failures <= c.tests && c.errors <= c.tests);
                }
                assert!(r.classes.windows(2).all(|w| w[0].name < w[1].name));
            }
        }
        // Both paths were exercised.
        assert!(
            parsed_ok > 100 && parsed_ok < 5900,
            "{parsed_ok} of 6000 parsed"
        );
    }
}
