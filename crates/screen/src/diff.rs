//! A unified diff applied in memory: the candidate's version of every file a patch touches,
//! made from the original versions a caller reads (from git, without a work tree), so a
//! prediction file is screened without a container, a checkout or a write anywhere.
//!
//! Hunks apply where their header says, or at the nearest offset where their old lines match
//! exactly (as `patch` does with no fuzz); a hunk that matches nowhere is an error naming the
//! file and the hunk.
//!
//! ```
//! use etip_screen::diff::{apply, parse};
//! let patch = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return sorted(x)[0]\n+    return min(x)\n";
//! let files = parse(patch).unwrap();
//! assert_eq!(files[0].new_path.as_deref(), Some("m.py"));
//! let after = apply(&files[0], Some(b"def f(x):\n    return sorted(x)[0]\n")).unwrap();
//! assert_eq!(after.unwrap(), b"def f(x):\n    return min(x)\n");
//! ```

use crate::ScreenError;

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    Context(String),
    Removed(String),
    Added(String),
}

/// One hunk: where it starts in the old file (1-based; 0 for an empty file) and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    old_start: usize,
    lines: Vec<Line>,
    /// The last added line has no newline at its end.
    new_no_eol: bool,
}

/// One file of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The path before (`None`: added).
    pub old_path: Option<String>,
    /// The path after (`None`: deleted).
    pub new_path: Option<String>,
    /// Git says the file is binary.
    pub binary: bool,
    hunks: Vec<Hunk>,
}

impl FileDiff {
    /// The path the file has after the patch, else before it.
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or_default()
    }
}

fn strip_prefix(p: &str) -> Option<String> {
    let p = p.split('\t').next().unwrap_or(p).trim_end();
    if p == "/dev/null" {
        return None;
    }
    let p = p
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or(p);
    Some(
        p.strip_prefix("a/")
            .or_else(|| p.strip_prefix("b/"))
            .unwrap_or(p)
            .to_string(),
    )
}

fn hunk_start(header: &str, n: usize) -> Result<usize, ScreenError> {
    let bad = || ScreenError::Patch(format!("line {n}: malformed hunk header {header:?}"));
    let rest = header.strip_prefix("@@ -").ok_or_else(bad)?;
    let old = rest.split([',', ' ']).next().ok_or_else(bad)?;
    old.parse().map_err(|_| bad())
}

/// Reads a unified diff (git's or plain `diff -u`'s) into its files.
pub fn parse(text: &str) -> Result<Vec<FileDiff>, ScreenError> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut in_git_header = false;
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_end_matches('\r');
        if let Some(rest) = l.strip_prefix("diff --git ") {
            let (a, b) = match rest.find(" b/") {
                Some(mid) => (&rest[..mid], &rest[mid + 1..]),
                None => (rest, rest),
            };
            files.push(FileDiff {
                old_path: strip_prefix(a),
                new_path: strip_prefix(b),
                binary: false,
                hunks: Vec::new(),
            });
            in_git_header = true;
        } else if l.starts_with("--- ") && lines.get(i + 1).is_some_and(|x| x.starts_with("+++ ")) {
            if !in_git_header {
                files.push(FileDiff {
                    old_path: None,
                    new_path: None,
                    binary: false,
                    hunks: Vec::new(),
                });
            }
            in_git_header = false;
            let f = files
                .last_mut()
                .ok_or_else(|| ScreenError::Patch("no file".into()))?;
            f.old_path = strip_prefix(&l[4..]);
            f.new_path = strip_prefix(&lines[i + 1].trim_end_matches('\r')[4..]);
            i += 1;
        } else if let Some(p) = l.strip_prefix("rename from ") {
            if let Some(f) = files.last_mut() {
                f.old_path = Some(p.to_string());
            }
        } else if let Some(p) = l.strip_prefix("rename to ") {
            if let Some(f) = files.last_mut() {
                f.new_path = Some(p.to_string());
            }
        } else if l.starts_with("new file mode") {
            if let Some(f) = files.last_mut() {
                f.old_path = None;
            }
        } else if l.starts_with("deleted file mode") {
            if let Some(f) = files.last_mut() {
                f.new_path = None;
            }
        } else if l.starts_with("Binary files ") || l == "GIT binary patch" {
            if let Some(f) = files.last_mut() {
                f.binary = true;
            }
        } else if l.starts_with("@@ ") {
            in_git_header = false;
            let old_start = hunk_start(l, i + 1)?;
            let mut hunk = Hunk {
                old_start,
                lines: Vec::new(),
                new_no_eol: false,
            };
            i += 1;
            while i < lines.len() {
                let h = lines[i].trim_end_matches('\r');
                let line = match h.as_bytes().first() {
                    Some(b' ') => Line::Context(h[1..].to_string()),
                    Some(b'-') if !h.starts_with("--- ") || !is_header(&lines, i) => {
                        Line::Removed(h[1..].to_string())
                    }
                    Some(b'+') => Line::Added(h[1..].to_string()),
                    Some(b'\\') => {
                        if matches!(hunk.lines.last(), Some(Line::Added(_) | Line::Context(_))) {
                            hunk.new_no_eol = true;
                        }
                        i += 1;
                        continue;
                    }
                    None => Line::Context(String::new()),
                    _ => break,
                };
                hunk.lines.push(line);
                i += 1;
            }
            let f = files.last_mut().ok_or_else(|| {
                ScreenError::Patch(format!("line {}: a hunk before any file header", i))
            })?;
            f.hunks.push(hunk);
            continue;
        }
        i += 1;
    }
    if files.is_empty() {
        return Err(ScreenError::Patch("no file in the patch".into()));
    }
    Ok(files)
}

