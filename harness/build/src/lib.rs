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
//! recorded with a reason and the batch goes on.
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
pub use etip_toolchain::detect;
pub mod git;
pub mod instance;
pub mod spec;

use config::{BOOTSTRAP, BuildConfig};
use etip_core::instance::{
    BuildOutcome, FailureKind, InstanceStatus, Language, Layer, LayerKind, Toolchain,
};
use etip_core::measure::Version;
use etip_docker::{
    CleanFilter, CleanReport, Engine, EngineError, LABEL_KIND, LABEL_MANAGED, LABEL_NAMESPACE,
    LayerContext, LayerSpec, Limits, TreeCache,
};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One ETIP to build: a line of `etips.jsonl` (the miner's `candidates.jsonl` works too: other
/// fields are ignored).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EtipInput {
    pub id: String,
    pub language: Language,
    pub base_commit: String,
    pub patched_commit: String,
    /// Local path or git URL of the repository.
    #[serde(default)]
    pub source: Option<String>,
    /// `owner/name` on GitHub, used when `source` is absent.
    #[serde(default)]
    pub repo: Option<String>,
    #[serde(default)]
    pub changed_modules: Option<Vec<String>>,
}

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
        "{path}:{line}: not a valid ETIP ({source}); each line needs id, language (java|python), base_commit, patched_commit and source or repo"
    )]
    Parse {
        path: String,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}:{line}: ETIP {id} has neither `source` nor `repo`")]
    NoSource {
        path: String,
        line: usize,
        id: String,
    },
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

impl EtipInput {
    /// Reads JSON lines; relative local `source` paths are resolved against the file's folder when
    /// they exist there.
    pub fn read_jsonl(path: &Path) -> Result<Vec<EtipInput>, BuildError> {
        let text = std::fs::read_to_string(path).map_err(|source| BuildError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let mut e: EtipInput =
                serde_json::from_str(line).map_err(|source| BuildError::Parse {
                    path: path.display().to_string(),
                    line: i + 1,
                    source,
                })?;
            match (&e.source, &e.repo) {
                (Some(s), _) => {
                    let p = Path::new(s);
                    if p.is_relative() && !p.exists() && dir.join(p).exists() {
                        e.source = Some(dir.join(p).to_string_lossy().into_owned());
                    }
                }
                (None, Some(r)) => e.source = Some(format!("https://github.com/{r}.git")),
                (None, None) => {
                    return Err(BuildError::NoSource {
                        path: path.display().to_string(),
                        line: i + 1,
                        id: e.id,
                    });
                }
            }
            out.push(e);
        }
        Ok(out)
    }

    fn source(&self) -> String {
        self.source
            .clone()
            .or_else(|| {
                self.repo
                    .as_ref()
                    .map(|r| format!("https://github.com/{r}.git"))
            })
            .unwrap_or_default()
    }
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

/// A failure of one instance, with its reason.
#[derive(Debug)]
struct Failure {
    kind: FailureKind,
    reason: String,
    detail: String,
}

impl Failure {
    fn new(kind: FailureKind, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            reason: kind.reason().to_string(),
            detail: detail.into(),
        }
    }
}

/// Builds instances (see the crate docs). Cheap to share between worker threads.
pub struct Builder {
    cfg: BuildConfig,
    out: PathBuf,
    engine: Engine,
    rt: tokio::runtime::Handle,
    layer_locks: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

/// Labels of an object in this builder's namespace.
fn labels(ns: &str, kind: &str, extra: &[(&str, String)]) -> HashMap<String, String> {
    let mut l = HashMap::from([
        (LABEL_MANAGED.to_string(), "true".to_string()),
        (LABEL_KIND.to_string(), kind.to_string()),
        (LABEL_NAMESPACE.to_string(), ns.to_string()),
    ]);
    for (k, v) in extra {
        l.insert(k.to_string(), v.clone());
    }
    l
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn is_dependency_failure(log: &str) -> bool {
    [
        "Could not resolve dependencies",
        "could not be resolved",
        "Non-resolvable parent POM",
        "Cannot access",
        "has not been downloaded from it before",
        "Could not find artifact",
        "No matching distribution found",
    ]
    .iter()
    .any(|p| log.contains(p))
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
        })
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

