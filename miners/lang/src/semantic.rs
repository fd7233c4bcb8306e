//! Tree-sitter summaries of source files and the semantic-change decision.
//!
//! A [`FileSummary`] holds, for one version of a file, the hash of its token stream (comments,
//! whitespace and Python docstrings ignored, node structure kept), the same hash without imports and
//! the package declaration, and its *semantic units*: the places where a changed line makes a change
//! semantic.
//!
//! Java units: method and constructor bodies (lambdas and anonymous classes inside them belong to the
//! enclosing body), field and constant initialisers, static and instance initialiser blocks, and enum
//! constants (arguments and bodies).
//! Python units: whole function definitions (decorators, default values and body; nested functions
//! belong to the outer one), class-level statements other than definitions, imports, docstrings and
//! bare annotations (`x: int`), and module-level statements other than definitions, imports, bare
//! annotations and the module docstring.

use std::collections::HashMap;
use std::hash::Hasher;
use std::sync::{Arc, LazyLock, OnceLock};

use etip_core::candidate::Language;
pub use tree_sitter::Tree;
use tree_sitter::{InputEdit, Node, Parser, Point};

use crate::LangError;

/// One semantic unit of a file version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Key that identifies the unit across versions of the file (Java: `Outer.Inner#m(int,String)`,
    /// Python: `Class.method`; a `~N` suffix disambiguates repeats).
    pub key: String,
    /// Display name without parameters: `Outer.Inner#m`, `Class.method`; empty for Python
    /// module-level code.
    pub name: String,
    /// First row (0-based) of the unit's span.
    pub start_row: usize,
    /// Last row (0-based, inclusive).
    pub end_row: usize,
    /// Byte range and node kind of the unit's span (to find it again for hashing).
    start_byte: usize,
    end_byte: usize,
    kind_id: u16,
    /// Whether the unit's own name is left out of its hash (so a pure rename keeps the hash).
    skip_name: bool,
}

/// What a file version looks like to the semantic rule.
///
/// The file-level token hashes are computed on first use only: a file whose changed lines fall in a
/// changed unit never needs them.
#[derive(Debug, Clone)]
pub struct FileSummary {
    /// Java package (`io.netty.buffer`), `None` for Python or the default package.
    pub package: Option<String>,
    /// Semantic units, ordered by start row.
    pub units: Vec<Unit>,
    /// Whether tree-sitter had to recover from syntax errors.
    pub has_error: bool,
    lang: Language,
    tree: Tree,
    source: Arc<[u8]>,
    hashes: OnceLock<(u64, u64)>,
    unit_hashes: Vec<OnceLock<u64>>,
}

impl FileSummary {
    /// The source text this summary was made from.
    pub fn source(&self) -> &[u8] {
        &self.source
    }

    /// Hash of the tokens of unit `index` (computed on first use; a unit's own name is left out).
    pub fn unit_hash(&self, index: usize) -> u64 {
        *self.unit_hashes[index].get_or_init(|| {
            let u = &self.units[index];
            let root = self.tree.root_node();
            let mut node = root.descendant_for_byte_range(u.start_byte, u.end_byte);
            while let Some(n) = node {
                if n.kind_id() == u.kind_id
                    && n.start_byte() == u.start_byte
                    && n.end_byte() == u.end_byte
                {
                    break;
                }
                node = n.parent();
            }
            let Some(node) = node else {
                // Cannot happen: the span was taken from this very tree.
                return hash_bytes(&self.source[u.start_byte..u.end_byte]);
            };
            let skip: Vec<usize> = if u.skip_name {
                node.child_by_field_name("definition")
                    .unwrap_or(node)
                    .child_by_field_name("name")
                    .map(|n| n.id())
                    .into_iter()
                    .collect()
            } else {
                Vec::new()
            };
            hash_node(self.lang, Kinds::of(self.lang), node, &self.source, &skip)
        })
    }

    /// Hash of every token of the file (comments, whitespace, docstrings ignored; structure kept).
    pub fn all_hash(&self) -> u64 {
        self.file_hashes().0
    }

    /// Hash of the tokens outside imports and the package declaration.
    pub fn code_hash(&self) -> u64 {
        self.file_hashes().1
    }

