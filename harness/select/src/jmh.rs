//! JMH benchmarks as detectors (Java): which of the project's `@Benchmark` methods execute the
//! changed code, decided exactly as for test classes (rules §3.7).
//!
//! In each version's session: the benchmark lists the build generated
//! ([`etip_build::jvm::JMH_LIST`]) name the modules; each module's class path is resolved in test
//! scope and JMH lists its benchmarks (`org.openjdk.jmh.Main -l`); every benchmark then runs once
//! with [`JMH_COVERAGE`] (one fork, one short iteration, no warm-up) and the JaCoCo agent in the
//! forked JVM, one session per benchmark (`sessionid=jmh:<benchmark>`). The sessions are read by
//! `EtipCovReport.java` like the test classes' and each benchmark judged by [`crate::code::hit`];
//! JMH's JSON result of that run gives the benchmark's parameter sets and mode: each becomes one
//! detector. A benchmark that fails (JMH's `-foe true`) is left out with a note, as is a module
//! whose class path or list cannot be had. Benchmarks the build did not list (no
//! `jmh-generator-annprocess` on the compile path) are named in a note, never run.

use crate::coverage_py::TestLines;
use crate::{SelectError, Selector, java};
use etip_build::jvm::{self, JMH_COVERAGE, JMH_MAIN, JmhInvocation};
use etip_build::spec::sh_quote;
use etip_exec::executor::CommandRequest;
use etip_exec::reports::jmh::JmhRun;
use std::collections::BTreeMap;
use std::time::Duration;

/// At most this many benchmarks run per version in a selection run.
pub const JMH_LIMIT: usize = 200;

/// The time limit of one benchmark's coverage run (all its parameter sets).
const JMH_RUN_LIMIT: Duration = Duration::from_secs(600);

/// Classes the agent leaves alone in a benchmark's JVM: JMH's, etip's, the JDK's tools, and
/// JaCoCo's and ASM's when Debian's agent is not relocated.
const EXCLUDES: &str = "org.openjdk.jmh.*:etip.cov.*:org.jacoco.*:org.objectweb.*:com.sun.tools.*:com.sun.source.*:com.sun.jdi.*:jdk.*";

/// One benchmark method as the selection run ran it.
#[derive(Debug, Clone)]
pub struct JmhBenchmark {
    pub benchmark: String,
    /// The Maven module (empty for the root project).
    pub module: String,
    /// The class folder holding the benchmark list, relative to the tree.
    pub list_dir: String,
    /// Its runs in the coverage run: one per parameter set (and mode).
    pub runs: Vec<JmhRun>,
    /// Why it did not run.
    pub error: Option<String>,
}

/// One version's JMH benchmarks and their coverage (sessions `jmh:<benchmark>`).
#[derive(Debug, Default)]
pub struct JmhSuiteRun {
    pub benchmarks: Vec<JmhBenchmark>,
    pub cov: TestLines,
    pub notes: Vec<String>,
    /// Benchmarks past [`JMH_LIMIT`] that were not run.
    pub truncated: usize,
}

/// The coverage context of a benchmark.
pub fn context(benchmark: &str) -> String {
    format!("jmh:{benchmark}")
}

