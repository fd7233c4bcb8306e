//! Which changed paths make up a commit's *code change*, which are *ignored* (documentation,
//! changelogs, repository metadata) and which disqualify it (rule 1 of `docs/rules.md`).
//!
//! Real performance pull requests rarely change source files alone: astropy asks for a changelog
//! fragment with every PR (`docs/changes/units/16742.perf.rst`), sympy PRs touch `.mailmap` or a
//! `doc/**/*.rst` page, and mybatis' ETIP `ddd931bd09` also edits `src/site/es/xdoc/configuration.xml`.
//! Under JETO's literal rule 1 ("only source files") each of them is rejected. The default rule,
//! [`PathRule::Code`], sets such files aside instead: they do not make the commit invalid, they are
//! recorded in the candidate's `ignored_files`, and the diff hash, the semantic rule, the changed
//! functions and the `--max-files` count see the code files only. [`PathRule::Strict`] is rule 1
//! read literally (every changed file must be a source file), the decisions etip made before ignored
//! paths existed. Test files disqualify a commit under both rules, ignored or not.
//!
//! The default ignored paths ([`PathPolicy::default_ignores`]), for Java and Python alike:
//! - **documentation**: everything under a `doc/` or `docs/` directory at the repository root
//!   (Sphinx sources, their `conf.py` and extensions included) and under a Maven site `src/site/`
//!   at any depth; non-source files under a `doc/` or `docs/` directory at any depth; documentation
//!   formats (`.rst`, `.md`, `.markdown`, `.adoc`, `.txt`) outside source packages (Python: no
//!   ancestor directory holds `__init__.py`; Java: outside `src/main/`), except dependency and build files
//!   such as `requirements*.txt`, `constraints*.txt`, `CMakeLists.txt`, `meson_options.txt`;
//! - **changelogs and release notes**: files named `CHANGES`, `CHANGELOG`, `CHANGE_LOG`, `NEWS`,
//!   `HISTORY`, `RELEASE_NOTES`, `RELEASE-NOTES`, `RELEASENOTES`, `WHATSNEW`, `WHATS_NEW` (any case,
//!   any extension), and non-source files in changelog fragment folders (`changelog.d/`,
//!   `changelog/`, `changes/`, `newsfragments/`, `news/`, `upcoming_changes/`, `releasenotes/`,
//!   `release-notes/`);
//! - **repository metadata**: `.mailmap`, `.git-blame-ignore-revs`, `AUTHORS*`, `CONTRIBUTORS*`,
//!   `CODEOWNERS`, `CITATION.cff`, `.zenodo.json`.
//!
//! Users add globs of their own ([`PathPolicy::ignore`], `**` crossing directories, `*` not), e.g.
//! `benchmarks/**` for asv benchmark suites, or drop the defaults.
//!
//! **Compiled-extension sources** (Python, opt-in with [`PathPolicy::compiled_extensions`]): Cython
//! (`.pyx`, `.pxd`, `.pxi` and their `.in` templates), C and C++ sources and headers (`.c`, `.h`,
//! `.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`, numpy-style `.c.src`/`.h.src` templates) and their
//! build descriptors (`meson.build`, `meson.options`, `meson_options.txt`, `CMakeLists.txt`) count as
//! code: projects such as scipy make their performance changes there. The candidate lists them in
//! `extension_files`, telling the build side that the image must compile the extensions.
//!
//! ```
//! use etip_core::Language;
//! use etip_toolchain::policy::{IgnoreKind, PathClass, PathMatcher, PathPolicy};
//! let m = PathMatcher::new(Language::Python, &PathPolicy::default()).expect("valid policy");
//! let mut no_packages = |_: &str| false;
//! assert_eq!(m.classify("astropy/units/core.py", &mut no_packages), PathClass::Source);
//! assert_eq!(
//!     m.classify("docs/changes/units/16742.perf.rst", &mut no_packages),
//!     PathClass::Ignored(IgnoreKind::Documentation)
//! );
//! assert_eq!(m.classify(".mailmap", &mut no_packages), PathClass::Ignored(IgnoreKind::Metadata));
//! assert_eq!(m.classify("setup.cfg", &mut no_packages), PathClass::Other);
//! ```

