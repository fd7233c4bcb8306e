//! Docker engine access for etip, through the engine's HTTP API (bollard) only.
//!
//! [`Engine`] wraps one connection and offers exactly what the harness needs:
//!
//! - import a root filesystem tar as an image ([`Engine::import_rootfs`]),
//! - build an image from a tar context ([`Engine::build_image`]), network disabled by default,
//! - build one image layer by running a command in a container and loading the files it changed
//!   as a layer on its parent, without `docker commit` ([`Engine::build_layer`], [`layer`]),
//! - inspect, tag, list and remove images and containers by label,
//! - run a command in a fresh container with a disabled network, CPU/memory limits and a time limit,
//!   collecting its exit code and logs and always removing the container ([`Engine::run`]),
//! - give a layer's build container a network, variables and files under `/tmp` that its image
//!   never keeps ([`Engine::build_layer_in`], [`build_container`]),
//! - create and remove user-defined networks, start a service container on one, save an image
//!   ([`network`]),
//! - keep a container running as a session and time commands in it ([`Engine::start_session`],
//!   [`Engine::exec`], [`Engine::copy_out`], [`Engine::stop_session`], see [`session`]),
//! - describe the engine and its host for measurement records ([`Engine::describe`]),
//! - on a swarm manager, run a work unit as a one-shot job service on a node, read its task and
//!   log, list the nodes and remove what etip created ([`swarm`]).
//!
//! Every image and container etip creates carries the label [`LABEL_MANAGED`]` = "true"` plus
//! `etip.kind` and `etip.namespace`, so [`Engine::clean`] can find and remove them.
//!
//! All methods are `async`; callers without a runtime can create one with `tokio`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), etip_docker::EngineError> {
//! use etip_docker::{Engine, RunSpec, Limits};
//! let engine = Engine::connect().await?;
//! let out = engine
//!     .run(&RunSpec::new("etip/base:bookworm-0123456789ab", ["true"]).limits(Limits::default()))
//!     .await?;
//! assert_eq!(out.exit_code, Some(0));
//! # Ok(()) }
//! ```
//!
//! # Modules
//!
//! The [`Engine`] handle and its connection live in `engine`, [`EngineError`] and the errors it
//! wraps ([`LayerError`], [`SessionError`], [`SetupError`], [`PackError`]) in `error`, image
//! queries and builds in `image`, single runs and [`Limits`] in `run`, listing and cleaning up in
//! `clean`, stopping on a signal ([`interrupt`], [`Engine::remove_own_objects`]) in `interrupt`;
//! everything they define is re-exported here. Layers, sessions, build containers and
//! networks and swarm services have public modules of their own.

mod clean;
mod engine;
mod error;
mod image;
mod interrupt;
mod run;

pub mod build_container;
pub mod layer;
pub mod network;
pub mod session;
pub mod swarm;

pub use build_container::{BuildContainer, TmpFile, is_network_name};
pub use clean::{CleanFilter, CleanReport, Labelled};
pub use engine::{Engine, EngineInfo};
pub use error::{EngineError, LayerError, PackError, SessionError, SetupError};
pub use image::{BuildSpec, ImageInfo};
pub use interrupt::{KIND_SNAPSHOT, OwnRemoval, in_flight, interrupt, interrupted};
pub use layer::TreeCache;
pub use layer::build::{LayerContext, LayerSpec};
pub use network::ServiceSpec;
pub(crate) use run::limited_host_config;
pub use run::{Commit, Limits, RunOutput, RunSpec};
pub use session::{
    ExecOutput, ExecSpec, Extracted, HOST_GRACE, KILL_AFTER, KIND_SESSION, OUTPUT_CAP, Session,
    SessionSpec, extract_tar,
};

/// Label present (value `"true"`) on every image and container etip creates.
pub const LABEL_MANAGED: &str = "etip.managed";
/// Label with the kind of object: `base`, `env`, `instance`, `run`, `session` or `snapshot`.
pub const LABEL_KIND: &str = "etip.kind";
/// Label with the namespace (lets tests and users separate their objects).
pub const LABEL_NAMESPACE: &str = "etip.namespace";
/// Label with the process that created a container (`<pid>-<start time>`): a run stopped by a
/// signal removes exactly its own containers and snapshot images ([`Engine::remove_own_objects`]).
pub const LABEL_OWNER: &str = "etip.owner";

/// This process's [`LABEL_OWNER`] value.
pub fn owner() -> &'static str {
    static OWNER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    OWNER.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}-{nanos}", std::process::id())
    })
}

/// The labels every container etip creates carries (managed, owner); refuses once the process is
/// interrupted (the creation itself is refused then too: [`interrupt`]).
pub(crate) fn own_labels(
    labels: &mut std::collections::HashMap<String, String>,
    what: &str,
) -> Result<(), EngineError> {
    if interrupted() {
        return Err(EngineError::Interrupted {
            what: what.to_string(),
        });
    }
    labels.insert(LABEL_MANAGED.into(), "true".into());
    labels.insert(LABEL_OWNER.into(), owner().to_string());
    Ok(())
}
