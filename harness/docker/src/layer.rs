//! Image layers without `docker commit`: the pieces of [`Engine::build_layer`](crate::Engine::build_layer).
//!
//! With a storage driver that has no native diff (fuse-overlayfs, vfs), `docker commit` compares the
//! container's whole filesystem with its image's, file by file: seconds per layer even when the
//! command changed one file. etip instead lets the build container report what it changed and
//! hands the engine a ready layer:
//!
//! 1. etip uploads, at [`STAGE`], the build context as one tar file (and, when it has it, the list
//!    of the parent image's files from an earlier build, see [`TreeCache`]);
//! 2. the container runs [`WRAPPER`]: it lists the parent's files (paths and types) unless the list
//!    was uploaded, makes a time stamp, extracts the context at `/`, runs the layer's command, lists
//!    the files again and archives (GNU tar) every path whose status-change time (ctime) is newer
//!    than the stamp: created, written, chmod-ed, renamed or copied-up files and directories;
//! 3. etip downloads the stage (archive API), adds a whiteout (`.wh.<name>`) for each path the
//!    command deleted from the parent ([`whiteouts`]), computes the layer's diff id (sha256 of the
//!    exact bytes) and writes the image config: the parent's config with the new diff id appended
//!    to `rootfs.diff_ids`, a history entry, the labels, `WorkingDir` and `Cmd` ([`image_config`]);
//! 4. the engine's image load (`POST /images/load`) gets a docker-save archive with the config,
//!    `manifest.json` and the new layer tar only: the loader finds the parent's layers by chain id
//!    and never reads their (absent) tar files (moby `image/tarexport/load.go`), and applies the
//!    new tar as is.
//!
//! The stage and the container's own mounts (`/proc`, `/sys`, `/dev`, `/.dockerenv`, `/etc/hosts`,
//! `/etc/hostname`, `/etc/resolv.conf`, as `docker commit` leaves them out too) are not part of the
//! layer, and neither is anything under `/tmp`: the image keeps its parent's `/tmp`.
//!
//! A layer may name *capture roots* ([`LayerSpec::capture`](crate::LayerSpec::capture)): then only
//! the files under them are listed, archived and deleted, and nothing else the command changed is
//! kept (an instance layer keeps its source trees and build outputs under `/work` and `/opt/etip`;
//! the caches a build writes elsewhere stay out). Both walks then cover only those folders instead
//! of the whole filesystem (0.9 s of an instance build on fuse-overlayfs).

use crate::EngineError;
use bollard::models::{ImageHistoryResponseItem, ImageInspect};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The container environment entry that restricts a layer to its capture roots (absolute folders,
/// not `/`, without blanks or glob characters), or an error naming the bad root.
pub fn roots_env(capture: &[String]) -> Result<Option<String>, String> {
    if capture.is_empty() {
        return Ok(None);
    }
    let mut rel = Vec::with_capacity(capture.len());
    for root in capture {
        let r = root.trim_end_matches('/');
        let ok = r.starts_with('/')
            && r.len() > 1
            && !r.split('/').any(|c| c == "." || c == "..")
            && r.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/._-+@".contains(&b));
        if !ok {
            return Err(format!(
                "capture root {root:?} must be an absolute folder other than / without blanks or \
                 glob characters"
            ));
        }
        rel.push(&r[1..]);
    }
    Ok(Some(format!("ETIP_LAYER_ROOTS={}", rel.join(" "))))
}

/// Folder of the build container where the context, the lists and the layer tar are staged.
pub const STAGE: &str = "/.etip-layer";

/// The build container's command: `sh -c WRAPPER etip-layer <command...>`. Exits non-zero only when
/// making the layer failed; the command's own exit code is written to `out/0-rc`. With
/// `ETIP_LAYER_ROOTS` set (see [`roots_env`]) only those folders are listed and archived.
pub const WRAPPER: &str = r#"L=/.etip-layer
O=$L/out
fail() { echo "etip: making the layer failed: $*" >&2; exit 1; }
mark() { echo "$1 $(date +%s.%N)" >> $O/0-times; }
mark start
# The whole filesystem, or only the capture roots (ETIP_LAYER_ROOTS, relative to /), each listed
# path relative to / either way (find's %P from /, %p from the roots).
if [ -n "${ETIP_LAYER_ROOTS:-}" ]; then F='%p'; else F='%P'; fi
walk() {
  if [ -n "${ETIP_LAYER_ROOTS:-}" ]; then
    set -f
    r=""
    for d in $ETIP_LAYER_ROOTS; do
      if [ -e "/$d" ] || [ -L "/$d" ]; then r="$r $d"; fi
    done
    set +f
    [ -n "$r" ] || return 0
    (cd / && find $r -xdev "$@")
  else
    find / -xdev -mindepth 1 \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path $L \
      -o -path /.dockerenv -o -path /etc/hosts -o -path /etc/hostname -o -path /etc/resolv.conf \) \
      -prune -o "$@"
  fi
}
if [ ! -f $O/1-before.list ]; then
  walk -printf "%y $F\0" > $O/1-before.list || fail "listing the parent image's files (the image needs GNU find)"
