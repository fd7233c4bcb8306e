//! Leaderboard diagnostics (SPEC 5): how much of an aggregate rests on a few tasks, how rankings move
//! under reasonable alternative rules, and what the submissions cover together.
//!
//! Input is the per-task results of several submissions of one or two benchmarks. For submissions whose
//! tasks carry speedup ratios (SWE-fficiency reports, etip results with speedups) it computes the tail
//! weight of the harmonic mean, a bounded-penalty mean, the median SR, a test-failure tolerance and a
//! GSO-style gate; for GSO reports, the opt counts. Rankings under these alternatives are compared with
//! the benchmark's own ranking, and GSO with SWE-fficiency where both rank the same models.

use crate::clip::quote;
use crate::error::{Result, ScoreError};
use crate::input::{Format, Loaded, Submission};
use crate::param;
use crate::rank::{Agreement, agreement};
use crate::rules::{self, Params, Rule, SR_FLOOR, harmonic_mean_floored, speedups_of};
use crate::runs::{Role, roles, short_name};
use serde::Serialize;
use std::collections::BTreeMap;

/// Parameters of the audit.
#[derive(Debug, Clone)]
pub struct AuditParams {
    /// Floor of the SR harmonic mean whose tail weight is reported [the rule's own, 0.001].
    pub floor: f64,
    /// Raised floor of the bounded-penalty mean [0.5].
    pub bounded_floor: f64,
    /// Test-failure tolerance τ: a failing patch counts as correct when its pass fraction >= 1 - τ
    /// [0.0001, i.e. 0.01 %].
    pub tolerance: f64,
    /// SR threshold of the GSO-style gate [0.95].
    pub gso_sr_threshold: f64,
    /// Submission name → canonical model name, to match submissions across benchmarks.
    pub aliases: BTreeMap<String, String>,
}

impl AuditParams {
    /// Checks every numeric parameter against its range ([`crate::param`]); the error names the
    /// parameter, its command-line flag and its range. The aliases are checked against the
    /// submissions by [`check_aliases`].
    pub fn validate(&self) -> Result<()> {
        param::FLOOR.check(self.floor)?;
        param::BOUNDED_FLOOR.check(self.bounded_floor)?;
        param::TOLERANCE.check(self.tolerance)?;
        param::GSO_THRESHOLD.check(self.gso_sr_threshold)?;
        Ok(())
    }
}

/// Checks aliases against the submissions they are meant for: every alias names a submission, and
/// no two submissions of one benchmark end up with the same model name (one of them would drop out
/// of the cross-benchmark ranking without a word).
pub fn check_aliases(groups: &[Loaded], aliases: &BTreeMap<String, String>) -> Result<()> {
    let subs: Vec<&Submission> = groups.iter().flat_map(|g| &g.submissions).collect();
    let bad = |message: String| Err(ScoreError::Aliases(message));
    if let Some(unknown) = aliases.keys().find(|k| !subs.iter().any(|s| &s.name == *k)) {
        let mut names: Vec<String> = subs.iter().take(5).map(|s| quote(&s.name)).collect();
        if subs.len() > 5 {
            names.push("…".into());
        }
        return bad(format!(
            "the alias {} = {} names no submission among the files (submissions: {}); remove \
             the line or give its file",
            quote(unknown),
            quote(&aliases[unknown]),
            names.join(", ")
        ));
    }
    let mut models: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for s in &subs {
        let model = aliases.get(&s.name).unwrap_or(&s.name);
        if let Some(first) = models.insert((s.format.benchmark(), model), &s.name) {
            return bad(format!(
                "the aliases make both {} and {} of {} the model {}; a model has one submission \
                 per benchmark, so one of them would drop out of the ranking: map them to \
                 distinct names",
                quote(first),
                quote(&s.name),
                s.format.benchmark(),
                quote(model)
            ));
        }
    }
    Ok(())
}

