//! The records of the rank test and the effect sizes as `etip measure` writes them beside the
//! sign test's ([`crate::SignTestRecord`]) for each test class (`measurements.jsonl`, schema in
//! `docs/schemas/measurements.md`), and the serde helpers for the non-finite numbers they hold.

use serde::{Deserialize, Serialize};

/// Serde for numbers that may be infinite (a ratio over a 0 s time): JSON has no infinity, so
/// non-finite values are written as the strings `"inf"`, `"-inf"` and `"nan"` (finite ones as
/// numbers) and read back from either form. Use it as `#[serde(with = "etip_stats::nonfinite")]`
/// (`etip_stats::nonfinite::pair` for a `[f64; 2]`).
pub mod nonfinite {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes a finite `v` as a number, else as `"inf"`, `"-inf"` or `"nan"`.
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else if v.is_nan() {
            s.serialize_str("nan")
        } else if *v > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Num {
        F(f64),
        S(String),
    }

    /// Reads a number or one of the strings `"inf"`, `"-inf"`, `"nan"`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Num::deserialize(d)? {
            Num::F(v) => Ok(v),
            Num::S(s) => match s.as_str() {
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                "nan" => Ok(f64::NAN),
                other => Err(serde::de::Error::custom(format!(
                    "expected a number, \"inf\", \"-inf\" or \"nan\", got {other:?}"
                ))),
            },
        }
    }

    /// The same for a pair (a confidence interval).
    pub mod pair {
        use serde::{Deserialize, Deserializer, Serializer, ser::SerializeTuple};

        /// Writes both ends as [`super::serialize`] does.
        pub fn serialize<S: Serializer>(v: &[f64; 2], s: S) -> Result<S::Ok, S::Error> {
            #[derive(serde::Serialize)]
            struct W(#[serde(with = "super")] f64);
            let mut t = s.serialize_tuple(2)?;
            t.serialize_element(&W(v[0]))?;
            t.serialize_element(&W(v[1]))?;
            t.end()
        }

        /// Reads both ends as [`super::deserialize`] does.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
            #[derive(Deserialize)]
            struct W(#[serde(with = "super")] f64);
            let [a, b] = <[W; 2]>::deserialize(d)?;
            Ok([a.0, b.0])
        }
    }
}

/// One-sided Mann–Whitney U tests ([`crate::mann_whitney_u`]) in both directions (scipy
/// semantics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MannWhitneyRecord {
    /// U statistic of the original sample.
    pub u: f64,
    /// P(original times stochastically greater): small when the patched version is faster.
    pub p_patched_faster: f64,
    /// P(original times stochastically smaller): small when the original version is faster.
    pub p_original_faster: f64,
    /// `exact` or `asymptotic`.
    pub method: String,
}

/// Effect sizes beside the p-values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EffectRecord {
    /// Median of patched/original per round.
    #[serde(with = "nonfinite")]
    pub median_ratio: f64,
    /// Bootstrap 95% interval of the median ratio (pairs resampled, [`crate::paired_ratio_ci`]).
    #[serde(with = "nonfinite::pair")]
    pub ratio_ci: [f64; 2],
    /// Cliff's δ ([`crate::cliffs_delta`]) of original against patched: +1 when every original
    /// time exceeds every patched time.
    #[serde(with = "nonfinite")]
    pub cliffs_delta: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infinite_ratios_survive_json() {
        let e = EffectRecord {
            median_ratio: f64::INFINITY,
            ratio_ci: [1.0, f64::INFINITY],
            cliffs_delta: -1.0,
        };
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(
            json,
            r#"{"median_ratio":"inf","ratio_ci":[1.0,"inf"],"cliffs_delta":-1.0}"#
        );
        let back: EffectRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back, e);
        assert!(
            serde_json::from_str::<EffectRecord>(
                r#"{"median_ratio":"big","ratio_ci":[1,2],"cliffs_delta":0}"#
            )
            .is_err()
        );
    }
}
