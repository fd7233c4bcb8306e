//! The test command of one side in one round (rules §3, step 3): stale reports deleted, the
//! command run under the round's time limit, the XML reports copied out and read into per-class
//! times (never console text). A command that exits non-zero fails the round even when its
//! reports say "passed"; a failing class, a missing or unreadable report, a timeout end the ETIP
//! as not executable, with the round, the version and the class.

use crate::protocol::{ClassTime, Plan, ProtocolConfig, Round, SideResult, Stop};
use etip_exec::executor::{CommandRequest, Session};
use etip_exec::reports;
use etip_records::measure::NotExecutable;
use etip_toolchain::testcmd::{ReportKind, TestCommand};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// pytest's exit code when it collected no test.
const PYTEST_NO_TESTS: i64 = 5;

/// Reading a round's copied test reports failed.
#[derive(Debug, thiserror::Error)]
enum ReadReportsError {
    #[error(transparent)]
    Report(#[from] reports::ReportError),
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("no report file in {}", dir.display())]
    NoFile { dir: PathBuf },
}

/// The test command of one side in one round, its reports read.
pub(crate) fn run_tests(
    plan: &Plan,
    cfg: &ProtocolConfig,
    session: &mut dyn Session,
    side: usize,
    command: &TestCommand,
    round: Round,
    dir: &Path,
) -> Result<SideResult, Stop> {
    let sp = &plan.sides[side];
    let label = &sp.session.label;
    let k = round.k;
    let when = round.name();
    let engine = |e: etip_exec::executor::ExecError| {
        Stop::new(NotExecutable::EngineError, format!("{when}, {label}: {e}"))
    };
    let t_run = Instant::now();
    let out = session
        .run(&CommandRequest {
            argv: command.argv.clone(),
            env: Vec::new(),
            cwd: command.cwd.clone(),
            clean: command.clean.clone(),
            timeout: cfg.round_timeout,
        })
        .map_err(engine)?;
    if out.timed_out {
        return Err(Stop::new(
            NotExecutable::Timeout,
            format!(
                "{when}, {label}: the test command exceeded the round time limit of {} s",
                cfg.round_timeout.as_secs()
            ),
        ));
    }
    let t_copy = Instant::now();
    // Reports are read even when the command failed: they name the failing class.
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    for (j, loc) in command.reports.iter().enumerate() {
        let dest = dir.join(format!("{j}"));
        match session.copy_out(&loc.path, &dest) {
            Ok(true) => parts.push((loc, dest)),
            Ok(false) => missing.push(loc.path.clone()),
            Err(e) => return Err(engine(e)),
        }
    }
    let keep = plan
        .log_dir
        .as_ref()
        .filter(|_| k < cfg.keep_reports)
        .map(|d| d.join("reports").join(format!("round-{k}-{label}")));
    let t_parse = Instant::now();
    let parsed = read_reports(&parts, command.reports.len() > 1);
    tracing::debug!(
        "{}: {when}, {label}: command {:.1} ms (own wall {:.1} ms), copy-out {:.1} ms, reading {:.1} ms",
        plan.id,
        (t_copy - t_run).as_secs_f64() * 1e3,
        out.wall.as_secs_f64() * 1e3,
        (t_parse - t_copy).as_secs_f64() * 1e3,
        t_parse.elapsed().as_secs_f64() * 1e3
    );
    if let Some(keep) = keep {
        for (j, (_, dest)) in parts.iter().enumerate() {
            let _ = copy_dir(dest, &keep.join(format!("{j}")));
        }
    }
    let tail = |s: &str| {
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    };
    let exit = out.exit_code.unwrap_or(-1);
    let report = match parsed {
        Ok(r) => r,
        Err(e) => {
            if out.success() {
                return Err(Stop::new(
                    NotExecutable::ReportMissing,
                    format!("{when}, {label}: {e}"),
                ));
            }
            return Err(Stop::new(
                NotExecutable::TestFailed,
                format!(
                    "{when}, {label}: the test command exited {exit} and its report could not be read ({e})\n{}",
                    tail(&format!("{}{}", out.stdout, out.stderr))
                ),
            ));
        }
    };
    // pytest's exit code 5: no test was collected.
    if report.0.is_empty()
        && out.exit_code == Some(PYTEST_NO_TESTS)
        && command
            .reports
            .iter()
            .all(|r| r.kind == ReportKind::JunitFile)
    {
        return Err(Stop::new(
            NotExecutable::NoTests,
            format!("{when}, {label}: pytest collected no test"),
        ));
    }
    let failed: Vec<&ClassTime> = report.0.iter().filter(|c| !c.passed).collect();
    if !failed.is_empty() {
        return Err(Stop {
            side: None,
            classes: report.0.clone(),
            reason: NotExecutable::TestFailed,
            detail: format!(
                "{when}, {label}, class {}: failed{}",
                failed
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                if out.success() {
                    String::new()
                } else {
                    format!(" (exit code {exit})")
                }
            ),
        });
    }
    if !out.success() {
        return Err(Stop::new(
            NotExecutable::TestFailed,
            format!(
                "{when}, {label}: the test command exited {exit} although its reports show no failing class\n{}",
                tail(&format!("{}{}", out.stdout, out.stderr))
            ),
        ));
    }
    if report.0.is_empty() {
        // Surefire writes no report folder when no test ran; pytest always writes its file, so
        // a missing pytest report after a successful run is a missing report.
        let junit_missing = command
            .reports
            .iter()
            .any(|r| r.kind == ReportKind::JunitFile && missing.contains(&r.path));
        return Err(Stop::new(
            if junit_missing {
                NotExecutable::ReportMissing
            } else {
                NotExecutable::NoTests
            },
            format!(
                "{when}, {label}: {} (no report in {})",
                if junit_missing {
                    "the test command succeeded but wrote no report"
                } else {
                    "no test ran"
                },
                command
                    .reports
                    .iter()
                    .map(|r| r.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(SideResult {
        version: sp.version,
        exit_code: out.exit_code,
        timed_out: false,
        command_secs: out.wall.as_secs_f64(),
        classes: report.0,
        resolution: report.1,
    })
}

/// Reads the copied reports: classes (sorted, module-prefixed when several modules ran) and the
/// coarsest resolution.
fn read_reports(
    parts: &[(&etip_toolchain::testcmd::ReportLocation, PathBuf)],
    prefix_modules: bool,
) -> Result<(Vec<ClassTime>, f64), ReadReportsError> {
    let mut all = Vec::new();
    for (loc, dest) in parts {
        let report = match loc.kind {
            ReportKind::SurefireDir => reports::read_surefire_dir(dest)?,
            ReportKind::JunitFile => {
                let file = single_file(dest)?;
                let bytes = std::fs::read(&file).map_err(|source| ReadReportsError::Read {
                    path: loc.path.clone(),
                    source,
                })?;
                reports::parse(reports::ReportFormat::Pytest, &bytes, &loc.path)?
            }
        };
        let report = if prefix_modules && !loc.module.is_empty() {
            report.prefixed(&format!("{}:", loc.module))
        } else {
            report
        };
        all.push(report);
    }
    if all.is_empty() {
        return Ok((Vec::new(), 0.001));
    }
    let merged = reports::merge(all)?;
    let classes = merged
        .classes
        .iter()
        .map(|c| ClassTime::test(c.name.clone(), c.secs, c.passed()))
        .collect();
    Ok((classes, merged.resolution))
}

/// The one file copied into `dest` (a copied file lands as `dest/<name>`).
fn single_file(dest: &Path) -> Result<PathBuf, ReadReportsError> {
    if dest.is_file() {
        return Ok(dest.to_path_buf());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dest)
        .map_err(|source| ReadReportsError::Read {
            path: dest.display().to_string(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .next()
        .ok_or_else(|| ReadReportsError::NoFile {
            dir: dest.to_path_buf(),
        })
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    if from.is_file() {
        if let Some(p) = to.parent() {
            std::fs::create_dir_all(p)?;
        }
        std::fs::copy(from, to)?;
        return Ok(());
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let ty = entry.file_type()?;
        if ty.is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()))?;
        } else if ty.is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}
