//! The Docker executor: each session is a long-lived container from the instance image (see
//! [`etip_docker::session`]): network none, CPU set or quota, memory (swap off) and pids limits,
//! the other version's tree masked by an empty read-only tmpfs, labelled so `etip clean` finds it.
//! Commands run through the exec API; their time limit is enforced inside the container.
//!
//! The executor blocks on the tokio runtime the binary owns (a [`tokio::runtime::Handle`]); it must
//! not be called from inside that runtime's worker threads.

use crate::executor::{
    CommandOutput, CommandRequest, ExecError, Executor, ExecutorInfo, Session, SessionRequest,
};
use etip_docker::{
    Engine, EngineInfo, ExecSpec, LABEL_NAMESPACE, Limits, SessionSpec, extract_tar,
};
use std::path::Path;
use tokio::runtime::Handle;

/// Label with the instance id on session containers.
pub const LABEL_INSTANCE: &str = "etip.instance";

/// `sh -c` script around a test command: `$1` is a marker, `$2` a count n, then n report paths,
/// then the command. It deletes the paths, runs the command, and then prints the reports after
/// the command's own output, each XML file framed by marker lines, so that no second round trip
/// (the engine's archive API costs about 50 ms a call) is needed to read them. The command's exit
/// code is the script's.
const CLEAN_RUN_COLLECT: &str = r#"M=$1; n=$2; shift 2; P=""
while [ "$n" -gt 0 ]; do rm -rf -- "$1"; P="$P$1
"; shift; n=$((n-1)); done
"$@"; rc=$?
printf '\n%s BEGIN\n' "$M"
printf '%s' "$P" | while IFS= read -r p; do
  if [ -d "$p" ]; then
    for f in "$p"/*.xml; do [ -f "$f" ] && { printf '%s FILE %s\n%s\n' "$M" "$p" "${f##*/}"; cat "$f"; printf '\n'; }; done
  elif [ -f "$p" ]; then printf '%s FILE %s\n%s\n' "$M" "$p" "${p##*/}"; cat "$p"; printf '\n'
  else printf '%s MISSING %s\n' "$M" "$p"; fi
done
printf '%s END\n' "$M"
exit $rc"#;

/// Report files collected with a command: path → (file name, content); a path that did not exist
/// maps to `None`.
type Collected = std::collections::HashMap<String, Option<Vec<(String, String)>>>;

/// Splits the reports [`CLEAN_RUN_COLLECT`] printed off the command's output. `None` when the
/// framing is incomplete (the output was cut or the command was killed): the caller then copies
/// the reports out through the engine.
fn split_collected(stdout: &str, marker: &str) -> Option<(String, Collected)> {
    let begin = format!("\n{marker} BEGIN\n");
    let at = stdout.rfind(&begin)?;
    let (own, rest) = stdout.split_at(at);
    let rest = &rest[begin.len()..];
    let end = format!("{marker} END\n");
    if !rest.ends_with(&end) {
        return None;
    }
    let body = &rest[..rest.len() - end.len()];
    let mut out: Collected = std::collections::HashMap::new();
    let file = format!("{marker} FILE ");
    let missing = format!("{marker} MISSING ");
    let mut lines = body.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let line_text = line.strip_suffix('\n').unwrap_or(line);
        if let Some(path) = line_text.strip_prefix(&missing) {
            out.insert(path.to_string(), None);
        } else if let Some(path) = line_text.strip_prefix(&file) {
            let name = lines.next()?.trim_end_matches('\n').to_string();
            let mut content = String::new();
            while let Some(next) = lines.peek() {
                if next.starts_with(marker) {
                    break;
                }
                content.push_str(next);
                lines.next();
            }
            // The script adds one newline after each file.
            content.pop();
            out.entry(path.to_string())
                .or_insert_with(|| Some(Vec::new()))
                .get_or_insert_with(Vec::new)
                .push((name, content));
        } else {
            return None;
        }
    }
    Some((own.to_string(), out))
}

/// Runs sessions as containers of the Docker engine.
pub struct DockerExecutor {
    engine: Engine,
    handle: Handle,
    namespace: String,
    info: Option<EngineInfo>,
}

