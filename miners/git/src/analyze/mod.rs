//! Evaluation of one commit: the validity rules of docs/rules.md §2.2, cheapest first.
//!
//! 1. tree-to-tree diff against the first parent (no blob is read): empty diff, rule 1 (source files
//!    only), rule 2 (no test file), rule 3 (at most `max_files`);
//! 2. the blobs of the changed files;
//! 3. rule 4, on the two versions of each changed file: token and window judgements, else
//!    tree-sitter with summaries cached by blob id (a file's new version is usually the next
//!    change's old version). Line diffs are computed when a judgement needs the changed rows: a
//!    Python file in which no unit changed anywhere is decided without them;
//! 4. the line diffs of every file: diff statistics and the normalised diff hash; modules and the
//!    candidate record (whose issue links and PR number the miner adds: [`crate::linker`]).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use etip_core::candidate::{Candidate, Language, SCHEMA_VERSION};
use etip_lang::profile;
use etip_lang::semantic::Analyzer;
use etip_lang::window::WindowStats;
use etip_toolchain::policy::{PathClass, PathMatcher, PathPolicy};
use git2::{Commit, Oid, Repository, Tree};

use crate::pack::PackReader;

use crate::MineError;
pub use crate::history::CommitIds;
use crate::rules::RejectReason;

mod lines;
mod rule4;
use lines::{LazyLines, diff_stats_and_hash};
use rule4::{SemState, semantic};

/// Settings a worker needs to evaluate commits.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EvalSettings {
    /// Language profile.
    pub lang: Language,
    /// Rule 3 limit.
    pub max_files: usize,
    /// Whether rule 4 (tree-sitter) runs.
    pub semantic: bool,
    /// `owner/name` when known.
    pub repo_name: Option<String>,
    /// Path or URL the history is read from (recorded as `source`).
    pub source: String,
    /// Prefix of candidate ids (`owner__name` or the directory name).
    pub id_prefix: String,
    /// The project's JIRA prefixes (found in the history, or configured): other key-like tokens
    /// are not links ([`links::Links::keep_jira`]).
    #[serde(default)]
    pub jira_projects: Vec<String>,
    /// Classify each candidate's commit message with the offline classifier (`--classify`).
    #[serde(default)]
    pub classify: bool,
    /// Which changed paths are code, set aside or disqualifying (rule 1).
    #[serde(default)]
    pub paths: PathPolicy,
    /// Decide rule 4 on whole-file parses only, without the token and window judgements (which
    /// give the same answers faster): for checking that claim and measuring the difference.
    #[serde(default)]
    pub whole_file: bool,
}

/// The decision about one commit.
#[derive(Debug, Clone)]
pub enum Decision {
    /// Passed every rule.
    Kept(Box<Candidate>),
    /// Failed a rule.
    Rejected {
        /// Which rule.
        reason: RejectReason,
        /// Offending path, counts or the like.
        detail: String,
    },
}

/// Evaluates commits of one repository; owns its `Repository` and parser (one per thread).
pub struct Worker {
    repo: Repository,
    /// Blob and tree reads that bypass libgit2 where they can ([`crate::pack`]).
    packs: PackReader,
    /// Blobs and trees libgit2 read because the pack reader could not.
    fallbacks: u64,
    settings: Arc<EvalSettings>,
    paths: PathMatcher,
    sem: SemState,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let (hits, incremental, full, bytes) = self.sem.stats;
        tracing::debug!(
            hits,
            incremental,
            full,
            bytes,
            windows = ?self.sem.windows,
            "tree-sitter work of one mining worker"
        );
        tracing::debug!(
            packs = self.packs.packs(),
            fallbacks = self.fallbacks,
            "blobs and trees libgit2 read because the pack reader could not"
        );
    }
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("settings", &self.settings)
            .finish()
    }
}

struct FileDiff {
    old_path: Option<String>,
    new_path: Option<String>,
    old_id: Option<Oid>,
    new_id: Option<Oid>,
    class: PathClass,
}

impl FileDiff {
    fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .expect("a delta has at least one side")
    }
}

/// One entry of a tree object as stored: kind, name and object id.
struct RawEntry<'a> {
    kind: git2::ObjectType,
    name: &'a [u8],
    id: &'a [u8],
}

