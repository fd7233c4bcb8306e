//! The `import` stage: a task dataset of the field (SWE-bench, SWE-fficiency, GSO; JSON lines or
//! JSON) becomes `etips.jsonl` for `etip build`. Each task keeps its gold patch (built by applying
//! it to the base commit in etip's own clone) or its expert commit, its workloads and the task as
//! given ([`etip_tasks`]); the repository is the `--source` clone, a mirror under a `--source`
//! folder, or GitHub's by `repo`.

use crate::InputError;
use crate::output::{self, Named, distinct};
use etip_build::EtipInput;
use etip_core::Language;
use etip_core::task::TaskFormat;
use etip_tasks::{ImportedTask, Refused};
use std::path::{Path, PathBuf};

/// What to import.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportConfig {
    pub format: TaskFormat,
    pub file: PathBuf,
    /// A clone of the tasks' repository, or a folder of clones (`owner+name`, `owner__name`,
    /// `owner/name` or `name`, each optionally ending in `.git`, or holding one git folder);
    /// `None`: GitHub's, by each task's `repo`.
    pub source: Option<PathBuf>,
    pub out: PathBuf,
    pub language: Language,
    /// The benchmark's environment specs per repository version (SWE-bench's shape, as JSON).
    pub specs: Option<PathBuf>,
}

/// One task written, with what the reader noticed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Written {
    pub id: String,
    pub repo: String,
    pub source: String,
    /// `patch` or `commit`.
    pub patched: &'static str,
    pub workloads: usize,
    pub warnings: Vec<String>,
}

/// A task not imported.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NotImported {
    pub index: usize,
    pub id: Option<String>,
    pub problem: String,
}

/// What the import did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ImportSummary {
    pub format: &'static str,
    pub file: String,
    pub out: String,
    pub written: Vec<Written>,
    pub refused: Vec<NotImported>,
}

/// Reads `cfg.file`, converts every task and writes the ETIPs (atomically) to `cfg.out`. Tasks
/// that cannot be imported are listed in the summary, not written; a file with none that can
/// is bad input.
pub fn import(cfg: &ImportConfig) -> anyhow::Result<ImportSummary> {
    let mut paths = vec![
        Named::reads("the dataset", &cfg.file),
        Named::writes("--out", &cfg.out),
    ];
    if let Some(s) = &cfg.source {
        paths.push(Named::reads("--source", s));
    }
    if let Some(s) = &cfg.specs {
        paths.push(Named::reads("--specs", s));
    }
    distinct(&paths)?;
    output::check(&cfg.out)?;
    let records = etip_tasks::read_records(&cfg.file).map_err(|e| InputError(e.to_string()))?;
    let mut imported = etip_tasks::import(cfg.format, records, cfg.language);
    if let Some(path) = &cfg.specs {
        etip_tasks::specs::read_specs(path)
            .map_err(|e| InputError(format!("--specs: {e}")))?
            .attach(&mut imported);
    }
    let mut refused: Vec<NotImported> = imported.refused.into_iter().map(not_imported).collect();
    let mut written = Vec::new();
    let mut lines = String::new();
    let repos: std::collections::BTreeSet<&str> =
        imported.tasks.iter().map(|t| t.repo.as_str()).collect();
    let single = match &cfg.source {
        Some(s) if is_git_dir(s) => Some(s.clone()),
        _ => None,
    };
    for t in &imported.tasks {
        let source = match (&cfg.source, &single) {
            (_, Some(repo)) => {
                let mut t_warnings = Vec::new();
                if repos.len() > 1 {
                    t_warnings.push(format!(
                        "the tasks name {} repositories and --source is one clone",
                        repos.len()
                    ));
                }
                Ok((absolute(repo), t_warnings))
            }
            (Some(folder), None) => find_clone(folder, &t.repo)
                .map(|p| (absolute(&p), Vec::new()))
                .ok_or_else(|| {
                    format!(
                        "no clone of {} under {} (looked for {})",
                        t.repo,
                        folder.display(),
                        candidates(&t.repo).join(", ")
                    )
                }),
            (None, None) => Ok((format!("https://github.com/{}.git", t.repo), Vec::new())),
        };
        let (source, extra) = match source {
            Ok(s) => s,
            Err(problem) => {
                refused.push(NotImported {
                    index: t.index,
                    id: Some(t.id.clone()),
                    problem,
                });
                continue;
            }
        };
        let input = etip_input(t, &source);
        if let Some(problem) = input.problem() {
            refused.push(NotImported {
                index: t.index,
                id: Some(t.id.clone()),
                problem,
            });
            continue;
        }
        lines.push_str(&serde_json::to_string(&input)?);
        lines.push('\n');
        let mut warnings = t.warnings.clone();
        warnings.extend(extra);
        written.push(Written {
            id: t.id.clone(),
            repo: t.repo.clone(),
            source,
            patched: if t.patch.is_some() { "patch" } else { "commit" },
            workloads: t.workloads.len(),
            warnings,
        });
    }
    if written.is_empty() {
        let first = refused
            .first()
            .map(|r| {
                format!(
                    ": task {} ({}): {}",
                    r.index,
                    r.id.as_deref().unwrap_or("no id"),
                    r.problem
                )
            })
            .unwrap_or_default();
        return Err(InputError(format!(
            "{}: no task could be imported as {}{first}",
            cfg.file.display(),
            cfg.format.as_str()
        ))
        .into());
    }
    output::write(&cfg.out, &lines)?;
    refused.sort_by_key(|r| r.index);
    Ok(ImportSummary {
        format: cfg.format.as_str(),
        file: cfg.file.display().to_string(),
        out: cfg.out.display().to_string(),
        written,
        refused,
    })
}