    fn file_hashes(&self) -> (u64, u64) {
        *self.hashes.get_or_init(|| {
            let kinds = Kinds::of(self.lang);
            let root = self.tree.root_node();
            let mut all = Fnv::default();
            let mut code = Fnv::default();
            let mut cursor = root.walk();
            for child in root.children(&mut cursor) {
                if kinds.comment.contains(&child.kind_id()) {
                    continue;
                }
                let h = hash_node(self.lang, kinds, child, &self.source, &[]);
                all.write_u64(h);
                if !kinds.import_like.contains(&child.kind_id()) {
                    code.write_u64(h);
                }
            }
            (all.finish(), code.finish())
        })
    }
}

/// Node kind ids a walk tests for (comparing ids avoids a string conversion per node).
struct Kinds {
    comment: Vec<u16>,
    atomic: Vec<u16>,
    import_like: Vec<u16>,
    expression_statement: u16,
    strings: Vec<u16>,
    /// Field ids (looking a field up by name scans the grammar's field names every time).
    f_name: u16,
    f_body: u16,
    f_parameters: u16,
    f_value: u16,
    f_type: u16,
}

impl Kinds {
    fn build(
        lang: &tree_sitter::Language,
        comment: &[&str],
        atomic: &[&str],
        import_like: &[&str],
    ) -> Self {
        let ids = |names: &[&str]| -> Vec<u16> {
            names
                .iter()
                .map(|n| lang.id_for_node_kind(n, true))
                .filter(|id| *id != 0)
                .collect()
        };
        let field = |name: &str| lang.field_id_for_name(name).map_or(0, |f| f.get());
        Kinds {
            f_name: field("name"),
            f_body: field("body"),
            f_parameters: field("parameters"),
            f_value: field("value"),
            f_type: field("type"),
            comment: ids(comment),
            atomic: ids(atomic),
            import_like: ids(import_like),
            expression_statement: lang.id_for_node_kind("expression_statement", true),
            strings: ids(&["string", "concatenated_string"]),
        }
    }

    fn of(lang: Language) -> &'static Kinds {
        static JAVA: LazyLock<Kinds> = LazyLock::new(|| {
            Kinds::build(
                &tree_sitter_java::LANGUAGE.into(),
                &["line_comment", "block_comment"],
                &["string_literal", "character_literal", "text_block"],
                &["package_declaration", "import_declaration"],
            )
        });
        static PYTHON: LazyLock<Kinds> = LazyLock::new(|| {
            Kinds::build(
                &tree_sitter_python::LANGUAGE.into(),
                &["comment"],
                &["string"],
                &[
                    "import_statement",
                    "import_from_statement",
                    "future_import_statement",
                ],
            )
        });
        match lang {
            Language::Java => &JAVA,
            Language::Python => &PYTHON,
        }
    }
}

/// Why a changed file is not a semantic change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NonSemantic {
    /// Same tokens: only whitespace, comments or docstrings changed.
    WhitespaceOrComment,
    /// Only the package declaration changed besides imports: the file moved.
    RenameOnly,
    /// Only imports changed.
    ImportOnly,
    /// Changed lines lie only outside bodies and initialisers (signatures, modifiers, annotations,
    /// declarations without initialiser) or the changed units kept their tokens.
    NoBodyChange,
}

/// Outcome of [`compare`] for one changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// At least one unit changed; the qualified names of the changed units (sorted, unique).
    Semantic(Vec<String>),
    /// No semantic change, with the reason.
    NotSemantic(NonSemantic),
}

/// One side of a file change: its summary, its repository path and the changed rows (0-based,
/// sorted ascending) on that side.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// Summary of this version.
    pub summary: &'a FileSummary,
    /// Repository-relative path of this version.
    pub path: &'a str,
    /// Rows removed (old side) or added (new side), 0-based, sorted.
    pub rows: &'a [usize],
}

/// A reusable tree-sitter parser for one language (not `Sync`: make one per thread).
pub struct Analyzer {
    lang: Language,
    parser: Parser,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("lang", &self.lang)
            .finish()
    }
}

impl Analyzer {
    /// A parser for `lang`.
    pub fn new(lang: Language) -> Result<Self, LangError> {
        let mut parser = Parser::new();
        let ts_lang: tree_sitter::Language = match lang {
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
        };
        parser
            .set_language(&ts_lang)
            .map_err(|e| LangError::Grammar {
                lang,
                reason: e.to_string(),
            })?;
        Ok(Self { lang, parser })
    }

