//! What the commands write, run as a user runs them (issue 29): every output goes through one
//! atomic writer that replaces only a regular file and leaves the old one intact when writing
//! fails; an output that is also an input, or a state store that is also the output, is refused
//! before any work; one run at a time writes an output folder; a state path that is no state
//! store, and an output folder that is missing, are bad input (exit 2) in every command.

mod mine_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mine_common::{JavaRepo, mine_to, stderr};

const ETIP: &str = env!("CARGO_BIN_EXE_etip");

fn etip(dir: &Path, args: &[&str]) -> Output {
    Command::new(ETIP)
        .args(args)
        .current_dir(dir)
        .env_remove("ETIP_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("running etip")
}

#[track_caller]
fn expect(o: &Output, code: i32, says: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr:\n{err}");
    assert!(
        err.to_lowercase().contains(&says.to_lowercase()),
        "stderr should mention {says:?}:\n{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// A SWE-fficiency report of the vendored leaderboard, copied into `dir` as `r.csv`.
fn report(dir: &Path) -> PathBuf {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/leaderboards/swefficiency");
    let csv = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("eval_report_"))
        })
        .expect("a vendored SWE-fficiency report");
    let to = dir.join("r.csv");
    std::fs::copy(csv, &to).unwrap();
    to
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `etip audit --html r.csv r.csv` used to replace the input CSV by the HTML report and exit 0.
#[test]
fn audit_refuses_an_html_report_that_is_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let csv = report(d);
    let before = std::fs::read(&csv).unwrap();
    let o = etip(d, &["audit", "--html", "r.csv", "r.csv"]);
    expect(&o, 2, "name the same file");
    assert_eq!(
        std::fs::read(&csv).unwrap(),
        before,
        "the input is untouched"
    );
    // Under another name of the same file too.
    let o = etip(d, &["audit", "--html", "./r.csv", "r.csv"]);
    expect(&o, 2, "name the same file");
    assert_eq!(std::fs::read(&csv).unwrap(), before);
    // An aliases file is an input as well.
    std::fs::write(d.join("aliases.toml"), "").unwrap();
    let o = etip(
        d,
        &[
            "audit",
            "--aliases",
            "aliases.toml",
            "--html",
            "aliases.toml",
            "r.csv",
        ],
    );
    expect(&o, 2, "name the same file");
    assert_eq!(std::fs::read_to_string(d.join("aliases.toml")).unwrap(), "");
}

/// A symbolic link, a folder or a FIFO at `--html` is refused (exit 2) and left as it was; a
/// missing folder is bad input too (it used to exit 1), as in `etip mine`.
#[cfg(unix)]
#[test]
fn audit_writes_only_a_regular_file_or_a_new_one() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    report(d);
    std::fs::write(d.join("victim.txt"), "precious").unwrap();
    std::os::unix::fs::symlink(d.join("victim.txt"), d.join("link.html")).unwrap();
    let o = etip(d, &["audit", "--html", "link.html", "r.csv"]);
    expect(&o, 2, "symbolic link");
    assert_eq!(
        std::fs::read_to_string(d.join("victim.txt")).unwrap(),
        "precious"
    );
    assert!(
        std::fs::symlink_metadata(d.join("link.html"))
            .unwrap()
            .is_symlink()
    );

    std::fs::create_dir(d.join("folder")).unwrap();
    let o = etip(d, &["audit", "--html", "folder", "r.csv"]);
    expect(&o, 2, "is a folder");
    assert!(d.join("folder").is_dir());

    mkfifo(&d.join("fifo.html"));
    let o = etip(d, &["audit", "--html", "fifo.html", "r.csv"]);
    expect(&o, 2, "not a regular file");
    assert!(
        std::fs::symlink_metadata(d.join("fifo.html"))
            .unwrap()
            .file_type()
            .is_fifo()
    );

    let o = etip(d, &["audit", "--html", "no/such/r.html", "r.csv"]);
    expect(&o, 2, "does not exist");
    let o = etip(d, &["config", "init", "--out", "no/such/etip.toml"]);
    expect(&o, 2, "does not exist");

    // A regular file (an earlier report) is replaced, and nothing else is left in the folder.
    std::fs::write(d.join("old.html"), "old").unwrap();
    let o = etip(d, &["audit", "--html", "old.html", "r.csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read_to_string(d.join("old.html"))
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    assert_eq!(
        names(d),
        [
            "fifo.html",
            "folder",
            "link.html",
            "old.html",
            "r.csv",
            "victim.txt"
        ]
    );
}

/// On a full disk the old report stays whole: the run fails (exit 1) and no temporary file is
/// left. The disk is made full for etip alone by a file-size limit (`ulimit -f`, which `sh`
/// counts in blocks of 512 bytes; SIGXFSZ ignored so that the write fails with EFBIG as it fails
/// with ENOSPC on a full disk).
#[cfg(unix)]
#[test]
fn a_full_disk_leaves_the_old_report_intact() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    report(d);
    let o = etip(d, &["audit", "--html", "report.html", "r.csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let old = std::fs::read(d.join("report.html")).unwrap();
    assert!(old.len() > 16 * 512, "the report is larger than the limit");
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -f 16; trap '' XFSZ; exec '{ETIP}' audit --html report.html r.csv"
        ))
        .current_dir(d)
        .stdin(Stdio::null())
        .output()
        .expect("sh runs");
    expect(&o, 1, "report.html");
    assert_eq!(
        std::fs::read(d.join("report.html")).unwrap(),
        old,
        "the old report is intact"
    );
    assert_eq!(names(d), ["r.csv", "report.html"]);
}