fi
mark listed
touch $L/stamp || fail "cannot write $L"
n=0
until [ -n "$(find $L/probe -cnewer $L/stamp 2>/dev/null)" ]; do
  n=$((n + 1))
  [ $n -lt 10000 ] || fail "the file time stamps do not advance"
  touch $L/probe || fail "cannot write $L"
done
tar -xpf $L/context.tar -C / || fail "extracting the build context (the image needs GNU tar)"
rm -f $L/context.tar
mark extracted
"$@"
rc=$?
mark ran
echo $rc > $O/0-rc
[ $rc -eq 0 ] || exit 0
: > $L/changed.list
: > $O/1-after.list
walk \( -fprintf $O/1-after.list "%y $F\0" , -cnewer $L/stamp -fprintf $L/changed.list "$F\0" \) \
  || fail "listing the changed files"
mark walked
tar -C / -cf $O/2-layer.tar --format=posix --pax-option=delete=atime,delete=ctime,delete=mtime \
  --xattrs --xattrs-include=security.capability \
  --no-recursion --null --verbatim-files-from -T $L/changed.list
t=$?
[ $t -le 1 ] || fail "archiving the changed files (tar exit $t)"
mark archived
"#;

/// Version of the file lists' format and of the walk's exclusions (part of cache file names).
const TREE_VERSION: &str = "tree-v1";

/// The build container's command for a layer command.
pub fn wrapped_command(cmd: &[String]) -> Vec<String> {
    let mut v = vec![
        "sh".to_string(),
        "-c".to_string(),
        WRAPPER.to_string(),
        "etip-layer".to_string(),
    ];
    v.extend(cmd.iter().cloned());
    v
}

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

/// A piece of a streamed request body: bytes in memory or a range of a file.
pub enum Piece {
    Bytes(Bytes),
    File {
        path: PathBuf,
        offset: u64,
        len: u64,
    },
}

/// Streams pieces in order (file ranges in 256 KiB chunks).
pub fn stream_pieces(pieces: Vec<Piece>) -> impl Stream<Item = Result<Bytes, std::io::Error>> {
    futures_util::stream::iter(pieces).flat_map(|piece| match piece {
        Piece::Bytes(b) => futures_util::stream::once(async move { Ok(b) }).boxed(),
        Piece::File { path, offset, len } => {
            let state = (None::<tokio::fs::File>, path, offset, len);
            futures_util::stream::try_unfold(state, |(file, path, offset, left)| async move {
                use tokio::io::{AsyncReadExt, AsyncSeekExt};
                if left == 0 {
                    return Ok(None);
                }
                let mut file = match file {
                    Some(f) => f,
                    None => {
                        let mut f = tokio::fs::File::open(&path).await?;
                        f.seek(SeekFrom::Start(offset)).await?;
                        f
                    }
                };
                let mut buf = vec![0u8; left.min(256 * 1024) as usize];
                let n = file.read(&mut buf).await?;
                if n == 0 {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("{} ended early", path.display()),
                    ));
                }
                buf.truncate(n);
                Ok(Some((
                    Bytes::from(buf),
                    (Some(file), path, offset, left - n as u64),
                )))
            })
            .boxed()
        }
    })
}

