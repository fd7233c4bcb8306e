//! The semantic rule on real Java and Python sources, with changed rows computed by a line diff.

use etip_lang::Language;
use etip_lang::semantic::{Analyzer, FileChange, NonSemantic, Side, compare};

/// Rows (0-based) removed from `old` and added in `new`, by a simple LCS line diff.
fn changed_rows(old: &str, new: &str) -> (Vec<usize>, Vec<usize>) {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut l = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            l[i][j] = if a[i] == b[j] {
                l[i + 1][j + 1] + 1
            } else {
                l[i + 1][j].max(l[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let (mut del, mut add) = (Vec::new(), Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < m && (i == n || l[i][j + 1] >= l[i + 1][j]) {
            add.push(j);
            j += 1;
        } else {
            del.push(i);
            i += 1;
        }
    }
    (del, add)
}

fn judge(lang: Language, path: &str, old: &str, new: &str) -> FileChange {
    let mut an = Analyzer::new(lang).unwrap();
    let so = an.summarize(old.as_bytes()).unwrap();
    let sn = an.summarize(new.as_bytes()).unwrap();
    let (del, add) = changed_rows(old, new);
    compare(
        lang,
        Some(Side {
            summary: &so,
            path,
            rows: &del,
        }),
        Some(Side {
            summary: &sn,
            path,
            rows: &add,
        }),
    )
}

const JAVA: &str = r#"package io.netty.buffer;

import java.util.List;

/** Docs. */
public class ByteBuf {
    private static final int SIZE = 16;
    private int count;

    static {
        System.loadLibrary("x");
    }

    public ByteBuf() {
        count = 0;
    }

    public int readInt() {
        int v = 0;
        for (int i = 0; i < 4; i++) {
            v = (v << 8) | next();
        }
        return v;
    }

    public int readInt(int index) {
        return index;
    }

    private int next() { return 1; }

    static class Inner {
        Runnable r = () -> System.out.println("x");
        void run() { r.run(); }
    }

    enum Mode { FAST(1), SLOW(2); Mode(int x) {} }
}
"#;

fn semantic_names(c: FileChange) -> Vec<String> {
    match c {
        FileChange::Semantic(n) => n,
        other => panic!("expected a semantic change, got {other:?}"),
    }
}

#[test]
fn java_body_change_names_the_method() {
    let new = JAVA.replace("v = (v << 8) | next();", "v = (v << 8) + next();");
    let names = semantic_names(judge(Language::Java, "B.java", JAVA, &new));
    assert_eq!(names, vec!["io.netty.buffer.ByteBuf#readInt"]);
}

#[test]
fn java_overload_constructor_field_initialiser_static_lambda_enum() {
    let cases = [
        (
            "return index;",
            "return index + 1;",
            "io.netty.buffer.ByteBuf#readInt",
        ),
        ("count = 0;", "count = 1;", "io.netty.buffer.ByteBuf#<init>"),
        ("SIZE = 16;", "SIZE = 32;", "io.netty.buffer.ByteBuf#SIZE"),
        (
            "System.loadLibrary(\"x\");",
            "System.loadLibrary(\"y\");",
            "io.netty.buffer.ByteBuf#<clinit>",
        ),
        (
            "System.out.println(\"x\")",
            "System.out.println(\"z\")",
            "io.netty.buffer.ByteBuf.Inner#r",
        ),
        (
            "void run() { r.run(); }",
            "void run() { r.run(); r.run(); }",
            "io.netty.buffer.ByteBuf.Inner#run",
        ),
        ("FAST(1)", "FAST(3)", "io.netty.buffer.ByteBuf.Mode#FAST"),
    ];
    for (from, to, expect) in cases {
        let new = JAVA.replace(from, to);
        assert_ne!(new, JAVA, "{from}");
        let names = semantic_names(judge(Language::Java, "B.java", JAVA, &new));
        assert_eq!(names, vec![expect.to_string()], "{from} -> {to}");
    }
}

#[test]
fn java_non_semantic_changes() {
    let ws = JAVA.replace("int v = 0;", "int   v =\n 0;   ");
    assert_eq!(
        judge(Language::Java, "B.java", JAVA, &ws),
        FileChange::NotSemantic(NonSemantic::WhitespaceOrComment)
    );
    let comment = JAVA.replace("int v = 0;", "int v = 0; // start\n        /* more */");
    assert_eq!(
        judge(Language::Java, "B.java", JAVA, &comment),
        FileChange::NotSemantic(NonSemantic::WhitespaceOrComment)
    );
    let import = JAVA.replace("import java.util.List;", "import java.util.Map;");
    assert_eq!(
        judge(Language::Java, "B.java", JAVA, &import),
        FileChange::NotSemantic(NonSemantic::ImportOnly)
    );
    let moved = JAVA.replace("package io.netty.buffer;", "package io.netty.buf;");
    assert_eq!(
        judge(Language::Java, "B.java", JAVA, &moved),
        FileChange::NotSemantic(NonSemantic::RenameOnly)
    );
    let signature = JAVA.replace("private int next()", "private final int next()");
    assert_eq!(
        judge(Language::Java, "B.java", JAVA, &signature),
        FileChange::NotSemantic(NonSemantic::NoBodyChange)
    );
    let renamed = JAVA.replace("public int readInt() {", "public int readInt32() {");
    assert_eq!(
        judge(Language::Java, "B.java", JAVA, &renamed),
        FileChange::NotSemantic(NonSemantic::NoBodyChange)
    );
    let field = JAVA.replace("private int count;", "private long count;");
    assert_eq!(
        judge(Language::Java, "B.java", JAVA, &field),
        FileChange::NotSemantic(NonSemantic::NoBodyChange)
    );
}

const PY: &str = r#""""Module docs."""
import os
from typing import List

LIMIT = 10


def helper(x, y=2):
    """Helper docs."""
    total = 0
    for i in range(x):
        total += i
    return total + y


class Session:
    """Session docs."""
    timeout = 5

    @property
    def size(self):
        return len(self.items)

    def send(self, req):
        def inner():
            return req
        return inner()


if __name__ == "__main__":
    helper(3)
"#;

#[test]
fn python_semantic_changes_are_named() {
    let cases = [
        (
            "        total += i\n    return",
            "        total += i\n    total *= 1\n    return",
            "requests.sessions.helper",
        ),
        ("y=2", "y=3", "requests.sessions.helper"),
        (
            "timeout = 5",
            "timeout = 6",
            "requests.sessions.Session.timeout",
        ),
        (
            "    @property\n",
            "    @functools.cached_property\n",
            "requests.sessions.Session.size",
        ),
        (
            "            return req",
            "            return req or None",
            "requests.sessions.Session.send",
        ),
        ("LIMIT = 10", "LIMIT = 20", "requests.sessions.LIMIT"),
        ("    helper(3)", "    helper(4)", "requests.sessions"),
    ];
    for (from, to, expect) in cases {
        let new = PY.replacen(from, to, 1);
        assert_ne!(new, PY, "{from}");
        let names = semantic_names(judge(
            Language::Python,
            "src/requests/sessions.py",
            PY,
            &new,
        ));
        assert_eq!(names, vec![expect.to_string()], "{from} -> {to}");
    }
}

#[test]
fn python_non_semantic_changes() {
    let doc = PY.replace(
        "\"\"\"Helper docs.\"\"\"",
        "\"\"\"Helper docs, longer.\"\"\"",
    );
    assert_eq!(
        judge(Language::Python, "pkg/m.py", PY, &doc),
        FileChange::NotSemantic(NonSemantic::WhitespaceOrComment)
    );
    let comment = PY.replace("    total = 0\n", "    # reset\n    total = 0  # sum\n");
    assert_eq!(
        judge(Language::Python, "pkg/m.py", PY, &comment),
        FileChange::NotSemantic(NonSemantic::WhitespaceOrComment)
    );
    let import = PY.replace("import os\n", "import os\nimport sys\n");
    assert_eq!(
        judge(Language::Python, "pkg/m.py", PY, &import),
        FileChange::NotSemantic(NonSemantic::ImportOnly)
    );
    let renamed = PY.replace("def helper(x, y=2):", "def compute(x, y=2):");
    assert_eq!(
        judge(Language::Python, "pkg/m.py", PY, &renamed),
        FileChange::NotSemantic(NonSemantic::NoBodyChange)
    );
    let annotated = PY.replace("    timeout = 5\n", "    timeout = 5\n    retries: int\n");
    assert_eq!(
        judge(Language::Python, "pkg/m.py", PY, &annotated),
        FileChange::NotSemantic(NonSemantic::NoBodyChange),
        "a bare annotation declares, it runs nothing"
    );
    let base = PY.replace("class Session:", "class Session(object):");
    assert_eq!(
        judge(Language::Python, "pkg/m.py", PY, &base),
        FileChange::NotSemantic(NonSemantic::NoBodyChange)
    );
}

#[test]
fn python_indentation_is_structure() {
    // Moving a statement out of a loop keeps the tokens but changes the program.
    let new = PY.replace("        total += i\n", "    total += i\n");
    let names = semantic_names(judge(Language::Python, "pkg/m.py", PY, &new));
    assert_eq!(names, vec!["pkg.m.helper"]);
}

#[test]
fn ast_equality_ignores_layout_and_comments_only() {
    let mut j = Analyzer::new(Language::Java).unwrap();
    let reformatted = JAVA
        .replace("    ", "\t")
        .replace("{ return 1; }", "{\n return 1; // one\n}");
    assert!(
        j.ast_equal(JAVA.as_bytes(), reformatted.as_bytes())
            .unwrap()
    );
    let changed = JAVA.replace("return 1;", "return 2;");
    assert!(!j.ast_equal(JAVA.as_bytes(), changed.as_bytes()).unwrap());
    let mut p = Analyzer::new(Language::Python).unwrap();
    let moved = PY.replace("        total += i\n", "    total += i\n");
    assert!(!p.ast_equal(PY.as_bytes(), moved.as_bytes()).unwrap());
    let commented = PY.replace("LIMIT = 10", "LIMIT = 10  # max");
    assert!(p.ast_equal(PY.as_bytes(), commented.as_bytes()).unwrap());
}

#[test]
fn added_and_deleted_files() {
    let mut an = Analyzer::new(Language::Java).unwrap();
    let s = an.summarize(JAVA.as_bytes()).unwrap();
    let rows: Vec<usize> = (0..JAVA.lines().count()).collect();
    let side = Side {
        summary: &s,
        path: "B.java",
        rows: &rows,
    };
    let added = semantic_names(compare(Language::Java, None, Some(side)));
    assert!(added.contains(&"io.netty.buffer.ByteBuf#readInt".to_string()));
    let iface = "package a;\ninterface I { void f(); }\n";
    let si = an.summarize(iface.as_bytes()).unwrap();
    let rows = [0usize, 1];
    assert_eq!(
        compare(
            Language::Java,
            None,
            Some(Side {
                summary: &si,
                path: "I.java",
                rows: &rows
            })
        ),
        FileChange::NotSemantic(NonSemantic::NoBodyChange)
    );
}

#[test]
fn incremental_reparse_gives_the_same_summary() {
    let cases = [
        (
            Language::Java,
            JAVA.to_string(),
            JAVA.replace("return index;", "return index * 2;"),
        ),
        (
            Language::Java,
            JAVA.to_string(),
            JAVA.replace("package io.netty.buffer;", "package x;"),
        ),
        (
            Language::Java,
            JAVA.to_string(),
            format!("{JAVA}\nclass Extra {{ int f() {{ return 0; }} }}\n"),
        ),
        (
            Language::Python,
            PY.to_string(),
            PY.replace("        total += i\n", "    total += i\n"),
        ),
        (
            Language::Python,
            PY.to_string(),
            PY.replace("timeout = 5", "timeout = 5\n    retries = 3"),
        ),
    ];
    for (lang, old, new) in cases {
        let mut an = Analyzer::new(lang).unwrap();
        let (_, old_tree) = an.summarize_after(old.as_bytes(), None).unwrap();
        let (inc, _) = an
            .summarize_after(new.as_bytes(), Some((&old_tree, old.as_bytes())))
            .unwrap();
        let full = an.summarize(new.as_bytes()).unwrap();
        assert_eq!(inc.units, full.units);
        assert_eq!(inc.package, full.package);
        assert_eq!(inc.all_hash(), full.all_hash());
        assert_eq!(inc.code_hash(), full.code_hash());
    }
}
