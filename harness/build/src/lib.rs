//! Reproducible Docker images for ETIPs: `etip build`.
//!
//! Every ETIP becomes three image layers, like SWE-bench's:
//!
//! - **base**: the toolchain image, by default the offline image of `etip base-image bootstrap`
//!   ([`base::bootstrap`], debootstrap + import), or a configured image (`eclipse-temurin:{jdk}-jdk`);
//! - **env**: the toolchain set up and the repository's dependencies resolved from its build
//!   descriptors (pom.xml files, pyproject.toml, ...) at the original commit — shared by every ETIP
//!   of the repository whose descriptors are unchanged;
//! - **instance**: the original tree at `/work/original` and the patched tree at `/work/patched`,
//!   both built offline (network `none`).
//!
//! Tags are content keys (`<ns>/env:<lang>-<repo>-<key>`, `<ns>/instance:<id>-<key>`), so an
//! unchanged spec is never rebuilt. Each instance gets a log folder with its Dockerfiles, a context
//! summary, the build log and `status.json` ([`etip_core::instance::InstanceStatus`]). Failures are
//! recorded with a reason and the batch goes on. A batch is a set of work units ([`units`]) run by
//! a backend of `etip_core::unit`: each ETIP is one unit, its output the status.
//!
//! A source repository of the user's is only read ([`git`]): missing commits come from its origin
//! through etip's cache clone. etip writes only into its output folder and replaces only its own
//! regular files there ([`output`]). Input ([`EtipInput::read_jsonl`]) and configuration
//! ([`config::BuildConfig::validate`]) are checked before the engine is contacted.
//!
//! ```no_run
//! use etip_build::{Builder, EtipInput, config::BuildConfig};
//! let rt = tokio::runtime::Runtime::new()?;
//! let builder = Builder::new(BuildConfig::default(), ".etip/build".into(), rt.handle().clone())?;
//! let etips = EtipInput::read_jsonl(std::path::Path::new("etips.jsonl"))?;
//! for status in builder.build_all(&etips, 1, &|_: &etip_build::Event| {}) {
//!     println!("{} {:?} {:?}", status.id, status.outcome, status.reason);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod base;
pub mod config;
mod context;
mod failure;
pub mod git;
mod input;
pub mod instance;
pub mod jvm;
mod layers;
pub mod local;
pub mod network;
pub mod output;
pub mod patch;
pub mod spec;
mod toolchain;
pub mod units;

pub use etip_toolchain::detect;
pub use input::{EtipInput, is_null_commit};

