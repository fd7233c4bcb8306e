//! `etip audit`: diagnostics that show when a leaderboard's aggregate is fragile. The stage is
//! [`etip_pipeline::audit`] (it writes the HTML page); its tables ([`etip_report::audit`]) are
//! printed here as text, CSV, Markdown or JSON.

use super::args::OutputArgs;
use super::format::render;
use etip_pipeline::audit::{self, AuditConfig, Audited};
use etip_report::OutputFormat;
use etip_report::audit::{glossary, tables};
use etip_score::audit::{Audit, AuditParams};
use etip_score::board::Board;
use etip_score::param;
use std::io::Write;
use std::path::PathBuf;

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
    #[command(flatten)]
    pub output: OutputArgs,
    /// Also write a self-contained HTML report with plots (per-task weight, SR distribution) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

impl Args {
    /// The stage's configuration.
    fn config(&self) -> AuditConfig {
        AuditConfig {
            files: self.files.clone(),
            floor: self.floor,
            bounded_floor: self.bounded_floor,
            tolerance: self.tolerance,
            gso_threshold: self.gso_threshold,
            aliases: self.aliases.clone(),
            html: self.html.clone(),
        }
    }
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let Audited {
        audit: result,
        boards,
        params,
    } = audit::audit(&args.config())?;
    let format = OutputFormat::from(args.output.format);
    let out = match format {
        OutputFormat::Json => etip_report::to_json(&serde_json::json!({
            "boards": &boards,
            "submissions": &result.submissions,
            "rankings": &result.rankings,
            "coverage": &result.coverage,
        }))?,
        _ => human(&result, &boards, &params, format)?,
    };
    stdout.write_all(out.as_bytes())?;
    Ok(())
}

fn human(
    result: &Audit,
    boards: &[Board],
    params: &AuditParams,
    format: OutputFormat,
) -> anyhow::Result<String> {
    let mut out = String::new();
    // Names are shortened to keep the text tables within 120 columns; CSV and Markdown keep them.
    let name_width = match format {
        OutputFormat::Table => 30,
        _ => usize::MAX,
    };
    for (title, table) in tables(result, boards, params, name_width) {
        if table.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        match format {
            OutputFormat::Markdown => out.push_str(&format!("## {title}\n\n")),
            OutputFormat::Csv => {}
            _ => out.push_str(&format!("{title}\n")),
        }
        out.push_str(&render(&table, format)?);
    }
    if matches!(format, OutputFormat::Table | OutputFormat::Markdown) {
        out.push('\n');
        out.push_str(&legend(params));
    }
    Ok(out)
}

/// The glossary as text under the tables, wrapped to 120 columns.
fn legend(params: &AuditParams) -> String {
    let mut out = String::from("How to read these tables:\n");
    for (term, text) in glossary(params) {
        let mut line = format!("  {term}:");
        for word in text.split_whitespace() {
            if line.chars().count() + 1 + word.chars().count() > 118 {
                out.push_str(&line);
                out.push('\n');
                line = "     ".to_owned();
            }
            line.push(' ');
            line.push_str(word);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