impl Default for AuditParams {
    fn default() -> Self {
        AuditParams {
            floor: SR_FLOOR,
            bounded_floor: 0.5,
            tolerance: 0.0001,
            gso_sr_threshold: 0.95,
            aliases: BTreeMap::new(),
        }
    }
}

/// Diagnostics of one submission. SR-based fields are `None` for submissions without speedup ratios.
#[derive(Debug, Clone, Serialize)]
pub struct SubmissionAudit {
    /// Submission name.
    pub submission: String,
    /// Display name: its alias, else the name without the report's file-name decorations
    /// ([`short_name`]); the full name where two would read the same.
    pub name: String,
    /// Ranked, or the expert's patches, or an older copy of another run (left out of rankings).
    #[serde(flatten)]
    pub role: Role,
    /// Benchmark family of its input.
    pub benchmark: &'static str,
    /// The benchmark's own rule.
    pub rule: Rule,
    /// Score under that rule.
    pub score: f64,
    /// Tasks submitted.
    pub n_tasks: usize,
    /// Patches counted correct by the benchmark.
    pub n_correct: usize,
    /// Harmonic mean of SR with the chosen floor.
    pub hm: Option<f64>,
    /// The chosen floor.
    pub floor: f64,
    /// Share of the harmonic mean's weight carried by the worst task.
    pub worst_1_share: Option<f64>,
    /// ... by the worst 5 tasks.
    pub worst_5_share: Option<f64>,
    /// ... by the worst 10 tasks.
    pub worst_10_share: Option<f64>,
    /// The 10 heaviest tasks: (instance id, SR, weight).
    pub worst_tasks: Vec<WeightedTask>,
    /// Tasks whose SR is at or below the floor: each carries the largest possible weight.
    pub n_at_floor: Option<usize>,
    /// Harmonic mean with the raised floor (bounded penalty).
    pub hm_bounded: Option<f64>,
    /// The raised floor.
    pub bounded_floor: f64,
    /// Median SR.
    pub median_sr: Option<f64>,
    /// Tasks with SR > 1 (faster than the reference).
    pub n_sr_above_1: Option<usize>,
    /// Failing patches that pass at least 1 - τ of their tests.
    pub n_tolerated: Option<usize>,
    /// Harmonic mean (rule's floor) when those count as correct with their measured speedup.
    pub hm_tolerant: Option<f64>,
    /// τ.
    pub tolerance: f64,
    /// Percentage of tasks that are correct with SR >= the gate (GSO-style rescoring).
    pub gso_gate_score: Option<f64>,
    /// GSO reports only: instances faster than base (opt_base).
    pub opt_base: Option<usize>,
    /// Tasks whose patch the reward-hack screen suspected or a judge called a hack (rules §6);
    /// `None` when no task carries a verdict (official reports).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n_hacks: Option<usize>,
    /// The score under the benchmark's own rule with those tasks counted failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score_hacks_failed: Option<f64>,
    /// Every task's SR, in input order (for plots; not serialised).
    #[serde(skip)]
    pub srs: Vec<f64>,
    /// Every task's instance id and weight in the harmonic mean, in input order (for plots; not
    /// serialised).
    #[serde(skip)]
    pub weights: Vec<(String, f64)>,
}

/// A task's weight in the harmonic mean.
#[derive(Debug, Clone, Serialize)]
pub struct WeightedTask {
    /// Instance id.
    pub instance_id: String,
    /// Its SR.
    pub sr: f64,
    /// (1/max(SR, f)) / Σ_j 1/max(SR_j, f).
    pub weight: f64,
}

/// Two rankings of the same submissions compared.
#[derive(Debug, Clone, Serialize)]
pub struct RankingComparison {
    /// The reference ranking (the benchmark's own).
    pub baseline: String,
    /// The alternative ranking.
    pub alternative: String,
    /// Submissions in order under the baseline (best first).
    pub baseline_order: Vec<String>,
    /// Submissions in order under the alternative (best first).
    pub alternative_order: Vec<String>,
    /// ρ, discordant pairs, largest move.
    #[serde(flatten)]
    pub agreement: Agreement,
}

