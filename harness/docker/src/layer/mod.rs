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
//!
//! The pieces live in submodules, all re-exported here: the build container's report and the
//! file lists it is compared by (`walk`), the tar streams etip writes (`archive`), the image
//! config and load archive (`load`), and [`Engine::build_layer`](crate::Engine::build_layer)
//! itself (`build`).

use crate::{EngineError, LayerError, SetupError};

mod archive;
pub(crate) mod build;
mod load;
mod walk;

pub use archive::{Piece, assemble_layer, entries_len, layer_tail, stream_pieces, upload_pieces};
pub use load::{ConfigSpec, image_config, load_pieces};
pub use walk::{Collected, TreeCache, parse_tree, read_collected, tree_len, whiteouts};

/// The container environment entry that restricts a layer to its capture roots (absolute folders,
/// not `/`, without blanks or glob characters), or an error naming the bad root.
pub fn roots_env(capture: &[String]) -> Result<Option<String>, SetupError> {
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
            return Err(SetupError::CaptureRoot { root: root.clone() });
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

/// Maps what failed to a layer error of `tag`.
pub fn layer_error(tag: &str, log: &str) -> impl Fn(LayerError) -> EngineError + use<> {
    let (tag, log) = (tag.to_string(), log.to_string());
    move |source| EngineError::Layer {
        tag: tag.clone(),
        source: Box::new(source),
        log: log.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
