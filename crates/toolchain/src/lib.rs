//! Language facts that both halves of etip need, without tree-sitter: the miners ask which paths are
//! sources, tests and modules; the harness asks which toolchain a repository wants, which files are
//! build descriptors and how to run (and read) its tests.
//!
//! - [`paths`]: source and test files, modules, qualified-name prefixes, build tools of a repository;
//! - [`policy`]: which changed paths are code, which are set aside (documentation, changelogs,
//!   metadata) and which disqualify a commit;
//! - [`detect`]: the JDK or Python version a repository asks for, read from its files;
//! - [`era`]: the interpreter of a commit's time: the Python versions a commit supports, when each
//!   was released, and the configured Python (or JDK) to build it with;
//! - [`descriptors`]: which files the env layer needs to resolve dependencies;
//! - [`testcmd`]: the test command of a version (Maven Surefire, pytest) and where its XML reports land.
//!
//! ```
//! use etip_core::Language;
//! use etip_toolchain::paths;
//! assert!(paths::is_test(Language::Java, "core/src/test/java/a/B.java"));
//! assert!(!paths::is_test(Language::Java, "core/src/main/java/a/Latest.java"));
//! ```

pub mod descriptors;
pub mod detect;
pub mod era;
pub mod paths;
pub mod policy;
pub mod testcmd;

pub use etip_core::Language;