use etip_core::Language;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::paths::is_source;

/// How rule 1 treats files that are not source files of the language.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathRule {
    /// Documentation, changelogs, repository metadata (and configured globs) are set aside; any
    /// other non-source file makes the commit invalid.
    #[default]
    Code,
    /// JETO's rule 1 read literally: every changed file must be a source file of the language.
    Strict,
}

impl PathRule {
    /// The stable name (`code`, `strict`).
    pub fn as_str(self) -> &'static str {
        match self {
            PathRule::Code => "code",
            PathRule::Strict => "strict",
        }
    }

    /// Parses a name; `jeto` is accepted for `strict`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "code" => Some(PathRule::Code),
            "strict" | "jeto" => Some(PathRule::Strict),
            _ => None,
        }
    }
}

/// The path settings of a mining run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PathPolicy {
    /// Rule 1's reading.
    pub rule: PathRule,
    /// Set aside the default documentation, changelog and metadata paths (see the module docs).
    pub default_ignores: bool,
    /// More paths to set aside: globs over repository-relative paths (`**` crosses directories).
    pub ignore: Vec<String>,
    /// Python: count Cython, C/C++ sources and their build descriptors as code.
    pub compiled_extensions: bool,
}

impl Default for PathPolicy {
    fn default() -> Self {
        Self {
            rule: PathRule::Code,
            default_ignores: true,
            ignore: Vec::new(),
            compiled_extensions: false,
        }
    }
}

impl PathPolicy {
    /// JETO's literal rule 1, the decisions of etip before ignored paths existed.
    pub fn strict() -> Self {
        Self {
            rule: PathRule::Strict,
            default_ignores: false,
            ..Self::default()
        }
    }
}

/// Why a path is set aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IgnoreKind {
    /// Documentation pages and trees, Maven sites.
    Documentation,
    /// Changelogs, release notes, changelog fragments.
    Changelog,
    /// Repository metadata (`.mailmap`, `AUTHORS`, `CODEOWNERS`, ...).
    Metadata,
    /// A glob the user configured.
    Configured,
}

impl IgnoreKind {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            IgnoreKind::Documentation => "documentation",
            IgnoreKind::Changelog => "changelog",
            IgnoreKind::Metadata => "metadata",
            IgnoreKind::Configured => "configured",
        }
    }
}

/// What one changed path is to rule 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathClass {
    /// A source file of the language: part of the code change.
    Source,
    /// A compiled-extension source or build descriptor (opt-in): part of the code change.
    Extension,
    /// Set aside: neither part of the code change nor disqualifying.
    Ignored(IgnoreKind),
    /// Anything else: rule 1 rejects the commit.
    Other,
}

impl PathClass {
    /// Whether the path belongs to the code change.
    pub fn is_code(self) -> bool {
        matches!(self, PathClass::Source | PathClass::Extension)
    }
}

/// A policy that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A configured glob does not parse.
    #[error("invalid ignore glob {glob:?}: {reason}")]
    Glob {
        /// The glob.
        glob: String,
        /// globset's message.
        reason: String,
    },
    /// `--ignore` globs with the strict rule, which ignores nothing.
    #[error(
        "the strict path rule sets no path aside, so ignore globs cannot apply; use --path-rule code"
    )]
    StrictWithIgnores,
}

/// A compiled [`PathPolicy`] for one language.
#[derive(Debug, Clone)]
pub struct PathMatcher {
    lang: Language,
    policy: PathPolicy,
    user: GlobSet,
}

/// Changelog and release-note file stems (compared case-insensitively).
const CHANGELOG_STEMS: [&str; 11] = [
    "changes",
    "changelog",
    "change_log",
    "news",
    "history",
    "release_notes",
    "release-notes",
    "releasenotes",
    "whatsnew",
    "whats_new",
    "changelog-unreleased",
];

