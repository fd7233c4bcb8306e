//! The demo's summary (printed) and report (HTML): what each step found, read back from the files
//! the steps wrote, so the report shows exactly what a user would find in them.

use etip_core::instance::{BuildOutcome, InstanceStatus};
use etip_core::measure::{Direction, Measurement};
use etip_core::results::TaskResult;
use etip_report::HtmlReport;
use etip_report::chart::{Marker, RoundsPlot, Series};
use etip_report::html::escape;
use etip_report::{Align, OutputFormat, Table};
use std::path::{Path, PathBuf};

use super::format::{num, render};

/// One row of a rule's scores.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Score {
    pub rule: String,
    pub submission: String,
    pub score: f64,
    pub tasks: usize,
    pub correct: usize,
    pub success: usize,
}

/// Everything the demo's steps wrote, read back.
#[derive(Debug, serde::Serialize)]
pub struct Summary {
    /// (language, repository folder, candidates mined).
    pub repos: Vec<(String, PathBuf, usize)>,
    #[serde(skip)]
    pub statuses: Vec<InstanceStatus>,
    pub measurements: Vec<Measurement>,
    pub results: Vec<TaskResult>,
    pub scores: Vec<Score>,
    pub seconds: f64,
}

fn jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<Vec<T>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

impl Summary {
    /// Reads the demo folder `out` (`scores`: each rule's `etip score --format json` output).
    pub fn read(
        out: &Path,
        repos: &[(String, PathBuf)],
        scores: &[(&str, String)],
    ) -> anyhow::Result<Summary> {
        let mut rs = Vec::new();
        for (lang, dir) in repos {
            let n = std::fs::read_to_string(out.join("mine").join(format!("{lang}.jsonl")))
                .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
                .unwrap_or(0);
            rs.push((lang.clone(), dir.clone(), n));
        }
        let mut parsed = Vec::new();
        for (rule, json) in scores {
            let rows: Vec<serde_json::Value> = serde_json::from_str(json)?;
            for r in rows {
                let int = |k: &str| r[k].as_u64().unwrap_or(0) as usize;
                parsed.push(Score {
                    rule: (*rule).to_string(),
                    submission: r["submission"].as_str().unwrap_or_default().to_string(),
                    score: r["score"].as_f64().unwrap_or(f64::NAN),
                    tasks: int("n_tasks"),
                    correct: int("n_correct"),
                    success: int("n_success"),
                });
            }
        }
        Ok(Summary {
            repos: rs,
            statuses: super::measure::read_statuses(&out.join("build/status.jsonl"))?,
            measurements: jsonl(&out.join("measure/measurements.jsonl"))?,
            results: jsonl(&out.join("eval/results.jsonl"))?,
            scores: parsed,
            seconds: 0.0,
        })
    }

    fn build_table(&self) -> Table {
        let mut t = Table::new(vec![
            ("etip", Align::Left),
            ("language", Align::Left),
            ("build", Align::Left),
            ("reason", Align::Left),
        ]);
        for s in &self.statuses {
            t.push(vec![
                s.id.clone(),
                format!("{:?}", s.language).to_lowercase(),
                match s.outcome {
                    BuildOutcome::Failed => "failed".into(),
                    _ => "built".into(),
                },
                super::format::first_line(s.reason.as_deref(), 70),
            ]);
        }
        t
    }

    fn measure_rows(&self) -> Table {
        let mut t = Table::new(vec![
            ("etip", Align::Left),
            ("executable", Align::Left),
            ("classes detecting the improvement", Align::Left),
            ("patched / original time", Align::Right),
        ]);
        for m in &self.measurements {
            let detecting: Vec<&str> = m
                .classes
                .iter()
                .filter(|c| {
                    c.sign_test
                        .as_ref()
                        .is_some_and(|s| s.direction == Direction::PatchedFaster)
                })
                .map(|c| c.name.as_str())
                .collect();
            t.push(vec![
                m.id.clone(),
                if m.executable { "yes" } else { "no" }.into(),
                if detecting.is_empty() {
                    "-".into()
                } else {
                    detecting.join(", ")
                },
                num(
                    m.overall
                        .as_ref()
                        .and_then(|o| o.sign_test.as_ref())
                        .map(|s| s.median_ratio),
                    2,
                ),
            ]);
        }
        t
    }

    fn eval_table(&self) -> Table {
        let mut t = Table::new(vec![
            ("etip", Align::Left),
            ("model", Align::Left),
            ("category", Align::Left),
            ("speedup", Align::Right),
            ("gold", Align::Right),
            ("exact", Align::Left),
            ("same loc.", Align::Left),
        ]);
        let yn = |v: Option<bool>| v.map_or("-", |b| if b { "yes" } else { "no" }).to_string();
        for r in &self.results {
            t.push(vec![
                r.instance_id.clone(),
                r.model.clone().unwrap_or_default(),
                r.category.clone().unwrap_or_default(),
                num(r.speedup, 2),
                num(r.gold_speedup, 2),
                yn(r.exact_match),
                yn(r.same_location),
            ]);
        }
        t
    }

