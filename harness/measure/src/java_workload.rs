//! Java workloads: a `public class` with `workload()` (and optionally `setup()`) or `main`, compiled
//! once per session against the version's classes and its runtime class path, then run by etip's
//! Java runner (`scripts/EtipWorkload.java`) in a fresh JVM per round and version.
//!
//! The class path is the project's own: each module's `target/classes` and what Maven's
//! `maven-dependency-plugin:build-classpath` (runtime scope) resolves from the build's local
//! repository, offline as every run in a session is. The plugin is taken at the newest version
//! the local repositories hold (the base image has Debian's), else resolved by Maven (a user with
//! Maven Central). A workload that does not compile, or whose class path cannot be resolved, is a
//! failed detector with the compiler's or Maven's message.

use crate::protocol::{JavaBuild, WorkloadRun};
use etip_build::jvm;
use etip_build::spec::sh_quote;
use etip_core::detector::java_workload_class;

/// etip's Java runner, put into every session that times a Java workload.
pub const JAVA_RUNNER: &str = include_str!("../scripts/EtipWorkload.java");

/// File name of the Java runner in a session's scratch folder.
pub const JAVA_RUNNER_FILE: &str = "EtipWorkload.java";

/// Where the compiled classes and the class path of workload `j` go, under the scratch `folder`.
fn work_dir(folder: &str, j: usize) -> String {
    format!("{folder}/java-workload-{j}")
}

/// The shell script that resolves the class path and compiles workload `j` (its source at
/// `source`, the runner at `runner`) in the version's tree. Exits non-zero with the reason.
pub fn prepare_script(
    w: &WorkloadRun,
    java: &JavaBuild,
    j: usize,
    folder: &str,
    source: &str,
    runner: &str,
) -> Result<String, String> {
    let (_, simple) = java_workload_class(w.workload.script.as_deref().unwrap_or_default())
        .ok_or_else(|| "the workload's source declares no public class".to_string())?;
    let d = work_dir(folder, j);
    let mut s = format!(
        "set -u\nD={d}\nrm -rf \"$D\" && mkdir -p \"$D/src\" \"$D/classes\" || exit 2\n",
        d = sh_quote(&d)
    );
    s.push_str(&jvm::classpath_lines(&java.maven, &java.modules, "runtime"));
    s.push_str(&format!(
        "printf '%s' \"$CP\" > \"$D/classpath\"\n\
         cp {source} \"$D/src/{simple}.java\" || exit 2\n\
         javac -nowarn -encoding UTF-8 -d \"$D/classes\" -cp \"$CP\" \"$D/src/{simple}.java\" {runner} > \"$D/javac.log\" 2>&1 || {{ \
         echo \"etip: the workload does not compile: $(grep -m 1 -E 'error:' \"$D/javac.log\" | sed 's|^.*/src/||')\"; tail -n 25 \"$D/javac.log\"; exit 4; }}\n",
        source = sh_quote(source),
        runner = sh_quote(runner),
    ));
    Ok(s)
}

/// The shell command that runs workload `j` once in a fresh JVM (after [`prepare_script`]).
pub fn run_argv(w: &WorkloadRun, j: usize, folder: &str, report: &str) -> Vec<String> {
    let (class, _) =
        java_workload_class(w.workload.script.as_deref().unwrap_or_default()).unwrap_or_default();
    let d = sh_quote(&work_dir(folder, j));
    let script = format!(
        "exec java -cp {d}/classes:\"$(cat {d}/classpath)\" EtipWorkload --name {name} --repeat {r} --out {report} {class}",
        name = sh_quote(&w.detector()),
        r = w.workload.repeat(),
        report = sh_quote(report),
        class = sh_quote(&class),
    );
    vec!["sh".into(), "-c".into(), script]
}

#[cfg(test)]
mod tests {
    use super::*;
    use etip_core::detector::{DetectorKind, Workload};

    fn run() -> WorkloadRun {
        WorkloadRun {
            workload: Workload {
                name: "dedup".into(),
                script: Some("package demo;\npublic class DedupWorkload {}\n".into()),
                file: None,
                repeat: Some(4),
            },
            kind: DetectorKind::Workload,
            python: "java".into(),
            cwd: "/work/original".into(),
            java: Some(JavaBuild {
                maven: vec![
                    "mvn".into(),
                    "-o".into(),
                    "-Dmaven.repo.local=/opt/etip/m2".into(),
                ],
                modules: vec!["core".into()],
            }),
            jmh: None,
        }
    }

    #[test]
    fn the_workload_is_compiled_against_the_modules_class_path_and_run_by_class() {
        let w = run();
        let java = w.java.clone().unwrap();
        let s = prepare_script(
            &w,
            &java,
            2,
            "/tmp/etip-in",
            "/tmp/etip-in/workload-2.java",
            "/tmp/etip-in/EtipWorkload.java",
        )
        .unwrap();
        assert!(
            s.contains("(cd core && mvn -o -Dmaven.repo.local=/opt/etip/m2 -q \"$P\""),
            "{s}"
        );
        assert!(s.contains("-Dmdep.includeScope=runtime"));
        assert!(s.contains("$PWD/core/target/classes"));
        assert!(s.contains("\"$D/src/DedupWorkload.java\""));
        let argv = run_argv(&w, 2, "/tmp/etip-in", "/tmp/etip-in/workload-2.json");
        assert_eq!(argv[..2], ["sh", "-c"]);
        assert!(
            argv[2].starts_with("exec java -cp /tmp/etip-in/java-workload-2/classes:"),
            "{}",
            argv[2]
        );
        assert!(
            argv[2].ends_with("--repeat 4 --out /tmp/etip-in/workload-2.json demo.DedupWorkload"),
            "{}",
            argv[2]
        );
        let mut bad = w.clone();
        bad.workload.script = Some("class Hidden {}".into());
        assert!(prepare_script(&bad, &java, 0, "/t", "/t/s", "/t/r").is_err());
    }
}