fn is_header(lines: &[&str], i: usize) -> bool {
    lines.get(i + 1).is_some_and(|x| x.starts_with("+++ "))
}

/// The file after `diff` is applied to `original` (`None`: the file does not exist before);
/// `None` when the patch deletes it.
pub fn apply(diff: &FileDiff, original: Option<&[u8]>) -> Result<Option<Vec<u8>>, ScreenError> {
    if diff.binary {
        return Err(ScreenError::Patch(format!(
            "{}: a binary change cannot be screened",
            diff.path()
        )));
    }
    if diff.new_path.is_none() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(original.unwrap_or_default()).into_owned();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut no_eol = !text.is_empty() && !text.ends_with('\n');
    // Lines added or removed by earlier hunks move later hunks' positions.
    let mut shift: isize = 0;
    for (h, hunk) in diff.hunks.iter().enumerate() {
        let old: Vec<&str> = hunk
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Context(s) | Line::Removed(s) => Some(s.as_str()),
                Line::Added(_) => None,
            })
            .collect();
        let new: Vec<String> = hunk
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Context(s) | Line::Added(s) => Some(s.clone()),
                Line::Removed(_) => None,
            })
            .collect();
        let wanted = (hunk.old_start.saturating_sub(1) as isize + shift).max(0) as usize;
        let wanted = if old.is_empty() && hunk.old_start > 0 {
            wanted + 1
        } else {
            wanted
        };
        let at = find(&lines, &old, wanted.min(lines.len())).ok_or_else(|| {
            ScreenError::Patch(format!(
                "{}: hunk {} (at old line {}) does not match the original",
                diff.path(),
                h + 1,
                hunk.old_start
            ))
        })?;
        let end = at + old.len();
        let last = end == lines.len();
        shift += new.len() as isize - old.len() as isize;
        lines.splice(at..end, new);
        if last {
            no_eol = hunk.new_no_eol;
        }
    }
    let mut out = lines.join("\n");
    if !lines.is_empty() && !no_eol {
        out.push('\n');
    }
    Ok(Some(out.into_bytes()))
}

/// Where `old` occurs in `lines`, nearest to `wanted` first.
fn find(lines: &[String], old: &[&str], wanted: usize) -> Option<usize> {
    let fits = |at: usize| {
        at + old.len() <= lines.len() && old.iter().zip(&lines[at..]).all(|(a, b)| *a == b)
    };
    if fits(wanted) {
        return Some(wanted);
    }
    (1..=lines.len()).find_map(|d| {
        [wanted.checked_sub(d), Some(wanted + d)]
            .into_iter()
            .flatten()
            .find(|&at| fits(at))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_deleted_and_renamed_files() {
        let patch = "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+A = 1\n+B = 2\ndiff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\ndiff --git a/p.py b/q.py\nsimilarity index 100%\nrename from p.py\nrename to q.py\n";
        let files = parse(patch).unwrap();
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].old_path, None);
        assert_eq!(apply(&files[0], None).unwrap().unwrap(), b"A = 1\nB = 2\n");
        assert_eq!(files[1].new_path, None);
        assert_eq!(apply(&files[1], Some(b"x = 1\n")).unwrap(), None);
        assert_eq!(
            (files[2].old_path.as_deref(), files[2].path()),
            (Some("p.py"), "q.py")
        );
        assert_eq!(
            apply(&files[2], Some(b"y = 2\n")).unwrap().unwrap(),
            b"y = 2\n"
        );
    }

    #[test]
    fn a_hunk_off_by_some_lines_applies_where_its_context_matches() {
        let original = "a\nb\nc\nd\ne\nf\n";
        let patch = "--- a/t.py\n+++ b/t.py\n@@ -1,3 +1,3 @@\n d\n-e\n+E\n f\n";
        let f = &parse(patch).unwrap()[0];
        assert_eq!(
            apply(f, Some(original.as_bytes())).unwrap().unwrap(),
            b"a\nb\nc\nd\nE\nf\n"
        );
        let wrong = "--- a/t.py\n+++ b/t.py\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n";
        let err = apply(&parse(wrong).unwrap()[0], Some(original.as_bytes())).unwrap_err();
        assert!(
            err.to_string()
                .contains("t.py: hunk 1 (at old line 1) does not match"),
            "{err}"
        );
    }

    #[test]
    fn two_hunks_and_the_missing_newline_at_the_end() {
        let original = "1\n2\n3\n4\n5\n6\n7\n8\n9";
        let patch = "--- a/n\n+++ b/n\n@@ -1,2 +1,3 @@\n 1\n+1.5\n 2\n@@ -8,2 +9,2 @@\n 8\n-9\n\\ No newline at end of file\n+nine\n";
        let f = &parse(patch).unwrap()[0];
        assert_eq!(
            apply(f, Some(original.as_bytes())).unwrap().unwrap(),
            b"1\n1.5\n2\n3\n4\n5\n6\n7\n8\nnine\n"
        );
    }

    #[test]
    fn text_that_is_no_patch_is_an_error() {
        assert!(parse("hello\n").is_err());
        assert!(parse("--- a/x\n+++ b/x\n@@ -x +1 @@\n").is_err());
    }
}
