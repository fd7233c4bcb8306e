//! `etip score`: score submissions under a benchmark's rule. The stage is
//! [`etip_pipeline::score`]; its rows are printed here.

use super::args::{OutputArgs, SignArgs};
use super::format::{num, render};
use etip_pipeline::score::{self, ScoreConfig};
use etip_report::{Align, OutputFormat, Table};
use etip_score::hacks::HackPolicy;
use etip_score::param;
use etip_score::rules::{self, Rule, ScoreRow};
use std::io::Write;
use std::path::PathBuf;

/// Score per-task results under the rule of SWE-fficiency, GSO, SWE-Perf or JETO.
///
/// Reads SWE-fficiency eval_report_*.csv files (with the official overall_score from the .json beside
/// each), GSO report .json files (a manifest.json among them adds the official scores) and etip
/// task-result .jsonl files; one submission per file, all of one benchmark. An input file or line
/// larger than etip reads (etip_score::input::MAX_FILE_BYTES, MAX_LINE_BYTES) is refused, the error
/// naming the limit.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scoring rule.
    #[arg(long, value_parser = parse_rule)]
    pub rule: Rule,
    /// Result files, one submission each.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Submission names, one per file in order (default: the file stems).
    #[arg(long = "name", value_name = "NAME")]
    pub names: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
    // Numeric flags: the ranges are etip_score::param's; values starting with '-' are taken as
    // values (`--floor -1`), so that the range check reports them.
    /// SWE-fficiency: floor of each SR in the harmonic mean, in (0, 1].
    #[arg(long, default_value_t = rules::SR_FLOOR, allow_hyphen_values = true,
          value_parser = |s: &str| param::FLOOR.parse(s))]
    pub floor: f64,
    /// GSO rule on SWE-fficiency outputs: a task succeeds when correct and SR >= this (> 0).
    #[arg(long, default_value_t = 0.95, allow_hyphen_values = true,
          value_parser = |s: &str| param::GSO_THRESHOLD.parse(s))]
    pub gso_threshold: f64,
    /// Benchmark size N when larger than the tasks in a file (unsubmitted tasks score 0).
    #[arg(long, allow_hyphen_values = true, value_parser = param::parse_total_instances)]
    pub total_instances: Option<usize>,
    #[command(flatten)]
    pub sign: SignArgs,
    /// GSO: opt@K over runs. The inputs' submissions are grouped by model (an `etip eval` output
    /// per model and `--run-id`; GSO reports named `--name model@run`), the first K runs of each
    /// in natural order of their run ids; an instance counts when any of them is opt_commit.
    #[arg(long, value_name = "K")]
    pub k: Option<usize>,
    /// Also score each submission without the patches `etip eval`'s reward-hack screen flagged
    /// (suspected or judged a hack; rules §6), in a row after its plain score: `exclude` drops
    /// them (N shrinks), `count-as-failed` counts them incorrect.
    #[arg(long, value_name = "POLICY", value_parser = |s: &str| HackPolicy::parse(s).ok_or_else(|| format!("unknown policy {s:?}: exclude or count-as-failed")))]
    pub hacks: Option<HackPolicy>,
}

fn parse_rule(s: &str) -> Result<Rule, String> {
    s.parse()
}

impl Args {
    /// The stage's configuration.
    fn config(&self) -> ScoreConfig {
        ScoreConfig {
            rule: self.rule,
            files: self.files.clone(),
            names: self.names.clone(),
            floor: self.floor,
            gso_threshold: self.gso_threshold,
            total_instances: self.total_instances,
            min_impr: self.sign.min_impr,
            p_val: self.sign.p_val,
            k: self.k,
            conservative: self.sign.conservative,
            hacks: self.hacks,
        }
    }
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let rows = score::score(&args.config())?;
    render_rows(
        &rows,
        args.rule,
        OutputFormat::from(args.output.format),
        stdout,
    )
}

/// The rows of a `score` run, as a table of the rule's decimals or as JSON.
pub fn render_rows(
    rows: &[ScoreRow],
    rule: Rule,
    format: OutputFormat,
    stdout: &mut dyn Write,
) -> anyhow::Result<()> {
    let out = if format == OutputFormat::Json {
        etip_report::to_json(rows)?
    } else {
        let decimals = rule.decimals();
        let mut table = Table::new(vec![
            ("submission", Align::Left),
            ("rule", Align::Left),
            ("score", Align::Right),
            ("tasks", Align::Right),
            ("N", Align::Right),
            ("correct", Align::Right),
            ("success", Align::Right),
            ("official", Align::Right),
            ("match", Align::Left),
        ]);
        for r in rows {
            table.push(vec![
                r.submission.clone(),
                r.rule.to_string(),
                format!("{:.decimals$}", r.score),
                r.n_tasks.to_string(),
                r.total_instances.to_string(),
                r.n_correct.to_string(),
                r.n_success.to_string(),
                num(r.official_score, decimals),
                match r.matches_official {
                    Some(true) => "yes".into(),
                    Some(false) => "NO".into(),
                    None => "-".into(),
                },
            ]);
        }
        render(&table, format)?
    };
    stdout.write_all(out.as_bytes())?;
    Ok(())
}
