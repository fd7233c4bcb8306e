//! `etip measure`: time the tests of built ETIPs in warmed, order-alternated rounds and say which
//! ETIPs are executable and which test classes detect their improvement.

use super::UsageError;
use super::format::{FormatArg, num, render};
use anyhow::Context;
use etip_build::config::BuildConfig;
use etip_core::instance::InstanceStatus;
use etip_exec::executor::{Executor, Resources};
use etip_measure::measure::{MeasureConfig, MeasureProgress, Tests};
use etip_measure::protocol::{Order, ProtocolConfig};
use etip_measure::verdict::VerdictConfig;
use etip_records::measure::Measurement;
use etip_report::{Align, OutputFormat, Table};
use etip_score::param;
use etip_stats::Direction;
use etip_stats::{SequentialDesign, SignTestConfig, TimerRule};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderArg {
    /// Patched first in odd rounds, original first in even rounds (JETO).
    Alternate,
    /// Drawn per round from --seed.
    Random,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExecutorArg {
    /// The Docker engine when it answers, else an error that says how to run locally.
    Auto,
    /// Long-lived containers of the instance images (network none, limits, pinned CPUs).
    Docker,
    /// Host processes on local builds (`etip build --executor local`; no isolation: code you
    /// trust only).
    Local,
}

/// What `etip measure` and `etip eval` share: the rounds, the verdicts' parameters, the sessions'
/// limits and CPUs.
#[derive(Debug, clap::Args)]
pub struct TimingArgs {
    /// Timed rounds (warm-up excluded).
    #[arg(long, default_value_t = 30)]
    pub rounds: usize,
    /// Warm-up rounds, discarded.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Minimum relative improvement for a round to count as a win.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true,
          value_parser = |s: &str| param::MIN_IMPR.parse(s))]
    pub min_impr: f64,
    /// Significance threshold of the sign test (strict: p < p-val).
    #[arg(long, default_value_t = 0.1, allow_hyphen_values = true,
          value_parser = |s: &str| param::P_VAL.parse(s))]
    pub p_val: f64,
    /// JETO's conservative setting (min-impr 0.1, p-val 0.05).
    #[arg(long)]
    pub conservative: bool,
    /// The sign test's pair rule: `resolution` (pairs whose two times are at or below the report's
    /// resolution are ties; etip's default) or `literal` (JETO's: a pair (0, 0) is a win for both).
    #[arg(long, default_value = "resolution", value_parser = |s: &str| s.parse::<TimerRule>())]
    pub timer_rule: TimerRule,
    /// Classes whose median time is below this (milliseconds) in both versions are `too_fast`.
    #[arg(long, default_value_t = 10.0)]
    pub min_class_ms: f64,
    /// How much more time per round (median) a version's reports may say it saved than the wall
    /// clock around its test command saw, in milliseconds; beyond it and beyond
    /// --timing-tolerance-share the run is `timing_inconsistent` (rules §3.8).
    #[arg(long, default_value_t = etip_measure::consistency::DEFAULT_TOLERANCE_SECS * 1000.0,
          value_parser = |s: &str| param::TIMING_TOLERANCE_MS.parse(s))]
    pub timing_tolerance_ms: f64,
    /// The same tolerance as a share of the original's test command time (the larger applies).
    #[arg(long, default_value_t = etip_measure::consistency::DEFAULT_TOLERANCE_SHARE,
          value_parser = |s: &str| param::TIMING_TOLERANCE_SHARE.parse(s))]
    pub timing_tolerance_share: f64,
    /// Significance threshold of the signed-rank test on how far the rounds' reports claim more
    /// saving than the wall clock saw (strict; rules §3.8).
    #[arg(long, default_value_t = etip_measure::consistency::DEFAULT_TIMING_P_VAL,
          value_parser = |s: &str| param::P_VAL.parse(s))]
    pub timing_p_val: f64,
    /// Memory limit of each session in MB.
    #[arg(long, default_value_t = 4096)]
    pub memory: u64,
    /// Time limit of each version's test command in a round, seconds.
    #[arg(long, default_value_t = 1800)]
    pub round_timeout: u64,
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
    /// Java), `all`, or a comma-separated list of test classes (Java) or node ids/paths (Python).
    #[arg(long, default_value = "auto")]
    tests: String,
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
    /// The build configuration the instances were built with (Maven arguments, test_args).
    #[arg(long)]
    config: Option<PathBuf>,
    /// State store (rounds as they complete; a re-run resumes). Default: <out>/state.sqlite.
    #[arg(long)]
    state: Option<PathBuf>,
    /// Forget stored rounds and outcomes of the selected ETIPs and measure again.
    #[arg(long)]
    force: bool,
    /// Namespace label of the session containers.
    #[arg(long, default_value = "etip")]
    namespace: String,
    /// How to print the summary.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
}