impl DockerExecutor {
    /// An executor on a connected engine; `namespace` labels its containers.
    pub fn new(engine: Engine, handle: Handle, namespace: &str) -> DockerExecutor {
        let info = handle.block_on(engine.describe()).ok();
        DockerExecutor {
            engine,
            handle,
            namespace: namespace.to_string(),
            info,
        }
    }
}

fn engine_err(e: etip_docker::EngineError) -> ExecError {
    ExecError::failed("docker", e.to_string())
}

impl Executor for DockerExecutor {
    fn name(&self) -> &'static str {
        "docker"
    }

    fn info(&self) -> ExecutorInfo {
        ExecutorInfo {
            name: "docker".into(),
            engine: self.info.as_ref().map(|i| {
                format!(
                    "Docker {} ({}, {}, cgroup v{})",
                    i.server_version, i.storage_driver, i.os, i.cgroup_version
                )
            }),
            kernel: self.info.as_ref().map(|i| i.kernel.clone()),
            cpu_model: crate::noise::cpu_model(Path::new("/proc")),
            can_pin: true,
        }
    }

    fn start(&self, request: &SessionRequest) -> Result<Box<dyn Session>, ExecError> {
        let image = request
            .image
            .clone()
            .ok_or_else(|| ExecError::failed("docker", "the instance has no image"))?;
        let mut spec = SessionSpec::new(image)
            .label(LABEL_NAMESPACE, self.namespace.clone())
            .label(LABEL_INSTANCE, request.instance.clone())
            .label("etip.side", request.label.clone())
            .workdir(request.tree.clone())
            .limits(Limits {
                cpus: if request.cpuset.is_some() {
                    0.0
                } else {
                    request.resources.cpus
                },
                memory_bytes: (request.resources.memory_mb as i64) << 20,
                pids: request.resources.pids,
                ..Limits::default()
            });
        for kv in &request.env {
            spec = spec.env(kv.clone());
        }
        for h in &request.hidden {
            spec = spec.hide(h.clone());
        }
        if let Some(c) = &request.cpuset {
            spec = spec.cpuset(c.clone());
        }
        let session = self
            .handle
            .block_on(self.engine.start_session(&spec))
            .map_err(engine_err)?;
        Ok(Box::new(DockerSession {
            engine: self.engine.clone(),
            handle: self.handle.clone(),
            session: Some(session),
            collected: None,
            spec,
            snapshot: None,
        }))
    }
}

struct DockerSession {
    engine: Engine,
    handle: Handle,
    session: Option<etip_docker::Session>,
    /// Reports printed by the last command (see [`CLEAN_RUN_COLLECT`]).
    collected: Option<Collected>,
    /// What the session was started with (a renewed session starts from the snapshot).
    spec: SessionSpec,
    /// The image [`Session::checkpoint`] committed; removed with the session.
    snapshot: Option<String>,
}

impl DockerSession {
    fn session(&self) -> Result<&etip_docker::Session, ExecError> {
        self.session
            .as_ref()
            .ok_or_else(|| ExecError::failed("docker", "the session was stopped"))
    }
}

fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

