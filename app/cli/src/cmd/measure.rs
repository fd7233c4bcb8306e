//! `etip measure`: time the tests of built ETIPs in warmed, order-alternated rounds and say which
//! ETIPs are executable and which test classes detect their improvement.

use super::args::{BackendArg, ConfigArgs, OutputArgs, SignArgs};
use super::executor::ExecutorArg;
use super::format::{num, render};
use etip_measure::measure::Detectors;
use etip_measure::protocol::Order;
use etip_pipeline::ExecutorChoice;
use etip_pipeline::measure::{Config, Outcome};
use etip_pipeline::timing::{TestChoice, Timing};
use etip_records::measure::Measurement;
use etip_report::{Align, OutputFormat, Table};
use etip_score::param;
use etip_stats::Direction;
use etip_stats::TimerRule;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderArg {
    /// Patched first in odd rounds, original first in even rounds (JETO).
    Alternate,
    /// Drawn per round from --seed.
    Random,
}

/// What `etip measure` and `etip eval` share: the rounds, the verdicts' parameters, the sessions'
/// limits and CPUs. The defaults are the pipeline's ([`Timing::default`]).
#[derive(Debug, clap::Args)]
pub struct TimingArgs {
    /// Timed rounds (warm-up excluded).
    #[arg(long, default_value_t = Timing::default().rounds)]
    pub rounds: usize,
    /// Warm-up rounds, discarded.
    #[arg(long, default_value_t = Timing::default().warmup)]
    pub warmup: usize,
    #[command(flatten)]
    pub sign: SignArgs,
    /// The sign test's pair rule: `resolution` (pairs whose two times are at or below the report's
    /// resolution are ties; etip's default) or `literal` (JETO's: a pair (0, 0) is a win for both).
    #[arg(long, default_value_t = Timing::default().timer_rule, value_parser = |s: &str| s.parse::<TimerRule>())]
    pub timer_rule: TimerRule,
    /// Classes whose median time is below this (milliseconds) in both versions are `too_fast`.
    #[arg(long, default_value_t = Timing::default().min_class_ms)]
    pub min_class_ms: f64,
    /// How much more time per round (median) a version's reports may say it saved than the wall
    /// clock around its test command saw, in milliseconds; beyond it and beyond
    /// --timing-tolerance-share the run is `timing_inconsistent` (rules §3.8).
    #[arg(long, default_value_t = Timing::default().timing_tolerance_ms,
          value_parser = |s: &str| param::TIMING_TOLERANCE_MS.parse(s))]
    pub timing_tolerance_ms: f64,
    /// The same tolerance as a share of the original's test command time (the larger applies).
    #[arg(long, default_value_t = Timing::default().timing_tolerance_share,
          value_parser = |s: &str| param::TIMING_TOLERANCE_SHARE.parse(s))]
    pub timing_tolerance_share: f64,
    /// Significance threshold of the signed-rank test on how far the rounds' reports claim more
    /// saving than the wall clock saw (strict; rules §3.8).
    #[arg(long, default_value_t = Timing::default().timing_p_val,
          value_parser = |s: &str| param::P_VAL.parse(s))]
    pub timing_p_val: f64,
    /// Memory limit of each session in MB.
    #[arg(long, default_value_t = Timing::default().memory_mb)]
    pub memory: u64,
    /// Time limit of each version's test command in a round, seconds.
    #[arg(long, default_value_t = Timing::default().round_timeout_secs)]
    pub round_timeout: u64,
    /// Time limit of one workload process, seconds; a workload that runs longer is a failed
    /// detector, recorded with the reason.
    #[arg(long, default_value_t = Timing::default().workload_timeout_secs)]
    pub workload_timeout: u64,
    /// CPUs the sessions may use (e.g. `2-3`); default: whole physical cores, one left to the
    /// system on machines with more than two.
    #[arg(long)]
    pub cpus: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub timing: TimingArgs,
    /// The status.jsonl that `etip build` wrote (later lines of an id replace earlier ones).
    #[arg(long)]
    etips: PathBuf,
    /// Measure only these ETIPs (repeatable).
    #[arg(long)]
    id: Vec<String>,
    /// Output folder: measurements.jsonl, executable.jsonl, logs/<id>/, report.html, state.sqlite.
    /// One run at a time writes to it: a second run on the same folder is refused (exit 2).
    #[arg(long)]
    out: PathBuf,
    /// Order of the two versions within a round.
    #[arg(long, value_enum, default_value_t = OrderArg::Alternate)]
    order: OrderArg,
    /// Seed of --order random (recorded in the output).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Which tests run: `modules` (the changed modules; Python: all tests), `covering` (the
    /// tests `etip select` found executing the changed code; needs --selection), `auto`
    /// (`covering` for the Python ETIPs --selection selected, `modules` for the others and for
    /// Java), `task` (the correctness tests of the task an ETIP was imported from), `all`, or a
    /// comma-separated list of test classes (Java) or node ids/paths (Python).
    #[arg(long, default_value = "auto")]
    tests: String,
    /// Which kinds of detector are timed: `tests`, `workloads` (the scripts the ETIP carries,
    /// each in a fresh process per round and version), `suites` (the asv benchmarks,
    /// pytest-benchmark tests and JMH benchmarks `etip select` found executing the changed code; needs
    /// --selection), or `all` (default: everything the ETIP has); a comma-separated list works
    /// too.
    #[arg(long, default_value = "all", value_parser = |s: &str| Detectors::parse(s))]
    detectors: Detectors,
    /// The output folder (or selection.jsonl) of `etip select`, for --tests covering or auto.
    #[arg(long)]
    selection: Option<PathBuf>,
    /// Adaptive rounds: inconclusive classes get more rounds in batches up to M, under a
    /// group-sequential design that keeps the false-positive rate at or below --p-val.
    #[arg(long)]
    max_rounds: Option<usize>,
    /// A/A calibration: both sides run the original version.
    #[arg(long)]
    aa: bool,
    /// Where the tests run.
    #[arg(long, value_enum, default_value_t = ExecutorArg::Auto)]
    executor: ExecutorArg,
    #[command(flatten)]
    config: ConfigArgs,
    /// State store (rounds as they complete; a re-run resumes). Default: <out>/state.sqlite.
    #[arg(long)]
    state: Option<PathBuf>,
    /// Forget stored rounds and outcomes of the selected ETIPs and measure again.
    #[arg(long)]
    force: bool,
    /// Namespace label of the session containers.
    #[arg(long, default_value = "etip")]
    namespace: String,
    /// Where the ETIPs are measured: `local` (one at a time on this machine) or `swarm` (one per
    /// node slot on the Docker Swarm that --config's `[swarm]` section names; docs/cluster.md).
    #[arg(long, value_enum, default_value_t = BackendArg::Local)]
    backend: BackendArg,
    #[command(flatten)]
    output: OutputArgs,
}

