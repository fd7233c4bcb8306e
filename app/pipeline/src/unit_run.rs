//! `etip unit run --unit FILE`: one work unit on this machine, as a cluster node runs it, its
//! reply printed on standard output ([`etip_core::unit::wire`]).
//!
//! The swarm backend starts it in the runner image with the unit's JSON mounted and the node's
//! engine socket at `/var/run/docker.sock`: the unit's containers (the versions, timed) start on
//! the node's own engine with whole cores pinned, as on one machine. The images the unit names
//! are pulled first when the node does not have them; one that cannot be pulled is an
//! infrastructure failure (the coordinator runs the unit on another node). Whatever happens, the
//! runner prints a reply and exits 0; a reply it could not print, or a crash, leaves the
//! coordinator a task without one, which it treats the same way.

use crate::InputError;
use crate::progress::Progress;
use etip_core::node::Node;
use etip_core::unit::wire::Reply;
use etip_core::unit::{Stage, UnitError, UnitOutput, WorkUnit};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// Reads the unit of `file`.
pub fn read_unit(file: &Path) -> anyhow::Result<WorkUnit> {
    let text = crate::input::read_text(file)?;
    serde_json::from_str(&text)
        .map_err(|e| InputError(format!("{}: not a work unit: {e}", file.display())).into())
}

/// Runs `unit` and writes its reply to `out`.
pub fn run(unit: &WorkUnit, out: &mut dyn Write, progress: &dyn Progress) -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let (result, images, node) = attempt(unit, progress);
    let mut reply = Reply::new(unit, node, result);
    reply.images = images;
    reply.secs = start.elapsed().as_secs_f64();
    for line in reply.lines() {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(())
}

type Attempt = (
    Result<UnitOutput, UnitError>,
    BTreeMap<String, String>,
    Node,
);

fn attempt(unit: &WorkUnit, progress: &dyn Progress) -> Attempt {
    let mut node = Node::this_machine();
    if let Ok(id) = std::env::var("ETIP_NODE_ID") {
        node.id = id;
    }
    if let Ok(h) = std::env::var("ETIP_NODE_HOSTNAME") {
        node.hostname = h;
    }
    let images = match pull(unit, &mut node) {
        Ok(images) => images,
        Err(e) => return (Err(e), BTreeMap::new(), node),
    };
    let result = match unit.stage {
        Stage::Eval | Stage::EvalTest => crate::eval::run_on_node(unit, progress),
        Stage::Measure => crate::measure::units::run_on_node(unit, progress),
        Stage::Select => crate::select::run_on_node(unit, progress),
        other => Err(UnitError::infrastructure(format!(
            "{} units are not run by `etip unit run` (etip runs them on one machine)",
            other.as_str()
        ))),
    };
    if let Ok(output) = &result
        && let Some(n) = output.record.get("node")
        && let Ok(n) = serde_json::from_value::<Node>(n.clone())
    {
        node = n;
    }
    (result, images, node)
}

/// Pulls the unit's images this node's engine lacks; returns each with its digest.
fn pull(unit: &WorkUnit, node: &mut Node) -> Result<BTreeMap<String, String>, UnitError> {
    let infra = |e: String| UnitError::infrastructure(e);
    let rt = crate::runtime::get().map_err(|e| infra(e.to_string()))?;
    let engine = rt
        .block_on(etip_docker::Engine::connect())
        .map_err(|e| infra(format!("this node's engine: {e}")))?;
    if let Ok(info) = rt.block_on(engine.describe()) {
        node.engine_version = info.server_version;
    }
    let mut images = BTreeMap::new();
    for image in &unit.images {
        let have = rt
            .block_on(engine.image(image))
            .map_err(|e| infra(format!("{image}: {e}")))?;
        if have.is_none() {
            tracing::info!("pulling {image}");
            rt.block_on(engine.pull(image))
                .map_err(|e| infra(format!("{image} could not be pulled on this node: {e}")))?;
        }
        if let Some((_, digest)) = image.split_once('@') {
            images.insert(image.clone(), digest.to_string());
        }
    }
    Ok(images)
}
