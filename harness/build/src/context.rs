//! Build contexts: tar entries written by etip (fixed mode and mtime) and the trees of `git
//! archive` copied into one context.

use etip_docker::{LayerContext, LayerSpec};
use std::path::Path;

pub(crate) trait WithContext {
    fn with_context(self, ctx: impl Into<LayerContext>) -> (LayerSpec, LayerContext);
}

impl WithContext for LayerSpec {
    fn with_context(self, ctx: impl Into<LayerContext>) -> (LayerSpec, LayerContext) {
        (self, ctx.into())
    }
}

pub(crate) fn append_bytes<W: std::io::Write>(
    b: &mut tar::Builder<W>,
    path: &str,
    data: &[u8],
    mode: u32,
) -> Result<(), String> {
    let mut h = tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(mode);
    h.set_mtime(0);
    h.set_entry_type(tar::EntryType::Regular);
    b.append_data(&mut h, path, data)
        .map_err(|e| format!("adding {path} to the build context: {e}"))
}

pub(crate) fn append_dir<W: std::io::Write>(
    b: &mut tar::Builder<W>,
    path: &str,
) -> Result<(), String> {
    let mut h = tar::Header::new_gnu();
    h.set_size(0);
    h.set_mode(0o755);
    h.set_mtime(0);
    h.set_entry_type(tar::EntryType::Directory);
    b.append_data(&mut h, format!("{path}/"), std::io::empty())
        .map_err(|e| format!("adding {path}/ to the build context: {e}"))
}

/// Copies the entries of a `git archive` tar into the context; returns (files, bytes).
pub(crate) fn copy_tar<W: std::io::Write>(
    path: &Path,
    b: &mut tar::Builder<W>,
) -> Result<(usize, u64), String> {
    let f = std::fs::File::open(path).map_err(|e| format!("opening {}: {e}", path.display()))?;
    let mut archive = tar::Archive::new(f);
    let (mut files, mut bytes) = (0usize, 0u64);
    let entries = archive
        .entries()
        .map_err(|e| format!("reading {}: {e}", path.display()))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("reading {}: {e}", path.display()))?;
        let kind = entry.header().entry_type();
        let p = entry
            .path()
            .map_err(|e| format!("reading {}: {e}", path.display()))?
            .into_owned();
        let mut h = entry.header().clone();
        match kind {
            tar::EntryType::Regular | tar::EntryType::Directory => {
                if kind == tar::EntryType::Regular {
                    files += 1;
                    bytes += entry.size();
                }
                b.append_data(&mut h, &p, &mut entry)
                    .map_err(|e| format!("copying {} into the context: {e}", p.display()))?;
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(|e| format!("reading link {}: {e}", p.display()))?
                    .map(|t| t.into_owned())
                    .unwrap_or_default();
                b.append_link(&mut h, &p, &target)
                    .map_err(|e| format!("copying link {} into the context: {e}", p.display()))?;
            }
            _ => {}
        }
    }
    Ok((files, bytes))
}
