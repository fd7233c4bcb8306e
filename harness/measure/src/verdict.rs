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
use etip_records::measure::ClassRecord;
use etip_stats::{
    Alternative, MwuMethod, SeqDecision, SequentialDesign, SignTestConfig, TimerRule, median,
};
use etip_stats::{Direction, EffectRecord, MannWhitneyRecord, SignTestRecord};
use std::collections::{BTreeMap, BTreeSet};

/// How verdicts are computed.
#[derive(Debug, Clone)]
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

/// The per-class series of the timed rounds: name → (original times, patched times), for classes
/// that ran and passed in every round of both versions; the others with the reason.
pub struct Series {
    pub classes: BTreeMap<String, (Vec<f64>, Vec<f64>)>,
    pub excluded: BTreeMap<String, String>,
    pub resolution: f64,
}

/// Collects the per-class series from the timed rounds.
pub fn series(rounds: &[RoundResult]) -> Series {
    let timed: Vec<&RoundResult> = rounds.iter().filter(|r| !r.summary.warmup).collect();
    let mut names = BTreeSet::new();
    let mut resolution: f64 = 0.0;
    for r in &timed {
        for s in &r.sides {
            resolution = resolution.max(s.resolution);
            for c in &s.classes {
                names.insert(c.name.clone());
            }
        }
    }
    let mut classes = BTreeMap::new();
    let mut excluded = BTreeMap::new();
    'class: for name in names {
        let mut o = Vec::with_capacity(timed.len());
        let mut p = Vec::with_capacity(timed.len());
        for r in &timed {
            for (side, out) in [(&r.sides[0], &mut o), (&r.sides[1], &mut p)] {
                match side.classes.iter().find(|c| c.name == name) {
                    Some(c) if c.passed => out.push(c.secs),
                    Some(_) => {
                        excluded.insert(name, "failed".to_string());
                        continue 'class;
                    }
                    None => {
                        excluded.insert(name, "missing_in_some_round".to_string());
                        continue 'class;
                    }
                }
            }
        }
        classes.insert(name, (o, p));
    }
    Series {
        classes,
        excluded,
        resolution,
    }
}

/// The verdicts of one measured ETIP: the classes (eligible first in name order, then the
/// excluded ones) and the overall verdict over per-round totals of the eligible classes.
pub fn verdicts(
    rounds: &[RoundResult],
    cfg: &VerdictConfig,
) -> Result<(Vec<ClassRecord>, Option<ClassRecord>), etip_stats::StatsError> {
    let s = series(rounds);
    let mut out = Vec::new();
    let mut totals: Option<(Vec<f64>, Vec<f64>)> = None;
    for (name, (o, p)) in &s.classes {
        if o.is_empty() {
            continue;
        }
        if median(o) < cfg.min_class_secs && median(p) < cfg.min_class_secs {
            out.push(ClassRecord {
                name: name.clone(),
                eligible: false,
                excluded: Some("too_fast".into()),
                sign_test: None,
                mann_whitney: None,
                effect: None,
                original: o.clone(),
                patched: p.clone(),
            });
            continue;
        }
        let (to, tp) = totals.get_or_insert_with(|| (vec![0.0; o.len()], vec![0.0; o.len()]));
        for k in 0..o.len() {
            to[k] += o[k];
            tp[k] += p[k];
        }
        out.push(judge(name, o, p, s.resolution, cfg)?);
    }
    for (name, why) in &s.excluded {
        out.push(ClassRecord {
            name: name.clone(),
            eligible: false,
            excluded: Some(why.clone()),
            sign_test: None,
            mann_whitney: None,
            effect: None,
            original: Vec::new(),
            patched: Vec::new(),
        });
    }
    let overall = match totals {
        Some((o, p)) => Some(judge("overall", &o, &p, s.resolution, cfg)?),
        None => None,
    };
    Ok((out, overall))
}

fn rule(cfg: &VerdictConfig, resolution: f64) -> TimerRule {
    cfg.timer.at_resolution(resolution)
}

