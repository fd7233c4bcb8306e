//! The Python lexer's layout decisions: one-line suites, where blocks end, line continuations, and
//! what it refuses.

use etip_lang::python_layout::{Kind, lex};

/// Tokens as `text` for real ones, `NL`, `IN`, `DE@offset`, `\\` for continuations.
fn show(src: &str) -> Option<Vec<String>> {
    let toks = lex(src.as_bytes())?;
    Some(
        toks.iter()
            .map(|t| match t.kind {
                Kind::Newline => "NL".to_string(),
                Kind::Indent => "IN".to_string(),
                Kind::Dedent => format!("DE@{}", t.start),
                Kind::Cont => "\\".to_string(),
                _ => src[t.start as usize..t.end as usize].to_string(),
            })
            .collect(),
    )
}

#[test]
fn one_line_suites_get_the_layout_of_indented_ones() {
    let one = show("if a: x; y\n").unwrap();
    let two = show("if a:\n    x; y\n").unwrap();
    assert_eq!(one[..7], two[..7]);
    assert_eq!(one.join(" "), "if a : IN x ; y NL DE@10");
}

#[test]
fn dedents_go_where_the_scanner_puts_them() {
    // Comments at the block's indentation belong to it; the first less indented one ends it.
    let src = "def f():\n    x\n    # c\n  # d\n    # e\ny\n";
    let toks = show(src).unwrap();
    assert_eq!(toks.join(" "), "def f ( ) : IN x NL DE@22 y NL");
    // Comments between the statements of a block never close it.
    let src = "def f():\n    x\n# c\n    y\n";
    assert_eq!(
        show(src).unwrap().join(" "),
        "def f ( ) : IN x NL y NL DE@24"
    );
}

#[test]
fn continuations_are_leaves_unless_a_string_follows() {
    assert_eq!(
        show("x = 1 + \\\n  2\n").unwrap().join(" "),
        "x = 1 + \\ 2 NL"
    );
    assert_eq!(
        show("x = 'a' \\\n  'b'\n").unwrap().join(" "),
        "x = 'a' 'b' NL"
    );
    assert_eq!(
        show("x = (1 + \\\n\n 2)\n").unwrap().join(" "),
        "x = ( 1 + \\ 2 ) NL"
    );
    assert_eq!(
        show("x = 1 \\\n\ny = 2\n").unwrap().join(" "),
        "x = 1 \\ NL y = 2 NL"
    );
    // Followed by a blank line where a block ends: after the `Dedent`.
    assert_eq!(
        show("def f():\n    x = 1 \\\n\ny = 2\n").unwrap().join(" "),
        "def f ( ) : IN x = 1 NL DE@18 \\ y = 2 NL"
    );
    assert_eq!(
        show("from ... import a\n").unwrap().join(" "),
        "from . . . import a NL"
    );
}

#[test]
fn refuses_what_tree_sitter_reads_otherwise() {
    for src in [
        "def f():\nx = 1\n", // empty block
        "class A:\n    @d\n# c\n    def f(self): pass\n",
        "def f():\n    x = (a +\n  b)\n", // a dedented line where no `)` may follow
        "x = `y\n",
        "<<<<<<< HEAD\n",
        "def f(async=True): pass\n",
        "if a: for b in c: pass\n",
        "match x\n",
        "case x: pass\n",
        "match x:\n    y = 1\n",
        "x = f(a b)\n",
        "x = [1,, 2]\n",
        "x = (a; b)\n",
        "s = 'open\n",
    ] {
        assert!(lex(src.as_bytes()).is_none(), "{src:?}");
    }
    // Unexpected indents and dedents to levels never opened get no layout token.
    assert_eq!(
        show("x = 1\n    y = 2\n").unwrap().join(" "),
        "x = 1 NL y = 2 NL"
    );
    assert_eq!(
        show("if a:\n        x\n    y\n").unwrap().join(" "),
        "if a : IN x NL DE@15 y NL"
    );
    // A dedented line after a value may close a bracket: no block ends there.
    assert!(lex(b"def f():\n    x = g(a,\n  b)\n").is_some());
}
