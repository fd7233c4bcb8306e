//! The HTML page of `etip audit --html`: the ranked boards, figures across runs (ranks under each
//! rule, GSO against SWE-fficiency, which tasks carry each run's harmonic mean), one row of figures
//! per run, and the glossary.

use super::{benchmark_title, board_table, glossary, tables};
use crate::chart::{WeightBar, heatmap, rank_chart, rank_scatter, sr_histogram, weight_bars};
use crate::html::{HtmlReport, Style};
use etip_score::audit::{Audit, AuditParams, SubmissionAudit};
use etip_score::board::{self, Board, Role};

/// Tasks shown in the heatmap at most (the heaviest over all runs).
const HEAT_TASKS: usize = 40;

/// The self-contained HTML page of an audit and its ranked boards.
pub fn html(result: &Audit, boards: &[Board], params: &AuditParams) -> String {
    let mut report = HtmlReport::new("etip audit: who ranks where, under which rule");
    report.paragraph(
        "Each benchmark's runs ranked by its official score and by alternative rules that a \
         reasonable benchmark could have chosen; how far the ranking moves; and which tasks carry \
         each run's score. Every term is defined in the glossary at the end.",
    );
    let mut links: Vec<(String, String)> = boards
        .iter()
        .map(|b| {
            (
                b.benchmark.to_owned(),
                benchmark_title(b.benchmark).to_owned(),
            )
        })
        .collect();
    links.push(("figures".into(), "figures across runs".into()));
    links.push(("runs".into(), "each run".into()));
    links.push(("glossary".into(), "glossary".into()));
    report.links("Sections:", &links);
    for b in boards {
        board_section(&mut report, b);
    }
    report.heading_id(2, "Figures across runs", "figures");
    for b in boards
        .iter()
        .filter(|b| b.metrics.len() > 1 && b.rows.len() > 1)
    {
        let runs: Vec<String> = b.rows.iter().map(|r| r.name.clone()).collect();
        let rules: Vec<String> = b.metrics.iter().map(|m| m.label.clone()).collect();
        let ranks: Vec<Vec<Option<usize>>> = b.rows.iter().map(|r| r.ranks.clone()).collect();
        report.figure(
            &rank_chart(&runs, &rules, &ranks),
            &format!(
                "{}: rank of each run under the official score (left) and each alternative rule. \
                 The five runs that move most are coloured.",
                benchmark_title(b.benchmark)
            ),
        );
    }
    if let Some(cross) = result.rankings.iter().find(|r| r.baseline == "gso_score") {
        let rank = |order: &[String], m: &str| {
            order
                .iter()
                .position(|x| x == m)
                .map_or(f64::NAN, |p| (p + 1) as f64)
        };
        let points: Vec<(String, f64, f64)> = cross
            .baseline_order
            .iter()
            .map(|m| {
                let y = rank(&cross.alternative_order, m);
                (m.clone(), rank(&cross.baseline_order, m), y)
            })
            .collect();
        report.figure(
            &rank_scatter(
                &points,
                "rank on GSO (opt@1)",
                "rank on SWE-fficiency (HM of SR)",
            ),
            &format!(
                "The {} models both benchmarks ran, ranked by each (dashed: the same rank on both; \
                 vermillion: two or more places apart). Spearman ρ = {}.",
                cross.agreement.n,
                cross
                    .agreement
                    .spearman_rho
                    .map_or("-".into(), |r| format!("{r:.2}"))
            ),
        );
    }
    heat_section(&mut report, result, boards);
    runs_section(&mut report, result, boards);
    let all = tables(result, boards, params, 40);
    for (title, table) in all
        .iter()
        .skip_while(|(t, _)| !t.starts_with("Which tasks"))
    {
        if !table.is_empty() {
            report.heading(2, title);
            report.table(table);
        }
    }
    report.heading_id(2, "Glossary", "glossary");
    let terms = glossary(params);
    let items: Vec<(&str, &str)> = terms
        .iter()
        .map(|(t, d)| (t.as_str(), d.as_str()))
        .collect();
    report.definitions(&items);
    report.finish()
}

/// One benchmark's ranked board (official column bold, gains blue, losses vermillion) and its
/// unranked runs.
fn board_section(report: &mut HtmlReport, b: &Board) {
    report.heading_id(
        2,
        &format!(
            "{}: {} runs ranked",
            benchmark_title(b.benchmark),
            b.rows.len()
        ),
        b.benchmark,
    );
    let table = board_table(b, 48);
    // Columns: #, model, official, then (value, Δ) per alternative.
    report.table_styled(
        &table,
        |_| None,
        |row, col| {
            if col == 2 {
                return Some(Style::Strong);
            }
            if col > 2 && (col - 2) % 2 == 0 {
                let k = (col - 2) / 2;
                return match b.rows.get(row).and_then(|r| r.change(k)) {
                    Some(d) if d > 0 => Some(Style::Original),
                    Some(d) if d < 0 => Some(Style::Patched),
                    _ => Some(Style::Muted),
                };
            }
            None
        },
    );
    for u in &b.unranked {
        let why = match &u.role {
            Role::Gold => {
                "the expert's own patches, the yardstick every SR is measured against".to_owned()
            }
            Role::Duplicate { of } => format!("an older copy of {}", board::short_name(of)),
            Role::Ranked => continue,
        };
        let decimals = b.metrics.first().map_or(4, |m| m.decimals);
        report.callout(
            Style::Muted,
            &format!(
                "Not ranked: {} ({why}); official score {:.decimals$}.",
                u.name, u.score
            ),
        );
    }
}

