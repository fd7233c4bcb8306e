//! Rule 4 (the semantic rule) over a commit's changed files: moved files paired, compiled-extension
//! sources compared without comments, modified files judged from tokens and member windows, and
//! whole-file tree-sitter summaries (cached by blob id) where those cannot decide.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use etip_core::candidate::Language;
use etip_lang::python_window::PythonPair;
use etip_lang::semantic::Tree as SyntaxTree;
use etip_lang::semantic::{Analyzer, FileChange, FileSummary, NonSemantic, Side, compare};
use etip_lang::window::{Modified, WindowStats, Windowed, judge_java};
use etip_toolchain::policy::PathClass;
use git2::Oid;

use super::lines::{LazyLines, Lines, line_diff};
use super::{BlobData, FileDiff, content};
use crate::MineError;
use crate::rules::RejectReason;

const CACHE_LIMIT: usize = 1024;

/// Parser and summary cache (separate from the repository so commits can borrow it meanwhile).
pub(super) struct SemState {
    pub(super) analyzer: Option<Analyzer>,
    /// (cache hits, incremental parses, full parses, bytes parsed)
    pub(super) stats: (u64, u64, u64, u64),
    /// Work of the window judgements of modified Java files.
    pub(super) windows: WindowStats,
    /// Latest cached version of each path: a base for incremental parsing when the exact old blob
    /// is not cached (its tree-sitter edit spans everything that differs).
    pub(super) by_path: HashMap<String, Oid>,
    /// Parsed versions by blob id, with the tick of their last use (least recently used go first).
    pub(super) cache: HashMap<Oid, (Arc<FileSummary>, SyntaxTree, u64)>,
    pub(super) tick: u64,
}

fn summary(
    sem: &mut SemState,
    id: Oid,
    content: &[u8],
    path: &str,
    previous: Option<Oid>,
) -> Result<Arc<FileSummary>, MineError> {
    sem.tick += 1;
    let tick = sem.tick;
    if let Some((s, _, used)) = sem.cache.get_mut(&id) {
        *used = tick;
        sem.stats.0 += 1;
        sem.by_path.insert(path.to_string(), id);
        return Ok(Arc::clone(s));
    }
    let base = previous.filter(|p| sem.cache.contains_key(p)).or_else(|| {
        sem.by_path
            .get(path)
            .copied()
            .filter(|p| sem.cache.contains_key(p))
    });
    // The cached summary holds the base version's source: no blob to read again.
    let prev = base.and_then(|p| {
        sem.cache
            .get(&p)
            .map(|(s, t, _)| (Arc::clone(s), t.clone()))
    });
    if prev.is_some() {
        sem.stats.1 += 1;
    } else {
        sem.stats.2 += 1;
    }
    sem.stats.3 += content.len() as u64;
    let analyzer = sem
        .analyzer
        .as_mut()
        .expect("semantic() only runs with an analyzer");
    let (summary, tree) =
        analyzer.summarize_after(content, prev.as_ref().map(|(b, t)| (t, b.source())))?;
    let summary = Arc::new(summary);
    if sem.cache.len() >= CACHE_LIMIT {
        // Drop the least recently used quarter.
        let mut ticks: Vec<u64> = sem.cache.values().map(|(_, _, t)| *t).collect();
        ticks.sort_unstable();
        let cut = ticks[CACHE_LIMIT / 4];
        sem.cache.retain(|_, (_, _, t)| *t > cut);
        let cache = &sem.cache;
        sem.by_path.retain(|_, oid| cache.contains_key(oid));
    }
    sem.cache.insert(id, (Arc::clone(&summary), tree, tick));
    sem.by_path.insert(path.to_string(), id);
    Ok(summary)
}

