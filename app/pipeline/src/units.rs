//! What the timed stages share to run their work units on the command's backend
//! ([`crate::backend`]): the content key of a unit, the halt that stops a stage's remaining units
//! when one finds the run cannot go on (the disk is short, the store failed), and the order in
//! which a stage reports and writes its records.
//!
//! Every stage turns its instances into [`etip_core::unit::WorkUnit`]s, gives the backend a
//! runner and a ledger, and turns the backend's events into its progress calls and output files
//! on the coordinating thread. Reused units are reported before the others start; [`InOrder`]
//! puts the records back in input order, so a stage prints and writes them as it did when it ran
//! its instances one after another.

use sha2::{Digest, Sha256};
use std::sync::Mutex;

/// The machine a unit runs on, as its record names it: on a cluster node the swarm's id and host
/// name of the node (`ETIP_NODE_ID`, `ETIP_NODE_HOSTNAME`, set by the swarm backend), else this
/// machine's; the CPU model and the engine as the executor reports them.
pub(crate) fn this_node(info: &etip_exec::executor::ExecutorInfo) -> etip_core::node::Node {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut node = etip_core::node::Node::this_machine();
    if let Some(id) = var("ETIP_NODE_ID") {
        node.id = id;
    }
    if let Some(h) = var("ETIP_NODE_HOSTNAME") {
        node.hostname = h;
    }
    if let Some(cpu) = info.cpu_model.clone().filter(|c| !c.is_empty()) {
        node.cpu_model = cpu;
    }
    node.engine_version = info.engine.clone().unwrap_or_else(|| info.name.clone());
    node
}

/// The CPU set of a unit's sessions on this cluster node and the notes on it: the node's own CPU
/// list (its `etip.cpus` label, passed as `ETIP_CPUS`) wins over the run's `--cpus` (`cpus`).
pub(crate) fn node_pinning(
    cpus: Option<&str>,
    can_pin: bool,
) -> anyhow::Result<(Option<String>, Vec<String>)> {
    let node = std::env::var(etip_core::node::CPUS_ENV)
        .ok()
        .filter(|c| !c.is_empty());
    crate::timing::pinning(node.as_deref().or(cpus), can_pin)
}

/// What a unit runs with on a cluster node: the node's own engine (its containers labelled
/// `namespace`) and a scratch folder, removed when this is dropped.
pub(crate) struct OnNode {
    pub ex: crate::executor::Chosen,
    pub scratch: tempfile::TempDir,
}

/// The node's engine for `status` and a scratch folder; failing either is an infrastructure
/// failure (the coordinator runs the unit on another node).
pub(crate) fn on_node(
    namespace: &str,
    status: &etip_core::instance::InstanceStatus,
    workload: crate::executor::Workload,
    progress: &dyn crate::progress::Progress,
) -> Result<OnNode, etip_core::unit::UnitError> {
    use etip_core::unit::UnitError;
    let choice = crate::executor::ExecutorChoice {
        kind: crate::executor::ExecutorKind::Docker,
        namespace: namespace.to_string(),
    };
    let ex = crate::executor::choose(&choice, std::slice::from_ref(status), workload, progress)
        .map_err(|e| UnitError::infrastructure(format!("this node's engine: {e:#}")))?;
    let scratch = tempfile::Builder::new()
        .prefix("etip-unit-")
        .tempdir()
        .map_err(|e| UnitError::infrastructure(format!("a scratch folder: {e}")))?;
    Ok(OnNode { ex, scratch })
}

/// SHA-256 (hex) of `parts` as JSON text: a unit's content key.
pub(crate) fn key(parts: &serde_json::Value) -> String {
    hex::encode(Sha256::digest(parts.to_string().as_bytes()))
}

/// A reason to start no more of a stage's units, set once by the first that finds one.
#[derive(Debug, Default)]
pub(crate) struct Halt(Mutex<Option<String>>);

