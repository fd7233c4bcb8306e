//! Session lifecycle: creating and starting the container ([`Engine::start_session`]), the
//! start-up probe for its main process and `timeout`, and removing it ([`Engine::stop_session`]).

use super::{KIND_SESSION, Session, SessionSpec};
use crate::{
    Engine, EngineError, KIND_SNAPSHOT, LABEL_KIND, SessionError, SetupError, limited_host_config,
};
use bollard::models::{ContainerCreateBody, Mount, MountTmpfsOptions, MountType};
use bollard::query_parameters::StartContainerOptions;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Time limit of the start-up probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Finds the main process (the only child of PID 1 at start-up) and a working `timeout`.
const PROBE: &str = r#"for d in /proc/[0-9]*; do
  read -r s 2>/dev/null <"$d/stat" || continue
  s=${s##*) }
  set -- $s
  [ "$2" = 1 ] && echo "main=${d#/proc/}"
done
t=$(command -v timeout) && "$t" -k 1s -s TERM 10s true 2>/dev/null && echo "timeout=$t"
"#;

/// Checks that `p` is an absolute path other than `/` without `.`/`..` components.
fn check_hidden(p: &str) -> Result<(), SetupError> {
    let ok = p.starts_with('/')
        && p.trim_end_matches('/').len() > 1
        && !p.split('/').any(|c| c == "." || c == "..")
        && !p.contains(',')
        && !p.contains(':');
    if ok {
        Ok(())
    } else {
        Err(SetupError::HiddenPath { path: p.into() })
    }
}

impl Engine {
    /// Creates and starts a session container (see the module documentation) and probes it (one
    /// exec of `sh`) for its main process and a working `timeout`. On failure the container is
    /// removed. An image without `sh` still works, with the container kill as the only way to
    /// end a command that exceeds its limit.
    pub async fn start_session(&self, spec: &SessionSpec) -> Result<Session, EngineError> {
        let invalid = |source: SetupError| EngineError::Session {
            id: spec.image.clone(),
            source: source.into(),
        };
        for p in &spec.hidden {
            check_hidden(p).map_err(invalid)?;
        }
        let mut labels = spec.labels.clone();
        crate::own_labels(&mut labels, "a session container")?;
        labels.insert(LABEL_KIND.into(), KIND_SESSION.into());
        let mut host_config = limited_host_config(&spec.limits, false);
        if spec.limits.cpus <= 0.0 {
            host_config.nano_cpus = None;
        }
        host_config.cpuset_cpus = spec.cpuset.clone();
        host_config.init = Some(true);
        host_config.mounts = Some(
            spec.hidden
                .iter()
                .map(|p| Mount {
                    target: Some(p.clone()),
                    typ: Some(MountType::TMPFS),
                    read_only: Some(true),
                    tmpfs_options: Some(MountTmpfsOptions {
                        size_bytes: Some(4096),
                        mode: Some(0o555),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .collect(),
        );
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            entrypoint: Some(Vec::new()),
            cmd: Some(vec!["sleep".into(), "infinity".into()]),
            env: Some(spec.env.clone()),
            working_dir: spec.workdir.clone(),
            labels: Some(labels),
            host_config: Some(host_config),
            ..Default::default()
        };
        let id = self
            .create_from_body(None, body, "creating a session container", &spec.image)
            .await?;
        match self.prepare_session(&id, &spec.image).await {
            Ok(session) => Ok(session),
            Err(e) => {
                let _ = self.remove_container(&id).await;
                Err(e)
            }
        }
    }

    async fn prepare_session(&self, id: &str, image: &str) -> Result<Session, EngineError> {
        self.docker
            .start_container(id, None::<StartContainerOptions>)
            .await
            .map_err(|e| EngineError::api("starting session container", id, e))?;
        let mut session = Session {
            id: id.to_string(),
            image: image.to_string(),
            main_pid: None,
            timeout_bin: None,
            dead: Arc::new(AtomicBool::new(false)),
        };
        let argv = ["sh", "-c", PROBE].map(String::from);
        let probe = self
            .exec_raw(&session, &argv, &[], None, PROBE_TIMEOUT, false)
            .await?;
        if probe.expired || probe.exit_code.is_none() {
            return Err(EngineError::Session {
                id: id.to_string(),
                source: SessionError::Probe,
            });
        }
        let (out, _) = probe.stdout.finish();
        let mains: Vec<u32> = out
            .lines()
            .filter_map(|l| l.strip_prefix("main="))
            .filter_map(|p| p.trim().parse().ok())
            .collect();
        if let [main] = mains[..] {
            session.main_pid = Some(main);
        }
        session.timeout_bin = out
            .lines()
            .find_map(|l| l.strip_prefix("timeout="))
            .map(|t| t.trim().to_string());
        tracing::debug!(
            session = %id,
            main_pid = ?session.main_pid,
            timeout = ?session.timeout_bin,
            "session started"
        );
        Ok(session)
    }

    /// Commits the session's container to a new image (labelled `etip.kind=snapshot`, with the
    /// session's labels and this process as owner) and returns its id: a later session started
    /// from it begins where this one is now. Remove it with [`Engine::remove_image`].
    pub async fn snapshot_session(
        &self,
        session: &Session,
        labels: &HashMap<String, String>,
    ) -> Result<String, EngineError> {
        let mut labels = labels.clone();
        crate::own_labels(&mut labels, "a snapshot image")?;
        labels.insert(LABEL_KIND.into(), KIND_SNAPSHOT.into());
        let options = bollard::query_parameters::CommitContainerOptionsBuilder::new()
            .container(&session.id)
            .pause(true)
            .build();
        let config = bollard::models::ContainerConfig {
            labels: Some(labels),
            ..Default::default()
        };
        // As a registered task of its own: a signal's cleanup waits for the commit (seconds on a
        // large container) and removes the image it makes.
        let registration = crate::interrupt::begin_create("a snapshot image")?;
        let docker = self.docker.clone();
        let request = tokio::spawn(async move {
            let committed = docker.commit_container(options, config).await;
            if let Ok(c) = &committed
                && !c.id.is_empty()
            {
                crate::interrupt::created(crate::interrupt::Object::Snapshot, &c.id);
            }
            drop(registration);
            committed
        });
        let out = request
            .await
            .map_err(|e| EngineError::Lost {
                what: "committing the session",
                detail: e.to_string(),
            })?
            .map_err(|e| EngineError::api("committing the session", &session.id, e))?;
        if out.id.is_empty() {
            return Err(EngineError::Session {
                id: session.id.clone(),
                source: SessionError::NoImageId,
            });
        }
        Ok(out.id)
    }

    /// Kills and removes the session's container. Removing a session that is already gone is not
    /// an error, so this can run on every exit path.
    pub async fn stop_session(&self, session: &Session) -> Result<(), EngineError> {
        session.dead.store(true, Ordering::SeqCst);
        self.remove_container(&session.id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_paths_are_checked() {
        assert!(check_hidden("/work/patched").is_ok());
        assert!(check_hidden("/work/patched/").is_ok());
        for bad in [
            "",
            "/",
            "//",
            "work",
            "/work/../etc",
            "/a/./b",
            "/a,b",
            "/a:b",
        ] {
            assert!(check_hidden(bad).is_err(), "{bad:?}");
        }
    }
}
