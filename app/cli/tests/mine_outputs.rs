//! What `etip mine local` writes: only a regular candidates file (or a new one), through an
//! unpredictable temporary file, and one run at a time per state file (issue 10, defects 1-3).

mod mine_common;

use std::path::Path;
use std::process::Command;

use mine_common::{JavaRepo, candidates, mine_to, stderr, summary};

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

/// `--out` naming a FIFO, a folder or a symbolic link is refused with exit code 2 before any
/// mining, and the thing it names is left as it was (a device node like `/dev/full` is the same
/// case as the FIFO: not a regular file).
#[cfg(unix)]
#[test]
fn an_out_that_is_not_a_regular_file_is_refused_with_exit_2() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let mut repo = JavaRepo::new(dir.path(), "repo");
    repo.good_commits(3);

    let fifo = dir.path().join("fifo.jsonl");
    mkfifo(&fifo);
    let o = mine_to(&repo.path, &fifo, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is not a regular file"),
        "{}",
        stderr(&o)
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // Refused before the state store beside it was made.
    assert!(!dir.path().join("fifo.jsonl.state.sqlite").exists());

    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let o = mine_to(&repo.path, &folder, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is a folder"), "{}", stderr(&o));
    assert!(folder.is_dir());

    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let o = mine_to(&repo.path, &link, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());

    // A regular file (an earlier run's output) is replaced, as before.
    let out = dir.path().join("c.jsonl");
    std::fs::write(&out, "old\n").unwrap();
    let s = summary(&mine_to(&repo.path, &out, &[]));
    assert_eq!(s["candidates"], 2);
    assert_eq!(candidates(&out).len(), 2);
}

/// A symbolic link planted at the temporary name the miner used to write through
/// (`.<out>.tmp`) is neither followed nor replaced: its target keeps its content.
#[cfg(unix)]
#[test]
fn a_symlink_at_the_old_temporary_name_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = JavaRepo::new(dir.path(), "repo");
    repo.good_commits(4);
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let planted = dir.path().join(".c.jsonl.tmp");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();

    let out = dir.path().join("c.jsonl");
    let s = summary(&mine_to(&repo.path, &out, &[]));
    assert_eq!(s["candidates"], 3);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(&planted).unwrap().is_symlink());
    assert!(!std::fs::symlink_metadata(&out).unwrap().is_symlink());
    assert_eq!(candidates(&out).len(), 3);
    // No temporary file is left behind.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n != ".c.jsonl.tmp")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// While another run holds the state file, `mine` fails at once with exit code 2, naming the
/// lock file and the process that holds it; once it is released, mining works.
#[test]
fn a_second_run_on_the_same_state_fails_at_once_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = JavaRepo::new(dir.path(), "repo");
    repo.good_commits(3);
    let out = dir.path().join("c.jsonl");
    let state = dir.path().join("c.jsonl.state.sqlite");

    let held = etip_store::Store::open_exclusive(&state).unwrap();
    let started = std::time::Instant::now();
    let o = mine_to(&repo.path, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("another etip run is using the state file"),
        "{err}"
    );
    assert!(err.contains("c.jsonl.state.sqlite.lock"), "{err}");
    if Path::new("/proc/locks").exists() {
        assert!(
            err.contains(&format!("is held by pid {}", std::process::id())),
            "{err}"
        );
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(!out.exists());

    // Also with an explicit --state.
    let other = dir.path().join("other.jsonl");
    let state_arg = state.to_string_lossy().into_owned();
    let o = mine_to(&repo.path, &other, &["--state", &state_arg]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    drop(held);
    let s = summary(&mine_to(&repo.path, &out, &[]));
    assert_eq!(s["candidates"], 2);
}
