//! How a built Java version runs code outside its test command, shared by `etip select` and
//! `etip measure`: a module's class path as Maven resolves it (offline, from the build's local
//! repository), and the project's JMH benchmarks run by JMH's own launcher.
//!
//! **JMH.** A module holds benchmarks when its build generated JMH's benchmark list
//! (`target/classes/META-INF/BenchmarkList` or `target/test-classes/...`: the
//! `jmh-generator-annprocess` annotation processor on its compile path, as JMH's archetype and
//! most projects set it up). etip runs them with `org.openjdk.jmh.Main` on the module's class path
//! (the list's folder first, the module's classes, what `maven-dependency-plugin:build-classpath`
//! resolves in test scope): no uber-jar, no `package`, nothing fetched. Each run is
//! `-f 1` (one fork: a fresh JVM per run, as every etip detector), with pinned warm-up and
//! measurement iterations ([`JMH_MEASURE`]), one benchmark and one parameter set per run, results
//! as JMH's JSON (`-rf json`, read by `etip_exec::reports::jmh`).
//!
//! JMH is on Maven Central only (Debian does not package it): a project's benchmarks run where its
//! build could resolve JMH.

use crate::spec::sh_quote;
use std::collections::BTreeMap;

/// Where a module's JMH benchmark list is, relative to the module, in search order.
pub const JMH_LIST_DIRS: [&str; 2] = ["target/classes", "target/test-classes"];

/// The benchmark list JMH's annotation processor writes into a class folder.
pub const JMH_LIST: &str = "META-INF/BenchmarkList";

/// JMH's launcher.
pub const JMH_MAIN: &str = "org.openjdk.jmh.Main";

/// Forks, iterations and their durations of a JMH run (JMH's `-f -wi -w -i -r`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JmhSettings {
    pub forks: u32,
    pub warmup_iterations: u32,
    /// A JMH time value (`1s`, `100ms`).
    pub warmup_time: &'static str,
    pub iterations: u32,
    pub time: &'static str,
}

/// What every timed JMH run uses: one fork, 5 warm-up iterations of 1 s, 5 measurement
/// iterations of 1 s (JMH's defaults are 5 forks of 5 × 10 s: etip's rounds replace the forks).
pub const JMH_MEASURE: JmhSettings = JmhSettings {
    forks: 1,
    warmup_iterations: 5,
    warmup_time: "1s",
    iterations: 5,
    time: "1s",
};

/// What a selection run uses: enough to execute each benchmark (and record its coverage) once.
pub const JMH_COVERAGE: JmhSettings = JmhSettings {
    forks: 1,
    warmup_iterations: 0,
    warmup_time: "100ms",
    iterations: 1,
    time: "100ms",
};

impl JmhSettings {
    /// JMH's arguments for these settings.
    pub fn args(&self) -> Vec<String> {
        vec![
            "-f".into(),
            self.forks.to_string(),
            "-wi".into(),
            self.warmup_iterations.to_string(),
            "-w".into(),
            self.warmup_time.into(),
            "-i".into(),
            self.iterations.to_string(),
            "-r".into(),
            self.time.into(),
        ]
    }

    /// The settings as one line for records (`-f 1 -wi 5 -w 1s -i 5 -r 1s`).
    pub fn describe(&self) -> String {
        self.args().join(" ")
    }
}

/// How long the figure etip records for a JMH run stands for, in seconds: one measurement
/// iteration of [`JMH_MEASURE`].
pub const JMH_FIGURE_SECS: f64 = 1.0;

/// The operations a JMH figure stands for, from the time per operation of the original's
/// selection run: the fewest that last [`JMH_FIGURE_SECS`] (at least 1). etip's figure for a run
/// is JMH's time per operation times this number, the same for both versions: ratios are JMH's,
/// and the figure is in seconds like every other detector's, so the verdicts' too-fast and
/// resolution rules read it the same way.
pub fn jmh_number(secs_per_op: f64) -> u64 {
    if !secs_per_op.is_finite() || secs_per_op <= 0.0 {
        return 1;
    }
    (JMH_FIGURE_SECS / secs_per_op).ceil().clamp(1.0, 1e15) as u64
}

