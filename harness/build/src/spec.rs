//! One spec per instance drives the Dockerfiles, the build scripts and the content keys of the env
//! and instance layers (SWE-bench's `TestSpec` idea).

mod python_env;

use crate::config::BuildConfig;
use etip_core::Language;
use python_env::python_env_steps;
pub use python_env::{
    DepsDate, ENV_AS_OF, ENV_LOCK, ENV_REQUIREMENTS, PYDEPS_PATH, PYDEPS_SCRIPT, PYINSTALL_PATH,
    PYINSTALL_SCRIPT, REQUIREMENT_FAILED, UNAVAILABLE_BEFORE, env_context_files,
};
use sha2::{Digest, Sha256};

/// Bumped whenever the generated Dockerfiles or scripts change meaning.
pub const LAYER_RECIPE_VERSION: &str = "layers-5";

/// Where things live inside the images.
pub const ORIGINAL_DIR: &str = "/work/original";
pub const PATCHED_DIR: &str = "/work/patched";
/// Local Maven repository of the default offline configuration.
pub const ENV_VENV: &str = "/opt/etip/venv";
pub const VENVS: &str = "/opt/etip/venvs";
pub(crate) const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

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

/// Per-test-class coverage for `etip select` (see `harness/build/coverage-java/README.md`): the
/// sources the Java env layer builds into [`COVERAGE_DIR`], by path under `coverage-java/`.
pub const COVERAGE_JAVA_SOURCES: &[(&str, &str)] = &[
    ("build.sh", include_str!("../coverage-java/build.sh")),
    (
        "src/ext/META-INF/sisu/javax.inject.Named",
        include_str!("../coverage-java/src/ext/META-INF/sisu/javax.inject.Named"),
    ),
    (
        "src/ext/etip/covext/CoverageMojoListener.java",
        include_str!("../coverage-java/src/ext/etip/covext/CoverageMojoListener.java"),
    ),
    (
        "src/listener/META-INF/services/org.junit.platform.launcher.TestExecutionListener",
        include_str!(
            "../coverage-java/src/listener/META-INF/services/org.junit.platform.launcher.TestExecutionListener"
        ),
    ),
    (
        "src/listener/etip/cov/JUnit4Listener.java",
        include_str!("../coverage-java/src/listener/etip/cov/JUnit4Listener.java"),
    ),
    (
        "src/listener/etip/cov/PlatformListener.java",
        include_str!("../coverage-java/src/listener/etip/cov/PlatformListener.java"),
    ),
    (
        "src/listener/etip/cov/Recorder.java",
        include_str!("../coverage-java/src/listener/etip/cov/Recorder.java"),
    ),
    (
        "src/report/EtipCovReport.java",
        include_str!("../coverage-java/src/report/EtipCovReport.java"),
    ),
    (
        "src/unseal/etip/cov/unseal/Unseal.java",
        include_str!("../coverage-java/src/unseal/etip/cov/unseal/Unseal.java"),
    ),
];

/// Where the Java env layer puts the coverage tools (agent, listener, Maven extension, report).
pub const COVERAGE_DIR: &str = "/opt/etip/cov";

/// Builds the coverage tools when the image has Debian's JaCoCo, ASM, JUnit and Maven jars (else
/// says so: `etip select` then reports Java coverage as unavailable).
const COVERAGE_JAVA_BUILD: &str = "sh /opt/etip/coverage-java/build.sh /opt/etip/coverage-java /opt/etip/cov\nrm -rf /opt/etip/coverage-java\n";

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

/// etip's pytest plugin (`-p etip_sorted`, written by the Python env layer): tests in sorted
/// node-id order, and collection limited to the root's test folders when the project configures
/// no `testpaths` (see the script's docstring).
const PYTEST_SORTED_PLUGIN: &str = include_str!("../scripts/etip_sorted.py");

/// Exit codes of the generated scripts, mapped to failure reasons.
pub const EXIT_TOOLCHAIN: i64 = 3;
/// The env layer could not resolve the dependencies (or install the Maven wrapper's distribution).
pub const EXIT_DEPENDENCIES: i64 = 4;
pub const EXIT_ORIGINAL: i64 = 10;
pub const EXIT_PATCHED: i64 = 11;
pub const EXIT_SETUP: i64 = 12;
/// pip could not install a requirement the build descriptors declare (Python env layer): the
/// line starting with [`REQUIREMENT_FAILED`] names it (`dependency_resolution`).
pub const EXIT_DEPENDENCY: i64 = 15;
/// A requirement has no release before the env layer's date and was not relaxed (Python env
/// layer, [`PYINSTALL_SCRIPT`]): the line starting with [`UNAVAILABLE_BEFORE`] names it
/// (`dependency_unavailable_before`).
pub const EXIT_UNAVAILABLE_BEFORE: i64 = 16;
/// A version built but its smoke check failed (`environment_incomplete`).
pub const EXIT_SMOKE_ORIGINAL: i64 = 13;
pub const EXIT_SMOKE_PATCHED: i64 = 14;

