//! A candidate's version of one source file, parsed: its syntax tree, the rows the patch added
//! (against the original, by a Myers line diff), and the questions every kind of finding asks
//! of a node (its text, its line, the function around it, that function's parameters, the
//! names bound at module or class level).

use crate::ScreenError;
use crate::syntax::Syntax;
use etip_core::Language;
use etip_core::hack::{Finding, HackKind};
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::{Node, Parser, Tree};

/// A name bound for the life of the process.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// The value it is bound to (`None`: a Java field without an initialiser).
    pub value: Option<Node<'a>>,
    /// The statement or field declaration that binds it.
    pub declaration: Node<'a>,
}

/// A parsed file of one side.
pub struct Parsed {
    pub text: String,
    pub tree: Tree,
}

/// Parses `text` as `lang`.
pub fn parse(lang: Language, text: &str) -> Result<Parsed, ScreenError> {
    let mut parser = Parser::new();
    let grammar: tree_sitter::Language = match lang {
        Language::Java => tree_sitter_java::LANGUAGE.into(),
        Language::Python => tree_sitter_python::LANGUAGE.into(),
    };
    parser
        .set_language(&grammar)
        .map_err(|e| ScreenError::Grammar(e.to_string()))?;
    let tree = parser
        .parse(text, None)
        .ok_or_else(|| ScreenError::Grammar("tree-sitter gave no tree".into()))?;
    Ok(Parsed {
        text: text.to_string(),
        tree,
    })
}

/// The candidate's file with what the screen needs to know of it.
pub struct Source<'a> {
    pub lang: Language,
    pub syntax: &'static Syntax,
    pub path: &'a str,
    pub cand: &'a Parsed,
    /// The original's text (empty for an added file).
    pub original: &'a str,
    /// 0-based rows of the candidate the patch added or changed.
    pub added: BTreeSet<usize>,
    lines: Vec<&'a str>,
    /// Literal values of the original file (normalised), to tell a new constant from an old one.
    pub original_literals: BTreeSet<String>,
}

