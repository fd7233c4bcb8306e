//! `etip select` as a library: which tests execute an ETIP's changed code, by running them once
//! per version with per-test coverage in the ETIP's own sessions (offline, like a timed round).
//!
//! For one built instance:
//! 1. a session per version ([`crate::executor`]); in each, `etip_select.py hash` lists the
//!    source files with their SHA-256, and the files that differ are the changed files;
//! 2. the changed files are copied out and diffed ([`changes`]); `etip_select.py ranges` gives
//!    the functions of each changed file (Python's `ast`), so each changed line is named by the
//!    innermost function holding it ([`changes::changed_functions`]);
//! 3. the default tests (the instance spec's selection) run once per version with coverage
//!    ([`etip_build::instance::InstanceSpec::coverage_command`]: pytest-cov, one context per
//!    test); the data file is copied out and read ([`coverage_py`]);
//! 4. a test *covers* the change when, in either version, it executes a changed line or a line
//!    of a changed function's body; module-level changes run at import, outside any test, so a
//!    test covers those when it executes any line of that file.
//!
//! The result ([`TestSelection`]) keeps, per covering test, the changed functions and lines it
//! hit in each version, plus the tests that cover nothing, the runs' times and the estimated
//! savings per round. Its `key` (image layers, test arguments, tool version) lets a re-run reuse
//! it. Java (JaCoCo per test class) is not available yet: such ETIPs get outcome `failed` with
//! that reason.

pub mod changes;
pub mod coverage_py;

use crate::executor::{CommandRequest, ExecError, Executor, Resources, Session};
use crate::measure::{parent_of, session_request};
use crate::reports::{self, ReportFormat};
use changes::Range;
use etip_build::config::BuildConfig;
use etip_build::instance::{InstanceSpec, PYTHON_COVERAGE_TOOL};
use etip_core::Language;
use etip_core::instance::{BuildOutcome, InstanceStatus};
use etip_core::measure::Version;
use etip_core::selection::{
    ChangedFile, CoveringTest, Hit, SELECTION_SCHEMA_VERSION, Savings, SelectionOutcome,
    TestSelection, VersionRun,
};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The helper run inside sessions (`python3 -c SCRIPT COMMAND ...`).
pub const SELECT_SCRIPT: &str = include_str!("etip_select.py");

/// Changes when the selection rules change (part of the reuse key).
pub const SELECT_RULES_VERSION: &str = "1";

/// Where a container session writes the selection run's data.
pub const DATA_DIR: &str = "/tmp/etip-select";

/// What `etip select` is asked to do.
#[derive(Debug, Clone)]
pub struct SelectConfig {
    pub build: BuildConfig,
    pub resources: Resources,
    /// Time limit of each coverage run.
    pub timeout: Duration,
    /// Where the data files and logs go (`<work>/<slug>/<label>/`).
    pub work: PathBuf,
    /// Select again even when a stored selection has the same key.
    pub force: bool,
}

/// The reuse key of an instance's selection: what shapes the runs and the rules.
pub fn selection_key(status: &InstanceStatus, cfg: &SelectConfig) -> String {
    let params = serde_json::json!({
        "id": status.id,
        "image": status.image,
        "layers": status.layers.iter().map(|l| l.image_id.clone()).collect::<Vec<_>>(),
        "test_args": [cfg.build.java.test_args.clone(), cfg.build.python.test_args.clone()],
        "maven_args": cfg.build.java.args,
        "rules": SELECT_RULES_VERSION,
        "script": hex::encode(Sha256::digest(SELECT_SCRIPT.as_bytes())),
    });
    hex::encode(Sha256::digest(params.to_string().as_bytes()))
}

fn failed(status: &InstanceStatus, key: &str, detail: String, secs: f64) -> TestSelection {
    TestSelection {
        schema_version: SELECTION_SCHEMA_VERSION,
        id: status.id.clone(),
        language: status.language,
        outcome: SelectionOutcome::Failed,
        detail: Some(detail),
        image: status.image.clone(),
        key: key.to_string(),
        tool: tool(status.language).into(),
        covering: Vec::new(),
        not_covering: 0,
        runs: Vec::new(),
        savings: None,
        secs,
        notes: Vec::new(),
    }
}

