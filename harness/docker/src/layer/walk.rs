//! The container-diff walk: what the build container reports about the files it changed, and the
//! comparison of its file lists. [`read_collected`] reads the downloaded stage, [`whiteouts`]
//! compares the parent's list with the one after the command, and [`TreeCache`] keeps images'
//! lists so a later layer on the same parent skips listing them.

use crate::LayerError;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Version of the file lists' format and of the walk's exclusions (part of cache file names).
const TREE_VERSION: &str = "tree-v1";

/// Per-image lists of files (`<dir>/tree-v1-<image id hex>.list`), so a layer built on an image
/// made earlier need not walk its parent's files again. Image ids are content hashes: a list is
/// valid for as long as its file exists.
#[derive(Debug, Clone)]
pub struct TreeCache {
    dir: PathBuf,
}

impl TreeCache {
    pub fn new(dir: impl Into<PathBuf>) -> TreeCache {
        TreeCache { dir: dir.into() }
    }

    fn path(&self, image_id: &str) -> PathBuf {
        let hex = image_id.strip_prefix("sha256:").unwrap_or(image_id);
        self.dir.join(format!("{TREE_VERSION}-{hex}.list"))
    }

    /// The list of `image_id`'s files, when known.
    pub fn get(&self, image_id: &str) -> Option<Vec<u8>> {
        let data = std::fs::read(self.path(image_id)).ok()?;
        // A valid list is empty or ends with its last entry's NUL.
        (data.is_empty() || data.ends_with(&[0])).then_some(data)
    }

    /// Stores the list of `image_id`'s files (atomically; failures only cost a later walk).
    pub fn put(&self, image_id: &str, list: &[u8]) {
        let path = self.path(image_id);
        if path.exists() || std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        if let Ok(mut tmp) = tempfile::NamedTempFile::new_in(&self.dir) {
            use std::io::Write;
            if tmp.write_all(list).is_ok() {
                let _ = tmp.persist(&path);
            }
        }
    }
}

/// What the build container left in its stage (downloaded to a file on the host).
#[derive(Debug)]
pub struct Collected {
    /// The layer command's exit code.
    pub rc: i64,
    /// The parent's files and the files after the command: `<type> <path>\0` per entry (find's `%y %P`).
    pub before: Vec<u8>,
    pub after: Vec<u8>,
    /// Where the changed files' tar (GNU tar's output) lies in the downloaded file.
    pub layer_offset: u64,
    pub layer_len: u64,
    /// Seconds each step of the wrapper took (`listed`, `extracted`, `ran`, `walked`, `archived`).
    pub steps: Vec<(String, f64)>,
}

/// Reads the stage archive (`out/0-rc`, `out/1-before.list`, `out/1-after.list`, `out/2-layer.tar`).
pub fn read_collected(path: &Path) -> Result<Collected, LayerError> {
    let err = |source| LayerError::Stage { source };
    let file = std::fs::File::open(path).map_err(err)?;
    let mut archive = tar::Archive::new(file);
    let mut rc = None;
    let (mut before, mut after) = (None, None);
    let mut layer = None;
    let mut steps = Vec::new();
    for entry in archive.entries_with_seek().map_err(err)? {
        let mut entry = entry.map_err(err)?;
        let name = entry.path().map_err(err)?.to_string_lossy().into_owned();
        let name = name.rsplit('/').next().unwrap_or("").to_string();
        match name.as_str() {
            "0-rc" => {
                let mut s = String::new();
                entry.read_to_string(&mut s).map_err(err)?;
                rc = Some(
                    s.trim()
                        .parse::<i64>()
                        .map_err(|_| LayerError::ExitCode { text: s.clone() })?,
                );
            }
            "1-before.list" | "1-after.list" => {
                let mut v = Vec::new();
                entry.read_to_end(&mut v).map_err(err)?;
                if name == "1-before.list" {
                    before = Some(v);
                } else {
                    after = Some(v);
                }
            }
            "2-layer.tar" => layer = Some((entry.raw_file_position(), entry.size())),
            "0-times" => {
                let mut s = String::new();
                entry.read_to_string(&mut s).map_err(err)?;
                steps = step_times(&s);
            }
            _ => {}
        }
    }
    let missing = |what| LayerError::Missing { what };
    let rc = rc.ok_or(missing("record the command's exit code"))?;
    let before = before.ok_or(missing("list the parent's files"))?;
    let (after, (layer_offset, layer_len)) = if rc == 0 {
        (
            after.ok_or(missing("list its files"))?,
            layer.ok_or(missing("archive its changes"))?,
        )
    } else {
        (Vec::new(), (0, 0))
    };
    Ok(Collected {
        rc,
        before,
        after,
        layer_offset,
        layer_len,
        steps,
    })
}