    /// The language this analyzer parses.
    pub fn language(&self) -> Language {
        self.lang
    }

    fn parse(&mut self, source: &[u8]) -> Result<Tree, LangError> {
        self.parser.reset();
        self.parser
            .parse(source, None)
            .ok_or(LangError::Parse { lang: self.lang })
    }

    /// Parses only `ranges` of `source` (node positions stay those of the whole source).
    pub(crate) fn parse_included(
        &mut self,
        source: &[u8],
        ranges: &[tree_sitter::Range],
    ) -> Result<Tree, LangError> {
        self.parser.reset();
        self.parser
            .set_included_ranges(ranges)
            .map_err(|_| LangError::Parse { lang: self.lang })?;
        let tree = self.parser.parse(source, None);
        // Back to whole documents for the next parse.
        let _ = self.parser.set_included_ranges(&[]);
        tree.ok_or(LangError::Parse { lang: self.lang })
    }

    /// The summary of a tree parsed from `source`.
    pub(crate) fn summary_from_tree(&self, tree: Tree, source: &[u8]) -> FileSummary {
        self.summary_of(tree, source)
    }

    /// Summarises one version of a file.
    pub fn summarize(&mut self, source: &[u8]) -> Result<FileSummary, LangError> {
        self.summarize_after(source, None).map(|(s, _)| s)
    }

    /// Summarises one version of a file and returns its syntax tree too. With `previous` (the tree and
    /// source of an earlier version of the same file), tree-sitter reparses incrementally: the bytes
    /// between the common prefix and the common suffix of the two sources are one edit, and the
    /// subtrees outside it are reused, which is much faster than a full parse.
    pub fn summarize_after(
        &mut self,
        source: &[u8],
        previous: Option<(&Tree, &[u8])>,
    ) -> Result<(FileSummary, Tree), LangError> {
        let tree = match previous {
            None => self.parse(source)?,
            Some((old_tree, old_source)) => {
                let mut edited = old_tree.clone();
                edited.edit(&single_edit(old_source, source));
                self.parser.reset();
                self.parser
                    .parse(source, Some(&edited))
                    .ok_or(LangError::Parse { lang: self.lang })?
            }
        };
        let summary = self.summary_of(tree.clone(), source);
        Ok((summary, tree))
    }

    fn summary_of(&self, tree: Tree, source: &[u8]) -> FileSummary {
        let root = tree.root_node();
        let mut ctx = Ctx {
            kinds: Kinds::of(self.lang),
            src: source,
            units: Vec::new(),
            seen: HashMap::new(),
        };
        let mut package = None;
        if self.lang == Language::Java {
            let mut cursor = root.walk();
            for child in root.children(&mut cursor) {
                if child.kind() == "package_declaration" {
                    package = Some(package_name(child, source));
                }
            }
        }
        match self.lang {
            Language::Java => ctx.java_members(root, &mut Vec::new()),
            Language::Python => ctx.python_block(root, &mut Vec::new()),
        }
        let mut units = ctx.units;
        units.sort_by_key(|u| (u.start_row, u.end_row));
        let has_error = root.has_error();
        let unit_hashes = units.iter().map(|_| OnceLock::new()).collect();
        FileSummary {
            package,
            units,
            has_error,
            lang: self.lang,
            tree,
            source: Arc::from(source),
            hashes: OnceLock::new(),
            unit_hashes,
        }
    }

    /// Whether two versions of a file have the same syntax tree once whitespace, comments (and Python
    /// docstrings) are ignored: the tokens and the node structure are compared exactly, not by hash.
    pub fn ast_equal(&mut self, a: &[u8], b: &[u8]) -> Result<bool, LangError> {
        let ta = self.parse(a)?;
        let tb = self.parse(b)?;
        let mut ea = Vec::new();
        let mut eb = Vec::new();
        let kinds = Kinds::of(self.lang);
        walk_tokens(self.lang, kinds, ta.root_node(), a, &[], &mut |t| {
            ea.push(t)
        });
        walk_tokens(self.lang, kinds, tb.root_node(), b, &[], &mut |t| {
            eb.push(t)
        });
        Ok(ea == eb)
    }
}

