//! Per-language knowledge for mining ETIPs: which paths are sources and tests, which module a file
//! belongs to, which build tools a repository uses, and — with tree-sitter — whether a change is
//! *semantic* (touches a method/function body or an initialiser) and whether two versions of a file
//! are the same program once whitespace and comments are ignored.
//!
//! ```
//! use etip_core::candidate::Language;
//! use etip_lang::{profile, semantic::Analyzer};
//!
//! assert!(profile::is_test(Language::Java, "core/src/test/java/a/B.java"));
//! assert!(!profile::is_test(Language::Java, "core/src/main/java/a/Latest.java"));
//!
//! let mut java = Analyzer::new(Language::Java).expect("grammar loads");
//! let a = b"class A { int f() { return 1; } }";
//! let b = b"class A {\n  // one\n  int f() { return 1; }\n}\n";
//! assert!(java.ast_equal(a, b).expect("parses"));
//! ```

pub mod bytes;
pub mod java_layout;
pub mod labels;
/// Path knowledge lives in `etip-toolchain` (shared with the harness); re-exported here.
pub use etip_toolchain::paths as profile;
pub mod python_layout;
mod python_pairs;
mod python_skim;
mod python_syntax;
pub mod python_tokens;
pub mod python_units;
pub mod python_window;
mod python_windows;
pub mod semantic;
pub mod window;

pub use etip_core::Language;

/// Errors of the language layer.
#[derive(Debug, thiserror::Error)]
pub enum LangError {
    /// The tree-sitter grammar could not be loaded (version mismatch between tree-sitter and the grammar crate).
    #[error(
        "cannot load the tree-sitter grammar for {lang}: {reason}; rebuild etip with matching tree-sitter crates"
    )]
    Grammar {
        /// Language whose grammar failed.
        lang: Language,
        /// What tree-sitter said.
        reason: String,
    },
    /// tree-sitter gave no tree (it was cancelled or timed out).
    #[error(
        "tree-sitter could not parse a {lang} file (parse cancelled); retry, or report the file"
    )]
    Parse {
        /// Language of the file.
        lang: Language,
    },
}
