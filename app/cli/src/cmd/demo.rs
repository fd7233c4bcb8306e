//! `etip demo`: the whole pipeline on the embedded fixture repositories (see
//! [`etip_pipeline::demo`]); here the arguments, the output of each step as its command prints
//! it, and the summary.

use etip_build::base::BaseImage;
use etip_pipeline::demo;
use etip_pipeline::mine::local::LocalMined;
use etip_pipeline::progress::PhaseProgress;
use etip_pipeline::{build, eval, measure};
use etip_report::OutputFormat;
use etip_score::rules::{Rule, ScoreRow};
use std::io::Write;
use std::path::PathBuf;

use super::args::OutputArgs;
use super::mine_args::Format;

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
    #[command(flatten)]
    output: OutputArgs,
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

/// Each step's output as its command prints it.
struct CliHost;

impl demo::Host for CliHost {
    fn phases(&self) -> Box<dyn PhaseProgress + '_> {
        Box::new(super::progress::Bars::default())
    }

    fn mine(&self, mined: &LocalMined, out: &mut dyn Write) -> anyhow::Result<()> {
        super::mine::render_mined(mined, Format::Text, out)
    }

    fn score(&self, rule: Rule, rows: &[ScoreRow], out: &mut dyn Write) -> anyhow::Result<()> {
        super::score::render_rows(rows, rule, OutputFormat::Json, out)
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
            .text(args.output.format.into(), outcome.seconds)?
            .as_bytes(),
    )?;
    eprintln!(
        "\ndemo finished in {:.0} s; report: {}",
        outcome.seconds,
        outcome.report.display()
    );
    Ok(())
}
