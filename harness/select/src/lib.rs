//! `etip select` as a library: which tests execute an ETIP's changed code, by running them once
//! per version with per-test coverage in the ETIP's own sessions (offline, like a timed round).
//!
//! For one built instance (rules §3.7):
//! 1. a session per version ([`etip_exec::executor`]); in each, `etip_select.py hash` lists the
//!    source files (`.py`, `.java`) with their SHA-256, and the files that differ are the changed
//!    files, copied out and diffed ([`changes`]);
//! 2. the default tests (the instance spec's selection) run once per version with coverage
//!    ([`etip_build::instance::InstanceSpec::coverage_command`]): Python, pytest-cov with one
//!    context per test, read from its data file ([`coverage_py`]); Java, Surefire with etip's
//!    coverage extension, one JaCoCo session per test class, read through `EtipCovReport.java`
//!    ([`java`]);
//! 3. each changed line is named by the innermost function holding it ([`code::changed_code`]):
//!    Python's `ast` (`etip_select.py ranges`), JaCoCo's methods for Java;
//! 4. a test *covers* the change when, in either version, it executes a changed line or a line
//!    of a changed function's body ([`code::hit`]); tests that fail in a selection run are left
//!    out.
//!
//! 5. Python: the project's own suites, asv benchmarks and pytest-benchmark tests, are selected
//!    by the same rule ([`suites`]).
//!
//! The result ([`TestSelection`]) keeps, per covering test, the changed functions and lines it
//! hit in each version, plus the tests that cover nothing, the runs' times and the estimated
//! savings per round. Its `key` (image layers, test arguments, rules, helper script) lets a re-run
//! reuse it.

pub mod changes;
pub mod code;
pub mod coverage_py;
pub mod java;
pub mod jmh;
pub mod python;
pub mod suites;

use changes::Range;
use etip_build::config::BuildConfig;
use etip_build::instance::{InstanceSpec, PYTHON_COVERAGE_TOOL};
use etip_core::Language;
use etip_core::instance::InstanceStatus;
use etip_core::measure::Version;
use etip_core::selection::{
    CoveringTest, Hit, SELECTION_SCHEMA_VERSION, SelectionOutcome, TestSelection, VersionRun,
};
use etip_exec::executor::{CommandRequest, ExecError, Executor, Resources, Session};
use etip_exec::reports::{self, ReportFormat};
use etip_exec::session::{parent_of, session_request};
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

