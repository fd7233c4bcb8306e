//! When each CPython feature release came out, and calendar dates for the messages.

use super::PyVersion;

/// A CPython feature release and the day its `x.y.0` came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// The feature version.
    pub version: PyVersion,
    /// The release day of `x.y.0`, as unix seconds at UTC midnight.
    pub released: i64,
}

const fn release(major: u32, minor: u32, year: i64, month: i64, day: i64) -> Release {
    Release {
        version: PyVersion::new(major, minor),
        released: days_from_civil(year, month, day) * 86_400,
    }
}

/// The CPython feature releases 2.6 to 3.14, oldest version first.
pub const PYTHON_RELEASES: [Release; 17] = [
    release(2, 6, 2008, 10, 1),
    release(2, 7, 2010, 7, 3),
    release(3, 0, 2008, 12, 3),
    release(3, 1, 2009, 6, 27),
    release(3, 2, 2011, 2, 20),
    release(3, 3, 2012, 9, 29),
    release(3, 4, 2014, 3, 16),
    release(3, 5, 2015, 9, 13),
    release(3, 6, 2016, 12, 23),
    release(3, 7, 2018, 6, 27),
    release(3, 8, 2019, 10, 14),
    release(3, 9, 2020, 10, 5),
    release(3, 10, 2021, 10, 4),
    release(3, 11, 2022, 10, 24),
    release(3, 12, 2023, 10, 2),
    release(3, 13, 2024, 10, 7),
    release(3, 14, 2025, 10, 7),
];

/// The newest Python 3 released on or before `unix_secs`; 3.0 for a time before Python 3 existed.
pub fn newest_python_at(unix_secs: i64) -> PyVersion {
    PYTHON_RELEASES
        .iter()
        .filter(|r| r.version.major == 3 && r.released <= unix_secs)
        .map(|r| r.version)
        .max()
        .unwrap_or(PyVersion::new(3, 0))
}

/// When `version` came out (unix seconds), if it is in [`PYTHON_RELEASES`].
pub fn python_released(version: PyVersion) -> Option<i64> {
    PYTHON_RELEASES
        .iter()
        .find(|r| r.version == version)
        .map(|r| r.released)
}

/// The UTC calendar date of `unix_secs`, `YYYY-MM-DD`.
pub fn format_date(unix_secs: i64) -> String {
    let (y, m, d) = civil_from_days(unix_secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub(crate) const fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_days_are_utc_midnights() {
        // 2016-12-23T00:00:00Z
        assert_eq!(python_released(PyVersion::new(3, 6)), Some(1_482_451_200));
        assert_eq!(python_released(PyVersion::new(2, 5)), None);
        assert_eq!(format_date(1_482_451_200), "2016-12-23");
        assert_eq!(format_date(1_482_451_200 + 86_399), "2016-12-23");
        assert_eq!(format_date(0), "1970-01-01");
        assert_eq!(format_date(951_782_400), "2000-02-29");
        for r in PYTHON_RELEASES {
            assert_eq!(r.released % 86_400, 0);
            let (y, m, d) = civil_from_days(r.released / 86_400);
            assert_eq!(days_from_civil(y, m, d) * 86_400, r.released);
        }
    }

    #[test]
    fn newest_release_at_a_time() {
        let day = |y, m, d| days_from_civil(y, m, d) * 86_400;
        assert_eq!(newest_python_at(day(2015, 12, 1)), PyVersion::new(3, 5));
        assert_eq!(newest_python_at(day(2016, 12, 23)), PyVersion::new(3, 6));
        assert_eq!(newest_python_at(day(2016, 12, 22)), PyVersion::new(3, 5));
        assert_eq!(newest_python_at(day(2023, 5, 1)), PyVersion::new(3, 11));
        assert_eq!(newest_python_at(day(2026, 1, 1)), PyVersion::new(3, 14));
        assert_eq!(newest_python_at(day(2005, 1, 1)), PyVersion::new(3, 0));
    }
}
