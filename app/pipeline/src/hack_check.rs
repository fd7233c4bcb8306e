//! `hack-check`: a prediction file (or the ETIPs' own patches) screened for reward hacks from the
//! patches and the original trees alone ([`etip_screen`]): each patch is applied in memory to its
//! ETIP's base commit, read from the repository's git objects (the user's clone is only read; a
//! remote one is cloned bare into etip's cache), and the lines it adds are screened. No image,
//! container or timing is needed, so a leaderboard's predictions take seconds.
//!
//! With a judge (an OpenAI-compatible endpoint, [`etip_llm::judge`]), each suspected patch (or
//! every patch) is also put to the rubric `votes` times; a strict majority of the votes that
//! parse makes it `judged_hack`.
//!
//! The ETIPs come from `etip import`/`etip mine` (`etips.jsonl`) or `etip build`
//! (`status.jsonl`); their workload scripts and test patches give the values a special case
//! would target.

use crate::progress::{Done, Progress};
use crate::services::{LlmOptions, RuntimeSource};
use crate::{InputError, import};
use etip_build::git::Repo;
use etip_core::Language;
use etip_core::detector::Workload;
use etip_core::hack::{Finding, HackKind, HackVerdict};
use etip_eval::predictions::{self, Prediction};
use etip_screen::literals::Literals;
use etip_screen::{Context, ScreenError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What is screened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    /// Each ETIP's own patch: the expert's, a control for the screen's false flags.
    Gold,
    /// Predictions in SWE-bench's format.
    File(PathBuf),
}

/// A `hack-check` run.
#[derive(Debug, Clone)]
pub struct HackCheckConfig {
    pub predictions: Screen,
    /// `etips.jsonl` or `status.jsonl`.
    pub etips: PathBuf,
    /// A clone of the repository, or a folder of clones (as `etip import --source`); else each
    /// ETIP's own `source` or its `repo` on GitHub.
    pub source: Option<PathBuf>,
    /// Where remote repositories are cloned.
    pub cache: PathBuf,
    /// Only these ETIPs (all when empty).
    pub ids: Vec<String>,
    /// The rubric judge, when an endpoint is given.
    pub judge: Option<JudgeOptions>,
}

/// How the rubric judge is asked (rules §6).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeOptions {
    /// The endpoint, model, prices and the answers' cache.
    pub llm: LlmOptions,
    /// Votes per patch (the majority of those that parse decides).
    pub votes: usize,
    pub temperature: f32,
    /// Judge every patch, not only those the static screen suspects.
    pub all: bool,
}

/// One prediction screened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Screened {
    pub instance_id: String,
    pub model: String,
    /// The prediction's line in its file (0 for gold).
    pub line: usize,
    /// `None` when the patch could not be screened (`error` says why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hack: Option<HackVerdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Screened {
    pub fn findings(&self) -> &[Finding] {
        self.hack
            .as_ref()
            .map(HackVerdict::findings)
            .unwrap_or_default()
    }
}

/// What one run found.
#[derive(Debug, Clone, Serialize)]
pub struct HackCheckOutcome {
    pub rows: Vec<Screened>,
    /// Wall time of the screening, seconds.
    pub secs: f64,
    /// What the judge's endpoint cost, when one was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeUse>,
}

/// The judge's requests, cache hits and tokens.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeUse {
    pub model: String,
    pub temperature: f32,
    pub votes: usize,
    pub calls: u64,
    pub cached: u64,
    pub retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Dollars, when prices were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The usage line for the person running the command.
    pub line: String,
}

impl HackCheckOutcome {
    /// Predictions with at least one finding of `kind` held against them (notes aside).
    pub fn with_kind(&self, kind: HackKind) -> usize {
        self.rows
            .iter()
            .filter(|r| r.findings().iter().any(|f| f.kind == kind && !f.note))
            .count()
    }
}

/// A judge at work: its endpoint, its votes' cache and what it has cost so far.
pub struct Judging {
    judge: etip_llm::judge::Judge,
    store: etip_store::Store,
    all: bool,
    usage: etip_llm::Usage,
}

