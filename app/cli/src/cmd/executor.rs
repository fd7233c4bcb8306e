//! The `--executor` flag of `etip select` and `etip measure`.

use etip_pipeline::ExecutorKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExecutorArg {
    /// The Docker engine when it answers, else an error that says how to run locally.
    Auto,
    /// Long-lived containers of the instance images (network none, limits, pinned CPUs).
    Docker,
    /// Host processes on local builds (`etip build --executor local`; no isolation: code you
    /// trust only).
    Local,
}

impl From<ExecutorArg> for ExecutorKind {
    fn from(e: ExecutorArg) -> ExecutorKind {
        match e {
            ExecutorArg::Auto => ExecutorKind::Auto,
            ExecutorArg::Docker => ExecutorKind::Docker,
            ExecutorArg::Local => ExecutorKind::Local,
        }
    }
}
