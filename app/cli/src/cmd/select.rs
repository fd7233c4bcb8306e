//! `etip select`: run each built ETIP's tests once per version with per-test coverage and keep
//! the tests that execute the changed code (`selection.jsonl`), for `etip measure --tests
//! covering`.

use super::UsageError;
use super::format::{FormatArg, num, render};
use super::measure::{ExecutorArg, executor_for, read_statuses};
use anyhow::Context;
use etip_build::config::BuildConfig;
use etip_core::selection::{SelectionOutcome, TestSelection};
use etip_exec::executor::Resources;
use etip_report::{Align, OutputFormat, Table};
use etip_select::{SelectConfig, select_one};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The status.jsonl that `etip build` wrote.
    #[arg(long)]
    etips: PathBuf,
    /// Select only for these ETIPs (repeatable).
    #[arg(long)]
    id: Vec<String>,
    /// Output folder: selection.jsonl, <slug>/<version>.log (each run's command and output) and
    /// <slug>/<version>/ (its report and coverage data). A selection stored there with the same
    /// image and settings is reused. One run at a time writes to it.
    #[arg(long)]
    out: PathBuf,
    /// Time limit of each version's coverage run, seconds.
    #[arg(long, default_value_t = 3600)]
    timeout: u64,
    /// Memory limit of each session in MB.
    #[arg(long, default_value_t = 4096)]
    memory: u64,
    /// Where the tests run.
    #[arg(long, value_enum, default_value_t = ExecutorArg::Auto)]
    executor: ExecutorArg,
    /// The build configuration the instances were built with (test_args, Maven arguments).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Select again even when a stored selection matches.
    #[arg(long)]
    force: bool,
    /// Namespace label of the session containers.
    #[arg(long, default_value = "etip")]
    namespace: String,
    /// How to print the summary.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
}

/// The selections of a `selection.jsonl` (or of the folder holding one), by id; a later line of an
/// id replaces an earlier one.
pub fn read_selections(path: &Path) -> anyhow::Result<BTreeMap<String, TestSelection>> {
    let file = if path.is_dir() {
        path.join("selection.jsonl")
    } else {
        path.to_path_buf()
    };
    let text = super::input::read_text_capped(&file, super::input::MAX_INPUT_BYTES)?;
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let s: TestSelection = serde_json::from_str(line).map_err(|e| {
            UsageError(format!(
                "{}:{}: not a line of `etip select` ({e})",
                file.display(),
                i + 1
            ))
        })?;
        if s.schema_version != etip_core::selection::SELECTION_SCHEMA_VERSION {
            return Err(UsageError(format!(
                "{}:{}: selection schema version {} (this etip reads {})",
                file.display(),
                i + 1,
                s.schema_version,
                etip_core::selection::SELECTION_SCHEMA_VERSION
            ))
            .into());
        }
        out.insert(s.id.clone(), s);
    }
    Ok(out)
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    if args.timeout == 0 || args.memory < 64 {
        return Err(
            UsageError("--timeout must be positive and --memory at least 64 MB".into()).into(),
        );
    }
    let build = match &args.config {
        Some(p) => BuildConfig::load(p).map_err(|e| UsageError(e.to_string()))?,
        None => BuildConfig::default(),
    };
    let mut statuses = read_statuses(&args.etips)?;
    for id in &args.id {
        if !statuses.iter().any(|s| &s.id == id) {
            return Err(
                UsageError(format!("no ETIP with id {id} in {}", args.etips.display())).into(),
            );
        }
    }
    if !args.id.is_empty() {
        statuses.retain(|s| args.id.contains(&s.id));
    }
    let file = args.out.join("selection.jsonl");
    {
        use super::output::{Named, distinct};
        let mut paths = vec![Named::reads("--etips", &args.etips)];
        if let Some(c) = &args.config {
            paths.push(Named::reads("--config", c));
        }
        paths.push(Named::writes("the selection.jsonl of --out", &file));
        distinct(&paths)?;
    }
    // One run at a time writes to a folder: a second is refused at once (exit 2).
    let _lock = super::output::lock_folder(&args.out, "--out")?;
    super::output::check(&file)?;
    let mut stored = if file.exists() {
        read_selections(&file)?
    } else {
        BTreeMap::new()
    };
    let ex = executor_for(args.executor, &statuses, &args.namespace)?;
    let cfg = SelectConfig {
        build,
        resources: Resources {
            memory_mb: args.memory,
            ..Resources::default()
        },
        timeout: Duration::from_secs(args.timeout),
        work: args.out.clone(),
        force: args.force,
    };
    let bar = indicatif::ProgressBar::new(statuses.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("the template is valid"),
    );
    bar.enable_steady_tick(Duration::from_millis(500));
    let mut results = Vec::new();
    for status in &statuses {
        bar.set_message(format!("{}: coverage runs", status.id));
        let previous = stored.get(&status.id);
        let reused = previous.is_some_and(|p| {
            !args.force
                && p.outcome != SelectionOutcome::Failed
                && p.key == etip_select::selection_key(status, &cfg)
        });
        let s = select_one(ex.as_ref(), status, &cfg, previous);
        bar.inc(1);
        bar.suspend(|| {
            eprintln!(
                "{}: {}{}",
                s.id,
                s.outcome.as_str(),
                if reused {
                    " (stored selection reused)"
                } else {
                    ""
                }
            )
        });
        stored.insert(s.id.clone(), s.clone());
        results.push(s);
        // Written after every ETIP, so a later failure loses nothing.
        let mut text = String::new();
        for s in stored.values() {
            text.push_str(&serde_json::to_string(s)?);
            text.push('\n');
        }
        super::output::write(&file, &text)
            .with_context(|| format!("writing {}", file.display()))?;
    }
    bar.finish_and_clear();
    stdout.write_all(summary(&results, OutputFormat::from(args.format))?.as_bytes())?;
    eprintln!(
        "{} of {} with covering tests; selections in {}",
        results
            .iter()
            .filter(|s| s.outcome == SelectionOutcome::Selected)
            .count(),
        results.len(),
        file.display()
    );
    Ok(())
}

/// One row per ETIP: outcome, tests selected of those run, time per round with and without
/// selection (JSON: the selections themselves).
fn summary(results: &[TestSelection], format: OutputFormat) -> anyhow::Result<String> {
    if format == OutputFormat::Json {
        return Ok(etip_report::to_json(results)?);
    }
    let mut t = Table::new(vec![
        ("etip", Align::Left),
        ("outcome", Align::Left),
        ("covering", Align::Right),
        ("tests", Align::Right),
        ("secs/round all", Align::Right),
        ("secs/round selected", Align::Right),
        ("selection secs", Align::Right),
        ("detail", Align::Left),
    ]);
    for s in results {
        let sv = s.savings.as_ref();
        t.push(vec![
            s.id.clone(),
            s.outcome.as_str().into(),
            s.covering.len().to_string(),
            sv.map_or("-".into(), |v| v.tests_all.to_string()),
            num(sv.map(|v| v.secs_all), 2),
            num(sv.map(|v| v.secs_selected), 2),
            format!("{:.1}", s.secs),
            super::format::first_line(s.detail.as_deref(), 100),
        ]);
    }
    let mut out = render(&t, format)?;
    if format != OutputFormat::Json {
        out.push_str(
            "\ncovering: tests that execute the changed code in either version; tests: tests run \
             (mean of the two versions); secs/round: the tests' own times in the coverage runs \
             (Python: each test's, Java: whole classes), so compare the two columns, not with a \
             timed round\n",
        );
    }
    Ok(out)
}
