//! The scoring rules of published benchmarks (SPEC section 4), applied to one submission at a time.
//!
//! | rule | score | reproduces |
//! |---|---|---|
//! | [`Rule::Swefficiency`] | harmonic mean of SR floored at 0.001 | SWE-fficiency `overall_score` |
//! | [`Rule::Gso`] | opt@1 = round(100 · #opt_commit / N, 2) | GSO `score` |
//! | [`Rule::Sweperf`] | 100 · Σ δ / N (percent) | SWE-Perf "performance" |
//! | [`Rule::Jeto`] | 100 · #(correct and significantly faster) / N | JETO's sign-test verdict |
//!
//! A `measurements.jsonl` of `etip measure` ([`Format::EtipMeasurements`]) is scored by the JETO and
//! SWE-Perf rules; SWE-fficiency and GSO need the reference (expert) patch's times, which a
//! measurement does not have, and refuse it.
//!
//! Every rule first checks its [`Params`] against the ranges of [`crate::param`]
//! ([`Params::validate`]). The statistics are `etip_stats`' own, the same functions `etip measure`
//! uses: `sweperf_delta` (the δ search, one merge of the sorted samples per step) and `sign_test`
//! (the binomial tail exact up to [`EXACT_SIGN_ROUNDS`] rounds, Loader's saddle-point expansion
//! above), so both rules are O(n log n) in the runs per test.

mod figures;
mod gso;
mod jeto;
mod swefficiency;
mod sweperf;

pub use etip_stats::EXACT_SIGN_ROUNDS;

pub use figures::task_figures;
pub use gso::{GsoTaskVerdict, gso_task_verdict, natural_cmp, opt_at_k, runs_by_model};
pub use jeto::{JetoTaskVerdict, jeto_task_verdict};
pub(crate) use swefficiency::speedup_ratios as swefficiency_ratios;
pub use swefficiency::{SR_FLOOR, harmonic_mean_floored, speedups_of};

use crate::clip::quote;
use crate::error::Result;
use crate::input::{Format, Submission};
use crate::param;
use etip_stats::{DeltaConfig, SignTestConfig};
use serde::Serialize;

/// A benchmark's scoring rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// SWE-fficiency: harmonic mean of speedup ratios (SPEC 4.2).
    Swefficiency,
    /// GSO: percentage of instances that are opt_commit (SPEC 4.3).
    Gso,
    /// SWE-Perf: mean minimum gain δ (SPEC 4.1).
    Sweperf,
    /// JETO: share of tasks whose patch is correct and significantly faster (SPEC 3.1, 4.4).
    Jeto,
}

impl Rule {
    /// The rule's name as used on the command line and in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Swefficiency => "swefficiency",
            Rule::Gso => "gso",
            Rule::Sweperf => "sweperf",
            Rule::Jeto => "jeto",
        }
    }

    /// The benchmark's name as its authors write it (`SWE-fficiency`, `GSO`, `SWE-Perf`, `JETO`).
    pub fn title(self) -> &'static str {
        match self {
            Rule::Swefficiency => "SWE-fficiency",
            Rule::Gso => "GSO",
            Rule::Sweperf => "SWE-Perf",
            Rule::Jeto => "JETO",
        }
    }

    /// Short column title of the rule's score in a table, without its unit (see
    /// [`Rule::column_with_unit`]).
    pub fn column(self) -> &'static str {
        match self {
            Rule::Swefficiency => "SWE-fficiency HM of SR",
            Rule::Gso => "GSO opt@1",
            Rule::Sweperf => "SWE-Perf gain",
            Rule::Jeto => "JETO",
        }
    }

    /// Unit of the score: `"SR"` (SWE-fficiency: a harmonic mean of speedup ratios to the
    /// expert's) or `"%"` (a percentage: of tasks for GSO and JETO, of time for SWE-Perf's gain).
    pub fn unit(self) -> &'static str {
        match self {
            Rule::Swefficiency => "SR",
            Rule::Gso | Rule::Sweperf | Rule::Jeto => "%",
        }
    }

    /// [`Rule::column`] with the unit where it is a percentage: `JETO %`, `GSO opt@1 %`,
    /// `SWE-Perf gain %`, `SWE-fficiency HM of SR` (the SR is in the name).
    pub fn column_with_unit(self) -> String {
        match self.unit() {
            "%" => format!("{} %", self.column()),
            _ => self.column().to_owned(),
        }
    }

    /// What the score counts, with its unit, in a few words (a report's legend).
    pub fn description(self) -> &'static str {
        match self {
            Rule::Swefficiency => "harmonic mean of speedup / expert speedup",
            Rule::Gso => "opt@1, % of tasks",
            Rule::Sweperf => "mean minimal significant gain, %",
            Rule::Jeto => "% of tasks correct and significantly faster",
        }
    }

    /// Decimal places the benchmark publishes its score with (and reports show it with).
    pub fn decimals(self) -> usize {
        match self {
            Rule::Swefficiency => 4,
            Rule::Gso | Rule::Sweperf | Rule::Jeto => 2,
        }
    }

    /// The rules in the order etip's reports show them: etip's own (JETO) first.
    pub const REPORT_ORDER: [Rule; 4] = [Rule::Jeto, Rule::Swefficiency, Rule::Gso, Rule::Sweperf];

    /// All rules.
    pub const ALL: [Rule; 4] = [Rule::Swefficiency, Rule::Gso, Rule::Sweperf, Rule::Jeto];
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Rule {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Rule::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!("unknown rule {s:?}; expected swefficiency, gso, sweperf or jeto")
            })
    }
}