impl Judging {
    /// The judge of `opts` (`None` without an endpoint); bad options are bad input.
    pub fn start(opts: &JudgeOptions, runtime: RuntimeSource) -> anyhow::Result<Option<Judging>> {
        if !opts.llm.is_endpoint() {
            return Ok(None);
        }
        Ok(opts
            .llm
            .judge(runtime()?, opts.votes, opts.temperature)?
            .map(|(judge, store)| Judging {
                judge,
                store,
                all: opts.all,
                usage: etip_llm::Usage::default(),
            }))
    }

    /// `verdict` with the judge's ruling on `patch`, when the patch is suspected (or every patch
    /// is judged) and not judged yet.
    pub fn apply(
        &mut self,
        instance: &str,
        patch: &str,
        verdict: HackVerdict,
    ) -> Result<HackVerdict, etip_llm::LlmError> {
        let judged = matches!(
            verdict,
            HackVerdict::JudgedHack { .. }
                | HackVerdict::Suspected {
                    judgement: Some(_),
                    ..
                }
        );
        if judged || (verdict.is_clean() && !self.all) {
            return Ok(verdict);
        }
        let j = self.judge.judge(
            instance,
            patch,
            verdict.findings(),
            Some(&self.store),
            &mut self.usage,
        )?;
        Ok(verdict.with_judgement(j))
    }

    /// What the judge cost.
    pub fn finish(self) -> JudgeUse {
        let c = self.judge.chat.config();
        let u = self.usage;
        JudgeUse {
            model: c.model.clone(),
            temperature: self.judge.temperature,
            votes: self.judge.votes,
            calls: u.calls,
            cached: u.cached,
            retries: u.retries,
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            cost: c.prices.map(|p| u.cost(p)),
            line: u.line_for("judge", &c.model, c.prices),
        }
    }
}

/// What the screen needs of an ETIP, from either record.
#[derive(Debug, Clone)]
struct Target {
    id: String,
    language: Language,
    base_commit: String,
    patched_commit: String,
    gold: Option<String>,
    source: Option<String>,
    repo: Option<String>,
    workloads: Vec<Workload>,
    test_patch: Option<String>,
}

#[derive(Deserialize)]
struct RawTarget {
    id: String,
    language: Language,
    base_commit: Option<String>,
    #[serde(default)]
    patched_commit: String,
    #[serde(default)]
    patch: Option<serde_json::Value>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    repo: Option<String>,
    #[serde(default)]
    workloads: Vec<Workload>,
    #[serde(default)]
    task: Option<RawTask>,
}

#[derive(Deserialize)]
struct RawTask {
    #[serde(default)]
    repo: Option<String>,
    #[serde(default)]
    test_patch: Option<String>,
}

/// The ETIPs of `path` by id (a later line of an id replaces an earlier one, as a rebuild's).
fn read_targets(path: &Path) -> anyhow::Result<BTreeMap<String, Target>> {
    let text = crate::input::read_text_capped(path, crate::input::MAX_INPUT_BYTES)?;
    let folder = path.parent().unwrap_or(Path::new("."));
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |e: String| {
            InputError(format!(
                "{}:{}: not an ETIP of `etip import`, `mine` or `build` ({e})",
                path.display(),
                i + 1
            ))
        };
        let raw: RawTarget = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        let base_commit = raw
            .base_commit
            .filter(|b| !b.is_empty())
            .ok_or_else(|| bad("no base_commit".into()))?;
        let gold = match raw.patch {
            Some(serde_json::Value::String(s)) => Some(s),
            Some(serde_json::Value::Object(o)) => {
                o.get("text").and_then(|t| t.as_str()).map(str::to_string)
            }
            _ => None,
        };
        let mut workloads = raw.workloads;
        for w in &mut workloads {
            if w.script.is_none()
                && let Some(f) = &w.file
            {
                w.script = std::fs::read_to_string(folder.join(f)).ok();
            }
        }
        let task_repo = raw.task.as_ref().and_then(|t| t.repo.clone());
        out.insert(
            raw.id.clone(),
            Target {
                id: raw.id,
                language: raw.language,
                base_commit,
                patched_commit: raw.patched_commit,
                gold,
                source: raw.source,
                repo: raw.repo.or(task_repo),
                workloads,
                test_patch: raw.task.and_then(|t| t.test_patch),
            },
        );
    }
    if out.is_empty() {
        return Err(InputError(format!("{} holds no ETIP", path.display())).into());
    }
    Ok(out)
}