impl Selector<'_> {
    /// Finds, runs with coverage and reads side `i`'s JMH benchmarks (coverage of `files`).
    pub(crate) fn jmh_run(
        &mut self,
        i: usize,
        files: &[String],
    ) -> Result<JmhSuiteRun, SelectError> {
        let mut run = JmhSuiteRun::default();
        let lists = self.must(
            i,
            vec![
                "sh".into(),
                "-c".into(),
                format!(
                    "find . -path ./.git -prune -o -path '*/META-INF/{}' -print 2>/dev/null | sort",
                    jvm::JMH_LIST.rsplit('/').next().unwrap_or_default()
                ),
            ],
            "looking for JMH benchmark lists",
        )?;
        let lists: Vec<(String, String)> = lists.lines().filter_map(jvm::list_location).collect();
        if lists.is_empty() {
            let sources = self.must(
                i,
                vec![
                    "sh".into(),
                    "-c".into(),
                    "grep -rlE --include='*.java' 'org\\.openjdk\\.jmh\\.annotations' . 2>/dev/null | grep -v '/target/' | head -n 3 || true".into(),
                ],
                "looking for JMH sources",
            )?;
            let sources: Vec<&str> = sources
                .lines()
                .map(|l| l.trim_start_matches("./"))
                .collect();
            if !sources.is_empty() {
                run.notes.push(format!(
                    "JMH benchmark sources ({}) but no benchmark list in the build's class folders \
                     (JMH's annotation processor did not run): not selected",
                    sources.join(", ")
                ));
            }
            return Ok(run);
        }
        let root = format!("{}/jmh", self.sides[i].data_dir);
        let mut execs = Vec::new();
        let mut budget = JMH_LIMIT;
        for (n, (module, list_dir)) in lists.iter().enumerate() {
            let d = format!("{root}/{n}");
            let names = match self.jmh_list(i, module, list_dir, &d) {
                Ok(names) => names,
                Err(why) => {
                    run.notes.push(format!(
                        "JMH benchmarks of {} not listed: {why}",
                        shown(module)
                    ));
                    continue;
                }
            };
            let take = names.len().min(budget);
            run.truncated += names.len() - take;
            budget -= take;
            for (k, name) in names.into_iter().take(take).enumerate() {
                let b = self.jmh_cover(i, module, list_dir, &d, k, &name)?;
                run.benchmarks.push(b);
            }
            if take > 0 {
                execs.push(format!("{d}/exec"));
            }
        }
        if !execs.is_empty() {
            let text = self.java_report(i, files, &execs, &format!("{root}/report.jsonl"))?;
            let label = self.sides[i].label;
            run.cov = java::read_report(&text)
                .map_err(|e| SelectError::Command {
                    label,
                    what: "the JaCoCo report of the JMH runs is not readable".into(),
                    exit_code: None,
                    output: e.to_string(),
                })?
                .0;
        }
        Ok(run)
    }

    /// Resolves the class path of `module` into `$d/classpath` and lists its benchmarks.
    fn jmh_list(
        &mut self,
        i: usize,
        module: &str,
        list_dir: &str,
        d: &str,
    ) -> Result<Vec<String>, String> {
        let v = self.sides[i].version;
        let maven: Vec<String> = std::iter::once(self.spec.version(v).build_tool.clone())
            .chain(self.spec.maven_args.iter().cloned())
            .collect();
        let module = if module.is_empty() { "." } else { module };
        let script = format!(
            "set -u\nD={d}\nrm -rf \"$D\" && mkdir -p \"$D/exec\" \"$D/results\" || exit 2\n{cp}\
             printf '%s' \"$CP\" > \"$D/classpath\"\n\
             exec java -cp {list}:\"$CP\" {JMH_MAIN} -l\n",
            d = sh_quote(d),
            cp = jvm::classpath_lines(&maven, &[module.to_string()], "test"),
            list = sh_quote(list_dir),
        );
        let out = self.run_in(i, script, Duration::from_secs(600))?;
        let names = jvm::listed_benchmarks(&out);
        if names.is_empty() {
            return Err("JMH listed no benchmark".into());
        }
        Ok(names)
    }

    /// Runs benchmark `name` (the `k`-th of its module) once with the agent; its runs or error.
    fn jmh_cover(
        &mut self,
        i: usize,
        module: &str,
        list_dir: &str,
        d: &str,
        k: usize,
        name: &str,
    ) -> Result<JmhBenchmark, SelectError> {
        let agents = format!(
            "-javaagent:{cov}/jacocoagent.jar=destfile={d}/exec/{k}.exec,append=true,dumponexit=true,sessionid={session},excludes={EXCLUDES}",
            cov = java::COVERAGE_DIR,
            session = context(name),
        );
        // Before JaCoCo's agent, when the image has it (see coverage-java's README).
        let unseal = format!("{}/etip-cov-unseal.jar", java::COVERAGE_DIR);
        let report = format!("{d}/results/{k}.json");
        let values = BTreeMap::new();
        let classpath = format!("{d}/classpath");
        let inv = JmhInvocation {
            list_dir,
            classpath_file: &classpath,
            benchmark: name,
            values: &values,
            mode: "",
            settings: JMH_COVERAGE,
            report: &report,
            jvm_args: Some(&agents),
        };
        let plain = inv.script();
        let with_unseal = JmhInvocation {
            jvm_args: Some(&format!("-javaagent:{unseal} {agents}")),
            ..inv
        }
        .script();
        let script = format!(
            "if [ -f {u} ]; then {with_unseal}; else {plain}; fi",
            u = sh_quote(&unseal)
        );
        let mut b = JmhBenchmark {
            benchmark: name.to_string(),
            module: module.to_string(),
            list_dir: list_dir.to_string(),
            runs: Vec::new(),
            error: None,
        };
        match self.run_in(i, script, JMH_RUN_LIMIT) {
            Ok(_) => match self.jmh_result(i, &report) {
                Ok(runs) if !runs.is_empty() => b.runs = runs,
                Ok(_) => b.error = Some("JMH's result names no run".into()),
                Err(e) => b.error = Some(e),
            },
            Err(why) => b.error = Some(why),
        }
        Ok(b)
    }

    /// Copies JMH's JSON result out of side `i` and reads it.
    fn jmh_result(&mut self, i: usize, report: &str) -> Result<Vec<JmhRun>, String> {
        let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
        let side = &mut self.sides[i];
        if !side
            .session
            .copy_out(report, tmp.path())
            .map_err(|e| e.to_string())?
        {
            return Err("JMH wrote no result".into());
        }
        let file = std::fs::read_dir(tmp.path())
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.is_file())
            .ok_or_else(|| "JMH wrote no result".to_string())?;
        let bytes = std::fs::read(&file).map_err(|e| e.to_string())?;
        etip_exec::reports::jmh::parse(&bytes, report).map_err(|e| e.to_string())
    }

    /// Runs a shell script in side `i`'s tree; its output, or the reason it failed.
    fn run_in(&mut self, i: usize, script: String, limit: Duration) -> Result<String, String> {
        let side = &mut self.sides[i];
        let out = side
            .session
            .run(&CommandRequest {
                argv: vec!["sh".into(), "-c".into(), script],
                env: Vec::new(),
                cwd: side.tree.clone(),
                clean: Vec::new(),
                timeout: limit,
            })
            .map_err(|e| e.to_string())?;
        if out.timed_out {
            return Err(format!("ran past {} s", limit.as_secs()));
        }
        if !out.success() {
            let text = format!("{}{}", out.stdout, out.stderr);
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            return Err(format!(
                "exit {}: {}",
                out.exit_code
                    .map_or_else(|| "none".into(), |c| c.to_string()),
                etip_core::clip::clip(&lines[lines.len().saturating_sub(8)..].join("\n"), 1500)
            ));
        }
        Ok(out.stdout)
    }
}

fn shown(module: &str) -> String {
    if module.is_empty() {
        "the root project".into()
    } else {
        format!("module {module}")
    }
}
