//! `etip audit`: diagnostics that show when a leaderboard's aggregate is fragile.

use super::format::{FormatArg, num, render};
use super::{UsageError, input_error};
use anyhow::Context;
use etip_report::{Align, OutputFormat, Table};
use etip_score::audit::{self, Audit, AuditParams};
use etip_score::{clip, input, param};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Audit a leaderboard: tail weight of the harmonic mean, bounded penalty, median SR, test-failure
/// tolerance, GSO-style rescoring, ranking agreement and coverage across submissions.
///
/// Accepts the same files as `etip score`; SWE-fficiency and GSO reports may be given together, and
/// `--aliases` matches their submission names to compare the two benchmarks' rankings (every alias
/// must name a submission, and no two submissions of one benchmark may map to one model).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Result files, one submission each.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    // Numeric flags: the ranges are etip_score::param's; values starting with '-' are taken as
    // values (`--floor -1`), so that the range check reports them.
    /// Floor on SR for the harmonic mean whose tail weight is reported, in (0, 1] (0.5 gives a
    /// bounded penalty).
    #[arg(long, default_value_t = etip_score::rules::SR_FLOOR, allow_hyphen_values = true,
          value_parser = |s: &str| param::FLOOR.parse(s))]
    pub floor: f64,
    /// Raised floor of the bounded-penalty harmonic mean, in (0, 1].
    #[arg(long, default_value_t = 0.5, allow_hyphen_values = true,
          value_parser = |s: &str| param::BOUNDED_FLOOR.parse(s))]
    pub bounded_floor: f64,
    /// Count a failing patch correct when it passes at least 1 - TOLERANCE of its tests, in [0, 1].
    #[arg(long, default_value_t = 0.0001, allow_hyphen_values = true,
          value_parser = |s: &str| param::TOLERANCE.parse(s))]
    pub tolerance: f64,
    /// SR threshold of the GSO-style gate applied to SWE-fficiency outputs (> 0).
    #[arg(long, default_value_t = 0.95, allow_hyphen_values = true,
          value_parser = |s: &str| param::GSO_THRESHOLD.parse(s))]
    pub gso_threshold: f64,
    /// TOML file mapping submission names to model names: `"eval_report_x" = "x"`.
    #[arg(long, value_name = "FILE")]
    pub aliases: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: FormatArg,
    /// Also write a self-contained HTML report with plots (per-task weight, SR distribution) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// Reads an aliases file (bounded like every input; any failure to open or read it is bad input).
fn read_aliases(path: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let text = input::read_text(path).map_err(input_error)?;
    toml::from_str::<BTreeMap<String, String>>(&text).map_err(|e| {
        UsageError(format!(
            "{}: not an aliases file ({}); expected lines like \"submission name\" = \"model name\"",
            path.display(),
            clip::foreign(e.message().trim())
        ))
        .into()
    })
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let mut params = AuditParams {
        floor: args.floor,
        bounded_floor: args.bounded_floor,
        tolerance: args.tolerance,
        gso_sr_threshold: args.gso_threshold,
        aliases: BTreeMap::new(),
    };
    params.validate().map_err(input_error)?;
    if let Some(path) = &args.aliases {
        params.aliases = read_aliases(path)?;
    }
    // Refuses a call without submissions (only GSO manifests), as `etip score` does.
    let groups = input::load_grouped(&args.files).map_err(input_error)?;
    if let Some(path) = &args.aliases {
        // Checked here to name the file; audit() checks them again for library callers.
        audit::check_aliases(&groups, &params.aliases)
            .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    }
    let result = audit::audit(&groups, &params).map_err(input_error)?;
    let format = OutputFormat::from(args.format);
    let out = match format {
        OutputFormat::Json => etip_report::to_json(&result)?,
        _ => human(&result, &params, format)?,
    };
    if let Some(path) = &args.html {
        std::fs::write(path, html(&result, &params))
            .with_context(|| format!("cannot write the HTML report to {}", path.display()))?;
        tracing::info!("wrote {}", path.display());
    }
    stdout.write_all(out.as_bytes())?;
    Ok(())
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{:.1}%", 100.0 * x))
}

