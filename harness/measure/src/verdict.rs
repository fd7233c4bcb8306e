//! Verdicts from timed rounds (rules §3.1, 3.2): per eligible class and over per-round totals, the
//! paired sign test in both directions, one-sided Mann–Whitney tests both ways, and effect sizes
//! (median paired ratio with a bootstrap 95% interval, Cliff's δ).
//!
//! - **Eligible**: the class ran and passed in every timed round of both versions, and is not too
//!   fast to time: a class whose median time is below `min_class_secs` in both versions is
//!   reported as `too_fast` and left out of verdicts and totals.
//! - **Timer resolution** (etip's default, `TimerRule::Resolution(0.0)`): a pair whose two times
//!   are both at or below the report's resolution is a tie, never a win. `TimerRule::Literal` is JETO's
//!   rule, for reproducing its numbers: there a pair (0, 0) is a win for both versions.
//! - **Adaptive rounds**: with a sequential design, each series is judged at the looks of the
//!   design (after the first batch and after each further batch); its verdict is the one at the
//!   first look where either direction crosses the design's boundary, or at the last look
//!   available. The p-values shown are the fixed-n p-values of the rounds used.

use crate::protocol::RoundResult;
use etip_core::detector::DetectorKind;
use etip_records::measure::{ClassRecord, OwnStatistic};
use etip_stats::{
    Alternative, MwuMethod, SeqDecision, SequentialDesign, SignTestConfig, TimerRule, median,
};
use etip_stats::{Direction, EffectRecord, MannWhitneyRecord, SignTestRecord};
use std::collections::BTreeMap;

/// How verdicts are computed.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VerdictConfig {
    pub sign: SignTestConfig,
    /// The sign test's pair rule. Under `Resolution(r)` a pair is a tie when both times are at or
    /// below the larger of `r` and the reports' resolution ([`TimerRule::at_resolution`]; the
    /// default `Resolution(0.0)` takes the reports' own).
    pub timer: TimerRule,
    /// Classes whose median time is below this in both versions are `too_fast`.
    pub min_class_secs: f64,
    /// Sequential design for adaptive rounds (`None`: fixed rounds).
    pub sequential: Option<SequentialDesign>,
    pub bootstrap_resamples: usize,
    pub seed: u64,
    /// How far reported times may disagree with measured wall time (rules §3.8).
    pub timing: crate::consistency::Tolerance,
}

impl Default for VerdictConfig {
    fn default() -> Self {
        VerdictConfig {
            sign: SignTestConfig::default(),
            timer: TimerRule::default(),
            min_class_secs: 0.01,
            sequential: None,
            bootstrap_resamples: 2000,
            seed: 0x5eed,
            timing: crate::consistency::Tolerance::default(),
        }
    }
}

/// The per-detector series of the timed rounds: name → (original times, patched times), for
/// detectors that ran and passed in every round of both versions; the others with the reason.
pub struct Series {
    pub classes: BTreeMap<String, (Vec<f64>, Vec<f64>)>,
    /// The kind of every detector named in the rounds.
    pub kinds: BTreeMap<String, DetectorKind>,
    /// The benchmarks' own statistic, for series that have it in every round of both versions.
    pub own: BTreeMap<String, (Vec<f64>, Vec<f64>)>,
    pub excluded: BTreeMap<String, String>,
    pub resolution: f64,
}

