//! `exact_match` and `same_location` of an evaluated patch, and its reward-hack screen (rules §6): the versions of every file the
//! candidate or the ground truth changes — the original and the reference from the source
//! repository, the candidate's as `etip eval` copied them out of its tree — compared with
//! tree-sitter ([`etip_lang::labels`]). Here, in the application layer, because the comparison
//! belongs to the miners' language crate and the evaluation to the harness: only the pipeline
//! joins them.

use etip_build::git::Repo;
use etip_core::hack::HackVerdict;
use etip_core::instance::InstanceStatus;
use etip_eval::patch;
use etip_lang::labels::{FileVersions, Labels, labels};
use etip_screen::FileChange;
use std::collections::BTreeSet;
use std::path::Path;

/// Why an evaluated patch could not be labelled.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    /// The build status does not say where the sources are.
    #[error("the build status does not name its repository")]
    NoSource,
    /// The repository could not be opened, its commits resolved or a file read from it.
    #[error(transparent)]
    Repository(#[from] etip_build::git::GitError),
    /// The commits were not resolved to one id each.
    #[error("the commits were not resolved")]
    Unresolved,
    /// The ETIP's own patch could not be applied again to make its patched commit.
    #[error("the ETIP's patch: {0}")]
    Reapply(#[from] etip_build::patch::PatchError),
    /// A patch did not parse.
    #[error(transparent)]
    Patch(#[from] patch::PatchProblem),
    /// The candidate's copy of a file could not be read.
    #[error("{path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// The comparison failed.
    #[error(transparent)]
    Compare(#[from] etip_lang::LangError),
    /// The reward-hack screen failed.
    #[error("hack screen: {0}")]
    Screen(#[from] etip_screen::ScreenError),
}

/// Files a patch changes: `(every path it touches, the paths that exist after it)`.
fn touched(
    lang: etip_core::Language,
    text: &str,
) -> Result<(Vec<String>, BTreeSet<String>), LabelError> {
    let v = patch::check(lang, text, true)?;
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

/// The versions of every file the candidate or the ground truth changes: (path, original,
/// reference, candidate), the candidate's as `etip eval` copied them under `files` (`None`: not
/// copied out, as on a cluster node: the candidate's diff applied to the original here).
type Versions = Vec<(String, Option<Vec<u8>>, Option<Vec<u8>>, Option<Vec<u8>>)>;

fn versions(
    status: &InstanceStatus,
    gold: &str,
    candidate: &str,
    files: Option<&Path>,
    cache: &Path,
) -> Result<Versions, LabelError> {
    let source = status.source.as_deref().ok_or(LabelError::NoSource)?;
    let repo = Repo::open_or_clone(source, cache)?;
    let (repo, ids) = match &status.patch {
        // The patched commit of an imported task is in the build's clone: made again here.
        Some(applied) => {
            let (repo, ids) = repo.resolve_all(&[&status.base_commit], cache)?;
            let repo = repo.writable(cache)?;
            let base = ids.first().ok_or(LabelError::Unresolved)?.clone();
            let patched = etip_build::patch::reapply(&repo, &base, applied, &status.id)?;
            (repo, vec![base, patched])
        }
        None => repo.resolve_all(&[&status.base_commit, &status.patched_commit], cache)?,
    };
    let [base, patched] = ids.as_slice() else {
        return Err(LabelError::Unresolved);
    };
    let (gold_paths, _) = touched(status.language, gold)?;
    let (cand_paths, cand_after) = touched(status.language, candidate)?;
    let paths: BTreeSet<String> = gold_paths
        .into_iter()
        .chain(cand_paths.iter().cloned())
        .collect();
    let mut held = Vec::new();
    for p in paths {
        let original = repo.file_at(base, &p)?;
        let reference = repo.file_at(patched, &p)?;
        let cand = if cand_after.contains(&p) {
            match files {
                Some(files) => {
                    let path = files.join(&p);
                    Some(std::fs::read(&path).map_err(|error| LabelError::Read {
                        path: path.display().to_string(),
                        error,
                    })?)
                }
                None => applied(candidate, &p, original.as_deref())?,
            }
        } else if cand_paths.contains(&p) {
            None
        } else {
            original.clone()
        };
        held.push((p, original, reference, cand));
    }
    Ok(held)
}

/// The candidate's version of `path`: its diff applied to `original` in memory.
fn applied(
    candidate: &str,
    path: &str,
    original: Option<&[u8]>,
) -> Result<Option<Vec<u8>>, LabelError> {
    let diffs = etip_screen::diff::parse(candidate)?;
    match diffs.iter().find(|d| d.path() == path) {
        Some(d) => Ok(etip_screen::diff::apply(d, original)?),
        None => Ok(original.map(<[u8]>::to_vec)),
    }
}

/// What `etip eval` learns of an applied patch by reading it: the labels against the ground
/// truth and the reward-hack screen's verdict (rules §6).
#[derive(Debug, Clone)]
pub struct Reading {
    pub labels: Labels,
    pub hack: HackVerdict,
}

/// The labels of `candidate` (a patch that applied) on `status`, whose candidate files are under
/// `files` (see [`etip_eval::evaluate::CHANGED_FILES`]; `None`: its diff is applied to the
/// original here), and its screen. `cache`: where remote
/// sources are cloned.
pub fn read(
    status: &InstanceStatus,
    gold: &str,
    candidate: &str,
    files: Option<&Path>,
    cache: &Path,
) -> Result<Reading, LabelError> {
    let held = versions(status, gold, candidate, files, cache)?;
    let versions: Vec<FileVersions> = held
        .iter()
        .map(|(p, o, r, c)| FileVersions {
            path: p,
            original: o.as_deref(),
            reference: r.as_deref(),
            candidate: c.as_deref(),
        })
        .collect();
    let labels = labels(status.language, &versions)?;
    // The screen reads the files the candidate changes (the others are the original's).
    let (cand_paths, _) = touched(status.language, candidate)?;
    let changes: Vec<FileChange> = held
        .into_iter()
        .filter(|(p, ..)| cand_paths.contains(p))
        .map(|(path, original, _, candidate)| FileChange {
            path,
            original,
            candidate,
        })
        .collect();
    let test_patch = status.task.as_ref().and_then(|t| t.test_patch.as_deref());
    let ctx = crate::hack_check::context_of(status.language, &status.workloads, test_patch)?;
    let findings = etip_screen::screen(status.language, &changes, &ctx)?;
    Ok(Reading {
        labels,
        hack: HackVerdict::from_findings(findings),
    })
}