/// Durations of the wrapper's steps from its `<step> <unix time>` lines.
fn step_times(text: &str) -> Vec<(String, f64)> {
    let marks: Vec<(&str, f64)> = text
        .lines()
        .filter_map(|l| {
            let (name, t) = l.split_once(' ')?;
            Some((name, t.trim().parse().ok()?))
        })
        .collect();
    marks
        .windows(2)
        .map(|w| (w[1].0.to_string(), w[1].1 - w[0].1))
        .collect()
}

/// Parses a file list (`<type> <path>\0` per entry) into path → type.
pub fn parse_tree(list: &[u8]) -> Result<HashMap<&[u8], u8>, LayerError> {
    let mut out = HashMap::new();
    for rec in list.split(|b| *b == 0) {
        if rec.is_empty() {
            continue;
        }
        match rec {
            [kind, b' ', path @ ..] if !path.is_empty() => {
                out.insert(path, *kind);
            }
            _ => {
                return Err(LayerError::FileList {
                    entry: String::from_utf8_lossy(rec).into_owned(),
                });
            }
        }
    }
    Ok(out)
}

/// Whiteout files (`<dir>/.wh.<name>`, sorted) for the paths of `before` that are gone in
/// `after`: only the topmost deleted path, and only where its directory is still a directory (a
/// directory replaced by a file or link is replaced by that entry as a whole).
pub fn whiteouts(before: &[u8], after: &[u8]) -> Result<Vec<Vec<u8>>, LayerError> {
    let before = parse_tree(before)?;
    let after = parse_tree(after)?;
    let mut out = Vec::new();
    for path in before.keys() {
        if after.contains_key(path) {
            continue;
        }
        let (dir, name) = match path.iter().rposition(|b| *b == b'/') {
            Some(i) => (&path[..i], &path[i + 1..]),
            None => (&path[..0], &path[..]),
        };
        if !dir.is_empty() && after.get(dir) != Some(&b'd') {
            continue;
        }
        let mut w = Vec::with_capacity(path.len() + 4);
        if !dir.is_empty() {
            w.extend_from_slice(dir);
            w.push(b'/');
        }
        w.extend_from_slice(b".wh.");
        w.extend_from_slice(name);
        out.push(w);
    }
    out.sort();
    Ok(out)
}

/// Number of entries of a file list (for logs).
pub fn tree_len(list: &[u8]) -> usize {
    list.iter().filter(|b| **b == 0).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[(&str, char)]) -> Vec<u8> {
        let mut v = Vec::new();
        for (p, t) in entries {
            v.push(*t as u8);
            v.push(b' ');
            v.extend_from_slice(p.as_bytes());
            v.push(0);
        }
        v
    }

    fn strs(v: Vec<Vec<u8>>) -> Vec<String> {
        v.into_iter()
            .map(|p| String::from_utf8(p).unwrap())
            .collect()
    }

    #[test]
    fn whiteouts_only_for_topmost_deleted_paths_in_surviving_directories() {
        let before = list(&[
            ("etc", 'd'),
            ("etc/motd", 'f'),
            ("etc/keep", 'f'),
            ("opt", 'd'),
            ("opt/gone", 'd'),
            ("opt/gone/a", 'f'),
            ("opt/gone/sub", 'd'),
            ("opt/gone/sub/b", 'f'),
            ("srv", 'd'),
            ("srv/x", 'f'),
            ("top", 'f'),
            ("var", 'd'),
            ("var/lib", 'd'),
            ("var/lib/old", 'l'),
        ]);
        let after = list(&[
            ("etc", 'd'),
            ("etc/keep", 'f'),
            ("etc/new", 'f'),
            ("opt", 'd'),
            // srv became a file: its old entries go with it, no whiteout inside it.
            ("srv", 'f'),
            ("var", 'd'),
            ("var/lib", 'd'),
        ]);
        assert_eq!(
            strs(whiteouts(&before, &after).unwrap()),
            [".wh.top", "etc/.wh.motd", "opt/.wh.gone", "var/lib/.wh.old"]
        );
        assert!(whiteouts(&after, &after).unwrap().is_empty());
        assert!(whiteouts(b"", b"").unwrap().is_empty());
        assert!(whiteouts(b"dnopath\0", b"").is_err());
    }

    #[test]
    fn whiteouts_keep_odd_names() {
        let before = b"d dir\0f dir/a b\nc\0f dir/\xff\0".to_vec();
        let after = b"d dir\0".to_vec();
        let w = whiteouts(&before, &after).unwrap();
        assert_eq!(
            w,
            vec![b"dir/.wh.a b\nc".to_vec(), b"dir/.wh.\xff".to_vec()]
        );
    }

    #[test]
    fn tree_cache_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let c = TreeCache::new(dir.path().join("trees"));
        assert!(c.get("sha256:abc").is_none());
        c.put("sha256:abc", b"d etc\0");
        assert_eq!(c.get("sha256:abc").unwrap(), b"d etc\0");
        // A truncated list is not used.
        std::fs::write(c.path("sha256:def"), b"d et").unwrap();
        assert!(c.get("sha256:def").is_none());
    }
}
