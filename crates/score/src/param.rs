//! The valid range of every numeric parameter of the rules ([`crate::rules::Params`]) and of the
//! audit ([`crate::audit::AuditParams`]), defined once here and used by the library
//! ([`crate::rules::Params::validate`], [`crate::audit::AuditParams::validate`]) and by the
//! command line (`etip score`, `etip audit` parse their flags with [`Param::parse`] and
//! [`parse_total_instances`]).
//!
//! | parameter | flag | range |
//! |---|---|---|
//! | SWE-fficiency SR floor | `--floor` | finite, in (0, 1] |
//! | bounded-penalty floor | `--bounded-floor` | finite, in (0, 1] |
//! | GSO-style SR gate | `--gso-threshold` | finite, > 0 |
//! | JETO minimum improvement | `--min-impr` | [0, 1) |
//! | JETO p-value threshold | `--p-val` | (0, 0.5] |
//! | test-failure tolerance τ | `--tolerance` | [0, 1] |
//! | reported-versus-wall tolerance, seconds part | `--timing-tolerance-ms` | finite, >= 0 |
//! | reported-versus-wall tolerance, share of the command time | `--timing-tolerance-share` | [0, 1] |
//! | benchmark size N | `--total-instances` | a whole number >= 1 |
//!
//! A floor above 1 would lift patches slower than the expert's above it; a floor of 0 (or NaN) makes
//! the harmonic mean undefined. `min_impr = 1` would ask for a runtime of 0; `p_val = 0` can never
//! be met, and above 0.5 a class could be significantly faster both ways. The sign test's two
//! ranges are those of `etip_stats::SignTestConfig` (checked by a test), and `etip measure` parses
//! its `--min-impr` and `--p-val` with these same definitions.

use crate::error::{ParamTextError, Result, ScoreError};

/// One end of a range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// The value itself is in the range.
    Closed(f64),
    /// The value itself is not.
    Open(f64),
    /// No bound on this side (but the value must be finite).
    None,
}

/// A numeric parameter: its name, its command-line flag and its range (always finite values).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    /// What it is, for people.
    pub name: &'static str,
    /// The command-line flag that sets it.
    pub flag: &'static str,
    /// Lower end.
    pub lo: Bound,
    /// Upper end.
    pub hi: Bound,
}

/// SWE-fficiency's floor on each SR in the harmonic mean.
pub const FLOOR: Param = Param {
    name: "the SR floor of the harmonic mean",
    flag: "--floor",
    lo: Bound::Open(0.0),
    hi: Bound::Closed(1.0),
};

/// The raised floor of the audit's bounded-penalty mean.
pub const BOUNDED_FLOOR: Param = Param {
    name: "the floor of the bounded-penalty harmonic mean",
    flag: "--bounded-floor",
    lo: Bound::Open(0.0),
    hi: Bound::Closed(1.0),
};

/// The SR a task needs under the GSO-style gate.
pub const GSO_THRESHOLD: Param = Param {
    name: "the SR threshold of the GSO-style gate",
    flag: "--gso-threshold",
    lo: Bound::Open(0.0),
    hi: Bound::None,
};

/// JETO's minimum relative improvement of a round.
pub const MIN_IMPR: Param = Param {
    name: "the sign test's minimum improvement",
    flag: "--min-impr",
    lo: Bound::Closed(0.0),
    hi: Bound::Open(1.0),
};

/// JETO's p-value threshold (strict).
pub const P_VAL: Param = Param {
    name: "the sign test's p-value threshold",
    flag: "--p-val",
    lo: Bound::Open(0.0),
    hi: Bound::Closed(0.5),
};

/// The audit's test-failure tolerance τ.
pub const TOLERANCE: Param = Param {
    name: "the test-failure tolerance",
    flag: "--tolerance",
    lo: Bound::Closed(0.0),
    hi: Bound::Closed(1.0),
};

/// The time (milliseconds per round) by which a side's reports may claim more saving than the wall
/// clock sees (rules §3.8).
pub const TIMING_TOLERANCE_MS: Param = Param {
    name: "the reported-versus-wall-time tolerance",
    flag: "--timing-tolerance-ms",
    lo: Bound::Closed(0.0),
    hi: Bound::None,
};

/// The same as a share of the original's command time per round (the larger of the two applies).
pub const TIMING_TOLERANCE_SHARE: Param = Param {
    name: "the reported-versus-wall-time tolerance share",
    flag: "--timing-tolerance-share",
    lo: Bound::Closed(0.0),
    hi: Bound::Closed(1.0),
};

/// The flag of the benchmark size N (a whole number >= 1).
pub const TOTAL_INSTANCES_FLAG: &str = "--total-instances";

impl Param {
    /// The range in words: `a finite number in (0, 1]`, `a finite number > 0`.
    pub fn range(&self) -> String {
        match (self.lo, self.hi) {
            (Bound::None, Bound::None) => "a finite number".into(),
            (lo, Bound::None) => format!("a finite number {} {}", lo.op(">=", ">"), lo.value()),
            (Bound::None, hi) => format!("a finite number {} {}", hi.op("<=", "<"), hi.value()),
            (lo, hi) => format!(
                "a finite number in {}{}, {}{}",
                lo.op("[", "("),
                lo.value(),
                hi.value(),
                hi.op("]", ")")
            ),
        }
    }

