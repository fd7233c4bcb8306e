//! [`EngineError`]: what failed in the Docker engine, and on which object.

/// Errors from the Docker engine, each saying what failed and on which object.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(
        "the Docker engine is unreachable ({detail}): start dockerd or point DOCKER_HOST at a running engine"
    )]
    Unreachable { detail: String },
    #[error("importing root filesystem as image {tag} failed: {detail}")]
    Import { tag: String, detail: String },
    #[error("building image {tag} failed: {detail}")]
    Build {
        tag: String,
        detail: String,
        /// Exit code of the failed `RUN` step when the engine reported one.
        exit_code: Option<i64>,
        /// The build output up to the failure.
        log: String,
    },
    #[error("reading the build context {path}: {detail}")]
    Context { path: String, detail: String },
    #[error("making the layer {tag} failed: {detail}")]
    Layer {
        tag: String,
        detail: String,
        /// The build container's output.
        log: String,
    },
    #[error("building image {tag} timed out after {secs} s")]
    BuildTimeout { tag: String, secs: u64, log: String },
    #[error("session {id}: {detail}")]
    Session { id: String, detail: String },
    #[error("the run was interrupted: no container or snapshot image is created any more ({what})")]
    Interrupted { what: String },
    #[error("{what}: the request to the engine ended without an answer ({detail})")]
    Lost { what: &'static str, detail: String },
    #[error("{action} failed on {object}: {source}")]
    Api {
        action: &'static str,
        object: String,
        #[source]
        source: bollard::errors::Error,
    },
}

impl EngineError {
    pub(crate) fn api(
        action: &'static str,
        object: impl Into<String>,
        source: bollard::errors::Error,
    ) -> Self {
        EngineError::Api {
            action,
            object: object.into(),
            source,
        }
    }
}