/// Rule 4 over every changed file. `Ok(Ok(names))` when semantic, `Ok(Err(reason))` otherwise.
pub(super) fn semantic(
    sem: &mut SemState,
    (lang, whole_file): (Language, bool),
    lines: &mut LazyLines,
) -> Result<Result<BTreeSet<String>, RejectReason>, MineError> {
    let files = lines.files;
    let (pair_of, used) = pair_moved(files);
    let mut names = BTreeSet::new();
    let mut reasons = BTreeSet::new();
    // Compiled-extension sources changed beyond comments and whitespace (no names: no grammar).
    let mut native_changed = false;
    for (i, f) in files.iter().enumerate() {
        if used.contains(&i) {
            continue; // analysed with its added partner
        }
        let partner = pair_of.get(&i).copied();
        let change = if f.class == PathClass::Extension {
            match extension_change(lines, i, partner) {
                Some(reason) => FileChange::NotSemantic(reason),
                None => {
                    native_changed = true;
                    continue;
                }
            }
        } else if let Some(d) = partner {
            moved(sem, lang, lines, d, i)?
        } else {
            modified(sem, (lang, whole_file), lines, i)?
        };
        match change {
            FileChange::Semantic(n) => names.extend(n),
            FileChange::NotSemantic(r) => {
                reasons.insert(r);
            }
        }
    }
    if !names.is_empty() || native_changed {
        return Ok(Ok(names));
    }
    // The most substantial kind of non-semantic change names the rejection.
    let reason = match reasons.iter().next_back() {
        Some(NonSemantic::NoBodyChange) | None => RejectReason::NoBodyChange,
        Some(NonSemantic::ImportOnly) => RejectReason::ImportOnly,
        Some(NonSemantic::RenameOnly) => RejectReason::RenameOnly,
        Some(NonSemantic::WhitespaceOrComment) => RejectReason::WhitespaceOrCommentOnly,
    };
    Ok(Err(reason))
}

/// Pairs deleted and added files: same blob (exact rename), else the same file name (moved and
/// edited). The pairs (added -> deleted) and the deleted files that have a partner.
fn pair_moved(files: &[FileDiff]) -> (HashMap<usize, usize>, BTreeSet<usize>) {
    let deleted: Vec<usize> = (0..files.len())
        .filter(|i| files[*i].new_id.is_none())
        .collect();
    let added: Vec<usize> = (0..files.len())
        .filter(|i| files[*i].old_id.is_none())
        .collect();
    let mut pair_of: HashMap<usize, usize> = HashMap::new();
    let mut used = BTreeSet::new();
    for &a in &added {
        if let Some(&d) = deleted
            .iter()
            .find(|d| !used.contains(*d) && files[**d].old_id == files[a].new_id)
        {
            used.insert(d);
            pair_of.insert(a, d);
        }
    }
    let file_name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    for &a in &added {
        if pair_of.contains_key(&a) {
            continue;
        }
        let name = file_name(files[a].path());
        let same: Vec<usize> = deleted
            .iter()
            .copied()
            .filter(|d| !used.contains(d) && file_name(files[*d].path()) == name)
            .collect();
        if same.len() == 1 {
            used.insert(same[0]);
            pair_of.insert(a, same[0]);
        }
    }
    (pair_of, used)
}

/// A compiled-extension source (file `i`, moved from `partner`): the kind of non-semantic change
/// when its code is unchanged apart from comments and whitespace, `None` when it changed.
fn extension_change(lines: &LazyLines, i: usize, partner: Option<usize>) -> Option<NonSemantic> {
    let (f, blobs) = (&lines.files[i], lines.blobs);
    let old_side = partner.map_or(&blobs[i].0, |d| &blobs[d].0);
    match (old_side, &blobs[i].1) {
        (Some(o), Some(n)) if crate::native::same_code(f.path(), o, n) => {
            Some(if partner.is_some() {
                NonSemantic::RenameOnly
            } else {
                NonSemantic::WhitespaceOrComment
            })
        }
        _ => None,
    }
}

