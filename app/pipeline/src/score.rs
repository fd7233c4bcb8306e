//! The `score` stage: per-task results scored under a benchmark's rule (SWE-fficiency, GSO,
//! SWE-Perf, JETO), one row per submission, or GSO's opt@K over the runs of each model.

use std::path::PathBuf;

use etip_score::hacks::{self, HackPolicy};
use etip_score::input::{self, Submission};
use etip_score::rules::{self, Params, Rule, ScoreRow};

use crate::{InputError, input_error};

/// A `score` run as the user asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreConfig {
    /// The scoring rule.
    pub rule: Rule,
    /// Result files, one submission each.
    pub files: Vec<PathBuf>,
    /// Submission names, one per file in order (default: the file stems).
    pub names: Vec<String>,
    /// SWE-fficiency: floor of each SR in the harmonic mean.
    pub floor: f64,
    /// GSO rule on SWE-fficiency outputs: the SR a correct task must reach.
    pub gso_threshold: f64,
    /// Benchmark size when larger than the tasks in a file.
    pub total_instances: Option<usize>,
    /// JETO: minimum relative improvement of a round to count as a win.
    pub min_impr: f64,
    /// JETO: p-value threshold (strict).
    pub p_val: f64,
    /// GSO: opt@K over the runs of each model.
    pub k: Option<usize>,
    /// JETO: the conservative setting; overrides `min_impr` and `p_val`.
    pub conservative: bool,
    /// Also score each submission without the patches the reward-hack screen flagged.
    pub hacks: Option<HackPolicy>,
}

impl ScoreConfig {
    /// Scores `files` under `rule` with every parameter at the rule's default (the defaults of
    /// `etip score`'s flags).
    pub fn new(rule: Rule, files: Vec<PathBuf>) -> ScoreConfig {
        let defaults = Params::default();
        ScoreConfig {
            rule,
            files,
            names: Vec::new(),
            floor: defaults.floor,
            gso_threshold: defaults.gso_sr_threshold,
            total_instances: None,
            min_impr: defaults.sign.min_impr,
            p_val: defaults.sign.p_val,
            k: None,
            conservative: false,
            hacks: None,
        }
    }
}

/// The rule's parameters of `c`, checked against their ranges (bad input otherwise).
fn params(c: &ScoreConfig) -> anyhow::Result<Params> {
    let mut params = Params {
        floor: c.floor,
        gso_sr_threshold: c.gso_threshold,
        total_instances: c.total_instances,
        ..Params::default()
    };
    params.sign.min_impr = c.min_impr;
    params.sign.p_val = c.p_val;
    if c.conservative {
        params.sign = etip_stats::SignTestConfig::conservative();
    }
    params.validate().map_err(input_error)?;
    Ok(params)
}

/// Scores every submission of `c.files` (or each model's runs, with `k`); one row each, and with
/// `hacks` a hack-adjusted row after each.
pub fn score(c: &ScoreConfig) -> anyhow::Result<Vec<ScoreRow>> {
    let params = params(c)?;
    // Refuses a call without submissions (only GSO manifests), as `audit` does.
    let loaded = input::load_files(&c.files, &c.names).map_err(input_error)?;
    if c.k.is_some() && c.rule != Rule::Gso {
        return Err(InputError(format!(
            "--k is GSO's opt@k; it does not apply to --rule {}",
            c.rule
        ))
        .into());
    }
    let plain = rows(&loaded.submissions, c, &params)?;
    let Some(policy) = c.hacks else {
        return Ok(plain);
    };
    let adjusted: Vec<(Submission, usize)> = loaded
        .submissions
        .iter()
        .map(|s| hacks::adjust(s, policy))
        .collect();
    let subs: Vec<Submission> = adjusted.iter().map(|(s, _)| s.clone()).collect();
    let mut marked = rows(&subs, c, &params)?;
    // The flagged tasks of each row: its submission's, or its model's runs' with `k`.
    let counts: Vec<usize> = match c.k {
        None => adjusted.iter().map(|(_, n)| *n).collect(),
        Some(_) => rules::runs_by_model(&loaded.submissions)
            .iter()
            .map(|(_, runs)| {
                runs.iter()
                    .map(|(_, s)| s.tasks.iter().filter(|t| hacks::flagged(t)).count())
                    .sum()
            })
            .collect(),
    };
    for (row, n) in marked.iter_mut().zip(counts) {
        hacks::mark(row, policy, n);
    }
    let mut out = Vec::with_capacity(plain.len() * 2);
    for (p, m) in plain.into_iter().zip(marked) {
        out.push(p);
        out.push(m);
    }
    Ok(out)
}

/// The rows of `subs`: one per submission, or one per model's runs with `k`.
fn rows(subs: &[Submission], c: &ScoreConfig, params: &Params) -> anyhow::Result<Vec<ScoreRow>> {
    match c.k {
        None => Ok(rules::score_all(subs, c.rule, params).map_err(input_error)?),
        Some(k) => Ok(rules::runs_by_model(subs)
            .iter()
            .map(|(model, runs)| rules::opt_at_k(model, runs, k, params))
            .collect::<Result<Vec<_>, _>>()
            .map_err(input_error)?),
    }
}