/// The entries of a tree object's stored form (`<octal mode> <name>\0<20-byte id>` each), read in
/// place: no entry table is built and nothing enters libgit2's object cache. `None` ends the
/// iteration; a malformed object ends it early and sets `malformed`.
struct RawEntries<'a> {
    data: &'a [u8],
    malformed: bool,
}

impl<'a> Iterator for RawEntries<'a> {
    type Item = RawEntry<'a>;
    fn next(&mut self) -> Option<RawEntry<'a>> {
        if self.data.is_empty() {
            return None;
        }
        let entry = (|| {
            let sp = memchr::memchr(b' ', self.data)?;
            let nul = sp + 1 + memchr::memchr(0, &self.data[sp + 1..])?;
            let id = self.data.get(nul + 1..nul + 21)?;
            let mut mode = 0u32;
            for &d in &self.data[..sp] {
                if !(b'0'..=b'7').contains(&d) {
                    return None;
                }
                mode = mode.checked_mul(8)? + u32::from(d - b'0');
            }
            let kind = match mode & 0o170000 {
                0o040000 => git2::ObjectType::Tree,
                0o160000 => git2::ObjectType::Commit,
                _ => git2::ObjectType::Blob,
            };
            Some((
                RawEntry {
                    kind,
                    name: &self.data[sp + 1..nul],
                    id,
                },
                nul + 21,
            ))
        })();
        match entry {
            Some((e, rest)) => {
                self.data = &self.data[rest..];
                Some(e)
            }
            None => {
                self.malformed = true;
                self.data = &[];
                None
            }
        }
    }
}

fn malformed_tree() -> git2::Error {
    git2::Error::from_str("malformed tree object")
}

/// Appends the changed files between two trees (blobs and submodules; `None` is the empty tree), in
/// tree order, each with its class; stops and returns `true` at the first file that rule 1 rejects
/// ([`PathClass::Other`]). Identical subtrees (same id) are skipped without being read, so the cost
/// follows the size of the change, not the size of the repository.
fn diff_trees(
    read: &mut dyn FnMut(Oid) -> Result<BlobData, git2::Error>,
    classify: &mut dyn FnMut(&str) -> PathClass,
    old: Option<Oid>,
    new: Option<Oid>,
    prefix: &mut String,
    out: &mut Vec<FileDiff>,
) -> Result<bool, git2::Error> {
    use git2::ObjectType;
    use std::cmp::Ordering;
    // Git sorts tree entries by name, a subtree's name compared as if it ended with '/': a merge join
    // in that order visits each name once, without collecting or hashing the entries.
    fn key_cmp(a: &RawEntry, b: &RawEntry) -> Ordering {
        let slash = |e: &RawEntry| (e.kind == ObjectType::Tree).then_some(b'/');
        let x = a.name.iter().copied().chain(slash(a));
        let y = b.name.iter().copied().chain(slash(b));
        x.cmp(y)
    }
    let old_obj = old.map(&mut *read).transpose()?;
    let new_obj = new.map(&mut *read).transpose()?;
    let mut olds = RawEntries {
        data: content(&old_obj),
        malformed: false,
    };
    let mut news = RawEntries {
        data: content(&new_obj),
        malformed: false,
    };
    let mut o = olds.next();
    let mut n = news.next();
    loop {
        let (old_e, new_e) = match (&o, &n) {
            (None, None) => break,
            (Some(_), None) => (o.take(), None),
            (None, Some(_)) => (None, n.take()),
            (Some(a), Some(b)) => match key_cmp(a, b) {
                Ordering::Less => (o.take(), None),
                Ordering::Greater => (None, n.take()),
                Ordering::Equal => (o.take(), n.take()),
            },
        };
        if old_e.is_some() {
            o = olds.next();
        }
        if new_e.is_some() {
            n = news.next();
        }
        if let (Some(a), Some(b)) = (&old_e, &new_e)
            && a.id == b.id
            && a.kind == b.kind
        {
            continue;
        }
        let entry = old_e
            .as_ref()
            .or(new_e.as_ref())
            .expect("one side is present");
        let oid = |e: &Option<RawEntry>| e.as_ref().map(|e| Oid::from_bytes(e.id)).transpose();
        let (old_id, new_id) = (oid(&old_e)?, oid(&new_e)?);
        let len = prefix.len();
        prefix.push_str(&String::from_utf8_lossy(entry.name));
        if entry.kind == ObjectType::Tree {
            // Same name on both sides means both are trees (the sort key tells trees from files).
            prefix.push('/');
            if diff_trees(read, classify, old_id, new_id, prefix, out)? {
                return Ok(true);
            }
        } else {
            let class = classify(prefix);
            out.push(FileDiff {
                old_path: old_e.as_ref().map(|_| prefix.clone()),
                new_path: new_e.as_ref().map(|_| prefix.clone()),
                old_id,
                new_id,
                class,
            });
            if class == PathClass::Other {
                // Rule 1 rejects the commit whatever else changed: stop reading trees.
                return Ok(true);
            }
        }
        prefix.truncate(len);
    }
    if olds.malformed || news.malformed {
        return Err(malformed_tree());
    }
    Ok(false)
}