/// A ustar header block for a short path.
fn header(path: &str, size: u64, mode: u32, kind: tar::EntryType) -> Result<Bytes, String> {
    let mut h = tar::Header::new_ustar();
    h.set_path(path)
        .map_err(|e| format!("tar header for {path}: {e}"))?;
    h.set_size(size);
    h.set_mode(mode);
    h.set_mtime(0);
    h.set_uid(0);
    h.set_gid(0);
    h.set_entry_type(kind);
    h.set_cksum();
    Ok(Bytes::copy_from_slice(h.as_bytes()))
}

/// Zero bytes that pad `size` bytes of entry data to a whole 512-byte block.
fn padding(size: u64) -> Bytes {
    Bytes::from(vec![0u8; ((512 - size % 512) % 512) as usize])
}

fn file_entry(pieces: &mut Vec<Piece>, path: &str, data: Bytes) -> Result<(), String> {
    pieces.push(Piece::Bytes(header(
        path,
        data.len() as u64,
        0o644,
        tar::EntryType::Regular,
    )?));
    let pad = padding(data.len() as u64);
    pieces.push(Piece::Bytes(data));
    pieces.push(Piece::Bytes(pad));
    Ok(())
}

/// The tar uploaded to `/` of the build container: the stage with the context as one tar file
/// (extracted by the wrapper after its time stamp), when known the parent's file list, and the
/// build container's own files under `/tmp` ([`crate::BuildContainer`], never archived).
pub fn upload_pieces(
    context: &crate::LayerContext,
    parent_tree: Option<Vec<u8>>,
    container: &crate::BuildContainer,
) -> Result<Vec<Piece>, String> {
    let stage = STAGE.trim_start_matches('/');
    let mut pieces = Vec::new();
    for dir in [format!("{stage}/"), format!("{stage}/out/")] {
        pieces.push(Piece::Bytes(header(
            &dir,
            0,
            0o777,
            tar::EntryType::Directory,
        )?));
    }
    let ctx_path = format!("{stage}/context.tar");
    match context {
        crate::LayerContext::Bytes(b) => {
            file_entry(&mut pieces, &ctx_path, Bytes::from(b.clone()))?
        }
        crate::LayerContext::File(path) => {
            let len = std::fs::metadata(path)
                .map_err(|e| format!("reading {}: {e}", path.display()))?
                .len();
            pieces.push(Piece::Bytes(header(
                &ctx_path,
                len,
                0o644,
                tar::EntryType::Regular,
            )?));
            pieces.push(Piece::File {
                path: path.clone(),
                offset: 0,
                len,
            });
            pieces.push(Piece::Bytes(padding(len)));
        }
    }
    if let Some(list) = parent_tree {
        file_entry(
            &mut pieces,
            &format!("{stage}/out/1-before.list"),
            Bytes::from(list),
        )?;
    }
    for dir in container.folders() {
        pieces.push(Piece::Bytes(header(
            &dir,
            0,
            0o755,
            tar::EntryType::Directory,
        )?));
    }
    for f in &container.files {
        let path = f.path.trim_start_matches('/');
        let len = f.data.len() as u64;
        pieces.push(Piece::Bytes(header(
            path,
            len,
            f.mode,
            tar::EntryType::Regular,
        )?));
        pieces.push(Piece::Bytes(Bytes::from(f.data.clone())));
        pieces.push(Piece::Bytes(padding(len)));
    }
    pieces.push(Piece::Bytes(Bytes::from(vec![0u8; 1024])));
    Ok(pieces)
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
pub fn read_collected(path: &Path) -> Result<Collected, String> {
    let err =
        |e: std::io::Error| format!("reading the layer's files from the build container: {e}");
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
                        .map_err(|_| format!("the layer command's exit code is {s:?}"))?,
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
    let rc = rc.ok_or("the build container did not record the command's exit code")?;
    let before = before.ok_or("the build container did not list the parent's files")?;
    let (after, (layer_offset, layer_len)) = if rc == 0 {
        (
            after.ok_or("the build container did not list its files")?,
            layer.ok_or("the build container did not archive its changes")?,
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
pub fn parse_tree(list: &[u8]) -> Result<HashMap<&[u8], u8>, String> {
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
                return Err(format!(
                    "malformed file list entry {:?}",
                    String::from_utf8_lossy(rec)
                ));
            }
        }
    }
    Ok(out)
}

/// Whiteout files (`<dir>/.wh.<name>`, sorted) for the paths of `before` that are gone in
/// `after`: only the topmost deleted path, and only where its directory is still a directory (a
/// directory replaced by a file or link is replaced by that entry as a whole).
pub fn whiteouts(before: &[u8], after: &[u8]) -> Result<Vec<Vec<u8>>, String> {
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

/// Tar entries for the whiteouts, followed by the end-of-archive marker.
pub fn layer_tail(whiteouts: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    use std::os::unix::ffi::OsStrExt;
    let mut b = tar::Builder::new(Vec::new());
    for w in whiteouts {
        let path = Path::new(std::ffi::OsStr::from_bytes(w));
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_uid(0);
        h.set_gid(0);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, path, std::io::empty())
            .map_err(|e| format!("writing the whiteout {}: {e}", path.display()))?;
    }
    b.into_inner()
        .map_err(|e| format!("writing the layer's whiteouts: {e}"))
}

/// Length of the entries of a tar stream (up to its end-of-archive marker).
pub fn entries_len<R: Read>(r: R) -> Result<u64, String> {
    let err = |e: std::io::Error| format!("reading the archive of the changed files: {e}");
    let mut archive = tar::Archive::new(r);
    let mut end = 0u64;
    for entry in archive.entries().map_err(err)? {
        let entry = entry.map_err(err)?;
        let size = entry.size().div_ceil(512) * 512;
        end = end.max(entry.raw_file_position() + size);
    }
    Ok(end)
}

/// The new layer: the changed files' entries (a range of the downloaded file), then the whiteouts
/// and the end marker. Returns the pieces, the total length and the diff id (`sha256:<hex>`).
pub fn assemble_layer(
    download: &Path,
    collected: &Collected,
    tail: Vec<u8>,
) -> Result<(Vec<Piece>, u64, String), String> {
    let err = |e: std::io::Error| format!("reading {}: {e}", download.display());
    let mut f = std::fs::File::open(download).map_err(err)?;
    f.seek(SeekFrom::Start(collected.layer_offset))
        .map_err(err)?;
    let entries = entries_len((&mut f).take(collected.layer_len))?;
    f.seek(SeekFrom::Start(collected.layer_offset))
        .map_err(err)?;
    let mut hasher = Sha256::new();
    let mut left = entries;
    let mut buf = vec![0u8; 256 * 1024];
    while left > 0 {
        let n = f
            .read(&mut buf[..left.min(256 * 1024) as usize])
            .map_err(err)?;
        if n == 0 {
            return Err(format!("{} ended early", download.display()));
        }
        hasher.update(&buf[..n]);
        left -= n as u64;
    }
    hasher.update(&tail);
    let diff_id = format!("sha256:{}", hex::encode(hasher.finalize()));
    let len = entries + tail.len() as u64;
    let pieces = vec![
        Piece::File {
            path: download.to_path_buf(),
            offset: collected.layer_offset,
            len: entries,
        },
        Piece::Bytes(Bytes::from(tail)),
    ];
    Ok((pieces, len, diff_id))
}

fn rfc3339(unix_secs: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix_secs)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into())
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// Metadata instructions that never make a layer (classic builder `#(nop)` or BuildKit records).
fn is_metadata_step(created_by: &str) -> bool {
    if created_by.contains("#(nop)") {
        return true;
    }
    let first = created_by.split_whitespace().next().unwrap_or("");
    matches!(
        first,
        "ENV"
            | "LABEL"
            | "CMD"
            | "ENTRYPOINT"
            | "EXPOSE"
            | "VOLUME"
            | "USER"
            | "ARG"
            | "STOPSIGNAL"
            | "HEALTHCHECK"
            | "SHELL"
            | "ONBUILD"
            | "MAINTAINER"
    )
}

