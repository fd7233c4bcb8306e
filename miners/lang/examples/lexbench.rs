//! Throughput of the Python lexer on a repository's `.py` files, alone and paired:
//!
//! `cargo run --release -p etip-lang --example lexbench -- REPO [ROUNDS]`
//!
//! Reads every `.py` blob of REPO's HEAD (REPO may be bare; blobs the mirror lacks are skipped) and
//! prints the best of ROUNDS (default 10) times of [`lex`] over all of them, and of [`lex_pair`]
//! with the old version and a new one that has a comment line added after the first line (the
//! common case for the pair: a change near one end, the rest shared) as a multiple of [`lex`].
use std::time::Instant;

use etip_lang::python_layout::{lex, lex_pair};

fn main() {
    let mut args = std::env::args().skip(1);
    let repo_path = args.next().expect("usage: lexbench REPO [ROUNDS]");
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let repo = git2::Repository::open(&repo_path).expect("open the repository");
    let tree = repo
        .head()
        .and_then(|h| h.peel_to_tree())
        .expect("HEAD tree");
    let mut files = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |_, entry| {
        if entry.name().is_ok_and(|n| n.ends_with(".py"))
            && let Ok(blob) = repo.find_blob(entry.id())
        {
            files.push(blob.content().to_vec());
        }
        git2::TreeWalkResult::Ok
    })
    .expect("walk the tree");
    let pairs: Vec<(&[u8], Vec<u8>)> = files
        .iter()
        .map(|f| {
            let k = f
                .iter()
                .position(|&b| b == b'\n')
                .map_or(f.len(), |k| k + 1);
            let mut n = f[..k].to_vec();
            n.extend_from_slice(b"# x\n");
            n.extend_from_slice(&f[k..]);
            (f.as_slice(), n)
        })
        .collect();
    let total: usize = files.iter().map(Vec::len).sum();
    let (mut single, mut paired) = (f64::MAX, f64::MAX);
    let mut lexed = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        lexed = files.iter().filter(|f| lex(f).is_some()).count();
        single = single.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let n = pairs
            .iter()
            .filter(|(a, b)| lex_pair(a, b).is_some())
            .count();
        paired = paired.min(t.elapsed().as_secs_f64());
        std::hint::black_box(n);
    }
    println!(
        "{} files ({lexed} lexed), {:.1} MB: lex {single:.4} s ({:.0} MB/s); lex_pair {paired:.4} s ({:.2}x lex)",
        files.len(),
        total as f64 / 1e6,
        total as f64 / single / 1e6,
        paired / single
    );
}