    /// The bootstrapped base image (built when missing; cached by content key).
    pub fn bootstrap_base(
        &self,
        force: bool,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<base::BaseImage, BuildError> {
        Ok(self.rt.block_on(base::bootstrap(
            &self.engine,
            &self.cfg.bootstrap,
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

    /// Builds every ETIP with `workers` parallel workers; statuses come back in input order and are
    /// also appended to `<out>/status.jsonl`.
    pub fn build_all(
        &self,
        etips: &[EtipInput],
        workers: usize,
        on_event: &(dyn Fn(&Event) + Sync),
    ) -> Vec<InstanceStatus> {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: Mutex<Vec<Option<InstanceStatus>>> = Mutex::new(vec![None; etips.len()]);
        std::thread::scope(|s| {
            for _ in 0..workers.max(1).min(etips.len().max(1)) {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let Some(etip) = etips.get(i) else { break };
                        let status = self.build_one(etip, on_event);
                        results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(status);
                    }
                });
            }
        });
        results
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .into_iter()
            .flatten()
            .collect()
    }

    fn log_dir(&self, id: &str) -> PathBuf {
        self.out.join("logs").join(instance::log_slug(id))
    }

    /// Builds one ETIP and records its status (never fails: failures are in the status).
    pub fn build_one(
        &self,
        etip: &EtipInput,
        on_event: &(dyn Fn(&Event) + Sync),
    ) -> InstanceStatus {
        on_event(&Event::Started {
            id: etip.id.clone(),
        });
        let start = Instant::now();
        let dir = self.log_dir(&etip.id);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::create_dir_all(&dir);
        let mut log = String::new();
        let mut status = InstanceStatus {
            id: etip.id.clone(),
            language: etip.language,
            outcome: BuildOutcome::Failed,
            reason: None,
            failure: None,
            detail: None,
            toolchain: None,
            image: None,
            layers: Vec::new(),
            base_commit: etip.base_commit.clone(),
            patched_commit: etip.patched_commit.clone(),
            original_dir: spec::ORIGINAL_DIR.into(),
            patched_dir: spec::PATCHED_DIR.into(),
            env: BTreeMap::new(),
            modules: Vec::new(),
            build_secs: 0.0,
        };
        let result = self.build_inner(etip, &dir, &mut status, &mut log, on_event);
        if let Err(f) = result {
            status.outcome = BuildOutcome::Failed;
            status.reason = Some(f.reason);
            status.failure = Some(f.kind);
            status.detail = Some(f.detail);
        }
        status.build_secs = start.elapsed().as_secs_f64();
        let _ = std::fs::write(dir.join("build.log"), &log);
        if let Ok(json) = serde_json::to_string_pretty(&status) {
            let _ = std::fs::write(dir.join("status.json"), json + "\n");
        }
        if let Ok(line) = serde_json::to_string(&status) {
            use std::io::Write;
            let _ = std::fs::create_dir_all(&self.out);
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.out.join("status.jsonl"))
            {
                let _ = writeln!(f, "{line}");
            }
        }
        on_event(&Event::Finished(Box::new(status.clone())));
        status
    }

    fn build_inner(
        &self,
        etip: &EtipInput,
        dir: &Path,
        status: &mut InstanceStatus,
        log: &mut String,
        on_event: &(dyn Fn(&Event) + Sync),
    ) -> Result<(), Failure> {
        let ns = &self.cfg.namespace;
        let source = etip.source();
        // 1. Sources on the host.
        let repo = git::Repo::open_or_clone(&source, &self.out.join("repos"))
            .map_err(|e| Failure::new(FailureKind::Clone, e.to_string()))?;
        let base_commit = repo
            .resolve(&etip.base_commit)
            .map_err(|e| Failure::new(FailureKind::Checkout, e.to_string()))?;
        let patched_commit = repo
            .resolve(&etip.patched_commit)
            .map_err(|e| Failure::new(FailureKind::Checkout, e.to_string()))?;
        let tree = repo
            .ls_tree(&base_commit)
            .map_err(|e| Failure::new(FailureKind::Checkout, e.to_string()))?;
        let patched_tree = repo
            .ls_tree(&patched_commit)
            .map_err(|e| Failure::new(FailureKind::Checkout, e.to_string()))?;
        let blobs: HashMap<&str, &str> = tree
            .iter()
            .map(|e| (e.path.as_str(), e.blob.as_str()))
            .collect();
        let read = |p: &str| -> Option<String> {
            let blob = blobs.get(p)?;
            repo.blob(blob)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };

        // 2. Toolchain and base image.
        let lang = etip.language;
        let (version, requested, base_ref) = self.select_toolchain(lang, &read)?;
        let has_mvnw = |t: &[git::TreeEntry]| t.iter().any(|e| e.path == "mvnw");
        let tool_of = |t: &[git::TreeEntry]| match lang {
            Language::Java if self.cfg.java.command != "auto" => self.cfg.java.command.clone(),
            Language::Java if has_mvnw(t) => "./mvnw".to_string(),
            Language::Java => "mvn".to_string(),
            Language::Python => "pip".to_string(),
        };
        status.toolchain = Some(Toolchain {
            language: lang,
            version: version.clone(),
            requested: requested.as_ref().map(|r| r.value.clone()),
            source: requested
                .as_ref()
                .map(|r| r.source.clone())
                .unwrap_or_else(|| "default".into()),
            build_tool: tool_of(&tree),
        });
        let modules = etip
            .changed_modules
            .clone()
            .unwrap_or_else(|| changed_modules(lang, &tree, &patched_tree));
        let ispec = instance::InstanceSpec::new(
            &self.cfg,
            &etip.id,
            lang,
            &base_commit,
            &patched_commit,
            [&tool_of(&tree), &tool_of(&patched_tree)],
            modules,
        );
        for v in [Version::Original, Version::Patched] {
            status
                .env
                .insert(v.as_str().into(), ispec.version(v).env.clone());
        }
        status.modules = ispec.modules.clone();
        let base = self.base_layer(&base_ref, log)?;
        on_event(&Event::Layer {
            id: etip.id.clone(),
            kind: LayerKind::Base,
            reused: base.reused,
        });
        status.layers.push(base.clone());

        // 3. Env layer.
        let mut descriptors: Vec<&git::TreeEntry> = tree
            .iter()
            .filter(|e| spec::is_descriptor(lang, &e.path))
            .collect();
        descriptors.sort_by(|a, b| a.path.cmp(&b.path));
        let env_dockerfile = spec::env_dockerfile(&base.tag);
        let env_script = spec::env_script(&self.cfg, lang, &version);
        let settings = if lang == Language::Java && !self.cfg.java.settings.is_empty() {
            Some(std::fs::read(&self.cfg.java.settings).map_err(|e| {
                Failure::new(
                    FailureKind::Input,
                    format!("reading Maven settings {}: {e}", self.cfg.java.settings),
                )
            })?)
        } else {
            None
        };
        let descriptor_list: Vec<String> = descriptors
            .iter()
            .map(|e| format!("{} {} {}", e.mode, e.blob, e.path))
            .collect();
        let settings_hash = settings
            .as_ref()
            .map(|s| spec::key(&[&String::from_utf8_lossy(s)]))
            .unwrap_or_default();
        let fix_hash = if lang == Language::Java {
            let parts: Vec<&str> = spec::SUREFIRE_FIX_SOURCES
                .iter()
                .flat_map(|(p, t)| [*p, *t])
                .collect();
            spec::key(&parts)
        } else {
            String::new()
        };
        let env_key = spec::key(&[
            spec::LAYER_RECIPE_VERSION,
            &fix_hash,
            &base.image_id,
            &lang.to_string(),
            &version,
            &env_dockerfile,
            &env_script,
            &descriptor_list.join("\n"),
            &settings_hash,
            &self.cfg.env_network,
        ]);
        let repo_slug = git::slug(&source);
        let env_tag = ispec.env_tag(&repo_slug, &env_key);
        let _ = std::fs::write(dir.join("Dockerfile.env"), &env_dockerfile);
        let _ = std::fs::write(dir.join("env.sh"), &env_script);
        let env_lock = self.tag_lock(&env_tag);
        let env_layer = {
            let _held = env_lock.lock().unwrap_or_else(|p| p.into_inner());
            self.layer(LayerKind::Env, &env_tag, base.size_bytes, log, || {
                let mut b = tar::Builder::new(Vec::new());
                append_dir(&mut b, "opt/etip/scripts")?;
                append_bytes(
                    &mut b,
                    "opt/etip/scripts/env.sh",
                    env_script.as_bytes(),
                    0o755,
                )?;
                if let Some(s) = &settings {
                    append_bytes(&mut b, "opt/etip/scripts/settings.xml", s, 0o644)?;
                }
                if lang == Language::Java {
                    for (path, text) in spec::SUREFIRE_FIX_SOURCES {
                        append_bytes(
                            &mut b,
                            &format!("opt/etip/surefire-fix/src/{path}"),
                            text.as_bytes(),
                            0o644,
                        )?;
                    }
                }
                append_dir(&mut b, "opt/etip/env-src")?;
                for d in &descriptors {
                    let content = repo.blob(&d.blob).map_err(|e| e.to_string())?;
                    let mode = if d.mode == "100755" { 0o755 } else { 0o644 };
                    append_bytes(
                        &mut b,
                        &format!("opt/etip/env-src/{}", d.path),
                        &content,
                        mode,
                    )?;
                }
                let ctx = b.into_inner().map_err(|e| e.to_string())?;
                Ok(LayerSpec {
                    parent: base.tag.clone(),
                    tag: env_tag.clone(),
                    cmd: vec!["sh".into(), "/opt/etip/scripts/env.sh".into()],
                    workdir: "/work".into(),
                    labels: labels(
                        ns,
                        "env",
                        &[
                            ("etip.key", env_key.clone()),
                            ("etip.language", lang.to_string()),
                            ("etip.repo", repo_slug.clone()),
                            ("etip.toolchain", version.clone()),
                        ],
                    ),
                    network_enabled: self.cfg.env_network != "none",
                    limits: self.build_limits(),
                    tree_cache: Some(self.tree_cache()),
                    cache_tree: true,
                    capture: Vec::new(),
                }
                .with_context(ctx))
            })
            .map_err(|f| classify_env_failure(f, &version, lang))?
        };
        on_event(&Event::Layer {
            id: etip.id.clone(),
            kind: LayerKind::Env,
            reused: env_layer.reused,
        });
        status.layers.push(env_layer.clone());

        // 4. Instance layer.
        let inst_dockerfile = spec::instance_dockerfile(&env_layer.tag);
        let inst_script = spec::instance_script(&self.cfg, lang);
        let inst_key = spec::key(&[
            spec::LAYER_RECIPE_VERSION,
            &env_layer.image_id,
            &base_commit,
            &patched_commit,
            &inst_dockerfile,
            &inst_script,
        ]);
        let inst_tag = ispec.instance_tag(&inst_key);
        let _ = std::fs::write(dir.join("Dockerfile.instance"), &inst_dockerfile);
        let _ = std::fs::write(dir.join("build.sh"), &inst_script);
        let mut summary = format!(
            "instance {}\nsource {source}\nbase_commit {base_commit}\npatched_commit {patched_commit}\n\
             toolchain {lang} {version} (requested {:?})\nbase {}\nenv {}\nenv descriptors:\n",
            etip.id,
            requested
                .as_ref()
                .map(|r| format!("{} from {}", r.value, r.source)),
            base.tag,
            env_layer.tag
        );
        for d in &descriptor_list {
            summary.push_str(&format!("  {d}\n"));
        }
        let inst_lock = self.tag_lock(&inst_tag);
        // The instance context (both trees) is written to a file and streamed to the engine.
        let ctx_dir = tempfile::tempdir();
        let held = inst_lock.lock().unwrap_or_else(|p| p.into_inner());
        let inst_layer = self
            .layer(
                LayerKind::Instance,
                &inst_tag,
                env_layer.size_bytes,
                log,
                || {
                    let tmp = ctx_dir.as_ref().map_err(|e| e.to_string())?;
                    let o = tmp.path().join("original.tar");
                    let p = tmp.path().join("patched.tar");
                    let ctx_path = tmp.path().join("context.tar");
                    let ctx_file = std::fs::File::create(&ctx_path)
                        .map_err(|e| format!("creating {}: {e}", ctx_path.display()))?;
                    repo.archive(&base_commit, "work/original/", &o)
                        .map_err(|e| e.to_string())?;
                    repo.archive(&patched_commit, "work/patched/", &p)
                        .map_err(|e| e.to_string())?;
                    let mut b = tar::Builder::new(std::io::BufWriter::new(ctx_file));
                    append_dir(&mut b, "work")?;
                    append_dir(&mut b, "work/.etip")?;
                    append_bytes(&mut b, "work/.etip/build.sh", inst_script.as_bytes(), 0o755)?;
                    let mut files = 0usize;
                    let mut bytes = 0u64;
                    for t in [&o, &p] {
                        let (n, sz) = copy_tar(t, &mut b)?;
                        files += n;
                        bytes += sz;
                    }
                    let mut w = b.into_inner().map_err(|e| e.to_string())?;
                    std::io::Write::flush(&mut w).map_err(|e| e.to_string())?;
                    drop(w);
                    // The git archives are not needed once copied into the context.
                    let _ = std::fs::remove_file(&o);
                    let _ = std::fs::remove_file(&p);
                    let tar_len = std::fs::metadata(&ctx_path).map(|m| m.len()).unwrap_or(0);
                    summary.push_str(&format!(
                        "instance context: {files} files, {bytes} bytes of sources, {tar_len} bytes of tar\n"
                    ));
                    let ctx = ctx_path.clone();
                    Ok(LayerSpec {
                        parent: env_layer.tag.clone(),
                        tag: inst_tag.clone(),
                        cmd: vec!["sh".into(), "/work/.etip/build.sh".into()],
                        workdir: "/work".into(),
                        labels: labels(
                            ns,
                            "instance",
                            &[
                                ("etip.key", inst_key.clone()),
                                ("etip.instance", etip.id.clone()),
                                ("etip.language", lang.to_string()),
                                ("etip.base_commit", base_commit.clone()),
                                ("etip.patched_commit", patched_commit.clone()),
                            ],
                        ),
                        network_enabled: false,
                        limits: self.build_limits(),
                        tree_cache: Some(self.tree_cache()),
                        cache_tree: false,
                        // The two trees and their build outputs (venvs under /opt/etip).
                        capture: vec!["/work".into(), "/opt/etip".into()],
                    }
                    .with_context(ctx))
                },
            )
            .map_err(classify_instance_failure);
        drop(held);
        let _ = std::fs::write(dir.join("context.txt"), &summary);
        let inst_layer = inst_layer?;
        on_event(&Event::Layer {
            id: etip.id.clone(),
            kind: LayerKind::Instance,
            reused: inst_layer.reused,
        });
        status.outcome = if inst_layer.reused {
            BuildOutcome::Reused
        } else {
            BuildOutcome::Built
        };
        status.image = Some(inst_layer.tag.clone());
        status.layers.push(inst_layer);
        Ok(())
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

    /// Chooses the toolchain version and the base image reference for a language.
    fn select_toolchain(
        &self,
        lang: Language,
        read: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(String, Option<detect::Request>, String), Failure> {
        match lang {
            Language::Java => {
                let req = detect::detect_jdk(read);
                let want = req
                    .as_ref()
                    .map(|r| r.value.clone())
                    .unwrap_or_else(|| self.cfg.java.default_jdk.clone());
                let images = &self.cfg.java.base_images;
                if let Some(img) = images.get(&want) {
                    return Ok((want.clone(), req, img.replace("{jdk}", &want)));
                }
                if let Some(img) = images.get("*") {
                    return Ok((want.clone(), req, img.replace("{jdk}", &want)));
                }
                if self.cfg.java.allow_newer_jdk
                    && let Ok(n) = want.parse::<u32>()
                {
                    let newer = images
                        .iter()
                        .filter_map(|(k, v)| k.parse::<u32>().ok().map(|k| (k, v)))
                        .filter(|(k, _)| *k >= n)
                        .min_by_key(|(k, _)| *k);
                    if let Some((k, v)) = newer {
                        return Ok((k.to_string(), req, v.replace("{jdk}", &k.to_string())));
                    }
                }
                Err(Failure {
                    kind: FailureKind::NoBaseImage,
                    reason: format!("no base image for JDK {want}"),
                    detail: format!(
                        "JDK {want} requested by {}; configured JDKs: {:?}. Add java.base_images.\"{want}\" (e.g. \"eclipse-temurin:{{jdk}}-jdk\" with a registry) or set java.allow_newer_jdk",
                        req.as_ref().map(|r| r.source.as_str()).unwrap_or("default"),
                        images.keys().collect::<Vec<_>>()
                    ),
                })
            }
            Language::Python => {
                let req = detect::detect_python(read);
                let images = &self.cfg.python.base_images;
                let default = &self.cfg.python.default_version;
                let fits = |v: &str| {
                    req.as_ref()
                        .is_none_or(|r| detect::python_satisfies(v, &r.value))
                };
                // The default first, then the newest configured version that fits.
                let mut candidates: Vec<&String> = images.keys().filter(|k| *k != "*").collect();
                candidates.sort_by_key(|v| std::cmp::Reverse(detect_version_key(v)));
                if images.contains_key(default) && fits(default) {
                    candidates.insert(0, default);
                }
                if let Some(v) = candidates.into_iter().find(|v| fits(v)) {
                    return Ok((v.clone(), req, images[v].replace("{version}", v)));
                }
                if let Some(img) = images.get("*") {
                    let v = match &req {
                        Some(r) if r.value.starts_with(|c: char| c.is_ascii_digit()) => {
                            r.value.split('.').take(2).collect::<Vec<_>>().join(".")
                        }
                        _ if fits(default) => default.clone(),
                        _ => String::new(),
                    };
                    if !v.is_empty() {
                        return Ok((v.clone(), req, img.replace("{version}", &v)));
                    }
                }
                let want = req
                    .as_ref()
                    .map(|r| r.value.clone())
                    .unwrap_or_else(|| default.clone());
                Err(Failure {
                    kind: FailureKind::NoBaseImage,
                    reason: format!("no base image for Python {want}"),
                    detail: format!(
                        "Python {want} requested by {}; configured versions: {:?}. Add python.base_images.\"X.Y\" (e.g. \"python:{{version}}\" with a registry)",
                        req.as_ref().map(|r| r.source.as_str()).unwrap_or("default"),
                        images.keys().collect::<Vec<_>>()
                    ),
                })
            }
        }
    }

    /// The base layer: the bootstrapped image (built when missing) or a configured image.
    fn base_layer(&self, base_ref: &str, log: &mut String) -> Result<Layer, Failure> {
        let engine_err = |e: String| Failure::new(FailureKind::Engine, e);
        if base_ref == BOOTSTRAP {
            let mut lines = Vec::new();
            let img = self
                .bootstrap_base(false, &mut |l: &str| lines.push(l.to_string()))
                .map_err(|e| Failure {
                    kind: FailureKind::NoBaseImage,
                    reason: "no base image".into(),
                    detail: format!("bootstrapping the base image failed: {e}"),
                })?;
            for l in lines {
                log.push_str(&l);
                log.push('\n');
            }
            let info = self
                .rt
                .block_on(self.engine.image(&img.tag))
                .map_err(|e| engine_err(e.to_string()))?
                .ok_or_else(|| engine_err(format!("base image {} vanished", img.tag)))?;
            return Ok(Layer {
                kind: LayerKind::Base,
                tag: img.tag,
                image_id: info.id,
                size_bytes: info.size,
                layer_bytes: info.size,
                build_secs: img.secs,
                reused: !img.built,
            });
        }
        let info = self
            .rt
            .block_on(self.engine.image(base_ref))
            .map_err(|e| engine_err(e.to_string()))?;
        let info = match info {
            Some(i) => i,
            None => {
                log.push_str(&format!("pulling {base_ref}\n"));
                self.rt
                    .block_on(self.engine.pull(base_ref))
                    .map_err(|e| Failure {
                        kind: FailureKind::NoBaseImage,
                        reason: format!("no base image {base_ref}"),
                        detail: e.to_string(),
                    })?
            }
        };
        Ok(Layer {
            kind: LayerKind::Base,
            tag: base_ref.to_string(),
            image_id: info.id,
            size_bytes: info.size,
            layer_bytes: info.size,
            build_secs: 0.0,
            reused: true,
        })
    }

    /// Returns the layer `tag`, building it from the spec made by `make` when it does not exist.
    fn layer(
        &self,
        kind: LayerKind,
        tag: &str,
        parent_size: i64,
        log: &mut String,
        make: impl FnOnce() -> Result<(LayerSpec, LayerContext), String>,
    ) -> Result<Layer, LayerFailure> {
        let existing = self
            .rt
            .block_on(self.engine.image(tag))
            .map_err(LayerFailure::Engine)?;
        let start = Instant::now();
        let (info, reused) = match existing {
            Some(info) => {
                log.push_str(&format!("== {kind:?} layer {tag}: exists, reused\n"));
                (info, true)
            }
            None => {
                log.push_str(&format!("== {kind:?} layer {tag}: building\n"));
                let (spec, ctx) = make().map_err(LayerFailure::Context)?;
                let mut lines = String::new();
                let result =
                    self.rt
                        .block_on(self.engine.build_layer(&spec, ctx, &mut |l: &str| {
                            lines.push_str(l);
                            lines.push('\n');
                        }));
                log.push_str(&lines);
                result.map_err(|e| LayerFailure::Build(e, lines))?;
                let info = self
                    .rt
                    .block_on(self.engine.image(tag))
                    .map_err(LayerFailure::Engine)?
                    .ok_or_else(|| {
                        LayerFailure::Context(format!("image {tag} missing after its build"))
                    })?;
                (info, false)
            }
        };
        Ok(Layer {
            kind,
            tag: tag.to_string(),
            image_id: info.id,
            size_bytes: info.size,
            layer_bytes: info.size - parent_size,
            build_secs: if reused {
                0.0
            } else {
                start.elapsed().as_secs_f64()
            },
            reused,
        })
    }
}

/// Modules of the files that differ between the two trees (added, removed or changed).
fn changed_modules(
    lang: Language,
    original: &[git::TreeEntry],
    patched: &[git::TreeEntry],
) -> Vec<String> {
    let a: HashMap<&str, &str> = original
        .iter()
        .map(|e| (e.path.as_str(), e.blob.as_str()))
        .collect();
    let b: HashMap<&str, &str> = patched
        .iter()
        .map(|e| (e.path.as_str(), e.blob.as_str()))
        .collect();
    let poms: std::collections::HashSet<&str> = original
        .iter()
        .chain(patched)
        .filter_map(|e| {
            if e.path == "pom.xml" {
                Some("")
            } else {
                e.path.strip_suffix("/pom.xml")
            }
        })
        .collect();
    let mut changed: Vec<&str> = a
        .iter()
        .filter(|(p, blob)| b.get(*p) != Some(*blob))
        .map(|(p, _)| *p)
        .chain(b.keys().filter(|p| !a.contains_key(*p)).copied())
        .filter(|p| etip_toolchain::paths::is_source(lang, p))
        .collect();
    changed.sort();
    let mut modules: Vec<String> = changed
        .iter()
        .map(|p| etip_toolchain::paths::module_of(lang, p, &mut |d| poms.contains(d)))
        .filter(|m| !m.is_empty())
        .collect();
    modules.sort();
    modules.dedup();
    modules
}

fn detect_version_key(v: &str) -> Vec<u64> {
    v.split('.').filter_map(|p| p.parse().ok()).collect()
}

trait WithContext {
    fn with_context(self, ctx: impl Into<LayerContext>) -> (LayerSpec, LayerContext);
}

impl WithContext for LayerSpec {
    fn with_context(self, ctx: impl Into<LayerContext>) -> (LayerSpec, LayerContext) {
        (self, ctx.into())
    }
}

#[derive(Debug)]
enum LayerFailure {
    Engine(EngineError),
    Context(String),
    Build(EngineError, String),
}

/// The failures every layer shares (engine, context, time limit); a failed build run comes back
/// as its error and log for the layer's own classification.
fn common_failure(f: LayerFailure, layer: &str) -> Result<Failure, (EngineError, String)> {
    match f {
        LayerFailure::Engine(e) => Ok(Failure::new(FailureKind::Engine, e.to_string())),
        LayerFailure::Context(e) => Ok(Failure::new(FailureKind::Checkout, e)),
        LayerFailure::Build(EngineError::BuildTimeout { secs, .. }, _) => Ok(Failure::new(
            FailureKind::Timeout,
            format!("the {layer} layer build exceeded {secs} s"),
        )),
        LayerFailure::Build(e, log) => Err((e, log)),
    }
}

fn classify_env_failure(f: LayerFailure, version: &str, lang: Language) -> Failure {
    let (e, log) = match common_failure(f, "env") {
        Ok(failure) => return failure,
        Err(build) => build,
    };
    match (e, log) {
        (
            EngineError::Build {
                exit_code: Some(spec::EXIT_TOOLCHAIN),
                ..
            },
            log,
        ) => Failure {
            kind: FailureKind::NoBaseImage,
            reason: match lang {
                Language::Java => format!("no base image for JDK {version}"),
                Language::Python => format!("no base image for Python {version}"),
            },
            detail: tail(&log, 20),
        },
        (e @ EngineError::Build { .. }, log) => Failure::new(
            FailureKind::DependencyResolution,
            format!("{e}\n{}", tail(&log, 40)),
        ),
        (e, log) => Failure::new(FailureKind::Engine, format!("{e}\n{}", tail(&log, 20))),
    }
}

fn classify_instance_failure(f: LayerFailure) -> Failure {
    let (e, log) = match common_failure(f, "instance") {
        Ok(failure) => return failure,
        Err(build) => build,
    };
    match (e, log) {
        (
            e @ EngineError::Build {
                exit_code: Some(code @ (spec::EXIT_ORIGINAL | spec::EXIT_PATCHED)),
                ..
            },
            log,
        ) => {
            let which = if code == spec::EXIT_ORIGINAL {
                "original"
            } else {
                "patched"
            };
            let marker = format!("etip: building {which}");
            let section = match log.rfind(&marker) {
                Some(at) => {
                    let rest = &log[at + marker.len()..];
                    let end = rest.find("etip: building ").unwrap_or(rest.len());
                    &log[at..at + marker.len() + end]
                }
                None => &log,
            };
            let detail = format!("{e}\n{}", tail(section, 40));
            if is_dependency_failure(section) {
                Failure {
                    kind: FailureKind::DependencyResolution,
                    reason: format!("dependency resolution failed ({which})"),
                    detail,
                }
            } else if code == spec::EXIT_ORIGINAL {
                Failure::new(FailureKind::OriginalCompile, detail)
            } else {
                Failure::new(FailureKind::PatchedCompile, detail)
            }
        }
        (e, log) => Failure::new(FailureKind::Engine, format!("{e}\n{}", tail(&log, 20))),
    }
}

fn append_bytes<W: std::io::Write>(
    b: &mut tar::Builder<W>,
    path: &str,
    data: &[u8],
    mode: u32,
) -> Result<(), String> {
    let mut h = tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(mode);
    h.set_mtime(0);
    h.set_entry_type(tar::EntryType::Regular);
    b.append_data(&mut h, path, data)
        .map_err(|e| format!("adding {path} to the build context: {e}"))
}

fn append_dir<W: std::io::Write>(b: &mut tar::Builder<W>, path: &str) -> Result<(), String> {
    let mut h = tar::Header::new_gnu();
    h.set_size(0);
    h.set_mode(0o755);
    h.set_mtime(0);
    h.set_entry_type(tar::EntryType::Directory);
    b.append_data(&mut h, format!("{path}/"), std::io::empty())
        .map_err(|e| format!("adding {path}/ to the build context: {e}"))
}

/// Copies the entries of a `git archive` tar into the context; returns (files, bytes).
fn copy_tar<W: std::io::Write>(
    path: &Path,
    b: &mut tar::Builder<W>,
) -> Result<(usize, u64), String> {
    let f = std::fs::File::open(path).map_err(|e| format!("opening {}: {e}", path.display()))?;
    let mut archive = tar::Archive::new(f);
    let (mut files, mut bytes) = (0usize, 0u64);
    let entries = archive
        .entries()
        .map_err(|e| format!("reading {}: {e}", path.display()))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("reading {}: {e}", path.display()))?;
        let kind = entry.header().entry_type();
        let p = entry
            .path()
            .map_err(|e| format!("reading {}: {e}", path.display()))?
            .into_owned();
        let mut h = entry.header().clone();
        match kind {
            tar::EntryType::Regular | tar::EntryType::Directory => {
                if kind == tar::EntryType::Regular {
                    files += 1;
                    bytes += entry.size();
                }
                b.append_data(&mut h, &p, &mut entry)
                    .map_err(|e| format!("copying {} into the context: {e}", p.display()))?;
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(|e| format!("reading link {}: {e}", p.display()))?
                    .map(|t| t.into_owned())
                    .unwrap_or_default();
                b.append_link(&mut h, &p, &target)
                    .map_err(|e| format!("copying link {} into the context: {e}", p.display()))?;
            }
            _ => {}
        }
    }
    Ok((files, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_candidates_with_extra_fields() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.jsonl");
        std::fs::write(
            &p,
            "{\"id\":\"a\",\"language\":\"java\",\"base_commit\":\"b\",\"patched_commit\":\"c\",\"repo\":\"o/n\",\"score\":1.5,\"files\":[\"x\"]}\n\n\
             {\"id\":\"b\",\"language\":\"python\",\"base_commit\":\"b\",\"patched_commit\":\"c\",\"source\":\"/tmp/x\"}\n",
        )
        .unwrap();
        let e = EtipInput::read_jsonl(&p).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].source.as_deref(), Some("https://github.com/o/n.git"));
        assert_eq!(e[1].language, Language::Python);
        std::fs::write(
            &p,
            "{\"id\":\"a\",\"language\":\"java\",\"base_commit\":\"b\",\"patched_commit\":\"c\"}\n",
        )
        .unwrap();
        assert!(matches!(
            EtipInput::read_jsonl(&p),
            Err(BuildError::NoSource { line: 1, .. })
        ));
        std::fs::write(&p, "{\"id\":\"a\",\"language\":\"cobol\"}\n").unwrap();
        assert!(matches!(
            EtipInput::read_jsonl(&p),
            Err(BuildError::Parse { line: 1, .. })
        ));
    }

    #[test]
    fn dependency_failures_are_recognised() {
        assert!(is_dependency_failure(
            "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project"
        ));
        assert!(!is_dependency_failure(
            "[ERROR] /work/patched/src/main/java/A.java:[3,1] ';' expected"
        ));
    }
}
