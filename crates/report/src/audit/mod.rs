//! The audit of a leaderboard as tables ([`tables`]: one ranked board per benchmark, the runs left
//! out, the tail weight, ranking agreement, coverage), the [`glossary`] of their terms, and the
//! HTML page of `etip audit --html` ([`html`]). The binary prints the tables as text, CSV or
//! Markdown; the page shows them with figures.

mod html;

pub use html::html;

use crate::{Align, Table};
use etip_score::audit::{Audit, AuditParams};
use etip_score::board::{self, Board, Role};
use etip_score::rules::Rule;
use std::collections::BTreeMap;

/// Formats a number with `decimals` places, or `-` when absent.
fn num(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{:.1}%", 100.0 * x))
}

/// The benchmark's name as its authors write it: the title of the rule of the same name for the
/// leaderboards etip audits (SWE-fficiency, GSO); other names (etip's own results) as they are.
pub fn benchmark_title(b: &str) -> &str {
    match b.parse::<Rule>() {
        Ok(r @ (Rule::Swefficiency | Rule::Gso)) => r.title(),
        _ => b,
    }
}

/// At most `max` characters, the middle elided (names differ at both ends).
fn fit(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_owned();
    }
    let head = (max - 1) / 2 + (max - 1) % 2;
    let tail = max - 1 - head;
    let a: String = s.chars().take(head).collect();
    let b: String = s.chars().skip(n - tail).collect();
    format!("{a}…{b}")
}

/// A rank change: `+3` (three places higher than the official rank), `-2`, `=`.
fn change(d: Option<i64>) -> String {
    match d {
        Some(0) => "=".into(),
        Some(d) if d > 0 => format!("+{d}"),
        Some(d) => d.to_string(),
        None => "-".into(),
    }
}

/// Every term of the tables and figures, in the reader's words (the text legend, the HTML
/// glossary and the README use these).
pub fn glossary(params: &AuditParams) -> Vec<(String, String)> {
    let f = params.floor;
    let b = params.bounded_floor;
    let official = etip_score::rules::SR_FLOOR;
    let mut terms: Vec<(String, String)> = vec![
        ("SR".into(), "speedup ratio of a task: the submission's speedup divided by the expert patch's speedup (1 = as fast as the expert); an incorrect patch gets 1 / the expert's speedup.".into()),
        ("HM of SR".into(), format!("SWE-fficiency's official score: the harmonic mean of the tasks' SRs, each SR floored at {official}. One task with a tiny SR pulls it down hard.")),
        ("opt@1".into(), "GSO's official score: percent of tasks whose single attempt is correct and reaches at least 95% of the expert's speedup (with GSO's own speedup rules).".into()),
        (format!("HM@{b}"), format!("bounded penalty: the same harmonic mean with every SR floored at {b}, so that no task counts as worse than half the expert.")),
        ("median SR".into(), "the SR of the typical task: half the tasks are above it.".into()),
        ("HM tol".into(), format!("the official mean when failing patches that still pass at least 1 - {} of their tests count as correct with their measured speedup (test-failure tolerance).", params.tolerance)),
        (format!("gate≥{}", params.gso_sr_threshold), format!("GSO's rule applied to SWE-fficiency's outputs: percent of tasks that are correct with SR ≥ {}.", params.gso_sr_threshold)),
        ("hacks failed".into(), "the official score when the tasks whose patch etip's reward-hack screen suspected, or a judge called a hack, count as failed (etip eval's results only; rules §6).".into()),
        ("#, Δ".into(), "rank (1 = best; tied runs share the best rank) under the official score; Δ: places gained (+) or lost (-) under the rule to its left. The expert's patches (gold) and older copies of a run are not ranked.".into()),
        ("weight".into(), format!("a task's share of the harmonic mean: (1 / max(SR, {f})) divided by the sum over all tasks. Tasks with the lowest SR carry the most weight.")),
        ("worst 1/5/10".into(), "share of the weight carried by the 1, 5 and 10 heaviest tasks (30% = one task decides almost a third of the score).".into()),
        ("at floor".into(), format!("tasks whose SR is at or below the floor {f}: each carries the largest possible weight, so the order among them is arbitrary.")),
        ("Spearman ρ".into(), "agreement of two rankings of the same runs: 1 = the same order, 0 = unrelated, -1 = reversed.".into()),
        ("pairs swapped".into(), "pairs of runs that the two rankings order differently, out of all pairs.".into()),
        ("largest move".into(), "the run whose rank changes most between the two rankings (rank under the first -> under the second).".into()),
        ("coverage".into(), "what the ranked runs achieve together task by task: some run is correct; faster than the original; reaches the expert's speedup (SR ≥ 1); the median over tasks of the best SR any run reaches (0 where none is correct); tasks some run did not submit.".into()),
    ];
    if f != official {
        terms.insert(2, (format!("HM@{f}"), format!("the harmonic mean of SR with the floor {f} given by --floor instead of the official {official}; weights and tasks at the floor below use it too.")));
    }
    terms
}

