//! The checks a prediction's patch passes before it is applied anywhere.
//!
//! [`parse`] reads a unified diff as `git diff` writes it (and plain `diff -u` output): per file the
//! old and new path (`/dev/null` for an added or deleted file), whether it is binary (`Binary
//! files … differ`, `GIT binary patch`), the hunks with their line counts checked against the
//! `@@ -a,b +c,d @@` headers (a count that does not match is what `git apply` calls a corrupt
//! patch), mode-only changes, renames and copies; C-quoted paths (`"a/na\303\257ve.py"`) are
//! unquoted. [`check`] turns that into one [`Verdict`]:
//!
//! | category | when |
//! |---|---|
//! | `empty` | no change at all (blank, or headers without hunks) |
//! | `malformed` | not a unified diff, a hunk count that does not match, a path that is absolute or has `..`/`.git` components |
//! | `binary` | a binary file change |
//! | `protected` | a test file, a build descriptor, or a benchmark or test-infrastructure file (refused unless test changes are allowed) |
//!
//! Protected paths: tests by the miner's rule (`etip_toolchain::paths::test_rule`), build
//! descriptors (`etip_toolchain::descriptors::is_descriptor`, which covers `.mvn/` and `mvnw`),
//! folders named `benchmark(s)`, `bench`, `asv_bench` or `jmh`, and files that configure how tests
//! run (`pytest.ini`, `tox.ini`, `noxfile.py`, `.coveragerc`, `setup.cfg`).

use etip_core::Language;
use serde::Serialize;

/// One file of a patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilePatch {
    /// The path before (`None`: the file is added).
    pub old_path: Option<String>,
    /// The path after (`None`: the file is deleted).
    pub new_path: Option<String>,
    pub binary: bool,
    pub hunks: usize,
    pub added: usize,
    pub removed: usize,
}

impl FilePatch {
    /// The paths the change touches (both of a rename).
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        let old = self.old_path.as_deref();
        let new = self.new_path.as_deref().filter(|n| Some(*n) != old);
        old.into_iter().chain(new)
    }

    pub fn changes_something(&self) -> bool {
        self.binary || self.hunks > 0 || self.old_path != self.new_path
    }
}

/// Why a patch is refused (its recorded category and what to tell the user).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "category", rename_all = "snake_case")]
pub enum PatchProblem {
    #[error("the patch is empty")]
    Empty,
    #[error("the patch is not a well-formed unified diff: line {line}: {detail}")]
    Malformed { line: usize, detail: String },
    #[error("the patch changes binary files: {}", .paths.join(", "))]
    Binary { paths: Vec<String> },
    #[error("the patch changes protected files: {}", .paths.iter().map(|(p, why)| format!("{p} ({why})")).collect::<Vec<_>>().join(", "))]
    Protected { paths: Vec<(String, String)> },
    /// Larger than [`MAX_PATCH_BYTES`]: refused before anything is applied or built (a generated
    /// module of tens of megabytes makes the build thrash at the memory limit until the setup
    /// time limit ends it).
    #[error("the patch is {bytes} bytes, more than the limit of {limit} bytes for a patch")]
    TooLarge { bytes: usize, limit: usize },
}

/// The largest patch (agent patch or generated test) an evaluation accepts: 4 MiB, far above
/// hand-written or agent-written changes (the largest SWE-bench gold patches are a few hundred
/// KiB) and far below what stalls a build.
pub const MAX_PATCH_BYTES: usize = 4 << 20;

/// [`PatchProblem::TooLarge`] for a patch over [`MAX_PATCH_BYTES`].
pub fn check_size(text: &str) -> Result<(), PatchProblem> {
    if text.len() > MAX_PATCH_BYTES {
        return Err(PatchProblem::TooLarge {
            bytes: text.len(),
            limit: MAX_PATCH_BYTES,
        });
    }
    Ok(())
}