fn human(result: &Audit, params: &AuditParams, format: OutputFormat) -> anyhow::Result<String> {
    let mut out = String::new();
    for (i, (title, table)) in tables(result, params).iter().enumerate() {
        if table.is_empty() {
            continue;
        }
        if i > 0 && !out.is_empty() {
            out.push('\n');
        }
        match format {
            OutputFormat::Markdown => out.push_str(&format!("## {title}\n\n")),
            OutputFormat::Csv => {}
            _ => out.push_str(&format!("{title}\n")),
        }
        out.push_str(&render(table, format)?);
    }
    if matches!(format, OutputFormat::Table | OutputFormat::Markdown) {
        out.push('\n');
        out.push_str(&legend(params));
    }
    Ok(out)
}

/// What each column means, for a reader new to leaderboard audits (printed under the text tables,
/// at the top of the HTML page; the README has the same legend).
fn legend(params: &AuditParams) -> String {
    let lines = [
        "How to read these tables:".to_string(),
        "  SR (speedup ratio) = a task's speedup / the expert patch's speedup; an incorrect patch gets 1 / expert speedup.".into(),
        "  score: the benchmark's own aggregate, recomputed (SWE-fficiency: harmonic mean of SR; GSO: opt@1, percent).".into(),
        format!(
            "  hm@{}: harmonic mean of SR, each SR floored at {} (SWE-fficiency's score).",
            params.floor, params.floor
        ),
        "  worst1/5/10: share of that mean's weight carried by the 1, 5, 10 lowest-SR tasks (30% = one task decides almost a third).".into(),
        format!(
            "  hm@{}: the same mean with a floor of {} (bounded penalty: no task counts as worse than that).",
            params.bounded_floor, params.bounded_floor
        ),
        "  median SR, SR>1: the typical task's SR; tasks on which the submission beat the expert.".into(),
        format!(
            "  tolerated, hm tol {}: failing patches that pass >= 1 - {} of their tests, and the mean when they count as correct with their measured speedup.",
            params.tolerance, params.tolerance
        ),
        format!(
            "  gate SR>={}: GSO's success rule on SWE-fficiency outputs: percent of tasks correct with SR >= {}.",
            params.gso_sr_threshold, params.gso_sr_threshold
        ),
        "  opt_base (GSO): instances whose patch beats the original by a geometric-mean speedup >= 1.2, before GSO compares with the expert.".into(),
        "  Rankings: the official order against each alternative rule: Spearman's rho (1 = same order), discordant pairs out of all pairs, the largest move.".into(),
        "  Coverage: what K submissions reach together per task: correct, faster than the original, the expert's speedup (any reaches ref); the median best SR.".into(),
    ];
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn html(result: &Audit, params: &AuditParams) -> String {
    use etip_report::html::{HtmlReport, bar_chart, histogram};
    let mut report = HtmlReport::new("etip audit");
    for line in legend(params).lines() {
        report.paragraph(line.trim());
    }
    for (title, table) in tables(result, params) {
        if !table.is_empty() {
            report.heading(2, title);
            report.table(&table);
        }
    }
    let with_sr: Vec<_> = result
        .submissions
        .iter()
        .filter(|s| !s.srs.is_empty())
        .collect();
    if !with_sr.is_empty() {
        report.heading(2, "Per submission");
        let all = || with_sr.iter().flat_map(|s| s.srs.iter().copied());
        let lo = all()
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min)
            .log10()
            .floor()
            .max(-6.0);
        let hi = all().fold(1.0_f64, f64::max).log10().ceil().max(1.0);
        for s in with_sr {
            report.heading(3, &s.submission);
            report.begin_row();
            let bars: Vec<(String, f64)> = s
                .worst_tasks
                .iter()
                .map(|t| (t.instance_id.clone(), t.weight))
                .collect();
            report.figure(
                &bar_chart(&bars, true),
                &format!(
                    "Weight of the 10 heaviest tasks in the harmonic mean (floor {}); together {:.1}%",
                    s.floor,
                    100.0 * s.worst_10_share.unwrap_or(0.0)
                ),
            );
            report.figure(
                &histogram(&s.srs, lo, hi, 36, Some(1.0)),
                &format!(
                    "Distribution of SR over {} tasks (log scale; dashed: SR = 1); median {:.3}",
                    s.srs.len(),
                    s.median_sr.unwrap_or(f64::NAN)
                ),
            );
            report.end_row();
        }
    }
    report.finish()
}