/// The name of a metric key of the audit's rankings, as the tables and the glossary call it.
fn rule_label(key: &str, params: &AuditParams) -> String {
    if key.starts_with("hm_floor_") {
        let f = key.trim_start_matches("hm_floor_");
        if f == etip_score::rules::SR_FLOOR.to_string() {
            return "HM of SR".into();
        }
        return format!("HM@{f}");
    }
    match key {
        "median_sr" => "median SR".into(),
        "gso_score" => Rule::Gso.column().into(),
        "swefficiency_hm" => Rule::Swefficiency.column().into(),
        k if k.starts_with("hm_tolerance_") => "HM tol".into(),
        k if k.starts_with("gso_gate_sr_") => format!("gate≥{}", params.gso_sr_threshold),
        "hacks_count_as_failed" => "hacks failed".into(),
        k => k.into(),
    }
}

/// The ranked board of one benchmark as a table: rank, name, the official score, then each
/// alternative with the rank change.
pub fn board_table(board: &Board, name_width: usize) -> Table {
    let mut cols: Vec<(String, Align)> =
        vec![("#".into(), Align::Right), ("model".into(), Align::Left)];
    for (k, m) in board.metrics.iter().enumerate() {
        let unit = if m.unit == "%" { " %" } else { "" };
        cols.push((format!("{}{unit}", m.label), Align::Right));
        if k > 0 {
            cols.push(("Δ".into(), Align::Right));
        }
    }
    let mut t = Table::new(cols.iter().map(|(h, a)| (h.as_str(), *a)).collect());
    for r in &board.rows {
        let mut row = vec![
            r.ranks[0].map_or("-".into(), |x| x.to_string()),
            fit(&r.name, name_width),
        ];
        for (k, m) in board.metrics.iter().enumerate() {
            row.push(num(r.values[k], m.decimals));
            if k > 0 {
                row.push(change(r.change(k)));
            }
        }
        t.push(row);
    }
    t
}

/// Gold and duplicate runs of a board, with their official score.
fn unranked_table(board: &Board, name_width: usize) -> Table {
    let decimals = board.metrics.first().map_or(4, |m| m.decimals);
    let mut t = Table::new(vec![
        ("run", Align::Left),
        ("why not ranked", Align::Left),
        ("official score", Align::Right),
    ]);
    for u in &board.unranked {
        let why = match &u.role {
            Role::Gold => "the expert's patches (the yardstick)".to_owned(),
            Role::Duplicate { of } => format!("older copy of {}", fit(&board::short_name(of), 40)),
            Role::Ranked => String::new(),
        };
        t.push(vec![
            fit(&u.name, name_width),
            why,
            format!("{:.decimals$}", u.score),
        ]);
    }
    t
}

