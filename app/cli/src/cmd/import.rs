//! `etip import`: a task dataset of the field (SWE-bench, SWE-fficiency, GSO) as `etips.jsonl`
//! for `etip build`. The stage is [`etip_pipeline::import`]; this prints what was written and
//! what was not.

use super::format::{FormatArg, render};
use etip_core::Language;
use etip_core::task::TaskFormat;
use etip_pipeline::InputError;
use etip_pipeline::import::{self, ImportConfig, ImportSummary};
use etip_report::{Align, OutputFormat, Table};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset's format: `swebench` (SWE-bench's schema: gold `patch`, `test_patch`,
    /// `FAIL_TO_PASS`, `PASS_TO_PASS`), `swefficiency` (also a `workload` per task,
    /// `covering_tests`, the expert `speedup`) or `gso` (`opt_commit`, performance `tests`).
    #[arg(long, value_parser = |s: &str| TaskFormat::parse(s).ok_or_else(|| format!("unknown format {s:?}: swebench, swefficiency or gso")))]
    format: TaskFormat,
    /// The dataset: JSON lines, a JSON array of tasks, or an object of tasks by id.
    file: PathBuf,
    /// A clone of the tasks' repository, or a folder of clones (`owner+name`, `owner__name`,
    /// `owner/name` or `name`, optionally `.git`); without it each task's `repo` on GitHub.
    #[arg(long)]
    source: Option<PathBuf>,
    /// Where the ETIPs go (JSON lines for `etip build --etips`).
    #[arg(long)]
    out: PathBuf,
    /// The repositories' language.
    #[arg(long, default_value = "python", value_parser = |s: &str| s.parse::<Language>().map_err(|e| e.to_string()))]
    language: Language,
    /// The benchmark's environment specs per repository and version, as JSON in the shape of
    /// SWE-bench's harness (`{"owner/name": {"1.1": {"python": "3.9", "pip_packages": [...],
    /// "install": ..., "pre_install": [...]}}}`): `etip build` honours them.
    #[arg(long)]
    specs: Option<PathBuf>,
    /// `table` (default) lists the tasks; `json` prints the whole summary.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    output_format: FormatArg,
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let cfg = ImportConfig {
        format: args.format,
        file: args.file,
        source: args.source,
        out: args.out,
        language: args.language,
        specs: args.specs,
    };
    let summary = import::import(&cfg)?;
    print(&summary, args.output_format, stdout)?;
    if !summary.refused.is_empty() {
        return Err(InputError(format!(
            "{} task(s) of {} not imported (listed above); {} written to {}",
            summary.refused.len(),
            summary.file,
            summary.written.len(),
            summary.out
        ))
        .into());
    }
    Ok(())
}

fn print(s: &ImportSummary, format: FormatArg, stdout: &mut dyn Write) -> anyhow::Result<()> {
    if OutputFormat::from(format) == OutputFormat::Json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(s)?)?;
        return Ok(());
    }
    let mut t = Table::new(vec![
        ("task", Align::Left),
        ("repo", Align::Left),
        ("patched", Align::Left),
        ("workloads", Align::Right),
        ("notes", Align::Left),
    ]);
    for w in &s.written {
        t.push(vec![
            w.id.clone(),
            w.repo.clone(),
            w.patched.to_string(),
            w.workloads.to_string(),
            w.warnings.join("; "),
        ]);
    }
    for r in &s.refused {
        t.push(vec![
            r.id.clone()
                .unwrap_or_else(|| format!("(task {})", r.index)),
            String::new(),
            "not imported".into(),
            String::new(),
            r.problem.clone(),
        ]);
    }
    stdout.write_all(render(&t, OutputFormat::from(format))?.as_bytes())?;
    writeln!(
        stdout,
        "\n{} of {} task(s) written to {} ({}); build them with `etip build --etips {}`",
        s.written.len(),
        s.written.len() + s.refused.len(),
        s.out,
        s.format,
        s.out
    )?;
    Ok(())
}