fn tables(result: &Audit, params: &AuditParams) -> [(&'static str, Table); 3] {
    let floor_col = format!("hm@{}", params.floor);
    let bounded_col = format!("hm@{}", params.bounded_floor);
    let tol_col = format!("hm tol {}", params.tolerance);
    let gate_col = format!("gate SR>={}", params.gso_sr_threshold);
    let mut subs = Table::new(vec![
        ("submission", Align::Left),
        ("rule", Align::Left),
        ("score", Align::Right),
        (floor_col.as_str(), Align::Right),
        ("worst1", Align::Right),
        ("worst5", Align::Right),
        ("worst10", Align::Right),
        (bounded_col.as_str(), Align::Right),
        ("median SR", Align::Right),
        ("SR>1", Align::Right),
        ("tolerated", Align::Right),
        (tol_col.as_str(), Align::Right),
        (gate_col.as_str(), Align::Right),
        ("opt_base", Align::Right),
    ]);
    for s in &result.submissions {
        subs.push(vec![
            s.submission.clone(),
            s.rule.to_string(),
            format!("{:.prec$}", s.score, prec = s.rule.display_decimals()),
            num(s.hm, 4),
            pct(s.worst_1_share),
            pct(s.worst_5_share),
            pct(s.worst_10_share),
            num(s.hm_bounded, 4),
            num(s.median_sr, 4),
            s.n_sr_above_1.map_or("-".into(), |n| n.to_string()),
            s.n_tolerated.map_or("-".into(), |n| n.to_string()),
            num(s.hm_tolerant, 4),
            num(s.gso_gate_score, 2),
            s.opt_base.map_or("-".into(), |n| n.to_string()),
        ]);
    }
    let mut ranks = Table::new(vec![
        ("baseline", Align::Left),
        ("alternative", Align::Left),
        ("n", Align::Right),
        ("spearman", Align::Right),
        ("discordant", Align::Right),
        ("largest move", Align::Left),
    ]);
    for r in &result.rankings {
        let a = &r.agreement;
        ranks.push(vec![
            r.baseline.clone(),
            r.alternative.clone(),
            a.n.to_string(),
            num(a.spearman_rho, 3),
            format!("{}/{}", a.discordant_pairs, a.total_pairs),
            a.largest_move
                .as_ref()
                .map_or("-".into(), |m| format!("{} {} -> {}", m.item, m.from, m.to)),
        ]);
    }
    let mut cov = Table::new(vec![
        ("benchmark", Align::Left),
        ("K", Align::Right),
        ("tasks", Align::Right),
        ("any correct", Align::Right),
        ("any faster", Align::Right),
        ("any reaches ref", Align::Right),
        ("below ref", Align::Right),
        ("median best SR", Align::Right),
        ("not in all", Align::Right),
    ]);
    for c in &result.coverage {
        cov.push(vec![
            c.benchmark.into(),
            c.submissions.to_string(),
            c.tasks.to_string(),
            c.any_correct.to_string(),
            c.any_faster_than_base.to_string(),
            c.any_reaches_reference.to_string(),
            c.below_reference.to_string(),
            num(c.median_best_sr, 4),
            c.not_in_every_submission.to_string(),
        ]);
    }
    [
        ("Submissions", subs),
        ("Rankings", ranks),
        ("Coverage", cov),
    ]
}
