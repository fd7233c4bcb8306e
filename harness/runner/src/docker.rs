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

/// `sh -c` script: `$1` paths follow, delete them, then exec the rest of the arguments.
const CLEAN_THEN_EXEC: &str =
    r#"n=$1; shift; while [ "$n" -gt 0 ]; do rm -rf -- "$1"; shift; n=$((n-1)); done; exec "$@""#;

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
        }))
    }
}

struct DockerSession {
    engine: Engine,
    handle: Handle,
    session: Option<etip_docker::Session>,
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
        let session = self.session()?;
        let argv = if command.clean.is_empty() {
            command.argv.clone()
        } else {
            // One exec: delete the stale reports, then become the test command.
            let mut a = vec![
                "sh".to_string(),
                "-c".to_string(),
                CLEAN_THEN_EXEC.to_string(),
                "sh".to_string(),
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
        // A failed exec may be the container's death, not the command's failure.
        if out.exit_code != Some(0) && !out.timed_out && !self.running()? {
            return Err(ExecError::failed(
                "docker",
                format!(
                    "the session container {} is no longer running ({})",
                    short(session.id()),
                    out.stderr.trim()
                ),
            ));
        }
        Ok(CommandOutput {
            exit_code: out.exit_code,
            timed_out: out.timed_out,
            stdout: out.stdout,
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

    fn stop(&mut self) -> Result<(), ExecError> {
        if let Some(s) = self.session.take() {
            self.handle
                .block_on(self.engine.stop_session(&s))
                .map_err(engine_err)?;
        }
        Ok(())
    }
}

impl Drop for DockerSession {
    fn drop(&mut self) {
        if let Some(s) = self.session.take() {
            // Last resort when a caller forgot to stop (the protocol always stops).
            let _ = self.handle.block_on(self.engine.stop_session(&s));
        }
    }
}
