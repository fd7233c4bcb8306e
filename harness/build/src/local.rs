//! Builds without containers (`etip build --executor local`), for machines without a Docker
//! engine: the same scripts as the env and instance layers ([`crate::spec`]), run as host
//! processes in a folder of the instance's own, `<out>/local/<slug>/base/`, under which the
//! container paths are placed ([`spec::relocate`]): `work/original` and `work/patched` (the trees
//! from `git archive`, never the user's clone), `opt/etip/venv` (the dependencies),
//! `opt/etip/venvs/{original,patched}` (each version installed), `tmp/` (scratch files).
//!
//! Python only: the host's `python3` is the toolchain (recorded in the status; a project that
//! asks for another version is built with the host's anyway, and the log says so), pip installs
//! the declared dependencies, and pytest and wheel when the host lacks them, from the host's
//! package index. Java builds need the base
//! images' JDKs and offline Maven repository: they fail with a reason that says so. The status
//! names the folder (`local_root`) and has no image; `etip measure --executor local` runs it.
//! Nothing is isolated: use it for code you trust.

use crate::config::BuildConfig;
use crate::context::ContextError;
use crate::failure::{Failure, LayerFailure, classify_env_failure, classify_instance_failure};
use crate::{EtipInput, Event, layers, record, spec};
use etip_core::instance::{BuildOutcome, FailureKind, InstanceStatus, Language};
use etip_docker::EngineError;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The folder of an instance's local build, under `<out>/local/<slug>/`. Four characters: an
/// evaluated candidate's copy (the local executor's private sessions) gets a sibling name of
/// the same length, so that its paths are as long as the original's.
pub const ROOT_NAME: &str = "base";

/// The file that marks a folder as a local build of etip's (only such folders are replaced).
const MARKER: &str = ".etip-local";

/// Installs what the base images ship and a host may lack into the env venv: pytest (the test
/// runner) and wheel (setuptools before 70.1 needs it for editable installs without build
/// isolation); fails with [`spec::EXIT_SETUP`] (12).
const TOOLS_STEP: &str = r#"for m in pytest wheel; do
  if ! "$PY" -c "import $m" >/dev/null 2>&1; then
    echo "etip: $m is not installed for $PY; pip install $m"
    "$PY" -m pip install "$m" || { echo "etip: $m could not be installed"; exit 12; }
  fi
done
"#;

/// Builds instances as host processes (see the module docs).
pub struct LocalBuilder {
    cfg: BuildConfig,
    out: PathBuf,
}

impl LocalBuilder {
    /// `out` receives `logs/<id>/`, `repos/`, `local/<slug>/` and `status.jsonl`.
    pub fn new(cfg: BuildConfig, out: PathBuf) -> LocalBuilder {
        LocalBuilder { cfg, out }
    }

    /// The build configuration.
    pub fn config(&self) -> &BuildConfig {
        &self.cfg
    }

    /// The output folder.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// Builds one ETIP and records its status in its log folder (see [`crate::units::BuildOne`]).
    pub fn build(&self, etip: &EtipInput, on_event: &(dyn Fn(&Event) + Sync)) -> InstanceStatus {
        record(&self.out, etip, on_event, |dir, status, log| {
            self.build_inner(etip, dir, status, log)
        })
    }

    fn build_inner(
        &self,
        etip: &EtipInput,
        dir: &Path,
        status: &mut InstanceStatus,
        log: &mut String,
    ) -> Result<(), Failure> {
        let job = layers::prepare(&self.cfg, &self.out, etip, dir, status)?;
        if job.lang() != Language::Python {
            return Err(Failure::new(
                FailureKind::NoBaseImage,
                "the local builder builds Python ETIPs only: a Java ETIP needs the JDK and the \
                 offline Maven repository of the base images, that is a Docker engine (`etip build` \
                 without --executor local)",
            ));
        }
        let host = host_python()?;
        if host != job.version {
            log.push_str(&format!(
                "etip: the project asks for Python {}; the local build uses the host's Python {host}\n",
                job.version
            ));
        }
        if let Some(t) = status.toolchain.as_mut() {
            t.version = host.clone();
            t.source = format!("{} (local build: the host's python3)", t.source);
            // The host's environment: today's releases, whatever the configuration says.
            t.deps_as_of = None;
        }
        let root = self
            .out
            .join("local")
            .join(job.ispec.log_slug())
            .join(ROOT_NAME);
        let root_s = fresh_root(&root)?;
        let limit = Duration::from_secs(self.cfg.timeout_secs);

        // The env layer's script and context, moved under the root.
        let script = spec::relocate(
            &format!(
                "{}PY={}/bin/python\n{TOOLS_STEP}",
                spec::env_script(
                    &self.cfg,
                    Language::Python,
                    &host,
                    None,
                    job.env_spec.as_ref()
                ),
                spec::ENV_VENV
            ),
            &root_s,
        );
        let _ = std::fs::write(dir.join("env.sh"), &script);
        let ctx = layers::env_context(&job, &script, None)
            .map_err(|e| Failure::new(FailureKind::Checkout, e.to_string()))?;
        unpack(std::io::Cursor::new(ctx), &root)?;
        log.push_str("etip: local build: env step\n");
        let env_log = run_script(&root, "opt/etip/scripts/env.sh", limit)
            .map_err(|f| classify_env_failure(f, &host, Language::Python))?;
        log.push_str(&env_log);

        // The instance layer's script and both trees.
        let script = spec::relocate(
            &spec::instance_script(&self.cfg, Language::Python, &job.ispec.modules),
            &root_s,
        );
        let _ = std::fs::write(dir.join("build.sh"), &script);
        let tmp = tempfile::tempdir()
            .map_err(|e| Failure::new(FailureKind::Checkout, format!("a temporary folder: {e}")))?;
        let mut summary = String::new();
        let ctx = layers::instance_context(&job, tmp.path(), &script, &mut summary)
            .map_err(|e| Failure::new(FailureKind::Checkout, e.to_string()))?;
        let file = std::fs::File::open(&ctx)
            .map_err(|e| Failure::new(FailureKind::Checkout, format!("{}: {e}", ctx.display())))?;
        unpack(file, &root)?;
        drop(tmp);
        let _ = std::fs::write(dir.join("context.txt"), &summary);
        log.push_str("etip: local build: both versions\n");
        let inst_log = run_script(&root, "work/.etip/build.sh", limit)
            .map_err(|f| classify_instance_failure(f).with_extensions(&etip.extension_files))?;
        log.push_str(&inst_log);

        let host_path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
        status.original_dir = spec::relocate(spec::ORIGINAL_DIR, &root_s);
        status.patched_dir = spec::relocate(spec::PATCHED_DIR, &root_s);
        for entries in status.env.values_mut() {
            for e in entries.iter_mut() {
                let moved = spec::relocate(e, &root_s);
                *e = match moved.strip_suffix(spec::PATH) {
                    Some(head) if moved.starts_with("PATH=") => format!("{head}{host_path}"),
                    _ => moved,
                };
            }
        }
        status.local_root = Some(root_s);
        status.outcome = BuildOutcome::Built;
        Ok(())
    }
}