/// A file moved from `d` (deleted) to `i` (added), compared on whole-file summaries against the
/// line diff of the two versions; a moved file whose code is unchanged is a rename.
fn moved(
    sem: &mut SemState,
    lang: Language,
    lines: &LazyLines,
    d: usize,
    i: usize,
) -> Result<FileChange, MineError> {
    let (files, blobs) = (lines.files, lines.blobs);
    let (from, to) = (&files[d], &files[i]);
    let old_id = from.old_id.expect("deleted side has an old blob");
    let new_id = to.new_id.expect("added side has a new blob");
    if old_id == new_id {
        return Ok(FileChange::NotSemantic(NonSemantic::RenameOnly));
    }
    let (old_blob, new_blob) = (&blobs[d].0, &blobs[i].1);
    let pair_lines = line_diff(content(old_blob), content(new_blob));
    let (old_path, new_path) = (
        from.old_path.as_deref().unwrap_or(""),
        to.new_path.as_deref().unwrap_or(""),
    );
    let old_s = summary(sem, old_id, content(old_blob), old_path, None)?;
    let new_s = summary(sem, new_id, content(new_blob), new_path, Some(old_id))?;
    let change = compare(
        lang,
        Some(Side {
            summary: &old_s,
            path: old_path,
            rows: &pair_lines.deleted,
        }),
        Some(Side {
            summary: &new_s,
            path: new_path,
            rows: &pair_lines.added,
        }),
    );
    Ok(match change {
        FileChange::NotSemantic(
            NonSemantic::WhitespaceOrComment | NonSemantic::ImportOnly | NonSemantic::RenameOnly,
        ) => FileChange::NotSemantic(NonSemantic::RenameOnly),
        other => other,
    })
}

/// A modified (or added, or deleted) file `i`: tokens and member windows decide most changes
/// without parsing the whole file (exactly as the whole-file comparison would); whole-file
/// summaries decide the rest.
fn modified(
    sem: &mut SemState,
    (lang, whole_file): (Language, bool),
    lines: &mut LazyLines,
    i: usize,
) -> Result<FileChange, MineError> {
    let (f, blobs) = (&lines.files[i], lines.blobs);
    if let (false, Some(old_path), Some(new_path)) =
        (whole_file, f.old_path.as_deref(), f.new_path.as_deref())
    {
        let (old, new) = (content(&blobs[i].0), content(&blobs[i].1));
        let judged = match lang {
            Language::Java => {
                let analyzer = sem
                    .analyzer
                    .as_mut()
                    .expect("semantic() only runs with an analyzer");
                let rows = lines.get(i);
                let modified = Modified {
                    old,
                    new,
                    old_path,
                    new_path,
                    deleted: &rows.deleted,
                    added: &rows.added,
                };
                judge_java(analyzer, &modified, &mut sem.windows)?
            }
            Language::Python => match PythonPair::parse(old, new, &mut sem.windows) {
                // The line diff only when a unit changed somewhere: a rejection decided without it
                // is exact, and it is then needed only if another file keeps the commit.
                Some(pair) => {
                    let modified = Modified {
                        old,
                        new,
                        old_path,
                        new_path,
                        deleted: &[],
                        added: &[],
                    };
                    let lines = &mut *lines;
                    let judged = pair.judge(
                        &modified,
                        move || {
                            let r = lines.get(i);
                            Ok::<_, std::convert::Infallible>((
                                r.deleted.as_slice(),
                                r.added.as_slice(),
                            ))
                        },
                        &mut sem.windows,
                    );
                    match judged {
                        Ok(decided) => Windowed::Decided(decided),
                        Err(never) => match never {},
                    }
                }
                None => Windowed::NeedsFullParse,
            },
        };
        if let Windowed::Decided(change) = judged {
            return Ok(change);
        }
    }
    let (f, blobs) = (&lines.files[i], lines.blobs);
    whole_files(sem, lang, f, &blobs[i], lines.get(i))
}

/// The semantic rule on whole-file summaries of both versions of one file change.
fn whole_files(
    sem: &mut SemState,
    lang: Language,
    f: &FileDiff,
    blobs: &(Option<BlobData>, Option<BlobData>),
    lines: &Lines,
) -> Result<FileChange, MineError> {
    let old_s = match f.old_id {
        Some(id) => Some(summary(
            sem,
            id,
            content(&blobs.0),
            f.old_path.as_deref().unwrap_or(""),
            None,
        )?),
        None => None,
    };
    let new_s = match f.new_id {
        Some(id) => Some(summary(
            sem,
            id,
            content(&blobs.1),
            f.new_path.as_deref().unwrap_or(""),
            f.old_id,
        )?),
        None => None,
    };
    Ok(compare(
        lang,
        old_s.as_deref().map(|s| Side {
            summary: s,
            path: f.old_path.as_deref().unwrap_or(""),
            rows: &lines.deleted,
        }),
        new_s.as_deref().map(|s| Side {
            summary: s,
            path: f.new_path.as_deref().unwrap_or(""),
            rows: &lines.added,
        }),
    ))
}