impl PatchProblem {
    /// The category name recorded in results.
    pub fn category(&self) -> &'static str {
        match self {
            PatchProblem::Empty => "empty",
            PatchProblem::Malformed { .. } => "malformed",
            PatchProblem::Binary { .. } => "binary",
            PatchProblem::Protected { .. } => "protected",
            PatchProblem::TooLarge { .. } => "too_large",
        }
    }
}

/// A patch that passed: its files and the protected ones let through (with
/// `allow_test_changes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub files: Vec<FilePatch>,
    pub allowed_protected: Vec<(String, String)>,
}

/// At most this many characters of a path or line are quoted in a message.
const QUOTE: usize = 120;

fn malformed(line: usize, detail: impl Into<String>) -> PatchProblem {
    PatchProblem::Malformed {
        line,
        detail: detail.into(),
    }
}

/// Unquotes a C-quoted git path (`"a/b\tc"`, octal escapes for non-ASCII bytes).
fn unquote(s: &str, line: usize) -> Result<String, PatchProblem> {
    let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return Ok(s.to_string());
    };
    let b = inner.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = *b
            .get(i + 1)
            .ok_or_else(|| malformed(line, "a quoted path ends in a backslash"))?;
        i += 2;
        out.push(match c {
            b'n' => b'\n',
            b't' => b'\t',
            b'"' => b'"',
            b'\\' => b'\\',
            b'a' => 7,
            b'b' => 8,
            b'f' => 12,
            b'r' => b'\r',
            b'v' => 11,
            b'0'..=b'3' => {
                let digits = b
                    .get(i..i + 2)
                    .filter(|d| d.iter().all(|x| (b'0'..=b'7').contains(x)))
                    .ok_or_else(|| malformed(line, "a bad octal escape in a quoted path"))?;
                i += 2;
                (c - b'0') * 64 + (digits[0] - b'0') * 8 + (digits[1] - b'0')
            }
            _ => return Err(malformed(line, "an unknown escape in a quoted path")),
        });
    }
    String::from_utf8(out).map_err(|_| malformed(line, "a quoted path is not UTF-8"))
}

/// The path of a `---`/`+++` line (`None` for `/dev/null`), without its `a/`/`b/` prefix and a
/// trailing tab-separated time stamp.
fn header_path(rest: &str, line: usize) -> Result<Option<String>, PatchProblem> {
    let rest = rest.trim_end_matches('\r');
    let raw = if rest.starts_with('"') {
        rest
    } else {
        rest.split('\t').next().unwrap_or(rest).trim_end()
    };
    if raw == "/dev/null" {
        return Ok(None);
    }
    let p = unquote(raw, line)?;
    let p = p
        .strip_prefix("a/")
        .or_else(|| p.strip_prefix("b/"))
        .unwrap_or(&p)
        .to_string();
    check_path(&p, line)?;
    Ok(Some(p))
}

/// A path inside the tree: relative, no `..`, `.` or `.git` component, no NUL.
fn check_path(p: &str, line: usize) -> Result<(), PatchProblem> {
    let shown: String = p.chars().take(QUOTE).collect();
    if p.is_empty() || p.starts_with('/') || p.contains('\0') {
        return Err(malformed(line, format!("path {shown:?} is not relative")));
    }
    if p.split('/').any(|c| matches!(c, "" | "." | ".." | ".git")) {
        return Err(malformed(
            line,
            format!("path {shown:?} leaves the tree or names .git"),
        ));
    }
    Ok(())
}

