//! The steps of one instance's build: its sources and toolchain ([`Job`]), then the base, env
//! and instance layers (see the crate docs), each reused when its content key exists.

use crate::config::{BaseRef, DepsAsOf};
use crate::context::{
    ContextError, WithContext, append_bytes, append_dir, copy_tar, descriptor_changes,
    descriptor_changes_log,
};
use crate::failure::{Failure, LayerFailure, classify_env_failure, classify_instance_failure};
use crate::{BuildError, Builder, EtipInput, base, git, instance, network, spec, toolchain};
use etip_core::instance::{FailureKind, InstanceStatus, Language, Layer, LayerKind, Toolchain};
use etip_core::measure::Version;
use etip_docker::{
    BuildContainer, LABEL_KIND, LABEL_MANAGED, LABEL_NAMESPACE, LayerContext, LayerSpec,
};
use etip_toolchain::detect;
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

/// What the layer steps of one instance share: its sources, toolchain and spec.
pub(crate) struct Job<'a> {
    pub(crate) etip: &'a EtipInput,
    /// The instance's log folder.
    pub(crate) dir: &'a Path,
    pub(crate) source: String,
    /// The repository holding both commits (only read when it is the user's).
    pub(crate) repo: git::Repo,
    pub(crate) base_commit: String,
    pub(crate) patched_commit: String,
    /// The original tree.
    pub(crate) tree: Vec<git::TreeEntry>,
    pub(crate) version: String,
    pub(crate) requested: Option<detect::Request>,
    /// Where the base image comes from.
    pub(crate) base_ref: BaseRef,
    /// Other configured versions and their images, newest first: what to try when this one
    /// proves incompatible.
    pub(crate) older: Vec<(String, BaseRef)>,
    /// The date the env layer resolves dependencies as of (Python), if any.
    pub(crate) deps_date: Option<spec::DepsDate>,
    pub(crate) ispec: instance::InstanceSpec,
    /// The build descriptors the patched commit changes ([`descriptor_changes`]).
    pub(crate) dependency_changes: Vec<String>,
    /// The task's environment spec (Python): its pre-install commands and packages go into the
    /// env layer.
    pub(crate) env_spec: Option<etip_core::task::EnvironmentSpec>,
}

impl Job<'_> {
    pub(crate) fn lang(&self) -> Language {
        self.etip.language
    }

    /// The build descriptors of the original tree, sorted by path.
    fn descriptors(&self) -> Vec<&git::TreeEntry> {
        let mut d: Vec<&git::TreeEntry> = self
            .tree
            .iter()
            .filter(|e| spec::is_descriptor(self.lang(), &e.path))
            .collect();
        d.sort_by(|a, b| a.path.cmp(&b.path));
        d
    }

    /// `mode blob path` of each descriptor (hashed into the env key, listed in context.txt).
    fn descriptor_list(&self) -> Vec<String> {
        self.descriptors()
            .iter()
            .map(|e| format!("{} {} {}", e.mode, e.blob, e.path))
            .collect()
    }

    /// The head of `context.txt`: source, commits, toolchain, layers, descriptors.
    fn summary(&self, base: &Layer, env: &Layer) -> String {
        let mut summary = format!(
            "instance {}\nsource {}\nread from {}\nbase_commit {}\npatched_commit {}\n\
             toolchain {} {} (requested {:?})\nbase {}\nenv {}\nenv descriptors:\n",
            self.etip.id,
            self.source,
            self.repo.dir.display(),
            self.base_commit,
            self.patched_commit,
            self.lang(),
            self.version,
            self.requested
                .as_ref()
                .map(|r| format!("{} from {}", r.value, r.source)),
            base.tag,
            env.tag
        );
        for d in self.descriptor_list() {
            summary.push_str(&format!("  {d}\n"));
        }
        summary.push_str(&descriptor_changes_log(&self.dependency_changes));
        summary
    }
}

/// Labels of an object in namespace `ns`.
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

