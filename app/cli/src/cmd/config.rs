//! `etip config init`: one commented configuration file for the commands that read one: the
//! build settings (`etip build`, `measure`, `select`, `eval` and `eval-test` take it with
//! `--config`) and `[mine.github]` (`etip mine github --config`). Every value is the default, so
//! the file changes nothing until a key is edited.

use std::io::Write;
use std::path::PathBuf;

use super::UsageError;

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

/// The whole file: the build settings as `etip build --print-config` prints them (with what
/// `"auto"` finds on this machine in comments), then `[mine.github]`.
pub fn default_text() -> String {
    let build =
        etip_build::config::BuildConfig::default().to_toml_with(Some(&etip_build::network::host()));
    format!(
        "# etip configuration, written by `etip config init`; every value is the default.\n\
         # The build settings are read by `etip build`, `measure`, `select`, `eval` and\n\
         # `eval-test` (`--config etip.toml`); `[mine.github]` by `etip mine github`.\n\n\
         {build}{}",
        super::mine_github::CONFIG_SECTION
    )
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let ConfigCommand::Init(a) = args.command;
    if a.out.exists() && !a.force {
        return Err(UsageError(format!(
            "{} exists; pass --force to replace it",
            a.out.display()
        ))
        .into());
    }
    super::output::write(&a.out, &default_text())?;
    writeln!(stdout, "wrote {}", a.out.display())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file reads back: the build ignores `[mine]`, and `[mine.github]` holds what
    /// `etip mine github` knows.
    #[test]
    fn the_default_file_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("etip.toml");
        std::fs::write(&path, default_text()).unwrap();
        let build = etip_build::config::BuildConfig::load(&path).unwrap();
        assert_eq!(build.namespace, "etip");
        let table: toml::Table = toml::from_str(&default_text()).unwrap();
        let github = &table["mine"]["github"];
        assert_eq!(github["min_stars"].as_integer(), Some(100));
        assert_eq!(github["build_tools"].as_str(), Some("strict"));
    }
}
