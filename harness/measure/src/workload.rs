//! Workloads in the protocol: etip's runner and each workload's script are put into a side's
//! session before the first round; in every round each workload runs in a fresh process
//! (SWE-fficiency's run-to-run isolation) under its own time limit, and the runner's JSON report
//! gives its time (the sum of the timed `workload()` calls), the script's own statistic, or the
//! error.
//!
//! A workload that raises, exits non-zero, runs past its limit or writes no report is a failed
//! detector in that round, with the reason: never a silent drop, and never the end of the other
//! detectors' measurement (tests are the correctness gate; a workload is evidence of speed).

use crate::java_workload::{self, JAVA_RUNNER, JAVA_RUNNER_FILE};
use crate::jmh;
use crate::protocol::{ClassTime, RUNNER_FILE, SidePlan, WORKLOAD_RUNNER, WorkloadRun};
use etip_exec::executor::{CommandRequest, ExecError, Session};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Where a workload's files are in one session.
#[derive(Debug, Clone)]
pub struct Placed {
    pub runner: String,
    pub script: String,
    pub report: String,
    /// Its position among the side's workloads (names the Java workload's folder).
    pub index: usize,
    /// Why the workload cannot run in this session (a Java workload that does not compile).
    pub broken: Option<String>,
}

/// The workloads of a protocol run: where each side's files are, and the workloads that
/// failed (not run again: a detector that failed once is out of the verdicts anyway, and a
/// hanging one would cost its time limit in every round).
pub struct State {
    placed: Vec<Vec<Placed>>,
    /// Per (side, detector): why it is not run again on that side.
    failed: BTreeMap<(usize, String), String>,
}

impl State {
    /// Puts the runner and the scripts of every side's workloads into its session; the error
    /// names the side.
    pub fn put(
        sides: &[SidePlan],
        sessions: &mut [Box<dyn Session>],
    ) -> Result<State, (usize, ExecError)> {
        let mut placed = Vec::with_capacity(sessions.len());
        for (i, (side, session)) in sides.iter().zip(sessions.iter_mut()).enumerate() {
            placed.push(put_inputs(&mut **session, &side.workloads).map_err(|e| (i, e))?);
        }
        Ok(State {
            placed,
            failed: BTreeMap::new(),
        })
    }

    /// Runs the workloads of side `i` once each, in order, each in a fresh process (`when`
    /// names the round in errors). `Err` names the workload whose run the executor failed.
    pub fn run_side(
        &mut self,
        i: usize,
        side: &SidePlan,
        session: &mut dyn Session,
        timeout: Duration,
        dir: &Path,
        when: &str,
    ) -> Result<Vec<WorkloadResult>, (String, ExecError)> {
        let mut out = Vec::with_capacity(side.workloads.len());
        let placed = self.placed.get(i).map(Vec::as_slice).unwrap_or_default();
        for (j, (w, at)) in side.workloads.iter().zip(placed).enumerate() {
            let name = w.detector();
            if let Some(why) = self.failed.get(&(i, name.clone())) {
                out.push(WorkloadResult {
                    class: failed_class(w, why.clone()),
                    wall: 0.0,
                    resolution: 0.0,
                });
                continue;
            }
            let dest = dir.join(format!("workload-{j}"));
            let r = match &at.broken {
                Some(why) => WorkloadResult {
                    class: failed_class(w, why.clone()),
                    wall: 0.0,
                    resolution: 0.0,
                },
                None => run_once(session, w, at, timeout, &dest).map_err(|e| (name.clone(), e))?,
            };
            if let Some(e) = &r.class.error {
                self.failed.insert(
                    (i, name),
                    format!(
                        "{NOT_RUN_AGAIN}failed in {when} ({}): {}",
                        side.session.label,
                        headline(e)
                    ),
                );
            }
            out.push(r);
        }
        Ok(out)
    }
}

