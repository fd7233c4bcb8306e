//! The input of `etip build`: ETIPs as JSON lines, checked before anything is built.

use crate::BuildError;
use etip_core::detector::{MAX_WORKLOAD_BYTES, Workload, workloads_problem};
use etip_core::instance::Language;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One ETIP to build: a line of `etips.jsonl` (the miner's `candidates.jsonl` works too: other
/// fields are ignored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EtipInput {
    pub id: String,
    pub language: Language,
    pub base_commit: String,
    /// The patched version's commit; empty when `patch` gives the patched version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub patched_commit: String,
    /// The patched version as a patch to `base_commit` (a unified diff: an imported task's gold
    /// patch), applied by `etip build` in its own clone ([`crate::patch`]); instead of
    /// `patched_commit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Local path or git URL of the repository.
    #[serde(default)]
    pub source: Option<String>,
    /// `owner/name` on GitHub, used when `source` is absent.
    #[serde(default)]
    pub repo: Option<String>,
    #[serde(default)]
    pub changed_modules: Option<Vec<String>>,
    /// Compiled-extension sources the patch changes (the miner's `--compiled-extensions`): the
    /// image must compile the project's extensions.
    #[serde(default)]
    pub extension_files: Vec<String>,
    /// Workloads the ETIP carries (detectors of kind `workload` for `etip measure`): inline
    /// scripts, or files relative to the ETIP file's folder, read in when the file is loaded.
    #[serde(default)]
    pub workloads: Vec<Workload>,
    /// The benchmark task the ETIP was imported from (`etip import`): carried into the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Box<etip_core::task::Task>>,
}

impl EtipInput {
    /// Reads JSON lines; relative local `source` paths are resolved against the file's folder when
    /// they exist there. Refuses a file without ETIPs, duplicate ids, root commits (the miner's
    /// null `base_commit`), and commits or ids that cannot be used.
    pub fn read_jsonl(path: &Path) -> Result<Vec<EtipInput>, BuildError> {
        let text =
            etip_core::bounded::read_to_string_capped(path, etip_core::bounded::MAX_INPUT_BYTES)
                .map_err(|source| BuildError::Read {
                    path: path.display().to_string(),
                    source,
                })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let shown = path.display().to_string();
        let mut out = Vec::new();
        let mut lines_of: HashMap<String, usize> = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = i + 1;
            let mut e: EtipInput =
                serde_json::from_str(line).map_err(|source| BuildError::Parse {
                    path: shown.clone(),
                    line: at,
                    source,
                })?;
            if let Some(problem) = e.problem() {
                return Err(BuildError::Invalid {
                    path: shown,
                    line: at,
                    id: e.id,
                    problem,
                });
            }
            if let Some(&first) = lines_of.get(&e.id) {
                return Err(BuildError::DuplicateId {
                    path: shown,
                    line: at,
                    first,
                    id: e.id,
                });
            }
            lines_of.insert(e.id.clone(), at);
            if let Err(problem) = read_workload_files(&mut e.workloads, dir) {
                return Err(BuildError::Invalid {
                    path: shown,
                    line: at,
                    id: e.id,
                    problem,
                });
            }
            match (&e.source, &e.repo) {
                (Some(s), _) => {
                    let p = Path::new(s);
                    if p.is_relative() && !p.exists() && dir.join(p).exists() {
                        e.source = Some(dir.join(p).to_string_lossy().into_owned());
                    }
                }
                (None, Some(r)) => e.source = Some(format!("https://github.com/{r}.git")),
                (None, None) => {
                    return Err(BuildError::NoSource {
                        path: shown,
                        line: at,
                        id: e.id,
                    });
                }
            }
            out.push(e);
        }
        if out.is_empty() {
            return Err(BuildError::Empty { path: shown });
        }
        Ok(out)
    }

    /// Why this ETIP cannot be built, if it cannot (checked before any engine or git call).
    pub fn problem(&self) -> Option<String> {
        if self.id.trim().is_empty() {
            return Some("the id is empty".into());
        }
        if let Some(p) = workloads_problem(&self.workloads) {
            return Some(p);
        }
        if self.language == Language::Java {
            for w in &self.workloads {
                if let Some(src) = &w.script
                    && etip_core::detector::java_workload_class(src).is_none()
                {
                    return Some(format!(
                        "workload {}: a Java ETIP's workload is the source of a `public class` with \
                         `public static void workload()` (and optionally `setup()`) or a `main` \
                         method; this text declares no public class",
                        w.name
                    ));
                }
            }
        }
        if is_null_commit(&self.base_commit) {
            return Some(format!(
                "base_commit is the null commit {}: the patched commit is a root commit, and a root commit has no original version to build or measure",
                self.base_commit
            ));
        }
        match (&self.patch, self.patched_commit.is_empty()) {
            (Some(_), false) => {
                return Some(
                    "give the patched version as patched_commit or as patch, not both".into(),
                );
            }
            (None, true) => {
                return Some("patched_commit (or patch) is missing".into());
            }
            (Some(p), true) if p.trim().is_empty() => {
                return Some("patch is empty".into());
            }
            _ => {}
        }
        let mut revs = vec![("base_commit", &self.base_commit)];
        if self.patch.is_none() {
            revs.push(("patched_commit", &self.patched_commit));
        }
        for (field, rev) in revs {
            if rev.is_empty() || rev.starts_with('-') || rev.contains(char::is_whitespace) {
                return Some(format!(
                    "{field} {rev:?} is not a commit (empty, blank inside or starting with `-`)"
                ));
            }
        }
        None
    }

    /// The repository to clone or open: `source`, else the GitHub URL of `repo`.
    pub(crate) fn source(&self) -> String {
        self.source
            .clone()
            .or_else(|| {
                self.repo
                    .as_ref()
                    .map(|r| format!("https://github.com/{r}.git"))
            })
            .unwrap_or_default()
    }
}

