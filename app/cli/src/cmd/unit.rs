//! `etip unit run --unit FILE`: runs one work unit on this machine and prints its reply, as a
//! cluster node does for `--backend swarm` (docs/cluster.md). The coordinator starts it in the
//! runner image; run by hand, it reproduces what a node did with a unit.

use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Run the unit of a JSON file; its reply (lines starting `etip-reply `) goes to standard
    /// output, progress and diagnostics to standard error.
    Run {
        /// The unit, as the coordinator wrote it (the runner finds it at /etip/unit.json).
        #[arg(long)]
        unit: PathBuf,
    },
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<()> {
    match args.action {
        Action::Run { unit } => {
            let unit = etip_pipeline::unit_run::read_unit(&unit)?;
            etip_pipeline::unit_run::run(&unit, out, &etip_pipeline::progress::Silent)
        }
    }
}