/// What `etip select` is asked to do. Serializable: a cluster node's runner gets it with the
/// unit.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
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
    let mut params = serde_json::json!({
        "id": status.id,
        "image": status.image,
        "layers": status.layers.iter().map(|l| l.image_id.clone()).collect::<Vec<_>>(),
        "test_args": [cfg.build.java.test_args.clone(), cfg.build.python.test_args.clone()],
        "maven_args": cfg.build.java.args,
        "rules": SELECT_RULES_VERSION,
        "script": hex::encode(Sha256::digest(SELECT_SCRIPT.as_bytes())),
        "suites": hex::encode(Sha256::digest(suites::SUITES_SCRIPT.as_bytes())),
    });
    if status.language == Language::Java {
        params["jmh"] = etip_build::jvm::JMH_COVERAGE.describe().into();
    }
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
        suites: Vec::new(),
        suites_not_covering: Vec::new(),
        node: None,
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
    if !status.runnable() {
        let why = status.not_runnable_reason();
        return failed(status, &key, format!("the build failed: {why}"), 0.0);
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
        Err(e) => failed(status, &key, e.to_string(), t0.elapsed().as_secs_f64()),
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

/// Why selecting an instance's tests failed (recorded as the selection's `detail`).
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("starting the {label} session: {source}")]
    Start {
        label: &'static str,
        #[source]
        source: ExecError,
    },
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error("{label}: etip_select.py printed no JSON ({source}): {stdout}")]
    NoJson {
        label: &'static str,
        #[source]
        source: serde_json::Error,
        /// The output, clipped to 500 characters.
        stdout: String,
    },
    #[error("etip_select.py {command}: unexpected output: {source}")]
    UnexpectedOutput {
        command: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("the two trees have the same {ext} files: no changed code to cover")]
    NoChange { ext: &'static str },
    #[error("a temporary folder: {source}")]
    TempDir {
        #[source]
        source: std::io::Error,
    },
    #[error("reading {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A command that must succeed failed (`what` names it).
    #[error("{label}: {what} (exit {exit_code:?}): {output}")]
    Command {
        label: &'static str,
        what: String,
        exit_code: Option<i64>,
        /// Its output, clipped to 2000 characters.
        output: String,
    },
    #[error("creating {}: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{label}: the coverage run exceeded {secs} s")]
    Timeout { label: &'static str, secs: u64 },
    #[error("{label}: the coverage run (exit {exit_code:?}) {problem}; see {}", log.display())]
    CoverageRun {
        label: &'static str,
        exit_code: Option<i64>,
        #[source]
        problem: Box<RunProblem>,
        /// The run's log.
        log: PathBuf,
    },
    #[error(transparent)]
    CoverageDb(#[from] coverage_py::CoverageDbError),
    #[error("{label}: the JaCoCo report wrote nothing")]
    NoJacocoReport { label: &'static str },
    #[error("{label}: reading the JaCoCo report: {source}")]
    JacocoReport {
        label: &'static str,
        #[source]
        source: std::io::Error,
    },
}

/// What a coverage run left wrong (see [`SelectError::CoverageRun`]).
#[derive(Debug, thiserror::Error)]
pub enum RunProblem {
    #[error("wrote no data")]
    NoData,
    #[error("left no readable report: {0}")]
    Report(#[source] reports::ReportError),
    #[error("wrote no coverage data (is pytest-cov installed in the image?)")]
    NoCoverageData,
    #[error("left no Surefire report")]
    NoSurefireReport,
    #[error(transparent)]
    Merge(reports::ReportError),
    #[error(transparent)]
    JavaReport(java::ReportLineError),
}

impl<'a> Selector<'a> {
    fn new(
        executor: &dyn Executor,
        status: &'a InstanceStatus,
        spec: &'a InstanceSpec,
        cfg: &'a SelectConfig,
        dir: &'a Path,
    ) -> Result<Selector<'a>, SelectError> {
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
                    return Err(SelectError::Start { label, source: e });
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
    fn script(&mut self, i: usize, args: &[String]) -> Result<serde_json::Value, SelectError> {
        let mut argv = vec!["python3".to_string(), "-c".into(), SELECT_SCRIPT.into()];
        argv.extend(args.iter().cloned());
        let what = format!(
            "etip_select.py {} failed",
            args.first().map(String::as_str).unwrap_or("")
        );
        let stdout = self.must(i, argv, &what)?;
        serde_json::from_str(stdout.trim()).map_err(|source| SelectError::NoJson {
            label: self.sides[i].label,
            source,
            stdout: etip_core::clip::clip(stdout.trim(), 500).into_owned(),
        })
    }

    fn run(&mut self) -> Result<TestSelection, SelectError> {
        let lang = self.status.language;
        // 1. The changed files.
        let ext = match lang {
            Language::Python => ".py",
            Language::Java => ".java",
        };
        for i in 0..self.sides.len() {
            let tree = self.sides[i].tree.clone();
            let v = self.script(i, &["hash".into(), tree, ext.into()])?;
            self.sides[i].hashes =
                serde_json::from_value(v).map_err(|source| SelectError::UnexpectedOutput {
                    command: "hash",
                    source,
                })?;
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
            return Err(SelectError::NoChange { ext });
        }
        // 2. Their text in each version, the coverage runs, the functions.
        let mut texts = Vec::new();
        let mut runs = Vec::new();
        for i in 0..self.sides.len() {
            let present: Vec<String> = changed
                .iter()
                .filter(|f| self.sides[i].hashes.contains_key(*f))
                .cloned()
                .collect();
            texts.push(self.copy_texts(i, &present)?);
            let mut run = self.coverage_run(i, &changed)?;
            if lang == Language::Python {
                run.ranges = self.python_ranges(i, &present)?;
            }
            runs.push(run);
        }
        let ranges: Vec<BTreeMap<String, Vec<Range>>> =
            runs.iter().map(|r| r.ranges.clone()).collect();
        let mut code = code::changed_code(lang, &changed, &texts, &ranges);
        if lang == Language::Java {
            for (c, r) in code.iter_mut().zip(&runs) {
                let mut executed = r.cov.outside.clone();
                for lines in r.cov.tests.values() {
                    for (f, l) in lines {
                        executed.entry(f.clone()).or_default().extend(l);
                    }
                }
                code::drop_unexecuted_class_level(c, &executed);
            }
        }
        for (r, c) in runs.iter_mut().zip(&code) {
            r.run.changed = c.files.clone();
        }
        // 3. The project's own suites, run in the same sessions.
        let mut suite_runs = Vec::new();
        let mut suite_notes = Vec::new();
        for i in 0..self.sides.len() {
            let run = match lang {
                Language::Python => self.suite_run(i, &changed),
                Language::Java => self.jmh_run(i, &changed).map(|jmh| suites::SuiteRun {
                    jmh,
                    ..Default::default()
                }),
            };
            match run {
                Ok(r) => suite_runs.push(r),
                Err(e) => {
                    suite_notes.push(format!(
                        "the project's benchmark suites were not selected: {e}"
                    ));
                    suite_runs.clear();
                    break;
                }
            }
        }
        let mut sel = self.decide(runs, &code, &suite_runs);
        sel.notes.extend(suite_notes);
        Ok(sel)
    }

    /// The functions of the Python files `files` in side `i` (`etip_select.py ranges`).
    fn python_ranges(
        &mut self,
        i: usize,
        files: &[String],
    ) -> Result<BTreeMap<String, Vec<Range>>, SelectError> {
        let mut args = vec!["ranges".to_string(), self.sides[i].tree.clone()];
        args.extend(files.iter().cloned());
        let v = self.script(i, &args)?;
        let raw: BTreeMap<String, Option<Vec<RawRange>>> =
            serde_json::from_value(v).map_err(|source| SelectError::UnexpectedOutput {
                command: "ranges",
                source,
            })?;
        Ok(raw
            .into_iter()
            .map(|(f, r)| {
                let list = r
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(name, first, last)| Range { name, first, last })
                    .collect();
                (f, list)
            })
            .collect())
    }

    /// The text of `files` in side `i` (copied out of the session).
    fn copy_texts(
        &mut self,
        i: usize,
        files: &[String],
    ) -> Result<BTreeMap<String, String>, SelectError> {
        let side = &mut self.sides[i];
        let tmp = tempfile::tempdir().map_err(|source| SelectError::TempDir { source })?;
        let mut out = BTreeMap::new();
        for (n, f) in files.iter().enumerate() {
            let dest = tmp.path().join(n.to_string());
            let path = format!("{}/{f}", side.tree.trim_end_matches('/'));
            if !side.session.copy_out(&path, &dest)? {
                continue;
            }
            let name = Path::new(f).file_name().unwrap_or_default();
            let bytes = std::fs::read(dest.join(name)).map_err(|source| SelectError::Read {
                file: f.clone(),
                source,
            })?;
            out.insert(f.clone(), String::from_utf8_lossy(&bytes).into_owned());
        }
        Ok(out)
    }

    /// Runs a command in side `i` that must succeed (`what` names it in the error); its output.
    fn must(&mut self, i: usize, argv: Vec<String>, what: &str) -> Result<String, SelectError> {
        let side = &mut self.sides[i];
        let out = side.session.run(&CommandRequest {
            argv,
            env: Vec::new(),
            cwd: side.tree.clone(),
            clean: Vec::new(),
            timeout: Duration::from_secs(600),
        })?;
        if out.success() {
            return Ok(out.stdout);
        }
        Err(SelectError::Command {
            label: side.label,
            what: what.to_string(),
            exit_code: out.exit_code,
            output: etip_core::clip::clip(format!("{}{}", out.stdout, out.stderr).trim(), 2000)
                .into_owned(),
        })
    }

    /// Runs the tests of side `i` with coverage and reads what they executed of `files`.
    fn coverage_run(&mut self, i: usize, files: &[String]) -> Result<CoverageRun, SelectError> {
        let spec = self.spec;
        let lang = self.status.language;
        let data_dir = self.sides[i].data_dir.clone();
        if lang == Language::Java {
            let ext = format!("{}/etip-cov-ext.jar", java::COVERAGE_DIR);
            self.must(
                i,
                vec!["test".into(), "-f".into(), ext],
                "the image has no Java coverage tools (the env layer builds them from Debian's \
                 libjacoco-java; rebuild the ETIP on a base image that has it)",
            )?;
        }
        let rm = format!(
            "rm -rf '{d}' && mkdir -p '{d}'",
            d = data_dir.replace('\'', "")
        );
        self.must(
            i,
            vec!["sh".into(), "-c".into(), rm],
            "preparing the data folder",
        )?;
        let side = &mut self.sides[i];
        let (cmd, env) = spec.coverage_command(side.version, &spec.default_selection(), &data_dir);
        let out = side.session.run(&CommandRequest {
            argv: cmd.argv.clone(),
            env,
            cwd: cmd.cwd.clone(),
            clean: cmd.clean.clone(),
            timeout: self.cfg.timeout,
        })?;
        let label = side.label;
        std::fs::create_dir_all(self.dir).map_err(|source| SelectError::CreateDir {
            path: self.dir.to_path_buf(),
            source,
        })?;
        let log_path = self.dir.join(format!("{label}.log"));
        let shown: Vec<String> = cmd
            .argv
            .iter()
            .map(|a| etip_build::spec::sh_quote(a))
            .collect();
        let log = format!(
            "# {label}\n{}\n\n# stdout\n{}\n# stderr\n{}\n",
            shown.join(" "),
            out.stdout,
            out.stderr
        );
        let _ = std::fs::write(&log_path, log);
        if out.timed_out {
            return Err(SelectError::Timeout {
                label,
                secs: self.cfg.timeout.as_secs(),
            });
        }
        let failed_run = |problem| SelectError::CoverageRun {
            label,
            exit_code: out.exit_code,
            problem: Box::new(problem),
            log: log_path.clone(),
        };
        let dest = self.dir.join(label);
        let _ = std::fs::remove_dir_all(&dest);
        let (report, cov, ranges) = match lang {
            Language::Python => {
                if !side.session.copy_out(&data_dir, &dest)? {
                    return Err(failed_run(RunProblem::NoData));
                }
                let report = reports::read_report(ReportFormat::Pytest, &dest.join("pytest.xml"))
                    .map_err(|e| failed_run(RunProblem::Report(e)))?;
                let db = dest.join("coverage.db");
                if !db.is_file() {
                    return Err(failed_run(RunProblem::NoCoverageData));
                }
                let cov = coverage_py::read(&db, &side.tree, files)?;
                (report, cov, BTreeMap::new())
            }
            Language::Java => {
                let mut parts = Vec::new();
                for (n, r) in cmd.reports.iter().enumerate() {
                    let to = dest.join("surefire").join(n.to_string());
                    if side.session.copy_out(&r.path, &to)? {
                        parts.push(
                            reports::read_surefire_dir(&to)
                                .map_err(|e| failed_run(RunProblem::Report(e)))?,
                        );
                    }
                }
                if parts.is_empty() {
                    return Err(failed_run(RunProblem::NoSurefireReport));
                }
                let report = reports::merge(parts).map_err(|e| failed_run(RunProblem::Merge(e)))?;
                let out = format!("{data_dir}/report.jsonl");
                let text = self.java_report(i, files, std::slice::from_ref(&data_dir), &out)?;
                let side = &mut self.sides[i];
                let _ = side.session.copy_out(&data_dir, &dest);
                let (cov, ranges) =
                    java::read_report(&text).map_err(|e| failed_run(RunProblem::JavaReport(e)))?;
                (report, cov, ranges)
            }
        };
        let tests: u32 = match lang {
            Language::Python => report.classes.iter().map(|c| c.tests).sum(),
            // A Java test is a class: what a covering run selects.
            Language::Java => report.classes.len() as u32,
        };
        let failed: u32 = match lang {
            Language::Python => report.classes.iter().map(|c| c.failures + c.errors).sum(),
            Language::Java => report.classes.iter().filter(|c| !c.passed()).count() as u32,
        };
        Ok(CoverageRun {
            run: VersionRun {
                version: label.to_string(),
                tests: tests as usize,
                failed: failed as usize,
                secs: out.wall.as_secs_f64(),
                changed: Vec::new(),
            },
            cov,
            report,
            ranges,
        })
    }

    /// The JaCoCo report (`EtipCovReport.java`, JSON lines, written to `out`) of the sessions in
    /// the exec files or folders `execs` of side `i`, for the changed files and the changed
    /// modules' classes.
    fn java_report(
        &mut self,
        i: usize,
        files: &[String],
        execs: &[String],
        out: &str,
    ) -> Result<String, SelectError> {
        let side = &self.sides[i];
        let q = etip_build::spec::sh_quote;
        let d = side.data_dir.replace('\'', "");
        let mut script = format!(
            "J=/usr/share/java; java -cp $J/org.jacoco.core.jar:$J/asm.jar:$J/asm-commons.jar:$J/asm-tree.jar \
             {cov}/EtipCovReport.java",
            cov = java::COVERAGE_DIR
        );
        for e in execs {
            script.push_str(&format!(" --exec {}", q(e)));
        }
        let modules = if self.spec.modules.is_empty() {
            vec![String::new()]
        } else {
            self.spec.modules.clone()
        };
        for m in modules {
            let m = m.trim_matches('/');
            let classes = if m.is_empty() || m == "." {
                "target/classes".to_string()
            } else {
                format!("{m}/target/classes")
            };
            script.push_str(&format!(" --classes {}", q(&classes)));
        }
        script.push_str(&format!(" --changed-list '{d}/changed.txt' > {}", q(out)));
        let list = format!(
            "printf '%s\\n' {} > '{d}/changed.txt'",
            files.iter().map(|f| q(f)).collect::<Vec<_>>().join(" ")
        );
        let both = format!("{list} && {script}");
        self.must(
            i,
            vec!["sh".into(), "-c".into(), both],
            "the JaCoCo report failed",
        )?;
        let side = &mut self.sides[i];
        let tmp = tempfile::tempdir().map_err(|source| SelectError::TempDir { source })?;
        if !side.session.copy_out(out, tmp.path())? {
            return Err(SelectError::NoJacocoReport { label: side.label });
        }
        let name = out.rsplit('/').next().unwrap_or(out);
        etip_core::bounded::read_to_string_capped(&tmp.path().join(name), 256 << 20).map_err(
            |source| SelectError::JacocoReport {
                label: side.label,
                source,
            },
        )
    }

    /// The covering tests (see the module documentation) and the record.
    fn decide(
        &self,
        runs: Vec<CoverageRun>,
        code: &[code::VersionCode],
        suite_runs: &[suites::SuiteRun],
    ) -> TestSelection {
        let lang = self.status.language;
        let mut tests: BTreeSet<&String> = BTreeSet::new();
        for r in &runs {
            tests.extend(r.cov.tests.keys());
        }
        let mut notes = Vec::new();
        for (r, c) in runs.iter().zip(code) {
            for m in &c.module_level {
                let at_import = r
                    .cov
                    .outside
                    .get(m)
                    .is_some_and(|lines| c.lines_of(m).iter().any(|l| lines.contains(l)));
                if at_import && lang == Language::Python {
                    notes.push(format!(
                        "{}: module-level changes of {m} run at import; tests executing any line of {m} count as covering",
                        r.run.version
                    ));
                }
            }
        }
        let failed: BTreeSet<(&str, &str)> = runs
            .iter()
            .flat_map(|r| r.report.failed.iter())
            .map(|f| (f.class.as_str(), f.name.as_str()))
            .collect();
        let failed_classes: BTreeSet<&str> = runs
            .iter()
            .flat_map(|r| r.report.classes.iter())
            .filter(|c| !c.passed() && c.tests > c.skipped)
            .map(|c| c.name.as_str())
            .collect();
        let mut covering = Vec::new();
        let mut failing = Vec::new();
        let mut not_covering = 0;
        let mut uncovered = Vec::new();
        for t in tests {
            let hits: Vec<Hit> = runs
                .iter()
                .zip(code)
                .map(|(r, c)| code::hit(c, r.cov.tests.get(t), &r.cov.outside))
                .collect();
            if !hits.iter().any(Hit::any) {
                not_covering += 1;
                uncovered.push(t.clone());
                continue;
            }
            let (class, fails) = match lang {
                Language::Python => {
                    let (class, name) = python::pytest_case(t);
                    let fails = failed.contains(&(class.as_str(), name.as_str()));
                    (class, fails)
                }
                Language::Java => (t.clone(), failed_classes.contains(t.as_str())),
            };
            if fails {
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
        let (suites, suites_not_covering) = if suite_runs.len() == runs.len() {
            let cov: Vec<(String, Hit, Hit)> = covering
                .iter()
                .map(|c| (c.test.clone(), c.original.clone(), c.patched.clone()))
                .collect();
            suites::decide(suite_runs, code, &cov, &uncovered, &mut notes)
        } else {
            (Vec::new(), Vec::new())
        };
        let reports: Vec<reports::Report> = runs.iter().map(|r| r.report.clone()).collect();
        let savings = code::savings(lang, &covering, &reports);
        let outcome = if covering.is_empty() {
            SelectionOutcome::NoCoveringTests
        } else {
            SelectionOutcome::Selected
        };
        let files = code
            .iter()
            .flat_map(|c| c.files.iter().map(|f| f.path.clone()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join(", ");
        let detail = (outcome == SelectionOutcome::NoCoveringTests).then(|| {
            if failing.is_empty() {
                format!("none of the {not_covering} tests that ran executes the changed code of {files}")
            } else {
                format!(
                    "the {} tests that execute the changed code of {files} fail in a selection run; the other {not_covering} do not execute it",
                    failing.len()
                )
            }
        });
        TestSelection {
            schema_version: SELECTION_SCHEMA_VERSION,
            id: self.status.id.clone(),
            language: lang,
            outcome,
            detail,
            image: self.status.image.clone(),
            key: String::new(),
            tool: tool(lang).into(),
            covering,
            not_covering,
            runs: runs.into_iter().map(|r| r.run).collect(),
            savings: Some(savings),
            secs: 0.0,
            notes,
            suites,
            suites_not_covering,
            node: None,
        }
    }
}

/// What one version's coverage run gave.
struct CoverageRun {
    run: VersionRun,
    cov: coverage_py::TestLines,
    report: reports::Report,
    /// Java: the methods of the changed files (from JaCoCo); Python: filled from `ast` after.
    ranges: BTreeMap<String, Vec<Range>>,
}

#[cfg(test)]
mod tests;
