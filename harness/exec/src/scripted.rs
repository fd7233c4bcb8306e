//! A scripted executor: every command's outcome (exit code, wall time, report files, or an engine
//! failure) comes from a script, so the protocol's tests are deterministic and fast.
//!
//! ```
//! use etip_exec::scripted::{ScriptedExecutor, Scripted};
//! let ex = ScriptedExecutor::new(|call| {
//!     Scripted::ok(0.5).file("/r", "TEST-a.A.xml", format!(
//!         r#"<testsuite name="a.A" time="{}" tests="1"><testcase classname="a.A" name="t" time="0.1"/></testsuite>"#,
//!         if call.label == "patched" { 0.5 } else { 1.0 }))
//! });
//! # let _ = ex;
//! ```

use crate::executor::{
    CommandOutput, CommandRequest, ExecError, Executor, ExecutorInfo, Session, SessionRequest,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The call a script answers.
#[derive(Debug, Clone)]
pub struct Call {
    /// Session label (`original`, `patched`, `original-b`).
    pub label: String,
    /// 0 for the session's first command, then 1, 2, ...
    pub run: usize,
    pub argv: Vec<String>,
}

/// What a scripted command does.
#[derive(Debug, Clone, Default)]
pub struct Scripted {
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    pub wall: Duration,
    pub stdout: String,
    /// Files the command "writes": (report path, file name, content).
    pub files: Vec<(String, String, Vec<u8>)>,
    /// The executor fails instead of running the command.
    pub engine_error: Option<String>,
}

impl Scripted {
    /// Exit code 0 after `secs` seconds.
    pub fn ok(secs: f64) -> Scripted {
        Scripted {
            exit_code: Some(0),
            wall: Duration::from_secs_f64(secs),
            ..Scripted::default()
        }
    }

    /// Exit code `code` after `secs` seconds.
    pub fn exit(code: i64, secs: f64) -> Scripted {
        Scripted {
            exit_code: Some(code),
            wall: Duration::from_secs_f64(secs),
            ..Scripted::default()
        }
    }

    /// Killed at the time limit.
    pub fn hang() -> Scripted {
        Scripted {
            exit_code: None,
            timed_out: true,
            ..Scripted::default()
        }
    }

    pub fn engine_error(msg: &str) -> Scripted {
        Scripted {
            engine_error: Some(msg.into()),
            ..Scripted::default()
        }
    }

    /// Adds a report file `name` under the report path `path`.
    pub fn file(mut self, path: &str, name: &str, content: impl Into<Vec<u8>>) -> Scripted {
        self.files.push((path.into(), name.into(), content.into()));
        self
    }
}

type Script = dyn Fn(&Call) -> Scripted + Send + Sync;

/// The scripted executor; it also counts the sessions it started and stopped.
#[derive(Clone)]
pub struct ScriptedExecutor {
    script: Arc<Script>,
    /// Sessions started and stopped, for tests of the clean-up.
    pub counts: Arc<Mutex<(usize, usize)>>,
    /// Fail starting sessions with this message.
    pub fail_start: Option<String>,
}

impl ScriptedExecutor {
    pub fn new(script: impl Fn(&Call) -> Scripted + Send + Sync + 'static) -> ScriptedExecutor {
        ScriptedExecutor {
            script: Arc::new(script),
            counts: Arc::new(Mutex::new((0, 0))),
            fail_start: None,
        }
    }
}

impl Executor for ScriptedExecutor {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn info(&self) -> ExecutorInfo {
        ExecutorInfo {
            name: "scripted".into(),
            ..ExecutorInfo::default()
        }
    }

    fn start(&self, request: &SessionRequest) -> Result<Box<dyn Session>, ExecError> {
        if let Some(msg) = &self.fail_start {
            return Err(ExecError::failed("scripted", msg.clone()));
        }
        if let Ok(mut c) = self.counts.lock() {
            c.0 += 1;
        }
        Ok(Box::new(ScriptedSession {
            label: request.label.clone(),
            script: self.script.clone(),
            runs: 0,
            files: BTreeMap::new(),
            counts: self.counts.clone(),
            stopped: false,
        }))
    }
}

struct ScriptedSession {
    label: String,
    script: Arc<Script>,
    runs: usize,
    files: BTreeMap<String, Vec<(String, Vec<u8>)>>,
    counts: Arc<Mutex<(usize, usize)>>,
    stopped: bool,
}

impl Session for ScriptedSession {
    fn run(&mut self, command: &CommandRequest) -> Result<CommandOutput, ExecError> {
        for p in &command.clean {
            self.files.remove(p);
        }
        let call = Call {
            label: self.label.clone(),
            run: self.runs,
            argv: command.argv.clone(),
        };
        self.runs += 1;
        let s = (self.script)(&call);
        if let Some(e) = s.engine_error {
            return Err(ExecError::failed("scripted", e));
        }
        for (path, name, content) in s.files {
            self.files.entry(path).or_default().push((name, content));
        }
        Ok(CommandOutput {
            exit_code: s.exit_code,
            timed_out: s.timed_out,
            stdout: s.stdout,
            stderr: String::new(),
            wall: s.wall,
        })
    }

    fn remove(&mut self, paths: &[String]) -> Result<(), ExecError> {
        for p in paths {
            self.files.remove(p);
        }
        Ok(())
    }

    fn copy_out(&mut self, path: &str, dest: &Path) -> Result<bool, ExecError> {
        let Some(files) = self.files.get(path) else {
            return Ok(false);
        };
        let io = |source| ExecError::Io {
            executor: "scripted",
            action: "writing",
            path: dest.display().to_string(),
            source,
        };
        std::fs::create_dir_all(dest).map_err(io)?;
        for (name, content) in files {
            std::fs::write(dest.join(name), content).map_err(io)?;
        }
        Ok(true)
    }

    fn put_file(&mut self, name: &str, data: &[u8]) -> Result<String, ExecError> {
        let path = format!("/scratch/{name}");
        self.files
            .insert(path.clone(), vec![(name.to_string(), data.to_vec())]);
        Ok(path)
    }

    fn stop(&mut self) -> Result<(), ExecError> {
        if !self.stopped {
            self.stopped = true;
            if let Ok(mut c) = self.counts.lock() {
                c.1 += 1;
            }
        }
        Ok(())
    }
}
