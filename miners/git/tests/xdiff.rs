//! etip's port of libgit2's line diff against libgit2 itself, on generated file pairs that reach
//! every part of xdiff: repeated lines (its discarding of lines with many matches), long common
//! runs (its snake heuristic past cost 256), unrelated large files (its cost limit), groups that
//! slide, a last line without a newline, and empty files.

use etip_mine_git::xdiff::{diff, records};
use git2::{DiffOptions, Patch};

/// xorshift64*: reproducible inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The changed rows in libgit2's order: `-` or `+` and the 0-based row.
fn libgit2(old: &[u8], new: &[u8]) -> Vec<(char, usize)> {
    let mut opts = DiffOptions::new();
    opts.context_lines(0);
    let patch = Patch::from_buffers(old, None, new, None, Some(&mut opts)).unwrap();
    let mut out = Vec::new();
    for h in 0..patch.num_hunks() {
        for k in 0..patch.num_lines_in_hunk(h).unwrap() {
            let line = patch.line_in_hunk(h, k).unwrap();
            match line.origin() {
                '-' => out.push(('-', line.old_lineno().unwrap() as usize - 1)),
                '+' => out.push(('+', line.new_lineno().unwrap() as usize - 1)),
                _ => {}
            }
        }
    }
    out
}

fn ported(old: &[u8], new: &[u8]) -> Vec<(char, usize)> {
    let mut out = Vec::new();
    for c in diff(&records(old), &records(new)) {
        assert!(!c.old.is_empty() || !c.new.is_empty());
        out.extend(c.old.map(|r| ('-', r)));
        out.extend(c.new.map(|r| ('+', r)));
    }
    out
}

fn check(old: &[u8], new: &[u8], what: &str) {
    let expected = libgit2(old, new);
    let got = ported(old, new);
    assert!(
        got == expected,
        "{what}: {} rows from libgit2, {} from the port; first difference at {:?}\nold:\n{}\nnew:\n{}",
        expected.len(),
        got.len(),
        expected.iter().zip(&got).position(|(a, b)| a != b),
        String::from_utf8_lossy(old),
        String::from_utf8_lossy(new)
    );
}

/// Lines drawn from `alphabet` distinct ones (few: many repeats).
fn lines(rng: &mut Rng, n: usize, alphabet: u64) -> Vec<String> {
    (0..n)
        .map(|_| format!("line {}\n", rng.below(alphabet)))
        .collect()
}

/// `old` edited: blocks deleted, inserted, replaced and moved.
fn edit(rng: &mut Rng, old: &[String], edits: usize, alphabet: u64) -> Vec<String> {
    let mut new = old.to_vec();
    for _ in 0..edits {
        let at = rng.below(new.len() as u64 + 1) as usize;
        let len = (1 + rng.below(6)) as usize;
        match rng.below(4) {
            0 => {
                let end = (at + len).min(new.len());
                new.drain(at..end);
            }
            1 => {
                let block = lines(rng, len, alphabet);
                new.splice(at..at, block);
            }
            2 => {
                let end = (at + len).min(new.len());
                let block = lines(rng, end - at, alphabet);
                new.splice(at..end, block);
            }
            _ => {
                let end = (at + len).min(new.len());
                let moved: Vec<String> = new.drain(at..end).collect();
                let to = rng.below(new.len() as u64 + 1) as usize;
                new.splice(to..to, moved);
            }
        }
    }
    new
}

fn text(lines: &[String], newline_at_end: bool) -> Vec<u8> {
    let mut t = lines.concat().into_bytes();
    if !newline_at_end && t.last() == Some(&b'\n') {
        t.pop();
    }
    t
}

#[test]
fn small_edits_of_repetitive_files() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..3000 {
        let n = rng.below(60) as usize;
        let alphabet = 1 + rng.below(12);
        let old = lines(&mut rng, n, alphabet);
        let edits = 1 + rng.below(5) as usize;
        let new = edit(&mut rng, &old, edits, alphabet);
        let (e1, e2) = (rng.below(4) != 0, rng.below(4) != 0);
        check(&text(&old, e1), &text(&new, e2), &format!("case {case}"));
    }
}

#[test]
fn large_files_past_the_cost_heuristics() {
    let mut rng = Rng(42);
    for case in 0..40 {
        let n = 500 + rng.below(3000) as usize;
        let alphabet = [3, 40, 400, 100_000][case % 4];
        let old = lines(&mut rng, n, alphabet);
        let new = if case % 5 == 0 {
            // Unrelated versions: the search gives up at its cost limit.
            lines(&mut rng, n, alphabet)
        } else {
            let edits = 50 + rng.below(400) as usize;
            edit(&mut rng, &old, edits, alphabet)
        };
        check(
            &text(&old, true),
            &text(&new, true),
            &format!("large case {case}"),
        );
    }
}

#[test]
fn huge_files_reach_the_good_snake_heuristic() {
    // Past 65,536 lines in all, the cost limit is 512: between costs 256 and 512 a split is taken
    // at a snake of 20 common lines when one reaches far enough.
    let mut rng = Rng(7);
    for (case, edits) in [400usize, 2500, 6000].into_iter().enumerate() {
        let old = lines(&mut rng, 40_000, 5000);
        let new = edit(&mut rng, &old, edits, 5000);
        check(
            &text(&old, true),
            &text(&new, true),
            &format!("huge case {case}"),
        );
    }
}

#[test]
fn shapes_at_the_edges() {
    let cases: [(&str, &str); 10] = [
        ("", ""),
        ("", "a\nb\n"),
        ("a\nb\n", ""),
        ("a\nb", "a\nb\n"),
        ("a\nb\n", "a\nb"),
        ("a\n", "b"),
        ("x\nx\nx\n", "x\nx\n"),
        ("a\nb\na\nb\na\n", "a\nb\na\n"),
        ("a\n\n\nb\n", "a\n\nb\n"),
        (
            "def f():\n    pass\n\ndef g():\n    pass\n",
            "def f():\n    pass\n\ndef h():\n    pass\n\ndef g():\n    pass\n",
        ),
    ];
    for (old, new) in cases {
        check(
            old.as_bytes(),
            new.as_bytes(),
            &format!("{old:?} -> {new:?}"),
        );
    }
}
