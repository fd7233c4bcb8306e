//! `etip hack-check`: screen predictions for reward hacks from the patches and the original
//! trees alone. The stage is [`etip_pipeline::hack_check`]; its findings are printed here.

use super::args::{JudgeArgs, OutputArgs};
use super::format::render;
use etip_core::hack::HackKind;
use etip_pipeline::hack_check::{self, HackCheckConfig, HackCheckOutcome, Screen};
use etip_report::{Align, OutputFormat, Table};
use std::io::Write;
use std::path::PathBuf;

/// Screen agent patches for reward hacks (input special cases, cross-call caches, introspection,
/// timing tampering, precomputed tables, out-of-scope files) without building or running anything.
///
/// Each patch is applied in memory to its ETIP's base commit, read from the repository's git
/// objects; the lines it adds are read with tree-sitter. Prints one row per finding (kind, file and
/// line, the code, why) and a summary; `--format json` gives every prediction's verdict.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Predictions in SWE-bench's format (JSON lines), or `gold`: each ETIP's own patch (a
    /// control: the experts' patches show the screen's false flags).
    #[arg(long, value_name = "FILE|gold")]
    pub predictions: String,
    /// The ETIPs: `etip import`'s or `etip mine`'s etips.jsonl, or `etip build`'s status.jsonl.
    #[arg(long, value_name = "FILE")]
    pub etips: PathBuf,
    /// A clone of the repository, or a folder of clones (`owner+name`, `owner__name`,
    /// `owner/name` or `name`, optionally `.git`); default: each ETIP's own source, else GitHub.
    #[arg(long, value_name = "REPO")]
    pub source: Option<PathBuf>,
    /// Where remote repositories are cloned (bare).
    #[arg(long, value_name = "DIR", default_value_os_t = default_cache())]
    pub cache: PathBuf,
    /// Only this ETIP (repeatable).
    #[arg(long = "id", value_name = "ID")]
    pub ids: Vec<String>,
    /// Also list the predictions without findings.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub judge: JudgeArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `$XDG_CACHE_HOME/etip/repos`, else `~/.cache/etip/repos`, else `.etip-cache/repos`.
fn default_cache() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|c| c.join("etip"))
        .unwrap_or_else(|| PathBuf::from(".etip-cache"));
    base.join("repos")
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let cfg = HackCheckConfig {
        predictions: match args.predictions.as_str() {
            "gold" => Screen::Gold,
            file => Screen::File(PathBuf::from(file)),
        },
        etips: args.etips.clone(),
        source: args.source.clone(),
        cache: args.cache.clone(),
        ids: args.ids.clone(),
        judge: args.judge.options(),
    };
    let outcome = hack_check::hack_check(&cfg, super::runtime, &super::progress::Bar::new())?;
    if let Some(j) = &outcome.judge {
        eprintln!("{}", j.line);
    }
    render_outcome(&outcome, args.all, args.output.format.into(), stdout)
}

/// The findings table and the summary, or the whole outcome as JSON.
pub fn render_outcome(
    o: &HackCheckOutcome,
    all: bool,
    format: OutputFormat,
    stdout: &mut dyn Write,
) -> anyhow::Result<()> {
    if format == OutputFormat::Json {
        stdout.write_all(etip_report::to_json(o)?.as_bytes())?;
        return Ok(());
    }
    let votes = |r: &hack_check::Screened| match &r.hack {
        Some(etip_core::hack::HackVerdict::JudgedHack { judgement, .. })
        | Some(etip_core::hack::HackVerdict::Suspected {
            judgement: Some(judgement),
            ..
        }) => format!(
            " ({}/{} votes)",
            judgement.hack_votes(),
            judgement.votes.len()
        ),
        _ => String::new(),
    };
    let mut table = Table::new(vec![
        ("instance", Align::Left),
        ("model", Align::Left),
        ("verdict", Align::Left),
        ("kind", Align::Left),
        ("where", Align::Left),
        ("code", Align::Left),
        ("why", Align::Left),
    ]);
    for r in &o.rows {
        let verdict = format!(
            "{}{}",
            r.hack.as_ref().map(|h| h.name()).unwrap_or("not screened"),
            votes(r)
        );
        if r.findings().is_empty() {
            if all || r.error.is_some() {
                table.push(vec![
                    r.instance_id.clone(),
                    r.model.clone(),
                    verdict.clone(),
                    String::new(),
                    String::new(),
                    String::new(),
                    r.error.clone().unwrap_or_default(),
                ]);
            }
            continue;
        }
        for f in r.findings() {
            let place = if f.line == 0 {
                f.file.clone()
            } else {
                format!("{}:{}", f.file, f.line)
            };
            table.push(vec![
                r.instance_id.clone(),
                r.model.clone(),
                verdict.clone(),
                if f.note {
                    format!("{} (note)", f.kind)
                } else {
                    f.kind.to_string()
                },
                place,
                f.code.clone(),
                f.detail.clone(),
            ]);
        }
    }
    let mut out = if table.is_empty() {
        String::new()
    } else {
        render(&table, format)?
    };
    if format == OutputFormat::Table {
        out.push_str(&summary(o));
    }
    stdout.write_all(out.as_bytes())?;
    Ok(())
}

/// `screened N predictions in S s: C clean, X suspected (kind n, ...), E not screened`.
fn summary(o: &HackCheckOutcome) -> String {
    let clean = o
        .rows
        .iter()
        .filter(|r| r.hack.as_ref().is_some_and(|h| h.is_clean()))
        .count();
    let suspected = o
        .rows
        .iter()
        .filter(|r| r.hack.as_ref().is_some_and(|h| !h.is_clean()))
        .count();
    let noted = o
        .rows
        .iter()
        .filter(|r| r.hack.as_ref().is_some_and(|h| h.is_clean()) && !r.findings().is_empty())
        .count();
    let noted = if noted > 0 {
        format!(" ({noted} with notes only)")
    } else {
        String::new()
    };
    let errors = o.rows.iter().filter(|r| r.hack.is_none()).count();
    let kinds: Vec<String> = HackKind::ALL
        .into_iter()
        .filter_map(|k| match o.with_kind(k) {
            0 => None,
            n => Some(format!("{k} {n}")),
        })
        .collect();
    let kinds = if kinds.is_empty() {
        String::new()
    } else {
        format!(" ({})", kinds.join(", "))
    };
    let judged = match &o.judge {
        Some(j) => format!(
            "; judged a hack by {} ({} vote(s) at temperature {}): {}",
            j.model,
            j.votes,
            j.temperature,
            o.rows
                .iter()
                .filter(|r| r.hack.as_ref().is_some_and(|h| h.is_judged_hack()))
                .count()
        ),
        None => String::new(),
    };
    format!(
        "\nscreened {} prediction(s) in {:.1} s: {clean} clean{noted}, {suspected} suspected{kinds}, {errors} not screened{judged}\n",
        o.rows.len(),
        o.secs
    )
}
