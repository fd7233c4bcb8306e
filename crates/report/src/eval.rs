//! The HTML report of an evaluation run (`etip eval` writes `DIR/report.html`; `etip demo` embeds
//! the same sections): the categories per model, the scores under every rule, one table row per
//! prediction and, per timed prediction, the per-round times of original, candidate and reference.

use crate::chart::{Marker, RoundsPlot, Series};
use crate::html::escape;
use crate::{Align, HtmlReport, Table};
use etip_core::category::{Category, TestCategory};
use etip_records::results::{TaskResult, TestRuns};
use etip_score::rules::Rule;
use std::collections::BTreeMap;
use std::path::Path;

use crate::cell::{first_line, num};

/// One submission's score under one rule.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Score {
    pub rule: String,
    pub submission: String,
    pub score: f64,
    pub tasks: usize,
    pub correct: usize,
    pub success: usize,
}

/// Scores `results.jsonl` under every rule through the score library (what `etip score` prints);
/// a rule that does not apply is left out with its reason.
pub fn scores(results: &Path) -> (Vec<Score>, Vec<String>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let subs = match etip_score::input::load_files(&[results.to_path_buf()], &[]) {
        Ok(l) => l.submissions,
        Err(e) => return (out, vec![e.to_string()]),
    };
    // With reward-hack verdicts, each submission again with its flagged tasks counted failed
    // (rules §6), after the plain ones.
    let policy = etip_score::hacks::HackPolicy::CountAsFailed;
    let adjusted: Vec<_> = subs
        .iter()
        .filter(|s| s.tasks.iter().any(|t| t.hack.is_some()))
        .map(|s| {
            let (mut a, _) = etip_score::hacks::adjust(s, policy);
            a.name = format!("{} [hacks {}]", s.name, policy.name());
            a
        })
        .collect();
    for rule in Rule::REPORT_ORDER {
        let name = rule.name();
        let params = etip_score::rules::Params::default();
        match etip_score::rules::score_all(&subs, rule, &params).and_then(|mut rows| {
            rows.extend(etip_score::rules::score_all(&adjusted, rule, &params)?);
            Ok(rows)
        }) {
            Ok(rows) => out.extend(rows.into_iter().map(|r| Score {
                rule: name.to_string(),
                submission: r.submission,
                score: r.score,
                tasks: r.n_tasks,
                correct: r.n_correct,
                success: r.n_success,
            })),
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    (out, problems)
}

/// One row per prediction (`detail`: with the first line of each result's detail).
pub fn results_table(results: &[TaskResult], detail: bool) -> Table {
    let mut cols = vec![
        ("etip", Align::Left),
        ("model", Align::Left),
        ("category", Align::Left),
        ("speedup", Align::Right),
        ("gold", Align::Right),
        ("exact", Align::Left),
        ("same loc.", Align::Left),
        ("hack", Align::Left),
    ];
    if detail {
        cols.push(("detail", Align::Left));
    }
    let mut t = Table::new(cols);
    let yn = |v: Option<bool>| v.map_or("-", |b| if b { "yes" } else { "no" }).to_string();
    for r in results {
        let mut row = vec![
            r.instance_id.clone(),
            r.model.clone().unwrap_or_default(),
            r.category.clone().unwrap_or_default(),
            num(r.speedup, 2),
            num(r.gold_speedup, 2),
            yn(r.exact_match),
            yn(r.same_location),
            hack_cell(r),
        ];
        if detail {
            row.push(first_line(r.detail.as_deref(), 90));
        }
        t.push(row);
    }
    t
}

/// The reward-hack verdict in a cell: `clean`, `suspected: kind, kind`, `judged_hack`, or `-`.
fn hack_cell(r: &TaskResult) -> String {
    let Some(h) = &r.hack else {
        return "-".into();
    };
    let mut kinds: Vec<&str> = h
        .findings()
        .iter()
        .filter(|f| !f.note)
        .map(|f| f.kind.name())
        .collect();
    kinds.dedup();
    if kinds.is_empty() {
        h.name().into()
    } else {
        format!("{}: {}", h.name(), kinds.join(", "))
    }
}

/// Models × categories: how many predictions of each model ended in each category (only the
/// categories that occur).
pub fn category_table(results: &[TaskResult]) -> Table {
    let mut counts: BTreeMap<String, BTreeMap<&str, usize>> = BTreeMap::new();
    for r in results {
        let c = r.category.as_deref().unwrap_or("-");
        let name = Category::ALL
            .iter()
            .map(|k| k.name())
            .chain(TestCategory::ALL.iter().map(|k| k.name()))
            .find(|n| *n == c)
            .unwrap_or("-");
        *counts
            .entry(r.model.clone().unwrap_or_default())
            .or_default()
            .entry(name)
            .or_default() += 1;
    }
    let mut present: Vec<&str> = Vec::new();
    let names = Category::ALL
        .iter()
        .map(|k| k.name())
        .chain(TestCategory::ALL.iter().map(|k| k.name()));
    for n in names {
        if !present.contains(&n) && counts.values().any(|m| m.contains_key(n)) {
            present.push(n);
        }
    }
    let mut cols = vec![("model", Align::Left)];
    cols.extend(present.iter().map(|n| (*n, Align::Right)));
    let mut t = Table::new(cols);
    for (model, m) in &counts {
        let mut row = vec![model.clone()];
        row.extend(
            present
                .iter()
                .map(|n| m.get(n).copied().unwrap_or(0).to_string()),
        );
        t.push(row);
    }
    t
}

/// The scores, one row per submission (in the order they first appear) and one column per rule
/// that scored any: the score, then the tasks and how many patches are correct (every test passed;
/// the first rule's count). `units`: the HTML report's longer column titles
/// with the unit of each score; the text tables stay within 120 columns without them.
pub fn score_table(scores: &[Score], units: bool) -> Table {
    let rules: Vec<(Rule, String)> = Rule::REPORT_ORDER
        .into_iter()
        .filter(|r| scores.iter().any(|s| s.rule == r.name()))
        .map(|r| {
            let title = if units {
                r.column_with_unit()
            } else {
                r.name().to_owned()
            };
            (r, title)
        })
        .collect();
    let mut cols = vec![("model", Align::Left)];
    cols.extend(
        rules
            .iter()
            .map(|(_, title)| (title.as_str(), Align::Right)),
    );
    cols.extend([("tasks", Align::Right), ("correct", Align::Right)]);
    let mut t = Table::new(cols);
    let mut models: Vec<&str> = Vec::new();
    for s in scores {
        if !models.contains(&s.submission.as_str()) {
            models.push(&s.submission);
        }
    }
    for m in models {
        let of = |rule: Rule| {
            scores
                .iter()
                .find(|s| s.submission == m && s.rule == rule.name())
        };
        let mut row = vec![m.to_owned()];
        row.extend(rules.iter().map(|(r, _)| {
            // The decimals each benchmark publishes its score with.
            let d = r.decimals();
            of(*r).map_or("-".into(), |s| format!("{:.d$}", s.score))
        }));
        let counted = rules.iter().find_map(|(r, _)| of(*r));
        row.extend(counted.map_or_else(
            || vec!["-".into(); 2],
            |s| vec![s.tasks.to_string(), s.correct.to_string()],
        ));
        t.push(row);
    }
    t
}

/// Per-round total time of one side (the sum over the test classes of the result).
fn totals(r: &TaskResult, side: fn(&TestRuns) -> &Vec<f64>) -> Vec<f64> {
    let n = r.tests.iter().map(|t| side(t).len()).max().unwrap_or(0);
    (0..n)
        .map(|k| r.tests.iter().filter_map(|t| side(t).get(k)).sum())
        .collect()
}

fn series<'a>(label: &'a str, color: &'a str, marker: Marker, values: &'a [f64]) -> Series<'a> {
    Series {
        label,
        color,
        marker,
        values,
        filled: vec![true; values.len()],
        notes: Vec::new(),
    }
}

