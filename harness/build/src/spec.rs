//! One spec per instance drives the Dockerfiles, the build scripts and the content keys of the env
//! and instance layers (SWE-bench's `TestSpec` idea).

use crate::config::BuildConfig;
use etip_core::Language;
use sha2::{Digest, Sha256};

/// Bumped whenever the generated Dockerfiles or scripts change meaning.
pub const LAYER_RECIPE_VERSION: &str = "layers-3";

/// Where things live inside the images.
pub const ORIGINAL_DIR: &str = "/work/original";
pub const PATCHED_DIR: &str = "/work/patched";
/// Local Maven repository of the default offline configuration.
pub const ENV_VENV: &str = "/opt/etip/venv";
pub const VENVS: &str = "/opt/etip/venvs";
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The Maven extension that removes Debian Surefire 2.22.3's 10-second wait after each forked test
/// run (see `harness/build/maven-ext/README.md`), built by the Java env layer.
pub const SUREFIRE_FIX_JAR: &str = "/opt/etip/surefire-fix.jar";

/// Sources of that extension, by path under `src/`.
pub const SUREFIRE_FIX_SOURCES: &[(&str, &str)] = &[
    (
        "etip/sfx/SurefireStdinFix.java",
        include_str!("../maven-ext/src/etip/sfx/SurefireStdinFix.java"),
    ),
    (
        "org/apache/maven/surefire/shade/org/apache/maven/shared/utils/cli/StreamFeeder.java",
        include_str!(
            "../maven-ext/src/org/apache/maven/surefire/shade/org/apache/maven/shared/utils/cli/StreamFeeder.java"
        ),
    ),
    (
        "META-INF/sisu/javax.inject.Named",
        include_str!("../maven-ext/src/META-INF/sisu/javax.inject.Named"),
    ),
];

/// Builds the Surefire fix where the image has Debian's Maven and Surefire jars (a failure only
/// costs time: timed runs then wait as before).
const SUREFIRE_FIX_BUILD: &str = r#"if [ -f /usr/share/java/maven-surefire-common.jar ] && command -v javac >/dev/null 2>&1 && command -v jar >/dev/null 2>&1; then
  core=$(ls /usr/share/maven/lib/maven-core-*.jar 2>/dev/null | head -n 1)
  if ( cd /opt/etip/surefire-fix && mkdir -p classes        && javac -nowarn --release 8 -d classes -cp "$core:/usr/share/java/plexus-classworlds.jar:/usr/share/maven/lib/javax.inject.jar:/usr/share/java/maven-surefire-common.jar" $(find src -name '*.java')        && cp -r src/META-INF classes/ && jar cf /opt/etip/surefire-fix.jar -C classes . ) >/tmp/etip-sfx.log 2>&1; then
    echo 'etip: built the Surefire stdin fix (no 10 s wait after forked test runs)'
  else
    cat /tmp/etip-sfx.log; echo 'etip: the Surefire stdin fix was not built; each timed Maven run waits about 10 s more'
  fi
  rm -f /tmp/etip-sfx.log
fi
rm -rf /opt/etip/surefire-fix
"#;

/// Folder of etip's pytest plugin in Python images (on `PYTHONPATH` of test runs).
pub const PYTEST_PLUGINS: &str = "/opt/etip/pytest-plugins";

/// The pytest plugin that runs tests in sorted node-id order (`-p etip_sorted`), written by the
/// Python env layer.
const PYTEST_SORTED_PLUGIN: &str =
    "\"\"\"etip: run the collected tests in sorted node-id order.\"\"\"


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.nodeid)
";

/// Exit codes of the generated scripts, mapped to failure reasons.
pub const EXIT_TOOLCHAIN: i64 = 3;
pub const EXIT_ORIGINAL: i64 = 10;
pub const EXIT_PATCHED: i64 = 11;
pub const EXIT_SETUP: i64 = 12;

/// Quotes a word for `sh`.
pub fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn words(v: &[String]) -> String {
    v.iter().map(|w| sh_quote(w)).collect::<Vec<_>>().join(" ")
}

pub use etip_toolchain::descriptors::is_descriptor;

/// Maven arguments of the configuration (including `-s` when a settings file is configured).
pub fn maven_args(cfg: &BuildConfig) -> Vec<String> {
    let mut args = cfg.java.args.clone();
    if !cfg.java.settings.is_empty() {
        args.push("-s".into());
        args.push("/opt/etip/scripts/settings.xml".into());
    }
    args
}

/// `export MAVEN_OPTS=...` for the build scripts (empty when not configured).
fn maven_opts_line(cfg: &BuildConfig) -> String {
    if cfg.java.maven_opts.is_empty() {
        String::new()
    } else {
        format!("export MAVEN_OPTS={}\n", sh_quote(&cfg.java.maven_opts))
    }
}

