//! `etip base-image bootstrap`: the offline base image (debootstrap + import through the Docker API).

use anyhow::Context;
use etip_build::base::Progress;
use etip_build::{Builder, config::BuildConfig};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Build (once per machine: cached by content key) the offline base image with JDK 17, Maven and
    /// Debian's Maven plugins, Python 3 with pytest, and git. Needs root and debootstrap.
    Bootstrap {
        /// Debian suite.
        #[arg(long)]
        suite: Option<String>,
        /// Build configuration (TOML; see harness/build/README.md).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Rebuild even when an image with the same content key exists.
        #[arg(long)]
        force: bool,
    },
}

pub fn run(args: Args, stdout: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let Action::Bootstrap {
        suite,
        config,
        force,
    } = args.action;
    let mut cfg = match &config {
        Some(p) => BuildConfig::load(p).map_err(|e| crate::cmd::UsageError(e.to_string()))?,
        None => BuildConfig::default(),
    };
    if let Some(s) = suite {
        cfg.bootstrap.suite = s;
        cfg.validate()
            .map_err(|e| crate::cmd::UsageError(format!("--suite: {e}")))?;
    }
    let builder = Builder::new(
        cfg,
        PathBuf::from(".etip/build"),
        crate::cmd::runtime()?.handle().clone(),
    )
    .context("connecting to Docker")?;
    // Phases and elapsed time on stderr: above a spinner on a terminal, as plain lines otherwise
    // (a CI log or a redirected stderr sees them too).
    let bar = indicatif::ProgressBar::new_spinner();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
        bar.set_style(style);
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let mut progress = Progress::new(Instant::now(), Duration::from_secs(30));
    let img = builder
        .bootstrap_base(force, &mut |line: &str| {
            if let Some(status) = progress.observe(line, Instant::now()) {
                if bar.is_hidden() {
                    eprintln!("{status}");
                } else {
                    bar.println(status);
                }
            }
            let short: String = line.chars().take(100).collect();
            bar.set_message(short);
        })
        .context("bootstrapping the base image")?;
    bar.finish_and_clear();
    if img.built {
        eprintln!("built {} in {:.0} s", img.tag, img.secs);
    } else {
        eprintln!("{} exists (same content key): nothing to do", img.tag);
    }
    writeln!(stdout, "{}", img.tag)?;
    Ok(())
}