/// Reads `status.jsonl`; a later line of an id replaces an earlier one (a rebuild appends).
pub(crate) fn read_statuses(path: &Path) -> anyhow::Result<Vec<InstanceStatus>> {
    let text = super::input::read_text_capped(path, super::input::MAX_INPUT_BYTES)?;
    let mut out: Vec<InstanceStatus> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let s: InstanceStatus = serde_json::from_str(line).map_err(|e| {
            UsageError(format!(
                "{}:{}: not a status line of `etip build` ({e})",
                path.display(),
                i + 1
            ))
        })?;
        match out.iter_mut().find(|o| o.id == s.id) {
            Some(o) => *o = s,
            None => out.push(s),
        }
    }
    if out.is_empty() {
        return Err(UsageError(format!("{} holds no instance", path.display())).into());
    }
    Ok(out)
}

impl TimingArgs {
    /// Refuses values no run can use.
    pub fn check(&self) -> Result<(), UsageError> {
        let bad = |m: String| Err(UsageError(m));
        if self.rounds == 0 {
            return bad("--rounds must be at least 1".into());
        }
        if self.round_timeout == 0 || self.memory < 64 {
            return bad("--round-timeout must be positive and --memory at least 64 MB".into());
        }
        if !(self.min_class_ms.is_finite() && self.min_class_ms >= 0.0) {
            return bad(format!(
                "--min-class-ms must be a non-negative number, got {}",
                self.min_class_ms
            ));
        }
        Ok(())
    }

    /// The sign test's parameters (`--conservative` or `--min-impr`/`--p-val`).
    pub fn sign(&self) -> SignTestConfig {
        if self.conservative {
            SignTestConfig::conservative()
        } else {
            SignTestConfig {
                min_impr: self.min_impr,
                p_val: self.p_val,
            }
        }
    }

    /// The verdicts' parameters.
    pub fn verdict(&self, sequential: Option<SequentialDesign>) -> VerdictConfig {
        VerdictConfig {
            sign: self.sign(),
            timer: self.timer_rule,
            min_class_secs: self.min_class_ms / 1000.0,
            sequential,
            timing: etip_measure::consistency::Tolerance {
                secs: self.timing_tolerance_ms / 1000.0,
                share: self.timing_tolerance_share,
                p_val: self.timing_p_val,
            },
            ..VerdictConfig::default()
        }
    }

    /// The protocol's parameters (fixed rounds, the given order).
    pub fn protocol(&self, order: Order) -> ProtocolConfig {
        ProtocolConfig {
            rounds: self.rounds,
            warmup: self.warmup,
            order,
            round_timeout: Duration::from_secs(self.round_timeout),
            ..ProtocolConfig::default()
        }
    }

    pub fn resources(&self) -> Resources {
        Resources {
            memory_mb: self.memory,
            ..Resources::default()
        }
    }
}

fn check_args(args: &Args) -> Result<(), UsageError> {
    let bad = |m: String| Err(UsageError(m));
    args.timing.check()?;
    if let Some(m) = args.max_rounds
        && m < args.timing.rounds
    {
        return bad(format!(
            "--max-rounds ({m}) must be at least --rounds ({})",
            args.timing.rounds
        ));
    }
    Ok(())
}

struct Bars {
    bar: indicatif::ProgressBar,
}

impl MeasureProgress for Bars {
    fn etip_started(&self, id: &str) {
        self.bar.set_message(format!("{id}: starting sessions"));
    }

    fn round(&self, id: &str, round: usize, total: usize) {
        if round == 0 {
            self.bar.set_message(format!("{id}: warm-up"));
        } else {
            self.bar.set_message(format!("{id}: round {round}/{total}"));
        }
    }