/// Step 1 and 2: sources on the host, toolchain and base image reference, the instance spec;
/// records toolchain, environments and modules in `status`. Needs no engine: the local builder
/// ([`crate::local`]) shares it.
pub(crate) fn prepare<'a>(
    cfg: &crate::config::BuildConfig,
    out: &Path,
    etip: &'a EtipInput,
    dir: &'a Path,
    status: &mut InstanceStatus,
) -> Result<Job<'a>, Failure> {
    let source = etip.source();
    let crate::Sources {
        repo,
        base: base_commit,
        patched: patched_commit,
        patch,
    } = crate::sources(out, etip, &source)?;
    if patch.is_some() {
        status.patched_commit = patched_commit.clone();
        status.patch = patch;
    }
    let checkout = |e: git::GitError| Failure::new(FailureKind::Checkout, e.to_string());
    let tree = repo.ls_tree(&base_commit).map_err(checkout)?;
    let patched_tree = repo.ls_tree(&patched_commit).map_err(checkout)?;
    let dependency_changes =
        descriptor_changes(etip.language, &tree, &patched_tree, &|b| repo.blob(b).ok());
    status.dependency_changes = dependency_changes.clone();
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
    let lang = etip.language;
    let time = repo.commit_time(&base_commit).map_err(checkout)?;
    status.commit_time = Some(time);
    let paths: Vec<&str> = tree.iter().map(|e| e.path.as_str()).collect();
    let commit = toolchain::Commit {
        paths: &paths,
        read: &read,
        time,
    };
    let env_spec = etip
        .task
        .as_ref()
        .and_then(|t| t.environment.spec.as_ref())
        .filter(|_| lang == Language::Python);
    let chosen = match env_spec.and_then(|s| s.python.as_deref().map(|v| (v, &s.source))) {
        Some((v, source)) => toolchain::pinned_python(cfg, v, source)?,
        None => toolchain::select(cfg, lang, &commit)?,
    };
    let deps_date = deps_date(cfg, lang, time);
    let tool_of = |t: &[git::TreeEntry]| match lang {
        Language::Java if cfg.java.command != "auto" => cfg.java.command.clone(),
        Language::Java if t.iter().any(|e| e.path == "mvnw") => "./mvnw".to_string(),
        Language::Java => "mvn".to_string(),
        Language::Python => "pip".to_string(),
    };
    status.toolchain = Some(Toolchain {
        language: lang,
        version: chosen.version.clone(),
        requested: chosen.requested.as_ref().map(|r| r.value.clone()),
        source: chosen
            .requested
            .as_ref()
            .map(|r| r.source.clone())
            .unwrap_or_else(|| "default".into()),
        build_tool: tool_of(&tree),
        why: chosen.why.clone(),
        evidence: chosen.evidence.clone(),
        replaced: None,
        deps_as_of: deps_date.as_ref().map(|d| d.as_of.clone()),
        relaxed: Vec::new(),
        set_aside: Vec::new(),
        settings: env_spec
            .map(|s| toolchain::spec_settings(cfg, s, &chosen, deps_date.as_ref()))
            .unwrap_or_default(),
    });
    let modules = etip
        .changed_modules
        .clone()
        .unwrap_or_else(|| changed_modules(lang, &tree, &patched_tree));
    let ispec = instance::InstanceSpec::new(
        cfg,
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
    Ok(Job {
        etip,
        dir,
        source,
        repo,
        base_commit,
        patched_commit,
        tree,
        version: chosen.version.clone(),
        requested: chosen.requested.clone(),
        base_ref: chosen.base.clone(),
        older: chosen.older,
        deps_date,
        ispec,
        dependency_changes,
        env_spec: env_spec.cloned(),
    })
}

/// The date the env layer of a Python commit of `time` resolves its dependencies as of
/// (`python.deps_as_of`): the end of the commit's day (UTC), a configured day, or none.
fn deps_date(
    cfg: &crate::config::BuildConfig,
    lang: Language,
    time: i64,
) -> Option<spec::DepsDate> {
    if lang != Language::Python {
        return None;
    }
    let secs = match &cfg.python.deps_as_of {
        DepsAsOf::None => return None,
        DepsAsOf::Commit => (time.div_euclid(86_400) + 1) * 86_400,
        DepsAsOf::Date(d) => crate::config::day_start(d)?,
    };
    let when = time::OffsetDateTime::from_unix_timestamp(secs).ok()?;
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    Some(spec::DepsDate {
        as_of: when.format(format).ok()?,
        relax: cfg.python.relax_deps,
    })
}