/// What the submissions of one benchmark achieve together, task by task.
#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    /// Benchmark family.
    pub benchmark: &'static str,
    /// Submissions considered (K).
    pub submissions: usize,
    /// Distinct tasks over all submissions.
    pub tasks: usize,
    /// Tasks some submission solves correctly.
    pub any_correct: usize,
    /// Tasks some submission makes faster than base (correct, speedup > 1; GSO: opt_base).
    pub any_faster_than_base: usize,
    /// Tasks some submission brings to the reference (correct, SR >= 1; GSO: opt_commit).
    pub any_reaches_reference: usize,
    /// Tasks where even the best submission stays below the reference.
    pub below_reference: usize,
    /// Median over tasks of the best correct submission's SR (tasks nobody solves count as 0).
    pub median_best_sr: Option<f64>,
    /// Tasks missing from at least one submission.
    pub not_in_every_submission: usize,
}

/// The whole audit.
#[derive(Debug, Clone, Serialize)]
pub struct Audit {
    /// One entry per submission, in input order.
    pub submissions: Vec<SubmissionAudit>,
    /// Ranking comparisons.
    pub rankings: Vec<RankingComparison>,
    /// Coverage, one entry per benchmark.
    pub coverage: Vec<Coverage>,
}

/// The benchmark rule a submission is natively scored with.
fn native_rule(sub: &Submission) -> Rule {
    match sub.format {
        Format::GsoReport => Rule::Gso,
        Format::SwefficiencyCsv | Format::EtipJsonl => Rule::Swefficiency,
        // Measurements have no reference patch, hence no SR: their own benchmark's rule is JETO's.
        Format::EtipMeasurements => Rule::Jeto,
    }
}

fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

fn share_of_worst(weights_desc: &[f64], k: usize) -> f64 {
    weights_desc.iter().take(k).sum()
}