/// One edit turning `old` into `new`: everything between their common prefix and common suffix.
fn single_edit(old: &[u8], new: &[u8]) -> InputEdit {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    let point = |src: &[u8], at: usize| {
        let before = &src[..at];
        let row = before.iter().filter(|b| **b == b'\n').count();
        let col = at
            - before
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |i| i + 1);
        Point { row, column: col }
    };
    InputEdit {
        start_byte: prefix,
        old_end_byte: old.len() - suffix,
        new_end_byte: new.len() - suffix,
        start_position: point(old, prefix),
        old_end_position: point(old, old.len() - suffix),
        new_end_position: point(new, new.len() - suffix),
    }
}

/// A token-stream event: a leaf's text, or the opening/closing of a named node.
#[derive(Debug, PartialEq, Eq)]
enum Tok<'a> {
    Open(u16),
    Close,
    Text(&'a [u8]),
}

/// 64-bit FNV-1a: deterministic across runs and platforms, fast on short tokens.
#[derive(Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

fn is_python_import(kind: &str) -> bool {
    matches!(
        kind,
        "import_statement" | "import_from_statement" | "future_import_statement"
    )
}

/// A Python docstring: a string expression statement that opens a module, class or function body.
fn is_docstring(kinds: &Kinds, node: Node) -> bool {
    if node.kind_id() != kinds.expression_statement || node.named_child_count() != 1 {
        return false;
    }
    let Some(only) = node.named_child(0) else {
        return false;
    };
    if !kinds.strings.contains(&only.kind_id()) {
        return false;
    }
    let Some(parent) = node.parent() else {
        return false;
    };
    let owner_ok = match parent.kind() {
        "module" => true,
        "block" => parent
            .parent()
            .is_some_and(|p| matches!(p.kind(), "function_definition" | "class_definition")),
        _ => false,
    };
    if !owner_ok {
        return false;
    }
    let mut cursor = parent.walk();
    let first = parent
        .named_children(&mut cursor)
        .find(|c| c.kind() != "comment");
    first.is_some_and(|f| f.id() == node.id())
}

/// Walks the tokens of `root` (iteratively: deep expression trees must not overflow the stack),
/// skipping comments, docstrings and the nodes whose ids are in `skip`.
fn walk_tokens<'s>(
    lang: Language,
    kinds: &Kinds,
    root: Node,
    src: &'s [u8],
    skip: &[usize],
    emit: &mut dyn FnMut(Tok<'s>),
) {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let kind = node.kind_id();
        let skipped = kinds.comment.contains(&kind)
            || skip.contains(&node.id())
            || (lang == Language::Python && is_docstring(kinds, node));
        let mut descend = false;
        if !skipped {
            if node.child_count() == 0 || kinds.atomic.contains(&kind) {
                let text = &src[node.byte_range()];
                if !text.is_empty() {
                    emit(Tok::Text(text));
                }
            } else {
                if node.is_named() {
                    emit(Tok::Open(node.kind_id()));
                }
                descend = true;
            }
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        if descend && node.is_named() {
            emit(Tok::Close);
        }
        // Move to the next node: a sibling, or climb (closing named parents) until one has a sibling.
        loop {
            if cursor.node().id() == root.id() {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            let parent = cursor.node();
            if parent.is_named() {
                emit(Tok::Close);
            }
            if parent.id() == root.id() {
                return;
            }
        }
    }
}

fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = Fnv::default();
    h.write(bytes);
    h.finish()
}

fn hash_node(lang: Language, kinds: &Kinds, node: Node, src: &[u8], skip: &[usize]) -> u64 {
    let mut h = Fnv::default();
    walk_tokens(lang, kinds, node, src, skip, &mut |t| match t {
        Tok::Open(k) => {
            h.write_u8(1);
            h.write_u16(k);
        }
        Tok::Close => h.write_u8(2),
        Tok::Text(b) => {
            h.write_u8(3);
            h.write(b);
            h.write_u8(0);
        }
    });
    h.finish()
}

struct Ctx<'s> {
    kinds: &'static Kinds,
    src: &'s [u8],
    units: Vec<Unit>,
    seen: HashMap<String, usize>,
}

