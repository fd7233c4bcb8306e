//! Checked samples, numpy-compatible quantiles, the IQR outlier filter and summaries.

use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_times};

/// Quantile `q` of an already sorted, non-empty slice, computed exactly as
/// numpy's default (`method='linear'`, Hyndman & Fan type 7), including
/// numpy's two-sided linear interpolation (`_lerp`), so results are
/// bit-identical to `numpy.quantile`.
pub(crate) fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 || !(0.0..=1.0).contains(&q) {
        return f64::NAN;
    }
    let virtual_index = (n - 1) as f64 * q;
    if virtual_index >= (n - 1) as f64 {
        return sorted[n - 1];
    }
    let previous = virtual_index.floor();
    // `previous` is in [0, n - 2]: virtual_index >= 0 and < n - 1.
    let i = previous as usize;
    let gamma = virtual_index - previous;
    let (a, b) = (sorted[i], sorted[i + 1]);
    let diff = b - a;
    if gamma >= 0.5 {
        b - diff * (1.0 - gamma)
    } else {
        a + diff * gamma
    }
}

/// Median of a sorted, non-empty slice as `numpy.median` computes it (the mean
/// of the two middle values for an even length).
pub(crate) fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Sorted copy (total order; finite inputs sort as usual).
pub(crate) fn sorted_copy(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// Median of `xs` in any order as `numpy.median` computes it (the mean of the two middle values
/// for an even length); NaN when `xs` is empty.
///
/// ```
/// use etip_stats::median;
/// assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
/// assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
/// assert!(median(&[]).is_nan());
/// ```
pub fn median(xs: &[f64]) -> f64 {
    median_sorted(&sorted_copy(xs))
}

/// Quantile `q` in `[0, 1]` with numpy's default linear interpolation
/// (`numpy.quantile(xs, q)`, equivalently `numpy.percentile(xs, 100 q)`).
///
/// The input need not be sorted. Returns NaN when `xs` is empty or `q` is
/// not in `[0, 1]` (numpy raises in both cases).
pub fn quantile_linear(sorted_or_not: &[f64], q: f64) -> f64 {
    if sorted_or_not.is_sorted_by(|a, b| a <= b) {
        quantile_sorted(sorted_or_not, q)
    } else {
        quantile_sorted(&sorted_copy(sorted_or_not), q)
    }
}

/// Quartile-based outlier filter: keeps the values in
/// `[Q1 - k·IQR, Q3 + k·IQR]` (bounds included), where Q1 and Q3 are
/// numpy-default quartiles and `IQR = Q3 - Q1`. Order is preserved.
///
/// SWE-Perf uses `k = 1.0` (rules §4.1). An empty input gives an empty output;
/// NaN values never pass the filter.
pub fn iqr_filter(xs: &[f64], k: f64) -> Vec<f64> {
    if xs.is_empty() {
        return Vec::new();
    }
    let sorted = sorted_copy(xs);
    let q1 = quantile_sorted(&sorted, 0.25);
    let q3 = quantile_sorted(&sorted, 0.75);
    let iqr = q3 - q1;
    let lower = q1 - k * iqr;
    let upper = q3 + k * iqr;
    xs.iter()
        .copied()
        .filter(|v| lower <= *v && *v <= upper)
        .collect()
}

/// A checked series of execution times: at least 2 points, all finite, none
/// negative.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    values: Vec<f64>,
    sorted: Vec<f64>,
}

impl Sample {
    /// Checks and wraps `values` (kept in the given order).
    pub fn new(values: Vec<f64>) -> Result<Sample, StatsError> {
        check_times("sample", &values, 2)?;
        let sorted = sorted_copy(&values);
        Ok(Sample { values, sorted })
    }

    /// The values in their original order.
    pub fn as_slice(&self) -> &[f64] {
        &self.values
    }

    /// The values in ascending order.
    pub fn sorted(&self) -> &[f64] {
        &self.sorted
    }

