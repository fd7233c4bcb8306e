//! The demo folder's files: the folder itself (marked as the demo's), the fixture repositories,
//! each step's printed output, the sample inputs, and the summary read back from what the steps
//! wrote.

use super::MARKER;
use crate::InputError;
use anyhow::Context;
use etip_fixtures::Kind;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Creates the demo folder, or accepts one an earlier demo made; refuses anything else.
pub(super) fn prepare(out: &Path) -> anyhow::Result<()> {
    if out.exists() {
        let meta = std::fs::symlink_metadata(out)?;
        let ours = out.join(MARKER).is_file();
        let empty = meta.is_dir() && std::fs::read_dir(out)?.next().is_none();
        if !meta.is_dir() || !(ours || empty) {
            return Err(InputError(format!(
                "{} exists and is not a demo folder (no {MARKER} in it); pass another --out",
                out.display()
            ))
            .into());
        }
    }
    std::fs::create_dir_all(out)
        .map_err(|e| InputError(format!("creating {}: {e}", out.display())))?;
    crate::output::write(
        &out.join(MARKER),
        "made by `etip demo`; a re-run reuses this folder\n",
    )
    .with_context(|| format!("writing {}", out.join(MARKER).display()))?;
    Ok(())
}

/// The fixture repository `kind` under `out/repos/`, written unless an earlier run wrote it.
pub(super) fn repo(out: &Path, kind: Kind) -> anyhow::Result<(PathBuf, Vec<String>)> {
    let dir = out.join("repos").join(kind.name());
    if dir.join(".git").is_dir() {
        // Written by an earlier run: fixed authors and dates give the same commits.
        let tmp = tempfile::tempdir()?;
        let want = etip_fixtures::write_repo(kind, &tmp.path().join("r"))?;
        return Ok((dir, want));
    }
    let commits = etip_fixtures::write_repo(kind, &dir)
        .with_context(|| format!("writing the fixture repository {}", dir.display()))?;
    Ok((dir, commits))
}

/// Runs one step's command with its output in `file` (and returns that output).
pub(super) fn capture(
    file: &Path,
    f: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<String> {
    let mut buf: Vec<u8> = Vec::new();
    let result = f(&mut buf);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    crate::output::write(file, &String::from_utf8_lossy(&buf))?;
    result?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Concatenates the candidates of every language into one file for `etip build`.
pub(super) fn join_candidates(files: &[PathBuf], to: &Path) -> anyhow::Result<usize> {
    let mut all = String::new();
    for f in files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            all.push_str(line);
            all.push('\n');
        }
    }
    crate::output::write(to, &all)?;
    Ok(all.lines().count())
}

/// The sample predictions for the Python `dedup` ETIP, in SWE-bench's format.
pub(super) fn sample_predictions(instance: &str) -> anyhow::Result<String> {
    let mut text = String::new();
    for sample in etip_fixtures::SAMPLES {
        let line = serde_json::json!({
            "instance_id": instance,
            "model_name_or_path": sample.model,
            "model_patch": sample.patch(),
        });
        text.push_str(&serde_json::to_string(&line)?);
        text.push('\n');
    }
    Ok(text)
}

/// The sample generated tests for the Python `dedup` ETIP, as `etip eval-test` reads them.
pub(super) fn sample_tests(instance: &str) -> anyhow::Result<String> {
    let mut text = String::new();
    for t in etip_fixtures::TEST_SAMPLES {
        let line = serde_json::json!({
            "instance_id": instance,
            "model_name_or_path": t.model,
            "test_patch": t.patch(),
            "test_classes": [t.classes],
        });
        text.push_str(&serde_json::to_string(&line)?);
        text.push('\n');
    }
    Ok(text)
}

fn jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<Vec<T>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// Reads the demo folder `out` back; scores the eval results under every rule.
pub(super) fn read_summary(
    out: &Path,
    repos: &[(String, PathBuf)],
    executor: &str,
) -> anyhow::Result<etip_report::demo::Summary> {
    let mut rs = Vec::new();
    for (lang, dir) in repos {
        let n = std::fs::read_to_string(out.join("mine").join(format!("{lang}.jsonl")))
            .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
            .unwrap_or(0);
        rs.push((lang.clone(), dir.clone(), n));
    }
    let (scores, not_scored) = etip_report::eval::scores(&out.join("eval/results.jsonl"));
    Ok(etip_report::demo::Summary {
        repos: rs,
        statuses: crate::records::read_statuses(&out.join("build/status.jsonl"))?,
        measurements: jsonl(&out.join("measure/measurements.jsonl"))?,
        results: jsonl(&out.join("eval/results.jsonl"))?,
        generated_tests: if out.join("eval-test/results.jsonl").is_file() {
            jsonl(&out.join("eval-test/results.jsonl"))?
        } else {
            Vec::new()
        },
        scores,
        not_scored,
        seconds: 0.0,
        executor: executor.to_string(),
    })
}