/// Prefix of the lines saying what a failed smoke check found (one per problem, after it the
/// version: `etip: smoke failed: original: cannot import requests: No module named 'urllib3'`).
pub const SMOKE_FAILED: &str = "etip: smoke failed: ";
/// Prefix of the line naming the Maven wrapper's download URLs before it runs.
pub const WRAPPER_MARKER: &str = "etip: Maven wrapper: ";
/// Where the env layer keeps the Maven wrapper's jar (with its properties) for the instance layer;
/// the wrapper's Maven distribution stays where the wrapper put it (`~/.m2/wrapper/dists`).
pub const WRAPPER_SAVED: &str = "/opt/etip/mvnw";

/// The Python smoke check of one tree, run in it with the version's venv (see the README, "Smoke
/// check"): `python smoke.py VERSION MODULE... -- PYTEST_ARG...`.
const PYTHON_SMOKE: &str = include_str!("../scripts/etip_smoke.py");

/// What Maven prints when it cannot resolve an artifact (the env layer's `grep -E` alternatives;
/// the failure classification's signs). No regular-expression characters.
pub const MAVEN_RESOLUTION_ERRORS: [&str; 7] = [
    "Non-resolvable parent POM",
    "could not be resolved",
    "Could not resolve dependencies",
    "Could not transfer artifact",
    "Could not find artifact",
    "has not been downloaded from it before",
    "Cannot access",
];

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

/// The env layer's Maven steps, in the original's build descriptors (`/opt/etip/env-src`). The
/// Maven wrapper installs its distribution here (kept in the image under `~/.m2/wrapper`, its jar
/// in [`WRAPPER_SAVED`]): the instance layer has no network. Unless Maven runs offline (`-o`),
/// the dependencies are resolved; a resolution error fails the layer (`dependency_resolution`),
/// since the instance layer could not resolve them either, while a run failing for another
/// reason (a plugin needing sources the descriptors do not include) keeps what it resolved.
fn java_env_steps(cfg: &BuildConfig) -> String {
    let mut s = format!(
        "cd /opt/etip/env-src || exit {EXIT_SETUP}\n{choose}\n",
        choose = maven_command(cfg)
    );
    // The build container's Maven network settings, if any (`ETIP_MAVEN_ENV_ARGS`,
    // `ETIP_MAVEN_ONLINE`; see `network.rs`).
    s.push_str(crate::network::MAVEN_ENV_HOOK);
    s.push_str(&format!(
        r#"case "$M" in *mvnw*)
  echo "{WRAPPER_MARKER}$(grep -sE '^(distributionUrl|wrapperUrl)=' .mvn/wrapper/maven-wrapper.properties | tr -d '\r' | tr '\n' ' ')"
  echo "etip: installing the Maven wrapper's distribution with $M -v"
  $M -v > /tmp/etip-mvnw.log 2>&1; rc=$?
  cat /tmp/etip-mvnw.log; rm -f /tmp/etip-mvnw.log
  if [ $rc -ne 0 ]; then echo "etip: the Maven wrapper cannot install its Maven distribution (exit $rc), and the instance layer, without network, cannot either"; exit {EXIT_DEPENDENCIES}; fi
  if [ -f .mvn/wrapper/maven-wrapper.jar ]; then mkdir -p {WRAPPER_SAVED} && cp .mvn/wrapper/maven-wrapper.jar .mvn/wrapper/maven-wrapper.properties {WRAPPER_SAVED}/ || exit {EXIT_SETUP}; fi
  echo "etip: the wrapper's Maven is kept in $(ls -d "${{MAVEN_USER_HOME:-$HOME/.m2}}"/wrapper/dists/*/* 2>/dev/null | tr '\n' ' ')"
  ;;
esac
"#
    ));
    let args = maven_args(cfg);
    let offline = crate::network::maven_offline(&args);
    if offline {
        // Offline, Maven cannot add anything to the local repository: a resolution run
        // would only cost time. A Maven mirror (network.rs) makes the env layer's run online.
        s.push_str(
            "if [ \"$ETIP_MAVEN_ONLINE\" != 1 ]; then\n\
             echo 'etip: Maven runs offline (-o): dependencies come from the local repository as is, nothing to resolve here'\n\
             else\n",
        );
    }
    let args: Vec<String> = args
        .into_iter()
        .filter(|a| a != "-o" && a != "--offline")
        .collect();
    s.push_str(&format!(
        r#"echo "etip: resolving dependencies with $M"
$M $ETIP_MAVEN_ENV_ARGS {args} {goals} > /tmp/etip-resolve.log 2>&1; rc=$?
cat /tmp/etip-resolve.log
if [ $rc -ne 0 ]; then
  if grep -qE '{signs}' /tmp/etip-resolve.log; then
    echo "etip: resolving the dependencies of the build descriptors failed (exit $rc); the instance layer builds without network, so they would be missing there"
    exit {EXIT_DEPENDENCIES}
  fi
  echo "etip: the resolution run failed (exit $rc), not on an artifact (the env layer holds the build descriptors, not the sources); what it resolved stays in the local repository"
fi
rm -f /tmp/etip-resolve.log
"#,
        args = words(&args),
        goals = words(&cfg.java.resolve_goals),
        signs = MAVEN_RESOLUTION_ERRORS.join("|"),
    ));
    if offline {
        s.push_str("fi\n");
    }
    s
}