/// The line of a workload's error that says what happened: a Python traceback's last line (the
/// exception), else the first line.
pub fn headline(error: &str) -> &str {
    let mut lines = error
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty());
    match lines.next() {
        Some(first) if first.starts_with("Traceback") => lines.next_back().unwrap_or(first),
        Some(first) => first,
        None => "",
    }
}

/// How the error of a workload not run again after a failure starts.
pub const NOT_RUN_AGAIN: &str = "not run again: ";

fn failed_class(w: &WorkloadRun, error: String) -> ClassTime {
    ClassTime {
        name: w.detector(),
        secs: 0.0,
        passed: false,
        kind: w.kind,
        error: Some(error),
        own: None,
    }
}

/// Puts the runner and the scripts of a side's workloads into its session; Java workloads are
/// compiled there too (a failure marks the workload broken in this session, with the reason).
fn put_inputs(
    session: &mut dyn Session,
    workloads: &[WorkloadRun],
) -> Result<Vec<Placed>, ExecError> {
    if workloads.is_empty() {
        return Ok(Vec::new());
    }
    let java = workloads.iter().any(|w| w.java.is_some());
    let runner = if java {
        session.put_file(JAVA_RUNNER_FILE, JAVA_RUNNER.as_bytes())?
    } else {
        session.put_file(RUNNER_FILE, WORKLOAD_RUNNER.as_bytes())?
    };
    let folder = runner
        .rsplit_once('/')
        .map(|(d, _)| d.to_string())
        .unwrap_or_default();
    let mut placed = Vec::with_capacity(workloads.len());
    // Files by position: suite benchmarks' names hold characters a file name should not.
    for (j, w) in workloads.iter().enumerate() {
        let ext = if w.java.is_some() { "java" } else { "py" };
        let script = match w.jmh {
            Some(_) => String::new(),
            None => session.put_file(
                &format!("workload-{j}.{ext}"),
                w.workload.script.as_deref().unwrap_or_default().as_bytes(),
            )?,
        };
        let broken = match (&w.java, &w.jmh) {
            (Some(build), Some(_)) => {
                let script = jmh::prepare_script(build, j, &folder);
                prepare(session, w, script, "resolving the benchmark's class path")?
            }
            (Some(build), None) => {
                match java_workload::prepare_script(w, build, j, &folder, &script, &runner) {
                    Ok(script) => prepare(session, w, script, "compiling the workload")?,
                    Err(why) => Some(why),
                }
            }
            _ => None,
        };
        placed.push(Placed {
            runner: runner.clone(),
            script,
            report: format!("{folder}/workload-{j}.json"),
            index: j,
            broken,
        });
    }
    Ok(placed)
}

/// Runs a Java detector's preparation `script` (`what` it does) in its session; the reason
/// when it fails.
fn prepare(
    session: &mut dyn Session,
    w: &WorkloadRun,
    script: String,
    what: &str,
) -> Result<Option<String>, ExecError> {
    let out = session.run(&CommandRequest {
        argv: vec!["sh".into(), "-c".into(), script],
        env: Vec::new(),
        cwd: w.cwd.clone(),
        clean: Vec::new(),
        timeout: Duration::from_secs(900),
    })?;
    if out.success() {
        return Ok(None);
    }
    let text = format!("{}{}", out.stdout, out.stderr);
    let why = if out.timed_out {
        format!("{what} ran past 900 s")
    } else {
        etip_core::clip::clip(text.trim(), 3000).into_owned()
    };
    Ok(Some(why))
}

/// What one workload process did.
pub struct WorkloadResult {
    pub class: ClassTime,
    /// The process's wall time as the executor measured it.
    pub wall: f64,
    /// Resolution of the runner's clock.
    pub resolution: f64,
}

/// The runner's report.
#[derive(Debug, Deserialize)]
struct RunnerReport {
    #[serde(default)]
    resolution: Option<f64>,
    detectors: Vec<RunnerEntry>,
}