impl Builder {
    /// The Maven settings file of the configuration, if any (Java only).
    fn maven_settings(&self, lang: Language) -> Result<Option<Vec<u8>>, Failure> {
        if lang != Language::Java || self.cfg.java.settings.is_empty() {
            return Ok(None);
        }
        etip_core::bounded::read_bytes_within(
            Path::new(&self.cfg.java.settings),
            etip_core::bounded::MAX_INPUT_BYTES,
            etip_core::bounded::MAX_LINE_BYTES,
        )
        .map(Some)
        .map_err(|e| {
            Failure::new(
                FailureKind::Input,
                format!("reading Maven settings {}: {e}", self.cfg.java.settings),
            )
        })
    }

    /// The content key of the env layer: everything that goes into it (`network`: the network
    /// settings that change the downloads, without credentials, [`network::Effective::key`]).
    fn env_key(
        &self,
        job: &Job,
        base: &Layer,
        texts: [&str; 2],
        settings: Option<&[u8]>,
        network: &str,
    ) -> String {
        let lang = job.lang();
        let settings_hash = settings
            .map(|s| spec::key(&[&String::from_utf8_lossy(s)]))
            .unwrap_or_default();
        let fix_hash = if lang == Language::Java {
            let parts: Vec<&str> = spec::SUREFIRE_FIX_SOURCES
                .iter()
                .chain(spec::COVERAGE_JAVA_SOURCES)
                .flat_map(|(p, t)| [*p, *t])
                .collect();
            spec::key(&parts)
        } else {
            String::new()
        };
        spec::key(&[
            spec::LAYER_RECIPE_VERSION,
            &fix_hash,
            &base.image_id,
            &lang.to_string(),
            &job.version,
            texts[0],
            texts[1],
            &job.descriptor_list().join("\n"),
            &settings_hash,
            network,
        ])
    }

    /// Fails the env layer `tag`, when it has to be built, if `env_network` names a network the
    /// engine does not have (the build container could not be created).
    fn check_env_network(&self, tag: &str) -> Result<(), Failure> {
        let Some(name) = self.cfg.env_network.named() else {
            return Ok(());
        };
        let engine = |e: etip_docker::EngineError| Failure::new(FailureKind::Engine, e.to_string());
        if self
            .rt
            .block_on(self.engine.image(tag))
            .map_err(engine)?
            .is_some()
            || self
                .rt
                .block_on(self.engine.network_exists(name))
                .map_err(engine)?
        {
            return Ok(());
        }
        Err(Failure::new(
            FailureKind::Input,
            format!(
                "env_network {name:?} is not a Docker network of this engine (create it, or use \"bridge\")"
            ),
        ))
    }

    /// The env layer's network settings ([`network`]): what `"auto"` finds on this host, the CA
    /// bundle read, the build container they make; logs where each setting came from (masked).
    fn env_network(
        &self,
        lang: Language,
        image: &str,
        log: &mut String,
    ) -> Result<(network::Effective, BuildContainer), Failure> {
        let mut eff = network::Effective::resolve(&self.cfg.network, &self.host);
        if !self.cfg.env_network.enabled() {
            log.push_str("etip: the env layer has no network (env_network = \"none\")\n");
            return Ok((eff, BuildContainer::default()));
        }
        log.push_str(&format!(
            "etip: the env layer's network: {}\n",
            self.cfg.env_network.as_str()
        ));
        for line in &eff.report {
            log.push_str(&format!("etip: network.{line}\n"));
        }
        let ca = match &eff.ca_bundle {
            Some(path) => read_ca_bundle(path).map(Some).or_else(|e| {
                if eff.ca_configured {
                    Err(Failure::new(
                        FailureKind::Input,
                        format!("network.ca_bundle: {e}"),
                    ))
                } else {
                    log.push_str(&format!("etip: network.ca_bundle (auto) left out: {e}\n"));
                    Ok(None)
                }
            })?,
            None => None,
        };
        if lang == Language::Java && eff.central_probe(&self.cfg) {
            let (answers, said) = self.ask_central(&eff, image, ca.as_deref());
            eff.central = Some(answers);
            log.push_str(&if answers {
                format!(
                    "etip: Maven Central ({}) answers from the env layer's network ({said}) and \
                     this host has no Maven mirror: Maven runs online in the env layer\n",
                    network::MAVEN_CENTRAL
                )
            } else {
                format!(
                    "etip: Maven Central ({}) does not answer from the env layer's network \
                     ({said}): Maven stays offline with the local repository; set \
                     network.maven_mirror_url (or a mirror in ~/.m2/settings.xml) to a repository \
                     reachable from there\n",
                    network::MAVEN_CENTRAL
                )
            });
        }
        let container = network::env_container(&self.cfg, &eff, lang, ca);
        Ok((eff, container))
    }