pub(crate) fn git_err(what: &'static str, sha: Oid) -> impl FnOnce(git2::Error) -> MineError {
    move |source| MineError::Git {
        what,
        sha: sha.to_string(),
        source,
    }
}

impl Worker {
    /// Opens `repo_path` for this worker.
    pub fn new(repo_path: &Path, settings: Arc<EvalSettings>) -> Result<Self, MineError> {
        let repo = Repository::open(repo_path).map_err(|source| MineError::OpenRepo {
            path: repo_path.to_path_buf(),
            source,
        })?;
        let analyzer = if settings.semantic {
            Some(Analyzer::new(settings.lang)?)
        } else {
            None
        };
        let paths = PathMatcher::new(settings.lang, &settings.paths)?;
        let packs = PackReader::open(&repo);
        Ok(Self {
            repo,
            packs,
            fallbacks: 0,
            settings,
            paths,
            sem: SemState {
                analyzer,
                stats: (0, 0, 0, 0),
                windows: WindowStats::default(),
                by_path: HashMap::new(),
                cache: HashMap::new(),
                tick: 0,
            },
        })
    }

    fn reject(reason: RejectReason, detail: impl Into<String>) -> Result<Decision, MineError> {
        Ok(Decision::Rejected {
            reason,
            detail: detail.into(),
        })
    }

    /// Evaluates one commit against its first parent.
    pub fn evaluate(&mut self, oid: Oid) -> Result<Decision, MineError> {
        let ids = self.ids(oid)?;
        self.evaluate_ids(&ids)
    }

    /// The tree and first parent of `oid`.
    pub fn ids(&self, oid: Oid) -> Result<CommitIds, MineError> {
        let commit = self
            .repo
            .find_commit(oid)
            .map_err(git_err("read commit", oid))?;
        let parent = commit.parent_id(0).ok();
        // The parent's tree also when git cannot parse the parent (a malformed author date).
        let parent_tree = match parent {
            Some(p) => match crate::history::commit_tree(&self.repo, p) {
                Some(tree) => Some(tree),
                None => {
                    let e = commit.parent(0).err().unwrap_or_else(|| {
                        git2::Error::from_str("the first parent has no readable tree")
                    });
                    return Err(git_err("read first parent", oid)(e));
                }
            },
            None => None,
        };
        Ok(CommitIds {
            commit: oid,
            tree: commit.tree_id(),
            parent,
            parent_tree,
        })
    }

