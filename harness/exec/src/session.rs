//! The session of one version of a built instance: what [`crate::executor::Executor::start`]
//! needs to know, from the instance's status (its image) and its spec (trees, hidden files,
//! environment). Measurement, selection and evaluation all start their sessions through it.

use crate::executor::{Resources, SessionRequest};
use etip_build::instance::InstanceSpec;
use etip_core::instance::InstanceStatus;
use etip_core::measure::Version;

/// The session of version `v` of a built instance, labelled `label`.
pub fn session_request(
    status: &InstanceStatus,
    spec: &InstanceSpec,
    v: Version,
    label: &str,
    cpuset: Option<String>,
    resources: Resources,
) -> SessionRequest {
    let vs = spec.version(v);
    SessionRequest {
        instance: status.id.clone(),
        label: label.to_string(),
        image: status.image.clone(),
        tree: vs.tree.clone(),
        hidden: spec.hidden(v),
        env: vs.env.clone(),
        cpuset,
        resources,
        private: false,
    }
}

/// The folder holding `tree` (with its trailing `/`), or `""` for a top-level tree.
pub fn parent_of(tree: &str) -> String {
    match tree.trim_end_matches('/').rfind('/') {
        Some(i) => tree[..=i].to_string(),
        None => String::new(),
    }
}