impl TimingArgs {
    /// The pipeline's timing of these flags.
    pub fn timing(&self) -> Timing {
        Timing {
            rounds: self.rounds,
            warmup: self.warmup,
            min_impr: self.sign.min_impr,
            p_val: self.sign.p_val,
            conservative: self.sign.conservative,
            timer_rule: self.timer_rule,
            min_class_ms: self.min_class_ms,
            timing_tolerance_ms: self.timing_tolerance_ms,
            timing_tolerance_share: self.timing_tolerance_share,
            timing_p_val: self.timing_p_val,
            memory_mb: self.memory,
            round_timeout_secs: self.round_timeout,
            workload_timeout_secs: self.workload_timeout,
            cpus: self.cpus.clone(),
        }
    }
}

impl Args {
    /// The pipeline's configuration of these arguments.
    pub fn config(self) -> Config {
        Config {
            timing: self.timing.timing(),
            etips: self.etips,
            ids: self.id,
            out: self.out,
            order: match self.order {
                OrderArg::Alternate => Order::Alternate,
                OrderArg::Random => Order::Random { seed: self.seed },
            },
            tests: TestChoice::parse(&self.tests),
            detectors: self.detectors,
            selection: self.selection,
            max_rounds: self.max_rounds,
            aa: self.aa,
            executor: ExecutorChoice {
                kind: self.executor.into(),
                namespace: self.namespace,
            },
            build_config: self.config.config,
            state: self.state,
            force: self.force,
            backend: self.backend.into(),
        }
    }
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let format = OutputFormat::from(args.output.format);
    let outcome = etip_pipeline::measure::run(&args.config(), &super::progress::Bar::new())?;
    render_outcome(&outcome, format, stdout)
}

/// The summary on stdout, the counts on stderr.
pub fn render_outcome(
    outcome: &Outcome,
    format: OutputFormat,
    stdout: &mut dyn Write,
) -> anyhow::Result<()> {
    stdout.write_all(summary(&outcome.measurements, format)?.as_bytes())?;
    eprintln!(
        "{} of {} executable; measurements in {}",
        outcome.executable(),
        outcome.measurements.len(),
        outcome.file.display()
    );
    Ok(())
}

fn dir_name(d: Direction) -> &'static str {
    match d {
        Direction::PatchedFaster => "patched faster",
        Direction::OriginalFaster => "original faster",
        Direction::NotSignificant => "not significant",
    }
}

/// The printed summary: one row per ETIP (JSON: the measurements themselves).
fn summary(results: &[Measurement], format: OutputFormat) -> anyhow::Result<String> {
    if format == OutputFormat::Json {
        return Ok(etip_report::to_json(results)?);
    }
    let mut t = Table::new(vec![
        ("etip", Align::Left),
        ("executable", Align::Left),
        ("rounds", Align::Right),
        ("overall", Align::Left),
        ("improvement", Align::Right),
        ("p", Align::Right),
        ("detectors", Align::Left),
        ("reason", Align::Left),
    ]);
    for m in results {
        let st = m.overall.as_ref().and_then(|o| o.sign_test.as_ref());
        t.push(vec![
            m.id.clone(),
            if m.executable { "yes" } else { "no" }.into(),
            m.rounds.to_string(),
            st.map_or("-".into(), |s| dir_name(s.direction).to_string()),
            st.map_or("-".into(), |s| format!("{:.1}%", 100.0 * s.improvement)),
            num(st.map(|s| s.p_patched.min(s.p_original)), 4),
            if m.detectors.is_empty() {
                "-".into()
            } else {
                m.detectors.join(", ")
            },
            super::format::first_line(m.detail.as_deref(), 100),
        ]);
    }
    render(&t, format)
}
