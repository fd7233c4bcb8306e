//! The window judgement of modified Java files against whole-file parses: on thousands of random
//! edits of a Java file with most kinds of members, every answer the windows give is the one the
//! whole-file comparison gives.

use etip_lang::Language;
use etip_lang::semantic::{Analyzer, FileChange, NonSemantic, Side, compare};
use etip_lang::window::{Modified, WindowStats, Windowed, judge_java};

mod support;
use support::{Rng, word_ends};

const CORPUS: &str = include_str!("data/Corpus.java");

/// Rows removed and added by a Myers line diff.
fn rows(old: &str, new: &str) -> (Vec<usize>, Vec<usize>) {
    etip_lang::labels::changed_rows(old.as_bytes(), new.as_bytes())
}

/// One random edit of `lines`; `case` makes inserted names unique.
fn mutate(lines: &mut Vec<String>, rng: &mut Rng, case: usize) {
    let n = lines.len();
    let i = rng.next(n);
    match rng.next(10) {
        0 => {
            // Change a digit.
            if let Some(p) = lines[i].find(|c: char| c.is_ascii_digit()) {
                let d = lines[i].as_bytes()[p] - b'0';
                let nd = char::from(b'0' + (d + 1) % 10);
                lines[i].replace_range(p..p + 1, &nd.to_string());
            }
        }
        1 => {
            // Rename one identifier occurrence.
            let words: Vec<usize> = word_ends(&lines[i]);
            if !words.is_empty() {
                let e = words[rng.next(words.len())];
                lines[i].insert(e, 'X');
            }
        }
        2 => {
            for (from, to) in [
                ("+", "-"),
                ("<", "<="),
                ("==", "!="),
                ("++", "--"),
                ("return", "return -1 +"),
            ] {
                if lines[i].contains(from) {
                    lines[i] = lines[i].replacen(from, to, 1);
                    break;
                }
            }
        }
        3 => {
            lines.remove(i);
        }
        4 => {
            let indent = lines[i].len() - lines[i].trim_start().len();
            if indent >= 8 && lines[i].trim_end().ends_with(';') {
                lines.insert(i + 1, format!("{}log(\"{case}\");", " ".repeat(indent)));
            }
        }
        5 => lines.insert(i, "        // a comment".to_string()),
        6 => {
            let t = lines[i].trim_start().to_string();
            lines[i] = format!("  {t}");
        }
        7 => lines.insert(6, format!("import java.util.Set{case};")),
        8 => {
            if lines[i].trim().is_empty() && i > 14 {
                lines.insert(i, format!("    void added{case}() {{ hits++; }}"));
            }
        }
        _ => {
            if i + 1 < n {
                lines.swap(i, i + 1);
            }
        }
    }
}

fn whole(an: &mut Analyzer, old: &str, new: &str, del: &[usize], add: &[usize]) -> FileChange {
    let so = an.summarize(old.as_bytes()).unwrap();
    let sn = an.summarize(new.as_bytes()).unwrap();
    compare(
        Language::Java,
        Some(Side {
            summary: &so,
            path: "src/main/java/org/example/cache/LruCache.java",
            rows: del,
        }),
        Some(Side {
            summary: &sn,
            path: "src/main/java/org/example/cache/LruCache.java",
            rows: add,
        }),
    )
}

