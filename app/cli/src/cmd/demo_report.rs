//! The demo's summary (printed) and report (HTML): what each step found, read back from the files
//! the steps wrote, so the report shows exactly what a user would find in them.

use super::eval_html::Score;
use etip_core::instance::{BuildOutcome, InstanceStatus};
use etip_records::measure::Measurement;
use etip_records::results::TaskResult;
use etip_report::HtmlReport;
use etip_report::{Align, OutputFormat, Table};
use etip_stats::Direction;
use std::path::{Path, PathBuf};

use super::format::{num, render};

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
    /// Reads the demo folder `out`; scores the eval results under every rule.
    pub fn read(
        out: &Path,
        repos: &[(String, PathBuf)],
        executor: &str,
    ) -> anyhow::Result<Summary> {
        let mut rs = Vec::new();
        for (lang, dir) in repos {
            let n = std::fs::read_to_string(out.join("mine").join(format!("{lang}.jsonl")))
                .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
                .unwrap_or(0);
            rs.push((lang.clone(), dir.clone(), n));
        }
        let (scores, not_scored) = super::eval_html::scores(&out.join("eval/results.jsonl"));
        Ok(Summary {
            repos: rs,
            statuses: super::measure::read_statuses(&out.join("build/status.jsonl"))?,
            measurements: jsonl(&out.join("measure/measurements.jsonl"))?,
            results: jsonl(&out.join("eval/results.jsonl"))?,
            generated_tests: if out.join("eval-test/results.jsonl").is_file() {
                jsonl(&out.join("eval-test/results.jsonl"))?
            } else {
                Vec::new()
            },
            scores,
            not_scored,
            seconds: 0.0,
            executor: executor.to_string(),
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
    pub fn text(&mut self, format: OutputFormat, seconds: f64) -> anyhow::Result<String> {
        self.seconds = seconds;
        if format == OutputFormat::Json {
            return Ok(etip_report::to_json(self)?);
        }
        let mut out = format!("Executor: {}\n", self.executor_words());
        for (title, table) in [
            ("Candidates built", self.build_table()),
            ("Measured (etip measure)", self.measure_rows()),
            (
                "Evaluated patches (etip eval)",
                super::eval_html::results_table(&self.results, false),
            ),
            (
                "Scores (etip score)",
                super::eval_html::score_table(&self.scores, false),
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
    super::eval_html::sections(&mut r, &s.results, &s.scores, &s.not_scored);
    r.heading(2, "4. Generated tests");
    r.paragraph(
        "Three sample generated tests for the Python dedup ETIP, evaluated by etip eval-test: \
         each is applied to the original and to the reference version and timed there.",
    );
    super::eval_html::test_sections(&mut r, &s.generated_tests);
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