/// The null commit id (40 or 64 zeros) that git and the miner use for "no commit", e.g. the
/// parent of a root commit.
pub fn is_null_commit(rev: &str) -> bool {
    matches!(rev.len(), 40 | 64) && rev.bytes().all(|b| b == b'0')
}

/// Reads the script of every workload given by `file` (relative to `dir`, the ETIP file's
/// folder) into `script`: the status, and so `etip measure`, carries the text itself.
fn read_workload_files(workloads: &mut [Workload], dir: &Path) -> Result<(), String> {
    for w in workloads {
        let Some(file) = w.file.take() else {
            continue;
        };
        let path = if Path::new(&file).is_absolute() {
            PathBuf::from(&file)
        } else {
            dir.join(&file)
        };
        let text = etip_core::bounded::read_to_string_capped(&path, MAX_WORKLOAD_BYTES as u64)
            .map_err(|e| format!("workload {}: reading {}: {e}", w.name, path.display()))?;
        w.script = Some(text);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(lines: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.jsonl");
        std::fs::write(&p, lines).unwrap();
        (dir, p)
    }

    fn line(id: &str, base: &str, patched: &str) -> String {
        format!(
            "{{\"id\":{id:?},\"language\":\"java\",\"base_commit\":{base:?},\"patched_commit\":{patched:?},\"repo\":\"o/n\"}}\n"
        )
    }

    #[test]
    fn reads_candidates_with_extra_fields() {
        let (_dir, p) = write(
            "{\"id\":\"a\",\"language\":\"java\",\"base_commit\":\"b\",\"patched_commit\":\"c\",\"repo\":\"o/n\",\"score\":1.5,\"files\":[\"x\"]}\n\n\
             {\"id\":\"b\",\"language\":\"python\",\"base_commit\":\"b\",\"patched_commit\":\"c\",\"source\":\"/tmp/x\"}\n",
        );
        let e = EtipInput::read_jsonl(&p).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].source.as_deref(), Some("https://github.com/o/n.git"));
        assert_eq!(e[1].language, Language::Python);
        std::fs::write(
            &p,
            "{\"id\":\"a\",\"language\":\"java\",\"base_commit\":\"b\",\"patched_commit\":\"c\"}\n",
        )
        .unwrap();
        assert!(matches!(
            EtipInput::read_jsonl(&p),
            Err(BuildError::NoSource { line: 1, .. })
        ));
        std::fs::write(&p, "{\"id\":\"a\",\"language\":\"cobol\"}\n").unwrap();
        assert!(matches!(
            EtipInput::read_jsonl(&p),
            Err(BuildError::Parse { line: 1, .. })
        ));
    }

    #[test]
    fn the_patched_version_is_a_commit_or_a_patch_not_both() {
        let line = |rest: &str| {
            format!(
                "{{\"id\":\"p\",\"language\":\"python\",\"base_commit\":\"b\",\"repo\":\"o/n\"{rest}}}\n"
            )
        };
        let (_dir, p) = write(&line(",\"patch\":\"--- a/x.py\\n+++ b/x.py\\n\""));
        let e = EtipInput::read_jsonl(&p).unwrap();
        assert!(e[0].patched_commit.is_empty() && e[0].patch.is_some());
        for (rest, problem) in [
            (",\"patch\":\"d\",\"patched_commit\":\"c\"", "not both"),
            ("", "patched_commit (or patch) is missing"),
            (",\"patch\":\" \"", "patch is empty"),
        ] {
            std::fs::write(&p, line(rest)).unwrap();
            match EtipInput::read_jsonl(&p) {
                Err(BuildError::Invalid { problem: got, .. }) => {
                    assert!(got.contains(problem), "{got}")
                }
                other => panic!("{rest}: {other:?}"),
            }
        }
    }

    #[test]
    fn workload_files_are_read_relative_to_the_etip_file() {
        let line = |workloads: &str| {
            format!(
                "{{\"id\":\"w\",\"language\":\"python\",\"base_commit\":\"b\",\"patched_commit\":\"c\",\"repo\":\"o/n\",\"workloads\":{workloads}}}\n"
            )
        };
        let (dir, p) = write(&line(
            r#"[{"name":"dedup","file":"wl/dedup.py","repeat":3},{"name":"inline","script":"def workload(): pass"}]"#,
        ));
        std::fs::create_dir_all(dir.path().join("wl")).unwrap();
        std::fs::write(
            dir.path().join("wl/dedup.py"),
            "def workload():\n    pass\n",
        )
        .unwrap();
        let e = EtipInput::read_jsonl(&p).unwrap();
        let w = &e[0].workloads;
        assert_eq!(w[0].script.as_deref(), Some("def workload():\n    pass\n"));
        assert_eq!(w[0].file, None, "the text travels, not the path");
        assert_eq!(w[0].repeat(), 3);
        assert_eq!(w[1].script.as_deref(), Some("def workload(): pass"));
        // A missing file, a bad name, two sources, a Java workload without a public class: refused with the line.
        for (workloads, says) in [
            (r#"[{"name":"x","file":"wl/none.py"}]"#, "reading"),
            (r#"[{"name":"a b","script":"s"}]"#, "is not 1 to"),
            (
                r#"[{"name":"x","script":"s","file":"wl/dedup.py"}]"#,
                "not both",
            ),
            (r#"[{"name":"x","script":"s","number":3}]"#, "unknown field"),
        ] {
            std::fs::write(&p, line(workloads)).unwrap();
            let err = EtipInput::read_jsonl(&p).unwrap_err().to_string();
            assert!(err.contains(says), "{workloads}: {err}");
            assert!(err.contains(":1"), "{err}");
        }
        std::fs::write(
            &p,
            line(r#"[{"name":"x","script":"s"}]"#).replace("python", "java"),
        )
        .unwrap();
        let err = EtipInput::read_jsonl(&p).unwrap_err().to_string();
        assert!(err.contains("declares no public class"), "{err}");
        std::fs::write(
            &p,
            line(
                r#"[{"name":"x","script":"public class W { public static void workload() {} }"}]"#,
            )
            .replace("python", "java"),
        )
        .unwrap();
        assert_eq!(EtipInput::read_jsonl(&p).unwrap()[0].workloads.len(), 1);
    }

    #[test]
    fn empty_files_duplicate_ids_and_root_commits_are_refused() {
        let (_dir, p) = write("\n  \n");
        let err = EtipInput::read_jsonl(&p).unwrap_err();
        assert!(matches!(err, BuildError::Empty { .. }), "{err}");
        assert!(err.to_string().starts_with("no ETIPs in "), "{err}");

        std::fs::write(
            &p,
            line("a", "b", "c") + &line("x", "b", "c") + &line("a", "c", "d"),
        )
        .unwrap();
        let err = EtipInput::read_jsonl(&p).unwrap_err();
        assert!(
            matches!(
                err,
                BuildError::DuplicateId {
                    line: 3,
                    first: 1,
                    ..
                }
            ),
            "{err}"
        );

        let zeros = "0".repeat(40);
        std::fs::write(&p, line("r", &zeros, "c")).unwrap();
        let err = EtipInput::read_jsonl(&p).unwrap_err().to_string();
        assert!(err.contains("root commit has no original version"), "{err}");
        assert!(is_null_commit(&"0".repeat(64)) && !is_null_commit("000"));

        for (base, patched) in [("", "c"), ("b", "--output=x"), ("a b", "c")] {
            std::fs::write(&p, line("bad", base, patched)).unwrap();
            assert!(
                matches!(
                    EtipInput::read_jsonl(&p),
                    Err(BuildError::Invalid { line: 1, .. })
                ),
                "{base:?} {patched:?}"
            );
        }
        std::fs::write(&p, line(" ", "b", "c")).unwrap();
        assert!(matches!(
            EtipInput::read_jsonl(&p),
            Err(BuildError::Invalid { .. })
        ));
    }
}