    /// Evaluates one commit whose tree and first parent the caller already knows (the history walk
    /// read them): the commit itself is read only if it passes the rules.
    pub fn evaluate_ids(&mut self, ids: &CommitIds) -> Result<Decision, MineError> {
        let lang = self.settings.lang;
        let oid = ids.commit;
        // Stage 1: paths only — a tree-to-tree comparison that skips identical subtrees by id.
        let mut files = Vec::new();
        let non_source = self
            .changed_paths(ids, &mut files)
            .map_err(git_err("diff trees", oid))?;
        if non_source {
            let last = files.last().expect("the non-source file was pushed");
            return Self::reject(RejectReason::NonSourceFile, last.path());
        }
        if files.is_empty() {
            return Self::reject(RejectReason::EmptyDiff, "");
        }
        for f in &files {
            for p in [f.old_path.as_deref(), f.new_path.as_deref()]
                .into_iter()
                .flatten()
            {
                if let Some(rule) = profile::test_rule(lang, p) {
                    return Self::reject(RejectReason::TestFile, format!("{p} ({rule})"));
                }
            }
        }
        let (mut files, ignored): (Vec<FileDiff>, Vec<FileDiff>) =
            files.into_iter().partition(|f| f.class.is_code());
        if files.is_empty() {
            return Self::reject(RejectReason::OnlyIgnoredFiles, files_detail(&ignored));
        }
        if files.len() > self.settings.max_files {
            return Self::reject(
                RejectReason::TooManyFiles,
                format!(
                    "{} files > --max-files {}",
                    files.len(),
                    self.settings.max_files
                ),
            );
        }

        // Stage 2: blobs (they stay loaded: reading a blob inflates it from the pack every time).
        files.sort_by(|a, b| a.path().cmp(b.path()));
        let mut blobs: Vec<(Option<BlobData>, Option<BlobData>)> = Vec::with_capacity(files.len());
        for f in &files {
            blobs.push((self.blob(f.old_id, oid)?, self.blob(f.new_id, oid)?));
        }
        let mut lines = LazyLines::new(&files, &blobs);

        // Stage 3: semantic rule.
        let mut functions = BTreeSet::new();
        if self.settings.semantic {
            match semantic(
                &mut self.sem,
                (self.settings.lang, self.settings.whole_file),
                &mut lines,
            )? {
                Ok(names) => functions = names,
                Err(reason) => {
                    return Self::reject(reason, files_detail(&files));
                }
            }
        }
        let (stats, diff_hash) = diff_stats_and_hash(&mut lines);

        // Stage 4: the candidate.
        let commit = self
            .repo
            .find_commit(oid)
            .map_err(git_err("read commit", oid))?;
        let message = String::from_utf8_lossy(commit.message_raw_bytes()).into_owned();
        let author_date = author_date(&commit);
        drop(commit);
        let paths_of = |files: &[FileDiff], only: Option<PathClass>| -> Vec<String> {
            let mut all = BTreeSet::new();
            for f in files.iter().filter(|f| only.is_none_or(|c| f.class == c)) {
                all.extend(f.old_path.clone());
                all.extend(f.new_path.clone());
            }
            all.into_iter().collect()
        };
        let changed_files = paths_of(&files, None);
        let ignored_files = paths_of(&ignored, None);
        let extension_files = paths_of(&files, Some(PathClass::Extension));
        let tree = self
            .repo
            .find_tree(ids.tree)
            .map_err(git_err("read tree", oid))?;
        let changed_modules = self.modules(&tree, &changed_files);
        let base_commit = ids.parent.unwrap_or(git2::Oid::ZERO_SHA1).to_string();
        let sha = oid.to_string();
        let classification = self.settings.classify.then(|| {
            etip_classify::Offline
                .classify(&etip_classify::commit_text(&message))
                .record("commit message")
        });
        let candidate = Candidate {
            schema_version: SCHEMA_VERSION,
            id: format!("{}-{}", self.settings.id_prefix, &sha[..12]),
            repo: self.settings.repo_name.clone(),
            source: self.settings.source.clone(),
            language: lang,
            base_commit,
            patched_commit: sha,
            // The links are the miner's to add ([`crate::linker`]).
            pr_number: None,
            issues: Vec::new(),
            pull_requests: Vec::new(),
            message,
            author_date,
            changed_files,
            ignored_files,
            extension_files,
            changed_modules,
            changed_functions: functions.into_iter().collect(),
            diff_stats: stats,
            diff_hash,
            duplicates: Vec::new(),
            replaces: Vec::new(),
            issue: None,
            classification,
        };
        Ok(Decision::Kept(Box::new(candidate)))
    }

