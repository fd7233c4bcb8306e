//! `etip base-image bootstrap`: the offline base image (debootstrap + import through the Docker API).

use super::args::ConfigArgs;
use etip_build::base::BaseImage;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Build (once per machine: cached by content key) the offline base image of a Debian suite:
    /// its Python 3 with pytest and coverage, its JDKs (bullseye: 11 and 17, bookworm: 17,
    /// trixie: 21 and 25), Maven with Debian's Maven plugins, and git. Needs root and debootstrap.
    Bootstrap {
        /// Debian suite (bullseye, bookworm, trixie, or `all` of the configured ones); default:
        /// the configuration's bootstrap.suite.
        #[arg(long)]
        suite: Option<String>,
        #[command(flatten)]
        config: ConfigArgs,
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
    let cfg = etip_pipeline::base_image::Config {
        suite,
        build_config: config.config,
        force,
    };
    // Phases and elapsed time on stderr: above a spinner on a terminal, as plain lines otherwise
    // (a CI log or a redirected stderr sees them too).
    let images = etip_pipeline::base_image::run(&cfg, &super::progress::Bar::new())?;
    for img in &images {
        render_outcome(img, stdout)?;
    }
    Ok(())
}

/// What was built (stderr: suite, time, size) and the image's tag (stdout).
pub fn render_outcome(img: &BaseImage, stdout: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let size = img.size_bytes as f64 / 1e6;
    if img.built {
        eprintln!(
            "built {} ({}) in {:.0} s: {size:.0} MB",
            img.tag, img.suite, img.secs
        );
    } else {
        eprintln!(
            "{} ({}, {size:.0} MB) exists (same content key): nothing to do",
            img.tag, img.suite
        );
    }
    writeln!(stdout, "{}", img.tag)?;
    Ok(())
}
