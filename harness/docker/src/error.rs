//! [`EngineError`]: what failed in the Docker engine, and on which object; [`LayerError`]: what
//! failed while making a layer from a build container's files; [`SessionError`]: what went wrong
//! with a session or service container; [`SetupError`]: what is wrong with a container's network,
//! variables, files or paths; [`PackError`]: packing a container's files failed.

use std::path::PathBuf;

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
    #[error("reading the build context {path}: {source}")]
    ContextSetup {
        path: String,
        #[source]
        source: SetupError,
    },
    #[error("reading the build context {path}: {source}")]
    ContextUpload {
        path: String,
        #[source]
        source: LayerError,
    },
    #[error("making the layer {tag} failed: {source}")]
    Layer {
        tag: String,
        #[source]
        source: Box<LayerError>,
        /// The build container's output.
        log: String,
    },
    #[error("building image {tag} timed out after {secs} s")]
    BuildTimeout { tag: String, secs: u64, log: String },
    #[error("session {id}: {source}")]
    Session {
        id: String,
        #[source]
        source: SessionError,
    },
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

/// What failed while making a layer: writing or reading its tar streams, reading what the build
/// container reported, or loading the result as an image.
#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    #[error("tar header for {path}: {source}")]
    TarHeader {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("reading {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} ended early", path.display())]
    EndedEarly { path: PathBuf },
    #[error("writing the whiteout {}: {source}", path.display())]
    Whiteout {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing the layer's whiteouts: {source}")]
    Whiteouts {
        #[source]
        source: std::io::Error,
    },
    #[error("reading the archive of the changed files: {source}")]
    ChangedFiles {
        #[source]
        source: std::io::Error,
    },
    #[error("reading the layer's files from the build container: {source}")]
    Stage {
        #[source]
        source: std::io::Error,
    },
    #[error("the layer command's exit code is {text:?}")]
    ExitCode { text: String },
    /// The build container's stage lacks a file: `what` completes "the build container did not …".
    #[error("the build container did not {what}")]
    Missing { what: &'static str },
    #[error("malformed file list entry {entry:?}")]
    FileList { entry: String },
    #[error("writing the image config: {source}")]
    Config {
        #[source]
        source: serde_json::Error,
    },
    #[error("writing the image manifest: {source}")]
    Manifest {
        #[source]
        source: serde_json::Error,
    },
    #[error("the build container exited with code {code}")]
    Wrapper { code: i64 },
    #[error("creating {}: {source}", path.display())]
    CreateDownload {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing {}: {source}", path.display())]
    WriteDownload {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the engine loaded the image but the tag does not exist")]
    TagMissing,
    #[error("the tag points at {found} instead of the loaded image {loaded}")]
    TagMoved { found: String, loaded: String },
}

/// What went wrong with a session (or a service container), apart from the engine's API errors.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Pack(#[from] PackError),
    #[error("exec of an empty command")]
    EmptyCommand,
    #[error("the session was stopped, or killed after a command exceeded its time limit")]
    Dead,
    #[error("the engine started the exec detached")]
    Detached,
    #[error("the session's main process is unknown (no sh in the image?)")]
    NoMainProcess,
    #[error("killing leftover processes failed (exit code {exit_code:?}): {stderr}")]
    Sweep {
        exit_code: Option<i64>,
        stderr: String,
    },
    #[error("the start-up probe did not finish")]
    Probe,
    #[error("the engine committed the container but returned no image id")]
    NoImageId,
    /// A service container exited (`exited`) or `timed out` before printing its ready line.
    #[error("the service {ended} before printing {ready_when:?}; its output:\n{output}")]
    NotReady {
        ended: &'static str,
        ready_when: String,
        output: String,
    },
}

/// What is wrong with a container's setup: its network name, variables, files under `/tmp`,
/// capture roots or hidden paths, or packing its files.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error(
        "network {name:?} is not a Docker network name (letters, digits, `_`, `.`, `-`; starting with a letter or digit)"
    )]
    NetworkName { name: String },
    #[error("the build container's variable {name:?} is not a NAME=value entry")]
    Variable { name: String },
    #[error(
        "the build container's file {path:?} must be a file path under {}",
        crate::build_container::TMP
    )]
    FilePath { path: String },
    #[error(
        "the build container's file {path} lies under the capture root {root} and would be kept in the layer"
    )]
    FileUnderRoot { path: String, root: String },
    #[error(
        "capture root {root:?} must be an absolute folder other than / without blanks or glob characters"
    )]
    CaptureRoot { root: String },
    #[error(
        "hidden path {path:?} must be an absolute folder other than / without . or .. components"
    )]
    HiddenPath { path: String },
}

/// Packing a container's files under `/tmp` into a tar failed.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("packing {path}: {source}")]
    Entry {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("packing files: {source}")]
    Archive {
        #[source]
        source: std::io::Error,
    },
}