/// Folders of changelog fragments (towncrier, reno, numpy's `upcoming_changes`).
const FRAGMENT_DIRS: [&str; 8] = [
    "changelog.d",
    "changelog",
    "changes",
    "newsfragments",
    "news",
    "upcoming_changes",
    "releasenotes",
    "release-notes",
];

/// Repository metadata: exact file names, then stems compared case-insensitively.
const METADATA_NAMES: [&str; 5] = [
    ".mailmap",
    ".git-blame-ignore-revs",
    "CODEOWNERS",
    "CITATION.cff",
    ".zenodo.json",
];
const METADATA_STEMS: [&str; 2] = ["authors", "contributors"];

/// Documentation formats.
const DOC_EXTENSIONS: [&str; 5] = ["rst", "md", "markdown", "adoc", "txt"];

/// Compiled-extension sources (file-name suffixes).
const EXTENSION_SUFFIXES: [&str; 19] = [
    ".pyx", ".pxd", ".pxi", ".pyx.in", ".pxd.in", ".pxi.in", ".c", ".h", ".cc", ".cpp", ".cxx",
    ".hpp", ".hh", ".hxx", ".c.src", ".h.src", ".c.in", ".h.in", ".cpp.in",
];

/// Build descriptors of compiled extensions (file names).
const EXTENSION_DESCRIPTORS: [&str; 4] = [
    "meson.build",
    "meson.options",
    "meson_options.txt",
    "CMakeLists.txt",
];

impl PathMatcher {
    /// Compiles `policy` for `lang`.
    pub fn new(lang: Language, policy: &PathPolicy) -> Result<Self, PolicyError> {
        if policy.rule == PathRule::Strict && !policy.ignore.is_empty() {
            return Err(PolicyError::StrictWithIgnores);
        }
        let mut set = GlobSetBuilder::new();
        for g in &policy.ignore {
            let glob = GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .map_err(|e| PolicyError::Glob {
                    glob: g.clone(),
                    reason: e.kind().to_string(),
                })?;
            set.add(glob);
        }
        let user = set.build().map_err(|e| PolicyError::Glob {
            glob: policy.ignore.join(" "),
            reason: e.to_string(),
        })?;
        Ok(Self {
            lang,
            policy: policy.clone(),
            user,
        })
    }

    /// The policy this matcher applies.
    pub fn policy(&self) -> &PathPolicy {
        &self.policy
    }

    /// Classifies a repository-relative path. `is_package(dir)` answers whether a directory is a
    /// Python package, i.e. holds `__init__.py`; it is asked only about the ancestors of
    /// documentation-format files of a Python repository (a file inside a package tree is package
    /// data, not documentation).
    pub fn classify(&self, path: &str, is_package: &mut dyn FnMut(&str) -> bool) -> PathClass {
        let source = is_source(self.lang, path);
        if self.policy.rule == PathRule::Strict {
            return if source {
                PathClass::Source
            } else if self.is_extension(path) {
                PathClass::Extension
            } else {
                PathClass::Other
            };
        }
        let (dirs, file) = match path.rsplit_once('/') {
            Some((d, f)) => (d, f),
            None => ("", path),
        };
        let defaults = self.policy.default_ignores;
        if defaults && let Some(kind) = default_ignored(dirs, file, source) {
            return PathClass::Ignored(kind);
        }
        if self.user.is_match(path) {
            return PathClass::Ignored(IgnoreKind::Configured);
        }
        if source {
            return PathClass::Source;
        }
        if self.is_extension(path) {
            return PathClass::Extension;
        }
        if defaults && is_doc_format(file) {
            let packaged = match self.lang {
                Language::Python => {
                    // Inside a package tree: some ancestor directory holds `__init__.py`
                    // (package data such as `pkg/data/words.txt` lives in plain subfolders).
                    let mut end = dirs.len();
                    let mut packaged = false;
                    while end > 0 {
                        if is_package(&dirs[..end]) {
                            packaged = true;
                            break;
                        }
                        end = dirs[..end].rfind('/').unwrap_or(0);
                    }
                    packaged
                }
                Language::Java => {
                    let c: Vec<&str> = dirs.split('/').collect();
                    c.windows(2).any(|w| w == ["src", "main"])
                }
            };
            if !packaged {
                return PathClass::Ignored(IgnoreKind::Documentation);
            }
        }
        PathClass::Other
    }

