//! The token judgement of modified Python files against whole-file parses: on thousands of random
//! edits of a Python file with most kinds of statements, every answer the tokens give is the one the
//! whole-file comparison gives, and few edits are left to whole-file parses.

use etip_lang::Language;
use etip_lang::python_window::{PythonPair, judge_python};
use etip_lang::semantic::{Analyzer, FileChange, FileSummary, NonSemantic, Side, compare};
use etip_lang::window::{Modified, WindowStats, Windowed};

mod support;
use support::{Rng, word_ends};

const CORPUS: &str = include_str!("data/corpus.py");
const PATH: &str = "src/cachelib/lru.py";

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

const KEYWORDS: [&str; 36] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield", "print",
];

/// An edit inside one line: a digit, an identifier, an operator, a string, a trailing comment.
fn edit_line(line: &mut String, rng: &mut Rng, case: usize, any: bool) {
    match rng.next(5) {
        0 => {
            if let Some(p) = line.find(|c: char| c.is_ascii_digit()) {
                let d = line.as_bytes()[p] - b'0';
                let nd = char::from(b'0' + (d + 1) % 10);
                line.replace_range(p..p + 1, &nd.to_string());
            }
        }
        1 => {
            let words = word_ends(line);
            if !words.is_empty() {
                let e = words[rng.next(words.len())];
                let start = line[..e]
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(0, |p| p + 1);
                if any || !KEYWORDS.contains(&&line[start..e]) {
                    line.insert(e, 'X');
                }
            }
        }
        2 => {
            for (from, to) in [
                ("+", "-"),
                ("==", "!="),
                ("<=", "<"),
                ("self.", "self._"),
                ("'", "'q"),
                ("\"", "\"q"),
                ("(", "(-1 + "),
            ] {
                if !any && matches!(from, "'" | "\"" | "(") {
                    continue;
                }
                if line.contains(from) {
                    *line = line.replacen(from, to, 1);
                    break;
                }
            }
        }
        3 => {
            if !line.trim().is_empty() {
                line.push_str("  # note");
            }
        }
        _ => {
            for quotes in ["\"\"\"", "'''"] {
                if let Some(p) = line.find(quotes) {
                    line.insert_str(p + 3, &format!("Doc {case}. "));
                    break;
                }
            }
        }
    }
}

/// What a line of the source is, for choosing edits that keep the code valid.
#[derive(Clone, Copy, Default)]
struct LineInfo {
    /// Bracket depth at the start and at the end of the line.
    depth: (i32, i32),
    /// Starts inside a triple-quoted string.
    in_string: bool,
    /// Code (not blank, not a comment).
    code: bool,
    /// Ends with `:` (a header) or `\\` (continued).
    header: bool,
    continued: bool,
    decorator: bool,
}