/// Parameters of the rules; the defaults are each benchmark's own.
#[derive(Debug, Clone)]
pub struct Params {
    /// SWE-fficiency SR floor in the harmonic mean [0.001].
    pub floor: f64,
    /// GSO-style gate on SR when the GSO rule scores outputs without per-test means [0.95].
    pub gso_sr_threshold: f64,
    /// Benchmark size N, when larger than the submitted tasks (unsubmitted tasks score 0).
    pub total_instances: Option<usize>,
    /// SWE-Perf δ search.
    pub delta: DeltaConfig,
    /// JETO sign test.
    pub sign: SignTestConfig,
}

impl Params {
    /// Checks every parameter against its range ([`crate::param`]); the error names the parameter,
    /// its command-line flag and its range.
    pub fn validate(&self) -> Result<()> {
        param::FLOOR.check(self.floor)?;
        param::GSO_THRESHOLD.check(self.gso_sr_threshold)?;
        param::MIN_IMPR.check(self.sign.min_impr)?;
        param::P_VAL.check(self.sign.p_val)?;
        if let Some(n) = self.total_instances {
            param::check_total_instances(n)?;
        }
        Ok(())
    }
}

impl Default for Params {
    fn default() -> Self {
        Params {
            floor: SR_FLOOR,
            gso_sr_threshold: 0.95,
            total_instances: None,
            delta: DeltaConfig::default(),
            sign: SignTestConfig::default(),
        }
    }
}

