//! `etip config init`: one commented configuration file for the commands that read one: the
//! build settings (`etip build`, `measure`, `select`, `eval` and `eval-test` take it with
//! `--config`) and `[mine.github]` (`etip mine github --config`). Every value is the default, so
//! the file changes nothing until a key is edited. The file's text is
//! [`etip_pipeline::config::default_text`].

use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: ConfigCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ConfigCommand {
    /// Write the default configuration, commented, to a new file.
    Init(InitArgs),
}

#[derive(Debug, clap::Args)]
struct InitArgs {
    /// The file to write.
    #[arg(long, default_value = "etip.toml", value_name = "FILE")]
    out: PathBuf,
    /// Replace the file when it exists (only a regular file is ever replaced).
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let ConfigCommand::Init(a) = args.command;
    etip_pipeline::config::init(&a.out, a.force)?;
    writeln!(stdout, "wrote {}", a.out.display())?;
    Ok(())
}