/// The parent's history as image-config entries (oldest first). The history API does not say which
/// entries made a layer; its sizes do when exactly `layers` entries are non-empty, else metadata
/// instructions are taken as empty. When neither fits, one entry per layer stands in.
fn parent_history(items: &[ImageHistoryResponseItem], layers: usize) -> Vec<serde_json::Value> {
    let oldest_first: Vec<&ImageHistoryResponseItem> = items.iter().rev().collect();
    let by_size: Vec<bool> = oldest_first.iter().map(|h| h.size == 0).collect();
    let by_step: Vec<bool> = oldest_first
        .iter()
        .map(|h| h.size == 0 && is_metadata_step(&h.created_by))
        .collect();
    let fits = |empty: &[bool]| empty.iter().filter(|e| !**e).count() == layers;
    let empty = if fits(&by_size) {
        Some(by_size)
    } else if fits(&by_step) {
        Some(by_step)
    } else {
        None
    };
    match empty {
        Some(empty) => oldest_first
            .iter()
            .zip(empty)
            .map(|(h, empty)| {
                let mut e = serde_json::json!({ "created": rfc3339(h.created) });
                if !h.created_by.is_empty() {
                    e["created_by"] = h.created_by.clone().into();
                }
                if !h.comment.is_empty() {
                    e["comment"] = h.comment.clone().into();
                }
                if empty {
                    e["empty_layer"] = true.into();
                }
                e
            })
            .collect(),
        None => (0..layers)
            .map(|i| {
                serde_json::json!({
                    "created": rfc3339(0),
                    "comment": format!("layer {} of the parent image (its history was not readable)", i + 1),
                })
            })
            .collect(),
    }
}

