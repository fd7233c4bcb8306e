//! `demo`: the whole pipeline on the embedded fixture repositories, as a new user would run it:
//! write the Java and Python repositories, mine them, build the candidates, measure them,
//! evaluate the ground-truth patches and five sample agent patches, score every rule and write
//! one HTML report. Each step calls its stage with a typed configuration and prints the `etip`
//! command that repeats it; the step's printed output goes to a file in the demo folder.

mod command;
mod files;
mod steps;

use crate::InputError;
use crate::mine::local::LocalMined;
use crate::progress::{PhaseProgress, Progress};
use crate::{build, eval, measure};
use etip_build::base::BaseImage;
use etip_fixtures::Kind;
use etip_score::rules::{Rule, ScoreRow};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// The marker that says a folder is a demo folder (the demo writes only into such folders).
const MARKER: &str = ".etip-demo";

/// The fixture repositories of a demo run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Langs {
    Both,
    Java,
    Python,
}

impl Langs {
    fn kinds(self) -> Vec<Kind> {
        match self {
            Langs::Both => vec![Kind::Maven, Kind::Python],
            Langs::Java => vec![Kind::Maven],
            Langs::Python => vec![Kind::Python],
        }
    }
}

/// A demo run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// The demo folder (created, or one an earlier demo made).
    pub out: PathBuf,
    /// Timed rounds of measure and eval.
    pub rounds: usize,
    pub langs: Langs,
    /// One container per version of an evaluation instead of one per round.
    pub reuse_containers: bool,
    /// Namespace of the demo's images and containers.
    pub namespace: String,
}

/// What the demo found, read back from the files its steps wrote.
#[derive(Debug)]
pub struct Outcome {
    pub summary: etip_report::demo::Summary,
    /// The HTML report.
    pub report: PathBuf,
    /// How long the demo took.
    pub seconds: f64,
}

/// What the demo needs from the program that runs it: each step's printed output, written into
/// the step's file as the step's command prints it, and the reporter of the mining phases.
pub trait Host: Sync {
    /// The reporter of the mining step's phases (the commits of each history).
    fn phases(&self) -> Box<dyn PhaseProgress + '_>;
    /// What `etip mine local` prints.
    fn mine(&self, mined: &LocalMined, out: &mut dyn Write) -> anyhow::Result<()>;
    /// What `etip score --rule RULE --format json` prints.
    fn score(&self, rule: Rule, rows: &[ScoreRow], out: &mut dyn Write) -> anyhow::Result<()>;
    /// What `etip base-image bootstrap` prints.
    fn base_image(&self, img: &BaseImage, out: &mut dyn Write) -> anyhow::Result<()>;
    /// What `etip build` prints; an error when the build failed as a run.
    fn build(&self, outcome: &build::Outcome, out: &mut dyn Write) -> anyhow::Result<()>;
    /// What `etip measure` prints.
    fn measure(&self, outcome: &measure::Outcome, out: &mut dyn Write) -> anyhow::Result<()>;
    /// What `etip eval` and `etip eval-test` print; an error when evaluations failed in the
    /// harness.
    fn eval(&self, outcome: &eval::Outcome, out: &mut dyn Write) -> anyhow::Result<()>;
}

/// Refuses what no demo can run; the kinds of fixture repositories this machine can run, and
/// whether it runs on the local executor (no Docker engine).
fn check(cfg: &Config, progress: &dyn Progress) -> anyhow::Result<(Vec<Kind>, bool)> {
    if cfg.rounds < 6 {
        return Err(InputError(
            "--rounds must be at least 6: fewer rounds cannot make a sign test significant".into(),
        )
        .into());
    }
    // Before anything is written: the images' namespace must be one the build accepts.
    let build = etip_build::config::BuildConfig {
        namespace: cfg.namespace.clone(),
        ..Default::default()
    };
    build
        .validate()
        .map_err(|e| InputError(format!("--namespace: {e}")))?;
    let no_engine = crate::executor::engine_missing()?;
    let kinds = match &no_engine {
        None => cfg.langs.kinds(),
        Some(e) if cfg.langs == Langs::Java => anyhow::bail!(
            "no Docker engine answered ({e}), and the Java fixture needs one: its ETIPs build with \
             the base images' JDK and offline Maven repository (without an engine, run `etip demo \
             --lang python`)"
        ),
        Some(e) => {
            progress.note(&format!(
                "no Docker engine answered ({e}):\n  running on the local executor: host processes \
                 with no isolation, on the Python fixture only (the Java fixture needs the base \
                 images' JDK and Maven repository); the sample patches are etip's own"
            ));
            vec![Kind::Python]
        }
    };
    Ok((kinds, no_engine.is_some()))
}

/// Runs the demo.
pub fn run(cfg: &Config, host: &dyn Host, progress: &dyn Progress) -> anyhow::Result<Outcome> {
    let started = Instant::now();
    let (kinds, local) = check(cfg, progress)?;
    files::prepare(&cfg.out)?;
    let mut demo = steps::Demo {
        cfg,
        host,
        progress,
        local,
        total: 8 + kinds.len() - usize::from(local),
        n: 0,
        started,
    };
    let repos = demo.repositories(&kinds)?;
    let candidates = demo.mine(&repos)?;
    if !local {
        demo.base_image()?;
    }
    let status = demo.build(&candidates)?;
    let built = demo.built(&status)?;
    demo.measure(&status, &built)?;
    demo.evaluate(&status, &repos, &built)?;
    let results = cfg.out.join("eval").join("results.jsonl");
    demo.score(&results)?;
    let summary = files::read_summary(
        &cfg.out,
        &steps::repos_of(&repos),
        if local { "local" } else { "docker" },
    )?;
    let report = cfg.out.join("report.html");
    crate::output::write(&report, &etip_report::demo::html(&summary))?;
    Ok(Outcome {
        summary,
        report,
        seconds: started.elapsed().as_secs_f64(),
    })
}
