//! The demo's summary (printed) and report (HTML): what each step found, read back from the files
//! the steps wrote, so the report shows exactly what a user would find in them.

use crate::cell::{first_line, num};
use crate::eval::Score;
use crate::{Align, HtmlReport, OutputFormat, ReportError, Table, render};
use etip_core::instance::{BuildOutcome, InstanceStatus};
use etip_records::measure::Measurement;
use etip_records::results::TaskResult;
use etip_stats::Direction;
use std::path::PathBuf;

/// Everything the demo's steps wrote, read back.
#[derive(Debug, serde::Serialize)]
pub struct Summary {
    /// (language, repository folder, candidates mined).
    pub repos: Vec<(String, PathBuf, usize)>,
    #[serde(skip)]
    pub statuses: Vec<InstanceStatus>,
    pub measurements: Vec<Measurement>,
    pub results: Vec<TaskResult>,
    /// The sample generated tests' results (`etip eval-test`).
    pub generated_tests: Vec<TaskResult>,
    pub scores: Vec<Score>,
    /// Rules that could not score the results, with the reason.
    pub not_scored: Vec<String>,
    pub seconds: f64,
    /// Where the versions were built and run: `docker`, or `local` (host processes, no
    /// isolation, when no engine answered).
    pub executor: String,
}

impl Summary {
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
                first_line(s.reason.as_deref(), 70),
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

    fn tests_table(&self) -> Table {
        let mut t = Table::new(vec![
            ("etip", Align::Left),
            ("generator", Align::Left),
            ("category", Align::Left),
            ("original / reference", Align::Right),
        ]);
        for r in &self.generated_tests {
            t.push(vec![
                r.instance_id.clone(),
                r.model.clone().unwrap_or_default(),
                r.category.clone().unwrap_or_default(),
                num(r.gold_speedup, 2),
            ]);
        }
        t
    }

    /// The printed summary: the four tables (JSON: the whole summary).
    pub fn text(&mut self, format: OutputFormat, seconds: f64) -> Result<String, ReportError> {
        self.seconds = seconds;
        if format == OutputFormat::Json {
            return crate::to_json(self);
        }
        let mut out = format!("Executor: {}\n", self.executor_words());
        for (title, table) in [
            ("Candidates built", self.build_table()),
            ("Measured (etip measure)", self.measure_rows()),
            (
                "Evaluated patches (etip eval)",
                crate::eval::results_table(&self.results, false),
            ),
            (
                "Scores (etip score)",
                crate::eval::score_table(&self.scores, false),
            ),
            ("Generated tests (etip eval-test)", self.tests_table()),
        ] {
            out.push_str(&format!("\n{title}\n"));
            out.push_str(&render(&table, format)?);
        }
        Ok(out)
    }
}

impl Summary {
    fn executor_words(&self) -> &'static str {
        if self.executor == "local" {
            "local (no Docker engine answered: host processes with no isolation, the Python fixture only)"
        } else {
            "docker (every version in its own container: no network, CPU, memory and process limits)"
        }
    }
}

/// The demo's HTML report: what was mined, built, measured, evaluated and scored.
pub fn html(s: &Summary) -> String {
    let mut r = HtmlReport::new("etip demo");
    r.paragraph(&format!(
        "The whole pipeline on small repositories whose history holds genuine execution time \
         improvement patches: mined, built, measured in alternated rounds, then evaluated against \
         five sample agent patches and scored under the rules of JETO, SWE-fficiency, GSO and \
         SWE-Perf. Every table below is read from the files the steps wrote in this folder. \
         Executor: {}.",
        s.executor_words()
    ));
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
    r.heading(2, "3. Evaluated patches and their scores");
    r.paragraph(
        "The ground-truth patch of each language's dedup ETIP (gold: it must come out correct, \
         faster and an exact match) and five sample agent patches for the Python dedup ETIP, \
         evaluated by etip eval and scored by etip score.",
    );
    crate::eval::sections(&mut r, &s.results, &s.scores, &s.not_scored);
    r.heading(2, "4. Generated tests");
    r.paragraph(
        "Three sample generated tests for the Python dedup ETIP, evaluated by etip eval-test: \
         each is applied to the original and to the reference version and timed there.",
    );
    crate::eval::test_sections(&mut r, &s.generated_tests);
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
