//! `etip mine local` is resumable: SIGKILL at several points, rerun, same candidates file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use git2::{Oid, Repository, Signature, Time};

const COMMITS: usize = 900;
const FILES: usize = 20;

fn java_file(k: usize, version: usize, comment: bool) -> String {
    let mut s = format!("package demo.p{k};\n\nimport java.util.List;\n\npublic class F{k} {{\n");
    if comment {
        s.push_str(&format!("    // revision {version}\n"));
    }
    for m in 0..40 {
        let value = if m == version % 40 { version } else { m };
        s.push_str(&format!(
            "    int m{m}(int x) {{\n        int y = x * {value};\n        return y + {m};\n    }}\n\n"
        ));
    }
    s.push_str("}\n");
    s
}

/// A repository with `COMMITS` first-parent commits: body changes (kept), comment-only changes,
/// test-file changes, and repeated diffs (duplicates).
fn build_repo(dir: &Path) -> PathBuf {
    let path = dir.join("big");
    let repo = Repository::init(&path).unwrap();
    repo.remote("origin", "git@github.com:acme/big.git")
        .unwrap();
    let mut index = repo.index().unwrap();
    let mut versions = [0usize; FILES];
    let mut flips = [0usize; FILES];
    let mut parent: Option<Oid> = None;
    for i in 0..COMMITS {
        let k = i % FILES;
        let (path, content, msg) = match i % 6 {
            0 => (
                format!("m{k}/src/test/java/demo/F{k}Test.java"),
                format!("class F{k}Test {{ void t() {{ int v = {i}; }} }}\n"),
                format!("Test {i}"),
            ),
            1 => (
                format!("m{k}/src/main/java/demo/p{k}/F{k}.java"),
                java_file(k, versions[k], true),
                format!("Comment {i}"),
            ),
            5 => {
                // Flip a second file between two versions: from the third flip on, every
                // flip repeats an earlier diff (a duplicate).
                flips[k] += 1;
                (
                    format!("m{k}/src/main/java/demo/p{k}/G{k}.java"),
                    java_file(k, 100 + flips[k] % 2, false).replace("class F", "class G"),
                    format!("Flip {i} (#{i})"),
                )
            }
            _ => {
                versions[k] = i + 3;
                (
                    format!("m{k}/src/main/java/demo/p{k}/F{k}.java"),
                    java_file(k, versions[k], false),
                    format!("Faster m{} in F{k}\n\nFixes #{i}", versions[k] % 40),
                )
            }
        };
        index
            .add_frombuffer(&etip_testkit::index_entry(&path), content.as_bytes())
            .unwrap();
        if i == 0 {
            index
                .add_frombuffer(&etip_testkit::index_entry("pom.xml"), b"<project/>")
                .unwrap();
        }
        let tree_id = index.write_tree().unwrap();
        let tree = repo.find_tree(tree_id).unwrap();
        let sig = Signature::new(
            "Dev",
            "dev@example.com",
            &Time::new(1_600_000_000 + i as i64 * 600, 0),
        )
        .unwrap();
        let parents: Vec<git2::Commit> = parent
            .iter()
            .map(|p| repo.find_commit(*p).unwrap())
            .collect();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        parent = Some(
            repo.commit(Some("HEAD"), &sig, &sig, &msg, &tree, &refs)
                .unwrap(),
        );
    }
    path
}

fn etip(repo: &Path, out: &Path) -> Command {
    etip_jobs(repo, out, "2")
}

fn etip_jobs(repo: &Path, out: &Path, jobs: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_etip"));
    cmd.args([
        "mine", "local", "--lang", "java", "--jobs", jobs, "--format", "json",
    ])
    .arg("--repo")
    .arg(repo)
    .arg("--out")
    .arg(out)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    cmd
}

fn run_to_end(repo: &Path, out: &Path) -> serde_json::Value {
    let output = etip(repo, out).output().unwrap();
    assert!(
        output.status.success(),
        "etip failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Child processes of `pid` (from each process's parent id in `/proc/*/stat`).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// Whether `pid` runs (a zombie waiting to be reaped does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().to_string())
        })
        .is_some_and(|rest| !rest.starts_with('Z'))
}