fn audit_submission(sub: &Submission, params: &AuditParams) -> Result<SubmissionAudit> {
    let rule = native_rule(sub);
    let rule_params = Params {
        gso_sr_threshold: params.gso_sr_threshold,
        ..Params::default()
    };
    let row = rules::score(sub, rule, &rule_params)?;
    let mut audit = SubmissionAudit {
        submission: sub.name.clone(),
        name: short_name(&sub.name),
        role: Role::Ranked,
        benchmark: sub.format.benchmark(),
        rule,
        score: row.score,
        n_tasks: sub.tasks.len(),
        n_correct: row.n_correct,
        hm: None,
        floor: params.floor,
        worst_1_share: None,
        worst_5_share: None,
        worst_10_share: None,
        worst_tasks: Vec::new(),
        n_at_floor: None,
        hm_bounded: None,
        bounded_floor: params.bounded_floor,
        median_sr: None,
        n_sr_above_1: None,
        n_tolerated: None,
        hm_tolerant: None,
        tolerance: params.tolerance,
        gso_gate_score: None,
        opt_base: row
            .details
            .get("opt_base")
            .and_then(|v| v.as_u64())
            .map(|v| v as usize),
        n_hacks: None,
        score_hacks_failed: None,
        srs: Vec::new(),
        weights: Vec::new(),
    };
    if sub.tasks.iter().any(|t| t.hack.is_some()) {
        let (failed, n) = crate::hacks::adjust(sub, crate::hacks::HackPolicy::CountAsFailed);
        audit.n_hacks = Some(n);
        audit.score_hacks_failed = Some(rules::score(&failed, rule, &rule_params)?.score);
    }
    if rule != Rule::Swefficiency {
        return Ok(audit);
    }
    let srs = crate::rules::swefficiency_ratios(sub)?;
    let inv: Vec<f64> = srs.iter().map(|&s| 1.0 / s.max(params.floor)).collect();
    let total: f64 = inv.iter().sum();
    let mut order: Vec<usize> = (0..srs.len()).collect();
    order.sort_by(|&a, &b| inv[b].total_cmp(&inv[a]).then_with(|| a.cmp(&b)));
    let weights_desc: Vec<f64> = order.iter().map(|&i| inv[i] / total).collect();
    audit.hm = Some(harmonic_mean_floored(&srs, params.floor));
    audit.worst_1_share = Some(share_of_worst(&weights_desc, 1));
    audit.worst_5_share = Some(share_of_worst(&weights_desc, 5));
    audit.worst_10_share = Some(share_of_worst(&weights_desc, 10));
    audit.worst_tasks = order
        .iter()
        .take(10)
        .map(|&i| WeightedTask {
            instance_id: sub.tasks[i].instance_id.clone(),
            sr: srs[i],
            weight: inv[i] / total,
        })
        .collect();
    audit.n_at_floor = Some(srs.iter().filter(|&&s| s <= params.floor).count());
    audit.weights = sub
        .tasks
        .iter()
        .zip(&inv)
        .map(|(t, w)| (t.instance_id.clone(), w / total))
        .collect();
    audit.hm_bounded = Some(harmonic_mean_floored(&srs, params.bounded_floor));
    let mut sorted = srs.clone();
    sorted.sort_by(f64::total_cmp);
    audit.median_sr = median(&sorted);
    audit.n_sr_above_1 = Some(srs.iter().filter(|&&s| s > 1.0).count());
    // Tolerance: a failing patch that passes >= 1 - τ of its tests is credited its measured speedup.
    let mut tolerated = 0;
    let tolerant: Vec<f64> = sub
        .tasks
        .iter()
        .zip(&srs)
        .map(|(task, &sr)| {
            let (speedup, gold) = speedups_of(task);
            let near_miss = task.correct == Some(false)
                && task
                    .pass_fraction
                    .is_some_and(|p| p >= 1.0 - params.tolerance);
            match (near_miss, speedup, gold) {
                (true, Some(s), Some(g)) => {
                    tolerated += 1;
                    s / g
                }
                _ => sr,
            }
        })
        .collect();
    audit.n_tolerated = Some(tolerated);
    audit.hm_tolerant = Some(harmonic_mean_floored(&tolerant, SR_FLOOR));
    let gate = sub
        .tasks
        .iter()
        .zip(&srs)
        .filter(|(t, sr)| t.correct == Some(true) && **sr >= params.gso_sr_threshold)
        .count();
    audit.gso_gate_score = Some(rules::round_half_even(
        100.0 * gate as f64 / sub.tasks.len() as f64,
        2,
    ));
    audit.srs = srs;
    Ok(audit)
}

fn compare(
    items: &[&SubmissionAudit],
    baseline: &str,
    alternative: &str,
    a: impl Fn(&SubmissionAudit) -> Option<f64>,
    b: impl Fn(&SubmissionAudit) -> Option<f64>,
) -> Option<RankingComparison> {
    let rows: Vec<(String, f64, f64)> = items
        .iter()
        .filter_map(|s| Some((s.submission.clone(), a(s)?, b(s)?)))
        .collect();
    if rows.len() < 2 {
        return None;
    }
    let names: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    let va: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let vb: Vec<f64> = rows.iter().map(|r| r.2).collect();
    Some(RankingComparison {
        baseline: baseline.to_owned(),
        alternative: alternative.to_owned(),
        baseline_order: order_of(&names, &va),
        alternative_order: order_of(&names, &vb),
        agreement: agreement(&names, &va, &vb),
    })
}

fn order_of(names: &[String], values: &[f64]) -> Vec<String> {
    let mut idx: Vec<usize> = (0..names.len()).collect();
    idx.sort_by(|&a, &b| {
        values[b]
            .total_cmp(&values[a])
            .then_with(|| names[a].cmp(&names[b]))
    });
    idx.into_iter().map(|i| names[i].clone()).collect()
}