/// The host's `python3` version, `MAJOR.MINOR`.
fn host_python() -> Result<String, Failure> {
    let out = Command::new("python3")
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .map_err(|e| {
            Failure::new(
                FailureKind::NoBaseImage,
                format!("a local Python build needs python3 on PATH: {e}"),
            )
        })?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || v.is_empty() {
        return Err(Failure::new(
            FailureKind::NoBaseImage,
            format!(
                "python3 did not say its version: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        ));
    }
    Ok(v)
}

/// Makes `root` an empty folder of etip's: an earlier local build there (marked) is removed;
/// anything else is refused. Returns the path as the scripts write it.
fn fresh_root(root: &Path) -> Result<String, Failure> {
    let bad = |what: String| Failure::new(FailureKind::Input, what);
    let root_s = root
        .to_str()
        .filter(|s| {
            s.starts_with('/')
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/._-+@,:".contains(c))
        })
        .ok_or_else(|| {
            bad(format!(
                "{}: a local build needs an absolute output path of letters, digits and /._-+@,: \
                 only (its scripts name it unquoted)",
                root.display()
            ))
        })?
        .to_string();
    match std::fs::symlink_metadata(root) {
        Ok(m) if m.is_dir() && root.join(MARKER).is_file() => std::fs::remove_dir_all(root)
            .map_err(|e| bad(format!("removing the earlier local build {root_s}: {e}")))?,
        Ok(_) => {
            return Err(bad(format!(
                "{root_s} exists and is not a local build of etip's (no {MARKER}); it is left as it is"
            )));
        }
        Err(_) => {}
    }
    for d in ["tmp", "work", "opt/etip"] {
        std::fs::create_dir_all(root.join(d))
            .map_err(|e| bad(format!("creating {root_s}/{d}: {e}")))?;
    }
    std::fs::write(
        root.join(MARKER),
        "a local build of etip's: `etip build` replaces it\n",
    )
    .map_err(|e| bad(format!("writing {root_s}/{MARKER}: {e}")))?;
    Ok(root_s)
}

/// Unpacks a layer context (a tar of relative paths) into `root`.
fn unpack(reader: impl std::io::Read, root: &Path) -> Result<(), Failure> {
    let mut a = tar::Archive::new(reader);
    a.set_preserve_permissions(true);
    a.unpack(root).map_err(|e| {
        Failure::new(
            FailureKind::Checkout,
            format!("unpacking into {}: {e}", root.display()),
        )
    })
}

/// Runs `sh <root>/<script>` in `root` (output to the returned log) with `TMPDIR` in the root;
/// a failure comes back as the layer failure the container build would give.
fn run_script(root: &Path, script: &str, limit: Duration) -> Result<String, LayerFailure> {
    let log_path = root.join("tmp").join("etip-step.log");
    let log_err = |source| {
        LayerFailure::Context(ContextError::Log {
            path: log_path.clone(),
            source,
        })
    };
    let file = std::fs::File::create(&log_path).map_err(log_err)?;
    let err = file.try_clone().map_err(log_err)?;
    let mut cmd = Command::new("sh");
    cmd.arg(root.join(script))
        .current_dir(root)
        .env("TMPDIR", root.join("tmp"))
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err);
    let done = etip_core::process::run_with_limit(&mut cmd, limit).map_err(|source| {
        LayerFailure::Context(ContextError::Run {
            script: script.into(),
            source,
        })
    })?;
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    let _ = std::fs::remove_file(&log_path);
    if done.timed_out {
        return Err(LayerFailure::Build(
            EngineError::BuildTimeout {
                tag: script.into(),
                secs: limit.as_secs(),
                log: String::new(),
            },
            log,
        ));
    }
    match done.code() {
        Some(0) => Ok(log),
        code => Err(LayerFailure::Build(
            EngineError::Build {
                tag: format!("local {script}"),
                detail: format!("sh {script} exited with {code:?}"),
                exit_code: code.map(i64::from),
                log: String::new(),
            },
            log,
        )),
    }
}
