//! `etip sandbox`: a built ETIP's original tree in a running container (reference tree masked,
//! no network, limits) for an agent framework to work in; prints how to attach, how to read the
//! agent's change and how to remove the container; or, with `--image`, an image of the original
//! tree without the reference tree for frameworks that start their own container. The stage is
//! [`etip_pipeline::sandbox`].

use super::args::ConfigArgs;
use super::format::FormatArg;
use etip_eval::sandbox::Sandbox;
use etip_exec::executor::Resources;
use etip_pipeline::sandbox::{self, AgentImage, SandboxConfig};
use etip_report::OutputFormat;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The ETIP's id.
    id: String,
    /// `etip build`'s status.jsonl.
    #[arg(long)]
    etips: PathBuf,
    /// A patch to apply to the original tree (and build) before the agent starts.
    #[arg(long)]
    patch: Option<PathBuf>,
    /// Instead of a running container, make an image for agent frameworks that start their own
    /// container from an image (mini-swe-agent, SWE-agent): the ETIP's image with the reference
    /// tree deleted, the original tree a git repository; named NAME (default
    /// `<namespace>/sandbox:<id>`).
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
    image: Option<String>,
    #[command(flatten)]
    config: ConfigArgs,
    /// CPUs the container may use.
    #[arg(long, default_value_t = 2.0)]
    cpus: f64,
    /// Memory limit in MB (swap off).
    #[arg(long, default_value_t = 8192)]
    memory: u64,
    /// Process limit.
    #[arg(long, default_value_t = 4096)]
    pids: i64,
    /// Time limit of applying and building `--patch`, seconds.
    #[arg(long, default_value_t = 1800)]
    setup_timeout: u64,
    /// Namespace label of the container (`etip clean --containers --namespace` removes it).
    #[arg(long, default_value = "etip-sandbox")]
    namespace: String,
    /// `table` (default) prints the instructions; `json` the sandbox's facts.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    output_format: FormatArg,
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let namespace = args.namespace.clone();
    let cfg = SandboxConfig {
        etips: args.etips,
        id: args.id,
        patch: args.patch,
        build_config: args.config.config,
        namespace: args.namespace,
        resources: Resources {
            cpus: args.cpus,
            memory_mb: args.memory,
            pids: args.pids,
        },
        setup_timeout: std::time::Duration::from_secs(args.setup_timeout),
    };
    let json = OutputFormat::from(args.output_format) == OutputFormat::Json;
    if let Some(name) = args.image {
        let made = sandbox::image(&cfg, Some(name.as_str()).filter(|n| !n.is_empty()))?;
        if json {
            writeln!(stdout, "{}", serde_json::to_string_pretty(&made)?)?;
            return Ok(());
        }
        return print_image(&made, &namespace, stdout);
    }
    let sb = sandbox::start(&cfg)?;
    if json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&sb)?)?;
        return Ok(());
    }
    print(&sb, &namespace, stdout)
}

fn print_image(made: &AgentImage, namespace: &str, o: &mut dyn Write) -> anyhow::Result<()> {
    let p = &made.plan;
    writeln!(o, "image for agent frameworks of {}: {}", p.id, made.image)?;
    writeln!(o, "  from       {}", p.from)?;
    writeln!(
        o,
        "  workdir    {} (the original tree, a git repository)",
        p.workdir
    )?;
    writeln!(o, "  removed    {}", p.removed.join(", "))?;
    writeln!(
        o,
        "
start it as a sandbox (no network; the framework's own limits):
  docker run -d --network none -w {} {}",
        p.workdir, made.image
    )?;
    writeln!(
        o,
        "
the agent's change: `git add -A && git diff --cached` in {}",
        p.workdir
    )?;
    writeln!(
        o,
        "
remove it:
  docker rmi {}    # or: etip clean --namespace {namespace}",
        made.image
    )?;
    Ok(())
}

fn print(sb: &Sandbox, namespace: &str, o: &mut dyn Write) -> anyhow::Result<()> {
    let short = &sb.container[..sb.container.len().min(12)];
    writeln!(o, "sandbox of {} running in container {short}", sb.id)?;
    writeln!(o, "  image      {}", sb.image)?;
    writeln!(o, "  workdir    {} (the original tree)", sb.workdir)?;
    writeln!(
        o,
        "  limits     {} CPUs, {} MB memory, {} processes, network {}",
        sb.resources.cpus, sb.resources.memory_mb, sb.resources.pids, sb.resources.network
    )?;
    if !sb.hidden.is_empty() {
        writeln!(
            o,
            "  hidden     {} (empty, read-only)",
            sb.hidden.join(", ")
        )?;
    }
    if let Some(a) = sb.applied {
        writeln!(o, "  patch      applied ({a:?}) and built")?;
    }
    writeln!(
        o,
        "\nattach (a shell, or any command an agent framework runs):"
    )?;
    writeln!(o, "  docker exec -it -w {} {short} bash", sb.workdir)?;
    writeln!(
        o,
        "  docker exec -i -w {} {short} bash -lc '<command>'",
        sb.workdir
    )?;
    if sb.git {
        writeln!(
            o,
            "\nthe agent's change (a prediction's model_patch for `etip eval --predictions`):"
        )?;
        writeln!(
            o,
            "  docker exec -w {} {short} sh -c 'git add -A && git diff --cached'",
            sb.workdir
        )?;
    }
    writeln!(
        o,
        "\nremove it:\n  docker rm -f {short}    # or: etip clean --containers --namespace {namespace}"
    )?;
    Ok(())
}
