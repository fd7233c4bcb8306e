//! `exact_match` and `same_location` of an evaluated patch: the versions of every file the
//! candidate or the ground truth changes — the original and the reference from the source
//! repository, the candidate's as `etip eval` copied them out of its tree — compared with
//! tree-sitter ([`etip_lang::labels`]). Here, in the binary, because the comparison belongs to
//! the miners' language crate and the evaluation to the harness: only the binary joins them.

use etip_build::git::Repo;
use etip_core::instance::InstanceStatus;
use etip_eval::patch;
use etip_lang::labels::{FileVersions, Labels, labels};
use std::collections::BTreeSet;
use std::path::Path;

/// Files a patch changes: `(every path it touches, the paths that exist after it)`.
fn touched(
    lang: etip_core::Language,
    text: &str,
) -> Result<(Vec<String>, BTreeSet<String>), String> {
    let v = patch::check(lang, text, true).map_err(|e| e.to_string())?;
    let mut all = Vec::new();
    let mut after = BTreeSet::new();
    for f in &v.files {
        all.extend(f.paths().map(str::to_string));
        if let Some(n) = &f.new_path {
            after.insert(n.clone());
        }
    }
    Ok((all, after))
}

/// The labels of `candidate` (a patch that applied) on `status`, whose candidate files are under
/// `files` (see [`etip_eval::evaluate::CHANGED_FILES`]). `cache`: where remote sources are cloned.
pub fn label(
    status: &InstanceStatus,
    gold: &str,
    candidate: &str,
    files: &Path,
    cache: &Path,
) -> Result<Labels, String> {
    let source = status
        .source
        .as_deref()
        .ok_or("the build status does not name its repository")?;
    let repo = Repo::open_or_clone(source, cache).map_err(|e| e.to_string())?;
    let (repo, ids) = repo
        .resolve_all(&[&status.base_commit, &status.patched_commit], cache)
        .map_err(|e| e.to_string())?;
    let [base, patched] = ids.as_slice() else {
        return Err("the commits were not resolved".into());
    };
    let (gold_paths, _) = touched(status.language, gold)?;
    let (cand_paths, cand_after) = touched(status.language, candidate)?;
    let paths: BTreeSet<String> = gold_paths
        .into_iter()
        .chain(cand_paths.iter().cloned())
        .collect();
    let mut held = Vec::new();
    for p in &paths {
        let original = repo.file_at(base, p).map_err(|e| e.to_string())?;
        let reference = repo.file_at(patched, p).map_err(|e| e.to_string())?;
        let cand = if cand_after.contains(p) {
            let path = files.join(p);
            Some(std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?)
        } else if cand_paths.contains(p) {
            None
        } else {
            original.clone()
        };
        held.push((p.as_str(), original, reference, cand));
    }
    let versions: Vec<FileVersions> = held
        .iter()
        .map(|(p, o, r, c)| FileVersions {
            path: p,
            original: o.as_deref(),
            reference: r.as_deref(),
            candidate: c.as_deref(),
        })
        .collect();
    labels(status.language, &versions).map_err(|e| e.to_string())
}
