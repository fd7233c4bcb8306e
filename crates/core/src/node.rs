//! The machine a unit ran on: recorded with every result, so a figure can be traced to its node.
//!
//! On one machine the node is this machine and its engine; on a cluster it is the node the
//! engine placed the unit on, its labels (`etip.profile` names its machine profile) read from the
//! cluster's manager. The audit paper's first question — does a task's reference speedup hold on
//! another machine? — is answered by comparing results of different profiles.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The label key that names a node's machine profile (`etip.profile=n2-standard-8`).
pub const PROFILE_LABEL: &str = "etip.profile";
/// The label key that restricts the CPUs a node's units pin their sessions to (`etip.cpus=2-7`):
/// cores left to the node's other work, or, on one machine, the cores of each engine of a test
/// cluster.
pub const CPUS_LABEL: &str = "etip.cpus";
/// The variable through which a node's runner gets its [`CPUS_LABEL`].
pub const CPUS_ENV: &str = "ETIP_CPUS";

/// Where a unit ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// The cluster's id of the node (empty on one machine).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    pub hostname: String,
    /// The node's labels (cluster node labels), e.g. `etip.profile`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The CPU model as the kernel names it (`/proc/cpuinfo`'s `model name`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cpu_model: String,
    /// Version of the engine that ran the unit's containers.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub engine_version: String,
}

impl Node {
    /// The machine profile the node's labels name, if any.
    pub fn profile(&self) -> Option<&str> {
        self.labels.get(PROFILE_LABEL).map(String::as_str)
    }

    /// This machine: its hostname and CPU model read from the kernel (`/proc`), no labels.
    pub fn this_machine() -> Node {
        Node {
            hostname: hostname(),
            cpu_model: cpu_model(),
            ..Node::default()
        }
    }
}

/// The kernel's host name, or empty when it cannot be read.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The first `model name` of `/proc/cpuinfo` (empty when there is none, as on some ARM kernels).
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .map(|text| cpu_model_of(&text))
        .unwrap_or_default()
}

fn cpu_model_of(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "model name").then(|| v.trim().to_string())
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_model_is_the_first_model_name() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n\nprocessor\t: 1\nmodel name\t: other\n";
        assert_eq!(cpu_model_of(text), "Intel(R) Xeon(R) CPU @ 2.20GHz");
        assert_eq!(cpu_model_of("processor : 0\n"), "");
    }

    #[test]
    fn a_node_names_its_profile_and_round_trips() {
        let mut node = Node {
            id: "n1".into(),
            hostname: "vm".into(),
            ..Node::default()
        };
        assert_eq!(node.profile(), None);
        node.labels.insert(PROFILE_LABEL.into(), "small".into());
        assert_eq!(node.profile(), Some("small"));
        let json = serde_json::to_string(&node).unwrap();
        assert_eq!(serde_json::from_str::<Node>(&json).unwrap(), node);
        // One machine's node: no id, no labels written.
        let local = serde_json::to_string(&Node {
            hostname: "vm".into(),
            ..Node::default()
        })
        .unwrap();
        assert_eq!(local, r#"{"hostname":"vm"}"#);
    }
}