/// Coverage of the ranked submissions of one benchmark (the expert's patches and older copies of a
/// run would make every task look reached).
fn coverage(loaded: &Loaded) -> Result<Option<Coverage>> {
    let names: Vec<&str> = loaded.submissions.iter().map(|s| s.name.as_str()).collect();
    let subs: Vec<&Submission> = loaded
        .submissions
        .iter()
        .zip(roles(&names))
        .filter(|(_, r)| r.is_ranked())
        .map(|(s, _)| s)
        .collect();
    let Some(first) = subs.first() else {
        return Ok(None);
    };
    if first.format == Format::EtipMeasurements {
        // No reference version was measured: coverage against the reference does not apply.
        return Ok(None);
    }
    let is_gso = first.format == Format::GsoReport;
    #[derive(Default)]
    struct Cell {
        seen: usize,
        correct: bool,
        faster: bool,
        reference: bool,
        best_sr: Option<f64>,
    }
    let mut cells: BTreeMap<&str, Cell> = BTreeMap::new();
    for sub in &subs {
        let srs = if is_gso {
            None
        } else {
            Some(crate::rules::swefficiency_ratios(sub)?)
        };
        for (i, task) in sub.tasks.iter().enumerate() {
            let cell = cells.entry(task.instance_id.as_str()).or_default();
            cell.seen += 1;
            let correct = task.correct == Some(true);
            cell.correct |= correct;
            if let Some(srs) = &srs {
                let sr = srs[i];
                let speedup = speedups_of(task).0;
                cell.faster |= correct && speedup.is_some_and(|s| s > 1.0);
                cell.reference |= correct && sr >= 1.0;
                if correct {
                    cell.best_sr = Some(cell.best_sr.map_or(sr, |b: f64| b.max(sr)));
                }
            } else if let Some(o) = &task.official {
                cell.faster |= correct && o.opt_base == Some(true);
                cell.reference |= correct && o.opt_commit == Some(true);
            }
        }
    }
    let mut best: Vec<f64> = cells.values().map(|c| c.best_sr.unwrap_or(0.0)).collect();
    best.sort_by(f64::total_cmp);
    Ok(Some(Coverage {
        benchmark: first.format.benchmark(),
        submissions: subs.len(),
        tasks: cells.len(),
        any_correct: cells.values().filter(|c| c.correct).count(),
        any_faster_than_base: cells.values().filter(|c| c.faster).count(),
        any_reaches_reference: cells.values().filter(|c| c.reference).count(),
        below_reference: cells.values().filter(|c| !c.reference).count(),
        median_best_sr: if is_gso { None } else { median(&best) },
        not_in_every_submission: cells.values().filter(|c| c.seen < subs.len()).count(),
    }))
}