    fn etip_finished(&self, m: &Measurement) {
        self.bar.inc(1);
        let verdict = if m.executable {
            format!("executable, {} detector(s)", m.detectors.len())
        } else {
            format!(
                "not executable ({})",
                m.reason
                    .and_then(|r| serde_json::to_value(r).ok())
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            )
        };
        self.bar.suspend(|| eprintln!("{}: {verdict}", m.id));
    }
}

/// `--tests covering` / `auto`: the covering tests of each ETIP from `--selection`. `covering`
/// needs a usable selection for every built ETIP; `auto` takes what there is for Python ETIPs
/// (Java keeps its modules; without `--selection` every ETIP runs its modules).
fn covering(args: &Args, statuses: &[InstanceStatus]) -> anyhow::Result<Tests> {
    use etip_core::selection::SelectionOutcome;
    use etip_measure::measure::Covering;
    let strict = args.tests == "covering";
    let Some(path) = &args.selection else {
        if strict {
            return Err(UsageError(
                "--tests covering needs --selection DIR, the output folder of `etip select`".into(),
            )
            .into());
        }
        return Ok(Tests::Modules);
    };
    let selections = super::select::read_selections(path)?;
    let mut map = std::collections::BTreeMap::new();
    for st in statuses.iter().filter(|s| s.runnable()) {
        // `auto`: Java keeps its modules until selection is proven on real Java repositories.
        if !strict && st.language == etip_core::Language::Java {
            continue;
        }
        let usable = selections
            .get(&st.id)
            .filter(|s| s.outcome != SelectionOutcome::Failed);
        match usable {
            Some(s) if s.outcome == SelectionOutcome::NoCoveringTests => {
                map.insert(
                    st.id.clone(),
                    Covering::None(s.detail.clone().unwrap_or_default()),
                );
            }
            Some(s) => {
                if s.image != st.image {
                    eprintln!(
                        "warning: {}: the selection was made in image {}, the ETIP is now {}; run `etip select` again",
                        st.id,
                        s.image.as_deref().unwrap_or("-"),
                        st.image.as_deref().unwrap_or("-")
                    );
                }
                map.insert(st.id.clone(), Covering::Tests(s.tests()));
            }
            None if strict => {
                let why = selections
                    .get(&st.id)
                    .and_then(|s| s.detail.clone())
                    .unwrap_or_else(|| "no selection".into());
                return Err(UsageError(format!(
                    "--tests covering: {} has no usable selection in {} ({why}); run `etip select` for it or use --tests auto",
                    st.id,
                    path.display()
                ))
                .into());
            }
            None => {}
        }
    }
    Ok(Tests::Covering(map))
}

/// Whole physical cores for the sessions (`cpus`: `--cpus`): every session gets the same CPU set
/// (they never run at the same time, and giving each version its own core would confound the
/// version with the core).
pub(crate) fn pinning(
    cpus: Option<&str>,
    can_pin: bool,
) -> anyhow::Result<(Option<String>, Vec<String>)> {
    if !can_pin {
        return Ok((
            None,
            vec!["the executor cannot pin sessions to CPUs".to_string()],
        ));
    }
    let allowed = match cpus {
        Some(list) => Some(
            etip_exec::noise::parse_cpu_list(list)
                .map_err(|e| UsageError(format!("--cpus {list}: {e}")))?,
        ),
        None => None,
    };
    let cores = match etip_exec::noise::cpu_topology(Path::new("/sys")) {
        Ok(c) => c,
        Err(e) => {
            return Ok((
                None,
                vec![format!(
                    "sessions not pinned: CPU topology unreadable ({e})"
                )],
            ));
        }
    };
    let plan = etip_exec::noise::pin_plan(&cores, allowed.as_deref(), 1)
        .map_err(|e| UsageError(format!("pinning sessions: {e}")))?;
    let mut notes = plan.notes.clone();
    if let Some(r) = &plan.reserved {
        notes.push(format!("CPUs {r} left to the system"));
    }
    notes.push(
        "both versions' sessions share one CPU set: they never run at the same time, and one set \
         for both keeps the version from being confounded with the core"
            .to_string(),
    );
    Ok((plan.cpusets.first().cloned(), notes))
}