    /// Whether Maven Central answers from the env layer's network, and what it said: asked once
    /// per run and image ([`network::Effective::central_probe_run`]); the answer is part of the
    /// env layer's key, so a layer built offline is not reused once Central answers.
    fn ask_central(
        &self,
        eff: &network::Effective,
        image: &str,
        ca: Option<&[u8]>,
    ) -> (bool, String) {
        let mut asked = self.central.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(a) = asked.get(image) {
            return a.clone();
        }
        let spec = eff.central_probe_run(&self.cfg, image, ca);
        let answer = match self.rt.block_on(self.engine.run(&spec)) {
            Ok(out) if out.timed_out => (false, "no answer within 30 s".to_string()),
            Ok(out) => {
                let said = format!("{}{}", out.stdout, out.stderr);
                let said = eff.redact(said.trim());
                let said = said.lines().last().unwrap_or("").to_string();
                (out.exit_code == Some(0), said)
            }
            Err(e) => (false, format!("the probe container failed: {e}")),
        };
        asked.insert(image.to_string(), answer.clone());
        answer
    }

    /// Step 3: the env layer (toolchain check, dependencies from the build descriptors).
    pub(crate) fn env_layer(
        &self,
        job: &Job,
        base: &Layer,
        log: &mut String,
    ) -> Result<Layer, Failure> {
        let lang = job.lang();
        let dockerfile = spec::env_dockerfile(&base.tag);
        let script = spec::env_script(
            &self.cfg,
            lang,
            &job.version,
            job.deps_date.as_ref(),
            job.env_spec.as_ref(),
        );
        let settings = self.maven_settings(lang)?;
        let mut env_log = String::new();
        let (net, container) = self.env_network(lang, &base.tag, &mut env_log)?;
        let net_key = net.key(&self.cfg, lang);
        let key = self.env_key(
            job,
            base,
            [&dockerfile, &script],
            settings.as_deref(),
            &net_key,
        );
        let repo_slug = git::slug(&job.source);
        let tag = job.ispec.env_tag(&repo_slug, &key);
        self.check_env_network(&tag)?;
        let _ = std::fs::write(job.dir.join("Dockerfile.env"), &dockerfile);
        let _ = std::fs::write(job.dir.join("env.sh"), &script);
        log.push_str(&descriptor_changes_log(&job.dependency_changes));
        let lock = self.tag_lock(&tag);
        let _held = lock.lock().unwrap_or_else(|p| p.into_inner());
        let built = self.layer_in(
            LayerKind::Env,
            &tag,
            base.size_bytes,
            &mut env_log,
            &container,
            || {
                let ctx = env_context(job, &script, settings.as_deref())?;
                Ok(LayerSpec {
                    parent: base.tag.clone(),
                    tag: tag.clone(),
                    cmd: vec!["sh".into(), "/opt/etip/scripts/env.sh".into()],
                    workdir: "/work".into(),
                    labels: labels(
                        &self.cfg.namespace,
                        "env",
                        &[
                            ("etip.key", key.clone()),
                            ("etip.language", lang.to_string()),
                            ("etip.repo", repo_slug.clone()),
                            ("etip.toolchain", job.version.clone()),
                        ],
                    ),
                    network_enabled: self.cfg.env_network.enabled(),
                    limits: self.build_limits(),
                    tree_cache: Some(self.tree_cache()),
                    cache_tree: true,
                    capture: Vec::new(),
                }
                .with_context(ctx))
            },
        );
        // Credentials never reach the log or a status, whatever a tool printed.
        log.push_str(&net.redact(&env_log));
        built.map_err(|f| {
            let mut f = classify_env_failure(f, &job.version, lang);
            f.detail = net.redact(&f.detail);
            f
        })
    }

