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

use etip_mine_git::xdiff::{diff, records};
use git2::{DiffOptions, Repository};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let repo_path = args.first().expect("usage: xdiff_check REPO [SINCE] [EXT]");
    let since = args.get(1).map_or(1_420_070_400, |s| {
        s.parse().unwrap_or_else(|_| {
            etip_mine_git::dates::parse_date(s, false).expect("SINCE as seconds or YYYY-MM-DD")
        })
    });
    let ext = args.get(2).map(|e| format!(".{e}"));
    git2::opts::strict_hash_verification(false);
    let repo = Repository::open(repo_path).expect("open the repository");
    let mut walk = repo.revwalk().expect("revwalk");
    walk.push_head().expect("HEAD");
    walk.simplify_first_parent().expect("first parent");
    let (mut pairs, mut rows, mut differ) = (0u64, 0u64, 0u64);
    let (mut t_lib, mut t_port) = (Duration::ZERO, Duration::ZERO);
    for id in walk {
        let c = repo.find_commit(id.expect("commit id")).expect("commit");
        if c.time().seconds() < since {
            break;
        }
        let Ok(parent) = c.parent(0) else { continue };
        let (Ok(old), Ok(new)) = (parent.tree(), c.tree()) else {
            continue;
        };
        let d = repo
            .diff_tree_to_tree(Some(&old), Some(&new), None)
            .expect("diff");
        for delta in d.deltas() {
            let path = delta
                .new_file()
                .path()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            if delta.status() != git2::Delta::Modified
                || ext.as_ref().is_some_and(|e| !path.ends_with(e.as_str()))
            {
                continue;
            }
            let (Ok(a), Ok(b)) = (
                repo.find_blob(delta.old_file().id()),
                repo.find_blob(delta.new_file().id()),
            ) else {
                continue;
            };
            let binary = |x: &[u8]| memchr::memchr(0, &x[..x.len().min(8000)]).is_some();
            if binary(a.content()) || binary(b.content()) {
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
                    "DIFFERS {} {path}: libgit2 {} rows, port {}",
                    c.id(),
                    expected.len(),
                    got.len()
                );
            }
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