/// The SR-scored runs of the boards: ranked ones in official order, then the others.
fn sr_runs<'a>(result: &'a Audit, boards: &[Board]) -> Vec<&'a SubmissionAudit> {
    let mut out: Vec<&SubmissionAudit> = Vec::new();
    for b in boards {
        for r in &b.rows {
            out.extend(
                result
                    .submissions
                    .iter()
                    .find(|s| s.submission == r.submission && !s.srs.is_empty()),
            );
        }
    }
    out.extend(
        result
            .submissions
            .iter()
            .filter(|s| !s.role.is_ranked() && !s.srs.is_empty()),
    );
    out
}

/// Task × run heatmap of harmonic-mean weight over the tasks that weigh most in total.
fn heat_section(report: &mut HtmlReport, result: &Audit, boards: &[Board]) {
    let runs: Vec<&SubmissionAudit> = sr_runs(result, boards)
        .into_iter()
        .filter(|s| s.role.is_ranked())
        .collect();
    if runs.len() < 2 {
        return;
    }
    let mut total: std::collections::BTreeMap<&str, f64> = std::collections::BTreeMap::new();
    for s in &runs {
        for (task, w) in &s.weights {
            *total.entry(task.as_str()).or_default() += w;
        }
    }
    let mut tasks: Vec<(&str, f64)> = total.into_iter().collect();
    tasks.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    tasks.truncate(HEAT_TASKS);
    let cols: Vec<String> = tasks.iter().map(|t| t.0.to_owned()).collect();
    let rows: Vec<String> = runs.iter().map(|s| s.name.clone()).collect();
    let shares: Vec<Vec<f64>> = runs
        .iter()
        .map(|s| {
            let of: std::collections::HashMap<&str, f64> =
                s.weights.iter().map(|(t, w)| (t.as_str(), *w)).collect();
            cols.iter()
                .map(|c| of.get(c.as_str()).copied().unwrap_or(0.0))
                .collect()
        })
        .collect();
    let carried: f64 =
        shares.iter().map(|r| r.iter().sum::<f64>()).sum::<f64>() / runs.len() as f64;
    report.figure(
        &heatmap(&rows, &cols, &shares),
        &format!(
            "Share of each ranked run's harmonic-mean weight carried by the {} tasks that weigh \
             most over all runs (runs in official order). Together they carry {:.0}% of the \
             average run's weight: the same few tasks decide most runs' scores.",
            cols.len(),
            100.0 * carried
        ),
    );
}

/// Per run: the heaviest tasks on one scale for all runs, and the SR distribution.
fn runs_section(report: &mut HtmlReport, result: &Audit, boards: &[Board]) {
    let runs = sr_runs(result, boards);
    if runs.is_empty() {
        return;
    }
    report.heading_id(2, "Each run", "runs");
    let scale = runs
        .iter()
        .flat_map(|s| s.worst_tasks.iter().map(|w| w.weight))
        .fold(0.0_f64, f64::max);
    let all = || runs.iter().flat_map(|s| s.srs.iter().copied());
    let lo = all()
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold(f64::INFINITY, f64::min)
        .log10()
        .floor()
        .clamp(-6.0, 0.0) as i32;
    let hi = all()
        .filter(|v| v.is_finite())
        .fold(1.0_f64, f64::max)
        .log10()
        .ceil()
        .clamp(1.0, 8.0) as i32;
    for s in runs {
        let tag = match &s.role {
            Role::Ranked => String::new(),
            Role::Gold => " (expert's patches, not ranked)".into(),
            Role::Duplicate { .. } => " (older copy, not ranked)".into(),
        };
        report.heading(3, &format!("{}{tag}", s.name));
        report.begin_row();
        let bars: Vec<WeightBar> = s
            .worst_tasks
            .iter()
            .map(|t| WeightBar {
                task: t.instance_id.clone(),
                share: t.weight,
                sr: t.sr,
            })
            .collect();
        report.figure(
            &weight_bars(&bars, scale),
            &format!(
                "The 10 heaviest of {} tasks carry {:.1}% of the harmonic mean's weight; {} tasks \
                 are at the floor {} (each with the largest weight, in no particular order). \
                 Same scale for every run.",
                s.srs.len(),
                100.0 * s.worst_10_share.unwrap_or(0.0),
                s.n_at_floor.unwrap_or(0),
                s.floor
            ),
        );
        report.figure(
            &sr_histogram(&s.srs, lo, hi, 4),
            &format!(
                "SR of the {} tasks, 4 bins per decade with an edge at SR = 1; median {}.",
                s.srs.len(),
                s.median_sr.map_or("-".into(), crate::chart::sr_text)
            ),
        );
        report.end_row();
    }
}
