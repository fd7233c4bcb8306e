//! Mining with worker processes: the same decisions as threads, and clear, lossless failures.
//!
//! This test has its own `main` (no libtest harness): started with `--worker`, the test executable
//! is itself a mining worker (`serve` on stdin/stdout), so the real protocol runs between real
//! processes. `--worker-exit-after N` makes a worker that dies abruptly in the middle of its Nth chunk of
//! output.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use etip_core::candidate::Language;
use etip_mine_git::{MineConfig, MineError, NoProgress, WorkerCommand, mine, serve_worker};
use git2::{Oid, Repository, Signature, Time};

const COMMITS: usize = 240;

fn java(k: usize, value: usize, comment: usize, flip: bool) -> String {
    let mut s = format!("package demo;\n\n// note {comment}\npublic class C{k} {{\n");
    for m in 0..12 {
        let v = if m == value % 12 { value + 100 } else { m };
        s.push_str(&format!(
            "    int m{m}(int x) {{\n        return x * {v};\n    }}\n"
        ));
    }
    let f = if flip { 2 } else { 1 };
    s.push_str(&format!(
        "    int flip() {{\n        return {f};\n    }}\n}}\n"
    ));
    s
}

/// A bare-bones history: body changes (kept), comment-only changes, test files, non-source files,
/// and repeated diffs (duplicates), on one first-parent line.
fn build_repo(dir: &Path) -> PathBuf {
    let path = dir.join("repo");
    let repo = Repository::init_bare(&path).expect("init");
    let mut index = repo.index().expect("index");
    let mut parent: Option<Oid> = None;
    // Per file: value, comment, flip.
    let mut state = [(0usize, 0usize, false); 8];
    for i in 0..COMMITS {
        let k = i % 8;
        let st = &mut state[k];
        let source = format!("src/main/java/demo/C{k}.java");
        let (file, content) = match i % 5 {
            0 | 1 => {
                st.0 += 1;
                (source, java(k, st.0, st.1, st.2))
            }
            // Back and forth: every other one repeats an earlier diff of the file.
            2 => {
                st.2 = !st.2;
                (source, java(k, st.0, st.1, st.2))
            }
            3 => {
                st.1 += 1;
                (source, java(k, st.0, st.1, st.2))
            }
            _ if i % 2 == 0 => (
                format!("src/test/java/demo/C{k}Test.java"),
                format!("class T{{ int v = {i}; }}\n"),
            ),
            _ => (format!("docs/notes{k}.txt"), format!("note {i}\n")),
        };
        let blob = repo.blob(content.as_bytes()).expect("blob");
        let mut e = etip_testkit::index_entry(&file);
        e.id = blob;
        e.file_size = content.len() as u32;
        index.add(&e).expect("add");
        let tree = repo
            .find_tree(index.write_tree_to(&repo).expect("tree"))
            .expect("tree");
        let sig = Signature::new(
            "Dev",
            "dev@example.com",
            &Time::new(1_704_067_200 + i as i64 * 60, 0),
        )
        .expect("sig");
        let parents: Vec<git2::Commit> = parent
            .iter()
            .map(|p| repo.find_commit(*p).expect("parent"))
            .collect();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        let msg = format!("change {i} (#{})", i + 1);
        parent = Some(
            repo.commit(Some("HEAD"), &sig, &sig, &msg, &tree, &refs)
                .expect("commit"),
        );
    }
    path
}

fn config(repo: &Path, out: &Path, jobs: usize, worker: Option<WorkerCommand>) -> MineConfig {
    let mut cfg = MineConfig::new(repo.to_path_buf(), Language::Java, out.to_path_buf());
    cfg.since = None;
    cfg.jobs = jobs;
    cfg.worker = worker;
    cfg
}

fn this_exe(args: &[&str]) -> WorkerCommand {
    WorkerCommand {
        program: std::env::current_exe().expect("test executable"),
        args: args.iter().map(|s| s.to_string()).collect(),
    }
}

fn processes_decide_like_threads(dir: &Path, repo: &Path) -> Vec<u8> {
    let threads = dir.join("threads.jsonl");
    let summary = mine(&config(repo, &threads, 1, None), &mut NoProgress).expect("threads");
    assert_eq!(summary.commits_scanned, COMMITS as u64);
    assert!(summary.candidates > 50, "{summary:?}");
    let reference = std::fs::read(&threads).expect("read");
    for jobs in [2, 3] {
        let out = dir.join(format!("procs{jobs}.jsonl"));
        let s = mine(
            &config(repo, &out, jobs, Some(this_exe(&["--worker"]))),
            &mut NoProgress,
        )
        .expect("processes");
        assert_eq!(s.candidates, summary.candidates);
        assert_eq!(s.rejected, summary.rejected);
        assert_eq!(
            std::fs::read(&out).expect("read"),
            reference,
            "{jobs} worker processes"
        );
    }
    reference
}