impl Halt {
    /// Halts the stage (the first reason is kept).
    pub(crate) fn set(&self, why: impl Into<String>) {
        let mut r = self.0.lock().unwrap_or_else(|p| p.into_inner());
        r.get_or_insert(why.into());
    }

    /// Why the stage halted, if it did.
    pub(crate) fn reason(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

enum Slot<T> {
    Waiting,
    Skipped,
    Ready(T),
    Emitted(T),
}

/// Records of a stage's units, handed on in input order as soon as all earlier ones are known.
pub(crate) struct InOrder<T> {
    slots: Vec<Slot<T>>,
    next: usize,
}

impl<T> InOrder<T> {
    /// `n` units, none known yet.
    pub(crate) fn new(n: usize) -> InOrder<T> {
        InOrder {
            slots: (0..n).map(|_| Slot::Waiting).collect(),
            next: 0,
        }
    }

    /// Unit `i`'s record; `emit` gets every record now next in order.
    pub(crate) fn put(&mut self, i: usize, item: T, emit: &mut dyn FnMut(&T)) {
        if let Some(slot) = self.slots.get_mut(i) {
            *slot = Slot::Ready(item);
        }
        self.flush(emit);
    }

    /// Unit `i` has no record (it failed, or was not started).
    pub(crate) fn skip(&mut self, i: usize, emit: &mut dyn FnMut(&T)) {
        if let Some(slot) = self.slots.get_mut(i) {
            *slot = Slot::Skipped;
        }
        self.flush(emit);
    }

    fn flush(&mut self, emit: &mut dyn FnMut(&T)) {
        while let Some(slot) = self.slots.get_mut(self.next) {
            match std::mem::replace(slot, Slot::Waiting) {
                Slot::Waiting => break,
                Slot::Ready(t) => {
                    emit(&t);
                    *slot = Slot::Emitted(t);
                }
                other => *slot = other,
            }
            self.next += 1;
        }
    }

    /// Every record, in input order: the run is over, so those still held back (behind a unit
    /// that never reported) are emitted too.
    pub(crate) fn finish(mut self, emit: &mut dyn FnMut(&T)) -> Vec<T> {
        for slot in &mut self.slots {
            *slot = match std::mem::replace(slot, Slot::Skipped) {
                Slot::Ready(t) => {
                    emit(&t);
                    Slot::Emitted(t)
                }
                other => other,
            };
        }
        self.slots
            .into_iter()
            .filter_map(|s| match s {
                Slot::Emitted(t) => Some(t),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_handed_on_in_input_order() {
        let mut seen = Vec::new();
        let mut order = InOrder::new(4);
        order.put(2, "c", &mut |t| seen.push(*t));
        assert!(seen.is_empty());
        order.put(0, "a", &mut |t| seen.push(*t));
        assert_eq!(seen, ["a"]);
        order.skip(1, &mut |t| seen.push(*t));
        assert_eq!(seen, ["a", "c"]);
        order.put(3, "d", &mut |t| seen.push(*t));
        assert_eq!(order.finish(&mut |t| seen.push(*t)), ["a", "c", "d"]);
        assert_eq!(seen, ["a", "c", "d"]);
    }

    #[test]
    fn records_behind_a_unit_that_never_reported_come_at_the_end() {
        let mut seen = Vec::new();
        let mut order = InOrder::new(3);
        order.put(1, 1, &mut |t| seen.push(*t));
        order.put(2, 2, &mut |t| seen.push(*t));
        assert!(seen.is_empty());
        assert_eq!(order.finish(&mut |t| seen.push(*t)), [1, 2]);
        assert_eq!(seen, [1, 2]);
    }

    #[test]
    fn the_first_halt_is_kept() {
        let halt = Halt::default();
        assert_eq!(halt.reason(), None);
        halt.set("disk");
        halt.set("store");
        assert_eq!(halt.reason().as_deref(), Some("disk"));
    }
}