#[derive(Debug, Deserialize)]
struct RunnerEntry {
    passed: bool,
    #[serde(default)]
    secs: Option<f64>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    own: Option<RunnerOwn>,
}

#[derive(Debug, Deserialize)]
struct RunnerOwn {
    secs: f64,
}

/// The command that runs one workload in a fresh process.
pub fn command(w: &WorkloadRun, placed: &Placed, timeout: Duration) -> CommandRequest {
    let folder = placed
        .report
        .rsplit_once('/')
        .map(|(d, _)| d.to_string())
        .unwrap_or_default();
    let argv = match (&w.java, &w.jmh) {
        (_, Some(bench)) => jmh::run_argv(bench, placed.index, &folder, &placed.report),
        (Some(_), None) => java_workload::run_argv(w, placed.index, &folder, &placed.report),
        (None, None) => vec![
            w.python.clone(),
            placed.runner.clone(),
            "--name".into(),
            w.detector(),
            "--repeat".into(),
            w.workload.repeat().to_string(),
            "--out".into(),
            placed.report.clone(),
            placed.script.clone(),
        ],
    };
    CommandRequest {
        argv,
        env: Vec::new(),
        cwd: w.cwd.clone(),
        clean: vec![placed.report.clone()],
        timeout,
    }
}

/// Runs one workload once (see the module docs); `Err` only for the executor's own failures.
fn run_once(
    session: &mut dyn Session,
    w: &WorkloadRun,
    placed: &Placed,
    timeout: Duration,
    dest: &Path,
) -> Result<WorkloadResult, ExecError> {
    let out = session.run(&command(w, placed, timeout))?;
    let wall = out.wall.as_secs_f64();
    let failed = |error: String| WorkloadResult {
        class: failed_class(w, error),
        wall,
        resolution: 0.0,
    };
    let tail = || {
        let text = format!("{}{}", out.stdout, out.stderr);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(6)..].join("\n")
    };
    if out.timed_out {
        return Ok(failed(format!(
            "ran past the workload time limit of {} s",
            timeout.as_secs()
        )));
    }
    let report = match (session.copy_out(&placed.report, dest)?, &w.jmh) {
        (true, Some(bench)) => read_jmh(dest, bench),
        (true, None) => read_report(dest),
        // JMH's reason is in its output: put it first, where the record's headline reads it.
        (false, Some(_)) => Err(format!(
            "JMH wrote no result: {}",
            jmh::failure_reason(&format!("{}\n{}", out.stdout, out.stderr))
        )),
        (false, None) => Err("the runner wrote no report".to_string()),
    };
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            return Ok(failed(format!(
                "{e} (exit code {}){}",
                exit_text(out.exit_code),
                with_tail(&tail())
            )));
        }
    };
    let Some(entry) = report.detectors.into_iter().next() else {
        return Ok(failed("the runner's report names no workload".into()));
    };
    if !entry.passed {
        return Ok(failed(
            entry
                .error
                .unwrap_or_else(|| format!("failed{}", with_tail(&tail()))),
        ));
    }
    if !out.success() {
        return Ok(failed(format!(
            "the workload process exited {} although its report says it passed{}",
            exit_text(out.exit_code),
            with_tail(&tail())
        )));
    }
    let secs = match entry.secs {
        Some(s) if s.is_finite() && s >= 0.0 => s,
        other => return Ok(failed(format!("the report's time {other:?} is not a time"))),
    };
    Ok(WorkloadResult {
        class: ClassTime {
            name: w.detector(),
            secs,
            passed: true,
            kind: w.kind,
            error: None,
            own: entry.own.map(|o| o.secs).filter(|s| s.is_finite()),
        },
        wall,
        resolution: report.resolution.filter(|r| r.is_finite()).unwrap_or(1e-6),
    })
}

fn exit_text(code: Option<i64>) -> String {
    code.map_or_else(|| "none: killed".into(), |c| c.to_string())
}

fn with_tail(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("\n{tail}")
    }
}