#[test]
fn sigkill_at_any_point_then_rerun_gives_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let repo = build_repo(dir.path());

    let reference_out = dir.path().join("reference.jsonl");
    let started = Instant::now();
    let reference_summary = run_to_end(&repo, &reference_out);
    let full = started.elapsed();
    let reference = std::fs::read(&reference_out).unwrap();
    assert_eq!(reference_summary["commits_scanned"], COMMITS as u64);
    assert!(reference_summary["candidates"].as_u64().unwrap() > 100);
    assert!(reference_summary["rejected"]["duplicate"].as_u64().unwrap() > 10);

    // One worker thread, three worker processes (forced past the cap at the number of cores): the
    // same file.
    for jobs in ["1", "3"] {
        let out = dir.path().join(format!("jobs{jobs}.jsonl"));
        let output = etip_jobs(&repo, &out, jobs)
            .arg("--jobs-force")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(std::fs::read(&out).unwrap(), reference, "--jobs {jobs}");
    }

    let mut interrupted = 0;
    let mut with_workers = 0;
    for (n, fraction) in [0.05, 0.2, 0.4, 0.6, 0.8, 0.95].into_iter().enumerate() {
        let case = dir.path().join(format!("case{n}"));
        std::fs::create_dir(&case).unwrap();
        let out = case.join("candidates.jsonl");
        let mut child = etip(&repo, &out).spawn().unwrap();
        std::thread::sleep(full.mul_f64(fraction));
        if child.try_wait().unwrap().is_none() {
            let workers = children(child.id());
            with_workers += usize::from(!workers.is_empty());
            child.kill().unwrap(); // SIGKILL on Unix
            interrupted += 1;
            child.wait().unwrap();
            // Worker processes notice their parent is gone (closed stdin, broken stdout) and exit.
            let deadline = Instant::now() + Duration::from_secs(10);
            while workers.iter().any(|w| alive(*w)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let left: Vec<u32> = workers.into_iter().filter(|w| alive(*w)).collect();
            assert!(
                left.is_empty(),
                "worker processes {left:?} outlived their killed parent"
            );
        }
        child.wait().unwrap();
        let resumed = run_to_end(&repo, &out);
        assert_eq!(
            std::fs::read(&out).unwrap(),
            reference,
            "case {n} (killed at {fraction} of the run) differs from the uninterrupted run"
        );
        assert_eq!(resumed["candidates"], reference_summary["candidates"]);
        assert_eq!(resumed["rejected"], reference_summary["rejected"]);
    }
    assert!(
        interrupted >= 3,
        "only {interrupted} of 6 runs were still running when killed (full run took {full:?}); \
         the test repository is too small for this machine"
    );

    assert!(
        with_workers >= 2,
        "only {with_workers} kills found worker processes running"
    );

    // Several kills of the same run in a row, then completion.
    let case = dir.path().join("repeated");
    std::fs::create_dir(&case).unwrap();
    let out = case.join("candidates.jsonl");
    for fraction in [0.3, 0.5, 0.7] {
        let mut child = etip(&repo, &out).spawn().unwrap();
        std::thread::sleep(full.mul_f64(fraction).max(Duration::from_millis(20)));
        let _ = child.kill();
        child.wait().unwrap();
    }
    let last = run_to_end(&repo, &out);
    assert!(last["resumed"].as_u64().unwrap() > 0, "{last}");
    assert_eq!(std::fs::read(&out).unwrap(), reference);
}

#[test]
fn bad_input_exits_with_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.jsonl");
    let status = etip(&dir.path().join("missing"), &out).status().unwrap();
    assert_eq!(status.code(), Some(2));
    let repo = build_small(dir.path());
    let status = etip(&repo, &out)
        .args(["--since", "last tuesday"])
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
    let explained = Command::new(env!("CARGO_BIN_EXE_etip"))
        .args([
            "mine",
            "local",
            "--lang",
            "java",
            "--explain",
            "HEAD",
            "--repo",
        ])
        .arg(&repo)
        .output()
        .unwrap();
    assert!(explained.status.success());
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(
        text.contains("decision: rejected (non_source_file)"),
        "{text}"
    );
}

fn build_small(dir: &Path) -> PathBuf {
    let path = dir.join("small");
    let repo = Repository::init(&path).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_frombuffer(&etip_testkit::index_entry("pom.xml"), b"<project/>")
        .unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = Signature::new("Dev", "d@example.com", &Time::new(1_600_000_000, 0)).unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
        .unwrap();
    path
}