impl DockerSession {
    /// Whether the container is still running; after an exit by signal (128 + n) it is asked
    /// again for up to a second, while the engine catches up with a container being killed.
    fn still_running(&self, exit_code: Option<i64>) -> Result<bool, ExecError> {
        let by_signal = exit_code.is_some_and(|c| c > 128);
        for _ in 0..(if by_signal { 10 } else { 1 }) {
            if !self.running()? {
                return Ok(false);
            }
            if by_signal {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
        Ok(true)
    }

    /// Whether the session's container is still running.
    fn running(&self) -> Result<bool, ExecError> {
        let session = self.session()?;
        match self.handle.block_on(self.engine.client().inspect_container(
            session.id(),
            None::<bollard::query_parameters::InspectContainerOptions>,
        )) {
            Ok(c) => Ok(c.state.and_then(|s| s.running).unwrap_or(false)),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(false),
            Err(e) => Err(ExecError::failed(
                "docker",
                format!("inspecting session {}: {e}", short(session.id())),
            )),
        }
    }
}

impl Session for DockerSession {
    fn run(&mut self, command: &CommandRequest) -> Result<CommandOutput, ExecError> {
        self.collected = None;
        let session = self.session()?;
        let marker = format!("ETIP-REPORTS-{:016x}", rand::random::<u64>());
        let argv = if command.clean.is_empty() {
            command.argv.clone()
        } else {
            // One exec: delete the stale reports, run the command, print the reports.
            let mut a = vec![
                "sh".to_string(),
                "-c".to_string(),
                CLEAN_RUN_COLLECT.to_string(),
                "sh".to_string(),
                marker.clone(),
                command.clean.len().to_string(),
            ];
            a.extend(command.clean.iter().cloned());
            a.extend(command.argv.iter().cloned());
            a
        };
        let mut spec = ExecSpec::new(argv)
            .workdir(command.cwd.clone())
            .timeout(command.timeout);
        for kv in &command.env {
            spec = spec.env(kv.clone());
        }
        let out = self
            .handle
            .block_on(self.engine.exec(session, &spec))
            .map_err(engine_err)?;
        if out.session_killed {
            return Err(ExecError::failed(
                "docker",
                "the command could not be stopped at its time limit; its container was killed",
            ));
        }
        // A failed exec may be the container's death, not the command's failure. A command
        // killed with its container can return before the engine shows the container stopped.
        if out.exit_code != Some(0) && !out.timed_out && !self.still_running(out.exit_code)? {
            return Err(ExecError::failed(
                "docker",
                format!(
                    "the session container {} is no longer running ({})",
                    short(session.id()),
                    out.stderr.trim()
                ),
            ));
        }
        let stdout = match split_collected(&out.stdout, &marker) {
            Some((own, collected)) if !command.clean.is_empty() => {
                self.collected = Some(collected);
                own
            }
            _ => out.stdout,
        };
        Ok(CommandOutput {
            exit_code: out.exit_code,
            timed_out: out.timed_out,
            stdout,
            stderr: out.stderr,
            wall: out.duration,
        })
    }

    fn remove(&mut self, paths: &[String]) -> Result<(), ExecError> {
        if paths.is_empty() {
            return Ok(());
        }
        let session = self.session()?;
        let mut argv = vec!["rm".to_string(), "-rf".to_string(), "--".to_string()];
        argv.extend(paths.iter().cloned());
        let out = self
            .handle
            .block_on(self.engine.exec(
                session,
                &ExecSpec::new(argv).timeout(std::time::Duration::from_secs(120)),
            ))
            .map_err(engine_err)?;
        if out.exit_code != Some(0) {
            return Err(ExecError::failed(
                "docker",
                format!("deleting {}: {}", paths.join(", "), out.stderr.trim()),
            ));
        }
        Ok(())
    }

    fn copy_out(&mut self, path: &str, dest: &Path) -> Result<bool, ExecError> {
        if let Some(found) = self.collected.as_ref().and_then(|c| c.get(path)) {
            let Some(files) = found else {
                return Ok(false);
            };
            let io = |source| ExecError::Io {
                executor: "docker",
                action: "writing",
                path: dest.display().to_string(),
                source,
            };
            std::fs::create_dir_all(dest).map_err(io)?;
            for (name, content) in files {
                // Names are the last component of a file the script listed; nothing else.
                if name.is_empty() || name.contains('/') || name == ".." || name == "." {
                    continue;
                }
                std::fs::write(dest.join(name), content).map_err(io)?;
            }
            return Ok(true);
        }
        let session = self.session()?;
        let Some(tar) = self
            .handle
            .block_on(self.engine.copy_out(session, path))
            .map_err(engine_err)?
        else {
            return Ok(false);
        };
        // The archive names entries from the path's last component: a folder's files land in
        // `dest` itself, a file as `dest/<name>` (like the other executors).
        let parent = dest.parent().unwrap_or(Path::new("."));
        let io = |action: &'static str| {
            move |source| ExecError::Io {
                executor: "docker",
                action,
                path: dest.display().to_string(),
                source,
            }
        };
        std::fs::create_dir_all(parent).map_err(io("creating"))?;
        let tmp = tempfile::Builder::new()
            .prefix(".etip-copy-")
            .tempdir_in(parent)
            .map_err(io("creating"))?;
        extract_tar(&tar, tmp.path()).map_err(io("extracting into"))?;
        let name = Path::new(path)
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        let got = tmp.path().join(&name);
        if got.is_dir() {
            if dest.exists() {
                std::fs::remove_dir_all(dest).map_err(io("replacing"))?;
            }
            std::fs::rename(&got, dest).map_err(io("moving into"))?;
        } else {
            std::fs::create_dir_all(dest).map_err(io("creating"))?;
            if got.is_file() {
                std::fs::rename(&got, dest.join(&name)).map_err(io("moving into"))?;
            }
        }
        Ok(true)
    }

    fn put_file(&mut self, name: &str, data: &[u8]) -> Result<String, ExecError> {
        let session = self.session()?;
        let path = format!("/tmp/etip-in/{name}");
        self.handle
            .block_on(self.engine.put_files(
                session,
                &[etip_docker::TmpFile {
                    path: path.clone(),
                    data: data.to_vec(),
                    mode: 0o644,
                }],
            ))
            .map_err(engine_err)?;
        Ok(path)
    }

    fn detach(&mut self) -> Option<String> {
        self.session.take().map(|s| s.id().to_string())
    }

    fn stop(&mut self) -> Result<(), ExecError> {
        if let Some(s) = self.session.take() {
            self.handle
                .block_on(self.engine.stop_session(&s))
                .map_err(engine_err)?;
        }
        if let Some(image) = self.snapshot.take() {
            self.handle
                .block_on(self.engine.remove_image(&image))
                .map_err(engine_err)?;
        }
        Ok(())
    }

    fn checkpoint(&mut self) -> Result<bool, ExecError> {
        let image = {
            let s = self.session()?;
            self.handle
                .block_on(self.engine.snapshot_session(s, &self.spec.labels))
                .map_err(engine_err)?
        };
        if let Some(old) = self.snapshot.replace(image) {
            self.handle
                .block_on(self.engine.remove_image(&old))
                .map_err(engine_err)?;
        }
        Ok(true)
    }

    fn renew(&mut self) -> Result<bool, ExecError> {
        if let Some(s) = self.session.take() {
            self.handle
                .block_on(self.engine.stop_session(&s))
                .map_err(engine_err)?;
        }
        let mut spec = self.spec.clone();
        if let Some(image) = &self.snapshot {
            spec.image = image.clone();
        }
        let fresh = self
            .handle
            .block_on(self.engine.start_session(&spec))
            .map_err(engine_err)?;
        self.session = Some(fresh);
        self.collected = None;
        Ok(true)
    }
}

impl Drop for DockerSession {
    fn drop(&mut self) {
        if let Some(s) = self.session.take() {
            // Last resort when a caller forgot to stop (the protocol always stops).
            let _ = self.handle.block_on(self.engine.stop_session(&s));
        }
        if let Some(image) = self.snapshot.take() {
            let _ = self.handle.block_on(self.engine.remove_image(&image));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collected_reports_are_split_off_the_output() {
        let m = "ETIP-REPORTS-1";
        let out = format!(
            "test output\nmore\n\n{m} BEGIN\n{m} FILE /w/target/surefire-reports\nTEST-a.A.xml\n<a>\n</a>\n{m} FILE /w/target/surefire-reports\nTEST-b.B.xml\n<b/>\n{m} MISSING /w/core/target/surefire-reports\n{m} END\n"
        );
        let (own, c) = split_collected(&out, m).unwrap();
        assert_eq!(own, "test output\nmore\n");
        let files = c["/w/target/surefire-reports"].as_ref().unwrap();
        assert_eq!(
            files,
            &vec![
                ("TEST-a.A.xml".to_string(), "<a>\n</a>".to_string()),
                ("TEST-b.B.xml".to_string(), "<b/>".to_string())
            ]
        );
        assert!(c["/w/core/target/surefire-reports"].is_none());
        // Cut or killed: no END line, so nothing is trusted.
        assert!(split_collected(&out[..out.len() - 10], m).is_none());
        assert!(split_collected("no marker at all", m).is_none());
    }
}