impl<'a> Source<'a> {
    pub fn new(
        lang: Language,
        path: &'a str,
        original: Option<&'a Parsed>,
        cand: &'a Parsed,
    ) -> Source<'a> {
        let original_text = original.map(|o| o.text.as_str()).unwrap_or_default();
        let added = added_rows(original_text, &cand.text);
        let syntax = Syntax::of(lang);
        let original_literals = original
            .map(|o| crate::literals::of_tree(o.tree.root_node(), &o.text))
            .unwrap_or_default();
        Source {
            lang,
            syntax,
            path,
            cand,
            original: original_text,
            added,
            lines: cand.text.lines().collect(),
            original_literals,
        }
    }

    pub fn root(&self) -> Node<'a> {
        self.cand.tree.root_node()
    }

    pub fn text(&self, n: Node) -> &'a str {
        n.utf8_text(self.cand.text.as_bytes()).unwrap_or_default()
    }

    /// The node's start row was added by the patch.
    pub fn is_added(&self, n: Node) -> bool {
        self.added.contains(&n.start_position().row)
    }

    /// Some row of the node was added by the patch.
    pub fn touches_added(&self, n: Node) -> bool {
        self.added
            .range(n.start_position().row..=n.end_position().row)
            .next()
            .is_some()
    }

    /// A finding at `n`'s first line, quoting that line.
    pub fn finding(&self, kind: HackKind, n: Node, detail: impl Into<String>) -> Finding {
        let row = n.start_position().row;
        Finding::new(
            kind,
            self.path,
            row + 1,
            self.lines.get(row).copied().unwrap_or_default(),
            detail,
        )
    }

    /// The innermost function or method around `n`.
    pub fn enclosing_function(&self, n: Node<'a>) -> Option<Node<'a>> {
        let mut cur = n.parent();
        while let Some(c) = cur {
            if self.syntax.functions.contains(&c.kind()) {
                return Some(c);
            }
            cur = c.parent();
        }
        None
    }

    /// The parameter names of a function or method (`self` and `cls` included: a method's
    /// object is its input too).
    pub fn parameters(&self, function: Node<'a>) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let Some(params) = function.child_by_field_name("parameters") else {
            return out;
        };
        let mut stack = vec![params];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "identifier" => {
                    out.insert(self.text(n).to_string());
                }
                // A default's value and a type are not names of the parameter.
                "default_parameter"
                | "typed_default_parameter"
                | "typed_parameter"
                | "formal_parameter"
                | "spread_parameter" => {
                    if let Some(name) = n.child_by_field_name("name") {
                        out.insert(self.text(name).to_string());
                    } else if let Some(first) = n.named_child(0)
                        && first.kind() == "identifier"
                    {
                        out.insert(self.text(first).to_string());
                    }
                    // `*args` / `**kw` inside typed parameters.
                    for i in 0..n.named_child_count() {
                        if let Some(c) = n.named_child(i as u32)
                            && matches!(c.kind(), "list_splat_pattern" | "dictionary_splat_pattern")
                        {
                            stack.push(c);
                        }
                    }
                }
                _ => {
                    for i in 0..n.named_child_count() {
                        if let Some(c) = n.named_child(i as u32) {
                            stack.push(c);
                        }
                    }
                }
            }
        }
        out
    }

    /// Identifiers in `n` (variables, attribute and field names).
    pub fn identifiers(&self, n: Node<'a>) -> BTreeSet<&'a str> {
        let mut out = BTreeSet::new();
        walk(n, &mut |c| {
            if c.kind() == "identifier" {
                out.insert(self.text(c));
            }
        });
        out
    }

    /// Names bound at module or class level (Python) or as `static` fields (Java): what lives
    /// as long as the process, not one call.
    pub fn static_bindings(&self) -> BTreeMap<&'a str, Binding<'a>> {
        let mut out = BTreeMap::new();
        match self.lang {
            Language::Python => self.python_bindings(self.root(), &mut out),
            Language::Java => walk(self.root(), &mut |n| {
                if n.kind() == "field_declaration" && self.has_modifier(n, "static") {
                    for i in 0..n.named_child_count() {
                        if let Some(d) = n.named_child(i as u32)
                            && d.kind() == "variable_declarator"
                            && let Some(name) = d.child_by_field_name("name")
                        {
                            out.insert(
                                self.text(name),
                                Binding {
                                    value: d.child_by_field_name("value"),
                                    declaration: n,
                                },
                            );
                        }
                    }
                }
            }),
        }
        out
    }

    /// Python: assignments directly in the module or in a class body (also under `if`/`try`
    /// at module level).
    fn python_bindings(&self, scope: Node<'a>, out: &mut BTreeMap<&'a str, Binding<'a>>) {
        for i in 0..scope.named_child_count() {
            let Some(st) = scope.named_child(i as u32) else {
                continue;
            };
            match st.kind() {
                "expression_statement" => {
                    if let Some(a) = st.named_child(0)
                        && a.kind() == "assignment"
                        && let (Some(l), Some(r)) = (
                            a.child_by_field_name("left"),
                            a.child_by_field_name("right"),
                        )
                        && l.kind() == "identifier"
                    {
                        out.insert(
                            self.text(l),
                            Binding {
                                value: Some(r),
                                declaration: st,
                            },
                        );
                    }
                }
                "class_definition" => {
                    if let Some(body) = st.child_by_field_name("body") {
                        self.python_bindings(body, out);
                    }
                }
                "decorated_definition" => {
                    if let Some(d) = st.child_by_field_name("definition")
                        && d.kind() == "class_definition"
                        && let Some(body) = d.child_by_field_name("body")
                    {
                        self.python_bindings(body, out);
                    }
                }
                "if_statement" | "try_statement" | "block" | "else_clause" | "except_clause" => {
                    self.python_bindings(st, out)
                }
                _ => {}
            }
        }
    }

    /// A Java declaration carries the modifier `m`.
    pub fn has_modifier(&self, decl: Node, m: &str) -> bool {
        (0..decl.child_count()).any(|i| {
            decl.child(i).is_some_and(|c| {
                c.kind() == "modifiers" && self.text(c).split_whitespace().any(|w| w == m)
            })
        })
    }
}

/// Every node under `n` (itself included), depth first.
pub fn walk<'t>(n: Node<'t>, f: &mut dyn FnMut(Node<'t>)) {
    let mut cursor = n.walk();
    let mut stack = vec![n];
    while let Some(c) = stack.pop() {
        f(c);
        let kids: Vec<Node<'t>> = c.children(&mut cursor).collect();
        stack.extend(kids.into_iter().rev());
    }
}

/// Rows (0-based) of `new` that a Myers line diff marks as inserted against `old`.
pub fn added_rows(old: &str, new: &str) -> BTreeSet<usize> {
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_lines(old, new);
    let mut out = BTreeSet::new();
    for op in diff.ops() {
        for c in diff.iter_changes(op) {
            if c.tag() == similar::ChangeTag::Insert {
                out.extend(c.new_index());
            }
        }
    }
    out
}