fn scan(lines: &[String]) -> Vec<LineInfo> {
    let mut out = Vec::with_capacity(lines.len());
    let (mut depth, mut triple): (i32, Option<&str>) = (0, None);
    for line in lines {
        let mut info = LineInfo {
            in_string: triple.is_some(),
            ..LineInfo::default()
        };
        info.depth.0 = depth;
        let t = line.trim();
        info.code = !t.is_empty() && !t.starts_with('#') && triple.is_none();
        info.header = t.ends_with(':');
        info.continued = t.ends_with('\\');
        info.decorator = t.starts_with('@');
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if let Some(q) = triple {
                if b[i..].starts_with(q.as_bytes()) {
                    triple = None;
                    i += 3;
                } else {
                    i += 1;
                }
                continue;
            }
            match b[i] {
                b'#' => break,
                b'"' | b'\''
                    if line[i..].starts_with("\"\"\"") || line[i..].starts_with("\'\'\'") =>
                {
                    triple = Some(if b[i] == b'"' { "\"\"\"" } else { "\'\'\'" });
                    i += 3;
                    continue;
                }
                q @ (b'"' | b'\'') => {
                    i += 1;
                    while i < b.len() && b[i] != q {
                        i += 1 + usize::from(b[i] == b'\\');
                    }
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        info.depth.1 = depth;
        out.push(info);
    }
    out
}

/// An edit that keeps the code valid Python: in-line edits, statements deleted (not the last of a
/// block), inserted, joined or swapped, comments at any indentation, imports, methods, decorators.
fn mutate_valid(lines: &mut Vec<String>, rng: &mut Rng, case: usize) {
    let info = scan(lines);
    let n = lines.len();
    let i = rng.next(n);
    let indent = indent_of(&lines[i]);
    let pad = " ".repeat(indent);
    // A whole simple statement on one line, outside brackets and strings.
    let stmt = |k: usize| {
        k < n
            && !(k > 0 && info[k - 1].continued)
            && info[k].code
            && info[k].depth == (0, 0)
            && !info[k].header
            && !info[k].continued
            && !info[k].decorator
    };
    let same_indent = |k: usize| k < n && indent_of(&lines[k]) == indent;
    match rng.next(12) {
        0..=3 if info[i].code && info[i].depth.0 == 0 && !info[i].continued => {
            edit_line(&mut lines[i], rng, case, false);
        }
        0..=3 => {}
        4 => {
            let sibling =
                (stmt(i + 1) && same_indent(i + 1)) || (i > 0 && stmt(i - 1) && same_indent(i - 1));
            if stmt(i) && sibling {
                lines.remove(i);
            }
        }
        5 if stmt(i) => lines.insert(i + 1, format!("{pad}log(\"{case}\")")),
        6 => {
            let after_decorator = i > 0 && info[i - 1].decorator;
            let col = if after_decorator {
                indent
            } else {
                [indent, indent + 4, 0, indent.saturating_sub(4), 2][rng.next(5)]
            };
            if info[i].depth.0 == 0 && !info[i].in_string && !(i > 0 && info[i - 1].continued) {
                lines.insert(i, format!("{}# comment {case}", " ".repeat(col)));
            }
        }
        7 => {
            let in_class = lines.iter().position(|l| l == "    import threading");
            let (at, pad) = [(Some(9), ""), (in_class, "    ")][rng.next(2)];
            if let Some(at) = at {
                lines.insert(at + 1, format!("{pad}import extra{case}"));
            }
        }
        8 => {
            let next = lines.get(i + 1).map_or("", |l| l.trim_start());
            let clause = ["else", "elif", "except", "finally"]
                .iter()
                .any(|k| next.starts_with(k));
            if lines[i].trim().is_empty() && stmt(i + 1) && !clause {
                let pad = " ".repeat(indent_of(&lines[i + 1]));
                lines.insert(i, format!("{pad}def added{case}(self): return {case}"));
            }
        }
        9 if stmt(i) && stmt(i + 1) && same_indent(i + 1) => {
            let next = lines.remove(i + 1);
            lines[i] = format!("{}; {}", lines[i], next.trim_start());
        }
        10 if lines[i].trim_start().starts_with("def ") => {
            lines.insert(i, format!("{pad}@helpers.extra({case})"));
        }
        11 if stmt(i) && stmt(i + 1) && same_indent(i + 1) => lines.swap(i, i + 1),
        _ if !(i > 0 && info[i - 1].continued) => lines.insert(i, String::new()),
        _ => {}
    }
}

/// Any edit, valid Python or not: lines deleted, swapped, re-indented, statements inserted
/// anywhere (inside brackets too).
fn mutate_any(lines: &mut Vec<String>, rng: &mut Rng, case: usize) {
    let n = lines.len();
    let i = rng.next(n);
    let indent = " ".repeat(indent_of(&lines[i]));
    match rng.next(8) {
        0..=2 => edit_line(&mut lines[i], rng, case, true),
        3 => {
            lines.remove(i);
        }
        4 => lines.insert(i + 1, format!("{indent}log(\"{case}\")")),
        5 => {
            let col = [0, 2, 4, 8, 12][rng.next(5)];
            lines.insert(i, format!("{}# comment {case}", " ".repeat(col)));
        }
        6 => {
            let t = lines[i].trim_start().to_string();
            let shift = [0, 4, 8][rng.next(3)];
            lines[i] = format!("{}{t}", " ".repeat(shift));
        }
        _ => {
            if i + 1 < n {
                lines.swap(i, i + 1);
            }
        }
    }
}

fn whole(
    an: &mut Analyzer,
    old: &FileSummary,
    new: &str,
    del: &[usize],
    add: &[usize],
) -> FileChange {
    let sn = an.summarize(new.as_bytes()).unwrap();
    compare(
        Language::Python,
        Some(Side {
            summary: old,
            path: PATH,
            rows: del,
        }),
        Some(Side {
            summary: &sn,
            path: PATH,
            rows: add,
        }),
    )
}

fn judge(new: &str, del: &[usize], add: &[usize], stats: &mut WindowStats) -> Windowed {
    let m = Modified {
        old: CORPUS.as_bytes(),
        new: new.as_bytes(),
        old_path: PATH,
        new_path: PATH,
        deleted: del,
        added: add,
    };
    judge_checked(&m, stats)
}

/// [`judge_python`], checking on the way that the judgement without the changed rows, when it
/// rejects, rejects exactly as the one with them does (the miner skips the line diff then).
/// Counts those rejections in `stats.by_windows` (which Python's judgement leaves at 0).
fn judge_checked(m: &Modified, stats: &mut WindowStats) -> Windowed {
    let got = judge_python(m, stats);
    if let Some(pair) = PythonPair::parse(m.old, m.new, &mut WindowStats::default()) {
        // Rows that are not there: an answer is one given without them.
        if let Ok(rowless) = pair.judge(m, || Err(()), &mut WindowStats::default()) {
            assert_eq!(Windowed::Decided(rowless), got, "decided without rows");
            stats.by_windows += 1;
        }
    }
    got
}

/// The changed lines of `new`, for messages.
fn diff_lines(new: &str) -> String {
    let (del, add) = etip_lang::labels::changed_rows(CORPUS.as_bytes(), new.as_bytes());
    let old: Vec<&str> = CORPUS.lines().collect();
    let lines: Vec<&str> = new.lines().collect();
    let mut out = String::new();
    for r in del {
        out.push_str(&format!("-{}: {}\n", r + 1, old.get(r).unwrap_or(&"")));
    }
    for r in add {
        out.push_str(&format!("+{}: {}\n", r + 1, lines.get(r).unwrap_or(&"")));
    }
    out
}

/// Counts of a randomized run.
#[derive(Debug, Default)]
struct Run {
    decided: usize,
    semantic: usize,
    not_semantic: usize,
    refused: usize,
    /// Refused edits whose new version tree-sitter parses without errors.
    refused_clean: usize,
}

/// Runs `cases` random edits (1 to 3 `mutate` calls each) and checks every decided answer against
/// the whole-file comparison.
fn run(cases: usize, seed: u64, mutate: fn(&mut Vec<String>, &mut Rng, usize)) -> Run {
    let mut an = Analyzer::new(Language::Python).unwrap();
    let old = an.summarize(CORPUS.as_bytes()).unwrap();
    assert!(!old.has_error);
    let base: Vec<String> = CORPUS.lines().map(str::to_string).collect();
    // ETIP_WINDOW_SEED explores other edits (the default keeps CI reproducible).
    let seed = std::env::var("ETIP_WINDOW_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(seed);
    let mut rng = Rng(seed);
    let mut stats = WindowStats::default();
    let mut r = Run::default();
    for case in 0..cases {
        let mut lines = base.clone();
        for _ in 0..1 + rng.next(3) {
            mutate(&mut lines, &mut rng, case);
        }
        let new = lines.join("\n") + "\n";
        let (del, add) = etip_lang::labels::changed_rows(CORPUS.as_bytes(), new.as_bytes());
        match judge(&new, &del, &add, &mut stats) {
            Windowed::Decided(got) => {
                let expected = whole(&mut an, &old, &new, &del, &add);
                if got != expected
                    && let Some(path) = std::env::var_os("ETIP_DUMP_MISMATCH")
                {
                    std::fs::write(path, &new).unwrap();
                }
                assert_eq!(got, expected, "case {case}:\n{}", diff_lines(&new));
                r.decided += 1;
                match got {
                    FileChange::Semantic(_) => r.semantic += 1,
                    FileChange::NotSemantic(_) => r.not_semantic += 1,
                }
            }
            Windowed::NeedsFullParse => {
                r.refused += 1;
                if !an.summarize(new.as_bytes()).unwrap().has_error {
                    r.refused_clean += 1;
                    if std::env::var_os("ETIP_SHOW_REFUSED").is_some() {
                        eprintln!("REFUSED {case}\n{}", diff_lines(&new));
                    }
                }
            }
        }
    }
    eprintln!("{r:?}; {stats:?}");
    // Nearly every rejection is decided without the rows (the others move code between units).
    assert!(
        stats.by_windows as usize * 100 >= r.not_semantic * 95,
        "rejections decided without rows: {} of {}",
        stats.by_windows,
        r.not_semantic
    );
    r
}

#[test]
fn valid_edits_are_decided_as_whole_file_parses_decide_them() {
    let cases = 3000;
    let r = run(cases, 0x5eed, mutate_valid);
    // Refusals: comments indented less than a block between its lines, which tree-sitter reads
    // otherwise, and the like.
    assert!(r.refused * 100 < cases * 3, "too many refusals: {r:?}");
    assert!(
        r.semantic > cases / 6 && r.not_semantic > cases / 4,
        "{r:?}"
    );
}

#[test]
fn any_edit_decided_is_decided_as_whole_file_parses_decide_it() {
    // Edits that break the code are mostly refused; what is decided must still be exact.
    let cases = 2000;
    let r = run(cases, 0xbad5eed, mutate_any);
    assert!(r.decided > cases / 2, "{r:?}");
}

#[test]
fn file_level_kinds_and_names() {
    let mut stats = WindowStats::default();
    let decide = |new: &str, stats: &mut WindowStats| {
        let (del, add) = etip_lang::labels::changed_rows(CORPUS.as_bytes(), new.as_bytes());
        judge(new, &del, &add, stats)
    };
    let not = |r| Windowed::Decided(FileChange::NotSemantic(r));
    // Comments, docstrings and a suite moved onto its header's line change no token.
    let reformatted = CORPUS
        .replace("A small cache library.", "A tiny cache library.")
        .replace("# leading comment", "# first comment")
        .replace(
            "def helper(x): return x * 2",
            "def helper(x):\n    return x * 2",
        );
    assert_eq!(
        decide(&reformatted, &mut stats),
        not(NonSemantic::WhitespaceOrComment)
    );
    let imports = CORPUS.replace("import os\n", "import os, re\n");
    assert_eq!(decide(&imports, &mut stats), not(NonSemantic::ImportOnly));
    // Removing the module docstring changes the file's tokens but no unit.
    let undocumented = CORPUS.replacen(
        "\"\"\"A small cache library.\n\nUsed by the randomized window tests: it has most kinds of statements.\n\"\"\"\n",
        "",
        1,
    );
    assert_ne!(undocumented, CORPUS);
    assert_eq!(
        decide(&undocumented, &mut stats),
        not(NonSemantic::NoBodyChange)
    );
    // A method of a nested class, named with the module path.
    let body = CORPUS.replace("return f\"Node(", "return f\"Leaf(");
    assert_eq!(
        decide(&body, &mut stats),
        Windowed::Decided(FileChange::Semantic(vec![
            "cachelib.lru.LruCache.Node.__repr__".into()
        ]))
    );
    // A class-level assignment and the module-level code.
    let class_level = CORPUS
        .replace("    hits = 0\n", "    hits = 1\n")
        .replace("\ncounter += 1\n", "\ncounter += 2\n");
    assert_eq!(
        decide(&class_level, &mut stats),
        Windowed::Decided(FileChange::Semantic(vec![
            "cachelib.lru.LruCache.hits".into(),
            "cachelib.lru.counter".into()
        ]))
    );
    // An empty block is left to whole-file parses.
    let empty = CORPUS.replace(
        "def stats(self): return (self.hits, self.misses)",
        "def stats(self):",
    );
    assert_eq!(decide(&empty, &mut stats), Windowed::NeedsFullParse);
    assert_eq!(stats.refused_scan, 1);
}

#[test]
fn lexing_two_versions_together_is_lexing_each() {
    use etip_lang::python_layout::{lex, lex_pair};
    let base: Vec<String> = CORPUS.lines().map(str::to_string).collect();
    let mut rng = Rng(0x1e8);
    let mut reused = 0;
    for case in 0..1500 {
        let mut lines = base.clone();
        let mutate = if case % 2 == 0 {
            mutate_valid
        } else {
            mutate_any
        };
        for _ in 0..1 + rng.next(3) {
            mutate(&mut lines, &mut rng, case);
        }
        let new = lines.join("\n") + "\n";
        let separate = lex(CORPUS.as_bytes()).zip(lex(new.as_bytes()));
        let together = lex_pair(CORPUS.as_bytes(), new.as_bytes()).map(|l| (l.old, l.new));
        assert_eq!(together, separate, "case {case}:\n{}", diff_lines(&new));
        reused += usize::from(together.is_some());
    }
    assert!(reused > 900, "{reused}");
    // Edits at both ends, and versions that are prefixes of each other.
    for (a, b) in [
        ("x = 1\n", "x = 1\ny = 2\n"),
        (
            "def f():\n    return 1\n",
            "def f():\n    return 1\n\n\ndef g():\n    pass\n",
        ),
        ("if a:\n    x\n", "if a:\n        x\n"),
        (
            "class A:\n    def f(self):\n        x\n  # c\n",
            "class A:\n  def f(self):\n        x\n  # c\n",
        ),
        ("", "x\n"),
        ("a\n", ""),
    ]
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .into_iter()
    // A change that puts the next 100 lines in a string: the versions' lexers never reach the
    // same state again within the line ends recorded for that, and the new version is lexed to
    // its end.
    .chain([(
        format!("a = 1\n{}c = 3  #\"\"\"\n", "b = 2\n".repeat(100)),
        format!("a = \"\"\"\n{}c = 3  #\"\"\"\n", "b = 2\n".repeat(100)),
    )]) {
        let (a, b) = (a.as_str(), b.as_str());
        assert!(lex(a.as_bytes()).is_some() && lex(b.as_bytes()).is_some());
        assert_eq!(
            lex_pair(a.as_bytes(), b.as_bytes()).map(|l| (l.old, l.new)),
            lex(a.as_bytes()).zip(lex(b.as_bytes())),
            "{a:?} -> {b:?}"
        );
    }
}

/// Hand-picked changes (old, new, must be decided).
const HANDPICKED: &[(&str, &str, bool)] = &[
    // A module docstring added: no unit changes, the file's tokens do.
    ("x = 1\n", "\"\"\"Doc.\"\"\"\nx = 1\n", true),
    // A string that stops being the docstring becomes a unit.
    ("'''a'''\nx = 1\n", "import os\n'''a'''\nx = 1\n", true),
    // `;` after a docstring stays a leaf.
    (
        "def f():\n    'd'; x = 1\n",
        "def f():\n    'e'; x = 1\n",
        true,
    ),
    // A renamed function keeps its tokens: no change.
    (
        "def f(a):\n    return a\n",
        "def g(a):\n    return a\n",
        true,
    ),
    // Repeated keys: property setters, `<module>` statements.
    (
        "class A:\n    @property\n    def x(self): return 1\n    @x.setter\n    def x(self, v): pass\n",
        "class A:\n    @property\n    def x(self): return 1\n    @x.setter\n    def x(self, v): print(v)\n",
        true,
    ),
    ("f()\ng()\nh()\n", "f()\nh()\n", true),
    // Python 2.
    (
        "print 'a', b\nexec code in ns\n",
        "print 'a', c\nexec code in ns\n",
        true,
    ),
    (
        "try:\n    x\nexcept E, e:\n    raise E, 'm'\n",
        "try:\n    x\nexcept E, e:\n    raise E, 'n'\n",
        true,
    ),
    // Tabs, CRLF, a BOM, form feeds.
    (
        "def f():\n\tif a:\n\t\treturn 1\n",
        "def f():\n\tif a:\n\t\treturn 2\n",
        true,
    ),
    (
        "def f():\r\n    return 1\r\n",
        "def f():\r\n    return 2\r\n",
        true,
    ),
    ("\u{feff}x = 1\ny = 2\n", "\u{feff}x = 1\ny = 3\n", true),
    (
        "x = 1\n\u{c}\ndef f():\n    pass\n",
        "x = 2\n\u{c}\ndef f():\n    pass\n",
        true,
    ),
    // Strings of every kind.
    (
        "s = f'{a!r:>{w}}' rb'\\d' u'x'\n",
        "s = f'{a!s:>{w}}' rb'\\d' u'x'\n",
        true,
    ),
    ("s = f\"{x['k']}\"\n", "s = f\"{x['j']}\"\n", true),
    ("s = '''a\nb'''\nt = 1\n", "s = '''a\nc'''\nt = 1\n", true),
    // A class body changes; a nested class; a module-level `if`.
    (
        "class A:\n    class B:\n        y = 1\n",
        "class A:\n    class B:\n        y = 2\n",
        true,
    ),
    (
        "if a:\n    def f(): pass\n",
        "if a:\n    def f(): return\n",
        true,
    ),
    // Comments after a block: in the function's span or not.
    (
        "def f():\n    x\n    # c\ny\n",
        "def f():\n    x\n    # d\ny\n",
        true,
    ),
    (
        "def f():\n    x\n# c\ny = 1\n",
        "def f():\n    x\n# d\ny = 1\n",
        true,
    ),
    // Line continuations, also between statements.
    ("x = 1 + \\\n    2\n", "x = 1 + \\\n    3\n", true),
    ("x = a \\\n# c\ny = 1\n", "x = a \\\n# d\ny = 1\n", true),
    (
        "def f(a, \\\n      b):\n    pass\n",
        "def f(a, \\\n      c):\n    pass\n",
        true,
    ),
    (
        "x = a \\\n\ny = 1\nz = 2\n",
        "x = a \\\n\ny = 1\nz = 3\n",
        true,
    ),
    ("x = a \\\n\ny = 1\n", "x = a\n\ny = 1\n", true),
    (
        "class A:\n    x = 1 \\\n\n    y = 2\n",
        "class A:\n    x = 1 \\\n\n    y = 3\n",
        true,
    ),
    // Imports only, also at class level (in the class, they are code).
    ("import a\nx = 1\n", "import b\nx = 1\n", true),
    ("class A:\n    import a\n", "class A:\n    import b\n", true),
    // Left to whole-file parses.
    ("def f():\n    pass\n", "def f():\n", false),
    ("x = 1\n", "x = `1\n", false),
    // Python 2's backticks are strings to tree-sitter.
    ("x = `a`\n", "x = `b`\n", true),
    // Indentation Python rejects and tree-sitter reads anyway.
    (
        "if a:\n        x\n    y\n",
        "if a:\n        x\n    z\n",
        true,
    ),
    (
        "def f():\n    x = 1 \\\n\ny = 2\n",
        "def f():\n    x = 1 \\\n\ny = 3\n",
        true,
    ),
    // Windows: the module-level statements around the change, with units added, removed or
    // renamed whose names occur elsewhere in the file or not, and repeated keys.
    (
        "import a\n\ndef f():\n    return 1\n\ndef h():\n    return 3\n",
        "import a\n\ndef f():\n    return 1\n\ndef g():\n    return 2\n\ndef h():\n    return 3\n",
        true,
    ),
    (
        "import a\n\ndef f():\n    return 1\n\ndef h():\n    return 3\n\ndef f():\n    return 4\n",
        "import a\n\ndef f():\n    return 1\n\ndef f():\n    return 2\n\ndef h():\n    return 3\n\ndef f():\n    return 4\n",
        true,
    ),
    (
        "x = 1\n\ndef f():\n    return 1\n\ndef h():\n    return f()\n",
        "x = 1\n\ndef g():\n    return 1\n\ndef h():\n    return f()\n",
        true,
    ),
    (
        "x = 1\n\ndef f():\n    return 1\n\ndef h():\n    return 3\n",
        "x = 1\n\ndef g():\n    return 1\n\ndef h():\n    return 3\n",
        true,
    ),
    (
        "class A:\n    def f(self):\n        return 1\n\nclass A:\n    def f(self):\n        return 2\n",
        "class A:\n    def f(self):\n        return 1\n\nclass A:\n    def f(self):\n        return 3\n",
        true,
    ),
    (
        "x = 1\nprint(x)\ny = 2\nprint(y)\n",
        "x = 1\nprint(x)\ny = 3\nprint(y)\nprint(x)\n",
        true,
    ),
    (
        "x = 1\ns = \"\"\"\ndef f():\n    pass\n\"\"\"\ny = 2\n",
        "x = 1\ns = \"\"\"\ndef f():\n    pass\n\"\"\"\ny = 3\n",
        true,
    ),
    (
        "\"\"\"Doc.\"\"\"\nx = 1\n",
        "x = 0\n\"\"\"Doc.\"\"\"\nx = 1\n",
        true,
    ),
    (
        "x = 0\n\"\"\"Doc.\"\"\"\nx = 1\n",
        "\"\"\"Doc.\"\"\"\nx = 1\n",
        true,
    ),
    (
        "import a\n@d\ndef f():\n    return 1\n",
        "import a\n@d\ndef f():\n    return 2\n",
        true,
    ),
    // Windows in a class body.
    (
        "class A:\n    \"\"\"Doc.\"\"\"\n    x = 1\n\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n\ny = 1\n",
        "class A:\n    \"\"\"Doc.\"\"\"\n    x = 1\n\n    def f(self):\n        return 1\n\n    def g(self):\n        return 3\n\ny = 1\n",
        true,
    ),
    (
        "class A:\n    x = 1\n\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n",
        "class A:\n    x = 1\n\n    def f(self):\n        return 1\n\n    def h(self):\n        return 5\n\n    def g(self):\n        return 2\n",
        true,
    ),
    (
        "@dataclass\nclass A:\n    x: int = 1\n    y: int = 2\n    z: int = 3\n",
        "@dataclass\nclass A:\n    x: int = 1\n    y: int = 4\n    z: int = 3\n",
        true,
    ),
    (
        "class A:\n    x = 1\n    y = 2\n\nclass B:\n    z = 3\n    w = 4\n",
        "class A:\n    x = 1\n    y = 5\n\nclass C:\n    z = 3\n    w = 4\n",
        true,
    ),
    (
        "class A:\n    x = 1\n    y = 2\n\nclass B:\n    z = 3\n    w = 4\n",
        "class A:\n    x = 1\n    y = 2\n\nclass C:\n    z = 3\n    w = 4\n",
        true,
    ),
    (
        "class A:\n    x = 1\n    class B:\n        def f(self):\n            return 1\n    y = 2\n",
        "class A:\n    x = 1\n    class B:\n        def f(self):\n            return 2\n    y = 2\n",
        true,
    ),
    (
        "class A:\n    x = 1\n    def f(self):\n        pass\n# c\n    y = 2\n",
        "class A:\n    x = 1\n    def f(self):\n        pass\n# c\n    y = 3\n",
        true,
    ),
    (
        "class A:\n    x = 1\n    y = 2\nclass A:\n    y = 2\n",
        "class A:\n    x = 1\nclass A:\n    y = 2\n",
        true,
    ),
    (
        "class A:\n    x = 1\n    f(x)\n    y = 2\n",
        "class A:\n    x = 1\n    f(x)\n    g(x)\n    y = 2\n",
        true,
    ),
    (
        "class A:\n    x = 1\n    import os\n    y = 2\n",
        "class A:\n    x = 1\n    import sys\n    y = 2\n",
        true,
    ),
    // A body line dedented to the module level: the class ends there in the new version.
    (
        "class A:\n    x = 1\n    y = 2\n    z = 3\n    w = 4\n",
        "class A:\n    x = 1\n    y = 2\nz = 3\n    w = 4\n",
        true,
    ),
    (
        "class A:\n    x = 1\n    # c\n    y = 2\n",
        "class A:\n    x = 1\n    # d\n    y = 2\n",
        true,
    ),
];
/// Hand-picked changes, each judged against the whole-file comparison (under the same path and
/// with the file moved); all but the marked ones must be decided.
#[test]
fn handpicked_changes_agree_with_whole_file_parses() {
    let mut an = Analyzer::new(Language::Python).unwrap();
    let mut stats = WindowStats::default();
    for (i, (old, new, decided)) in HANDPICKED.iter().enumerate() {
        for (op, np) in [
            ("pkg/m.py", "pkg/m.py"),
            ("src/pkg/a.py", "src/pkg/b/__init__.py"),
        ] {
            let (got, expected) = judged_and_expected(&mut an, (old, new), (op, np), &mut stats);
            match got {
                Windowed::Decided(got) => assert_eq!(got, expected, "case {i}: {old:?} -> {new:?}"),
                Windowed::NeedsFullParse => assert!(!decided, "case {i} refused: {old:?}"),
            }
        }
    }
}

/// Which files are decided from their windows and which are lexed whole because a unit added,
/// removed or renamed there may have a namesake outside them.
#[test]
fn windows_are_used_unless_a_changed_key_occurs_outside_them() {
    let cases = [
        // `g` added, named nowhere else: the windows decide.
        (
            "import a\n\ndef f():\n    return 1\n\ndef h():\n    return 3\n",
            "import a\n\ndef f():\n    return 1\n\ndef g():\n    return 2\n\ndef h():\n    return 3\n",
            (1, 0),
        ),
        // `f` renamed while `h` calls `f`: lexed whole.
        (
            "x = 1\n\ndef f():\n    return 1\n\ndef h():\n    return f()\n",
            "x = 1\n\ndef g():\n    return 1\n\ndef h():\n    return f()\n",
            (0, 1),
        ),
        // A method changed in a class: the window starts in its body.
        (
            "class A:\n    x = 1\n\n    def f(self):\n        return 1\n",
            "class A:\n    x = 1\n\n    def f(self):\n        return 2\n",
            (1, 0),
        ),
        // A body changed: same keys on both sides.
        (
            "x = 1\n\ndef f():\n    return 1\n\ndef h():\n    return f()\n",
            "x = 1\n\ndef f():\n    return 2\n\ndef h():\n    return f()\n",
            (1, 0),
        ),
    ];
    for (old, new, (windows, whole)) in cases {
        let mut stats = WindowStats::default();
        let (del, add) = etip_lang::labels::changed_rows(old.as_bytes(), new.as_bytes());
        let m = Modified {
            old: old.as_bytes(),
            new: new.as_bytes(),
            old_path: "m.py",
            new_path: "m.py",
            deleted: &del,
            added: &add,
        };
        assert!(matches!(judge_python(&m, &mut stats), Windowed::Decided(_)));
        assert_eq!(
            (stats.python_windows, stats.python_window_keys),
            (windows, whole),
            "{old:?} -> {new:?}"
        );
    }
}

/// A judged change and what the whole-file comparison says of it (under the given paths).
fn judged_and_expected(
    an: &mut Analyzer,
    (old, new): (&str, &str),
    (op, np): (&str, &str),
    stats: &mut WindowStats,
) -> (Windowed, FileChange) {
    let (del, add) = etip_lang::labels::changed_rows(old.as_bytes(), new.as_bytes());
    let m = Modified {
        old: old.as_bytes(),
        new: new.as_bytes(),
        old_path: op,
        new_path: np,
        deleted: &del,
        added: &add,
    };
    let got = judge_checked(&m, stats);
    let so = an.summarize(old.as_bytes()).unwrap();
    let sn = an.summarize(new.as_bytes()).unwrap();
    let expected = compare(
        Language::Python,
        Some(Side {
            summary: &so,
            path: op,
            rows: &del,
        }),
        Some(Side {
            summary: &sn,
            path: np,
            rows: &add,
        }),
    );
    (got, expected)
}

/// A long module: imports, module-level functions, a class with many methods, constants.
fn long_module(edits: &[(&str, &str)]) -> String {
    let mut out = String::from("\"\"\"Doc.\"\"\"\nimport os\nimport sys\n\n");
    for i in 0..40 {
        out.push_str(&format!(
            "def f{i}(x, y=1):\n    \"\"\"F {i}.\"\"\"\n    z = x * {i} + y\n    # note {i}\n    return z - os.sep.count('a')\n\n"
        ));
    }
    out.push_str("class Big(object):\n    \"\"\"Big.\"\"\"\n    size = 3\n\n");
    for i in 0..60 {
        out.push_str(&format!(
            "    def m{i}(self, a):\n        if a > {i}:\n            return self.size + a\n        return [k for k in range(a)]\n\n"
        ));
    }
    out.push_str("\nLIMIT = 10\n\n");
    for i in 40..80 {
        out.push_str(&format!("def g{i}(x):\n    return x + {i}\n\n"));
    }
    for (from, to) in edits {
        assert!(out.contains(from), "{from}");
        out = out.replacen(from, to, 1);
    }
    out
}

/// Changes far apart, so that the windows skip the long stretches between them: every decision
/// equals the whole-file comparison's, and most are made from windows.
#[test]
fn changes_far_apart_agree_with_whole_file_parses() {
    let mut an = Analyzer::new(Language::Python).unwrap();
    let old = long_module(&[]);
    let cases: Vec<Vec<(&str, &str)>> = vec![
        vec![
            ("import sys\n", "import sys\nimport re\n"),
            ("return x + 60\n", "return x + 61\n"),
        ],
        vec![
            ("import sys\n", "import sys\nimport re\n"),
            (
                "    def m30(self, a):\n        if a > 30:",
                "    def m30(self, a):\n        if a >= 30:",
            ),
        ],
        vec![
            ("z = x * 3 + y", "z = x * 3 - y"),
            ("if a > 50:", "if a > 51:"),
        ],
        vec![
            ("# note 2\n", "# note two\n"),
            ("# note 35\n", "# note 35!\n"),
        ],
        vec![("import sys\n", "import re\n"), ("# note 35\n", "")],
        vec![
            ("def f1(x, y=1):", "def f1(x, y=2):"),
            ("def g70(x):", "def g70(x, w=0):"),
        ],
        vec![("def f3(", "def h3("), ("LIMIT = 10", "LIMIT = 11")],
        vec![("def f3(", "def f33("), ("def g50(", "def g51(")],
        vec![
            (
                "    def m10(self, a):\n        if a > 10:\n            return self.size + a\n        return [k for k in range(a)]\n\n",
                "",
            ),
            ("return x + 75\n", "return x + 76\n"),
        ],
        vec![
            ("size = 3\n", "size = 4\n"),
            ("    def m59(self, a):", "    def m59(self, b):"),
        ],
        vec![("\"\"\"F 4.\"\"\"\n", ""), ("\"\"\"F 39.\"\"\"\n", "")],
        vec![
            ("LIMIT = 10\n", "LIMIT = 10\nprint(LIMIT)\n"),
            ("import os\n", "import os\nprint(1)\n"),
        ],
        vec![
            ("LIMIT = 10\n", ""),
            ("import os\n", "import os\nLIMIT = 10\n"),
        ],
        vec![
            ("return x + 41\n", "return x + 41;\n"),
            ("z = x * 1 + y", "z = (x * 1 + y)"),
        ],
    ];
    let mut stats = WindowStats::default();
    for (k, edits) in cases.iter().enumerate() {
        let new = long_module(edits);
        let paths = ("pkg/m.py", "pkg/m.py");
        let (got, expected) = judged_and_expected(&mut an, (&old, &new), paths, &mut stats);
        match got {
            Windowed::Decided(got) => assert_eq!(got, expected, "case {k}: {edits:?}"),
            Windowed::NeedsFullParse => panic!("case {k} refused"),
        }
    }
    assert!(
        stats.python_windows >= 8,
        "windows decided only {} of {} files",
        stats.python_windows,
        cases.len()
    );
    assert!(
        stats.python_window_bytes < stats.file_bytes / 4,
        "the windows held {} of {} bytes",
        stats.python_window_bytes,
        stats.file_bytes
    );
}
