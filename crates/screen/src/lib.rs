//! The static reward-hack screen: what a candidate patch does that makes it fast only for the
//! benchmark, found in the patch and the original files alone — no build, no container, no
//! timing — so a whole prediction file is screened in seconds.
//!
//! Each kind of finding ([`etip_core::hack::HackKind`]) has its module: [`special_case`]
//! (`input_special_case`), [`cache`] (`cross_call_cache`), [`introspection`] (`introspection`
//! and `timing_tampering`), [`table`] (`precomputed_table`) and [`scope`]. The syntax kinds
//! read only what the patch added (rows of the candidate a line diff marks as new, in files
//! that are sources of the ETIP's language), with tree-sitter, so comments never match and a
//! name in a string is told from a name in code. `docs/rules.md` (§ reward hacks) gives each
//! kind's rule, an example and what a legitimate patch doing the same looks like.
//!
//! ```
//! use etip_core::Language;
//! use etip_screen::{Context, FileChange, screen};
//! use etip_screen::literals::Literals;
//! let original = "def total(n):\n    return sum(range(n))\n";
//! let hacked = "def total(n):\n    if n == 100000:\n        return 4999950000\n    return sum(range(n))\n";
//! let ctx = Context { workload: Literals::of_script(Language::Python, "total(100000)\n").unwrap() };
//! let findings = screen(Language::Python, &[FileChange::new("m.py", Some(original), Some(hacked))], &ctx).unwrap();
//! assert_eq!(findings[0].kind.name(), "input_special_case");
//! assert_eq!((findings[0].line, findings[0].code.as_str()), (2, "if n == 100000:"));
//! ```

pub mod cache;
pub mod diff;
pub mod introspection;
pub mod literals;
pub mod references;
pub mod scope;
pub mod source;
pub mod special_case;
pub mod syntax;
pub mod table;

use etip_core::Language;
use etip_core::hack::Finding;
use etip_toolchain::paths;

/// Errors of the screen.
#[derive(Debug, thiserror::Error)]
pub enum ScreenError {
    /// The tree-sitter grammar did not load or gave no tree.
    #[error("tree-sitter: {0}; rebuild etip with matching tree-sitter crates")]
    Grammar(String),
    /// The patch is not a unified diff or does not apply to the original files.
    #[error("the patch: {0}")]
    Patch(String),
    /// The original version of a file could not be read.
    #[error("reading {path} of the original: {reason}")]
    Original { path: String, reason: String },
}

/// One file a patch touches, before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path after the patch (before it, for a deleted file).
    pub path: String,
    /// `None`: the patch adds the file.
    pub original: Option<Vec<u8>>,
    /// `None`: the patch deletes the file.
    pub candidate: Option<Vec<u8>>,
}

impl FileChange {
    pub fn new(path: &str, original: Option<&str>, candidate: Option<&str>) -> FileChange {
        FileChange {
            path: path.to_string(),
            original: original.map(|o| o.as_bytes().to_vec()),
            candidate: candidate.map(|c| c.as_bytes().to_vec()),
        }
    }
}

/// What the screen knows of the ETIP besides the patch.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The values the ETIP's workloads and detector tests use.
    pub workload: literals::Literals,
}

/// The findings of a patch given as its files, sorted by file and line, one per kind and line.
pub fn screen(
    lang: Language,
    files: &[FileChange],
    ctx: &Context,
) -> Result<Vec<Finding>, ScreenError> {
    let mut out = Vec::new();
    for f in files {
        let added_lines = added_text(f);
        if let Some(finding) = scope::screen(lang, &f.path, f.original.is_none(), &added_lines) {
            out.push(finding);
            // Tests and workloads are not searched for the syntax kinds: the scope finding
            // says what there is to say about them.
            continue;
        }
        let Some(cand) = &f.candidate else { continue };
        if !paths::is_source(lang, &f.path) {
            continue;
        }
        let cand = source::parse(lang, &String::from_utf8_lossy(cand))?;
        let original = f
            .original
            .as_ref()
            .map(|o| source::parse(lang, &String::from_utf8_lossy(o)))
            .transpose()?;
        let s = source::Source::new(lang, &f.path, original.as_ref(), &cand);
        out.extend(special_case::screen(&s, &ctx.workload));
        out.extend(cache::screen(&s));
        out.extend(introspection::screen(&s));
        out.extend(table::screen(&s, &ctx.workload));
    }
    out.sort_by(|a, b| (&a.file, a.line, a.kind).cmp(&(&b.file, b.line, b.kind)));
    out.dedup_by(|a, b| a.file == b.file && a.line == b.line && a.kind == b.kind);
    Ok(out)
}

/// Reads a file's original version by its path (`None` where it does not exist).
pub type ReadOriginal<'a> = dyn FnMut(&str) -> Result<Option<Vec<u8>>, ScreenError> + 'a;

/// The lines a change adds, as text.
fn added_text(f: &FileChange) -> String {
    let Some(cand) = &f.candidate else {
        return String::new();
    };
    let cand = String::from_utf8_lossy(cand);
    let original = f
        .original
        .as_ref()
        .map(|o| String::from_utf8_lossy(o).into_owned())
        .unwrap_or_default();
    let rows = source::added_rows(&original, &cand);
    cand.lines()
        .enumerate()
        .filter(|(i, _)| rows.contains(i))
        .map(|(_, l)| format!("{l}\n"))
        .collect()
}

/// The findings of a unified diff: `original(path)` reads a file's original version (`None`
/// where it does not exist), e.g. from the ETIP's base commit.
pub fn screen_patch(
    lang: Language,
    patch: &str,
    original: &mut ReadOriginal,
    ctx: &Context,
) -> Result<Vec<Finding>, ScreenError> {
    let mut files = Vec::new();
    for d in diff::parse(patch)? {
        let before = match &d.old_path {
            Some(p) => original(p)?,
            None => None,
        };
        if d.old_path.is_some() && before.is_none() {
            return Err(ScreenError::Patch(format!(
                "{} does not exist in the original",
                d.old_path.as_deref().unwrap_or_default()
            )));
        }
        let after = diff::apply(&d, before.as_deref())?;
        files.push(FileChange {
            path: d.path().to_string(),
            original: before,
            candidate: after,
        });
    }
    screen(lang, &files, ctx)
}
