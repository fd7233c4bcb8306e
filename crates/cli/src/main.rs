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
    /// Mine repository history for ETIP candidates.
    Mine(cmd::mine::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cmd::init_logging(cli.verbose);
    let result = match cli.command {
        Command::Mine(args) => cmd::mine::run(args),
    };
    cmd::finish(result)
}
