//! `etip export`: built and measured ETIPs as a dataset in SWE-bench's schema with etip's
//! performance columns (JSON lines, Parquet, a dataset card, the images). The stage is
//! [`etip_pipeline::export`]; this prints what was written and what was left out.

use super::format::{FormatArg, render};
use etip_pipeline::export::{self, ExportConfig, ExportSummary, Images, Keep};
use etip_report::{Align, OutputFormat, Table};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum KeepArg {
    /// Executable, and significantly faster overall.
    Improved,
    /// Executable, whatever the verdict.
    Executable,
    /// Built, measured or not.
    Built,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// `etip build`'s status.jsonl.
    #[arg(long)]
    etips: PathBuf,
    /// `etip measure`'s output folder (or its measurements.jsonl): verdicts, ratios, detectors.
    #[arg(long)]
    measurements: Option<PathBuf>,
    /// `etip mine`'s candidates: the issue text (as `problem_statement`) and the classifier's
    /// answer.
    #[arg(long)]
    mined: Option<PathBuf>,
    /// The dataset's folder (tasks.jsonl, tasks.parquet, README.md, images/).
    #[arg(long)]
    out: PathBuf,
    /// Which ETIPs the dataset holds.
    #[arg(long, value_enum, default_value_t = KeepArg::Improved)]
    keep: KeepArg,
    /// `save` (one `docker save` archive per environment layer under images/), `none`, or
    /// `push=HOST[:PORT][/PATH]` (tag under that registry and push).
    #[arg(long, default_value = "save", value_parser = parse_images)]
    images: Images,
    /// `table` (default) lists the ETIPs; `json` prints the whole summary.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    output_format: FormatArg,
}

fn parse_images(s: &str) -> Result<Images, String> {
    match s {
        "save" => Ok(Images::Save),
        "none" => Ok(Images::None),
        _ => match s.strip_prefix("push=") {
            Some(r) if !r.trim().is_empty() && !r.contains(char::is_whitespace) => {
                Ok(Images::Push(r.to_string()))
            }
            _ => Err(format!(
                "{s:?}: `save`, `none` or `push=REGISTRY` (e.g. push=localhost:5000/etip)"
            )),
        },
    }
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let cfg = ExportConfig {
        etips: args.etips,
        measurements: args.measurements,
        mined: args.mined,
        out: args.out,
        keep: match args.keep {
            KeepArg::Improved => Keep::Improved,
            KeepArg::Executable => Keep::Executable,
            KeepArg::Built => Keep::Built,
        },
        images: args.images,
    };
    let summary = export::export(&cfg)?;
    print(&summary, args.output_format, stdout)
}

fn print(s: &ExportSummary, format: FormatArg, stdout: &mut dyn Write) -> anyhow::Result<()> {
    if OutputFormat::from(format) == OutputFormat::Json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(s)?)?;
        return Ok(());
    }
    let mut t = Table::new(vec![
        ("ETIP", Align::Left),
        ("repo", Align::Left),
        ("speedup", Align::Right),
        ("verdict", Align::Left),
        ("image", Align::Left),
    ]);
    for e in &s.exported {
        t.push(vec![
            e.id.clone(),
            e.repo.clone().unwrap_or_default(),
            e.speedup.map(|x| format!("{x:.2}x")).unwrap_or_default(),
            e.verdict.clone().unwrap_or_default(),
            e.image_export
                .clone()
                .or_else(|| e.image.clone())
                .unwrap_or_default(),
        ]);
    }
    for l in &s.left_out {
        t.push(vec![
            l.id.clone(),
            String::new(),
            String::new(),
            "left out".into(),
            l.why.clone(),
        ]);
    }
    stdout.write_all(render(&t, OutputFormat::from(format))?.as_bytes())?;
    writeln!(
        stdout,
        "\n{} ETIP(s) exported to {} ({}); {} left out",
        s.exported.len(),
        s.out,
        s.files.join(", "),
        s.left_out.len()
    )?;
    Ok(())
}
