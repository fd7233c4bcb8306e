//! Checks etip's port of libgit2's line diff against libgit2 on every modified file of a history:
//!
//! `cargo run --release -p etip-mine-git --example xdiff_check -- REPO [SINCE] [EXT]`
//!
//! For each first-parent commit since `SINCE` (default 2015-01-01, as seconds or `YYYY-MM-DD`),
//! diffs the old and new blobs of every modified file whose name ends in `.EXT` (default: every
//! file) with libgit2 (`diff_blobs`, 0 context lines, as the miner used to) and with
//! `etip_mine_git::xdiff`, and compares the changed rows in order. Binary files (a NUL byte in the
//! first 8,000 bytes) are skipped: libgit2 reports no lines for them and neither does the miner.
//! Prints the number of file pairs and changed lines compared, the time each side took, and every
//! pair that differs (exit code 1 if any does).
use std::time::{Duration, Instant};

mod common;

use etip_mine_git::linediff::is_binary;
use etip_mine_git::xdiff::{diff, records};
use git2::{DiffOptions, Repository};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let repo_path = args.first().expect("usage: xdiff_check REPO [SINCE] [EXT]");
    let since = common::since(args.get(1));
    let ext = args.get(2).map(|e| format!(".{e}"));
    git2::opts::strict_hash_verification(false);
    let repo = Repository::open(repo_path).expect("open the repository");
    let (mut pairs, mut rows, mut differ) = (0u64, 0u64, 0u64);
    let (mut t_lib, mut t_port) = (Duration::ZERO, Duration::ZERO);
    for m in common::modified(&repo, since, ext.as_deref()) {
        let (Ok(a), Ok(b)) = (repo.find_blob(m.old), repo.find_blob(m.new)) else {
            continue;
        };
        if is_binary(a.content()) || is_binary(b.content()) {
            continue;
        }
        let t = Instant::now();
        let mut expected = Vec::new();
        let mut opts = DiffOptions::new();
        opts.context_lines(0);
        let mut on_line = |_: git2::DiffDelta, _: Option<git2::DiffHunk>, l: git2::DiffLine| {
            match l.origin() {
                '-' => expected.push(('-', l.old_lineno().unwrap_or(0) as usize - 1)),
                '+' => expected.push(('+', l.new_lineno().unwrap_or(0) as usize - 1)),
                _ => {}
            }
            true
        };
        repo.diff_blobs(
            Some(&a),
            Some(""),
            Some(&b),
            Some(""),
            Some(&mut opts),
            None,
            None,
            None,
            Some(&mut on_line),
        )
        .expect("diff blobs");
        t_lib += t.elapsed();
        let t = Instant::now();
        let mut got = Vec::new();
        for ch in diff(&records(a.content()), &records(b.content())) {
            got.extend(ch.old.map(|r| ('-', r)));
            got.extend(ch.new.map(|r| ('+', r)));
        }
        t_port += t.elapsed();
        pairs += 1;
        rows += expected.len() as u64;
        if got != expected {
            differ += 1;
            println!(
                "DIFFERS {} {}: libgit2 {} rows, port {}",
                m.commit,
                m.path,
                expected.len(),
                got.len()
            );
        }
    }
    println!(
        "{pairs} modified file pairs, {rows} changed lines; {differ} differ. libgit2 {:.3} s, port {:.3} s",
        t_lib.as_secs_f64(),
        t_port.as_secs_f64()
    );
    if differ > 0 {
        std::process::exit(1);
    }
}
