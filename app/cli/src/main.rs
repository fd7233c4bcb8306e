//! The `etip` command-line tool: a thin layer over etip's libraries.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod cmd;

/// mimalloc for Rust and (through its `override` feature) for the C libraries too: tree-sitter,
/// libgit2 and SQLite allocate and free many small objects while mining.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Build and use benchmarks of execution time improvement patches (ETIPs).
#[derive(Debug, Parser)]
#[command(name = "etip", version, about, long_about = None)]
struct Cli {
    /// More log output (-v info, -vv debug, -vvv trace). Logs go to stderr.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the whole pipeline on the embedded Java and Python fixture repositories: mine, build,
    /// measure, evaluate sample agent patches, score under every rule, write an HTML report.
    Demo(cmd::demo::Args),
    /// Score per-task results under a benchmark's rule (SWE-fficiency, GSO, SWE-Perf, JETO).
    Score(cmd::score::Args),
    /// Diagnose a leaderboard: tail weight, bounded penalty, tolerance, rescoring, rankings, coverage.
    Audit(cmd::audit::Args),
    /// Mine repository history for ETIP candidates.
    Mine(cmd::mine::Args),
    /// Is each issue of a JSON-lines file about execution time? Prints each record with the
    /// answer, the classifier and the evidence it matched (offline rules).
    Classify(cmd::classify::Args),
    /// Offline base image for `etip build` (debootstrap, imported through the Docker API).
    BaseImage(cmd::base_image::Args),
    /// Import a task dataset (SWE-bench, SWE-fficiency, GSO) as ETIPs for `etip build`: base
    /// commit, gold patch or expert commit, workloads, and the task as given.
    Import(cmd::import::Args),
    /// Export built and measured ETIPs as a dataset: SWE-bench's schema with etip's performance
    /// columns, as JSON lines and Parquet, a dataset card, and the images.
    Export(cmd::export::Args),
    /// Build one Docker image per ETIP with both versions built.
    Build(cmd::build::Args),
    /// Time the tests of built ETIPs in alternated rounds; say which are executable and which
    /// test classes detect the improvement.
    Measure(Box<cmd::measure::Args>),
    /// Run the tests of built ETIPs once per version with per-test coverage and keep those that
    /// execute the changed code (for `etip measure --tests covering`).
    Select(cmd::select::Args),
    /// Evaluate agent patches (SWE-bench predictions), the ETIPs' own patches (`gold`) or no change
    /// (`empty`) on built ETIPs: apply, build, time against the original and the ground truth,
    /// categorise; results in the schema `etip score` reads.
    Eval(Box<cmd::eval::Args>),
    /// Evaluate generated tests on built ETIPs: each applied to the original and the reference
    /// (ground-truth patched) version and timed there; a test that passes on both in every round
    /// and finds the reference significantly faster is an ETIP detector test.
    EvalTest(Box<cmd::eval::TestArgs>),
    /// Evaluate each ETIP's reference (or a prediction) again on every machine profile, several
    /// times, and say per task whether it is evaluable, faster and valid by each benchmark's rule
    /// in every replay, with the median and spread of its runtime change.
    Replay(Box<cmd::eval::ReplayArgs>),
    /// Screen agent patches for reward hacks from the patches and the original trees alone (no
    /// engine): input special cases, cross-call caches, introspection, timing tampering,
    /// precomputed tables, out-of-scope files.
    HackCheck(cmd::hack_check::Args),
    /// Start a built ETIP's original tree in a container for an agent framework to work in
    /// (reference tree masked, no network, limits) and print how to attach to it.
    Sandbox(cmd::sandbox::Args),
    /// Remove the images and containers etip created.
    Clean(cmd::clean::Args),
    /// The configuration file: `etip config init` writes the defaults, commented.
    Config(cmd::config::Args),
    /// One work unit run on this machine, as a cluster node runs it (`--backend swarm`).
    Unit(cmd::unit::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cmd::init_logging(cli.verbose);
    cmd::watch_signals();
    let stdout = &mut std::io::stdout().lock();
    let result = match cli.command {
        Command::Demo(args) => cmd::demo::run(args, stdout),
        Command::Score(args) => cmd::score::run(args, stdout),
        Command::Audit(args) => cmd::audit::run(args, stdout),
        Command::Mine(args) => cmd::mine::run(args, stdout),
        Command::Classify(args) => cmd::classify::run(args, stdout),
        Command::BaseImage(args) => cmd::base_image::run(args, stdout),
        Command::Import(args) => cmd::import::run(args, stdout),
        Command::Export(args) => cmd::export::run(args, stdout),
        Command::Build(args) => cmd::build::run(args, stdout),
        Command::Sandbox(args) => cmd::sandbox::run(args, stdout),
        Command::HackCheck(args) => cmd::hack_check::run(args, stdout),
        Command::Clean(args) => cmd::clean::run(args),
        Command::Config(args) => cmd::config::run(args, stdout),
        Command::Measure(args) => cmd::measure::run(*args, stdout),
        Command::Select(args) => cmd::select::run(args, stdout),
        Command::Eval(args) => cmd::eval::run(*args, stdout),
        Command::EvalTest(args) => cmd::eval::run_tests(*args, stdout),
        Command::Unit(args) => cmd::unit::run(args, stdout),
        Command::Replay(args) => cmd::eval::run_replay(*args, stdout),
    };
    cmd::finish(result)
}