/// `mine local --out st.sqlite --state st.sqlite` used to exit 0 with the state database replaced
/// by the candidates; now any two files of the command that are one file are refused before any
/// mining, and a state path that is no state store is bad input (exit 2) as `--github-cache` is.
#[cfg(unix)]
#[test]
fn mine_refuses_one_file_as_two_and_a_state_that_is_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut repo = JavaRepo::new(d, "repo");
    repo.good_commits(3);
    let st = d.join("st.sqlite");
    let st_arg = st.to_string_lossy().into_owned();
    let o = mine_to(&repo.path, &st, &["--state", &st_arg]);
    expect(&o, 2, "--out and --state name the same file");
    assert!(!st.exists(), "nothing was written");

    // Under another name, and with the caches.
    let dotted = d.join(".").join("st.sqlite");
    let o = mine_to(&repo.path, &dotted, &["--state", &st_arg]);
    expect(&o, 2, "name the same file");
    let out = d.join("c.jsonl");
    let o = mine_to(
        &repo.path,
        &out,
        &["--issues", "--github-cache", &out.to_string_lossy()],
    );
    expect(&o, 2, "--out and --github-cache name the same file");
    assert!(!out.exists());

    let folder = d.join("folder");
    std::fs::create_dir(&folder).unwrap();
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let text = d.join("notes.txt");
    std::fs::write(
        &text,
        "these are notes, not an etip state store\n".repeat(100),
    )
    .unwrap();
    for (state, says) in [
        (folder.as_path(), "is a folder"),
        (Path::new("/dev/zero"), "not a regular file"),
        (fifo.as_path(), "not a regular file"),
        (text.as_path(), "not a database"),
    ] {
        let o = mine_to(&repo.path, &out, &["--state", &state.to_string_lossy()]);
        expect(&o, 2, says);
        assert!(!out.exists(), "--state {}", state.display());
    }
    assert_eq!(
        std::fs::read_to_string(&text).unwrap(),
        "these are notes, not an etip state store\n".repeat(100)
    );
}

/// A status list of one failed build: enough for `measure` and `eval` to reach their outputs.
fn failed_status(dir: &Path) -> PathBuf {
    let p = dir.join("status.jsonl");
    std::fs::write(
        &p,
        "{\"id\":\"x\",\"language\":\"java\",\"outcome\":\"failed\",\"base_commit\":\"a\",\"patched_commit\":\"b\",\"original_dir\":\"/work/original\",\"patched_dir\":\"/work/patched\",\"build_secs\":1.0}\n",
    )
    .unwrap();
    p
}