    fn is_extension(&self, path: &str) -> bool {
        if !self.policy.compiled_extensions || self.lang != Language::Python {
            return false;
        }
        let file = path.rsplit('/').next().unwrap_or(path);
        EXTENSION_DESCRIPTORS.contains(&file)
            || EXTENSION_SUFFIXES.iter().any(|s| file.ends_with(s))
    }
}

/// The default ignored paths (module docs), given a path's directory part and file name.
fn default_ignored(dirs: &str, file: &str, source: bool) -> Option<IgnoreKind> {
    let components: Vec<&str> = dirs.split('/').filter(|c| !c.is_empty()).collect();
    let root_doc = matches!(components.first(), Some(&"doc" | &"docs"));
    let site = components.windows(2).any(|w| w == ["src", "site"]);
    if root_doc || site {
        return Some(IgnoreKind::Documentation);
    }
    if source {
        return None;
    }
    if components.iter().any(|c| *c == "doc" || *c == "docs") {
        return Some(IgnoreKind::Documentation);
    }
    let stem = file.split('.').next().unwrap_or(file).to_ascii_lowercase();
    if CHANGELOG_STEMS.contains(&stem.as_str())
        || components
            .iter()
            .any(|c| FRAGMENT_DIRS.contains(&c.to_ascii_lowercase().as_str()))
    {
        return Some(IgnoreKind::Changelog);
    }
    if METADATA_NAMES.contains(&file) || METADATA_STEMS.contains(&stem.as_str()) {
        return Some(IgnoreKind::Metadata);
    }
    None
}