fn tool(lang: Language) -> &'static str {
    match lang {
        Language::Python => PYTHON_COVERAGE_TOOL,
        Language::Java => "jacoco",
    }
}

/// Selects the covering tests of one instance (see the module documentation); `previous` is
/// the stored selection, reused when its key matches (unless `cfg.force`).
pub fn select_one(
    executor: &dyn Executor,
    status: &InstanceStatus,
    cfg: &SelectConfig,
    previous: Option<&TestSelection>,
) -> TestSelection {
    let t0 = Instant::now();
    let key = selection_key(status, cfg);
    if let Some(p) = previous
        && p.key == key
        && p.outcome != SelectionOutcome::Failed
        && !cfg.force
    {
        return p.clone();
    }
    if status.outcome == BuildOutcome::Failed || status.image.is_none() {
        let why = status.reason.as_deref().unwrap_or("no image");
        return failed(status, &key, format!("the build failed: {why}"), 0.0);
    }
    if status.language == Language::Java {
        return failed(
            status,
            &key,
            "selection of Java tests (JaCoCo, one session per test class) is not available yet; \
             measure Java ETIPs with --tests modules"
                .into(),
            0.0,
        );
    }
    let spec = InstanceSpec::from_status(status, &cfg.build);
    let dir = cfg.work.join(spec.log_slug());
    match Selector::new(executor, status, &spec, cfg, &dir).and_then(|mut s| {
        let r = s.run();
        s.stop();
        r
    }) {
        Ok(mut sel) => {
            sel.key = key;
            sel.secs = t0.elapsed().as_secs_f64();
            sel
        }
        Err(e) => failed(status, &key, e, t0.elapsed().as_secs_f64()),
    }
}

/// A function's `[name, first line, last line]` as `etip_select.py ranges` prints it.
type RawRange = (String, u32, u32);

/// One version's session and what was learnt in it.
struct Side {
    version: Version,
    label: &'static str,
    tree: String,
    data_dir: String,
    session: Box<dyn Session>,
    hashes: BTreeMap<String, String>,
}

struct Selector<'a> {
    status: &'a InstanceStatus,
    spec: &'a InstanceSpec,
    cfg: &'a SelectConfig,
    dir: &'a Path,
    sides: Vec<Side>,
}

fn exec_err(e: ExecError) -> String {
    e.to_string()
}