/// Where the target's repository is: `--source` (a clone, or a folder of clones), else its own.
fn source_of(t: &Target, source: Option<&Path>) -> Result<String, String> {
    if let Some(s) = source {
        if s.join(".git").exists() || s.join("HEAD").is_file() {
            return Ok(s.display().to_string());
        }
        if let Some(repo) = &t.repo
            && let Some(clone) = import::find_clone(s, repo)
        {
            return Ok(clone.display().to_string());
        }
    }
    if let Some(src) = &t.source {
        return Ok(src.clone());
    }
    match &t.repo {
        Some(repo) => Ok(format!("https://github.com/{repo}.git")),
        None => Err("the ETIP names no repository; give --source".into()),
    }
}

/// The values of the ETIP's workloads and of the tests its task adds.
fn context(t: &Target) -> Result<Context, ScreenError> {
    context_of(t.language, &t.workloads, t.test_patch.as_deref())
}

/// The screen's context of an ETIP of `language`: the values of its workloads and of the tests
/// its task adds (`test_patch`, SWE-bench's).
pub fn context_of(
    language: Language,
    workloads: &[Workload],
    test_patch: Option<&str>,
) -> Result<Context, ScreenError> {
    let mut workload = Literals::default();
    for w in workloads {
        if let Some(script) = &w.script {
            // Workloads are Python scripts, or Java sources for a Java ETIP.
            workload.add_script(language, script)?;
        }
    }
    if let Some(tp) = test_patch {
        let added: String = tp
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .map(|l| format!("{}\n", &l[1..]))
            .collect();
        workload.add_script(language, &added)?;
    }
    Ok(Context { workload })
}

/// An opened repository and the ETIP's resolved base commit.
struct Opened {
    repo: Repo,
    base: String,
}

fn open(t: &Target, cfg: &HackCheckConfig) -> Result<Opened, String> {
    let source = source_of(t, cfg.source.as_deref())?;
    let repo = Repo::open_or_clone(&source, &cfg.cache).map_err(|e| e.to_string())?;
    let base = repo.resolve(&t.base_commit).map_err(|e| e.to_string())?;
    Ok(Opened { repo, base })
}

/// The ETIP's own patch: as recorded, else the diff of its two commits.
fn gold_patch(t: &Target, o: &Opened) -> Result<String, String> {
    if let Some(g) = &t.gold {
        return Ok(g.clone());
    }
    if t.patched_commit.is_empty() {
        return Err("the ETIP has neither a patch nor a patched commit".into());
    }
    let patched = o
        .repo
        .resolve(&t.patched_commit)
        .map_err(|e| e.to_string())?;
    o.repo.diff(&o.base, &patched).map_err(|e| e.to_string())
}

fn screen_one(t: &Target, o: &Opened, ctx: &Context, patch: &str) -> Result<HackVerdict, String> {
    let mut original = |path: &str| {
        o.repo
            .file_at(&o.base, path)
            .map_err(|e| ScreenError::Original {
                path: path.to_string(),
                reason: e.to_string(),
            })
    };
    etip_screen::screen_patch(t.language, patch, &mut original, ctx)
        .map(HackVerdict::from_findings)
        .map_err(|e| e.to_string())
}

/// The predictions to screen, grouped by ETIP in file order.
fn predictions(
    cfg: &HackCheckConfig,
    targets: &BTreeMap<String, Target>,
) -> anyhow::Result<Vec<Prediction>> {
    Ok(match &cfg.predictions {
        Screen::Gold => targets
            .values()
            .map(|t| Prediction::gold(&t.id, String::new()))
            .collect(),
        Screen::File(p) => {
            let text = crate::input::read_text_capped(p, crate::input::MAX_INPUT_BYTES)?;
            predictions::parse(&text).map_err(|e| InputError(format!("{}: {e}", p.display())))?
        }
    })
}