/// A documentation format that is not a dependency or build file.
fn is_doc_format(file: &str) -> bool {
    let Some((_, ext)) = file.rsplit_once('.') else {
        return false;
    };
    if !DOC_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()) {
        return false;
    }
    let lower = file.to_ascii_lowercase();
    !(lower.contains("requirements")
        || lower.starts_with("constraints")
        || lower == "cmakelists.txt"
        || lower == "meson_options.txt"
        || lower == "runtime.txt")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(lang: Language, policy: &PathPolicy, path: &str, packages: &[&str]) -> PathClass {
        let m = PathMatcher::new(lang, policy).expect("valid");
        m.classify(path, &mut |d| packages.contains(&d))
    }

    #[test]
    fn python_defaults() {
        let p = PathPolicy::default();
        let py = Language::Python;
        let pk = ["sympy", "sympy/core", "astropy/units"];
        let doc = PathClass::Ignored(IgnoreKind::Documentation);
        let log = PathClass::Ignored(IgnoreKind::Changelog);
        let meta = PathClass::Ignored(IgnoreKind::Metadata);
        for (path, want) in [
            ("sympy/core/expr.py", PathClass::Source),
            ("doc/src/modules/core.rst", doc),
            ("doc/src/conf.py", doc),
            ("docs/changes/units/16742.perf.rst", doc),
            ("astropy/units/docs/notes.md", doc),
            ("CHANGES.rst", log),
            ("changelog.d/123.bugfix", log),
            ("newsfragments/77.feature.md", log),
            ("HISTORY", log),
            (".mailmap", meta),
            ("AUTHORS", meta),
            (".github/CODEOWNERS", meta),
            ("README.md", doc),
            ("sympy/core/README.md", PathClass::Other),
            ("sympy/data/words.txt", PathClass::Other),
            ("requirements.txt", PathClass::Other),
            ("requirements/dev-requirements.txt", PathClass::Other),
            ("setup.cfg", PathClass::Other),
            ("pyproject.toml", PathClass::Other),
            ("scipy/special/_ufuncs.pyx", PathClass::Other),
            ("sympy/changes/rules.py", PathClass::Source),
        ] {
            assert_eq!(class(py, &p, path, &pk), want, "{path}");
        }
    }

    #[test]
    fn java_defaults_and_site() {
        let p = PathPolicy::default();
        let j = Language::Java;
        let doc = PathClass::Ignored(IgnoreKind::Documentation);
        for (path, want) in [
            ("src/site/es/xdoc/configuration.xml", doc),
            ("core/src/site/markdown/index.md", doc),
            ("src/main/java/org/A.java", PathClass::Source),
            ("src/main/resources/notes.txt", PathClass::Other),
            (
                "src/main/resources/org/messages.properties",
                PathClass::Other,
            ),
            ("README.md", doc),
            ("pom.xml", PathClass::Other),
        ] {
            assert_eq!(class(j, &p, path, &[]), want, "{path}");
        }
    }

    #[test]
    fn strict_is_rule_one_read_literally() {
        let s = PathPolicy::strict();
        for path in ["CHANGES.rst", ".mailmap", "docs/x.rst", "src/site/a.xml"] {
            assert_eq!(class(Language::Python, &s, path, &[]), PathClass::Other);
            assert_eq!(class(Language::Java, &s, path, &[]), PathClass::Other);
        }
        assert_eq!(
            class(Language::Python, &s, "doc/conf.py", &[]),
            PathClass::Source
        );
        assert_eq!(PathRule::from_name("jeto"), Some(PathRule::Strict));
        let bad = PathPolicy {
            ignore: vec!["x/**".into()],
            ..PathPolicy::strict()
        };
        assert!(matches!(
            PathMatcher::new(Language::Python, &bad),
            Err(PolicyError::StrictWithIgnores)
        ));
    }

    #[test]
    fn configured_globs_and_no_defaults() {
        let p = PathPolicy {
            ignore: vec!["benchmarks/**".into(), "*.cfg".into()],
            default_ignores: false,
            ..PathPolicy::default()
        };
        let py = Language::Python;
        let conf = PathClass::Ignored(IgnoreKind::Configured);
        assert_eq!(class(py, &p, "benchmarks/benchmarks/sparse.py", &[]), conf);
        assert_eq!(class(py, &p, "setup.cfg", &[]), conf);
        assert_eq!(
            class(py, &p, "pkg/setup.cfg", &[]),
            PathClass::Other,
            "* stops at /"
        );
        assert_eq!(class(py, &p, "CHANGES.rst", &[]), PathClass::Other);
        let bad = PathPolicy {
            ignore: vec!["a/[".into()],
            ..PathPolicy::default()
        };
        assert!(matches!(
            PathMatcher::new(py, &bad),
            Err(PolicyError::Glob { .. })
        ));
    }

    #[test]
    fn compiled_extensions_are_opt_in() {
        let on = PathPolicy {
            compiled_extensions: true,
            ..PathPolicy::default()
        };
        let py = Language::Python;
        for path in [
            "scipy/special/_ufuncs.pyx",
            "scipy/sparse/sparsetools/csr.h",
            "scipy/_lib/_uarray/_uarray_dispatch.cxx",
            "scipy/special/meson.build",
            "scipy/linalg/_decomp_update.pyx.in",
            "numpy/core/src/umath/loops.c.src",
        ] {
            assert_eq!(class(py, &on, path, &[]), PathClass::Extension, "{path}");
            assert_eq!(
                class(py, &PathPolicy::default(), path, &[]),
                PathClass::Other
            );
        }
        assert_eq!(
            class(Language::Java, &on, "src/main/c/x.c", &[]),
            PathClass::Other,
            "Java has no compiled-extension option"
        );
        assert_eq!(
            class(py, &on, "docs/x.c", &[]),
            PathClass::Ignored(IgnoreKind::Documentation)
        );
    }
}