impl<'a> Selector<'a> {
    fn new(
        executor: &dyn Executor,
        status: &'a InstanceStatus,
        spec: &'a InstanceSpec,
        cfg: &'a SelectConfig,
        dir: &'a Path,
    ) -> Result<Selector<'a>, String> {
        let mut sel = Selector {
            status,
            spec,
            cfg,
            dir,
            sides: Vec::new(),
        };
        for (version, label) in [
            (Version::Original, "original"),
            (Version::Patched, "patched"),
        ] {
            let req = session_request(status, spec, version, label, None, cfg.resources);
            let tree = req.tree.clone();
            let data_dir = if executor.name() == "docker" {
                DATA_DIR.to_string()
            } else {
                format!("{}.etip-select/{label}", parent_of(&tree))
            };
            let session = match executor.start(&req) {
                Ok(s) => s,
                Err(e) => {
                    sel.stop();
                    return Err(format!("starting the {label} session: {e}"));
                }
            };
            sel.sides.push(Side {
                version,
                label,
                tree,
                data_dir,
                session,
                hashes: BTreeMap::new(),
            });
        }
        Ok(sel)
    }

    fn stop(&mut self) {
        for s in &mut self.sides {
            let _ = s.session.stop();
        }
    }

    /// Runs the helper script in side `i`; its JSON output.
    fn script(&mut self, i: usize, args: &[String]) -> Result<serde_json::Value, String> {
        let side = &mut self.sides[i];
        let mut argv = vec!["python3".to_string(), "-c".into(), SELECT_SCRIPT.into()];
        argv.extend(args.iter().cloned());
        let out = side
            .session
            .run(&CommandRequest {
                argv,
                env: Vec::new(),
                cwd: side.tree.clone(),
                clean: Vec::new(),
                timeout: Duration::from_secs(600),
            })
            .map_err(exec_err)?;
        if !out.success() {
            return Err(format!(
                "{}: etip_select.py {} failed (exit {:?}): {}",
                side.label,
                args.first().map(String::as_str).unwrap_or(""),
                out.exit_code,
                etip_core::clip::clip(out.stderr.trim(), 2000)
            ));
        }
        serde_json::from_str(out.stdout.trim()).map_err(|e| {
            format!(
                "{}: etip_select.py printed no JSON ({e}): {}",
                side.label,
                etip_core::clip::clip(out.stdout.trim(), 500)
            )
        })
    }

    fn run(&mut self) -> Result<TestSelection, String> {
        // 1. The changed files.
        for i in 0..self.sides.len() {
            let tree = self.sides[i].tree.clone();
            let v = self.script(i, &["hash".into(), tree, ".py".into()])?;
            self.sides[i].hashes = serde_json::from_value(v)
                .map_err(|e| format!("etip_select.py hash: unexpected output: {e}"))?;
        }
        let (a, b) = (&self.sides[0].hashes, &self.sides[1].hashes);
        let changed: Vec<String> = a
            .keys()
            .chain(b.keys())
            .filter(|f| a.get(*f) != b.get(*f))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if changed.is_empty() {
            return Err(
                "the two trees have the same Python files: no changed code to cover".into(),
            );
        }
        // 2. Their text and functions in each version.
        let mut texts: Vec<BTreeMap<String, String>> = Vec::new();
        let mut ranges: Vec<BTreeMap<String, Vec<Range>>> = Vec::new();
        for i in 0..self.sides.len() {
            let present: Vec<String> = changed
                .iter()
                .filter(|f| self.sides[i].hashes.contains_key(*f))
                .cloned()
                .collect();
            texts.push(self.copy_texts(i, &present)?);
            let mut args = vec!["ranges".to_string(), self.sides[i].tree.clone()];
            args.extend(present.iter().cloned());
            let v = self.script(i, &args)?;
            let raw: BTreeMap<String, Option<Vec<RawRange>>> = serde_json::from_value(v)
                .map_err(|e| format!("etip_select.py ranges: unexpected output: {e}"))?;
            ranges.push(
                raw.into_iter()
                    .map(|(f, r)| {
                        let list = r.unwrap_or_default();
                        let list = list
                            .into_iter()
                            .map(|(name, first, last)| Range { name, first, last })
                            .collect();
                        (f, list)
                    })
                    .collect(),
            );
        }
        let code = changed_code(&changed, &texts, &ranges);
        // 3. The coverage runs.
        let mut runs = Vec::new();
        let mut covs = Vec::new();
        let mut reports = Vec::new();
        for (i, c) in code.iter().enumerate() {
            let (run, cov, report) = self.coverage_run(i, &changed, c)?;
            runs.push(run);
            covs.push(cov);
            reports.push(report);
        }
        Ok(self.decide(runs, &code, &covs, &reports))
    }

    /// The text of `files` in side `i` (copied out of the session).
    fn copy_texts(
        &mut self,
        i: usize,
        files: &[String],
    ) -> Result<BTreeMap<String, String>, String> {
        let side = &mut self.sides[i];
        let tmp = tempfile::tempdir().map_err(|e| format!("a temporary folder: {e}"))?;
        let mut out = BTreeMap::new();
        for (n, f) in files.iter().enumerate() {
            let dest = tmp.path().join(n.to_string());
            let path = format!("{}/{f}", side.tree.trim_end_matches('/'));
            if !side.session.copy_out(&path, &dest).map_err(exec_err)? {
                continue;
            }
            let name = Path::new(f).file_name().unwrap_or_default();
            let bytes = std::fs::read(dest.join(name)).map_err(|e| format!("reading {f}: {e}"))?;
            out.insert(f.clone(), String::from_utf8_lossy(&bytes).into_owned());
        }
        Ok(out)
    }

    /// Runs the tests of side `i` with coverage and reads what they executed of `files`.
    fn coverage_run(
        &mut self,
        i: usize,
        files: &[String],
        code: &VersionCode,
    ) -> Result<(VersionRun, coverage_py::PyCoverage, reports::Report), String> {
        let spec = self.spec;
        let side = &mut self.sides[i];
        let selection = spec.default_selection();
        let (cmd, env) = spec.coverage_command(side.version, &selection, &side.data_dir);
        let prep = CommandRequest {
            argv: vec!["mkdir".into(), "-p".into(), side.data_dir.clone()],
            env: Vec::new(),
            cwd: side.tree.clone(),
            clean: vec![side.data_dir.clone()],
            timeout: Duration::from_secs(60),
        };
        side.session.run(&prep).map_err(exec_err)?;
        let out = side
            .session
            .run(&CommandRequest {
                argv: cmd.argv.clone(),
                env,
                cwd: cmd.cwd.clone(),
                clean: cmd.clean.clone(),
                timeout: self.cfg.timeout,
            })
            .map_err(exec_err)?;
        let dest = self.dir.join(side.label);
        let _ = std::fs::remove_dir_all(&dest);
        let log = format!(
            "# {}\n{}\n\n# stdout\n{}\n# stderr\n{}\n",
            side.label,
            cmd.argv
                .iter()
                .map(|a| etip_build::spec::sh_quote(a))
                .collect::<Vec<_>>()
                .join(" "),
            out.stdout,
            out.stderr
        );
        std::fs::create_dir_all(self.dir)
            .map_err(|e| format!("creating {}: {e}", self.dir.display()))?;
        let log_path = self.dir.join(format!("{}.log", side.label));
        let _ = std::fs::write(&log_path, log);
        if out.timed_out {
            return Err(format!(
                "{}: the coverage run exceeded {} s",
                side.label,
                self.cfg.timeout.as_secs()
            ));
        }
        if !side
            .session
            .copy_out(&side.data_dir, &dest)
            .map_err(exec_err)?
        {
            return Err(format!("{}: the coverage run wrote no data", side.label));
        }
        let report =
            reports::read_report(ReportFormat::Pytest, &dest.join("pytest.xml")).map_err(|e| {
                format!(
                    "{}: the coverage run (exit {:?}) left no readable report: {e}; see {}",
                    side.label,
                    out.exit_code,
                    log_path.display()
                )
            })?;
        let db = dest.join("coverage.db");
        if !db.is_file() {
            return Err(format!(
                "{}: the coverage run (exit {:?}) wrote no coverage data (is pytest-cov installed in the image?); see {}",
                side.label,
                out.exit_code,
                log_path.display()
            ));
        }
        let cov = coverage_py::read(&db, &side.tree, files)?;
        let tests: u32 = report.classes.iter().map(|c| c.tests).sum();
        let failed: u32 = report.classes.iter().map(|c| c.failures + c.errors).sum();
        let run = VersionRun {
            version: side.label.to_string(),
            tests: tests as usize,
            failed: failed as usize,
            secs: out.wall.as_secs_f64(),
            changed: code.files.clone(),
        };
        Ok((run, cov, report))
    }

    /// The covering tests (see the module documentation) and the record.
    fn decide(
        &self,
        runs: Vec<VersionRun>,
        code: &[VersionCode],
        covs: &[coverage_py::PyCoverage],
        reports: &[reports::Report],
    ) -> TestSelection {
        let mut tests: BTreeSet<&String> = BTreeSet::new();
        for c in covs {
            tests.extend(c.tests.keys());
        }
        let mut notes = Vec::new();
        for (i, c) in code.iter().enumerate() {
            for m in &c.module_level {
                let at_import = covs[i]
                    .outside
                    .get(m)
                    .is_some_and(|lines| c.lines_of(m).iter().any(|l| lines.contains(l)));
                if at_import {
                    notes.push(format!(
                        "{}: module-level changes of {m} run at import; tests executing any line of {m} count as covering",
                        runs[i].version
                    ));
                }
            }
        }
        let failed: BTreeSet<(&str, &str)> = reports
            .iter()
            .flat_map(|r| r.failed.iter().map(|f| (f.class.as_str(), f.name.as_str())))
            .collect();
        let mut covering = Vec::new();
        let mut failing = Vec::new();
        let mut not_covering = 0;
        for t in tests {
            let hits: Vec<Hit> = (0..covs.len())
                .map(|i| hit(&code[i], covs[i].tests.get(t), &covs[i].outside))
                .collect();
            if !hits.iter().any(Hit::any) {
                not_covering += 1;
                continue;
            }
            let (class, name) = pytest_case(t);
            if failed.contains(&(class.as_str(), name.as_str())) {
                failing.push(t.clone());
                continue;
            }
            covering.push(CoveringTest {
                test: t.clone(),
                class,
                original: hits[0].clone(),
                patched: hits[1].clone(),
            });
        }
        if !failing.is_empty() {
            notes.push(format!(
                "{} covering test(s) fail in a selection run and are left out (a failing test makes \
                 every timed round fail): {}",
                failing.len(),
                etip_core::clip::clip(&failing.join(" "), 600)
            ));
        }
        let savings = savings(&covering, reports);
        let outcome = if covering.is_empty() {
            SelectionOutcome::NoCoveringTests
        } else {
            SelectionOutcome::Selected
        };
        TestSelection {
            schema_version: SELECTION_SCHEMA_VERSION,
            id: self.status.id.clone(),
            language: self.status.language,
            outcome,
            detail: (outcome == SelectionOutcome::NoCoveringTests).then(|| {
                let files = code
                    .iter()
                    .flat_map(|c| c.files.iter().map(|f| f.path.clone()))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect::<Vec<_>>()
                    .join(", ");
                if failing.is_empty() {
                    format!("none of the {not_covering} tests that ran executes the changed code of {files}")
                } else {
                    format!(
                        "the {} tests that execute the changed code of {files} fail in a selection run; the other {not_covering} do not execute it",
                        failing.len()
                    )
                }
            }),
            image: self.status.image.clone(),
            key: String::new(),
            tool: PYTHON_COVERAGE_TOOL.into(),
            covering,
            not_covering,
            runs,
            savings: Some(savings),
            secs: 0.0,
            notes,
        }
    }
}