#[test]
fn windows_agree_with_whole_file_parses() {
    let mut an = Analyzer::new(Language::Java).unwrap();
    let base: Vec<String> = CORPUS.lines().map(str::to_string).collect();
    // ETIP_WINDOW_SEED explores other edits (the default keeps CI reproducible).
    let seed = std::env::var("ETIP_WINDOW_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed);
    let mut rng = Rng(seed);
    let mut stats = WindowStats::default();
    let (mut decided, mut semantic, mut not_semantic, mut full) = (0, 0, 0, 0);
    let cases = 1000;
    for case in 0..cases {
        let mut lines = base.clone();
        for _ in 0..1 + rng.next(3) {
            mutate(&mut lines, &mut rng, case);
        }
        let new = lines.join("\n") + "\n";
        if new == CORPUS {
            continue;
        }
        let (del, add) = rows(CORPUS, &new);
        let expected = whole(&mut an, CORPUS, &new, &del, &add);
        let m = Modified {
            old: CORPUS.as_bytes(),
            new: new.as_bytes(),
            old_path: "src/main/java/org/example/cache/LruCache.java",
            new_path: "src/main/java/org/example/cache/LruCache.java",
            deleted: &del,
            added: &add,
        };
        match judge_java(&mut an, &m, &mut stats).unwrap() {
            Windowed::Decided(got) => {
                assert_eq!(got, expected, "case {case}:\n{new}");
                decided += 1;
                match got {
                    FileChange::Semantic(_) => semantic += 1,
                    FileChange::NotSemantic(_) => not_semantic += 1,
                }
            }
            Windowed::NeedsFullParse => full += 1,
        }
    }
    eprintln!(
        "decided {decided} (semantic {semantic}, not semantic {not_semantic}), whole-file {full}; parsed {:.1}% of the bytes",
        100.0 * stats.parsed_bytes as f64 / stats.file_bytes as f64
    );
    // The windows must actually decide most edits, both ways, from a fraction of the bytes.
    assert!(decided > cases / 2, "too few decided: {decided}");
    assert!(
        semantic > cases / 8 && not_semantic > cases / 8,
        "{semantic} / {not_semantic}"
    );
    assert!(stats.parsed_bytes * 2 < stats.file_bytes);
}

#[test]
fn token_checks_name_the_kind_without_parsing() {
    let mut an = Analyzer::new(Language::Java).unwrap();
    let mut stats = WindowStats::default();
    let judge = |an: &mut Analyzer, stats: &mut WindowStats, new: &str| {
        let (del, add) = rows(CORPUS, new);
        let m = Modified {
            old: CORPUS.as_bytes(),
            new: new.as_bytes(),
            old_path: "A.java",
            new_path: "A.java",
            deleted: &del,
            added: &add,
        };
        judge_java(an, &m, stats).unwrap()
    };
    let reformatted = CORPUS
        .replace("    ", "\t")
        .replace("/** A small", "/** A tiny");
    assert_eq!(
        judge(&mut an, &mut stats, &reformatted),
        Windowed::Decided(FileChange::NotSemantic(NonSemantic::WhitespaceOrComment))
    );
    let imports = CORPUS.replace("import java.util.Map;\n", "");
    assert_eq!(
        judge(&mut an, &mut stats, &imports),
        Windowed::Decided(FileChange::NotSemantic(NonSemantic::ImportOnly))
    );
    // An annotation of the package declaration goes with it (package-info.java).
    let annotated = CORPUS.replace(
        "package org.example.cache;",
        "@Deprecated\npackage org.example.cache;",
    );
    assert_eq!(
        judge(&mut an, &mut stats, &annotated),
        Windowed::Decided(FileChange::NotSemantic(NonSemantic::ImportOnly))
    );
    let moved = CORPUS.replace("package org.example.cache;", "package org.example.lru;");
    assert_eq!(
        judge(&mut an, &mut stats, &moved),
        Windowed::Decided(FileChange::NotSemantic(NonSemantic::RenameOnly))
    );
    assert_eq!(stats.parsed_bytes, 0);
    // A body change in a member of a nested class parses a small window only.
    let body = CORPUS.replace("return key + \"=\" + value;", "return key + \":\" + value;");
    assert_eq!(
        judge(&mut an, &mut stats, &body),
        Windowed::Decided(FileChange::Semantic(vec![
            "org.example.cache.LruCache.Node#toString".into()
        ]))
    );
    assert!(
        stats.parsed_bytes * 10 < 2 * CORPUS.len() as u64,
        "{stats:?}"
    );
    // Two methods with one signature (a bad merge) share a unit key: parsed whole.
    let twice = CORPUS.replace(
        "    public int size() {\n        return count;\n    }\n",
        "    public int size() {\n        return count;\n    }\n\n    public int size() {\n        return count + 0;\n    }\n",
    );
    assert_ne!(twice, CORPUS);
    assert_eq!(judge(&mut an, &mut stats, &twice), Windowed::NeedsFullParse);
    // So is a type whose header does not read as modifiers and a keyword (a syntax error).
    let broken = CORPUS.replace(
        "public final class LruCache",
        "public finalX class LruCache",
    );
    assert_eq!(
        judge(&mut an, &mut stats, &broken),
        Windowed::NeedsFullParse
    );
}