/// The shell snippet choosing the Maven command inside a tree.
fn maven_command(cfg: &BuildConfig) -> String {
    if cfg.java.command == "auto" {
        "if [ -f ./mvnw ]; then M='sh ./mvnw'; else M=mvn; fi".into()
    } else {
        format!("M={}", sh_quote(&cfg.java.command))
    }
}

/// How etip makes a layer, as the comment heading the equivalent Dockerfiles.
const HOW: &str = "\
# Equivalent Dockerfile; etip does not run it. It extracts the context and runs the script in
# one container (network none unless env_network opens it for the env layer; CPU, memory and
# time limits), archives the files the script created or changed plus whiteouts for the ones it
# deleted, and loads that archive as one layer on the parent image, with the labels, WORKDIR
# /work and CMD [\"/bin/bash\"]. Files left under /tmp are not kept.
";

/// The env layer as an equivalent Dockerfile (written to the log folder and part of the content
/// key). etip builds it in one container ([`etip_docker::Engine::build_layer`]): the context holds
/// `opt/etip/scripts/` and `opt/etip/env-src/` (the build descriptors).
pub fn env_dockerfile(base: &str) -> String {
    format!(
        "{HOW}\
         FROM {base}\n\
         COPY opt/ /opt/\n\
         RUN sh /opt/etip/scripts/env.sh\n"
    )
}

/// Script of the env layer: toolchain check, toolchain setup, dependency resolution.
pub fn env_script(cfg: &BuildConfig, lang: Language, version: &str) -> String {
    let mut s = String::from("#!/bin/sh\n# generated by etip: env layer\nset -u\n");
    match lang {
        Language::Java => {
            s.push_str(&format!(
                "have=$(javac -version 2>&1 | sed -n 's/^javac \\([0-9][0-9]*\\).*/\\1/p')\n\
                 if [ \"$have\" = 1 ]; then have=$(javac -version 2>&1 | sed -n 's/^javac 1\\.\\([0-9]*\\).*/\\1/p'); fi\n\
                 if [ \"$have\" != {v} ]; then echo \"etip: the base image provides JDK ${{have:-none}}, not JDK {v}\"; exit {EXIT_TOOLCHAIN}; fi\n",
                v = sh_quote(version)
            ));
            s.push_str(&maven_opts_line(cfg));
            s.push_str("mkdir -p /opt/etip /work\n");
            for cmd in &cfg.java.env_setup {
                s.push_str(&format!(
                    "{cmd} || {{ echo 'etip: env setup failed: {}'; exit {EXIT_SETUP}; }}\n",
                    cmd.replace('\'', "")
                ));
            }
            s.push_str(SUREFIRE_FIX_BUILD);
            let args = maven_args(cfg);
            if args.iter().any(|a| a == "-o" || a == "--offline") {
                // Offline, Maven cannot add anything to the local repository: a resolution run
                // would only cost time (its failure never stopped the build either).
                s.push_str(
                    "echo 'etip: Maven runs offline (-o): dependencies come from the local repository as is, nothing to resolve here'\n",
                );
            } else {
                s.push_str(&format!(
                "cd /opt/etip/env-src || exit {EXIT_SETUP}\n\
                 {choose}\n\
                 echo \"etip: resolving dependencies with $M\"\n\
                 $M {args} {goals}\n\
                 rc=$?\n\
                 if [ $rc -ne 0 ]; then echo \"etip: dependency pre-resolution from the build descriptors failed (exit $rc); the instance build resolves what it needs\"; fi\n",
                choose = maven_command(cfg),
                args = words(&args),
                goals = words(&cfg.java.resolve_goals),
            ));
            }
        }
        Language::Python => {
            s.push_str(&format!(
                "have=$(python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])')\n\
                 case \"$have\" in {v}|{v}.*) ;; *) echo \"etip: the base image provides Python $have, not {v}\"; exit {EXIT_TOOLCHAIN};; esac\n\
                 mkdir -p /opt/etip {VENVS} /work\n\
                 python3 -m venv --without-pip --system-site-packages {ENV_VENV} || {{ echo 'etip: cannot create the env venv (is python3-venv installed?)'; exit {EXIT_SETUP}; }}\n\
                 mkdir -p {PYTEST_PLUGINS} && cat > {PYTEST_PLUGINS}/etip_sorted.py <<'ETIP_PLUGIN'\n{PYTEST_SORTED_PLUGIN}ETIP_PLUGIN\n",
                v = sh_quote(version)
            ));
            if !cfg.python.deps_command.is_empty() {
                s.push_str(&format!(
                    "cd /opt/etip/env-src && . {ENV_VENV}/bin/activate && {cmd} || {{ echo 'etip: dependency installation failed'; exit 4; }}\n",
                    cmd = cfg.python.deps_command
                ));
            }
        }
    }
    s.push_str("rm -rf /opt/etip/env-src\n");
    s
}

