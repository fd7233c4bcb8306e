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
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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
        let mut session = LocalSession {
            tree,
            env: request.env.clone(),
            scratch: None,
            copy: None,
        };
        if request.private {
            session.make_private(&request.hidden)?;
        }
        Ok(Box::new(session))
    }
}

struct LocalSession {
    tree: PathBuf,
    env: Vec<String>,
    /// The session's own folder for files put into it (removed with the session).
    scratch: Option<tempfile::TempDir>,
    /// A private session's copy of the local build (removed with the session).
    copy: Option<PrivateCopy>,
}

/// A private session's copy of a local build's folder: commands name the build's paths (`from`),
/// and run on the copy's (`to`), which are exactly as long.
struct PrivateCopy {
    from: String,
    to: String,
    _dir: tempfile::TempDir,
}

impl PrivateCopy {
    /// `s` with the build's folder replaced by the copy's, where it names a path.
    fn map(&self, s: &str) -> String {
        if s == self.from {
            return self.to.clone();
        }
        s.replace(&format!("{}/", self.from), &format!("{}/", self.to))
    }
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
    /// Gives the session a copy of its local build's folder (the folder holding `work/<tree>`:
    /// trees, environments, scratch files), except the `hidden` trees, in a sibling folder whose
    /// name is as long as the build's, so that every path the tests see has the same length as
    /// in the build (path lengths change what an interpreter allocates, and with it its times).
    fn make_private(&mut self, hidden: &[String]) -> Result<(), ExecError> {
        let root = self
            .tree
            .parent()
            .and_then(Path::parent)
            .filter(|r| {
                self.tree.parent().is_some_and(|w| w.ends_with("work")) && r.parent().is_some()
            })
            .ok_or_else(|| {
                ExecError::failed(
                    "local",
                    format!(
                        "{}: a private session needs a local build's tree (<root>/work/<version>)",
                        self.tree.display()
                    ),
                )
            })?
            .to_path_buf();
        let name_len = root.file_name().map_or(0, |n| n.len());
        let parent = root.parent().unwrap_or(Path::new("/"));
        let dir = tempfile::Builder::new()
            .prefix("")
            .rand_bytes(name_len.max(1))
            .tempdir_in(parent)
            .map_err(io("creating a private copy in", parent))?;
        let hidden: Vec<PathBuf> = hidden.iter().map(PathBuf::from).collect();
        copy_tree(&root, dir.path(), &hidden)?;
        let copy = PrivateCopy {
            from: root.display().to_string(),
            to: dir.path().display().to_string(),
            _dir: dir,
        };
        self.tree = PathBuf::from(copy.map(&self.tree.display().to_string()));
        self.env = self.env.iter().map(|e| copy.map(e)).collect();
        self.copy = Some(copy);
        Ok(())
    }

    /// `s` as the session sees it (the private copy's path for the build's).
    fn map(&self, s: &str) -> String {
        match &self.copy {
            Some(c) => c.map(s),
            None => s.to_string(),
        }
    }

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
        let command = &CommandRequest {
            argv: command.argv.iter().map(|a| self.map(a)).collect(),
            env: command.env.iter().map(|e| self.map(e)).collect(),
            cwd: self.map(&command.cwd),
            clean: command.clean.iter().map(|c| self.map(c)).collect(),
            timeout: command.timeout,
        };
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
            );
        for kv in self.env.iter().chain(&command.env) {
            if let Some((k, v)) = kv.split_once('=') {
                cmd.env(k, v);
            }
        }
        let done = etip_core::process::run_with_limit(&mut cmd, command.timeout)
            .map_err(io("running", Path::new(program.as_str())))?;
        Ok(CommandOutput {
            exit_code: done.code().map(i64::from),
            timed_out: done.timed_out,
            stdout: tail(out),
            stderr: tail(err),
            wall: done.wall,
        })
    }

    fn remove(&mut self, paths: &[String]) -> Result<(), ExecError> {
        for p in paths {
            let p = &self.map(p);
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
        let path = &self.map(path);
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
        self.copy = None;
        Ok(())
    }
}

