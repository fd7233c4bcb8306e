//! `etip clean`: remove the images and containers etip created (found by their `etip.*` labels).

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
    /// Also remove the work units' services and configs etip left on the swarm that --config's
    /// `[swarm]` section names (a coordinator killed for good).
    #[arg(long)]
    swarm: bool,
    /// The configuration file with the `[swarm]` section.
    #[arg(long, requires = "swarm")]
    config: Option<std::path::PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.swarm {
        let settings = etip_pipeline::swarm::load(args.config.as_deref())?;
        let n = etip_pipeline::clean::swarm(&settings, args.namespace.as_deref())?;
        eprintln!(
            "removed {n} unit services from the swarm at {}",
            settings.manager
        );
    }
    let report = etip_pipeline::clean::run(&etip_pipeline::clean::Config {
        all: args.all,
        namespace: args.namespace,
        containers_only: args.containers,
    })?;
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