/// `@@ -a[,b] +c[,d] @@`: the old and new line counts (a missing count is 1).
fn hunk_counts(l: &str, line: usize) -> Result<(usize, usize), PatchProblem> {
    let bad = || malformed(line, "a hunk header is not `@@ -a,b +c,d @@`");
    let rest = l.strip_prefix("@@ -").ok_or_else(bad)?;
    let (ranges, _) = rest.split_once(" @@").ok_or_else(bad)?;
    let (old, new) = ranges.split_once(" +").ok_or_else(bad)?;
    let count = |r: &str| -> Result<usize, PatchProblem> {
        let mut it = r.splitn(2, ',');
        it.next()
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(bad)?;
        match it.next() {
            None => Ok(1),
            Some(n) => n.parse::<usize>().map_err(|_| bad()),
        }
    };
    Ok((count(old)?, count(new)?))
}

/// Reads a unified diff (see the module documentation).
pub fn parse(text: &str) -> Result<Vec<FilePatch>, PatchProblem> {
    let lines: Vec<&str> = text.lines().collect();
    let mut files: Vec<FilePatch> = Vec::new();
    let mut i = 0;
    let new_file = |files: &mut Vec<FilePatch>| {
        files.push(FilePatch {
            old_path: None,
            new_path: None,
            binary: false,
            hunks: 0,
            added: 0,
            removed: 0,
        })
    };
    // Whether the current file came from a `diff --git` header (paths may come from
    // rename/copy lines) and has its `---`/`+++` pair yet.
    let mut in_git_header = false;
    while i < lines.len() {
        let l = lines[i].trim_end_matches('\r');
        let n = i + 1;
        if let Some(rest) = l.strip_prefix("diff --git ") {
            new_file(&mut files);
            in_git_header = true;
            // Paths from the header, overridden by ---/+++ or rename lines when present.
            if let Some((a, b)) = split_git_header(rest) {
                let f = files.last_mut().expect("just pushed");
                f.old_path = header_path(&a, n)?;
                f.new_path = header_path(&b, n)?;
            }
            i += 1;
            continue;
        }
        if l.starts_with("--- ") && lines.get(i + 1).is_some_and(|x| x.starts_with("+++ ")) {
            if !in_git_header {
                new_file(&mut files);
            }
            in_git_header = false;
            let f = files.last_mut().expect("a file");
            f.old_path = header_path(&l[4..], n)?;
            f.new_path = header_path(lines[i + 1].trim_end_matches('\r')[4..].as_ref(), n + 1)?;
            i += 2;
            continue;
        }
        if l.starts_with("@@ ") {
            let Some(f) = files.last_mut() else {
                return Err(malformed(n, "a hunk before any file header"));
            };
            let (mut old, mut new) = hunk_counts(l, n)?;
            f.hunks += 1;
            i += 1;
            while old > 0 || new > 0 {
                let Some(body) = lines.get(i) else {
                    return Err(malformed(
                        i + 1,
                        "the patch ends inside a hunk (its header counts more lines)",
                    ));
                };
                let body = body.trim_end_matches('\r');
                match body.as_bytes().first() {
                    Some(b' ') | None => {
                        if old == 0 || new == 0 {
                            return Err(malformed(
                                i + 1,
                                "more context lines than the hunk header counts",
                            ));
                        }
                        old -= 1;
                        new -= 1;
                    }
                    Some(b'-') => {
                        old = old.checked_sub(1).ok_or_else(|| {
                            malformed(i + 1, "more removed lines than the hunk header counts")
                        })?;
                        f.removed += 1;
                    }
                    Some(b'+') => {
                        new = new.checked_sub(1).ok_or_else(|| {
                            malformed(i + 1, "more added lines than the hunk header counts")
                        })?;
                        f.added += 1;
                    }
                    Some(b'\\') => {}
                    _ => {
                        return Err(malformed(
                            i + 1,
                            "a hunk line starts with neither ' ', '+', '-' nor '\\'",
                        ));
                    }
                }
                i += 1;
            }
            // "\ No newline at end of file" after the last line.
            while lines.get(i).is_some_and(|x| x.starts_with('\\')) {
                i += 1;
            }
            continue;
        }
        if let Some(f) = files.last_mut().filter(|_| in_git_header) {
            if l.starts_with("GIT binary patch")
                || (l.starts_with("Binary files ") && l.ends_with(" differ"))
            {
                f.binary = true;
            } else if let Some(p) = l
                .strip_prefix("rename from ")
                .or_else(|| l.strip_prefix("copy from "))
            {
                f.old_path = header_path(p, n)?;
            } else if let Some(p) = l
                .strip_prefix("rename to ")
                .or_else(|| l.strip_prefix("copy to "))
            {
                f.new_path = header_path(p, n)?;
            } else if l.starts_with("new file mode") {
                f.old_path = None;
            } else if l.starts_with("deleted file mode") {
                f.new_path = None;
            }
        } else if l.starts_with("Binary files ") && l.ends_with(" differ") {
            return Err(PatchProblem::Binary {
                paths: vec![l.chars().take(QUOTE).collect()],
            });
        }
        i += 1;
    }
    if files.is_empty() {
        return Err(if text.trim().is_empty() {
            PatchProblem::Empty
        } else {
            malformed(
                1,
                "no file header (`diff --git`, or `---`/`+++`) in the patch",
            )
        });
    }
    Ok(files)
}

