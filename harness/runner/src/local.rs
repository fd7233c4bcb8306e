//! The local executor: test commands run as host processes on checked-out trees, for users without
//! a container engine. It is named `local` in every output, because it isolates nothing: no network
//! cut-off, no CPU set, no memory limit. Use it for trusted code only.
//!
//! Each command runs in its own process group; at its time limit the whole group is killed. Its
//! wall time is measured from spawn to exit. Output goes to temporary files and the last 64 KiB of
//! each stream is kept.

use crate::executor::{
    CommandOutput, CommandRequest, ExecError, Executor, ExecutorInfo, Session, SessionRequest,
};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

const KEEP: u64 = 64 << 10;

/// Runs sessions as host processes.
#[derive(Debug, Clone, Default)]
pub struct LocalExecutor;

impl Executor for LocalExecutor {
    fn name(&self) -> &'static str {
        "local"
    }

    fn info(&self) -> ExecutorInfo {
        ExecutorInfo {
            name: "local".into(),
            engine: Some("host processes (no isolation)".into()),
            kernel: crate::noise::kernel(Path::new("/proc")),
            cpu_model: crate::noise::cpu_model(Path::new("/proc")),
            can_pin: false,
        }
    }

    fn start(&self, request: &SessionRequest) -> Result<Box<dyn Session>, ExecError> {
        let tree = PathBuf::from(&request.tree);
        if !tree.is_dir() {
            return Err(ExecError::failed(
                "local",
                format!(
                    "the {} tree {} does not exist",
                    request.label,
                    tree.display()
                ),
            ));
        }
        Ok(Box::new(LocalSession {
            tree,
            env: request.env.clone(),
            scratch: None,
        }))
    }
}

struct LocalSession {
    tree: PathBuf,
    env: Vec<String>,
    /// The session's own folder for files put into it (removed with the session).
    scratch: Option<tempfile::TempDir>,
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> ExecError + 'a {
    move |source| ExecError::Io {
        executor: "local",
        action,
        path: path.display().to_string(),
        source,
    }
}

