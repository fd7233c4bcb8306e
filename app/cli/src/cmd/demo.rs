//! `etip demo`: the whole pipeline on the embedded fixture repositories (see
//! [`etip_pipeline::demo`]); here the arguments, the output of each step as its command prints
//! it, and the summary.

use clap::Parser;
use etip_build::base::BaseImage;
use etip_pipeline::demo::{self, MineStep};
use etip_pipeline::eval::Labeler;
use etip_pipeline::{build, eval, measure};
use etip_report::OutputFormat;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::format::FormatArg;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The demo folder: created, or a folder an earlier demo made (a re-run reuses its
    /// repositories, images and stored results).
    #[arg(long, default_value = "etip-demo")]
    out: PathBuf,
    /// Timed rounds of `etip measure` and `etip eval` (warm-up excluded). 10 is the fewest at which
    /// JETO's sign test can call a 5% improvement significant with room to spare.
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    /// Which fixture repositories to use.
    #[arg(long, value_enum, default_value_t = Langs::Both)]
    lang: Langs,
    /// Let each version of an evaluation run all its rounds in one container (`etip eval
    /// --reuse-containers`): about half the evaluation time, without the guard against patches
    /// that keep results from one round to the next.
    #[arg(long)]
    reuse_containers: bool,
    /// Namespace of the demo's images and containers (`etip clean --namespace` removes them).
    #[arg(long, default_value = "etip-demo")]
    namespace: String,
    /// How to print the summary.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
}

/// The fixture repositories of a demo run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Langs {
    Both,
    Java,
    Python,
}

impl From<Langs> for demo::Langs {
    fn from(l: Langs) -> demo::Langs {
        match l {
            Langs::Both => demo::Langs::Both,
            Langs::Java => demo::Langs::Java,
            Langs::Python => demo::Langs::Python,
        }
    }
}

/// Parses a command line of one subcommand (without `etip` and the subcommand's name).
// joins: only for `mine` and `score`, until they are pipeline stages with typed configurations.
#[derive(Parser)]
#[command(no_binary_name = true)]
struct Argv<T: clap::Args> {
    #[command(flatten)]
    inner: T,
}

fn parse<T: clap::Args>(argv: &[String]) -> anyhow::Result<T> {
    Argv::<T>::try_parse_from(argv)
        .map(|a| a.inner)
        .map_err(|e| anyhow::anyhow!("the demo made a command line etip refuses: {e}"))
}

/// Each step's output as its command prints it; mining and scoring through their commands.
struct CliHost;

impl demo::Host for CliHost {
    fn mine(&self, step: &MineStep, out: &mut dyn Write) -> anyhow::Result<()> {
        super::mine::run(parse(&step.argv())?, out)
    }

    fn score(&self, rule: &str, results: &Path, out: &mut dyn Write) -> anyhow::Result<()> {
        let argv: Vec<String> = vec![
            "--rule".into(),
            rule.into(),
            "--format".into(),
            "json".into(),
            results.display().to_string(),
        ];
        super::score::run(parse(&argv)?, out)
    }

    fn labeler(&self) -> &dyn Labeler {
        &super::eval::AstLabels
    }

    fn base_image(&self, img: &BaseImage, out: &mut dyn Write) -> anyhow::Result<()> {
        super::base_image::render_outcome(img, out)
    }

    fn build(&self, outcome: &build::Outcome, out: &mut dyn Write) -> anyhow::Result<()> {
        super::build::status_lines(outcome, out)?;
        super::build::summarize(outcome)
    }

    fn measure(&self, outcome: &measure::Outcome, out: &mut dyn Write) -> anyhow::Result<()> {
        super::measure::render_outcome(outcome, OutputFormat::Table, out)
    }

    fn eval(&self, outcome: &eval::Outcome, out: &mut dyn Write) -> anyhow::Result<()> {
        super::eval::render_outcome(outcome, OutputFormat::Table, out)
    }
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let cfg = demo::Config {
        out: args.out,
        rounds: args.rounds,
        langs: args.lang.into(),
        reuse_containers: args.reuse_containers,
        namespace: args.namespace,
    };
    let outcome = demo::run(&cfg, &CliHost, &super::progress::Bar::new())?;
    let mut summary = outcome.summary;
    stdout.write_all(
        summary
            .text(args.format.into(), outcome.seconds)?
            .as_bytes(),
    )?;
    eprintln!(
        "\ndemo finished in {:.0} s; report: {}",
        outcome.seconds,
        outcome.report.display()
    );
    Ok(())
}
