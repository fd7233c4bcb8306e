//! The streaming parser of the report readers (quick-xml): Surefire suites and pytest cases to
//! per-class results, with counts, warnings and the time resolution.

use super::*;

pub(super) fn decimals_to_step(decimals: u32) -> f64 {
    10f64.powi(-(decimals.min(MAX_DECIMALS) as i32))
}

/// Warnings with a cap.
#[derive(Default)]
pub(super) struct Warnings {
    pub(super) kept: Vec<String>,
    pub(super) dropped: usize,
}

impl Warnings {
    pub(super) fn push(&mut self, w: String) {
        if self.kept.len() < MAX_WARNINGS {
            self.kept.push(w);
        } else {
            self.dropped += 1;
        }
    }

    pub(super) fn finish(mut self) -> Vec<String> {
        if self.dropped > 0 {
            self.kept
                .push(format!("... and {} more warnings", self.dropped));
        }
        self.kept
    }
}

/// Counts of testcase outcomes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) tests: u32,
    pub(super) failures: u32,
    pub(super) errors: u32,
    pub(super) skipped: u32,
    pub(super) flaky: u32,
}

impl Counts {
    pub(super) fn add_case(&mut self, case: &Case) {
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

    pub(super) fn add(&mut self, o: &Counts) {
        self.tests = self.tests.saturating_add(o.tests);
        self.failures = self.failures.saturating_add(o.failures);
        self.errors = self.errors.saturating_add(o.errors);
        self.skipped = self.skipped.saturating_add(o.skipped);
        self.flaky = self.flaky.saturating_add(o.flaky);
    }
}

/// The counts a testsuite claims in its attributes.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ClaimedCounts {
    pub(super) tests: Option<u32>,
    pub(super) failures: Option<u32>,
    pub(super) errors: Option<u32>,
    pub(super) skipped: Option<u32>,
}

impl ClaimedCounts {
    /// Differences between claimed and counted, as text (empty if none).
    pub(super) fn mismatches(&self, counted: &Counts) -> Vec<String> {
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
pub(super) struct Suite {
    pub(super) depth: usize,
    pub(super) start: u64,
    pub(super) name: Option<String>,
    pub(super) time: Option<f64>,
    pub(super) claimed: ClaimedCounts,
    pub(super) counts: Counts,
    pub(super) case_secs: f64,
    pub(super) cases_without_time: u32,
}

/// An open testcase.
pub(super) struct Case {
    pub(super) depth: usize,
    pub(super) class: String,
    pub(super) name: String,
    pub(super) secs: Option<f64>,
    pub(super) failure: bool,
    pub(super) error: bool,
    pub(super) skipped: bool,
    pub(super) flaky: bool,
}

/// Per-class totals for pytest.
#[derive(Default)]
pub(super) struct PyClass {
    pub(super) secs: f64,
    pub(super) counts: Counts,
}

/// The attributes of interest of one element.
#[derive(Default)]
pub(super) struct Attrs {
    pub(super) name: Option<String>,
    pub(super) classname: Option<String>,
    pub(super) time: Option<String>,
    pub(super) tests: Option<String>,
    pub(super) failures: Option<String>,
    pub(super) errors: Option<String>,
    pub(super) skipped: Option<String>,
}

pub(super) struct Parser<'a> {
    pub(super) format: ReportFormat,
    pub(super) xml: &'a [u8],
    pub(super) source: &'a str,
    pub(super) depth: usize,
    pub(super) root_seen: bool,
    pub(super) root_closed: bool,
    pub(super) suites: Vec<Suite>,
    pub(super) case: Option<Case>,
    pub(super) max_decimals: u32,
    pub(super) classes: Vec<ClassResult>,
    pub(super) py: BTreeMap<String, PyClass>,
    pub(super) py_claimed: ClaimedCounts,
    pub(super) py_claimed_any: bool,
    pub(super) warnings: Warnings,
    pub(super) failed: Vec<FailedCase>,
    pub(super) cases: Vec<CaseTime>,
}

impl<'a> Parser<'a> {
    pub(super) fn new(format: ReportFormat, xml: &'a [u8], source: &'a str) -> Self {
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
            failed: Vec::new(),
            cases: Vec::new(),
        }
    }

    pub(super) fn malformed(&self, byte: u64, detail: impl Into<String>) -> ReportError {
        ReportError::Malformed {
            path: self.source.to_string(),
            position: Position::at(self.xml, byte),
            detail: detail.into(),
        }
    }