fn tail(mut f: std::fs::File) -> String {
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(KEEP)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

impl LocalSession {
    /// Paths a session may delete: inside its tree or a folder next to it that etip made.
    fn may_remove(&self, p: &Path) -> bool {
        let parent = self.tree.parent().unwrap_or(&self.tree);
        p.is_absolute()
            && !p.components().any(|c| c == std::path::Component::ParentDir)
            && p.starts_with(parent)
            && p != parent
    }
}

impl Session for LocalSession {
    fn run(&mut self, command: &CommandRequest) -> Result<CommandOutput, ExecError> {
        let Some((program, args)) = command.argv.split_first() else {
            return Err(ExecError::failed("local", "empty command"));
        };
        self.remove(&command.clean)?;
        let out = tempfile::tempfile().map_err(io("creating", Path::new("a temporary file")))?;
        let err = tempfile::tempfile().map_err(io("creating", Path::new("a temporary file")))?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(&command.cwd)
            .stdin(Stdio::null())
            .stdout(
                out.try_clone()
                    .map_err(io("duplicating", Path::new("stdout")))?,
            )
            .stderr(
                err.try_clone()
                    .map_err(io("duplicating", Path::new("stderr")))?,
            )
            .process_group(0);
        for kv in self.env.iter().chain(&command.env) {
            if let Some((k, v)) = kv.split_once('=') {
                cmd.env(k, v);
            }
        }
        let start = Instant::now();
        let mut child = cmd
            .spawn()
            .map_err(io("starting", Path::new(program.as_str())))?;
        let pid = child.id();
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let status = child.wait();
            let wall = start.elapsed();
            let _ = tx.send((status, wall));
        });
        let (status, wall, timed_out) = match rx.recv_timeout(command.timeout) {
            Ok((status, wall)) => (status, wall, false),
            Err(_) => {
                // Kill the whole process group, then collect the child.
                // `--`: procps' kill reads a bare `-<pgid>` as a signal name.
                let _ = Command::new("kill")
                    .args(["-s", "KILL", "--", &format!("-{pid}")])
                    .status();
                match rx.recv() {
                    Ok((status, wall)) => (status, wall, true),
                    Err(_) => return Err(ExecError::failed("local", "lost the command's status")),
                }
            }
        };
        let _ = waiter.join();
        let status = status.map_err(io("waiting for", Path::new(program.as_str())))?;
        Ok(CommandOutput {
            exit_code: if timed_out {
                None
            } else {
                status.code().map(i64::from)
            },
            timed_out,
            stdout: tail(out),
            stderr: tail(err),
            wall,
        })
    }

    fn remove(&mut self, paths: &[String]) -> Result<(), ExecError> {
        for p in paths {
            let path = Path::new(p);
            if !self.may_remove(path) {
                return Err(ExecError::failed(
                    "local",
                    format!(
                        "refusing to delete {p}: outside the session's folder {}",
                        self.tree.display()
                    ),
                ));
            }
            match std::fs::symlink_metadata(path) {
                Ok(m) if m.is_dir() => {
                    std::fs::remove_dir_all(path).map_err(io("deleting", path))?
                }
                Ok(_) => std::fs::remove_file(path).map_err(io("deleting", path))?,
                Err(_) => {}
            }
        }
        Ok(())
    }

    fn copy_out(&mut self, path: &str, dest: &Path) -> Result<bool, ExecError> {
        let from = Path::new(path);
        let meta = match std::fs::symlink_metadata(from) {
            Ok(m) => m,
            Err(_) => return Ok(false),
        };
        std::fs::create_dir_all(dest).map_err(io("creating", dest))?;
        if meta.is_file() {
            let name = from.file_name().unwrap_or_default();
            std::fs::copy(from, dest.join(name)).map_err(io("copying", from))?;
            return Ok(true);
        }
        for entry in std::fs::read_dir(from).map_err(io("reading", from))? {
            let entry = entry.map_err(io("reading", from))?;
            let ty = entry.file_type().map_err(io("reading", from))?;
            if ty.is_file() {
                std::fs::copy(entry.path(), dest.join(entry.file_name()))
                    .map_err(io("copying", from))?;
            }
        }
        Ok(true)
    }

    fn put_file(&mut self, name: &str, data: &[u8]) -> Result<String, ExecError> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(ExecError::failed(
                "local",
                format!("{name:?} is not a file name"),
            ));
        }
        if self.scratch.is_none() {
            let dir = tempfile::Builder::new()
                .prefix("etip-session-")
                .tempdir()
                .map_err(io("creating a scratch folder in", Path::new("/tmp")))?;
            self.scratch = Some(dir);
        }
        let dir = self
            .scratch
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default();
        let path = dir.join(name);
        std::fs::write(&path, data).map_err(io("writing", &path))?;
        Ok(path.display().to_string())
    }

    fn stop(&mut self) -> Result<(), ExecError> {
        self.scratch = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn session(dir: &Path) -> Box<dyn Session> {
        LocalExecutor
            .start(&SessionRequest {
                instance: "t".into(),
                label: "original".into(),
                image: None,
                tree: dir.display().to_string(),
                hidden: vec![],
                env: vec!["ETIP_T=7".into()],
                cpuset: None,
                resources: Default::default(),
            })
            .unwrap()
    }

    #[test]
    fn runs_times_and_kills() {
        let d = tempfile::tempdir().unwrap();
        let tree = d.path().join("original");
        std::fs::create_dir_all(&tree).unwrap();
        let mut s = session(&tree);
        let out = s
            .run(&CommandRequest {
                argv: vec!["sh".into(), "-c".into(), "echo $ETIP_T; pwd; exit 3".into()],
                env: vec![],
                clean: vec![],
                cwd: tree.display().to_string(),
                timeout: Duration::from_secs(10),
            })
            .unwrap();
        assert_eq!(out.exit_code, Some(3));
        assert!(out.stdout.starts_with("7\n"), "{}", out.stdout);
        let t = Instant::now();
        let out = s
            .run(&CommandRequest {
                argv: vec!["sh".into(), "-c".into(), "sleep 100 & sleep 100".into()],
                env: vec![],
                clean: vec![],
                cwd: tree.display().to_string(),
                timeout: Duration::from_millis(300),
            })
            .unwrap();
        assert!(out.timed_out && out.exit_code.is_none());
        assert!(t.elapsed() < Duration::from_secs(5));
        // Files: copy out, remove, and refusal outside the session's folder.
        std::fs::create_dir_all(tree.join("r")).unwrap();
        std::fs::write(tree.join("r/TEST-a.xml"), "x").unwrap();
        let dest = d.path().join("out");
        assert!(
            s.copy_out(&tree.join("r").display().to_string(), &dest)
                .unwrap()
        );
        assert_eq!(
            std::fs::read_to_string(dest.join("TEST-a.xml")).unwrap(),
            "x"
        );
        assert!(
            !s.copy_out(&tree.join("none").display().to_string(), &dest)
                .unwrap()
        );
        s.remove(&[tree.join("r").display().to_string()]).unwrap();
        assert!(!tree.join("r").exists());
        assert!(s.remove(&["/etc".into()]).is_err());
        assert!(s.remove(&[format!("{}/../x", tree.display())]).is_err());
    }
}