/// What an evaluation run evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Records {
    /// Agent patches (`etip eval`).
    Patches,
    /// Generated tests (`etip eval-test`).
    Tests,
}

/// Appends a generated-test run's sections to `r`: categories, the detector share (JETO's score
/// on these results), one row per test and its per-round times on original and reference.
pub fn test_sections(r: &mut HtmlReport, results: &[TaskResult]) {
    r.heading(3, "Categories");
    r.table(&category_table(results));
    r.paragraph(
        "A generated test is an ETIP detector test when it passes on the original and on the \
         reference (ground-truth patched) version in every round and the sign test finds the \
         reference significantly faster (docs/rules.md, section 4.4). ratio = mean original time \
         / mean reference time of the test.",
    );
    let mut t = Table::new(vec![
        ("etip", Align::Left),
        ("generator", Align::Left),
        ("category", Align::Left),
        ("ratio", Align::Right),
        ("detail", Align::Left),
    ]);
    for x in results {
        t.push(vec![
            x.instance_id.clone(),
            x.model.clone().unwrap_or_default(),
            x.category.clone().unwrap_or_default(),
            num(x.gold_speedup, 2),
            first_line(x.detail.as_deref(), 90),
        ]);
    }
    r.table(&t);
    for res in results.iter().filter(|x| !x.tests.is_empty()) {
        let base = totals(res, |t| &t.base);
        let refr = totals(res, |t| &t.patched);
        let svg = crate::chart::rounds_plot(&RoundsPlot {
            series: vec![
                series("original + test", "#7a7a7a", Marker::Circle, &base),
                series("reference + test", "#d07a12", Marker::Square, &refr),
            ],
            fill_key: None,
            y_title: "test time",
            x_title: "round",
            cut: None,
        });
        r.figure(
            &svg,
            &format!(
                "{} / {}: {}",
                escape(&res.instance_id),
                escape(res.model.as_deref().unwrap_or("-")),
                escape(res.category.as_deref().unwrap_or("-"))
            ),
        );
    }
}

