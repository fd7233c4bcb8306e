//! The error type of every fallible function in this crate.

/// What went wrong with the input of a statistical function.
///
/// Every message names the offending input (`name`) so that the caller can
/// say which measurement series was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// A series has fewer points than the statistic needs.
    #[error(
        "series `{name}` has {len} point(s) but at least {min} are needed; \
         collect more timed rounds or drop this series"
    )]
    TooFewPoints {
        /// Which input (e.g. `x`, `base`, `original`).
        name: &'static str,
        /// How many points it had.
        len: usize,
        /// How many are required.
        min: usize,
    },
    /// A value is NaN or infinite.
    #[error(
        "series `{name}` holds a non-finite value ({value}) at index {index}; \
         timings must be finite numbers, check the parser that produced them"
    )]
    NotFinite {
        /// Which input.
        name: &'static str,
        /// Position of the first offending value.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A value is negative where only durations (>= 0) make sense.
    #[error(
        "series `{name}` holds a negative value ({value}) at index {index}; \
         execution times cannot be negative, check the parser that produced them"
    )]
    Negative {
        /// Which input.
        name: &'static str,
        /// Position of the first offending value.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// Two paired series do not have the same length.
    #[error(
        "paired series differ in length (original has {original}, patched has {patched}); \
         pairs are matched by round, so both versions must have run the same rounds"
    )]
    LengthMismatch {
        /// Length of the original-version series.
        original: usize,
        /// Length of the patched-version series.
        patched: usize,
    },
    /// A configuration parameter is outside its valid range.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
}

/// Checks that `xs` has at least `min` points, all finite.
pub(crate) fn check_finite(name: &'static str, xs: &[f64], min: usize) -> Result<(), StatsError> {
    if xs.len() < min {
        return Err(StatsError::TooFewPoints {
            name,
            len: xs.len(),
            min,
        });
    }
    if let Some((index, &value)) = xs.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(StatsError::NotFinite { name, index, value });
    }
    Ok(())
}

/// Checks that `xs` has at least `min` points, all finite and non-negative (durations).
pub(crate) fn check_times(name: &'static str, xs: &[f64], min: usize) -> Result<(), StatsError> {
    check_finite(name, xs, min)?;
    if let Some((index, &value)) = xs.iter().enumerate().find(|(_, v)| **v < 0.0) {
        return Err(StatsError::Negative { name, index, value });
    }
    Ok(())
}