/// Copies `from` into the existing folder `to` with `cp -a` (symbolic links, modes and times kept:
/// a venv's links to its interpreter stay links), leaving out the paths in `skip`.
fn copy_tree(from: &Path, to: &Path, skip: &[PathBuf]) -> Result<(), ExecError> {
    for entry in std::fs::read_dir(from).map_err(io("reading", from))? {
        let entry = entry.map_err(io("reading", from))?;
        let path = entry.path();
        if skip.iter().any(|s| s == &path) {
            continue;
        }
        // A folder that holds a skipped path is copied entry by entry.
        if skip.iter().any(|s| s.starts_with(&path)) {
            let sub = to.join(entry.file_name());
            std::fs::create_dir_all(&sub).map_err(io("creating", &sub))?;
            copy_tree(&path, &sub, skip)?;
            continue;
        }
        let out = Command::new("cp")
            .arg("-a")
            .arg(&path)
            .arg(to)
            .output()
            .map_err(io("copying", &path))?;
        if !out.status.success() {
            return Err(ExecError::failed(
                "local",
                format!(
                    "copying {} into {}: {}",
                    path.display(),
                    to.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

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
                private: false,
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

    /// A private session (an evaluated candidate) works in its own copy of the local build, at
    /// paths as long as the build's, without the hidden tree; the build is never written; the
    /// copy goes with the session.
    #[test]
    fn a_private_session_changes_its_own_copy_only() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("slug").join("base");
        let tree = root.join("work/original");
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::create_dir_all(root.join("work/patched")).unwrap();
        std::fs::create_dir_all(root.join("opt/etip/venvs/original/bin")).unwrap();
        std::fs::write(tree.join("code.py"), "old\n").unwrap();
        std::os::unix::fs::symlink("/bin/sh", root.join("opt/etip/venvs/original/bin/sh")).unwrap();
        let t = tree.display().to_string();
        let venv = root.join("opt/etip/venvs/original").display().to_string();
        let mut s = LocalExecutor
            .start(&SessionRequest {
                instance: "t".into(),
                label: "candidate".into(),
                image: None,
                tree: t.clone(),
                hidden: vec![root.join("work/patched").display().to_string()],
                env: vec![format!("VIRTUAL_ENV={venv}")],
                cpuset: None,
                resources: Default::default(),
                private: true,
            })
            .unwrap();
        let out = s
            .run(&CommandRequest {
                argv: vec![
                    "sh".into(),
                    "-c".into(),
                    "echo new > code.py; pwd; echo $VIRTUAL_ENV; cat \"$1\"; ls ../; test -L $VIRTUAL_ENV/bin/sh && echo link".into(),
                    "sh".into(),
                    format!("{t}/code.py"),
                ],
                env: vec![],
                clean: vec![],
                cwd: t.clone(),
                timeout: Duration::from_secs(10),
            })
            .unwrap();
        assert!(out.success(), "{out:?}");
        let lines: Vec<&str> = out.stdout.lines().collect();
        let copy_tree = lines[0];
        assert_ne!(copy_tree, t);
        assert_eq!(copy_tree.len(), t.len(), "{copy_tree} vs {t}");
        assert_eq!(
            Path::new(copy_tree)
                .parent()
                .unwrap()
                .parent()
                .unwrap()
                .parent(),
            root.parent()
        );
        assert!(lines[1].starts_with(&copy_tree[..copy_tree.len() - "work/original".len()]));
        assert_eq!(lines[2], "new", "the command's paths name the copy");
        assert_eq!(
            lines[3], "original",
            "the hidden tree is not copied: {lines:?}"
        );
        assert_eq!(lines[4], "link", "links stay links");
        assert_eq!(
            std::fs::read_to_string(tree.join("code.py")).unwrap(),
            "old\n"
        );
        s.stop().unwrap();
        assert!(!Path::new(copy_tree).exists(), "the copy is removed");
        let left: Vec<_> = std::fs::read_dir(root.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 1);
    }
}