    fn score_table(&self) -> Table {
        let mut t = Table::new(vec![
            ("rule", Align::Left),
            ("submission", Align::Left),
            ("score", Align::Right),
            ("tasks", Align::Right),
            ("correct", Align::Right),
            ("success", Align::Right),
        ]);
        for s in &self.scores {
            t.push(vec![
                s.rule.clone(),
                s.submission.clone(),
                format!("{:.3}", s.score),
                s.tasks.to_string(),
                s.correct.to_string(),
                s.success.to_string(),
            ]);
        }
        t
    }

    /// The printed summary: the four tables (JSON: the whole summary).
    pub fn text(&mut self, format: OutputFormat, seconds: f64) -> anyhow::Result<String> {
        self.seconds = seconds;
        if format == OutputFormat::Json {
            return Ok(etip_report::to_json(self)?);
        }
        let mut out = String::new();
        for (title, table) in [
            ("Candidates built", self.build_table()),
            ("Measured (etip measure)", self.measure_rows()),
            ("Evaluated patches (etip eval)", self.eval_table()),
            ("Scores (etip score)", self.score_table()),
        ] {
            out.push_str(&format!("\n{title}\n"));
            out.push_str(&render(&table, format)?);
        }
        Ok(out)
    }
}

/// Per-round total time of one side of an eval result (the sum over its test classes).
fn totals(r: &TaskResult, side: fn(&etip_core::results::TestRuns) -> &Vec<f64>) -> Vec<f64> {
    let n = r.tests.iter().map(|t| side(t).len()).max().unwrap_or(0);
    (0..n)
        .map(|k| r.tests.iter().filter_map(|t| side(t).get(k)).sum())
        .collect()
}

/// The demo's HTML report: what was mined, built, measured, evaluated and scored.
pub fn html(s: &Summary) -> String {
    let mut r = HtmlReport::new("etip demo");
    r.paragraph(
        "The whole pipeline on two small repositories (Java and Python) whose history holds genuine \
         execution time improvement patches: mined, built into Docker images, measured in alternated \
         rounds, then evaluated against five sample agent patches and scored under the rules of \
         JETO, SWE-fficiency, GSO and SWE-Perf. Every table below is read from the files the steps \
         wrote in this folder.",
    );
    r.heading(2, "1. Mined and built");
    let mined: Vec<(String, String)> = s
        .repos
        .iter()
        .map(|(lang, dir, n)| {
            (
                format!("{lang} repository"),
                format!("{} — {n} candidates", dir.display()),
            )
        })
        .collect();
    r.facts(&mined);
    r.table(&s.build_table());
    r.heading(2, "2. Measured");
    r.paragraph(
        "Each version's tests run once to warm up, then in rounds that alternate which version \
         goes first; a class detects the improvement when the paired sign test says the patched \
         version is faster (at least 5% in significantly many rounds). The per-round plots and \
         every test are in the measure report.",
    );
    r.table(&s.measure_rows());
    r.links(
        "Full measure report:",
        &[("measure/report.html".into(), "measure/report.html".into())],
    );
    r.heading(2, "3. Evaluated patches");
    r.paragraph(
        "The ground-truth patch of every executable ETIP (gold: it must come out correct, faster \
         and an exact match) and five sample agent patches for the Python dedup ETIP. speedup = \
         original time / candidate time over the timed rounds; gold = original / reference. exact: \
         every changed file has the ground truth's syntax tree; same loc.: it changes the same \
         functions.",
    );
    r.table(&s.eval_table());
    for res in s.results.iter().filter(|x| !x.tests.is_empty()) {
        let base = totals(res, |t| &t.base);
        let cand = totals(res, |t| &t.patched);
        let refr = totals(res, |t| &t.reference);
        let svg = etip_report::chart::rounds_plot(&RoundsPlot {
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
                "{} / {}: {} (speedup {})",
                escape(&res.instance_id),
                escape(res.model.as_deref().unwrap_or("-")),
                escape(res.category.as_deref().unwrap_or("-")),
                num(res.speedup, 2)
            ),
        );
    }
    r.heading(2, "4. Scores");
    r.paragraph(
        "The same results under each benchmark's rule (docs/rules.md, section 4): JETO, the \
         percentage of tasks whose patch is correct and significantly faster by the sign test; \
         SWE-fficiency, the harmonic mean of SR = speedup / expert speedup (an incorrect patch is \
         credited speedup 1); GSO, opt@1, the percentage of tasks whose patch is at least 1.2x \
         faster than the original and above 0.95 of the expert's speed; SWE-Perf, the mean \
         minimal gain (percent) that a Mann-Whitney test still finds significant, over correct \
         patches.",
    );
    r.table(&s.score_table());
    r.definitions(&[
        (
            "ETIP",
            "a code change that keeps behaviour and makes the program measurably faster",
        ),
        (
            "gold",
            "the ETIP's own patch, evaluated as if an agent had written it",
        ),
        (
            "round",
            "one run of every version's tests; the order rotates from round to round",
        ),
    ]);
    r.finish()
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
