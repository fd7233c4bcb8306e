//! The ground-truth patch of a built ETIP: the patch it was given as (an imported task's), else
//! `git diff` from its base to its patched commit, read from the repository its build came from (the status's `source`; a local folder is only read, a
//! URL is cloned into etip's cache). `etip eval --predictions gold` evaluates these patches: the
//! harness's self-check, as SWE-bench's gold validation.

use etip_build::git::{GitError, Repo};
use etip_core::instance::InstanceStatus;
use std::path::Path;

/// Why the ground-truth patch of an instance cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum GoldError {
    #[error(
        "{id}: the build status does not name its repository (built by an older etip): build it again"
    )]
    NoSource { id: String },
    /// Opening, cloning or reading the repository failed.
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("{id}: the commits were not resolved")]
    Unresolved { id: String },
}

/// The ground-truth patch of `status`, or why it cannot be read. An ETIP given as a patch (an
/// imported task) has it in its status, as applied.
pub fn patch(status: &InstanceStatus, cache: &Path) -> Result<String, GoldError> {
    if let Some(applied) = &status.patch {
        return Ok(applied.text.clone());
    }
    let source = status
        .source
        .as_deref()
        .ok_or_else(|| GoldError::NoSource {
            id: status.id.clone(),
        })?;
    let repo = Repo::open_or_clone(source, cache)?;
    let (repo, ids) = repo.resolve_all(&[&status.base_commit, &status.patched_commit], cache)?;
    match ids.as_slice() {
        [base, patched] => Ok(repo.diff(base, patched)?),
        _ => Err(GoldError::Unresolved {
            id: status.id.clone(),
        }),
    }
}