/// JMH's include pattern for exactly one benchmark (`^org\.acme\.Bench\.parse$`).
pub fn jmh_pattern(benchmark: &str) -> String {
    let mut p = String::from("^");
    for c in benchmark.chars() {
        if !c.is_ascii_alphanumeric() && c != '_' {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('$');
    p
}

/// The shell lines that resolve the class path of `modules` (relative to the tree; `.` or empty
/// for the root) into `$CP`, each module's `target/classes` (and, in test scope,
/// `target/test-classes`) first. Expects `$D` to be an existing scratch folder; on failure prints
/// Maven's reason and exits 3. `maven` is the version's Maven command (offline, as every run in a
/// session). The dependency plugin is taken at the newest version the local repositories hold
/// (the base image has Debian's), else resolved by Maven.
pub fn classpath_lines(maven: &[String], modules: &[String], scope: &str) -> String {
    let modules = if modules.is_empty() {
        vec![".".to_string()]
    } else {
        modules.to_vec()
    };
    let maven: Vec<String> = maven.iter().map(|a| sh_quote(a)).collect();
    let mut s = String::from(
        "V=$(ls -1 /opt/etip/m2/org/apache/maven/plugins/maven-dependency-plugin \
         /usr/share/maven-repo/org/apache/maven/plugins/maven-dependency-plugin 2>/dev/null \
         | grep -E '^[0-9]' | sort -V | tail -n 1)\n\
         P=org.apache.maven.plugins:maven-dependency-plugin${V:+:$V}:build-classpath\n\
         CP=\n",
    );
    for (n, m) in modules.iter().enumerate() {
        let m = m.trim_matches('/');
        let dir = if m.is_empty() { "." } else { m };
        // Inside double quotes: a folder name must not expand.
        let safe = dir.replace(['"', '$', '`', '\\'], "");
        let own = if scope == "test" {
            format!("$PWD/{safe}/target/test-classes:$PWD/{safe}/target/classes")
        } else {
            format!("$PWD/{safe}/target/classes")
        };
        s.push_str(&format!(
            "(cd {dir} && {maven} -q \"$P\" -Dmdep.outputFile=\"$D/cp-{n}.txt\" -Dmdep.includeScope={scope}) > \"$D/maven.log\" 2>&1 || {{ \
             echo \"etip: the class path of module {shown} could not be resolved ($P):\"; tail -n 25 \"$D/maven.log\"; exit 3; }}\n\
             CP=\"$CP:{own}:$(cat \"$D/cp-{n}.txt\")\"\n",
            dir = sh_quote(dir),
            shown = safe,
            maven = maven.join(" "),
            scope = sh_quote(scope),
        ));
    }
    s
}

/// One JMH run of one benchmark: where its class path is and what to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JmhInvocation<'a> {
    /// The class folder holding the benchmark list, relative to the tree (`bench/target/classes`).
    pub list_dir: &'a str,
    /// A file holding the rest of the class path (written by [`classpath_lines`]' caller).
    pub classpath_file: &'a str,
    pub benchmark: &'a str,
    /// `@Param` values (`-p name=value`); empty: every value the benchmark declares.
    pub values: &'a BTreeMap<String, String>,
    /// JMH's mode (`thrpt`, `avgt`, ...); empty: the benchmark's own.
    pub mode: &'a str,
    pub settings: JmhSettings,
    /// Where JMH writes its JSON result.
    pub report: &'a str,
    /// Extra arguments of the forked JVM (`-jvmArgsAppend`: JMH splits them at blanks).
    pub jvm_args: Option<&'a str>,
}

impl JmhInvocation<'_> {
    /// The shell command (run in the tree) that runs it.
    pub fn script(&self) -> String {
        let mut args = vec![
            "exec java -cp".to_string(),
            format!(
                "{}:\"$(cat {})\"",
                sh_quote(self.list_dir),
                sh_quote(self.classpath_file)
            ),
            JMH_MAIN.into(),
            sh_quote(&jmh_pattern(self.benchmark)),
        ];
        args.extend(self.settings.args());
        if !self.mode.is_empty() {
            args.push("-bm".into());
            args.push(sh_quote(self.mode));
        }
        for (k, v) in self.values {
            args.push("-p".into());
            args.push(sh_quote(&format!("{k}={v}")));
        }
        args.extend(["-foe".into(), "true".into(), "-rf".into(), "json".into()]);
        args.push("-rff".into());
        args.push(sh_quote(self.report));
        if let Some(j) = self.jvm_args {
            args.push("-jvmArgsAppend".into());
            args.push(sh_quote(j));
        }
        args.join(" ")
    }
}