impl<'s> Ctx<'s> {
    fn text(&self, node: Node) -> &'s str {
        std::str::from_utf8(&self.src[node.byte_range()]).unwrap_or("?")
    }

    fn push(&mut self, key: String, name: String, span: Node, skip_name: bool) {
        let n = self.seen.entry(key.clone()).or_insert(0);
        let key = if *n == 0 { key } else { format!("{key}~{n}") };
        *n += 1;
        self.units.push(Unit {
            key,
            name,
            start_row: span.start_position().row,
            end_row: span.end_position().row,
            start_byte: span.start_byte(),
            end_byte: span.end_byte(),
            kind_id: span.kind_id(),
            skip_name,
        });
    }

    // ---- Java ----

    fn java_members(&mut self, container: Node, scope: &mut Vec<String>) {
        let mut cursor = container.walk();
        let children: Vec<Node> = container.named_children(&mut cursor).collect();
        for node in children {
            match node.kind() {
                "class_declaration"
                | "interface_declaration"
                | "enum_declaration"
                | "record_declaration"
                | "annotation_type_declaration" => {
                    let name = node
                        .child_by_field_id(self.kinds.f_name)
                        .map(|n| self.text(n).to_string())
                        .unwrap_or_else(|| "?".into());
                    if let Some(body) = node.child_by_field_id(self.kinds.f_body) {
                        scope.push(name);
                        self.java_members(body, scope);
                        scope.pop();
                    }
                }
                "class_body"
                | "interface_body"
                | "enum_body"
                | "enum_body_declarations"
                | "annotation_type_body" => self.java_members(node, scope),
                "method_declaration"
                | "constructor_declaration"
                | "compact_constructor_declaration" => {
                    let Some(body) = node.child_by_field_id(self.kinds.f_body) else {
                        continue;
                    };
                    let member = if node.kind() == "method_declaration" {
                        node.child_by_field_id(self.kinds.f_name)
                            .map(|n| self.text(n).to_string())
                            .unwrap_or_else(|| "?".into())
                    } else {
                        "<init>".to_string()
                    };
                    let params = node
                        .child_by_field_id(self.kinds.f_parameters)
                        .map(|p| self.java_param_types(p))
                        .unwrap_or_default();
                    let owner = scope.join(".");
                    let hash = false;
                    self.push(
                        format!("{owner}#{member}({params})"),
                        format!("{owner}#{member}"),
                        body,
                        hash,
                    );
                }
                "field_declaration" | "constant_declaration" => {
                    let owner = scope.join(".");
                    let mut c2 = node.walk();
                    let decls: Vec<Node> =
                        node.children_by_field_name("declarator", &mut c2).collect();
                    for decl in decls {
                        let (Some(name), Some(value)) = (
                            decl.child_by_field_id(self.kinds.f_name),
                            decl.child_by_field_id(self.kinds.f_value),
                        ) else {
                            continue;
                        };
                        let field = self.text(name).to_string();
                        let hash = false;
                        self.push(
                            format!("{owner}#{field}"),
                            format!("{owner}#{field}"),
                            value,
                            hash,
                        );
                    }
                }
                "static_initializer" | "block" => {
                    let owner = scope.join(".");
                    let member = if node.kind() == "block" {
                        "<instinit>"
                    } else {
                        "<clinit>"
                    };
                    let hash = false;
                    self.push(
                        format!("{owner}#{member}"),
                        format!("{owner}#{member}"),
                        node,
                        hash,
                    );
                }
                "enum_constant" => {
                    let owner = scope.join(".");
                    let name_node = node.child_by_field_id(self.kinds.f_name);
                    let constant = name_node
                        .map(|n| self.text(n).to_string())
                        .unwrap_or_else(|| "?".into());
                    let hash = true;
                    self.push(
                        format!("{owner}#{constant}"),
                        format!("{owner}#{constant}"),
                        node,
                        hash,
                    );
                }
                _ => {}
            }
        }
    }

    fn java_param_types(&self, params: Node) -> String {
        let mut cursor = params.walk();
        let mut types = Vec::new();
        for p in params.named_children(&mut cursor) {
            if let Some(t) = p.child_by_field_id(self.kinds.f_type) {
                let mut s: String = self.text(t).split_whitespace().collect();
                if p.kind() == "spread_parameter" {
                    s.push_str("...");
                }
                types.push(s);
            } else if p.kind() == "spread_parameter" {
                // `T... xs`: the type is the first named child.
                if let Some(t) = p.named_child(0) {
                    let mut s: String = self.text(t).split_whitespace().collect();
                    s.push_str("...");
                    types.push(s);
                }
            }
        }
        types.join(",")
    }

    // ---- Python ----

    fn python_block(&mut self, block: Node, scope: &mut Vec<String>) {
        let mut cursor = block.walk();
        let children: Vec<Node> = block.named_children(&mut cursor).collect();
        for node in children {
            let kind = node.kind();
            if kind == "comment" || is_python_import(kind) || is_docstring(self.kinds, node) {
                continue;
            }
            let def = if kind == "decorated_definition" {
                node.child_by_field_name("definition")
            } else {
                Some(node)
            };
            match def.map(|d| d.kind()) {
                Some("function_definition") => {
                    let def = def.expect("matched Some above");
                    let name_node = def.child_by_field_name("name");
                    let name = name_node
                        .map(|n| self.text(n).to_string())
                        .unwrap_or_else(|| "?".into());
                    let hash = true;
                    let mut path = scope.clone();
                    path.push(name);
                    let key = path.join(".");
                    self.push(key.clone(), key, node, hash);
                }
                Some("class_definition") => {
                    let def = def.expect("matched Some above");
                    let name = def
                        .child_by_field_name("name")
                        .map(|n| self.text(n).to_string())
                        .unwrap_or_else(|| "?".into());
                    if let Some(body) = def.child_by_field_name("body") {
                        scope.push(name);
                        self.python_block(body, scope);
                        scope.pop();
                    }
                }
                _ if is_bare_annotation(node) => {}
                _ => {
                    let target = python_assigned_name(node, self.src);
                    let hash = false;
                    let mut path = scope.clone();
                    let (key, name) = match target {
                        Some(t) => {
                            path.push(t);
                            let k = path.join(".");
                            (k.clone(), k)
                        }
                        None if scope.is_empty() => ("<module>".to_string(), String::new()),
                        None => (format!("{}.<body>", path.join(".")), path.join(".")),
                    };
                    self.push(key, name, node, hash);
                }
            }
        }
    }
}