/// One version's changed code: per file, the changed lines, the changed functions (with their
/// ranges; `None` for module-level code) and the module name.
#[derive(Debug, Default, Clone)]
pub struct VersionCode {
    pub files: Vec<ChangedFile>,
    /// Per file: changed function name → its range (`None`: module-level).
    pub functions: BTreeMap<String, BTreeMap<String, Option<Range>>>,
    /// Files with module-level changes.
    pub module_level: Vec<String>,
}

impl VersionCode {
    fn lines_of(&self, file: &str) -> Vec<u32> {
        self.files
            .iter()
            .find(|f| f.path == file)
            .map(|f| f.lines.clone())
            .unwrap_or_default()
    }
}

/// The changed code of both versions from the files' texts and functions.
pub fn changed_code(
    changed: &[String],
    texts: &[BTreeMap<String, String>],
    ranges: &[BTreeMap<String, Vec<Range>>],
) -> Vec<VersionCode> {
    let mut out = vec![VersionCode::default(), VersionCode::default()];
    for f in changed {
        let c = changes::line_changes(
            texts[0].get(f).map(String::as_str),
            texts[1].get(f).map(String::as_str),
        );
        let module = changes::python_module(f);
        let sides = [
            (&c.original, &c.original_anchors),
            (&c.patched, &c.patched_anchors),
        ];
        for (i, (lines, anchors)) in sides.into_iter().enumerate() {
            if !texts[i].contains_key(f) {
                continue;
            }
            let empty = Vec::new();
            let r = ranges[i].get(f).unwrap_or(&empty);
            let funcs =
                changes::changed_functions(r, lines.iter().chain(anchors).copied(), &module);
            if funcs.values().any(Option::is_none) && !lines.is_empty() {
                out[i].module_level.push(f.clone());
            }
            out[i].files.push(ChangedFile {
                path: f.clone(),
                lines: lines.iter().copied().collect(),
                functions: funcs.keys().cloned().collect(),
            });
            out[i].functions.insert(f.clone(), funcs);
        }
    }
    out
}