/// Splits `a/x b/y` of a `diff --git` header (quoted paths allowed); `None` when ambiguous.
fn split_git_header(rest: &str) -> Option<(String, String)> {
    if let Some(inner) = rest.strip_prefix('"') {
        let end = inner.find("\" ")? + 1;
        return Some((rest[..=end].to_string(), rest[end + 2..].to_string()));
    }
    // Unquoted: the two halves are `a/P b/P` for the same P unless renamed (then the rename
    // lines give the paths).
    let mid = rest.find(" b/")?;
    Some((rest[..mid].to_string(), rest[mid + 1..].to_string()))
}

pub use etip_toolchain::paths::protected;

/// Checks a prediction's patch for a `lang` ETIP (see the module documentation).
pub fn check(
    lang: Language,
    text: &str,
    allow_test_changes: bool,
) -> Result<Verdict, PatchProblem> {
    check_size(text)?;
    let files = parse(text)?;
    if !files.iter().any(FilePatch::changes_something) {
        return Err(PatchProblem::Empty);
    }
    let binary: Vec<String> = files
        .iter()
        .filter(|f| f.binary)
        .flat_map(|f| f.paths().map(str::to_string).collect::<Vec<_>>())
        .collect();
    if !binary.is_empty() {
        return Err(PatchProblem::Binary { paths: binary });
    }
    let mut hit = Vec::new();
    for f in &files {
        for p in f.paths() {
            if let Some(why) = protected(lang, p) {
                hit.push((p.chars().take(QUOTE).collect::<String>(), why.to_string()));
            }
        }
    }
    if !hit.is_empty() && !allow_test_changes {
        return Err(PatchProblem::Protected { paths: hit });
    }
    Ok(Verdict {
        files,
        allowed_protected: hit,
    })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod size_tests {
    use super::*;

    /// A generated module of 50,000 lines (about 5 MiB): refused before it is parsed, applied or
    /// built.
    #[test]
    fn a_patch_over_the_limit_is_too_large() {
        let mut text = String::from("--- /dev/null\n+++ b/pkg/table.py\n@@ -0,0 +1,50000 @@\n");
        for i in 0..50_000 {
            text.push_str(&format!("+ANSWER_{i:06} = {:0>90}\n", i));
        }
        assert!(text.len() > MAX_PATCH_BYTES);
        let err = check(Language::Python, &text, false).unwrap_err();
        assert_eq!(err.category(), "too_large");
        assert!(err.to_string().contains("limit of 4194304 bytes"), "{err}");
        // The same module, a tenth as long, is a patch like any other.
        let small: String = text.lines().take(5_003).map(|l| format!("{l}\n")).collect();
        let small = small.replace("+1,50000", "+1,5000");
        assert!(check(Language::Python, &small, false).is_ok());
    }
}