/// One submission's score under one rule.
#[derive(Debug, Clone, Serialize)]
pub struct ScoreRow {
    /// Submission name.
    pub submission: String,
    /// Rule applied.
    pub rule: Rule,
    /// The score, unrounded except where the benchmark's rule itself rounds (GSO).
    pub score: f64,
    /// Tasks in the submission's file.
    pub n_tasks: usize,
    /// N, the denominator of the score.
    pub total_instances: usize,
    /// Tasks whose patch was correct.
    pub n_correct: usize,
    /// Tasks that count as a success under the rule (GSO: opt_commit; JETO: significantly faster;
    /// SWE-Perf: δ > 0; SWE-fficiency: SR >= 1).
    pub n_success: usize,
    /// How the score was obtained from this input.
    pub method: String,
    /// The benchmark's published score, when the input carries it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub official_score: Option<f64>,
    /// Whether `score` equals the published one at the published precision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches_official: Option<bool>,
    /// Rule-specific figures (e.g. SWE-fficiency's proportions, GSO's opt_base count).
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// Scores one submission under one rule. Refuses parameters out of range ([`Params::validate`]).
pub fn score(sub: &Submission, rule: Rule, params: &Params) -> Result<ScoreRow> {
    params.validate()?;
    if sub.format == Format::EtipMeasurements && matches!(rule, Rule::Swefficiency | Rule::Gso) {
        return Err(crate::error::ScoreError::NotApplicable {
            submission: sub.name.clone(),
            rule: rule.name(),
            why: format!(
                "{} is a measurements file of `etip measure`, which times the original and the \
                 patched version only, while the {rule} rule compares with the reference (expert) \
                 patch; score measurements with --rule jeto or --rule sweperf",
                sub.path.display()
            ),
        });
    }
    let mut row = match rule {
        Rule::Swefficiency => swefficiency::score(sub, params)?,
        Rule::Gso => gso::score(sub, params)?,
        Rule::Sweperf => sweperf::score(sub, params)?,
        Rule::Jeto => jeto::score(sub, params)?,
    };
    // A published score belongs to the benchmark's own rule on its own format.
    let native = matches!(
        (rule, sub.format),
        (Rule::Swefficiency, Format::SwefficiencyCsv) | (Rule::Gso, Format::GsoReport)
    );
    if native
        && (params.floor == SR_FLOOR || rule == Rule::Gso)
        && let Some(official) = sub.official_score
    {
        row.official_score = Some(official);
        row.matches_official = Some(
            round_half_even(row.score, rule.decimals())
                == round_half_even(official, rule.decimals()),
        );
    }
    Ok(row)
}

/// Scores several submissions under one rule.
pub fn score_all(subs: &[Submission], rule: Rule, params: &Params) -> Result<Vec<ScoreRow>> {
    subs.iter().map(|s| score(s, rule, params)).collect()
}

/// `task "id" (file:line)`, naming a task of a submission in an error.
pub(crate) fn task_at(sub: &Submission, index: usize) -> String {
    let id = sub
        .tasks
        .get(index)
        .map_or_else(String::new, |t| quote(&t.instance_id));
    match sub.lines.get(index) {
        Some(line) => format!("task {id} ({}:{line})", sub.path.display()),
        None => format!("task {id} ({})", sub.path.display()),
    }
}

/// The denominator N of a submission under the given parameters.
pub(crate) fn total_of(sub: &Submission, params: &Params) -> Result<usize> {
    let n = params
        .total_instances
        .or(sub.total_instances)
        .unwrap_or(sub.tasks.len());
    if n < sub.tasks.len() {
        let source = if params.total_instances.is_some() {
            param::TOTAL_INSTANCES_FLAG.to_owned()
        } else {
            sub.path.display().to_string()
        };
        return Err(crate::error::ScoreError::InvalidParameter(format!(
            "{}: the benchmark size N = {n} (from {source}) is smaller than the {} tasks of {}",
            sub.name,
            sub.tasks.len(),
            sub.path.display()
        )));
    }
    Ok(n)
}

/// Rounds like Python's `round(x, digits)`: to the nearest decimal, ties (exact binary ties only) to even.
pub fn round_half_even(x: f64, digits: usize) -> f64 {
    // Formatting is exact (it works on the binary value), and parsing returns the nearest double, which
    // is what CPython's correctly-rounded `round` does.
    format!("{x:.digits$}").parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_matches_python() {
        // Values checked with CPython 3.11: round(x, n).
        assert_eq!(round_half_even(41.17647058823529, 2), 41.18);
        assert_eq!(round_half_even(0.22499999, 4), 0.225);
        assert_eq!(round_half_even(1.15, 1), 1.1); // 1.15 is 1.149999... in binary
        assert_eq!(round_half_even(1.25, 1), 1.2); // exact tie: to even
        assert_eq!(round_half_even(1.35, 1), 1.4); // 1.350000000000000088...
        assert_eq!(round_half_even(0.125, 2), 0.12);
        assert_eq!(round_half_even(0.375, 2), 0.38);
    }

    #[test]
    fn rule_metadata() {
        let columns: Vec<String> = Rule::REPORT_ORDER
            .iter()
            .map(|r| r.column_with_unit())
            .collect();
        assert_eq!(
            columns,
            [
                "JETO %",
                "SWE-fficiency HM of SR",
                "GSO opt@1 %",
                "SWE-Perf gain %"
            ]
        );
        let decimals: Vec<usize> = Rule::ALL.iter().map(|r| r.decimals()).collect();
        assert_eq!(decimals, [4, 2, 2, 2]);
        for rule in Rule::ALL {
            assert!(Rule::REPORT_ORDER.contains(&rule));
            assert!(!rule.title().is_empty() && !rule.description().is_empty());
        }
    }

    #[test]
    fn rule_names_round_trip() {
        for rule in Rule::ALL {
            assert_eq!(rule.name().parse::<Rule>(), Ok(rule));
        }
        assert!("swe-perf".parse::<Rule>().is_err());
    }
}