    /// Stage 1's tree diff of a commit against its first parent, every path classified by the path
    /// rule; `true` when it stopped at a file that rule 1 rejects.
    fn changed_paths(
        &mut self,
        ids: &CommitIds,
        files: &mut Vec<FileDiff>,
    ) -> Result<bool, git2::Error> {
        let odb = self.repo.odb()?;
        let (packs, fallbacks) = (&mut self.packs, &mut self.fallbacks);
        let mut read = |id: Oid| -> Result<BlobData, git2::Error> {
            match packs.tree(id) {
                Ok(Some(data)) => return Ok(data),
                Ok(None) => {}
                Err(e) => tracing::debug!(tree = %id, "read through libgit2: {e}"),
            }
            *fallbacks += 1;
            let o = odb.read(id)?;
            if o.kind() != git2::ObjectType::Tree {
                return Err(malformed_tree());
            }
            Ok(Arc::new(o.data().to_vec()))
        };
        // Python packages (directories holding `__init__.py`) in either version, asked only about
        // the folders of documentation-format files.
        let mut memo: HashMap<String, bool> = HashMap::new();
        let trees = [Some(ids.tree), ids.parent_tree];
        let mut is_package = |dir: &str| -> bool {
            if let Some(v) = memo.get(dir) {
                return *v;
            }
            let init = Path::new(dir).join("__init__.py");
            let v = trees.iter().flatten().any(|t| {
                self.repo
                    .find_tree(*t)
                    .is_ok_and(|t| t.get_path(&init).is_ok())
            });
            memo.insert(dir.to_string(), v);
            v
        };
        let mut classify = |p: &str| self.paths.classify(p, &mut is_package);
        diff_trees(
            &mut read,
            &mut classify,
            ids.parent_tree,
            Some(ids.tree),
            &mut String::new(),
            files,
        )
    }

    fn modules(&self, tree: &Tree, files: &[String]) -> Vec<String> {
        let lang = self.settings.lang;
        let mut memo: HashMap<String, bool> = HashMap::new();
        let mut has_pom = |dir: &str| -> bool {
            if let Some(v) = memo.get(dir) {
                return *v;
            }
            let p = if dir.is_empty() {
                "pom.xml".to_string()
            } else {
                format!("{dir}/pom.xml")
            };
            let v = tree.get_path(Path::new(&p)).is_ok();
            memo.insert(dir.to_string(), v);
            v
        };
        let set: BTreeSet<String> = files
            .iter()
            .map(|f| profile::module_of(lang, f, &mut has_pom))
            .collect();
        set.into_iter().collect()
    }

    /// The repository this worker reads.
    pub fn repo(&self) -> &Repository {
        &self.repo
    }

    /// The content of blob `id` (`None` for an absent version): from the packs, or through
    /// libgit2 for what the pack reader does not answer.
    fn blob(&mut self, id: Option<Oid>, commit: Oid) -> Result<Option<BlobData>, MineError> {
        let Some(id) = id else { return Ok(None) };
        match self.packs.blob(id) {
            Ok(Some(data)) => return Ok(Some(data)),
            Ok(None) => {}
            Err(e) => tracing::debug!(blob = %id, "read through libgit2: {e}"),
        }
        self.fallbacks += 1;
        let blob = self
            .repo
            .find_blob(id)
            .map_err(git_err("read blob", commit))?;
        Ok(Some(Arc::new(blob.content().to_vec())))
    }
}

/// A file version's bytes.
pub(crate) type BlobData = Arc<Vec<u8>>;

fn content(b: &Option<BlobData>) -> &[u8] {
    b.as_deref().map_or(&[], Vec::as_slice)
}

fn files_detail(files: &[FileDiff]) -> String {
    let v: Vec<&str> = files.iter().map(FileDiff::path).collect();
    v.join(", ")
}

/// Author date as RFC 3339 with the author's offset, clamped to RFC 3339's years 0000-9999 (see
/// [`crate::dates::rfc3339`]).
pub fn author_date(commit: &Commit) -> String {
    let when = commit.author().when();
    let (seconds, minutes) = (when.seconds(), when.offset_minutes());
    if !(crate::dates::RFC3339_MIN..=crate::dates::RFC3339_MAX).contains(&seconds) {
        tracing::warn!(
            commit = %commit.id(),
            seconds,
            "author date outside RFC 3339's years 0000-9999: written clamped"
        );
    }
    crate::dates::rfc3339(seconds, minutes)
}