    /// Number of points (always >= 2).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Always false: a `Sample` has at least 2 points.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Arithmetic mean.
    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.len() as f64
    }

    /// Median (`numpy.median`).
    pub fn median(&self) -> f64 {
        median_sorted(&self.sorted)
    }

    /// Sample standard deviation (denominator n - 1, `numpy.std(ddof=1)`).
    pub fn std_dev(&self) -> f64 {
        let mean = self.mean();
        let ss: f64 = self.values.iter().map(|v| (v - mean) * (v - mean)).sum();
        (ss / (self.len() - 1) as f64).sqrt()
    }

    /// Quantile with numpy's default linear interpolation; NaN if `q` is not
    /// in `[0, 1]`.
    pub fn quantile(&self, q: f64) -> f64 {
        quantile_sorted(&self.sorted, q)
    }

    /// Smallest value.
    pub fn min(&self) -> f64 {
        self.sorted[0]
    }

    /// Largest value.
    pub fn max(&self) -> f64 {
        self.sorted[self.sorted.len() - 1]
    }
}

/// Descriptive statistics of one [`Sample`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of points.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n - 1).
    pub std_dev: f64,
    /// Median.
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// First quartile (numpy linear).
    pub q1: f64,
    /// Third quartile (numpy linear).
    pub q3: f64,
}

impl Summary {
    /// Summarises `sample`.
    pub fn of(sample: &Sample) -> Summary {
        Summary {
            n: sample.len(),
            mean: sample.mean(),
            std_dev: sample.std_dev(),
            median: sample.median(),
            min: sample.min(),
            max: sample.max(),
            q1: sample.quantile(0.25),
            q3: sample.quantile(0.75),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_numpy_examples() {
        // numpy.quantile([1, 2, 3, 4], [0.25, 0.5, 0.75]) == [1.75, 2.5, 3.25]
        let xs = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile_linear(&xs, 0.25), 1.75);
        assert_eq!(quantile_linear(&xs, 0.5), 2.5);
        assert_eq!(quantile_linear(&xs, 0.75), 3.25);
        assert_eq!(quantile_linear(&xs, 0.0), 1.0);
        assert_eq!(quantile_linear(&xs, 1.0), 4.0);
        assert!(quantile_linear(&xs, 1.5).is_nan());
        assert!(quantile_linear(&[], 0.5).is_nan());
    }

    #[test]
    fn iqr_filter_drops_far_values_and_keeps_order() {
        let xs = [10.0, 11.0, 10.5, 50.0, 10.2, 9.9, 0.1];
        let kept = iqr_filter(&xs, 1.0);
        assert_eq!(kept, vec![10.0, 11.0, 10.5, 10.2, 9.9]);
        assert!(iqr_filter(&[], 1.0).is_empty());
    }

    #[test]
    fn sample_rejects_bad_input() {
        assert!(matches!(
            Sample::new(vec![1.0]),
            Err(StatsError::TooFewPoints { len: 1, min: 2, .. })
        ));
        assert!(matches!(
            Sample::new(vec![1.0, f64::NAN]),
            Err(StatsError::NotFinite { index: 1, .. })
        ));
        assert!(matches!(
            Sample::new(vec![1.0, 2.0, -0.5]),
            Err(StatsError::Negative { index: 2, .. })
        ));
    }

    #[test]
    fn summary_of_small_sample() {
        let s = Sample::new(vec![3.0, 1.0, 2.0, 4.0]).expect("valid sample");
        let sum = Summary::of(&s);
        assert_eq!(sum.n, 4);
        assert_eq!(sum.mean, 2.5);
        assert_eq!(sum.median, 2.5);
        assert_eq!((sum.min, sum.max), (1.0, 4.0));
        assert_eq!((sum.q1, sum.q3), (1.75, 3.25));
        // numpy.std([1,2,3,4], ddof=1) = 1.2909944487358056
        assert!((sum.std_dev - 1.2909944487358056).abs() < 1e-15);
        assert_eq!(s.as_slice(), &[3.0, 1.0, 2.0, 4.0]);
    }
}