/// The module and class folder of a benchmark list found in a tree
/// (`./bench/target/test-classes/META-INF/BenchmarkList` → `("bench", "bench/target/test-classes")`).
pub fn list_location(path: &str) -> Option<(String, String)> {
    let p = path.trim_start_matches("./");
    let dir = p.strip_suffix(JMH_LIST)?.trim_end_matches('/');
    for d in JMH_LIST_DIRS {
        if dir == d {
            return Some((String::new(), dir.to_string()));
        }
        if let Some(m) = dir.strip_suffix(d).and_then(|m| m.strip_suffix('/')) {
            return Some((m.to_string(), dir.to_string()));
        }
    }
    None
}

/// The benchmarks `java ... org.openjdk.jmh.Main -l` listed (the lines after `Benchmarks:`).
pub fn listed_benchmarks(stdout: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut on = false;
    for line in stdout.lines() {
        let l = line.trim();
        if l.starts_with("Benchmarks:") {
            on = true;
            continue;
        }
        if on && !l.is_empty() && !l.contains(char::is_whitespace) {
            out.push(l.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_stands_for_about_one_iteration_of_operations() {
        assert_eq!(jmh_number(1e-6), 1_000_000);
        assert_eq!(jmh_number(0.3), 4);
        assert_eq!(jmh_number(5.0), 1);
        assert_eq!(jmh_number(0.0), 1);
        assert_eq!(jmh_number(f64::NAN), 1);
        assert_eq!(jmh_number(1e-30), 1_000_000_000_000_000);
    }

    #[test]
    fn a_pattern_matches_one_benchmark_only() {
        assert_eq!(
            jmh_pattern("org.acme.Bench.parse"),
            r"^org\.acme\.Bench\.parse$"
        );
        assert_eq!(jmh_pattern("a.B$C.x_y"), r"^a\.B\$C\.x_y$");
    }

    #[test]
    fn lists_name_their_module_and_class_folder() {
        assert_eq!(
            list_location("./bench/target/test-classes/META-INF/BenchmarkList"),
            Some(("bench".into(), "bench/target/test-classes".into()))
        );
        assert_eq!(
            list_location("./target/classes/META-INF/BenchmarkList"),
            Some((String::new(), "target/classes".into()))
        );
        assert_eq!(
            list_location("a/b/target/classes/META-INF/BenchmarkList"),
            Some(("a/b".into(), "a/b/target/classes".into()))
        );
        assert_eq!(list_location("./src/META-INF/BenchmarkList"), None);
    }

    #[test]
    fn jmhs_list_output_gives_the_benchmarks() {
        let out = "# JMH version: 1.37\nBenchmarks: \norg.acme.Bench.parse\norg.acme.Bench.print\n";
        assert_eq!(
            listed_benchmarks(out),
            vec!["org.acme.Bench.parse", "org.acme.Bench.print"]
        );
        assert!(listed_benchmarks("error: no benchmarks").is_empty());
    }

    #[test]
    fn a_run_is_one_benchmark_one_parameter_set_one_fork() {
        let values: BTreeMap<String, String> = [("size".to_string(), "100".to_string())].into();
        let inv = JmhInvocation {
            list_dir: "bench/target/classes",
            classpath_file: "/tmp/etip-in/jmh/classpath",
            benchmark: "org.acme.Bench.parse",
            values: &values,
            mode: "avgt",
            settings: JMH_MEASURE,
            report: "/tmp/etip-in/jmh-0.json",
            jvm_args: Some("-javaagent:/opt/a.jar=x=1"),
        };
        assert_eq!(
            inv.script(),
            "exec java -cp bench/target/classes:\"$(cat /tmp/etip-in/jmh/classpath)\" \
             org.openjdk.jmh.Main '^org\\.acme\\.Bench\\.parse$' -f 1 -wi 5 -w 1s -i 5 -r 1s \
             -bm avgt -p size=100 -foe true -rf json -rff /tmp/etip-in/jmh-0.json \
             -jvmArgsAppend -javaagent:/opt/a.jar=x=1"
        );
        assert_eq!(JMH_MEASURE.describe(), "-f 1 -wi 5 -w 1s -i 5 -r 1s");
    }

    #[test]
    fn the_class_path_puts_the_modules_classes_first() {
        let s = classpath_lines(&["mvn".into(), "-o".into()], &["core".into()], "test");
        assert!(s.contains("(cd core && mvn -o -q \"$P\""), "{s}");
        assert!(s.contains("-Dmdep.includeScope=test"));
        assert!(s.contains("CP=\"$CP:$PWD/core/target/test-classes:$PWD/core/target/classes:"));
        let s = classpath_lines(&["mvn".into()], &[], "runtime");
        assert!(s.contains("(cd . && mvn"));
        assert!(s.contains("CP=\"$CP:$PWD/./target/classes:"), "{s}");
    }
}