/// Reads JMH's result copied to `dest` as a runner's report (see [`crate::jmh`]).
fn read_jmh(dest: &Path, bench: &jmh::JmhBench) -> Result<RunnerReport, String> {
    let file = copied_file(dest)?;
    let bytes = etip_core::bounded::read_to_string_capped(&file, 64 * 1024 * 1024)
        .map_err(|e| format!("reading JMH's result: {e}"))?;
    let figure = jmh::read_result(bytes.as_bytes(), "JMH's result", bench)?;
    Ok(RunnerReport {
        // JMH's iterations are long; its timer's resolution is the JVM's nanosecond clock.
        resolution: Some(1e-9),
        detectors: vec![RunnerEntry {
            passed: true,
            secs: Some(figure.secs),
            error: None,
            own: Some(RunnerOwn { secs: figure.own }),
        }],
    })
}

/// The file copied to `dest` (the file, or the one file in the folder).
fn copied_file(dest: &Path) -> Result<std::path::PathBuf, String> {
    Ok(if dest.is_file() {
        dest.to_path_buf()
    } else {
        std::fs::read_dir(dest)
            .map_err(|e| format!("reading the copied report: {e}"))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.is_file())
            .ok_or_else(|| "the runner wrote no report".to_string())?
    })
}

/// Reads the runner's report copied to `dest` (the file, or the one file in the folder).
fn read_report(dest: &Path) -> Result<RunnerReport, String> {
    let file = copied_file(dest)?;
    let text = etip_core::bounded::read_to_string_capped(&file, 16 * 1024 * 1024)
        .map_err(|e| format!("reading the runner's report: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("the runner's report is not readable: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_runs_the_runner_on_the_script_in_the_tree() {
        let w = WorkloadRun::own(
            etip_core::detector::Workload {
                name: "dedup".into(),
                script: Some("def workload(): pass".into()),
                file: None,
                repeat: Some(3),
            },
            "python",
            "/work/original",
        );
        let placed = Placed {
            runner: "/tmp/etip-in/etip_workload.py".into(),
            script: "/tmp/etip-in/workload-dedup.py".into(),
            report: "/tmp/etip-in/workload-dedup.json".into(),
            index: 0,
            broken: None,
        };
        let c = command(&w, &placed, Duration::from_secs(5));
        assert_eq!(
            c.argv.join(" "),
            "python /tmp/etip-in/etip_workload.py --name workload:dedup --repeat 3 --out \
             /tmp/etip-in/workload-dedup.json /tmp/etip-in/workload-dedup.py"
        );
        assert_eq!(c.cwd, "/work/original");
        assert_eq!(
            c.clean,
            vec!["/tmp/etip-in/workload-dedup.json".to_string()]
        );
    }

    #[test]
    fn the_headline_of_a_traceback_is_its_exception() {
        let tb = "Traceback (most recent call last):\n  File \"w.py\", line 2, in workload\n    1 / 0\nZeroDivisionError: division by zero\n";
        assert_eq!(headline(tb), "ZeroDivisionError: division by zero");
        assert_eq!(headline("ran past the limit\nmore"), "ran past the limit");
        assert_eq!(headline(""), "");
    }

    #[test]
    fn a_report_is_read_from_a_file_or_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("r.json");
        std::fs::write(
            &f,
            r#"{"runner":"etip_workload","resolution":1e-9,"detectors":[{"name":"x","kind":"workload","passed":true,"secs":0.5,"own":{"statistic":"m","secs":0.1}}]}"#,
        )
        .unwrap();
        let r = read_report(&f).unwrap();
        assert_eq!(r.detectors[0].secs, Some(0.5));
        let r = read_report(dir.path()).unwrap();
        assert_eq!(r.detectors[0].own.as_ref().unwrap().secs, 0.1);
        std::fs::write(&f, "{").unwrap();
        assert!(read_report(&f).unwrap_err().contains("not readable"));
    }
}