fn not_imported(r: Refused) -> NotImported {
    NotImported {
        index: r.index,
        id: r.id,
        problem: r.problem,
    }
}

/// The ETIP record of an imported task.
pub fn etip_input(t: &ImportedTask, source: &str) -> EtipInput {
    EtipInput {
        id: t.id.clone(),
        language: t.language,
        base_commit: t.base_commit.clone(),
        patched_commit: t.patched_commit.clone().unwrap_or_default(),
        patch: t.patch.clone(),
        source: Some(source.to_string()),
        repo: Some(t.repo.clone()),
        changed_modules: None,
        extension_files: Vec::new(),
        workloads: t.workloads.clone(),
        task: Some(Box::new(t.task.clone())),
    }
}

fn absolute(p: &Path) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// A git repository: a work tree with `.git`, or a bare repository.
fn is_git_dir(p: &Path) -> bool {
    p.join(".git").exists() || (p.join("HEAD").is_file() && p.join("objects").is_dir())
}

/// The folder names a clone of `repo` (`owner/name`) may have.
fn candidates(repo: &str) -> Vec<String> {
    let (owner, name) = repo.split_once('/').unwrap_or(("", repo));
    let mut out = Vec::new();
    for base in [
        format!("{owner}+{name}"),
        format!("{owner}__{name}"),
        format!("{owner}/{name}"),
        name.to_string(),
    ] {
        out.push(format!("{base}.git"));
        out.push(base);
    }
    out
}

/// The clone of `repo` under `folder`: a candidate folder that is a git repository, or that
/// holds exactly one.
pub fn find_clone(folder: &Path, repo: &str) -> Option<PathBuf> {
    for c in candidates(repo) {
        let p = folder.join(&c);
        if !p.is_dir() {
            continue;
        }
        if is_git_dir(&p) {
            return Some(p);
        }
        let inner: Vec<PathBuf> = std::fs::read_dir(&p)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir() && is_git_dir(p))
            .collect();
        if let [one] = inner.as_slice() {
            return Some(one.clone());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_are_found_by_the_names_mirrors_have() {
        let dir = tempfile::tempdir().unwrap();
        let bare = dir.path().join("psf+requests/abc.git");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(find_clone(dir.path(), "psf/requests"), Some(bare));
        let work = dir.path().join("click");
        std::fs::create_dir_all(work.join(".git")).unwrap();
        assert_eq!(find_clone(dir.path(), "pallets/click"), Some(work));
        assert_eq!(find_clone(dir.path(), "sympy/sympy"), None);
    }
}