/// Rounds a series is judged on: all of them with fixed rounds; with a sequential design, the
/// first look at which either direction is significant, else the last look available.
fn judged_rounds(
    o: &[f64],
    p: &[f64],
    resolution: f64,
    cfg: &VerdictConfig,
) -> Result<(usize, Option<usize>), etip_stats::StatsError> {
    let Some(design) = &cfg.sequential else {
        return Ok((o.len(), None));
    };
    let mut last = None;
    for n in design.look_rounds() {
        if n > o.len() {
            break;
        }
        last = Some(n);
        let v = etip_stats::sign_test_with(&o[..n], &p[..n], &cfg.sign, rule(cfg, resolution))?;
        let hit = design.decide(n, v.wins_patched) == SeqDecision::Significant
            || design.decide(n, v.wins_original) == SeqDecision::Significant;
        if hit {
            return Ok((n, Some(n)));
        }
    }
    Ok((last.unwrap_or(o.len()), last))
}

/// Whether some eligible series is still inconclusive at the current number of rounds, so that
/// another batch may decide it (adaptive rounds).
pub fn needs_more_rounds(rounds: &[RoundResult], cfg: &VerdictConfig) -> bool {
    let Some(design) = &cfg.sequential else {
        return false;
    };
    let s = series(rounds);
    let mut totals: Option<(Vec<f64>, Vec<f64>)> = None;
    let mut open = false;
    let undecided = |o: &[f64], p: &[f64]| -> bool {
        let n = o.len();
        match etip_stats::sign_test_with(o, p, &cfg.sign, rule(cfg, s.resolution)) {
            Ok(v) => {
                design.decide(n, v.wins_patched) == SeqDecision::Continue
                    || design.decide(n, v.wins_original) == SeqDecision::Continue
            }
            Err(_) => false,
        }
    };
    for (o, p) in s.classes.values() {
        if o.is_empty() || (median(o) < cfg.min_class_secs && median(p) < cfg.min_class_secs) {
            continue;
        }
        let (to, tp) = totals.get_or_insert_with(|| (vec![0.0; o.len()], vec![0.0; o.len()]));
        for k in 0..o.len() {
            to[k] += o[k];
            tp[k] += p[k];
        }
        // A series already significant at an earlier look is settled.
        if let Ok((_, Some(n))) = judged_rounds(o, p, s.resolution, cfg)
            && is_significant_at(o, p, n, s.resolution, cfg)
        {
            continue;
        }
        open |= undecided(o, p);
    }
    if let Some((o, p)) = totals {
        let settled = matches!(judged_rounds(&o, &p, s.resolution, cfg), Ok((_, Some(n))) if is_significant_at(&o, &p, n, s.resolution, cfg));
        if !settled {
            open |= undecided(&o, &p);
        }
    }
    open
}

fn is_significant_at(o: &[f64], p: &[f64], n: usize, resolution: f64, cfg: &VerdictConfig) -> bool {
    let Some(design) = &cfg.sequential else {
        return false;
    };
    match etip_stats::sign_test_with(&o[..n], &p[..n], &cfg.sign, rule(cfg, resolution)) {
        Ok(v) => {
            design.decide(n, v.wins_patched) == SeqDecision::Significant
                || design.decide(n, v.wins_original) == SeqDecision::Significant
        }
        Err(_) => false,
    }
}

/// All verdicts of one eligible series.
fn judge(
    name: &str,
    o: &[f64],
    p: &[f64],
    resolution: f64,
    cfg: &VerdictConfig,
) -> Result<ClassRecord, etip_stats::StatsError> {
    let (n, stopped_at) = judged_rounds(o, p, resolution, cfg)?;
    let (jo, jp) = (&o[..n], &p[..n]);
    let timer = rule(cfg, resolution);
    let v = etip_stats::sign_test_with(jo, jp, &cfg.sign, timer)?;
    let dir = match &cfg.sequential {
        None => v.direction,
        Some(design) => {
            if design.decide(n, v.wins_patched) == SeqDecision::Significant {
                Direction::PatchedFaster
            } else if design.decide(n, v.wins_original) == SeqDecision::Significant {
                Direction::OriginalFaster
            } else {
                Direction::NotSignificant
            }
        }
    };
    let greater = etip_stats::mann_whitney_u(jo, jp, Alternative::Greater, MwuMethod::Auto)?;
    let less = etip_stats::mann_whitney_u(jo, jp, Alternative::Less, MwuMethod::Auto)?;
    let ci = etip_stats::paired_ratio_ci(jo, jp, 0.95, cfg.bootstrap_resamples, cfg.seed);
    let delta = etip_stats::cliffs_delta(jo, jp)?;
    Ok(ClassRecord {
        name: name.to_string(),
        eligible: true,
        excluded: None,
        sign_test: Some(SignTestRecord {
            direction: dir,
            stopped_at,
            ..v
        }),
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
    })
}
