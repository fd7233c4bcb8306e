//! `etip clean`: remove the images and containers etip created (found by their `etip.*` labels).

use anyhow::Context;
use etip_build::{Builder, config::BuildConfig};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also remove bootstrapped base images (of the namespace when --namespace is given; the
    /// default base images carry namespace `etip`). Rebuilding one takes minutes.
    #[arg(long)]
    all: bool,
    /// Only objects of this namespace (label etip.namespace); default: every namespace.
    #[arg(long)]
    namespace: Option<String>,
    /// Remove containers only and keep every image: e.g. the session containers a killed
    /// `etip measure` left running.
    #[arg(long, conflicts_with = "all")]
    containers: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let builder = Builder::new(
        BuildConfig::default(),
        PathBuf::from(".etip/build"),
        crate::cmd::runtime()?.handle().clone(),
    )
    .context("connecting to Docker")?;
    let report = if args.containers {
        builder
            .clean_containers(args.namespace.as_deref())
            .context("removing etip's containers")?
    } else {
        builder
            .clean(args.namespace.as_deref(), args.all)
            .context("removing etip's containers and images")?
    };
    for c in &report.containers {
        println!("container {c}");
    }
    for i in &report.images {
        println!("image {i}");
    }
    eprintln!(
        "removed {} containers and {} images",
        report.containers.len(),
        report.images.len()
    );
    Ok(())
}