/// The env layer's JDK check: the image's default `javac` is JDK `version`, or one of its other
/// JDKs (`/usr/lib/jvm/java-<version>-*`, e.g. bullseye's 11 and 17) is made the default through
/// Debian's alternatives (kept in the layer, so Maven and the test runs use it too); else the
/// layer fails with [`EXIT_TOOLCHAIN`].
fn jdk_steps(version: &str) -> String {
    format!(
        r#"javac_feature() {{
  have=$(javac -version 2>&1 | sed -n 's/^javac \([0-9][0-9]*\).*/\1/p')
  if [ "$have" = 1 ]; then have=$(javac -version 2>&1 | sed -n 's/^javac 1\.\([0-9]*\).*/\1/p'); fi
}}
javac_feature
if [ "$have" != {v} ]; then
  for home in /usr/lib/jvm/java-{v}-*; do
    [ -x "$home/bin/javac" ] || continue
    echo "etip: JDK {v} of this image ($home) made the default (was JDK ${{have:-none}})"
    # The base image has no manual pages; the alternatives' manual-page links need the folder.
    mkdir -p /usr/share/man/man1
    for tool in "$home"/bin/*; do update-alternatives --set "$(basename "$tool")" "$tool" >/dev/null 2>&1 || true; done
    break
  done
  javac_feature
fi
if [ "$have" != {v} ]; then echo "etip: the base image provides JDK ${{have:-none}}, not JDK {v}"; exit {EXIT_TOOLCHAIN}; fi
"#,
        v = sh_quote(version)
    )
}

/// Script of the env layer: toolchain check, toolchain setup, dependency resolution (Python:
/// as of `date`, when given).
pub fn env_script(
    cfg: &BuildConfig,
    lang: Language,
    version: &str,
    date: Option<&DepsDate>,
    env_spec: Option<&etip_core::task::EnvironmentSpec>,
) -> String {
    let mut s = String::from("#!/bin/sh\n# generated by etip: env layer\nset -u\n");
    match lang {
        Language::Java => {
            s.push_str(&jdk_steps(version));
            s.push_str(&maven_opts_line(cfg));
            s.push_str("mkdir -p /opt/etip /work\n");
            for cmd in &cfg.java.env_setup {
                s.push_str(&format!(
                    "{cmd} || {{ echo 'etip: env setup failed: {}'; exit {EXIT_SETUP}; }}\n",
                    cmd.replace('\'', "")
                ));
            }
            s.push_str(SUREFIRE_FIX_BUILD);
            s.push_str(COVERAGE_JAVA_BUILD);
            s.push_str(&java_env_steps(cfg));
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
            if let Some(spec) = env_spec {
                for cmd in &spec.pre_install {
                    s.push_str(&format!(
                        "echo {shown}\n( {cmd}\n) || {{ echo {failed}; exit {EXIT_SETUP}; }}\n",
                        shown = sh_quote(&format!(
                            "etip: pre_install of the environment spec ({}): {cmd}",
                            spec.source
                        )),
                        failed = sh_quote(&format!(
                            "etip: env setup failed: the environment spec's pre_install command failed: {cmd}"
                        )),
                    ));
                }
            }
            let packages = env_spec.map(|s| s.packages.as_slice()).unwrap_or_default();
            s.push_str(&python_env_steps(date, packages));
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

/// The Maven smoke check of one built tree (`smoke VERSION`, run in the tree): in each changed
/// module (the root project when none), every test source Surefire runs by default
/// (`Test*.java`, `*Test.java`, `*Tests.java`, `*TestCase.java` under `src/test/java`) has its
/// class under `target/test-classes`. Modules absent from the tree or without test sources pass
/// (measure reports `no_tests`); modules whose `pom.xml` moves its test folders are not checked.
fn java_smoke(modules: &[String]) -> String {
    let mut list: Vec<String> = modules
        .iter()
        .filter(|m| !m.starts_with('/') && !m.split('/').any(|p| p == ".."))
        .map(|m| sh_quote(m))
        .collect();
    if modules.is_empty() {
        list.push("''".into());
    }
    format!(
        r#"smoke() {{
  bad=0
  for m in {list}; do
    case "$m" in ''|.) d=. ;; *) d=$m ;; esac
    [ -d "$d/src/test/java" ] || continue
    if grep -qE '<(testSourceDirectory|testOutputDirectory|testExcludes)>' "$d/pom.xml" 2>/dev/null; then
      echo "etip: smoke: $1: module $d sets its own test folders in pom.xml: its test classes are not checked"; continue
    fi
    missing=$(cd "$d/src/test/java" && find . -type f \( -name 'Test*.java' -o -name '*Test.java' -o -name '*Tests.java' -o -name '*TestCase.java' \) | sed 's|^\./||; s|\.java$||' | sort | while IFS= read -r c; do [ -f "../../../target/test-classes/$c.class" ] || echo "$c"; done)
    if [ -n "$missing" ]; then
      n=$(printf '%s\n' "$missing" | grep -c .)
      echo "{SMOKE_FAILED}$1: module $d: $n test class(es) not compiled to $d/target/test-classes (maven.test.skip set?): $(printf '%s\n' "$missing" | head -n 5 | tr '/' '.' | tr '\n' ' ')"
      bad=1
    else
      echo "etip: smoke: $1: module $d: the test classes are compiled"
    fi
  done
  return $bad
}}
"#,
        list = list.join(" ")
    )
}

/// Shell function `wrapper VERSION`, run in a tree built with the Maven wrapper: names the
/// wrapper's download URLs in the log and, when the tree lacks the wrapper's jar, copies the one
/// the env layer downloaded (same `maven-wrapper.properties` only).
fn java_wrapper() -> String {
    format!(
        r#"wrapper() {{
  p=.mvn/wrapper/maven-wrapper.properties
  [ -f "$p" ] || return 0
  echo "{WRAPPER_MARKER}$(grep -E '^(distributionUrl|wrapperUrl)=' "$p" | tr -d '\r' | tr '\n' ' ')"
  if [ ! -f .mvn/wrapper/maven-wrapper.jar ] && [ -f {WRAPPER_SAVED}/maven-wrapper.jar ] && cmp -s "$p" {WRAPPER_SAVED}/maven-wrapper.properties; then
    cp {WRAPPER_SAVED}/maven-wrapper.jar .mvn/wrapper/ && echo "etip: $1: the Maven wrapper's jar comes from the env layer"
  fi
}}
"#
    )
}

/// Script of the instance layer: builds the original and the patched tree, each followed by its
/// smoke check (`modules`: the changed modules, see [`crate::instance::InstanceSpec`]).
pub fn instance_script(cfg: &BuildConfig, lang: Language, modules: &[String]) -> String {
    let mut s = String::from("#!/bin/sh\n# generated by etip: instance layer\nset -u\n");
    s.push_str(&build_function(cfg, lang, modules));
    if cfg.parallel_versions {
        s.push_str(&format!(
            "build original {EXIT_ORIGINAL} {EXIT_SMOKE_ORIGINAL} > /tmp/etip-original.log 2>&1 &\n\
             po=$!\n\
             build patched {EXIT_PATCHED} {EXIT_SMOKE_PATCHED} > /tmp/etip-patched.log 2>&1 &\n\
             pp=$!\n\
             wait $po; ro=$?\n\
             wait $pp; rp=$?\n\
             cat /tmp/etip-original.log /tmp/etip-patched.log\n\
             rm -f /tmp/etip-original.log /tmp/etip-patched.log /tmp/etip-smoke.py\n\
             [ $ro -eq 0 ] || exit $ro\n\
             [ $rp -eq 0 ] || exit $rp\n"
        ));
    } else {
        s.push_str(&format!(
            "build original {EXIT_ORIGINAL} {EXIT_SMOKE_ORIGINAL}\n\
             build patched {EXIT_PATCHED} {EXIT_SMOKE_PATCHED}\n\
             rm -f /tmp/etip-smoke.py\n"
        ));
    }
    s.push_str("echo 'etip: both versions built and smoke-checked'\n");
    s
}

/// Exit code of the candidate script when the candidate does not build.
pub const EXIT_CANDIDATE: i64 = 20;
/// Exit code of the candidate script when the candidate's smoke check fails.
pub const EXIT_SMOKE_CANDIDATE: i64 = 21;

/// Script that builds an evaluated candidate (`etip eval`) exactly as the instance layer built the
/// version (same build function, same smoke check, same tree and environment): the candidate's
/// own container holds its copy of the image's tree of `version` (`original`; `patched` for a
/// generated test on the reference, `etip eval-test`), with the patch applied; the script runs
/// there after the patch is applied.
pub fn candidate_script(
    cfg: &BuildConfig,
    lang: Language,
    modules: &[String],
    version: &str,
) -> String {
    let mut s = String::from("#!/bin/sh\n# generated by etip: candidate build\nset -u\n");
    s.push_str(&build_function(cfg, lang, modules));
    s.push_str(&format!(
        "build {version} {EXIT_CANDIDATE} {EXIT_SMOKE_CANDIDATE}\n\
         rm -f /tmp/etip-smoke.py\n\
         echo 'etip: the candidate built and smoke-checked'\n"
    ));
    s
}

/// Shell function `build VERSION EXIT_BUILD EXIT_SMOKE` that builds `/work/VERSION` and runs its
/// smoke check (with the helpers it needs). A Python venv that exists is kept: a candidate's
/// rebuild in its container must not rewrite the interpreter's environment (recreating the venv
/// rewrote `pyvenv.cfg` and gave the fixture's allocation-heavy test a second, 20% faster mode in
/// the candidate only).
fn build_function(cfg: &BuildConfig, lang: Language, modules: &[String]) -> String {
    let mut s = String::new();
    match lang {
        Language::Java => {
            s.push_str(&maven_opts_line(cfg));
            s.push_str(&java_smoke(modules));
            s.push_str(&java_wrapper());
            s.push_str(&format!(
                "build() {{\n\
                 \x20 cd /work/$1 || exit $2\n\
                 \x20 {choose}\n\
                 \x20 echo \"etip: building $1 with $M\"\n\
                 \x20 case \"$M\" in *mvnw*) wrapper $1 ;; esac\n\
                 \x20 for attempt in 1 2; do\n\
                 \x20   $M {args} {goals} > /tmp/etip-mvn-$1.log 2>&1 && {{ cat /tmp/etip-mvn-$1.log; rm -f /tmp/etip-mvn-$1.log; smoke $1 || exit $3; return 0; }}\n\
                 \x20   cat /tmp/etip-mvn-$1.log\n\
                 \x20   grep -q '{startup}' /tmp/etip-mvn-$1.log || break\n\
                 \x20   [ $attempt -eq 1 ] && echo \"etip: Maven failed to start (its dependency injection, before any project was read); trying once more\"\n\
                 \x20 done\n\
                 \x20 rm -f /tmp/etip-mvn-$1.log\n\
                 \x20 echo \"etip: $1 does not build\"; exit $2\n\
                 }}\n",
                startup = MAVEN_STARTUP_FAILURE,
                choose = maven_command(cfg),
                args = words(&maven_args(cfg)),
                goals = words(&cfg.java.compile_goals),
            ));
        }
        Language::Python => {
            let mods: Vec<String> = modules.iter().map(|m| sh_quote(m)).collect();
            s.push_str(&format!(
                "cat > /tmp/etip-smoke.py <<'ETIP_SMOKE'\n{PYTHON_SMOKE}ETIP_SMOKE\n\
                 export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1\n\
                 purelib='import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'\n\
                 ENV_SP=$({ENV_VENV}/bin/python -c \"$purelib\")\n\
                 build() {{\n\
                 \x20 V={VENVS}/$1\n\
                 \x20 if [ ! -x \"$V/bin/python\" ]; then\n\
                 \x20   python3 -m venv --without-pip --system-site-packages \"$V\" || exit {EXIT_SETUP}\n\
                 \x20   echo \"$ENV_SP\" > \"$(\"$V/bin/python\" -c \"$purelib\")/etip-env.pth\"\n\
                 \x20 fi\n\
                 \x20 cd /work/$1 || exit $2\n\
                 \x20 echo \"etip: building $1\"\n\
                 \x20 if [ -f pyproject.toml ] || [ -f setup.py ]; then\n\
                 \x20   ( . \"$V/bin/activate\" && {install} ) > /tmp/etip-install-$1.log 2>&1; rc=$?\n\
                 \x20   cat /tmp/etip-install-$1.log\n\
                 \x20   if [ $rc -ne 0 ] && grep -q '{no_pep660}' /tmp/etip-install-$1.log; then\n\
                 \x20     R=$(pwd); [ -d src ] && R=\"$R/src\"\n\
                 \x20     echo \"$R\" > \"$(\"$V/bin/python\" -c \"$purelib\")/etip-tree.pth\" && rc=0\n\
                 \x20     echo \"etip: $1: this pip installs only setup.py projects in editable mode: the tree ($R) is put on the path instead\"\n\
                 \x20   fi\n\
                 \x20   rm -f /tmp/etip-install-$1.log\n\
                 \x20   [ $rc -eq 0 ] || {{ echo \"etip: $1 does not install\"; exit $2; }}\n\
                 \x20 fi\n\
                 \x20 \"$V/bin/python\" -m compileall -q -x '(^|/)(\\.git|\\.venv|venv|node_modules)(/|$)' . || {{ echo \"etip: $1 does not compile\"; exit $2; }}\n\
                 \x20 PYTHONPATH={PYTEST_PLUGINS}${{PYTHONPATH:+:$PYTHONPATH}} \"$V/bin/python\" /tmp/etip-smoke.py $1 {mods} -- {test_args} || exit $3\n\
                 }}\n",
                install = cfg.python.install_command,
                no_pep660 = "editable mode currently requires a setup.py",
                mods = mods.join(" "),
                test_args = words(&cfg.python.test_args),
            ));
        }
    }
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

/// The container paths etip's scripts and environments use, which a build without containers
/// ([`crate::local`]) places under a folder of its own: `/work` (the trees), `/opt/etip` (venvs,
/// plugins, scripts) and the `/tmp/etip*` scratch files.
const RELOCATED: [(&str, bool); 3] = [("/work", false), ("/opt/etip", false), ("/tmp/etip", true)];

/// `text` (a script or an environment entry etip generated) with every container path of
/// [`RELOCATED`] moved under `root`: `/work/original` becomes `<root>/work/original`,
/// `/tmp/etip-pip.log` `<root>/tmp/etip-pip.log`. A path is recognised only as a whole word:
/// `/workspace` and `/x/work` stay. `root` must be a plain absolute path (the scripts do not
/// quote it).
pub fn relocate(text: &str, root: &str) -> String {
    let root = root.trim_end_matches('/');
    let path_char = |c: char| c.is_ascii_alphanumeric() || "_.-/".contains(c);
    let mut out = String::with_capacity(text.len() + 64);
    let mut prev: Option<char> = None;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let hit = if prev.is_some_and(path_char) {
            None
        } else {
            RELOCATED.iter().find(|(p, open)| {
                rest.starts_with(p)
                    && (*open
                        || rest[p.len()..]
                            .chars()
                            .next()
                            .is_none_or(|c| c == '/' || !path_char(c)))
            })
        };
        if let Some((p, _)) = hit {
            out.push_str(root);
            out.push_str(p);
            i += p.len();
            prev = p.chars().last();
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        out.push(c);
        prev = Some(c);
        i += c.len_utf8();
    }
    out
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
        let s = instance_script(&cfg, Language::Java, &["core".into()]);
        assert!(s.contains("-o -B -Dmaven.repo.local=/opt/etip/m2 test-compile"));
        assert!(s.contains("build patched 11 14"));
        assert!(s.contains("for m in core; do"));
        let p = instance_script(&cfg, Language::Python, &["my pkg".into()]);
        assert!(p.contains("pip install --no-build-isolation --no-deps -e ."));
        assert!(p.contains("/tmp/etip-smoke.py $1 'my pkg' -- "));
        let e = env_script(&cfg, Language::Java, "17", None, None);
        assert!(e.contains("ln -s /usr/share/maven-repo /opt/etip/m2"));
        // Offline (the default `-o`), nothing is resolved in the env layer.
        assert!(e.contains("Maven runs offline"));
        // ... unless a Maven mirror makes the env layer's run online (network.rs).
        assert!(e.contains("if [ \"$ETIP_MAVEN_ONLINE\" != 1 ]; then"));
        assert!(e.contains("$M $ETIP_MAVEN_ENV_ARGS -B -Dmaven.repo.local=/opt/etip/m2 test"));
        let mut online = cfg.clone();
        online.java.args = vec!["-B".into(), "-Dmaven.repo.local=/opt/etip/m2".into()];
        let e = env_script(&online, Language::Java, "17", None, None);
        assert!(e.contains("-B -Dmaven.repo.local=/opt/etip/m2 test -DfailIfNoTests=false"));
        assert!(!e.contains("Maven runs offline"));
    }

    /// The instance script, run by `sh` on a copy of its trees with a stand-in `./mvnw`: a Maven that
    /// fails to start is tried once more; a project that does not compile is not.
    #[test]
    fn maven_startup_failures_are_tried_once_more() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap().to_string();
        let script = instance_script(&BuildConfig::default(), Language::Java, &[])
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
        assert!(log.contains("etip: patched does not build"), "{log}");
        assert!(!log.contains("etip: original does not build"), "{log}");
    }

    /// Runs `script` with `sh` after pointing etip's fixed paths into `root`; exit code and output.
    fn run_sh(script: &str, root: &str) -> (Option<i32>, String) {
        let script = script
            .replace("/work/", &format!("{root}/"))
            .replace("/opt/etip/", &format!("{root}/opt/"))
            .replace("/tmp/etip-", &format!("{root}/etip-"));
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&script)
            .env("HOME", root)
            .output()
            .unwrap();
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), log)
    }

    fn write(path: &str, text: &str) {
        let path = std::path::Path::new(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The Maven smoke check, run by `sh` after a stand-in `./mvnw` "compiled" the trees: a test
    /// class without its compiled class fails the version with its own exit code, naming it; a
    /// module without tests, and one the tree does not have, pass.
    #[test]
    fn maven_smoke_check_names_the_missing_test_class() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap().to_string();
        let modules = ["core".to_string(), "api".into(), "gone".into()];
        let script = instance_script(&BuildConfig::default(), Language::Java, &modules);
        // The stand-in compiles the test sources of `core` except those named in `skip`.
        let mvnw = "for f in $(cd core/src/test/java && find . -name '*.java'); do \
                    c=${f%.java}; grep -qx \"$c\" skip 2>/dev/null && continue; \
                    mkdir -p core/target/test-classes/$(dirname $c); \
                    touch core/target/test-classes/$c.class; done\n";
        for v in ["original", "patched"] {
            write(&format!("{root}/{v}/mvnw"), mvnw);
            for t in ["demo/FastTest", "demo/Helper", "demo/sub/TestSlow"] {
                write(&format!("{root}/{v}/core/src/test/java/{t}.java"), "");
            }
            write(&format!("{root}/{v}/api/src/main/java/demo/Api.java"), "");
        }
        write(&format!("{root}/patched/skip"), "./demo/sub/TestSlow\n");
        let (code, log) = run_sh(&script, &root);
        assert_eq!(code, Some(EXIT_SMOKE_PATCHED as i32), "{log}");
        assert!(
            log.contains(&format!(
                "{SMOKE_FAILED}patched: module core: 1 test class(es) not compiled to \
                 core/target/test-classes (maven.test.skip set?): demo.sub.TestSlow"
            )),
            "{log}"
        );
        assert!(
            log.contains("etip: smoke: original: module core: the test classes are compiled"),
            "{log}"
        );
        assert!(!log.contains(&format!("{SMOKE_FAILED}original")), "{log}");
    }

    /// The env layer's Maven steps, run by `sh` with a stand-in wrapper: resolution errors fail the
    /// layer (the instance layer has no network to make up for them), other failures of the
    /// descriptors-only run do not; a wrapper that cannot install its distribution fails it; the
    /// wrapper's jar is kept for the instance layer.
    #[test]
    fn maven_env_steps_fail_on_resolution_errors_only() {
        let mut online = BuildConfig::default();
        online.java.args = vec!["-B".into()];
        let steps = java_env_steps(&online).replace("/opt/etip/env-src", "/opt/etip/src");
        let case = |mvnw: &str| {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().to_str().unwrap().to_string();
            write(&format!("{root}/opt/src/mvnw"), mvnw);
            write(
                &format!("{root}/opt/src/.mvn/wrapper/maven-wrapper.properties"),
                "distributionUrl=https://repo.example/apache-maven-3.9.9-bin.zip\n",
            );
            write(
                &format!("{root}/opt/src/.mvn/wrapper/maven-wrapper.jar"),
                "jar",
            );
            let (code, log) = run_sh(&steps, &root);
            let kept = std::path::Path::new(&format!("{root}/opt/mvnw/maven-wrapper.jar")).exists();
            (code, log, kept)
        };
        let parent = "[ \"$1\" = -v ] && exit 0\n\
                      echo '[FATAL] Non-resolvable parent POM for demo:x:1.0: Could not transfer artifact org.sonatype.oss:oss-parent:pom:7'; exit 1\n";
        let (code, log, kept) = case(parent);
        assert_eq!(code, Some(EXIT_DEPENDENCIES as i32), "{log}");
        assert!(
            log.contains("the instance layer builds without network"),
            "{log}"
        );
        assert!(kept, "{log}");
        assert!(
            log.contains(&format!(
                "{WRAPPER_MARKER}distributionUrl=https://repo.example/apache-maven-3.9.9-bin.zip"
            )),
            "{log}"
        );
        let other = "[ \"$1\" = -v ] && exit 0\necho '[ERROR] checkstyle: config/checks.xml not found'; exit 1\n";
        let (code, log, _) = case(other);
        assert_eq!(code, Some(0), "{log}");
        assert!(log.contains("not on an artifact"), "{log}");
        let no_dist = "echo '- Error downloading: repo.maven.apache.org' >&2; exit 1\n";
        let (code, log, _) = case(no_dist);
        assert_eq!(code, Some(EXIT_DEPENDENCIES as i32), "{log}");
        assert!(
            log.contains("cannot install its Maven distribution"),
            "{log}"
        );
    }

    #[test]
    fn keys_and_slugs() {
        assert_eq!(key(&["a", "bc"]).len(), 16);
        assert_ne!(key(&["a", "bc"]), key(&["ab", "c"]));
        assert_eq!(id_slug("Apache/Commons#12 fix"), "apache-commons-12-fix");
    }

    /// The Python env steps, run by `sh` with a stand-in python (the real `etip_pydeps.py` runs
    /// with the host's python3; pip is faked): the requirements are written and installed and
    /// the lock recorded; a requirement pip cannot find fails with [`EXIT_DEPENDENCY`], named.
    #[test]
    fn python_env_steps_install_lock_and_name_failures() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap().to_string();
        let env = env_script(
            &BuildConfig::default(),
            Language::Python,
            "3.11",
            None,
            None,
        );
        assert!(env.contains(&python_env_steps(None, &[])), "{env}");
        assert!(env.contains(&format!("# etip_pydeps.py {}", key(&[PYDEPS_SCRIPT]))));
        let steps = python_env_steps(None, &[])
            .replace("/opt/etip", &root)
            .replace("/tmp/etip-", &format!("{root}/etip-"));
        for d in ["venv/bin", "scripts", "env-src"] {
            std::fs::create_dir_all(format!("{root}/{d}")).unwrap();
        }
        std::fs::write(format!("{root}/scripts/etip_pydeps.py"), PYDEPS_SCRIPT).unwrap();
        std::fs::write(format!("{root}/env-src/requirements.txt"), "requests>=2\n").unwrap();
        let python = format!("{root}/venv/bin/python");
        let run = |install: &str| {
            let fake = format!(
                "#!/bin/sh\n\
                 case \"$1\" in *etip_pydeps.py) exec python3 \"$@\" ;; esac\n\
                 case \"$3\" in\n\
                 \x20 --version) exit 0 ;;\n\
                 \x20 install) echo \"$*\" >> {root}/calls; {install} ;;\n\
                 \x20 freeze) echo pytest==7.2.1; echo requests==2.31.0 ;;\n\
                 esac\n"
            );
            std::fs::write(&python, fake).unwrap();
            std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::process::Command::new("sh")
                .arg("-c")
                .arg(&steps)
                .output()
                .unwrap()
        };
        let out = run("echo 'Collecting requests>=2'; \
             echo 'ERROR: Could not find a version that satisfies the requirement requests>=2 (from versions: none)'; \
             echo 'ERROR: No matching distribution found for requests>=2'; exit 1");
        let log = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(EXIT_DEPENDENCY as i32), "{log}");
        assert!(
            log.contains(&format!("{REQUIREMENT_FAILED}requests>=2 (pip exit 1)")),
            "{log}"
        );
        let out = run("exit 0");
        let log = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{log}");
        let read = |f: &str| std::fs::read_to_string(format!("{root}/{f}")).unwrap();
        assert_eq!(read("requirements.txt"), "requests>=2\npytest\n");
        assert_eq!(read("env-lock.txt"), "pytest==7.2.1\nrequests==2.31.0\n");
        assert!(read("calls").ends_with(&format!("install -r {root}/requirements.txt\n")));
        assert!(log.contains("  requests==2.31.0"), "{log}");
    }

    /// With a dependency date, the env layer installs through `etip_pyinstall.py` (its hash in
    /// the script, so the env key changes with it, and with the date).
    #[test]
    fn dated_python_env_steps_name_the_date() {
        let date = DepsDate {
            as_of: "2015-12-02T00:00:00Z".into(),
            relax: true,
        };
        let cfg = BuildConfig::default();
        let dated = env_script(&cfg, Language::Python, "3.9", Some(&date), None);
        assert!(dated.contains(&format!("# etip_pyinstall.py {}", key(&[PYINSTALL_SCRIPT]))));
        assert!(dated.contains(&format!(
            "/{PYINSTALL_PATH} {ENV_REQUIREMENTS} /opt/etip/constraints.txt 2015-12-02T00:00:00Z {ENV_AS_OF}; rc=$?"
        )));
        assert!(!dated.contains("--no-relax"));
        assert!(dated.contains(ENV_LOCK), "the lock is still written");
        let strict = env_script(
            &cfg,
            Language::Python,
            "3.9",
            Some(&DepsDate {
                relax: false,
                ..date.clone()
            }),
            None,
        );
        assert!(strict.contains(" --no-relax; rc=$?"));
        let later = env_script(
            &cfg,
            Language::Python,
            "3.9",
            Some(&DepsDate {
                as_of: "2016-01-01T00:00:00Z".into(),
                relax: true,
            }),
            None,
        );
        assert_ne!(later, dated);
        let undated = env_script(&cfg, Language::Python, "3.9", None, None);
        assert!(!undated.contains("etip_pyinstall"));
        // A spec's packages join the requirements before the installation, and change the key.
        let at = |s: &str, what: &str| s.find(what).unwrap_or_else(|| panic!("{what} in {s}"));
        let spec = etip_core::task::EnvironmentSpec {
            source: "specs.json: a/b 1.0".into(),
            packages: vec!["gmpy2".into()],
            pre_install: vec!["touch /opt/etip/pre".into()],
            ..Default::default()
        };
        let extra = env_script(&cfg, Language::Python, "3.9", None, Some(&spec));
        assert!(extra.contains("( touch /opt/etip/pre\n) || {"), "{extra}");
        assert!(at(&extra, "touch /opt/etip/pre") < at(&extra, "gmpy2 >>"));
        assert!(
            extra.contains(&format!("printf '%s\\n' gmpy2 >> {ENV_REQUIREMENTS}")),
            "{extra}"
        );
        assert!(at(&extra, "gmpy2 >>") < at(&extra, "-m pip install \"$@\""));
        assert_ne!(extra, undated);
        assert!(env_context_files(Language::Python).contains(&(PYINSTALL_PATH, PYINSTALL_SCRIPT)));
    }

    /// A JDK other than the image's default is switched to through Debian's alternatives.
    #[test]
    fn jdk_steps_switch_to_another_jdk_of_the_image() {
        let s = env_script(&BuildConfig::default(), Language::Java, "21", None, None);
        assert!(s.contains("for home in /usr/lib/jvm/java-21-*; do"), "{s}");
        assert!(s.contains("update-alternatives --set"), "{s}");
        assert!(s.contains("not JDK 21\"; exit 3; fi"), "{s}");
    }

    #[test]
    fn relocation_moves_whole_container_paths_only() {
        let r = "/home/u/out/local/x/base";
        assert_eq!(
            relocate("cd /work/$1 && mkdir -p /opt/etip /work\n", r),
            format!("cd {r}/work/$1 && mkdir -p {r}/opt/etip {r}/work\n")
        );
        assert_eq!(
            relocate("PATH=/opt/etip/venvs/original/bin:/usr/bin", r),
            format!("PATH={r}/opt/etip/venvs/original/bin:/usr/bin")
        );
        assert_eq!(
            relocate("> /tmp/etip-pip.log 2>&1; cat '/tmp/etip-smoke.py'", r),
            format!("> {r}/tmp/etip-pip.log 2>&1; cat '{r}/tmp/etip-smoke.py'")
        );
        for stays in [
            "/workspace",
            "/x/work/a",
            "a/work",
            "/opt/etipx",
            "/tmp/x",
            "$HOME/work",
        ] {
            assert_eq!(relocate(stays, r), stays);
        }
        // Every generated script comes out with no container path left.
        let cfg = BuildConfig::default();
        for script in [
            env_script(&cfg, Language::Python, "3.11", None, None),
            instance_script(&cfg, Language::Python, &["textutil".into()]),
            candidate_script(&cfg, Language::Python, &[], "original"),
        ] {
            let moved = relocate(&script, r);
            for (p, _) in RELOCATED {
                let left = moved.replace(&format!("{r}{p}"), "");
                assert!(
                    !left.contains(&format!(" {p}")) && !left.contains(&format!("={p}")),
                    "{p} left in:\n{moved}"
                );
            }
        }
    }
}