/// The instance layer as an equivalent Dockerfile (context: `work/original/`, `work/patched/`,
/// `work/.etip/build.sh`).
pub fn instance_dockerfile(env: &str) -> String {
    format!("{HOW}FROM {env}\nCOPY work/ /work/\nRUN sh /work/.etip/build.sh\n")
}

/// What Maven prints when its own container fails to start, before any project is read. Seen once in
/// about 30 instance builds on fuse-overlayfs (`No implementation for ModelBuilder was bound`), never
/// again on a rerun: the build of that version is tried once more.
pub const MAVEN_STARTUP_FAILURE: &str = "com.google.inject.ProvisionException";

/// Script of the instance layer: builds the original, then the patched tree.
pub fn instance_script(cfg: &BuildConfig, lang: Language) -> String {
    let mut s = String::from("#!/bin/sh\n# generated by etip: instance layer\nset -u\n");
    match lang {
        Language::Java => {
            s.push_str(&maven_opts_line(cfg));
            s.push_str(&format!(
                "build() {{\n\
                 \x20 cd /work/$1 || exit $2\n\
                 \x20 {choose}\n\
                 \x20 echo \"etip: building $1 with $M\"\n\
                 \x20 for attempt in 1 2; do\n\
                 \x20   $M {args} {goals} > /tmp/etip-mvn-$1.log 2>&1 && {{ cat /tmp/etip-mvn-$1.log; rm -f /tmp/etip-mvn-$1.log; return 0; }}\n\
                 \x20   cat /tmp/etip-mvn-$1.log\n\
                 \x20   grep -q '{startup}' /tmp/etip-mvn-$1.log || break\n\
                 \x20   [ $attempt -eq 1 ] && echo \"etip: Maven failed to start (its dependency injection, before any project was read); trying once more\"\n\
                 \x20 done\n\
                 \x20 rm -f /tmp/etip-mvn-$1.log\n\
                 \x20 echo \"etip: $1 does not compile\"; exit $2\n\
                 }}\n",
                startup = MAVEN_STARTUP_FAILURE,
                choose = maven_command(cfg),
                args = words(&maven_args(cfg)),
                goals = words(&cfg.java.compile_goals),
            ));
        }
        Language::Python => {
            s.push_str(&format!(
                "export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1\n\
                 purelib='import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'\n\
                 ENV_SP=$({ENV_VENV}/bin/python -c \"$purelib\")\n\
                 build() {{\n\
                 \x20 V={VENVS}/$1\n\
                 \x20 python3 -m venv --without-pip --system-site-packages \"$V\" || exit {EXIT_SETUP}\n\
                 \x20 echo \"$ENV_SP\" > \"$(\"$V/bin/python\" -c \"$purelib\")/etip-env.pth\"\n\
                 \x20 cd /work/$1 || exit $2\n\
                 \x20 echo \"etip: building $1\"\n\
                 \x20 if [ -f pyproject.toml ] || [ -f setup.py ]; then\n\
                 \x20   ( . \"$V/bin/activate\" && {install} ) || {{ echo \"etip: $1 does not install\"; exit $2; }}\n\
                 \x20 fi\n\
                 \x20 \"$V/bin/python\" -m compileall -q -x '(^|/)(\\.git|\\.venv|venv|node_modules)(/|$)' . || {{ echo \"etip: $1 does not compile\"; exit $2; }}\n\
                 }}\n",
                install = cfg.python.install_command,
            ));
        }
    }
    if cfg.parallel_versions {
        s.push_str(&format!(
            "build original {EXIT_ORIGINAL} > /tmp/etip-original.log 2>&1 &\n\
             po=$!\n\
             build patched {EXIT_PATCHED} > /tmp/etip-patched.log 2>&1 &\n\
             pp=$!\n\
             wait $po; ro=$?\n\
             wait $pp; rp=$?\n\
             cat /tmp/etip-original.log /tmp/etip-patched.log\n\
             rm -f /tmp/etip-original.log /tmp/etip-patched.log\n\
             [ $ro -eq 0 ] || exit $ro\n\
             [ $rp -eq 0 ] || exit $rp\n"
        ));
    } else {
        s.push_str(&format!(
            "build original {EXIT_ORIGINAL}\nbuild patched {EXIT_PATCHED}\n"
        ));
    }
    s.push_str("echo 'etip: both versions built'\n");
    s
}

