//! The node kinds of each grammar the screen asks about: one table per language, so a kind
//! module says what it looks for once for both.

use etip_core::Language;

/// Node kinds of one tree-sitter grammar.
pub struct Syntax {
    /// Functions and methods.
    pub functions: &'static [&'static str],
    /// Branches whose `condition` decides whether their `consequence` runs.
    pub branches: &'static [&'static str],
    /// Expressions choosing between two values on a condition.
    pub conditional_expressions: &'static [&'static str],
    /// Statements that leave the function or the loop.
    pub exits: &'static [&'static str],
    /// Comparisons (`a == b`, `a in b`): Python's `comparison_operator`, Java's
    /// `binary_expression` (its operator decides).
    pub comparisons: &'static [&'static str],
    /// Calls.
    pub calls: &'static [&'static str],
    /// Dotted references (`a.b`): attributes and field accesses.
    pub members: &'static [&'static str],
    /// Literal scalars.
    pub scalars: &'static [&'static str],
    /// Literal collections.
    pub collections: &'static [&'static str],
    /// String literals.
    pub strings: &'static [&'static str],
    /// Comments.
    pub comments: &'static [&'static str],
}

static PYTHON: Syntax = Syntax {
    functions: &["function_definition", "lambda"],
    branches: &["if_statement", "elif_clause"],
    conditional_expressions: &["conditional_expression"],
    exits: &[
        "return_statement",
        "raise_statement",
        "continue_statement",
        "break_statement",
    ],
    comparisons: &["comparison_operator"],
    calls: &["call"],
    members: &["attribute"],
    scalars: &[
        "integer",
        "float",
        "string",
        "concatenated_string",
        "true",
        "false",
        "none",
    ],
    collections: &["list", "tuple", "set", "dictionary"],
    strings: &["string", "concatenated_string"],
    comments: &["comment"],
};

static JAVA: Syntax = Syntax {
    functions: &[
        "method_declaration",
        "constructor_declaration",
        "lambda_expression",
    ],
    branches: &["if_statement"],
    conditional_expressions: &["ternary_expression"],
    exits: &[
        "return_statement",
        "throw_statement",
        "continue_statement",
        "break_statement",
    ],
    comparisons: &["binary_expression"],
    calls: &["method_invocation"],
    members: &["field_access", "method_invocation"],
    scalars: &[
        "decimal_integer_literal",
        "hex_integer_literal",
        "octal_integer_literal",
        "binary_integer_literal",
        "decimal_floating_point_literal",
        "hex_floating_point_literal",
        "string_literal",
        "character_literal",
        "true",
        "false",
        "null_literal",
    ],
    collections: &["array_initializer"],
    strings: &["string_literal", "text_block"],
    comments: &["line_comment", "block_comment"],
};

impl Syntax {
    pub fn of(lang: Language) -> &'static Syntax {
        match lang {
            Language::Python => &PYTHON,
            Language::Java => &JAVA,
        }
    }
}