/// What the new image's config says besides the parent's.
pub struct ConfigSpec<'a> {
    pub labels: &'a HashMap<String, String>,
    pub workdir: &'a str,
    pub cmd: Vec<String>,
    pub created_by: String,
    pub diff_id: &'a str,
}

/// The image config (JSON) of the parent plus one layer, with `Cmd`, `WorkingDir` and labels
/// set as `docker commit --change` would.
pub fn image_config(
    parent: &ImageInspect,
    history: &[ImageHistoryResponseItem],
    spec: &ConfigSpec<'_>,
) -> Result<Vec<u8>, String> {
    let mut diff_ids: Vec<String> = parent
        .root_fs
        .as_ref()
        .and_then(|r| r.layers.clone())
        .unwrap_or_default();
    let parent_layers = diff_ids.len();
    diff_ids.push(spec.diff_id.to_string());
    let mut config = parent.config.clone().unwrap_or_default();
    let mut labels = config.labels.take().unwrap_or_default();
    labels.extend(spec.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
    config.labels = Some(labels);
    config.working_dir = Some(spec.workdir.to_string());
    config.cmd = Some(spec.cmd.clone());
    let config =
        serde_json::to_value(&config).map_err(|e| format!("writing the image config: {e}"))?;
    let created = now_rfc3339();
    let mut hist = parent_history(history, parent_layers);
    hist.push(serde_json::json!({
        "created": created,
        "created_by": spec.created_by,
        "comment": "etip: layer made from the changed files of a build container",
    }));
    let mut out = serde_json::json!({
        "architecture": parent.architecture.clone().unwrap_or_else(|| "amd64".into()),
        "os": parent.os.clone().unwrap_or_else(|| "linux".into()),
        "created": created,
        "config": config,
        "rootfs": { "type": "layers", "diff_ids": diff_ids },
        "history": hist,
    });
    if let Some(v) = parent.variant.as_ref().filter(|v| !v.is_empty()) {
        out["variant"] = v.clone().into();
    }
    serde_json::to_vec(&out).map_err(|e| format!("writing the image config: {e}"))
}

/// The docker-save archive for the image load: the new layer, the config and `manifest.json`
/// naming the parent's layers by placeholder paths (the loader has them and skips their files).
/// Returns the pieces and the image id the engine will give the image.
pub fn load_pieces(
    tag: &str,
    parent_layers: usize,
    config: Vec<u8>,
    layer: Vec<Piece>,
    layer_len: u64,
) -> Result<(Vec<Piece>, String), String> {
    let config_hex = hex::encode(Sha256::digest(&config));
    let config_name = format!("{config_hex}.json");
    let mut layers: Vec<String> = (0..parent_layers)
        .map(|i| format!("parent-{i}/layer.tar"))
        .collect();
    layers.push("layer.tar".into());
    let tag = if tag.rsplit('/').next().is_some_and(|t| t.contains(':')) {
        tag.to_string()
    } else {
        format!("{tag}:latest")
    };
    let manifest = serde_json::to_vec(&serde_json::json!([{
        "Config": config_name,
        "RepoTags": [tag],
        "Layers": layers,
    }]))
    .map_err(|e| format!("writing the image manifest: {e}"))?;
    let mut pieces = vec![Piece::Bytes(header(
        "layer.tar",
        layer_len,
        0o644,
        tar::EntryType::Regular,
    )?)];
    pieces.extend(layer);
    pieces.push(Piece::Bytes(padding(layer_len)));
    file_entry(&mut pieces, &config_name, Bytes::from(config))?;
    file_entry(&mut pieces, "manifest.json", Bytes::from(manifest))?;
    pieces.push(Piece::Bytes(Bytes::from(vec![0u8; 1024])));
    Ok((pieces, format!("sha256:{config_hex}")))
}

/// Maps a message to a layer error of `tag`.
pub fn layer_error(tag: &str, log: &str) -> impl Fn(String) -> EngineError + use<> {
    let (tag, log) = (tag.to_string(), log.to_string());
    move |detail| EngineError::Layer {
        tag: tag.clone(),
        detail,
        log: log.clone(),
    }
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
    fn layer_tail_is_whiteouts_then_the_end_marker() {
        let long = format!("{}/.wh.x", "d".repeat(150));
        let tail = layer_tail(&[b"etc/.wh.motd".to_vec(), long.clone().into_bytes()]).unwrap();
        assert!(tail.ends_with(&[0u8; 1024]));
        let mut a = tar::Archive::new(tail.as_slice());
        let names: Vec<String> = a
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["etc/.wh.motd".to_string(), long]);
        assert_eq!(layer_tail(&[]).unwrap(), vec![0u8; 1024]);
    }

    #[test]
    fn entries_len_stops_at_the_end_marker() {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(3);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, "a", &b"abc"[..]).unwrap();
        let mut h = tar::Header::new_gnu();
        h.set_size(600);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, format!("{}/b", "x".repeat(120)), &[7u8; 600][..])
            .unwrap();
        let mut bytes = b.into_inner().unwrap();
        // GNU tar pads archives to 10 KiB records.
        bytes.resize(10240, 0);
        // a: header + 1 block; b: long-name header + name block + header + 2 blocks.
        assert_eq!(entries_len(bytes.as_slice()).unwrap(), 512 * 2 + 512 * 5);
        assert_eq!(entries_len(&[0u8; 10240][..]).unwrap(), 0);
    }

    #[test]
    fn history_marks_empty_layers() {
        let item = |created_by: &str, size: i64| ImageHistoryResponseItem {
            id: "<missing>".into(),
            created: 1_700_000_000,
            created_by: created_by.into(),
            tags: vec![],
            size,
            comment: String::new(),
        };
        // Newest first, as the API returns them.
        let items = vec![
            item("/bin/sh -c #(nop)  CMD [\"bash\"]", 0),
            item("RUN /bin/sh -c true # buildkit", 0),
            item("/bin/sh -c #(nop) ADD file:abc in /", 1000),
        ];
        let h = parent_history(&items, 2);
        assert_eq!(h.len(), 3);
        assert_eq!(h[0]["created_by"], "/bin/sh -c #(nop) ADD file:abc in /");
        assert!(h[0].get("empty_layer").is_none());
        assert!(h[1].get("empty_layer").is_none());
        assert_eq!(h[2]["empty_layer"], true);
        assert_eq!(h[0]["created"], "2023-11-14T22:13:20Z");
        // Sizes alone decide when they fit.
        let h = parent_history(&items, 1);
        assert_eq!(h[1]["empty_layer"], true);
        // Neither fits: one stand-in entry per layer.
        let h = parent_history(&items, 5);
        assert_eq!(h.len(), 5);
        assert!(h.iter().all(|e| e.get("empty_layer").is_none()));
    }

    #[test]
    fn config_extends_the_parent() {
        let parent = ImageInspect {
            architecture: Some("amd64".into()),
            os: Some("linux".into()),
            config: Some(bollard::models::ImageConfig {
                env: Some(vec!["PATH=/usr/bin".into()]),
                cmd: Some(vec!["sh".into()]),
                entrypoint: Some(vec!["/init".into()]),
                labels: Some(HashMap::from([
                    ("a".to_string(), "1".to_string()),
                    ("etip.kind".to_string(), "base".to_string()),
                ])),
                ..Default::default()
            }),
            root_fs: Some(bollard::models::ImageInspectRootFs {
                typ: "layers".into(),
                layers: Some(vec!["sha256:aa".into()]),
            }),
            ..Default::default()
        };
        let history = vec![ImageHistoryResponseItem {
            id: "x".into(),
            created: 0,
            created_by: String::new(),
            tags: vec![],
            size: 10,
            comment: "Imported from -".into(),
        }];
        let labels = HashMap::from([("etip.kind".to_string(), "env".to_string())]);
        let bytes = image_config(
            &parent,
            &history,
            &ConfigSpec {
                labels: &labels,
                workdir: "/work",
                cmd: vec!["/bin/bash".into()],
                created_by: "sh /x.sh".into(),
                diff_id: "sha256:bb",
            },
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v["rootfs"]["diff_ids"],
            serde_json::json!(["sha256:aa", "sha256:bb"])
        );
        assert_eq!(v["config"]["Env"], serde_json::json!(["PATH=/usr/bin"]));
        assert_eq!(v["config"]["Cmd"], serde_json::json!(["/bin/bash"]));
        assert_eq!(v["config"]["Entrypoint"], serde_json::json!(["/init"]));
        assert_eq!(v["config"]["WorkingDir"], "/work");
        assert_eq!(v["config"]["Labels"]["a"], "1");
        assert_eq!(v["config"]["Labels"]["etip.kind"], "env");
        assert_eq!(v["history"].as_array().unwrap().len(), 2);
        assert_eq!(v["history"][1]["created_by"], "sh /x.sh");
        assert_eq!(v["os"], "linux");
    }

    #[test]
    fn load_archive_names_parent_layers_and_the_new_one() {
        let layer = layer_tail(&[]).unwrap();
        let len = layer.len() as u64;
        let (pieces, id) = load_pieces(
            "ns/env:key",
            2,
            b"{}".to_vec(),
            vec![Piece::Bytes(Bytes::from(layer))],
            len,
        )
        .unwrap();
        assert_eq!(id, format!("sha256:{}", hex::encode(Sha256::digest(b"{}"))));
        let mut bytes = Vec::new();
        for p in pieces {
            match p {
                Piece::Bytes(b) => bytes.extend_from_slice(&b),
                Piece::File { .. } => unreachable!(),
            }
        }
        let mut a = tar::Archive::new(bytes.as_slice());
        let mut manifest = None;
        let mut names = Vec::new();
        for e in a.entries().unwrap() {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            if name == "manifest.json" {
                let mut s = String::new();
                e.read_to_string(&mut s).unwrap();
                manifest = Some(s);
            }
            names.push(name);
        }
        assert_eq!(names[0], "layer.tar");
        let m: serde_json::Value = serde_json::from_str(&manifest.unwrap()).unwrap();
        assert_eq!(m[0]["RepoTags"], serde_json::json!(["ns/env:key"]));
        assert_eq!(
            m[0]["Layers"],
            serde_json::json!(["parent-0/layer.tar", "parent-1/layer.tar", "layer.tar"])
        );
        let (_, _) = load_pieces("ns/env", 0, b"{}".to_vec(), vec![], 0).unwrap();
    }

    #[test]
    fn capture_roots_are_checked() {
        assert_eq!(roots_env(&[]), Ok(None));
        assert_eq!(
            roots_env(&["/work".into(), "/opt/etip/".into()]),
            Ok(Some("ETIP_LAYER_ROOTS=work opt/etip".into()))
        );
        for bad in ["/", "work", "/a b", "/opt/*", "/opt/../etc", "/x;rm"] {
            assert!(roots_env(&[bad.into()]).is_err(), "{bad}");
        }
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
