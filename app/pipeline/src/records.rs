//! Reading the records earlier stages wrote: `etip build`'s `status.jsonl` and `etip select`'s
//! `selection.jsonl`. A malformed line is bad input (exit 2) and names the file and line.

use crate::InputError;
use etip_core::instance::InstanceStatus;
use etip_core::selection::{SELECTION_SCHEMA_VERSION, TestSelection};
use std::collections::BTreeMap;
use std::path::Path;

/// Reads `status.jsonl`; a later line of an id replaces an earlier one (a rebuild appends).
pub fn read_statuses(path: &Path) -> anyhow::Result<Vec<InstanceStatus>> {
    let text = crate::input::read_text_capped(path, crate::input::MAX_INPUT_BYTES)?;
    let mut out: Vec<InstanceStatus> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let s: InstanceStatus = serde_json::from_str(line).map_err(|e| {
            InputError(format!(
                "{}:{}: not a status line of `etip build` ({e})",
                path.display(),
                i + 1
            ))
        })?;
        match out.iter_mut().find(|o| o.id == s.id) {
            Some(o) => *o = s,
            None => out.push(s),
        }
    }
    if out.is_empty() {
        return Err(InputError(format!("{} holds no instance", path.display())).into());
    }
    Ok(out)
}

/// The statuses of `path` with one of `ids` (all when `ids` is empty); an id `path` does not
/// hold is bad input.
pub fn select_statuses(path: &Path, ids: &[String]) -> anyhow::Result<Vec<InstanceStatus>> {
    let mut statuses = read_statuses(path)?;
    for id in ids {
        if !statuses.iter().any(|s| &s.id == id) {
            return Err(InputError(format!("no ETIP with id {id} in {}", path.display())).into());
        }
    }
    if !ids.is_empty() {
        statuses.retain(|s| ids.contains(&s.id));
    }
    Ok(statuses)
}

/// The file of a selection argument: `selection.jsonl` in a folder, or the file itself.
pub fn selection_file(path: &Path) -> std::path::PathBuf {
    if path.is_dir() {
        path.join("selection.jsonl")
    } else {
        path.to_path_buf()
    }
}

/// The selections of a `selection.jsonl` (or of the folder holding one), by id; a later line of an
/// id replaces an earlier one.
pub fn read_selections(path: &Path) -> anyhow::Result<BTreeMap<String, TestSelection>> {
    let file = selection_file(path);
    let text = crate::input::read_text_capped(&file, crate::input::MAX_INPUT_BYTES)?;
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let s: TestSelection = serde_json::from_str(line).map_err(|e| {
            InputError(format!(
                "{}:{}: not a line of `etip select` ({e})",
                file.display(),
                i + 1
            ))
        })?;
        if s.schema_version != SELECTION_SCHEMA_VERSION {
            return Err(InputError(format!(
                "{}:{}: selection schema version {} (this etip reads {})",
                file.display(),
                i + 1,
                s.schema_version,
                SELECTION_SCHEMA_VERSION
            ))
            .into());
        }
        out.insert(s.id.clone(), s);
    }
    Ok(out)
}

/// The build configuration of a `--config` file, or the defaults; a bad file is bad input.
pub fn build_config(path: Option<&Path>) -> anyhow::Result<etip_build::config::BuildConfig> {
    match path {
        Some(p) => {
            etip_build::config::BuildConfig::load(p).map_err(|e| InputError(e.to_string()).into())
        }
        None => Ok(etip_build::config::BuildConfig::default()),
    }
}