    pub(super) fn run(mut self) -> Result<Report, ReportError> {
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
                    return Err(self.malformed(
                        at,
                        format!("not well-formed XML: {}", clip_message(&e.to_string())),
                    ));
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

    pub(super) fn attrs(
        &self,
        reader: &Reader<&[u8]>,
        e: &BytesStart<'_>,
        at: u64,
    ) -> Result<Attrs, ReportError> {
        let mut out = Attrs::default();
        for attr in e.attributes() {
            let attr = attr.map_err(|err| {
                self.malformed(
                    at,
                    format!("bad attribute: {}", clip_message(&err.to_string())),
                )
            })?;
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
                            "bad value of attribute {}: {}",
                            String::from_utf8_lossy(key.as_ref()),
                            clip_message(&err.to_string())
                        ),
                    )
                })?;
            *slot = Some(value.into_owned());
        }
        Ok(out)
    }

    pub(super) fn time(&mut self, value: &str, element: &str, at: u64) -> Result<f64, ReportError> {
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

    pub(super) fn count(
        &self,
        value: Option<&str>,
        attr: &str,
        at: u64,
    ) -> Result<Option<u32>, ReportError> {
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

    pub(super) fn open(
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
                let name = a.name.clone().unwrap_or_default();
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
                    name,
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

    pub(super) fn close(&mut self, at: u64) -> Result<(), ReportError> {
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

    pub(super) fn end_case(&mut self, case: Case, at: u64) -> Result<(), ReportError> {
        let Some(suite) = self.suites.last_mut() else {
            return Err(self.malformed(at, "<testcase> outside any <testsuite>"));
        };
        suite.counts.add_case(&case);
        if (case.failure || case.error) && self.failed.len() < MAX_FAILED_CASES {
            let class = match self.format {
                ReportFormat::Pytest => case.class.clone(),
                ReportFormat::Surefire => suite.name.clone().unwrap_or_default(),
            };
            self.failed.push(FailedCase {
                class,
                name: case.name.clone(),
            });
        }
        match case.secs {
            Some(s) => suite.case_secs += s,
            None => suite.cases_without_time = suite.cases_without_time.saturating_add(1),
        }
        if self.format == ReportFormat::Pytest {
            if self.cases.len() < MAX_CASES {
                self.cases.push(CaseTime {
                    class: case.class.clone(),
                    name: case.name.clone(),
                    secs: case.secs.unwrap_or(0.0),
                });
            }
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

    pub(super) fn end_suite(&mut self, suite: Suite) -> Result<(), ReportError> {
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
                format!("testsuite {}: the time is not finite", clip(&name)),
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

    pub(super) fn finish(mut self) -> Result<Report, ReportError> {
        if self.format == ReportFormat::Pytest {
            let mut total = Counts::default();
            for (name, c) in std::mem::take(&mut self.py) {
                total.add(&c.counts);
                if !c.secs.is_finite() {
                    return Err(self.malformed(
                        0,
                        format!("class {}: the sum of the times is not finite", clip(&name)),
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
            failed: self.failed,
            cases: self.cases,
        })
    }
}

/// At most 40 characters of a value, for messages.
pub(super) fn clip(s: &str) -> String {
    clip_to(s, 40)
}

/// At most 200 characters of a message of quick-xml, which quotes names and entities of the
/// input in full (a mismatched end tag, an unknown entity): a report's error stays short however
/// long the names in the file are.
pub(super) fn clip_message(s: &str) -> String {
    clip_to(s, 200)
}

fn clip_to(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// Why a `time` attribute is not a duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum TimeError {
    #[error("empty")]
    Empty,
    #[error("not a number (grouping commas must separate groups of three digits)")]
    Grouping,
    #[error("negative")]
    Negative,
    #[error("not a number")]
    NotANumber,
    #[error("not a number (bad exponent)")]
    BadExponent,
    #[error("not finite")]
    NotFinite,
    #[error("implausibly large (over {MAX_SECS} s)")]
    TooLarge,
}

/// Parse a `time` attribute (see the module docs): seconds and the decimals it shows.
pub(super) fn parse_time(raw: &str) -> Result<(f64, u32), TimeError> {
    let s = raw.trim();
    if s.is_empty() {
        return Err(TimeError::Empty);
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
            return Err(TimeError::Grouping);
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
            TimeError::Negative
        } else {
            TimeError::NotANumber
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
            return Err(TimeError::BadExponent);
        }
        exponent = s[exp_start..i]
            .parse::<i64>()
            .map_err(|_| TimeError::BadExponent)?;
    }
    if i != bytes.len() {
        return Err(TimeError::NotANumber);
    }
    let plain: String = s.chars().filter(|&c| c != ',').collect();
    let secs: f64 = plain.parse().map_err(|_| TimeError::NotANumber)?;
    if !secs.is_finite() {
        return Err(TimeError::NotFinite);
    }
    if secs > MAX_SECS {
        return Err(TimeError::TooLarge);
    }
    let decimals = (i64::from(frac_digits) - exponent).clamp(0, i64::from(MAX_DECIMALS));
    Ok((secs, u32::try_from(decimals).unwrap_or(MAX_DECIMALS)))
}