    /// Step 4: the instance layer (both trees, both built).
    pub(crate) fn instance_layer(
        &self,
        job: &Job,
        base: &Layer,
        env: &Layer,
        log: &mut String,
    ) -> Result<Layer, Failure> {
        let dockerfile = spec::instance_dockerfile(&env.tag);
        let script = spec::instance_script(&self.cfg, job.lang(), &job.ispec.modules);
        let key = spec::key(&[
            spec::LAYER_RECIPE_VERSION,
            &env.image_id,
            &job.base_commit,
            &job.patched_commit,
            &dockerfile,
            &script,
        ]);
        let tag = job.ispec.instance_tag(&key);
        let _ = std::fs::write(job.dir.join("Dockerfile.instance"), &dockerfile);
        let _ = std::fs::write(job.dir.join("build.sh"), &script);
        let mut summary = job.summary(base, env);
        let lock = self.tag_lock(&tag);
        // The instance context (both trees) is written to a file and streamed to the engine.
        let ctx_dir = tempfile::tempdir();
        let held = lock.lock().unwrap_or_else(|p| p.into_inner());
        let layer = self
            .layer(LayerKind::Instance, &tag, env.size_bytes, log, || {
                let tmp = ctx_dir
                    .as_ref()
                    .map_err(|e| std::io::Error::new(e.kind(), e.to_string()))?;
                let ctx = instance_context(job, tmp.path(), &script, &mut summary)?;
                Ok(LayerSpec {
                    parent: env.tag.clone(),
                    tag: tag.clone(),
                    cmd: vec!["sh".into(), "/work/.etip/build.sh".into()],
                    workdir: "/work".into(),
                    labels: labels(
                        &self.cfg.namespace,
                        "instance",
                        &[
                            ("etip.key", key.clone()),
                            ("etip.instance", job.etip.id.clone()),
                            ("etip.language", job.lang().to_string()),
                            ("etip.base_commit", job.base_commit.clone()),
                            ("etip.patched_commit", job.patched_commit.clone()),
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
            })
            .map_err(|f| classify_instance_failure(f).with_extensions(&job.etip.extension_files));
        drop(held);
        let _ = std::fs::write(job.dir.join("context.txt"), &summary);
        layer
    }

    /// The base layer: the bootstrapped image (built when missing) or a configured image.
    pub(crate) fn base_layer(
        &self,
        base_ref: &BaseRef,
        log: &mut String,
    ) -> Result<Layer, Failure> {
        let engine_err = |e: String| Failure::new(FailureKind::Engine, e);
        let base_ref = match base_ref {
            BaseRef::Image(r) => r.as_str(),
            BaseRef::Bootstrap(suite) => {
                let mut lines = Vec::new();
                let img = self
                    .bootstrap_suite(suite, false, &mut |l: &str| lines.push(l.to_string()))
                    .map_err(|e| match e {
                        // The engine failed, not the ETIP: a failure of the run.
                        BuildError::Engine(_)
                        | BuildError::Bootstrap(base::BootstrapError::Engine(_)) => {
                            engine_err(format!("bootstrapping the base image failed: {e}"))
                        }
                        _ => Failure {
                            kind: FailureKind::NoBaseImage,
                            reason: format!("no base image of {suite}"),
                            detail: format!("bootstrapping the {suite} base image failed: {e}"),
                        },
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
        };
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
        make: impl FnOnce() -> Result<(LayerSpec, LayerContext), ContextError>,
    ) -> Result<Layer, LayerFailure> {
        let container = BuildContainer::default();
        self.layer_in(kind, tag, parent_size, log, &container, make)
    }

    /// [`Builder::layer`] in a build container that also gets `container`'s network, variables
    /// and files (none of which the image keeps, see `etip_docker::build_container`).
    fn layer_in(
        &self,
        kind: LayerKind,
        tag: &str,
        parent_size: i64,
        log: &mut String,
        container: &BuildContainer,
        make: impl FnOnce() -> Result<(LayerSpec, LayerContext), ContextError>,
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
                let result = self.rt.block_on(self.engine.build_layer_in(
                    &spec,
                    ctx,
                    container,
                    &mut |l: &str| {
                        lines.push_str(l);
                        lines.push('\n');
                    },
                ));
                log.push_str(&lines);
                result.map_err(|e| LayerFailure::Build(e, lines))?;
                let info = self
                    .rt
                    .block_on(self.engine.image(tag))
                    .map_err(LayerFailure::Engine)?
                    .ok_or_else(|| {
                        LayerFailure::Context(ContextError::ImageMissing { tag: tag.into() })
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

/// Why a CA bundle cannot be used.
#[derive(Debug, thiserror::Error)]
enum CaBundleError {
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} holds no PEM certificate")]
    NoCertificate { path: String },
}

/// The PEM text of a CA bundle (at most 16 MiB, with at least one certificate).
fn read_ca_bundle(path: &str) -> Result<Vec<u8>, CaBundleError> {
    let text =
        etip_core::bounded::read_to_string_capped(Path::new(path), 16 << 20).map_err(|source| {
            CaBundleError::Read {
                path: path.into(),
                source,
            }
        })?;
    if !text.contains("-----BEGIN CERTIFICATE-----") {
        return Err(CaBundleError::NoCertificate { path: path.into() });
    }
    Ok(text.into_bytes())
}

/// The env layer's context: its script, the Maven settings and Surefire fix (Java), and the
/// build descriptors under `opt/etip/env-src/`.
pub(crate) fn env_context(
    job: &Job,
    script: &str,
    settings: Option<&[u8]>,
) -> Result<Vec<u8>, ContextError> {
    let mut b = tar::Builder::new(Vec::new());
    append_dir(&mut b, "opt/etip/scripts")?;
    append_bytes(&mut b, "opt/etip/scripts/env.sh", script.as_bytes(), 0o755)?;
    if let Some(s) = settings {
        append_bytes(&mut b, "opt/etip/scripts/settings.xml", s, 0o644)?;
    }
    for (path, text) in spec::env_context_files(job.lang()) {
        append_bytes(&mut b, path, text.as_bytes(), 0o644)?;
    }
    if job.lang() == Language::Java {
        for (path, text) in spec::SUREFIRE_FIX_SOURCES {
            let at = format!("opt/etip/surefire-fix/src/{path}");
            append_bytes(&mut b, &at, text.as_bytes(), 0o644)?;
        }
        for (path, text) in spec::COVERAGE_JAVA_SOURCES {
            let at = format!("opt/etip/coverage-java/{path}");
            append_bytes(&mut b, &at, text.as_bytes(), 0o644)?;
        }
    }
    append_dir(&mut b, "opt/etip/env-src")?;
    for d in job.descriptors() {
        let content = job.repo.blob(&d.blob)?;
        let mode = if d.mode == "100755" { 0o755 } else { 0o644 };
        append_bytes(
            &mut b,
            &format!("opt/etip/env-src/{}", d.path),
            &content,
            mode,
        )?;
    }
    Ok(b.into_inner()?)
}

/// Writes the instance layer's context (the build script and both trees from `git archive`)
/// to `tmp/context.tar`; adds its size to `summary`.
pub(crate) fn instance_context(
    job: &Job,
    tmp: &Path,
    script: &str,
    summary: &mut String,
) -> Result<std::path::PathBuf, ContextError> {
    let o = tmp.join("original.tar");
    let p = tmp.join("patched.tar");
    let ctx_path = tmp.join("context.tar");
    let ctx_file = std::fs::File::create(&ctx_path).map_err(|source| ContextError::Create {
        path: ctx_path.clone(),
        source,
    })?;
    job.repo.archive(&job.base_commit, "work/original/", &o)?;
    job.repo.archive(&job.patched_commit, "work/patched/", &p)?;
    let mut b = tar::Builder::new(std::io::BufWriter::new(ctx_file));
    append_dir(&mut b, "work")?;
    append_dir(&mut b, "work/.etip")?;
    append_bytes(&mut b, "work/.etip/build.sh", script.as_bytes(), 0o755)?;
    let (mut files, mut bytes) = (0usize, 0u64);
    for t in [&o, &p] {
        let (n, sz) = copy_tar(t, &mut b)?;
        files += n;
        bytes += sz;
    }
    let mut w = b.into_inner()?;
    std::io::Write::flush(&mut w)?;
    drop(w);
    // The git archives are not needed once copied into the context.
    let _ = std::fs::remove_file(&o);
    let _ = std::fs::remove_file(&p);
    let tar_len = std::fs::metadata(&ctx_path).map(|m| m.len()).unwrap_or(0);
    summary.push_str(&format!(
        "instance context: {files} files, {bytes} bytes of sources, {tar_len} bytes of tar\n"
    ));
    Ok(ctx_path)
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
