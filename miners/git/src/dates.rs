//! Dates: the `--since`/`--until` values, and author dates as RFC 3339.
//!
//! Git stores an author time as any 64-bit number of seconds and an offset as any `±hhmm`
//! (`git commit` itself accepts `GIT_AUTHOR_DATE="@300000000000 +0000"`, year 11476; negative
//! times come from `git hash-object --literally` or other tools). RFC 3339 writes only the years
//! 0000 to 9999 and offsets under 24 hours, so [`rfc3339`] clamps the instant to that range and
//! writes an offset it cannot use as UTC: the candidates file always holds RFC 3339.

use time::{OffsetDateTime, UtcOffset};

use crate::MineError;

/// 0000-01-01T00:00:00Z, the earliest instant RFC 3339 can write, in Unix seconds.
pub const RFC3339_MIN: i64 = -62_167_219_200;
/// 9999-12-31T23:59:59Z, the latest instant RFC 3339 can write, in Unix seconds.
pub const RFC3339_MAX: i64 = 253_402_300_799;

/// Parses `YYYY-MM-DD` (midnight UTC; with `end_of_day`, the following midnight) or RFC 3339.
pub fn parse_date(s: &str, end_of_day: bool) -> Result<i64, MineError> {
    use time::format_description::well_known::Rfc3339;
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return Ok(t.unix_timestamp());
    }
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    let d = time::Date::parse(s, &fmt).map_err(|_| MineError::Date(s.to_string()))?;
    let t = d.midnight().assume_utc().unix_timestamp();
    Ok(if end_of_day { t + 86_400 } else { t })
}

/// `seconds` since the epoch at the UTC offset `offset_minutes`, as RFC 3339
/// (`2024-01-01T10:00:00+01:00`; `Z` for UTC).
///
/// An instant outside the years 0000-9999 is clamped to the nearest end of that range. An offset of
/// 24 hours or more, or one at which the instant falls outside the range (9999-12-31T23:30:00Z at
/// +01:00), is dropped: the instant is written in UTC.
pub fn rfc3339(seconds: i64, offset_minutes: i32) -> String {
    let clamped = seconds.clamp(RFC3339_MIN, RFC3339_MAX);
    // In range by construction; the epoch only keeps this free of a panic path.
    let utc = OffsetDateTime::from_unix_timestamp(clamped).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let local = (offset_minutes.unsigned_abs() < 24 * 60)
        .then(|| UtcOffset::from_whole_seconds(offset_minutes * 60).ok())
        .flatten()
        .and_then(|offset| utc.checked_to_offset(offset))
        .filter(|t| (0..=9999).contains(&t.year()))
        .unwrap_or(utc);
    write(local)
}

fn write(t: OffsetDateTime) -> String {
    let offset = t.offset();
    let zone = if offset.is_utc() {
        "Z".to_string()
    } else {
        format!(
            "{}{:02}:{:02}",
            if offset.is_negative() { '-' } else { '+' },
            offset.whole_hours().unsigned_abs(),
            offset.minutes_past_hour().unsigned_abs()
        )
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{zone}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

#[cfg(test)]
mod tests {
    use time::format_description::well_known::Rfc3339;

    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("2015-01-01", false).unwrap(), 1_420_070_400);
        assert_eq!(parse_date("2015-01-01", true).unwrap(), 1_420_156_800);
        assert_eq!(
            parse_date("2015-01-01T01:00:00+01:00", false).unwrap(),
            1_420_070_400
        );
        assert!(parse_date("yesterday", false).is_err());
    }

    /// In range, the same text as `time`'s RFC 3339 formatter, offsets included.
    #[test]
    fn in_range_dates_read_as_before() {
        for (secs, minutes) in [
            (1_704_103_200, 60),
            (1_704_103_200, 0),
            (1_704_103_200, -330),
            (1_704_103_200, -30),
            (0, 840),
            (-100, 0),
            (RFC3339_MIN, 0),
            (RFC3339_MAX, 0),
            (RFC3339_MAX, -60),
        ] {
            let offset = UtcOffset::from_whole_seconds(minutes * 60).unwrap();
            let expected = OffsetDateTime::from_unix_timestamp(secs)
                .unwrap()
                .to_offset(offset)
                .format(&Rfc3339)
                .unwrap();
            assert_eq!(rfc3339(secs, minutes), expected, "{secs} {minutes}");
        }
        assert_eq!(rfc3339(1_704_103_200, 60), "2024-01-01T11:00:00+01:00");
        assert_eq!(rfc3339(1_704_103_200, -30), "2024-01-01T09:30:00-00:30");
    }

    /// Out of range: clamped, or written in UTC; always RFC 3339, never a panic.
    #[test]
    fn out_of_range_dates_are_clamped_rfc3339() {
        for (secs, minutes, expected) in [
            (300_000_000_000, 0, "9999-12-31T23:59:59Z"),
            (i64::MAX, 0, "9999-12-31T23:59:59Z"),
            (i64::MAX, 60, "9999-12-31T23:59:59Z"),
            (RFC3339_MAX, 60, "9999-12-31T23:59:59Z"),
            (-62_200_000_000, 0, "0000-01-01T00:00:00Z"),
            (i64::MIN, 0, "0000-01-01T00:00:00Z"),
            (RFC3339_MIN, -60, "0000-01-01T00:00:00Z"),
            (1_704_103_200, 24 * 60, "2024-01-01T10:00:00Z"),
            (1_704_103_200, i32::MIN, "2024-01-01T10:00:00Z"),
            (1_704_103_200, i32::MAX, "2024-01-01T10:00:00Z"),
        ] {
            let s = rfc3339(secs, minutes);
            assert_eq!(s, expected, "{secs} {minutes}");
            assert!(OffsetDateTime::parse(&s, &Rfc3339).is_ok(), "{s}");
        }
    }
}