/// The executor of `--executor` for these ETIPs: the local executor runs local builds (`etip
/// build --executor local`), the Docker executor images; `auto` picks the one the builds need.
/// A build the chosen executor cannot run is bad input.
pub(crate) fn executor_for(
    kind: ExecutorArg,
    statuses: &[InstanceStatus],
    namespace: &str,
) -> anyhow::Result<Box<dyn Executor>> {
    let runnable: Vec<&InstanceStatus> = statuses.iter().filter(|s| s.runnable()).collect();
    let local = runnable.iter().find(|s| s.local_root.is_some());
    let image = runnable.iter().find(|s| s.image.is_some());
    let kind = match (kind, local, image) {
        (ExecutorArg::Auto, Some(_), None) => ExecutorArg::Local,
        (ExecutorArg::Auto, _, _) => ExecutorArg::Docker,
        (k, _, _) => k,
    };
    match (kind, local, image) {
        (ExecutorArg::Local, _, Some(s)) => Err(UsageError(format!(
            "ETIP {} was built as an image ({}): run it with --executor docker, or build it with              `etip build --executor local`",
            s.id,
            s.image.as_deref().unwrap_or("-")
        ))
        .into()),
        (ExecutorArg::Docker, Some(s), _) => Err(UsageError(format!(
            "ETIP {} was built without containers (in {}): run it with --executor local",
            s.id,
            s.local_root.as_deref().unwrap_or("-")
        ))
        .into()),
        (ExecutorArg::Local, _, None) => {
            eprintln!("running as host processes (local executor: no isolation)");
            Ok(Box::new(etip_exec::local::LocalExecutor))
        }
        _ => {
            let rt = super::runtime()?;
            let engine = rt.block_on(etip_docker::Engine::connect()).map_err(|e| {
                anyhow::anyhow!(e).context(
                    "connecting to Docker (without an engine: `etip build --executor local` builds                      Python ETIPs to run with --executor local)",
                )
            })?;
            Ok(Box::new(etip_exec::docker::DockerExecutor::new(
                engine,
                rt.handle().clone(),
                namespace,
            )))
        }
    }
}

/// The files `etip measure` writes in its output folder.
const OUTPUTS: [&str; 3] = ["measurements.jsonl", "executable.jsonl", "report.html"];

/// The state file and what names it in messages.
fn state_path(args: &Args) -> (PathBuf, &'static str) {
    match &args.state {
        Some(p) => (p.clone(), "--state"),
        None => (args.out.join("state.sqlite"), "the state file of --out"),
    }
}

