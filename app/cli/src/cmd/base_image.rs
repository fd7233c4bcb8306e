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
    /// Build (once per machine: cached by content key) the offline base image with JDK 17, Maven and
    /// Debian's Maven plugins, Python 3 with pytest, and git. Needs root and debootstrap.
    Bootstrap {
        /// Debian suite.
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
    let img = etip_pipeline::base_image::run(&cfg, &super::progress::Bar::new())?;
    render_outcome(&img, stdout)
}

/// What was built (stderr) and the image's tag (stdout).
pub fn render_outcome(img: &BaseImage, stdout: &mut dyn std::io::Write) -> anyhow::Result<()> {
    if img.built {
        eprintln!("built {} in {:.0} s", img.tag, img.secs);
    } else {
        eprintln!("{} exists (same content key): nothing to do", img.tag);
    }
    writeln!(stdout, "{}", img.tag)?;
    Ok(())
}
