//! How much faster the miner's pack reader is than libgit2 on the blobs the miner reads:
//!
//! `cargo run --release -p etip-mine-git --example pack_read_bench -- REPO [SINCE] [EXT]`
//!
//! Collects the old and new blobs of the `EXT` files (default `py`) that the first-parent commits
//! since `SINCE` (default 2015-01-01, as seconds or `YYYY-MM-DD`) modify, in the order the miner
//! reads them (newest commit first), then reads them all with libgit2 (`find_blob`) and with
//! [`etip_mine_git::pack::PackReader`] with caches of 16 (the miner's), 64 and 96 MiB (a fresh
//! reader each round, so its cache starts empty), each twice, in the same run. Every blob the reader returns is compared byte for byte with libgit2's.
//! Prints the best time of each and the ratio.
use std::time::Instant;

mod common;

use etip_mine_git::pack::PackReader;
use git2::{Oid, Repository};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let repo_path = args
        .first()
        .expect("usage: pack_read_bench REPO [SINCE] [EXT]");
    let since = common::since(args.get(1));
    let ext = args.get(2).map_or("py", String::as_str);
    git2::opts::strict_hash_verification(false);
    let repo = Repository::open(repo_path).expect("open the repository");
    // The blobs the miner would read: old and new versions, newest commit first.
    let ids: Vec<Oid> = common::modified(&repo, since, Some(&format!(".{ext}")))
        .into_iter()
        .flat_map(|m| [m.old, m.new])
        .collect();
    let mut bytes = 0usize;
    let mut libgit2 = f64::MAX;
    for _ in 0..2 {
        let t = Instant::now();
        bytes = ids
            .iter()
            .map(|id| repo.find_blob(*id).expect("blob").content().len())
            .sum();
        libgit2 = libgit2.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{} blob reads ({:.0} MB) of modified .{ext} files; libgit2 find_blob: {libgit2:.3} s",
        ids.len(),
        bytes as f64 / 1e6
    );
    for mib in [16, 64, 96] {
        pack_reader(&repo, &ids, mib, libgit2);
    }
}

fn pack_reader(repo: &Repository, ids: &[Oid], mib: usize, libgit2: f64) {
    let mut best = f64::MAX;
    let mut missing = 0;
    for round in 0..2 {
        let mut reader = PackReader::with_cache(repo, mib << 20);
        let t = Instant::now();
        let got: Vec<_> = ids.iter().map(|id| reader.blob(*id)).collect();
        best = best.min(t.elapsed().as_secs_f64());
        if round == 0 {
            for (id, blob) in ids.iter().zip(got) {
                match blob.expect("the pack reader reads the blob") {
                    Some(b) => assert_eq!(
                        repo.find_blob(*id).expect("blob").content(),
                        b.as_slice(),
                        "blob {id}"
                    ),
                    None => missing += 1,
                }
            }
        }
    }
    println!(
        "pack reader, {mib} MiB cache: {best:.3} s = {:.2}x libgit2 (every blob equal to libgit2's; {missing} not in a pack)",
        best / libgit2
    );
}