/// Refuses, before any work, two paths that name one file (an input that is also an output or
/// the state), outputs that cannot be replaced and a state path that is no file.
fn check_paths(args: &Args) -> Result<(), UsageError> {
    use super::output::{self, Named};
    let (state, state_flag) = state_path(args);
    let mut paths = vec![Named::reads("--etips", &args.etips)];
    if let Some(c) = &args.config {
        paths.push(Named::reads("--config", c));
    }
    if let Some(s) = &args.selection {
        let file = if s.is_dir() {
            s.join("selection.jsonl")
        } else {
            s.clone()
        };
        paths.push(Named::reads("--selection", &file));
    }
    for name in OUTPUTS {
        paths.push(Named::writes(
            format!("the {name} of --out"),
            &args.out.join(name),
        ));
    }
    paths.push(Named::writes(state_flag, &state));
    output::distinct(&paths)?;
    if args.out.is_dir() {
        for name in OUTPUTS {
            output::check(&args.out.join(name))?;
        }
    }
    output::check_state(state_flag, &state)
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    check_args(&args)?;
    check_paths(&args)?;
    let build = match &args.config {
        Some(p) => BuildConfig::load(p).map_err(|e| UsageError(e.to_string()))?,
        None => BuildConfig::default(),
    };
    let mut statuses = read_statuses(&args.etips)?;
    if !args.id.is_empty() {
        for id in &args.id {
            if !statuses.iter().any(|s| &s.id == id) {
                return Err(UsageError(format!(
                    "no ETIP with id {id} in {}",
                    args.etips.display()
                ))
                .into());
            }
        }
        statuses.retain(|s| args.id.contains(&s.id));
    }
    let sign = args.timing.sign();
    // Adaptive rounds: the recommended design's batches, spending and futility, up to --max-rounds.
    let sequential = match args.max_rounds {
        Some(m) if m > args.timing.rounds => {
            let bad = |e: etip_stats::StatsError| UsageError(format!("--max-rounds {m}: {e}"));
            let p = SequentialDesign::recommended(args.timing.rounds, sign.p_val)
                .map_err(bad)?
                .params();
            Some(
                SequentialDesign::new(
                    args.timing.rounds,
                    p.batch,
                    m,
                    sign.p_val,
                    p.spending,
                    p.futility,
                )
                .map_err(bad)?,
            )
        }
        _ => None,
    };
    let batch = sequential.as_ref().map_or(10, |d| d.batch());
    let tests = match args.tests.as_str() {
        "modules" => Tests::Modules,
        "all" => Tests::All,
        "auto" | "covering" => covering(&args, &statuses)?,
        list => Tests::Classes(
            list.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        ),
    };
    // Before anything starts: can these rounds give a significant outcome at all?
    etip_measure::measure::check_feasible(
        args.max_rounds.unwrap_or(args.timing.rounds),
        sign.p_val,
    )
    .map_err(|e| UsageError(e.to_string()))?;
    // One run per output folder and per state file, before any session starts: the second is
    // refused at once (exit 2).
    let _lock = super::output::lock_folder(&args.out, "--out")?;
    let (state, state_flag) = state_path(&args);
    let mut store = super::output::open_state(state_flag, &state)?;
    let ex = executor_for(args.executor, &statuses, &args.namespace)?;
    let (cpuset, notes) = pinning(args.timing.cpus.as_deref(), ex.info().can_pin)?;
    let cfg = MeasureConfig {
        protocol: ProtocolConfig {
            max_rounds: args.max_rounds,
            batch,
            ..args.timing.protocol(match args.order {
                OrderArg::Alternate => Order::Alternate,
                OrderArg::Random => Order::Random { seed: args.seed },
            })
        },
        verdict: args.timing.verdict(sequential),
        tests,
        aa: args.aa,
        resources: args.timing.resources(),
        cpusets: cpuset.map(|c| [c.clone(), c]),
        notes,
        build,
        logs: Some(args.out.join("logs")),
        force: args.force,
    };
    let bar = indicatif::ProgressBar::new(statuses.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("the template is valid"),
    );
    bar.enable_steady_tick(Duration::from_millis(500));
    let progress = Bars { bar: bar.clone() };
    let mut results: Vec<Measurement> = Vec::new();
    for status in &statuses {
        let m =
            etip_measure::measure::measure_one(ex.as_ref(), &mut store, status, &cfg, &progress)
                .with_context(|| format!("measuring {}", status.id))?;
        results.push(m);
        // Written after every ETIP, so a later failure loses nothing.
        write_outputs(&args.out, &results)?;
    }
    bar.finish_and_clear();
    let out = summary(&results, OutputFormat::from(args.format))?;
    stdout.write_all(out.as_bytes())?;
    eprintln!(
        "{} of {} executable; measurements in {}",
        results.iter().filter(|m| m.executable).count(),
        results.len(),
        args.out.join("measurements.jsonl").display()
    );
    Ok(())
}

fn write_outputs(out: &Path, results: &[Measurement]) -> anyhow::Result<()> {
    let mut all = String::new();
    let mut exec = String::new();
    for m in results {
        let line = serde_json::to_string(m)?;
        all.push_str(&line);
        all.push('\n');
        if m.executable {
            exec.push_str(&serde_json::to_string(&serde_json::json!({
                "id": m.id,
                "detectors": m.detectors,
                "overall": m.overall.as_ref().and_then(|o| o.sign_test.as_ref()).map(|s| s.direction),
                "improvement": m.overall.as_ref().and_then(|o| o.sign_test.as_ref()).map(|s| s.improvement),
                "rounds": m.rounds,
                "aa": m.aa,
            }))?);
            exec.push('\n');
        }
    }
    super::output::write(&out.join("measurements.jsonl"), &all)?;
    super::output::write(&out.join("executable.jsonl"), &exec)?;
    let html = crate::cmd::measure_html::report(results);
    super::output::write(&out.join("report.html"), &html)?;
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