/// `name: Type` without a value declares, it does not run code (like a Java field without initialiser).
fn is_bare_annotation(stmt: Node) -> bool {
    stmt.kind() == "expression_statement"
        && stmt.named_child_count() == 1
        && stmt.named_child(0).is_some_and(|a| {
            a.kind() == "assignment"
                && a.child_by_field_name("right").is_none()
                && a.child_by_field_name("type").is_some()
        })
}

fn python_assigned_name(stmt: Node, src: &[u8]) -> Option<String> {
    if stmt.kind() != "expression_statement" {
        return None;
    }
    let assign = stmt.named_child(0)?;
    if !matches!(assign.kind(), "assignment" | "augmented_assignment") {
        return None;
    }
    let left = assign.child_by_field_name("left")?;
    if left.kind() != "identifier" {
        return None;
    }
    std::str::from_utf8(&src[left.byte_range()])
        .ok()
        .map(str::to_string)
}

fn package_name(node: Node, src: &[u8]) -> String {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .find(|c| matches!(c.kind(), "scoped_identifier" | "identifier"))
        .and_then(|c| std::str::from_utf8(&src[c.byte_range()]).ok())
        .map(|s| s.split_whitespace().collect())
        .unwrap_or_default()
}

fn touched(units: &[Unit], rows: &[usize]) -> Vec<usize> {
    units
        .iter()
        .enumerate()
        .filter(|(_, u)| {
            let i = rows.partition_point(|r| *r < u.start_row);
            i < rows.len() && rows[i] <= u.end_row
        })
        .map(|(i, _)| i)
        .collect()
}

/// Qualified display name of a unit of `side`.
pub fn qualified_name(lang: Language, side: &Side, unit: &Unit) -> String {
    let prefix = match lang {
        Language::Java => side.summary.package.clone().unwrap_or_default(),
        Language::Python => crate::profile::python_module_path(side.path),
    };
    match (prefix.is_empty(), unit.name.is_empty()) {
        (true, _) => unit.name.clone(),
        (false, true) => prefix,
        (false, false) => format!("{prefix}.{}", unit.name),
    }
}

