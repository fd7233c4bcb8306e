//! The ground-truth patch of a built ETIP: `git diff` from its base to its patched commit, read
//! from the repository its build came from (the status's `source`; a local folder is only read, a
//! URL is cloned into etip's cache). `etip eval --predictions gold` evaluates these patches: the
//! harness's self-check, as SWE-bench's gold validation.

use etip_build::git::Repo;
use etip_core::instance::InstanceStatus;
use std::path::Path;

/// The ground-truth patch of `status`, or why it cannot be read.
pub fn patch(status: &InstanceStatus, cache: &Path) -> Result<String, String> {
    let source = status.source.as_deref().ok_or_else(|| {
        format!(
            "{}: the build status does not name its repository (built by an older etip): build it again",
            status.id
        )
    })?;
    let repo = Repo::open_or_clone(source, cache).map_err(|e| e.to_string())?;
    let (repo, ids) = repo
        .resolve_all(&[&status.base_commit, &status.patched_commit], cache)
        .map_err(|e| e.to_string())?;
    match ids.as_slice() {
        [base, patched] => repo.diff(base, patched).map_err(|e| e.to_string()),
        _ => Err(format!("{}: the commits were not resolved", status.id)),
    }
}