fn a_dying_worker_loses_nothing(dir: &Path, repo: &Path, reference: &[u8]) {
    // Workers cut off at different points of their output: in a frame's header or payload, between
    // frames, in a first or a later chunk.
    for limit in ["1", "2", "3", "5"] {
        let out = dir.join(format!("dying{limit}.jsonl"));
        let dying = this_exe(&["--worker", "--worker-exit-after", limit]);
        let err = mine(&config(repo, &out, 2, Some(dying)), &mut NoProgress)
            .expect_err("a worker that dies must fail the run");
        let msg = err.to_string();
        assert!(matches!(err, MineError::WorkerProcess(_)), "{err:?}");
        assert!(
            msg.contains("ended before finishing") && msg.contains("rerun to resume"),
            "{msg}"
        );
        // The decisions made before the failure were kept; the rerun completes them.
        let s = mine(
            &config(repo, &out, 2, Some(this_exe(&["--worker"]))),
            &mut NoProgress,
        )
        .expect("rerun");
        assert!(s.resumed > 0 || limit == "1", "{s:?}");
        assert_eq!(std::fs::read(&out).expect("read"), reference);
    }
}

fn workers_that_cannot_run_say_so(dir: &Path, repo: &Path) {
    let out = dir.join("missing.jsonl");
    let missing = WorkerCommand {
        program: dir.join("no-such-program"),
        args: Vec::new(),
    };
    let err =
        mine(&config(repo, &out, 2, Some(missing)), &mut NoProgress).expect_err("missing program");
    assert!(matches!(err, MineError::WorkerSpawn { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such-program"), "{err}");

    let silent = WorkerCommand {
        program: "false".into(),
        args: Vec::new(),
    };
    let err =
        mine(&config(repo, &out, 2, Some(silent)), &mut NoProgress).expect_err("exits at once");
    assert!(err.to_string().contains("ended before finishing"), "{err}");
}

fn the_protocol_rejects_garbage(repo: &Path) {
    // A block that is not commit ids: the worker reports it and fails.
    let hello = serde_json::json!({
        "repo_path": repo,
        "settings": {"lang": "java", "max_files": 20, "semantic": true, "repo_name": null,
                     "source": repo, "id_prefix": "repo"},
    });
    let input = format!("{hello}\nnot-an-id x y z\n");
    let mut output = Vec::new();
    let err = serve_worker(input.as_bytes(), &mut output).expect_err("garbage");
    assert!(
        err.to_string().contains("does not read as commit ids"),
        "{err}"
    );
    let mut reader = BufReader::new(&output[..]);
    let mut header = String::new();
    reader.read_line(&mut header).expect("header");
    assert!(header.starts_with("X "), "{header:?}");
    let mut rest = String::new();
    reader.read_to_string(&mut rest).expect("message");
    assert!(rest.contains("does not read as commit ids"), "{rest}");

    // A first line that is not a Hello.
    let err = serve_worker(&b"{}\n"[..], &mut Vec::new()).expect_err("bad hello");
    assert!(err.to_string().contains("not a Hello"), "{err}");
    // No input: nothing to do.
    serve_worker(&b""[..], &mut Vec::new()).expect("empty input");
}

/// The worker side: `serve`, optionally cut off in its Nth chunk of output.
fn run_worker(args: &[String]) {
    let exit_after = args
        .iter()
        .position(|a| a == "--worker-exit-after")
        .and_then(|i| args.get(i + 1))
        .map(|n| n.parse::<usize>().expect("a count"));
    let stdin = std::io::stdin().lock();
    match exit_after {
        None => {
            let stdout = std::io::stdout().lock();
            if let Err(e) = serve_worker(stdin, stdout) {
                eprintln!("worker: {e}");
                std::process::exit(1);
            }
        }
        Some(n) => {
            // Die abruptly in the middle of the Nth chunk of output (a torn frame), as a killed
            // or crashed worker would.
            struct Cut {
                writes: usize,
                limit: usize,
            }
            impl Write for Cut {
                fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                    self.writes += 1;
                    let mut out = std::io::stdout().lock();
                    if self.writes >= self.limit {
                        out.write_all(&buf[..buf.len() / 2])?;
                        out.flush()?;
                        std::process::exit(9);
                    }
                    out.write_all(buf)?;
                    Ok(buf.len())
                }
                fn flush(&mut self) -> std::io::Result<()> {
                    std::io::stdout().lock().flush()
                }
            }
            let _ = serve_worker(
                stdin,
                Cut {
                    writes: 0,
                    limit: n,
                },
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--worker") {
        run_worker(&args);
        return;
    }
    // libtest's flags are accepted: `--list` names the one test (none among the ignored ones, for
    // runners such as cargo-nextest), filters are ignored.
    if args.iter().any(|a| a == "--list") {
        if !args.iter().any(|a| a == "--ignored") {
            println!("workers: test");
        }
        return;
    }
    if args.iter().any(|a| a == "--ignored") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let repo = build_repo(dir.path());
    let reference = processes_decide_like_threads(dir.path(), &repo);
    a_dying_worker_loses_nothing(dir.path(), &repo, &reference);
    workers_that_cannot_run_say_so(dir.path(), &repo);
    the_protocol_rejects_garbage(&repo);
    println!("workers: 4 checks passed");
}