    /// Whether `value` is in the range (NaN and infinities never are).
    pub fn contains(&self, value: f64) -> bool {
        let lo = match self.lo {
            Bound::Closed(x) => value >= x,
            Bound::Open(x) => value > x,
            Bound::None => true,
        };
        let hi = match self.hi {
            Bound::Closed(x) => value <= x,
            Bound::Open(x) => value < x,
            Bound::None => true,
        };
        value.is_finite() && lo && hi
    }

    /// `value` when it is in the range, else [`ScoreError::InvalidParameter`] naming the parameter,
    /// its flag and its range.
    pub fn check(&self, value: f64) -> Result<f64> {
        if self.contains(value) {
            Ok(value)
        } else {
            Err(ScoreError::InvalidParameter(format!(
                "{} ({}) must be {}, got {value}",
                self.flag,
                self.name,
                self.range()
            )))
        }
    }

    /// Parses command-line text (a number, possibly negative or `inf`/`nan`, so that the range
    /// check reports it) and checks the range. The error says what was expected; the command-line
    /// parser names the flag and the value beside it.
    pub fn parse(&self, text: &str) -> std::result::Result<f64, ParamTextError> {
        let expected = || ParamTextError::Expected {
            range: self.range(),
            name: self.name,
        };
        let value: f64 = text.trim().parse().map_err(|_| expected())?;
        if self.contains(value) {
            Ok(value)
        } else {
            Err(expected())
        }
    }
}

impl Bound {
    /// `closed` for a closed bound, `open` otherwise.
    fn op(self, closed: &'static str, open: &'static str) -> &'static str {
        match self {
            Bound::Closed(_) => closed,
            _ => open,
        }
    }

    fn value(self) -> f64 {
        match self {
            Bound::Closed(x) | Bound::Open(x) => x,
            Bound::None => f64::NAN,
        }
    }
}

/// Checks the benchmark size N: a whole number >= 1.
pub fn check_total_instances(n: usize) -> Result<usize> {
    if n >= 1 {
        Ok(n)
    } else {
        Err(ScoreError::InvalidParameter(format!(
            "{TOTAL_INSTANCES_FLAG} (the benchmark size N) must be a whole number >= 1, got {n}"
        )))
    }
}

/// Parses command-line text for the benchmark size N (a whole number >= 1).
pub fn parse_total_instances(text: &str) -> std::result::Result<usize, ParamTextError> {
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or(ParamTextError::TotalInstances)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_test_ranges_are_those_of_etip_stats() {
        use etip_stats::SignTestConfig;
        let grid = [
            f64::NEG_INFINITY,
            -1.0,
            -1e-300,
            0.0,
            1e-300,
            0.05,
            0.1,
            0.5,
            0.5000001,
            0.999,
            1.0,
            2.0,
            f64::INFINITY,
            f64::NAN,
        ];
        for x in grid {
            assert_eq!(
                MIN_IMPR.contains(x),
                SignTestConfig::min_impr_ok(x),
                "min_impr {x}"
            );
            assert_eq!(P_VAL.contains(x), SignTestConfig::p_val_ok(x), "p_val {x}");
        }
    }

    #[test]
    fn ranges_in_words() {
        assert_eq!(FLOOR.range(), "a finite number in (0, 1]");
        assert_eq!(GSO_THRESHOLD.range(), "a finite number > 0");
        assert_eq!(MIN_IMPR.range(), "a finite number in [0, 1)");
        assert_eq!(P_VAL.range(), "a finite number in (0, 0.5]");
        assert_eq!(TOLERANCE.range(), "a finite number in [0, 1]");
    }

    #[test]
    fn command_line_text_is_parsed_and_checked() {
        assert_eq!(FLOOR.parse("0.5"), Ok(0.5));
        assert_eq!(FLOOR.parse("1"), Ok(1.0));
        for bad in ["inf", "-inf", "nan", "0", "-1", "1.0001", "abc", ""] {
            let e = FLOOR.parse(bad).expect_err(bad).to_string();
            assert!(e.contains("(0, 1]"), "{bad}: {e}");
        }
        assert_eq!(MIN_IMPR.parse("0"), Ok(0.0));
        assert!(MIN_IMPR.parse("1").is_err());
        assert_eq!(P_VAL.parse("0.5"), Ok(0.5));
        assert!(P_VAL.parse("0.51").is_err());
        assert!(P_VAL.parse("0").is_err());
        assert_eq!(TOLERANCE.parse("0"), Ok(0.0));
        assert_eq!(TOLERANCE.parse("1"), Ok(1.0));
        assert!(TOLERANCE.parse("1.5").is_err());
        assert_eq!(GSO_THRESHOLD.parse("1e6"), Ok(1e6));
        for bad in ["inf", "nan", "0", "-1"] {
            assert!(GSO_THRESHOLD.parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_total_instances("102"), Ok(102));
        for bad in ["0", "-1", "1.5", "inf", "x"] {
            let e = parse_total_instances(bad).expect_err(bad).to_string();
            assert!(e.contains(">= 1"), "{bad}: {e}");
        }
    }

    #[test]
    fn library_errors_name_flag_and_range() {
        let e = FLOOR.check(f64::INFINITY).expect_err("inf").to_string();
        assert!(
            e.contains("--floor") && e.contains("(0, 1]") && e.contains("got inf"),
            "{e}"
        );
        assert!(check_total_instances(0).is_err());
        assert_eq!(check_total_instances(1).ok(), Some(1));
    }
}