/// Decides whether a file change is semantic.
///
/// `old`/`new` are `None` for an added/deleted file. With both sides present: identical token streams
/// are [`NonSemantic::WhitespaceOrComment`]; identical code outside imports and the package declaration
/// is [`NonSemantic::ImportOnly`] (or [`NonSemantic::RenameOnly`] when the package changed). Otherwise
/// every unit touched by a changed row is looked up on the other side by key (or, when its key is gone,
/// by hash among the other side's unmatched units, which recognises renames): a unit whose tokens
/// differ, or which has no counterpart, is a semantic change.
pub fn compare(lang: Language, old: Option<Side>, new: Option<Side>) -> FileChange {
    let old_keys: HashMap<&str, usize> = old
        .map(|o| {
            o.summary
                .units
                .iter()
                .enumerate()
                .map(|(i, u)| (u.key.as_str(), i))
                .collect()
        })
        .unwrap_or_default();
    let new_keys: HashMap<&str, usize> = new
        .map(|n| {
            n.summary
                .units
                .iter()
                .enumerate()
                .map(|(i, u)| (u.key.as_str(), i))
                .collect()
        })
        .unwrap_or_default();
    // Hashes of the units without a same-key counterpart on the other side (renames), on demand.
    let unmatched = |side: Option<Side>, other_keys: &HashMap<&str, usize>| -> Vec<u64> {
        side.map(|s| {
            s.summary
                .units
                .iter()
                .enumerate()
                .filter(|(_, u)| !other_keys.contains_key(u.key.as_str()))
                .map(|(i, _)| s.summary.unit_hash(i))
                .collect()
        })
        .unwrap_or_default()
    };
    let old_unmatched: std::cell::OnceCell<Vec<u64>> = std::cell::OnceCell::new();
    let new_unmatched: std::cell::OnceCell<Vec<u64>> = std::cell::OnceCell::new();
    // Unit `i` of `side` changed: its counterpart by key hashes differently, or, without one, no
    // unmatched unit of the other side has its hash (computed once per side, on demand).
    let changed = |side: &Side,
                   i: usize,
                   own_keys: &HashMap<&str, usize>,
                   other: Option<Side>,
                   other_keys: &HashMap<&str, usize>,
                   other_unmatched: &std::cell::OnceCell<Vec<u64>>|
     -> bool {
        let h = side.summary.unit_hash(i);
        match (other, other_keys.get(side.summary.units[i].key.as_str())) {
            (Some(o), Some(&j)) => o.summary.unit_hash(j) != h,
            _ => !other_unmatched
                .get_or_init(|| unmatched(other, own_keys))
                .contains(&h),
        }
    };
    let mut names = Vec::new();
    if let Some(n) = new {
        for i in touched(&n.summary.units, n.rows) {
            if changed(&n, i, &new_keys, old, &old_keys, &old_unmatched) {
                names.push(qualified_name(lang, &n, &n.summary.units[i]));
            }
        }
    }
    if let Some(o) = old {
        for i in touched(&o.summary.units, o.rows) {
            if changed(&o, i, &old_keys, new, &new_keys, &new_unmatched) {
                let u = &o.summary.units[i];
                // Report the new side's name when the unit still exists there.
                let name = match (new, new_keys.get(u.key.as_str())) {
                    (Some(n), Some(&j)) => qualified_name(lang, &n, &n.summary.units[j]),
                    _ => qualified_name(lang, &o, u),
                };
                names.push(name);
            }
        }
    }
    if !names.is_empty() {
        names.sort();
        names.dedup();
        return FileChange::Semantic(names);
    }
    // No unit changed: name the kind of non-semantic change (file-level hashes, computed only now).
    if let (Some(o), Some(n)) = (old, new) {
        if o.summary.all_hash() == n.summary.all_hash() {
            return FileChange::NotSemantic(NonSemantic::WhitespaceOrComment);
        }
        if o.summary.code_hash() == n.summary.code_hash() {
            return FileChange::NotSemantic(if o.summary.package != n.summary.package {
                NonSemantic::RenameOnly
            } else {
                NonSemantic::ImportOnly
            });
        }
    }
    FileChange::NotSemantic(NonSemantic::NoBodyChange)
}