/// What a test (its lines per file, `None` when it ran nothing of the files) hit of one version's
/// changed code; `outside` is what ran outside tests (imports).
pub fn hit(
    code: &VersionCode,
    test: Option<&coverage_py::FileLines>,
    outside: &coverage_py::FileLines,
) -> Hit {
    let mut h = Hit::default();
    let Some(lines) = test else {
        return h;
    };
    for f in &code.files {
        let Some(ran) = lines.get(&f.path) else {
            continue;
        };
        h.lines += f.lines.iter().filter(|l| ran.contains(l)).count();
        let funcs = code.functions.get(&f.path);
        for (name, range) in funcs.into_iter().flatten() {
            let executed = match range {
                Some(r) => ran.range(r.first..=r.last).next().is_some(),
                // Module level: the changed lines ran at import, and the test runs this file.
                None => {
                    f.lines.iter().any(|l| ran.contains(l))
                        || (!ran.is_empty()
                            && outside
                                .get(&f.path)
                                .is_some_and(|o| f.lines.iter().any(|l| o.contains(l))))
                }
            };
            if executed && !h.functions.contains(name) {
                h.functions.push(name.clone());
            }
        }
    }
    h.functions.sort();
    h
}

/// The parts of a pytest node id, split at `::` outside parameter brackets
/// (`t.py::test_a[http://[::1]]` → `t.py`, `test_a[http://[::1]]`).
pub fn node_parts(node: &str) -> Vec<&str> {
    let b = node.as_bytes();
    let (mut parts, mut depth, mut start, mut i) = (Vec::new(), 0usize, 0, 0);
    while i < b.len() {
        match b[i] {
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && b.get(i + 1) == Some(&b':') => {
                parts.push(&node[start..i]);
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&node[start..]);
    parts
}

/// pytest's junit `classname` and `name` of a node id (`tests/test_a.py::TestB::test_c[x]` →
/// `tests.test_a.TestB`, `test_c[x]`).
pub fn pytest_case(node: &str) -> (String, String) {
    let parts = node_parts(node);
    let file = parts[0];
    let module = file.strip_suffix(".py").unwrap_or(file).replace('/', ".");
    match parts.len() {
        1 => (module, String::new()),
        n => {
            let class = std::iter::once(module.as_str())
                .chain(parts[1..n - 1].iter().copied())
                .collect::<Vec<_>>()
                .join(".");
            (class, parts[n - 1].to_string())
        }
    }
}

/// pytest's junit `classname` of a node id (see [`pytest_case`]).
pub fn pytest_class(node: &str) -> String {
    pytest_case(node).0
}

/// Tests and time per round with and without selection, from the selection runs' reports (a
/// class's time shared evenly among its tests), averaged over the versions.
fn savings(covering: &[CoveringTest], reports: &[reports::Report]) -> Savings {
    let mut per_class: BTreeMap<&str, usize> = BTreeMap::new();
    for c in covering {
        *per_class.entry(c.class.as_str()).or_default() += 1;
    }
    let n = reports.len().max(1) as f64;
    let (mut all, mut sel, mut tests_all) = (0.0, 0.0, 0usize);
    for r in reports {
        for c in &r.classes {
            all += c.secs;
            tests_all += c.tests as usize;
            if let Some(k) = per_class.get(c.name.as_str())
                && c.tests > 0
            {
                sel += c.secs * (*k as f64 / c.tests as f64).min(1.0);
            }
        }
    }
    Savings {
        tests_all: (tests_all as f64 / n).round() as usize,
        tests_selected: covering.len(),
        secs_all: all / n,
        secs_selected: sel / n,
    }
}

#[cfg(test)]
mod tests;