/// Screens the predictions of `cfg`; `runtime` gives the process's runtime when a judge is
/// asked.
pub fn hack_check(
    cfg: &HackCheckConfig,
    runtime: RuntimeSource,
    progress: &dyn Progress,
) -> anyhow::Result<HackCheckOutcome> {
    let start = std::time::Instant::now();
    let mut judging = match &cfg.judge {
        Some(j) => Judging::start(j, runtime)?,
        None => None,
    };
    let (targets, preds) = selected(cfg)?;
    std::fs::create_dir_all(&cfg.cache)
        .map_err(|e| anyhow::anyhow!("cannot create the cache {}: {e}", cfg.cache.display()))?;
    progress.start(Some(preds.len() as u64));
    let mut screener = Screener {
        cfg,
        targets: &targets,
        opened: BTreeMap::new(),
        judging: judging.as_mut(),
    };
    let mut rows = Vec::with_capacity(preds.len());
    for p in &preds {
        progress.message(&p.instance_id);
        let r = screener.screen(p);
        progress.done(Done::Screened {
            instance: &r.instance_id,
            model: &r.model,
            verdict: r
                .hack
                .as_ref()
                .map(HackVerdict::name)
                .unwrap_or("not screened"),
        });
        rows.push(r);
    }
    progress.end();
    Ok(HackCheckOutcome {
        rows,
        secs: start.elapsed().as_secs_f64(),
        judge: judging.map(Judging::finish),
    })
}

/// The ETIPs and predictions `--id` selects (all when none is named); an `--id` naming no ETIP
/// is bad input.
fn selected(cfg: &HackCheckConfig) -> anyhow::Result<(BTreeMap<String, Target>, Vec<Prediction>)> {
    let mut targets = read_targets(&cfg.etips)?;
    for id in &cfg.ids {
        if !targets.contains_key(id) {
            return Err(
                InputError(format!("no ETIP with id {id} in {}", cfg.etips.display())).into(),
            );
        }
    }
    if !cfg.ids.is_empty() {
        targets.retain(|id, _| cfg.ids.contains(id));
    }
    let mut preds = predictions(cfg, &targets)?;
    if !cfg.ids.is_empty() {
        preds.retain(|p| cfg.ids.contains(&p.instance_id));
    }
    Ok((targets, preds))
}

/// Screens predictions one after another, opening each ETIP's sources once.
struct Screener<'a> {
    cfg: &'a HackCheckConfig,
    targets: &'a BTreeMap<String, Target>,
    /// Each ETIP's opened sources and screening context, or why they could not be had.
    opened: BTreeMap<String, Result<(Opened, Context), String>>,
    judging: Option<&'a mut Judging>,
}

impl Screener<'_> {
    /// The row of prediction `p`: its verdict (judged, when a judge is asked), or why it has none.
    fn screen(&mut self, p: &Prediction) -> Screened {
        let (hack, error) = match self.verdict(p) {
            Ok(v) => (Some(v), None),
            Err(e) => (None, Some(e)),
        };
        Screened {
            instance_id: p.instance_id.clone(),
            model: p.model.clone(),
            line: p.line,
            hack,
            error,
        }
    }

    fn verdict(&mut self, p: &Prediction) -> Result<HackVerdict, String> {
        let cfg = self.cfg;
        let Some(t) = self.targets.get(&p.instance_id) else {
            return Err(format!("no ETIP with this id in {}", cfg.etips.display()));
        };
        let entry = self.opened.entry(t.id.clone()).or_insert_with(|| {
            let o = open(t, cfg)?;
            let ctx = context(t).map_err(|e| e.to_string())?;
            Ok((o, ctx))
        });
        let (o, ctx) = match entry {
            Ok(pair) => (&pair.0, &pair.1),
            Err(e) => return Err(e.clone()),
        };
        let patch = match p.kind {
            predictions::Kind::Gold => gold_patch(t, o)?,
            _ => p
                .patch
                .clone()
                .filter(|x| !x.trim().is_empty())
                .ok_or_else(|| "no patch".to_string())?,
        };
        let v = screen_one(t, o, ctx, &patch)?;
        match &mut self.judging {
            Some(j) => j
                .apply(&t.id, &patch, v)
                .map_err(|e| format!("the judge: {e}")),
            None => Ok(v),
        }
    }
}