/// Audits groups of submissions (one group per benchmark, as [`crate::input::load_grouped`] returns).
/// Refuses parameters out of range ([`AuditParams::validate`]), aliases that do not fit the
/// submissions ([`check_aliases`]) and a call without submissions.
pub fn audit(groups: &[Loaded], params: &AuditParams) -> Result<Audit> {
    params.validate()?;
    if groups.iter().all(|g| g.submissions.is_empty()) {
        return Err(ScoreError::NoSubmission { files: Vec::new() });
    }
    check_aliases(groups, &params.aliases)?;
    let mut submissions = Vec::new();
    let mut rankings = Vec::new();
    let mut coverages = Vec::new();
    for group in groups {
        let mut audits = group
            .submissions
            .iter()
            .map(|s| audit_submission(s, params))
            .collect::<Result<Vec<_>>>()?;
        name_and_role(&mut audits, &params.aliases);
        let refs: Vec<&SubmissionAudit> = audits.iter().filter(|a| a.role.is_ranked()).collect();
        if audits.first().is_some_and(|a| a.rule == Rule::Swefficiency) {
            let official = format!("hm_floor_{SR_FLOOR}");
            let comparisons = [
                (format!("hm_floor_{}", params.floor), 0usize),
                (format!("hm_floor_{}", params.bounded_floor), 1),
                ("median_sr".to_owned(), 2),
                (format!("hm_tolerance_{}", params.tolerance), 3),
                (format!("gso_gate_sr_{}", params.gso_sr_threshold), 4),
            ];
            for (name, which) in comparisons {
                if which == 0 && params.floor == SR_FLOOR {
                    continue;
                }
                let alt = move |s: &SubmissionAudit| match which {
                    0 => s.hm,
                    1 => s.hm_bounded,
                    2 => s.median_sr,
                    3 => s.hm_tolerant,
                    _ => s.gso_gate_score,
                };
                rankings.extend(compare(&refs, &official, &name, |s| Some(s.score), alt));
            }
        }
        if refs.iter().any(|a| a.score_hacks_failed.is_some())
            && let Some(first) = refs.first()
        {
            let official = match first.rule {
                Rule::Swefficiency => "swefficiency_hm".to_string(),
                Rule::Gso => "gso_score".to_string(),
                r => r.to_string(),
            };
            rankings.extend(compare(
                &refs,
                &official,
                "hacks_count_as_failed",
                |s| Some(s.score),
                |s| s.score_hacks_failed,
            ));
        }
        coverages.extend(coverage(group)?);
        submissions.extend(audits);
    }
    rankings.extend(cross_benchmark(&submissions, &params.aliases));
    Ok(Audit {
        submissions,
        rankings,
        coverage: coverages,
    })
}

/// Display names and roles of one benchmark's submissions: aliases first, then short names; the
/// full name for every submission whose display name another one of the group shares.
fn name_and_role(audits: &mut [SubmissionAudit], aliases: &BTreeMap<String, String>) {
    let names: Vec<&str> = audits.iter().map(|a| a.submission.as_str()).collect();
    let roles = roles(&names);
    let mut display: Vec<String> = audits
        .iter()
        .map(|a| {
            aliases
                .get(&a.submission)
                .cloned()
                .unwrap_or_else(|| short_name(&a.submission))
        })
        .collect();
    let clash: Vec<bool> = display
        .iter()
        .map(|d| display.iter().filter(|e| *e == d).count() > 1)
        .collect();
    for (i, c) in clash.into_iter().enumerate() {
        if c {
            display[i] = audits[i].submission.clone();
        }
    }
    for ((a, role), name) in audits.iter_mut().zip(roles).zip(display) {
        a.role = role;
        a.name = name;
    }
}

/// GSO against SWE-fficiency, for the models both rank (matched through the aliases).
fn cross_benchmark(
    submissions: &[SubmissionAudit],
    aliases: &BTreeMap<String, String>,
) -> Option<RankingComparison> {
    let canonical = |name: &str| {
        aliases
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_owned())
    };
    let mut by_model: BTreeMap<String, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for s in submissions.iter().filter(|s| s.role.is_ranked()) {
        let entry = by_model.entry(canonical(&s.submission)).or_default();
        match s.rule {
            Rule::Gso => entry.0 = Some(s.score),
            _ if s.benchmark == Format::SwefficiencyCsv.benchmark() => entry.1 = Some(s.score),
            _ => {}
        }
    }
    let shared: Vec<(String, f64, f64)> = by_model
        .into_iter()
        .filter_map(|(m, (g, h))| Some((m, g?, h?)))
        .collect();
    if shared.len() < 2 {
        return None;
    }
    let names: Vec<String> = shared.iter().map(|r| r.0.clone()).collect();
    let g: Vec<f64> = shared.iter().map(|r| r.1).collect();
    let h: Vec<f64> = shared.iter().map(|r| r.2).collect();
    Some(RankingComparison {
        baseline: "gso_score".into(),
        alternative: "swefficiency_hm".into(),
        baseline_order: order_of(&names, &g),
        alternative_order: order_of(&names, &h),
        agreement: agreement(&names, &g, &h),
    })
}