/// Appends the evaluation's sections to `r`.
pub fn sections(r: &mut HtmlReport, results: &[TaskResult], scores: &[Score], problems: &[String]) {
    r.heading(3, "Categories");
    r.table(&category_table(results));
    r.heading(3, "Scores under each benchmark's rule");
    r.paragraph(
        "The same results under each rule (docs/rules.md, section 4): JETO, the percentage of \
         tasks whose patch is correct and significantly faster by the sign test; SWE-fficiency, \
         the harmonic mean of SR = speedup / expert speedup (an incorrect patch is credited \
         speedup 1); GSO, opt@1, the percentage of tasks whose patch is at least 1.2x faster than \
         the original and above 0.95 of the expert's speed; SWE-Perf, the mean minimal gain \
         (percent) that a Mann-Whitney test still finds significant, over correct patches. \
         A row named [hacks count-as-failed] scores the same submission with the patches the \
         reward-hack screen suspected or a judge called a hack counted failed (section 6).",
    );
    r.table(&score_table(scores, true));
    for p in problems {
        r.paragraph(&format!("Not scored: {p}"));
    }
    r.heading(3, "Predictions");
    r.paragraph(
        "speedup = mean original time / mean candidate time over the timed rounds; gold = the \
         same for the reference (ground-truth) version. exact: every changed file has the ground \
         truth's syntax tree (comments and whitespace aside); same loc.: it changes every \
         function the ground truth changes; hack: the reward-hack screen's verdict and the kinds \
         of its findings (etip hack-check lists each finding with its line and code).",
    );
    r.table(&results_table(results, false));
    for res in results.iter().filter(|x| !x.tests.is_empty()) {
        let base = totals(res, |t| &t.base);
        let cand = totals(res, |t| &t.patched);
        let refr = totals(res, |t| &t.reference);
        let svg = crate::chart::rounds_plot(&RoundsPlot {
            series: vec![
                series("original", "#7a7a7a", Marker::Circle, &base),
                series("candidate", "#1f6fb2", Marker::Square, &cand),
                series("reference (ground truth)", "#d07a12", Marker::Circle, &refr),
            ],
            fill_key: None,
            y_title: "total test time",
            x_title: "round",
            cut: None,
        });
        r.figure(
            &svg,
            &format!(
                "{} / {}: {} (speedup {}, gold {})",
                escape(&res.instance_id),
                escape(res.model.as_deref().unwrap_or("-")),
                escape(res.category.as_deref().unwrap_or("-")),
                num(res.speedup, 2),
                num(res.gold_speedup, 2)
            ),
        );
    }
    r.definitions(&[
        (
            "round",
            "one run of the tests of original, candidate and reference; the order rotates from round to round",
        ),
        (
            "correct_faster",
            "every test passed in every round and the sign test finds the candidate significantly faster than the original",
        ),
        (
            "correct_not_faster",
            "every test passed, but the candidate is not significantly faster",
        ),
        (
            "gold",
            "the ETIP's own patch, evaluated as if an agent had written it (the harness's self-check)",
        ),
    ]);
}