/// Collects the per-detector series from the timed rounds.
pub fn series(rounds: &[RoundResult]) -> Series {
    let timed: Vec<&RoundResult> = rounds.iter().filter(|r| !r.summary.warmup).collect();
    let mut kinds = BTreeMap::new();
    let mut resolution: f64 = 0.0;
    for r in &timed {
        for s in &r.sides {
            resolution = resolution.max(s.resolution);
            for c in &s.classes {
                kinds.entry(c.name.clone()).or_insert(c.kind);
            }
        }
    }
    let mut classes = BTreeMap::new();
    let mut own = BTreeMap::new();
    let mut excluded = BTreeMap::new();
    'class: for name in kinds.keys() {
        let mut o = Vec::with_capacity(timed.len());
        let mut p = Vec::with_capacity(timed.len());
        let (mut own_o, mut own_p) = (Vec::new(), Vec::new());
        for r in &timed {
            for (side, out, own_out) in [
                (&r.sides[0], &mut o, &mut own_o),
                (&r.sides[1], &mut p, &mut own_p),
            ] {
                match side.classes.iter().find(|c| &c.name == name) {
                    Some(c) if c.passed => {
                        out.push(c.secs);
                        if let Some(v) = c.own {
                            own_out.push(v);
                        }
                    }
                    Some(c) => {
                        let why = match &c.error {
                            Some(e) if e.starts_with(crate::workload::NOT_RUN_AGAIN) => {
                                e[crate::workload::NOT_RUN_AGAIN.len()..].to_string()
                            }
                            Some(e) => format!(
                                "failed in round {} ({}): {}",
                                r.summary.round,
                                side.version,
                                crate::workload::headline(e)
                            ),
                            None => "failed".to_string(),
                        };
                        excluded.insert(name.clone(), why);
                        continue 'class;
                    }
                    None => {
                        excluded.insert(name.clone(), "missing_in_some_round".to_string());
                        continue 'class;
                    }
                }
            }
        }
        if !own_o.is_empty() && own_o.len() == o.len() && own_p.len() == p.len() {
            own.insert(name.clone(), (own_o, own_p));
        }
        classes.insert(name.clone(), (o, p));
    }
    Series {
        classes,
        kinds,
        own,
        excluded,
        resolution,
    }
}

/// Whether a class is too fast to time: its median time is below `min_class_secs` in both versions.
fn too_fast(o: &[f64], p: &[f64], cfg: &VerdictConfig) -> bool {
    median(o) < cfg.min_class_secs && median(p) < cfg.min_class_secs
}

/// The eligible series (in name order): timed in every round of both versions, not too fast.
fn eligible<'a>(s: &'a Series, cfg: &VerdictConfig) -> Vec<(&'a [f64], &'a [f64])> {
    s.classes
        .values()
        .filter(|(o, p)| !o.is_empty() && !too_fast(o, p, cfg))
        .map(|(o, p)| (o.as_slice(), p.as_slice()))
        .collect()
}

/// The series the overall verdict totals: the eligible test classes (JETO's overall); a run
/// that timed no test class totals its other detectors.
fn totalled<'a>(s: &'a Series, cfg: &VerdictConfig) -> Vec<(&'a [f64], &'a [f64])> {
    let of_kind = |tests: bool| -> Vec<(&'a [f64], &'a [f64])> {
        s.classes
            .iter()
            .filter(|(name, (o, p))| {
                !o.is_empty()
                    && !too_fast(o, p, cfg)
                    && s.kinds.get(*name).is_none_or(|k| k.is_test()) == tests
            })
            .map(|(_, (o, p))| (o.as_slice(), p.as_slice()))
            .collect()
    };
    let tests = of_kind(true);
    if tests.is_empty() {
        of_kind(false)
    } else {
        tests
    }
}

/// The verdicts of one measured ETIP: the classes (eligible first in name order, then the
/// excluded ones) and the overall verdict over per-round totals of the eligible classes. The sign
/// tests are JETO's verdict ([`etip_stats::jeto_verdict`], the one the JETO scoring rule applies),
/// under the configured timer rule at the reports' resolution and the sequential design, if any.
pub fn verdicts(
    rounds: &[RoundResult],
    cfg: &VerdictConfig,
) -> Result<(Vec<ClassRecord>, Option<ClassRecord>), etip_stats::StatsError> {
    let s = series(rounds);
    let eligible = eligible(&s, cfg);
    let jeto = etip_stats::jeto_verdict(
        &eligible,
        &cfg.sign,
        cfg.timer.at_resolution(s.resolution),
        cfg.sequential.as_ref(),
    )?;
    let mut judged = jeto.classes.into_iter();
    let kind = |name: &str| s.kinds.get(name).copied().unwrap_or_default();
    let mut out = Vec::new();
    for (name, (o, p)) in &s.classes {
        if o.is_empty() {
            continue;
        }
        if too_fast(o, p, cfg) {
            out.push(ClassRecord {
                name: name.clone(),
                kind: kind(name),
                eligible: false,
                excluded: Some("too_fast".into()),
                sign_test: None,
                mann_whitney: None,
                effect: None,
                original: o.clone(),
                patched: p.clone(),
                own: own_statistic(s.own.get(name)),
            });
        } else if let Some(sign) = judged.next() {
            let mut c = judge(name, o, p, sign, cfg)?;
            c.kind = kind(name);
            c.own = own_statistic(s.own.get(name));
            out.push(c);
        }
    }
    for (name, why) in &s.excluded {
        out.push(ClassRecord {
            name: name.clone(),
            kind: kind(name),
            eligible: false,
            excluded: Some(why.clone()),
            sign_test: None,
            mann_whitney: None,
            effect: None,
            original: Vec::new(),
            patched: Vec::new(),
            own: None,
        });
    }
    let totals = totalled(&s, cfg);
    let overall_sign = if totals.len() == eligible.len() {
        jeto.overall
    } else {
        etip_stats::jeto_verdict(
            &totals,
            &cfg.sign,
            cfg.timer.at_resolution(s.resolution),
            cfg.sequential.as_ref(),
        )?
        .overall
    };
    let overall = match (etip_stats::round_totals(&totals)?, overall_sign) {
        (Some((o, p)), Some(sign)) => Some(judge("overall", &o, &p, sign, cfg)?),
        _ => None,
    };
    Ok((out, overall))
}

