//! Tar writing: the streamed request bodies etip sends the engine ([`Piece`], [`stream_pieces`]),
//! the stage uploaded to the build container ([`upload_pieces`]) and the new layer's tar, made of
//! the changed files the container archived plus the whiteouts ([`assemble_layer`]).

use super::{Collected, STAGE};
use crate::LayerError;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use sha2::{Digest, Sha256};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

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
pub(super) fn header(
    path: &str,
    size: u64,
    mode: u32,
    kind: tar::EntryType,
) -> Result<Bytes, LayerError> {
    let mut h = tar::Header::new_ustar();
    h.set_path(path).map_err(|source| LayerError::TarHeader {
        path: path.into(),
        source,
    })?;
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
pub(super) fn padding(size: u64) -> Bytes {
    Bytes::from(vec![0u8; ((512 - size % 512) % 512) as usize])
}

pub(super) fn file_entry(
    pieces: &mut Vec<Piece>,
    path: &str,
    data: Bytes,
) -> Result<(), LayerError> {
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
) -> Result<Vec<Piece>, LayerError> {
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
                .map_err(|source| LayerError::Read {
                    path: path.clone(),
                    source,
                })?
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

/// Tar entries for the whiteouts, followed by the end-of-archive marker.
pub fn layer_tail(whiteouts: &[Vec<u8>]) -> Result<Vec<u8>, LayerError> {
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
            .map_err(|source| LayerError::Whiteout {
                path: path.to_path_buf(),
                source,
            })?;
    }
    b.into_inner()
        .map_err(|source| LayerError::Whiteouts { source })
}

/// Length of the entries of a tar stream (up to its end-of-archive marker).
pub fn entries_len<R: Read>(r: R) -> Result<u64, LayerError> {
    let err = |source| LayerError::ChangedFiles { source };
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
) -> Result<(Vec<Piece>, u64, String), LayerError> {
    let err = |source| LayerError::Read {
        path: download.to_path_buf(),
        source,
    };
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
            return Err(LayerError::EndedEarly {
                path: download.to_path_buf(),
            });
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