/// An exclusive `flock` on `path` held by this process, as another etip run holds its locks.
fn hold(path: &Path) -> std::fs::File {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    f.try_lock().unwrap();
    f
}

/// `measure` with a `--state` that is no state store exits 2 (it used to exit 1), and an input
/// that is also one of its outputs is refused.
#[cfg(unix)]
#[test]
fn measure_refuses_a_state_that_is_no_store_and_an_input_that_is_an_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    failed_status(d);
    std::fs::create_dir(d.join("folder")).unwrap();
    mkfifo(&d.join("fifo"));
    std::fs::write(d.join("notes.txt"), "notes\n".repeat(1000)).unwrap();
    for (state, says) in [
        ("folder", "is a folder"),
        ("/dev/zero", "not a regular file"),
        ("fifo", "not a regular file"),
        ("notes.txt", "not a database"),
    ] {
        let o = etip(
            d,
            &[
                "measure",
                "--etips",
                "status.jsonl",
                "--out",
                "m",
                "--state",
                state,
            ],
        );
        expect(&o, 2, says);
        assert!(!d.join("m/measurements.jsonl").exists());
    }
    let o = etip(
        d,
        &[
            "measure",
            "--etips",
            "status.jsonl",
            "--out",
            "m",
            "--state",
            "status.jsonl",
        ],
    );
    expect(&o, 2, "--etips and --state name the same file");
    std::fs::create_dir(d.join("prev")).unwrap();
    std::fs::copy(d.join("status.jsonl"), d.join("prev/report.html")).unwrap();
    let o = etip(
        d,
        &["measure", "--etips", "prev/report.html", "--out", "prev"],
    );
    expect(&o, 2, "the report.html of --out");
}

/// Two `measure` runs with the same `--out` and different `--state` used to run together and
/// overwrite each other's outputs: the output folder has a lock of its own, and the second run
/// is refused at once (exit 2, as a second run on a held state file is), naming the holder.
#[test]
fn a_second_measure_on_the_same_out_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    failed_status(d);
    std::fs::create_dir(d.join("m")).unwrap();
    let held = hold(&d.join("m/.etip.lock"));
    let started = std::time::Instant::now();
    let o = etip(
        d,
        &[
            "measure",
            "--etips",
            "status.jsonl",
            "--out",
            "m",
            "--state",
            "other.sqlite",
        ],
    );
    expect(&o, 2, "another etip run is writing to the output folder m");
    if Path::new("/proc/locks").exists() {
        expect(&o, 2, &format!("held by pid {}", std::process::id()));
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(!d.join("other.sqlite").exists(), "refused before the state");
    assert!(!d.join("m/measurements.jsonl").exists());
    drop(held);
}

/// `eval` keeps its state in `--out`: a held state or folder names `--out`, never a `--state`
/// option eval does not have.
#[test]
fn a_second_eval_on_the_same_out_is_refused_and_told_to_use_another_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    failed_status(d);
    std::fs::create_dir(d.join("e")).unwrap();
    let args = [
        "eval",
        "--predictions",
        "empty",
        "--etips",
        "status.jsonl",
        "--out",
        "e",
    ];
    let held = hold(&d.join("e/state.sqlite.lock"));
    let o = etip(d, &args);
    expect(&o, 2, "use another --out");
    assert!(!stderr(&o).contains("--state"), "{}", stderr(&o));
    drop(held);
    let held = hold(&d.join("e/.etip.lock"));
    let o = etip(d, &args);
    expect(&o, 2, "another etip run is writing to the output folder e");
    assert!(!stderr(&o).contains("--state"), "{}", stderr(&o));
    drop(held);
    // An input that is one of eval's outputs.
    std::fs::copy(d.join("status.jsonl"), d.join("e/results.jsonl")).unwrap();
    let o = etip(
        d,
        &[
            "eval",
            "--predictions",
            "e/results.jsonl",
            "--etips",
            "status.jsonl",
            "--out",
            "e",
        ],
    );
    expect(
        &o,
        2,
        "--predictions and the results.jsonl of --out name the same file",
    );
}