/// A benchmark's own statistic beside etip's times, with the ratio of its medians.
fn own_statistic(own: Option<&(Vec<f64>, Vec<f64>)>) -> Option<OwnStatistic> {
    let (o, p) = own?;
    let (mo, mp) = (median(o), median(p));
    Some(OwnStatistic {
        original: o.clone(),
        patched: p.clone(),
        median_ratio: (mo > 0.0 && mp.is_finite()).then(|| mp / mo),
    })
}

/// Whether some eligible series is still inconclusive at the current number of rounds, so that
/// another batch may decide it (adaptive rounds).
pub fn needs_more_rounds(rounds: &[RoundResult], cfg: &VerdictConfig) -> bool {
    let Some(design) = &cfg.sequential else {
        return false;
    };
    let s = series(rounds);
    let rule = cfg.timer.at_resolution(s.resolution);
    let open = |o: &[f64], p: &[f64]| -> bool {
        // A series already significant at an earlier look is settled.
        let settled = matches!(
            etip_stats::sequential_sign_test(o, p, &cfg.sign, rule, design),
            Ok(v) if v.stopped_at.is_some() && v.direction != Direction::NotSignificant
        );
        if settled {
            return false;
        }
        let n = o.len();
        match etip_stats::sign_test_with(o, p, &cfg.sign, rule) {
            Ok(v) => {
                design.decide(n, v.wins_patched) == SeqDecision::Continue
                    || design.decide(n, v.wins_original) == SeqDecision::Continue
            }
            Err(_) => false,
        }
    };
    let mut any = false;
    for (o, p) in &eligible(&s, cfg) {
        any |= open(o, p);
    }
    if let Ok(Some((o, p))) = etip_stats::round_totals(&totalled(&s, cfg)) {
        any |= open(&o, &p);
    }
    any
}

/// All verdicts of one eligible series, its sign test given: the rank tests and effect sizes on
/// the rounds the sign test judged.
fn judge(
    name: &str,
    o: &[f64],
    p: &[f64],
    sign: SignTestRecord,
    cfg: &VerdictConfig,
) -> Result<ClassRecord, etip_stats::StatsError> {
    let (jo, jp) = (&o[..sign.n], &p[..sign.n]);
    let greater = etip_stats::mann_whitney_u(jo, jp, Alternative::Greater, MwuMethod::Auto)?;
    let less = etip_stats::mann_whitney_u(jo, jp, Alternative::Less, MwuMethod::Auto)?;
    let ci = etip_stats::paired_ratio_ci(jo, jp, 0.95, cfg.bootstrap_resamples, cfg.seed);
    let delta = etip_stats::cliffs_delta(jo, jp)?;
    Ok(ClassRecord {
        name: name.to_string(),
        kind: DetectorKind::Test,
        eligible: true,
        excluded: None,
        sign_test: Some(sign),
        mann_whitney: Some(MannWhitneyRecord {
            u: greater.u,
            p_patched_faster: greater.p_value,
            p_original_faster: less.p_value,
            method: format!("{:?}", greater.method_used).to_lowercase(),
        }),
        effect: Some(EffectRecord {
            median_ratio: ci.estimate,
            ratio_ci: [ci.lower, ci.upper],
            cliffs_delta: delta,
        }),
        original: o.to_vec(),
        patched: p.to_vec(),
        own: None,
    })
}