/// How much of each SR-scored run's harmonic mean a few tasks carry (ranked runs, official order).
fn weight_table(result: &Audit, boards: &[Board], name_width: usize) -> Table {
    let mut t = Table::new(vec![
        ("model", Align::Left),
        ("worst 1", Align::Right),
        ("worst 5", Align::Right),
        ("worst 10", Align::Right),
        ("at floor", Align::Right),
        ("heaviest task (SR)", Align::Left),
    ]);
    for b in boards {
        for r in &b.rows {
            let Some(s) = result
                .submissions
                .iter()
                .find(|s| s.submission == r.submission)
            else {
                continue;
            };
            if s.hm.is_none() {
                continue;
            }
            let heaviest = s.worst_tasks.first().map_or("-".into(), |w| {
                format!(
                    "{} ({})",
                    fit(&w.instance_id, name_width.saturating_add(6)),
                    crate::chart::sr_text(w.sr)
                )
            });
            t.push(vec![
                fit(&r.name, name_width),
                pct(s.worst_1_share),
                pct(s.worst_5_share),
                pct(s.worst_10_share),
                s.n_at_floor.map_or("-".into(), |n| n.to_string()),
                heaviest,
            ]);
        }
    }
    t
}

/// The tables of the report, titled: one ranked board per benchmark, the runs left out, the tail
/// weight, ranking agreement and coverage. Names are cut to `name_width` characters.
pub fn tables(
    result: &Audit,
    boards: &[Board],
    params: &AuditParams,
    name_width: usize,
) -> Vec<(String, Table)> {
    let mut out = Vec::new();
    for b in boards {
        let official = b.metrics.first().map_or(String::new(), |m| m.label.clone());
        out.push((
            format!(
                "{}: {} run{} ranked by {official} (the official score){}",
                benchmark_title(b.benchmark),
                b.rows.len(),
                if b.rows.len() == 1 { "" } else { "s" },
                if b.metrics.len() > 1 {
                    ", and by each alternative rule"
                } else {
                    ""
                }
            ),
            board_table(b, name_width),
        ));
        if !b.unranked.is_empty() {
            out.push((
                format!("{}: not ranked", benchmark_title(b.benchmark)),
                unranked_table(b, name_width),
            ));
        }
    }
    out.push((
        "Which tasks carry the harmonic mean (share of its weight)".into(),
        weight_table(result, boards, name_width),
    ));
    let display: BTreeMap<&str, &str> = result
        .submissions
        .iter()
        .map(|s| (s.submission.as_str(), s.name.as_str()))
        .collect();
    let mut ranks = Table::new(vec![
        ("official", Align::Left),
        ("alternative", Align::Left),
        ("runs", Align::Right),
        ("Spearman ρ", Align::Right),
        ("pairs swapped", Align::Right),
        ("largest move", Align::Left),
    ]);
    for r in &result.rankings {
        let a = &r.agreement;
        ranks.push(vec![
            rule_label(&r.baseline, params),
            rule_label(&r.alternative, params),
            a.n.to_string(),
            num(a.spearman_rho, 3),
            format!("{}/{}", a.discordant_pairs, a.total_pairs),
            a.largest_move.as_ref().map_or("-".into(), |m| {
                let name = display.get(m.item.as_str()).copied().unwrap_or(&m.item);
                format!("{} {} -> {}", fit(name, name_width), m.from, m.to)
            }),
        ]);
    }
    out.push(("How much the ranking moves".into(), ranks));
    let mut cov = Table::new(vec![
        ("benchmark", Align::Left),
        ("runs", Align::Right),
        ("tasks", Align::Right),
        ("any correct", Align::Right),
        ("any faster", Align::Right),
        ("any SR ≥ 1", Align::Right),
        ("none SR ≥ 1", Align::Right),
        ("median best SR", Align::Right),
        ("not in all runs", Align::Right),
    ]);
    for c in &result.coverage {
        cov.push(vec![
            benchmark_title(c.benchmark).into(),
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
    out.push(("Coverage: what the runs reach together".into(), cov));
    out
}