/// Environment for running tools in a tree of a built instance (`version`: original|patched).
pub fn run_env(cfg: &BuildConfig, lang: Language, version: &str, build_tool: &str) -> Vec<String> {
    match lang {
        Language::Java => vec![
            format!("ETIP_BUILD_TOOL={build_tool}"),
            format!("ETIP_MAVEN_ARGS={}", maven_args(cfg).join(" ")),
            // Maven ignores a missing extension jar.
            format!("MAVEN_OPTS=-Dmaven.ext.class.path={SUREFIRE_FIX_JAR}"),
        ],
        Language::Python => vec![
            format!("VIRTUAL_ENV={VENVS}/{version}"),
            format!("PATH={VENVS}/{version}/bin:{PATH}"),
            format!("PYTHONPATH={PYTEST_PLUGINS}"),
        ],
    }
}

/// A content key: sha256 over length-prefixed parts, as 16 hex digits.
pub fn key(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    hex::encode(h.finalize())[..16].to_string()
}

/// A Docker-tag-safe slug of an instance id, at most 60 characters.
pub fn id_slug(id: &str) -> String {
    let s: String = id
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let s: String = s.trim_matches('-').chars().take(60).collect();
    let s = s.trim_matches('-').to_string();
    if s.is_empty() { "instance".into() } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(
            sh_quote("-Dmaven.repo.local=/opt/etip/m2"),
            "-Dmaven.repo.local=/opt/etip/m2"
        );
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn scripts_use_the_configuration() {
        let cfg = BuildConfig::default();
        let s = instance_script(&cfg, Language::Java);
        assert!(s.contains("-o -B -Dmaven.repo.local=/opt/etip/m2 test-compile"));
        assert!(s.contains("build patched 11"));
        let p = instance_script(&cfg, Language::Python);
        assert!(p.contains("pip install --no-build-isolation --no-deps -e ."));
        let e = env_script(&cfg, Language::Java, "17");
        assert!(e.contains("ln -s /usr/share/maven-repo /opt/etip/m2"));
        // Offline (the default `-o`), nothing is resolved in the env layer.
        assert!(e.contains("Maven runs offline"));
        assert!(!e.contains("test -DfailIfNoTests=false"));
        let mut online = cfg.clone();
        online.java.args = vec!["-B".into(), "-Dmaven.repo.local=/opt/etip/m2".into()];
        let e = env_script(&online, Language::Java, "17");
        assert!(e.contains("-B -Dmaven.repo.local=/opt/etip/m2 test -DfailIfNoTests=false"));
        assert!(!e.contains("Maven runs offline"));
    }

    /// The instance script, run by `sh` on a copy of its trees with a stand-in `./mvnw`: a Maven that
    /// fails to start is tried once more; a project that does not compile is not.
    #[test]
    fn maven_startup_failures_are_tried_once_more() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap().to_string();
        let script = instance_script(&BuildConfig::default(), Language::Java)
            .replace("/work/", &format!("{root}/"))
            .replace("/tmp/etip-", &format!("{root}/etip-"));
        // original: fails to start once, then builds; patched: a compile error every time.
        let mvnw = |dir: &str, body: &str| {
            std::fs::create_dir_all(format!("{root}/{dir}")).unwrap();
            std::fs::write(format!("{root}/{dir}/mvnw"), body).unwrap();
        };
        mvnw(
            "original",
            &format!(
                "if [ -f started ]; then echo built >> runs; exit 0; fi\n\
                 touch started; echo startup >> runs\n\
                 echo '[ERROR] {MAVEN_STARTUP_FAILURE}: Unable to provision'; exit 1\n"
            ),
        );
        mvnw(
            "patched",
            "echo failed >> runs; echo '[ERROR] COMPILATION ERROR'; exit 1\n",
        );
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(EXIT_PATCHED as i32), "{log}");
        let runs = |d: &str| std::fs::read_to_string(format!("{root}/{d}/runs")).unwrap();
        assert_eq!(runs("original"), "startup\nbuilt\n", "{log}");
        assert_eq!(runs("patched"), "failed\n", "{log}");
        assert!(log.contains("Maven failed to start"), "{log}");
        assert!(log.contains("etip: patched does not compile"), "{log}");
        assert!(!log.contains("etip: original does not compile"), "{log}");
    }

    #[test]
    fn keys_and_slugs() {
        assert_eq!(key(&["a", "bc"]).len(), 16);
        assert_ne!(key(&["a", "bc"]), key(&["ab", "c"]));
        assert_eq!(id_slug("Apache/Commons#12 fix"), "apache-commons-12-fix");
    }
}