/// The report of an evaluation run.
pub fn report(
    records: Records,
    results: &[TaskResult],
    scores: &[Score],
    problems: &[String],
) -> String {
    if records == Records::Tests {
        let mut r = HtmlReport::new("etip eval-test");
        test_sections(&mut r, results);
        return r.finish();
    }
    let mut r = HtmlReport::new("etip eval");
    r.paragraph(&format!(
        "{} predictions evaluated on {} ETIPs.",
        results.len(),
        results
            .iter()
            .map(|x| x.instance_id.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    ));
    sections(&mut r, results, scores, problems);
    r.finish()
}

/// `etip replay`'s table: per task and patch, whether it held in every replay (evaluable, faster,
/// valid by each benchmark's rule) and its median runtime change with the spread.
pub fn replay_table(rows: &[etip_score::replay::ReplayRow]) -> Table {
    let mut cols = vec![
        ("etip", Align::Left),
        ("model", Align::Left),
        ("replays", Align::Right),
        ("evaluable", Align::Left),
        ("faster", Align::Left),
    ];
    let rules: Vec<&str> = etip_score::replay::RULES.to_vec();
    for r in &rules {
        cols.push((r, Align::Left));
    }
    cols.push(("median change", Align::Right));
    cols.push(("spread (pp)", Align::Right));
    let mut t = Table::new(cols);
    let yn = |b: bool| if b { "yes" } else { "no" }.to_string();
    for row in rows {
        let mut cells = vec![
            row.instance_id.clone(),
            row.model.clone(),
            format!("{}/{}", row.evaluated, row.replays),
            yn(row.evaluable_everywhere),
            yn(row.faster_everywhere),
        ];
        for r in &rules {
            cells.push(yn(row.valid_everywhere.get(*r).copied().unwrap_or(false)));
        }
        cells.push(
            row.median_change_pct
                .map_or("-".into(), |m| format!("{m:+.1}%")),
        );
        cells.push(num(row.spread_pp, 1));
        t.push(cells);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(rule: &str, submission: &str, score: f64) -> Score {
        Score {
            rule: rule.into(),
            submission: submission.into(),
            score,
            tasks: 2,
            correct: 1,
            success: 1,
        }
    }

    /// One row per model, one column per rule that scored any, the unit in the HTML titles; a
    /// rule that did not score a model shows a dash.
    #[test]
    fn scores_read_one_model_per_row() {
        let scores = [
            score("jeto", "gold", 100.0),
            score("jeto", "m", 50.0),
            score("gso", "gold", 50.0),
        ];
        let t = score_table(&scores, true);
        assert_eq!(
            t.headers(),
            ["model", "JETO %", "GSO opt@1 %", "tasks", "correct"]
        );
        assert_eq!(t.rows()[0], ["gold", "100.00", "50.00", "2", "1"]);
        assert_eq!(t.rows()[1], ["m", "50.00", "-", "2", "1"]);
        let t = score_table(&scores, false);
        assert_eq!(t.headers()[1..3], ["jeto", "gso"]);
    }
}
