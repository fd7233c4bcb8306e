//! Checks the window judgement against whole-file parses on pairs of Java file versions and times
//! both: `cargo run --release -p etip-lang --example window_check -- DIR` where DIR holds
//! `NNNN.old` / `NNNN.new` files (two versions of one Java file, e.g. from `git cat-file`).
use etip_core::candidate::Language;
use etip_lang::semantic::{Analyzer, Side, compare};
use etip_lang::window::{Modified, WindowStats, Windowed, judge_java};
use std::time::Instant;

fn rows(old: &[u8], new: &[u8]) -> (Vec<usize>, Vec<usize>) {
    etip_lang::labels::changed_rows(old, new)
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: window_check DIR");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("read dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "old"))
        .collect();
    names.sort();
    let mut pairs = Vec::new();
    for p in &names {
        let old = std::fs::read(p).expect("old");
        let new = std::fs::read(p.with_extension("new")).expect("new");
        let (d, a) = rows(&old, &new);
        pairs.push((old, new, d, a));
    }
    let mut an = Analyzer::new(Language::Java).expect("java");
    let t = Instant::now();
    let mut full = Vec::new();
    for (o, n, d, a) in &pairs {
        let so = an.summarize(o).expect("parse");
        let sn = an.summarize(n).expect("parse");
        full.push(compare(
            Language::Java,
            Some(Side {
                summary: &so,
                path: "A.java",
                rows: d,
            }),
            Some(Side {
                summary: &sn,
                path: "A.java",
                rows: a,
            }),
        ));
    }
    let t_full = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut stats = WindowStats::default();
    let mut win = Vec::new();
    for (o, n, d, a) in &pairs {
        let m = Modified {
            old: o,
            new: n,
            old_path: "A.java",
            new_path: "A.java",
            deleted: d,
            added: a,
        };
        let before = stats;
        win.push(judge_java(&mut an, &m, &mut stats).expect("judge"));
        if std::env::var_os("WINDOW_DEBUG").is_some() {
            eprintln!(
                "{} {} {}",
                stats.parsed_bytes - before.parsed_bytes,
                stats.file_bytes - before.file_bytes,
                d.len() + a.len()
            );
        }
    }
    let t_win = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut ntok = 0;
    for (o, n, _, _) in &pairs {
        for src in [o, n] {
            ntok += etip_lang::java_layout::Layout::scan(src).map_or(0, |l| l.tokens.len());
        }
    }
    println!(
        "layout scans alone: {:.3} s ({ntok} tokens)",
        t.elapsed().as_secs_f64()
    );
    let (mut decided, mut wrong) = (0, 0);
    for (i, (f, w)) in full.iter().zip(&win).enumerate() {
        if let Windowed::Decided(x) = w {
            decided += 1;
            if x != f {
                wrong += 1;
                println!("MISMATCH {}: full {f:?} window {x:?}", names[i].display());
            }
        }
    }
    println!(
        "{} pairs: whole-file {t_full:.3} s, windows {t_win:.3} s ({:.2}); decided {decided}, wrong {wrong}; parsed {:.1}% of the bytes",
        pairs.len(),
        t_win / t_full,
        100.0 * stats.parsed_bytes as f64 / stats.file_bytes as f64
    );
}