use config::BuildConfig;
use etip_core::instance::{BuildOutcome, FailureKind, InstanceStatus, Language, LayerKind};
use etip_docker::{CleanFilter, CleanReport, Engine, EngineError, Limits, TreeCache};
use failure::Failure;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Errors of the batch as a whole (per-instance failures are recorded in the statuses instead).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("reading ETIPs from {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}:{line}: not a valid ETIP ({}); each line needs id, language (java|python), base_commit, patched_commit and source or repo",
        etip_core::clip::foreign(.source)
    )]
    Parse {
        path: String,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}:{line}: ETIP {} has neither `source` nor `repo`", etip_core::clip::quote(.id))]
    NoSource {
        path: String,
        line: usize,
        id: String,
    },
    #[error("no ETIPs in {path}: it has no JSON lines (one ETIP per line)")]
    Empty { path: String },
    #[error(
        "{path}:{line}: ETIP id {} is already used on line {first}; ids name the images and log folders and must be unique",
        etip_core::clip::quote(.id)
    )]
    DuplicateId {
        path: String,
        line: usize,
        first: usize,
        id: String,
    },
    #[error("{path}:{line}: ETIP {}: {}", etip_core::clip::quote(.id), etip_core::clip::foreign(.problem))]
    Invalid {
        path: String,
        line: usize,
        id: String,
        problem: String,
    },
    #[error(transparent)]
    Output(#[from] output::OutputError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Bootstrap(#[from] base::BootstrapError),
    #[error("writing {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Progress of a batch, reported to the caller's callback.
#[derive(Debug, Clone)]
pub enum Event {
    Started {
        id: String,
    },
    Layer {
        id: String,
        kind: LayerKind,
        reused: bool,
    },
    Finished(Box<InstanceStatus>),
}

/// Builds instances (see the crate docs). Cheap to share between worker threads.
pub struct Builder {
    cfg: BuildConfig,
    out: PathBuf,
    engine: Engine,
    rt: tokio::runtime::Handle,
    layer_locks: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// What `"auto"` in `[network]` means: the host's settings, read once.
    host: network::HostNetwork,
    /// Whether Maven Central answered from the env layer's network, per image asked from.
    central: Mutex<HashMap<String, (bool, String)>>,
}

impl Builder {
    /// Connects to the Docker engine; `out` receives `logs/<id>/`, `repos/` and `status.jsonl`.
    /// Engine calls run on the caller's tokio runtime (the binary owns the one runtime); the
    /// builder's methods block on it and must not be called from its worker threads.
    pub fn new(
        cfg: BuildConfig,
        out: PathBuf,
        rt: tokio::runtime::Handle,
    ) -> Result<Builder, BuildError> {
        let engine = rt.block_on(Engine::connect())?;
        Ok(Builder {
            cfg,
            out,
            engine,
            rt,
            layer_locks: Mutex::new(HashMap::new()),
            host: network::host(),
            central: Mutex::new(HashMap::new()),
        })
    }

    /// The builder with `host` standing for this machine's network settings (what `"auto"` in
    /// `[network]` finds), instead of those read from its environment and files.
    pub fn with_host_network(mut self, host: network::HostNetwork) -> Builder {
        self.host = host;
        self
    }

    pub fn config(&self) -> &BuildConfig {
        &self.cfg
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Runs an engine future to completion on this builder's runtime.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// The bootstrapped base image of the configuration's default suite (built when missing;
    /// cached by content key).
    pub fn bootstrap_base(
        &self,
        force: bool,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<base::BaseImage, BuildError> {
        let suite = self.cfg.bootstrap.suite.clone();
        self.bootstrap_suite(&suite, force, on_line)
    }

    /// The bootstrapped base image of `suite` (built when missing; cached by content key).
    pub fn bootstrap_suite(
        &self,
        suite: &str,
        force: bool,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<base::BaseImage, BuildError> {
        Ok(self.rt.block_on(base::bootstrap(
            &self.engine,
            &self.cfg.bootstrap,
            suite,
            force,
            on_line,
        ))?)
    }

    /// Removes etip's labelled containers and images of `namespace` (every namespace when `None`),
    /// containers first. Bootstrapped base images are kept unless `include_base` (the default base
    /// image carries namespace `etip` and is shared: tests clean their own namespace only).
    pub fn clean(
        &self,
        namespace: Option<&str>,
        include_base: bool,
    ) -> Result<CleanReport, BuildError> {
        let filter = CleanFilter {
            namespace: namespace.map(str::to_string),
            keep_kinds: if include_base {
                vec![]
            } else {
                vec!["base".into()]
            },
            containers_only: false,
        };
        Ok(self.rt.block_on(self.engine.clean(&filter))?)
    }

    /// Removes etip's labelled containers of `namespace` (every namespace when `None`) and keeps
    /// the images: e.g. the sessions a killed `etip measure` left running.
    pub fn clean_containers(&self, namespace: Option<&str>) -> Result<CleanReport, BuildError> {
        let filter = CleanFilter {
            namespace: namespace.map(str::to_string),
            keep_kinds: Vec::new(),
            containers_only: true,
        };
        Ok(self.rt.block_on(self.engine.clean(&filter))?)
    }

    /// Builds every ETIP with `workers` parallel workers (the [`etip_core::unit::Threads`]
    /// backend, see [`units`]); statuses come back in input order and are also appended to
    /// `<out>/status.jsonl`. A signal ([`etip_core::cancel::process`]) stops starting builds.
    pub fn build_all(
        &self,
        etips: &[EtipInput],
        workers: usize,
        on_event: &(dyn Fn(&Event) + Sync),
    ) -> Vec<InstanceStatus> {
        let backend = etip_core::unit::Threads::new(workers);
        let (statuses, ran) = units::run(
            &backend,
            self,
            etips,
            etip_core::cancel::process(),
            on_event,
        );
        if let Err(e) = ran {
            tracing::error!("the builds stopped early: {e}");
        }
        statuses
    }

    /// Builds one ETIP and records its status in its log folder and `<out>/status.jsonl` (never
    /// fails: failures are in the status). The log folder `<out>/logs/<slug>/` gets the build's
    /// files; etip replaces only its own files there (see [`output`]) and records an instance
    /// whose folder is not usable as failed.
    pub fn build_one(
        &self,
        etip: &EtipInput,
        on_event: &(dyn Fn(&Event) + Sync),
    ) -> InstanceStatus {
        let status = self.build(etip, on_event);
        list(&self.out, &status, on_event);
        status
    }

    /// Builds one ETIP and records its status in its log folder only: the caller lists it in
    /// `<out>/status.jsonl` (a batch does so on its coordinating thread, see [`units`]).
    pub fn build(&self, etip: &EtipInput, on_event: &(dyn Fn(&Event) + Sync)) -> InstanceStatus {
        record(&self.out, etip, on_event, |dir, status, log| {
            self.build_inner(etip, dir, status, log, on_event)
        })
    }

    /// The output folder.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// Steps 1–4 of one instance (see [`layers`]); fills `status` as they go.
    fn build_inner(
        &self,
        etip: &EtipInput,
        dir: &Path,
        status: &mut InstanceStatus,
        log: &mut String,
        on_event: &(dyn Fn(&Event) + Sync),
    ) -> Result<(), Failure> {
        let layer_event = |kind: LayerKind, reused: bool| {
            on_event(&Event::Layer {
                id: etip.id.clone(),
                kind,
                reused,
            })
        };
        let mut job = layers::prepare(&self.cfg, &self.out, etip, dir, status)?;
        let first = self.build_layers(&job, status, log, &layer_event);
        let Err(failure) = first else {
            return Ok(());
        };
        // An interpreter too new for the code: the next older configured one, once.
        let sign = match failure.kind {
            FailureKind::EnvironmentIncomplete
            | FailureKind::OriginalCompile
            | FailureKind::PatchedCompile
                if job.lang() == Language::Python =>
            {
                failure::python_incompatibility(&failure.detail)
            }
            _ => None,
        };
        let (Some(sign), Some((older, base))) = (sign, job.older.first().cloned()) else {
            return Err(failure);
        };
        log.push_str(&format!(
            "etip: Python {} looks too new for this commit ({sign}): trying Python {older} once\n",
            job.version
        ));
        if let Some(t) = status.toolchain.as_mut() {
            t.replaced = Some(t.version.clone());
            t.why = format!(
                "{} Python {} failed ({sign}); the next older configured, {older}, was tried",
                t.why, t.version
            );
            t.version = older.clone();
        }
        status.layers.clear();
        job.version = older;
        job.base_ref = base;
        job.older.clear();
        self.build_layers(&job, status, log, &layer_event)
    }

    /// The base, env and instance layers of `job`, recorded in `status`.
    fn build_layers(
        &self,
        job: &layers::Job,
        status: &mut InstanceStatus,
        log: &mut String,
        layer_event: &dyn Fn(LayerKind, bool),
    ) -> Result<(), Failure> {
        let base = self.base_layer(&job.base_ref, log)?;
        layer_event(LayerKind::Base, base.reused);
        status.layers.push(base.clone());
        let env = self.env_layer(job, &base, log)?;
        layer_event(LayerKind::Env, env.reused);
        status.layers.push(env.clone());
        if let Some(t) = status.toolchain.as_mut()
            && t.deps_as_of.is_some()
        {
            (t.relaxed, t.set_aside) = self.dated_install(&env.tag);
        }
        let inst = self.instance_layer(job, &base, &env, log)?;
        layer_event(LayerKind::Instance, inst.reused);
        status.outcome = if inst.reused {
            BuildOutcome::Reused
        } else {
            BuildOutcome::Built
        };
        status.image = Some(inst.tag.clone());
        status.layers.push(inst);
        Ok(())
    }

    /// What a dated env layer did ([`spec::ENV_AS_OF`], read from the image): the requirements
    /// it installed from later releases (`"black (black==19.3b0, uploaded before …)"`) and the
    /// test-runner pins it set aside.
    fn dated_install(&self, env_tag: &str) -> (Vec<String>, Vec<String>) {
        let run = etip_docker::RunSpec::new(env_tag, ["cat", spec::ENV_AS_OF]);
        let Ok(out) = self.rt.block_on(self.engine.run(&run)) else {
            return Default::default();
        };
        let Ok(report) = serde_json::from_str::<serde_json::Value>(&out.stdout) else {
            return Default::default();
        };
        let set_aside = report["runner"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(str::to_string))
            .collect();
        let text = |v: &serde_json::Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
        let relaxed = report["relaxed"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                let before = text(r, "before");
                let when = if before.is_empty() {
                    "any release".to_string()
                } else {
                    format!("uploaded before {before}")
                };
                let why = text(r, "why");
                let why = if why.is_empty() {
                    why
                } else {
                    format!(": {why}")
                };
                format!(
                    "{} ({}, {when}){why}",
                    text(r, "requirement"),
                    text(r, "installed")
                )
            })
            .collect();
        (relaxed, set_aside)
    }

    /// A lock per image tag, so parallel workers never build the same layer twice.
    fn tag_lock(&self, tag: &str) -> Arc<Mutex<()>> {
        let mut locks = self.layer_locks.lock().unwrap_or_else(|p| p.into_inner());
        locks.entry(tag.to_string()).or_default().clone()
    }

    /// Lists of the files of the images this builder made or built on (`<out>/trees/`).
    fn tree_cache(&self) -> TreeCache {
        TreeCache::new(self.out.join("trees"))
    }

    /// Limits of a layer build: all CPUs, the configured memory and time.
    fn build_limits(&self) -> Limits {
        let cpus = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1) as f64;
        Limits {
            cpus: if self.cfg.build_cpus > 0.0 {
                self.cfg.build_cpus.min(cpus)
            } else {
                cpus
            },
            memory_bytes: (self.cfg.build_memory_mb as i64) << 20,
            timeout: Duration::from_secs(self.cfg.timeout_secs),
            pids: 8192,
        }
    }
}

/// The two versions of an ETIP on the host.
pub(crate) struct Sources {
    /// The repository holding both commits (the source, etip's cache clone of its origin, or
    /// etip's clone holding the commit made of a patch).
    pub repo: git::Repo,
    pub base: String,
    pub patched: String,
    /// The patch applied to make `patched`, for an ETIP given as a base commit and a patch.
    pub patch: Option<etip_core::instance::AppliedPatch>,
}

/// The ETIP's two commits, full ids, in a repository that holds both; an ETIP given as a patch
/// gets its patched commit made in etip's own clone ([`patch`]).
pub(crate) fn sources(out: &Path, etip: &EtipInput, source: &str) -> Result<Sources, Failure> {
    let git_failure = |e: git::GitError| match e {
        git::GitError::Clone { .. } => Failure::new(FailureKind::Clone, e.to_string()),
        _ => Failure::new(FailureKind::Checkout, e.to_string()),
    };
    let cache = out.join("repos");
    let mut revs = vec![etip.base_commit.as_str()];
    if etip.patch.is_none() {
        revs.push(&etip.patched_commit);
    }
    let (repo, ids) = git::Repo::open_or_clone(source, &cache)
        .and_then(|r| r.resolve_all(&revs, &cache))
        .map_err(git_failure)?;
    match (ids.as_slice(), &etip.patch) {
        ([base, patched], None) => Ok(Sources {
            repo,
            base: base.clone(),
            patched: patched.clone(),
            patch: None,
        }),
        ([base], Some(text)) => {
            let own = repo.writable(&cache).map_err(git_failure)?;
            let (patched, applied) =
                patch::apply(&own, base, text, &etip.id).map_err(|e| match e {
                    patch::PatchError::Git(e) => git_failure(e),
                    e => Failure::new(FailureKind::PatchDoesNotApply, e.to_string()),
                })?;
            Ok(Sources {
                repo: own,
                base: base.clone(),
                patched,
                patch: Some(applied),
            })
        }
        _ => Err(Failure::new(
            FailureKind::Checkout,
            format!("resolving the commits of {} in {source}", etip.id),
        )),
    }
}

/// The status of an ETIP whose id an earlier ETIP of the batch has (nothing is built or written
/// to the log folder, which is the first one's).
pub(crate) fn refuse_repeated(etip: &EtipInput, first: usize) -> InstanceStatus {
    let mut status = new_status(etip);
    let f = Failure::new(
        FailureKind::Input,
        format!(
            "ETIP id {:?} is also ETIP {} of the batch; ids must be unique",
            etip.id,
            first + 1
        ),
    );
    status.reason = Some(f.reason);
    status.failure = Some(f.kind);
    status.detail = Some(f.detail);
    status
}

/// Builds one ETIP with `inner` (given its log folder, its status to fill and its log) and records
/// the status in the log folder (not yet in `<out>/status.jsonl`: [`list`] does, on the thread
/// that coordinates the batch); never fails: failures are in the status.
pub(crate) fn record(
    out: &Path,
    etip: &EtipInput,
    on_event: &(dyn Fn(&Event) + Sync),
    inner: impl FnOnce(&Path, &mut InstanceStatus, &mut String) -> Result<(), Failure>,
) -> InstanceStatus {
    on_event(&Event::Started {
        id: etip.id.clone(),
    });
    let start = Instant::now();
    let dir = output::log_dir(out, &etip.id);
    let mut log = String::new();
    let mut status = new_status(etip);
    let logs_usable = output::prepare_log_dir(&dir);
    let result = match (&logs_usable, etip.problem()) {
        (Err(e), _) => Err(Failure::new(
            FailureKind::Input,
            format!("the log folder cannot be used: {e}"),
        )),
        (Ok(()), Some(problem)) => Err(Failure::new(FailureKind::Input, problem)),
        (Ok(()), None) => inner(&dir, &mut status, &mut log),
    };
    if let Err(f) = result {
        status.outcome = BuildOutcome::Failed;
        status.reason = Some(f.reason);
        status.failure = Some(f.kind);
        status.detail = Some(f.detail);
    }
    status.build_secs = start.elapsed().as_secs_f64();
    if logs_usable.is_ok() {
        let _ = std::fs::write(dir.join("build.log"), &log);
        if let Ok(json) = serde_json::to_string_pretty(&status) {
            let _ = std::fs::write(dir.join("status.json"), json + "\n");
        }
    }
    status
}

/// Appends `status` to `<out>/status.jsonl` (a failure is logged: the log folder holds it too) and
/// reports it finished.
pub(crate) fn list(out: &Path, status: &InstanceStatus, on_event: &(dyn Fn(&Event) + Sync)) {
    if let Ok(line) = serde_json::to_string(status)
        && let Err(e) = output::append_status(out, &line)
    {
        tracing::warn!("status of {} not recorded: {e}", status.id);
    }
    on_event(&Event::Finished(Box::new(status.clone())));
}

/// The status of an instance before its build: failed until it is built.
pub(crate) fn new_status(etip: &EtipInput) -> InstanceStatus {
    InstanceStatus {
        id: etip.id.clone(),
        language: etip.language,
        outcome: BuildOutcome::Failed,
        reason: None,
        failure: None,
        detail: None,
        toolchain: None,
        image: None,
        local_root: None,
        layers: Vec::new(),
        base_commit: etip.base_commit.clone(),
        patched_commit: etip.patched_commit.clone(),
        commit_time: None,
        source: Some(etip.source()),
        original_dir: spec::ORIGINAL_DIR.into(),
        patched_dir: spec::PATCHED_DIR.into(),
        env: BTreeMap::new(),
        modules: Vec::new(),
        dependency_changes: Vec::new(),
        workloads: etip.workloads.clone(),
        patch: None,
        task: etip.task.clone(),
        build_secs: 0.0,
    }
}
