//! GSO's correctness rule for its performance tests, as its harness applies it: each test runs
//! once on the original with `--reference`, storing its results (`<prefix>_*` files), and once on
//! the candidate with `--eqcheck`, comparing its own results with them; a test that fails the
//! check (a non-zero exit) fails the patch ("Tests Errored"), whatever it times like. etip runs
//! the pair before the timed rounds, each in its version's session (the original's results are
//! copied into the candidate's), and says which test failed and why. Workloads that are not
//! GSO tests ([`etip_core::gso_test::unwrap`]) are not checked.

use etip_exec::executor::{CommandRequest, Session};
use etip_measure::protocol::SidePlan;
use std::path::Path;
use std::time::Duration;

/// The output file a GSO test appends its time to (not a result to compare).
const OUT: &str = "etip-gso-time.txt";

/// Why the check did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckFailure {
    /// The candidate's results differ from the original's (or the test failed on it).
    Candidate(String),
    /// The original's reference run or the copying failed: the harness's error.
    Harness(String),
}

/// A GSO test of a side's workloads: its name, its source and the interpreter.
#[derive(Debug, Clone)]
pub struct GsoTest {
    pub name: String,
    pub source: String,
    pub python: String,
}

/// The GSO tests among `side`'s workloads.
pub fn tests_of(side: &SidePlan) -> Vec<GsoTest> {
    side.workloads
        .iter()
        .filter_map(|w| {
            let source = w
                .workload
                .script
                .as_deref()
                .and_then(etip_core::gso_test::unwrap)?;
            Some(GsoTest {
                name: w.workload.name.clone(),
                source,
                python: w.python.clone(),
            })
        })
        .collect()
}

/// Runs GSO's equivalence check of each of `tests` between the original's session (the first
/// of `sessions`) and the candidate's (the second); the number of tests checked. `log`: the
/// folder that receives each run's output (`gso-check-<test>.log`).
pub fn check(
    tests: &[GsoTest],
    sessions: &mut [Box<dyn Session>],
    limit: Duration,
    log: Option<&Path>,
) -> Result<usize, CheckFailure> {
    let harness = CheckFailure::Harness;
    let [orig, cand, ..] = sessions else {
        return Err(harness(
            "the check needs the original's and the candidate's sessions".into(),
        ));
    };
    let mut checked = 0;
    for t in tests {
        let (name, source) = (&t.name, &t.source);
        let file = format!("{name}.py");
        // The original: results stored in a folder of their own, then copied out.
        let script = orig
            .put_file(&file, source.as_bytes())
            .map_err(|e| harness(format!("{name}: putting the test into the original: {e}")))?;
        let dir = format!("{script}.reference");
        let run = |s: &mut Box<dyn Session>, cwd: &str, flag: &str| {
            s.run(&CommandRequest {
                argv: vec![
                    "sh".into(),
                    "-c".into(),
                    "mkdir -p \"$1\" && cd \"$1\" && exec \"$2\" \"$3\" \"$4\" \"$5\" --file_prefix \"$6\""
                        .into(),
                    "sh".into(),
                    cwd.to_string(),
                    t.python.clone(),
                    script_in(cwd, &file),
                    OUT.into(),
                    flag.into(),
                    name.clone(),
                ],
                env: Vec::new(),
                cwd: "/".into(),
                clean: Vec::new(),
                timeout: limit,
            })
        };
        // The test file is where the folder's parent is: run it by its path.
        let out = run(orig, &dir, "--reference")
            .map_err(|e| harness(format!("{name}: the original's reference run: {e}")))?;
        keep(log, name, "original --reference", &out);
        if !out.success() {
            return Err(harness(format!(
                "{name} fails on the original with --reference (exit {:?}): {}",
                out.exit_code,
                tail(&out.stderr, &out.stdout)
            )));
        }
        let tmp =
            tempfile::tempdir().map_err(|e| harness(format!("{name}: a temporary folder: {e}")))?;
        let found = orig
            .copy_out(&dir, tmp.path())
            .map_err(|e| harness(format!("{name}: copying the reference results out: {e}")))?;
        if !found {
            return Err(harness(format!("{name}: the reference run left no folder")));
        }
        // The candidate: the test and the original's results in its scratch folder.
        let cand_script = cand
            .put_file(&file, source.as_bytes())
            .map_err(|e| harness(format!("{name}: putting the test into the candidate: {e}")))?;
        let entries = std::fs::read_dir(tmp.path())
            .map_err(|e| harness(format!("{name}: reading the reference results: {e}")))?;
        for entry in entries.flatten() {
            let fname = entry.file_name().to_string_lossy().into_owned();
            if fname == OUT {
                continue;
            }
            let data = std::fs::read(entry.path())
                .map_err(|e| harness(format!("{name}: reading {fname}: {e}")))?;
            cand.put_file(&fname, &data)
                .map_err(|e| harness(format!("{name}: putting {fname} into the candidate: {e}")))?;
        }
        let cand_dir = parent(&cand_script);
        let out = run(cand, &cand_dir, "--eqcheck")
            .map_err(|e| harness(format!("{name}: the candidate's check: {e}")))?;
        keep(log, name, "candidate --eqcheck", &out);
        if !out.success() {
            return Err(CheckFailure::Candidate(format!(
                "GSO's equivalence check of {name} failed: the candidate's results differ from the original's (exit {:?}{}): {}",
                out.exit_code,
                if out.timed_out { ", timed out" } else { "" },
                tail(&out.stderr, &out.stdout)
            )));
        }
        checked += 1;
    }
    Ok(checked)
}

/// The test file's path seen from `cwd`: the original's runs in `<script>.reference` (the test
/// beside it), the candidate's in the scratch folder that holds it.
fn script_in(cwd: &str, file: &str) -> String {
    match cwd.strip_suffix(".reference") {
        Some(script) => script.to_string(),
        None => format!("{cwd}/{file}"),
    }
}

fn parent(path: &str) -> String {
    path.rsplit_once('/')
        .map_or_else(|| ".".to_string(), |(dir, _)| dir.to_string())
}

/// The last lines of a run's output, for the detail.
fn tail(stderr: &str, stdout: &str) -> String {
    let text = if stderr.trim().is_empty() {
        stdout
    } else {
        stderr
    };
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(6)..].join("\n")
}

fn keep(log: Option<&Path>, name: &str, what: &str, out: &etip_exec::executor::CommandOutput) {
    if let Some(dir) = log {
        let text = format!(
            "$ {name} {what}: exit {:?}\n--- stdout\n{}\n--- stderr\n{}\n",
            out.exit_code, out.stdout, out.stderr
        );
        let path = dir.join(format!("gso-check-{name}.log"));
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::write(path, old + &text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_of_the_test_and_its_folders() {
        assert_eq!(
            script_in("/tmp/etip-in/gso_test_0.py.reference", "gso_test_0.py"),
            "/tmp/etip-in/gso_test_0.py"
        );
        assert_eq!(
            script_in("/tmp/etip-in", "gso_test_0.py"),
            "/tmp/etip-in/gso_test_0.py"
        );
        assert_eq!(parent("/tmp/etip-in/gso_test_0.py"), "/tmp/etip-in");
        assert_eq!(tail("", "a\nb\n"), "a\nb");
    }
}
