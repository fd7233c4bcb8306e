//! What `etip mine local` accepts: date windows, author dates git lets through, worker counts,
//! shallow clones, commits git cannot parse, folders that are not repositories (issue 10,
//! defects 4-7).

mod mine_common;

use std::path::Path;
use std::process::Command;

use mine_common::{JavaRepo, candidates, mine, mine_to, stderr, summary};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// `--until` at or before `--since` leaves nothing to mine: exit code 2 and a message, not an
/// empty success.
#[test]
fn until_before_since_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = JavaRepo::new(dir.path(), "repo");
    repo.good_commits(2);
    let out = dir.path().join("c.jsonl");
    for (since, until) in [
        ("2021-01-01", "2020-01-01"),
        // Date-only --until includes its day: this window ends where it starts.
        ("2020-01-01", "2019-12-31"),
        ("2020-01-01T00:00:00Z", "2020-01-01T00:00:00Z"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_etip"))
            .args(["mine", "local", "--lang", "java", "--repo"])
            .arg(&repo.path)
            .arg("--out")
            .arg(&out)
            .args(["--since", since, "--until", until])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{since}..{until}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("is not after --since"),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists());
    }
    // A one-day window is fine.
    let o = Command::new(env!("CARGO_BIN_EXE_etip"))
        .args([
            "mine", "local", "--lang", "java", "--format", "json", "--repo",
        ])
        .arg(&repo.path)
        .arg("--out")
        .arg(&out)
        .args(["--since", "2020-09-13", "--until", "2020-09-13"])
        .output()
        .unwrap();
    assert_eq!(summary(&o)["commits_scanned"], 2);
}

/// Author dates git stores but that are out of RFC 3339's range (years 0000-9999), or whose
/// offset is, are written as RFC 3339 (clamped to the range), without a crash.
#[test]
fn out_of_range_author_dates_are_written_as_rfc3339() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = JavaRepo::new(dir.path(), "repo");
    repo.good_commits(1);
    let cases = [
        ("1600000000 +0130", "2020-09-13T13:56:40+01:30"),
        ("-100 +0000", "1969-12-31T23:58:20Z"),
        // git itself writes this one (`GIT_AUTHOR_DATE="@300000000000 +0000"`): year 11476.
        ("300000000000 +0000", "9999-12-31T23:59:59Z"),
        ("9223372036854775807 +0000", "9999-12-31T23:59:59Z"),
        ("-62200000000 +0000", "0000-01-01T00:00:00Z"),
        ("-9223372036854775808 +0000", "0000-01-01T00:00:00Z"),
        // In range in UTC, not in the author's offset: written in UTC.
        ("253402300799 +0100", "9999-12-31T23:59:59Z"),
    ];
    let shas: Vec<String> = cases
        .iter()
        .map(|(when, _)| repo.commit(when).to_string())
        .collect();
    let out = dir.path().join("c.jsonl");
    let o = mine_to(&repo.path, &out, &["--jobs", "1"]);
    assert_eq!(summary(&o)["candidates"], cases.len());
    let written = candidates(&out);
    for ((when, expected), sha) in cases.iter().zip(&shas) {
        let c = written
            .iter()
            .find(|c| c["patched_commit"] == sha.as_str())
            .unwrap_or_else(|| panic!("no candidate for {when}"));
        let date = c["author_date"].as_str().unwrap();
        assert_eq!(date, *expected, "{when}");
        assert!(OffsetDateTime::parse(date, &Rfc3339).is_ok(), "{date}");
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `--jobs` above the number of cores is capped, with a warning; `--jobs-force` keeps it; `--jobs 0`
/// is refused with exit code 2.
#[test]
fn jobs_above_the_cores_are_capped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = JavaRepo::new(dir.path(), "repo");
    repo.good_commits(3);
    let out = dir.path().join("c.jsonl");

    let o = mine_to(&repo.path, &out, &["--jobs", "200"]);
    let s = summary(&o);
    assert_eq!(s["jobs"], cores());
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "warning: --jobs 200 is more than the {} cores",
            cores()
        )),
        "{err}"
    );
    assert!(err.contains("--jobs-force"), "{err}");

    let more = (cores() + 1).to_string();
    let o = mine_to(&repo.path, &out, &["--jobs", &more, "--jobs-force"]);
    assert_eq!(summary(&o)["jobs"], cores() + 1);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));

    let o = mine_to(&repo.path, &out, &["--jobs", "1"]);
    assert_eq!(summary(&o)["jobs"], 1);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));

    let o = mine_to(&repo.path, &out, &["--jobs", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--jobs must be at least 1"),
        "{}",
        stderr(&o)
    );
}

/// A shallow clone lacks the history to mine: bad input (exit code 2), and the message says how
/// to fetch the rest.
#[test]
fn a_shallow_clone_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = JavaRepo::new(dir.path(), "full");
    repo.good_commits(4);
    let shallow = dir.path().join("shallow");
    let url = format!("file://{}", repo.path.display());
    let cloned = Command::new("git")
        .args(["clone", "-q", "--depth", "2", &url])
        .arg(&shallow)
        .status()
        .expect("git clone runs");
    assert!(cloned.success());
    assert!(shallow.join(".git/shallow").is_file());

    let out = dir.path().join("c.jsonl");
    let o = mine_to(&shallow, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("is a shallow clone"), "{err}");
    assert!(err.contains("git fetch --unshallow"), "{err}");
    assert!(!out.exists());
}

/// A commit whose author date git cannot parse (here the tip, and one in the middle) is skipped
/// with a warning that names it and its date, and counted in the summary; the others are mined.
/// `--explain` on it says what is wrong with it (exit code 2), not that the branch is missing.
#[test]
fn a_commit_with_a_malformed_author_date_is_skipped_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = JavaRepo::new(dir.path(), "repo");
    repo.good_commits(3);
    let middle = repo.commit("99999999999999999999 +0000").to_string();
    repo.good_commits(2);
    let tip = repo.commit("yesterday +0000").to_string();

    let out = dir.path().join("c.jsonl");
    let o = mine_to(&repo.path, &out, &[]);
    let s = summary(&o);
    let err = stderr(&o);
    assert_eq!(s["tip"], tip.as_str());
    assert_eq!(s["commits_in_history"], 7);
    assert_eq!(s["skipped_unreadable"], 2);
    assert_eq!(s["commits_scanned"], 5);
    assert_eq!(s["outside_window"], 0);
    assert_eq!(s["candidates"], 4);
    let skipped: Vec<&str> = s["unreadable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["sha"].as_str().unwrap())
        .collect();
    // Oldest first, like the candidates.
    assert_eq!(skipped, [middle.as_str(), tip.as_str()]);
    for (sha, date) in [(&tip, "yesterday +0000"), (&middle, "99999999999999999999")] {
        assert!(
            err.lines().any(|l| l.starts_with("warning: skipped commit")
                && l.contains(sha.as_str())
                && l.contains(date)),
            "{err}"
        );
    }
    assert!(!err.contains("not found"), "{err}");
    assert_eq!(candidates(&out).len(), 4);

    let o = mine(
        &repo.path,
        &["--explain".as_ref(), std::ffi::OsStr::new(&tip)],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&tip) && err.contains("yesterday +0000"),
        "{err}"
    );
    assert!(!err.contains("not found"), "{err}");

    // A branch that does not exist is still reported as such.
    let o = mine_to(&repo.path, &out, &["--branch", "nope"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not found"), "{}", stderr(&o));
}

/// A folder that is not a git repository is bad input: exit code 2.
#[test]
fn a_folder_that_is_not_a_repository_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    std::fs::write(plain.join("README"), "not a repository").unwrap();
    let out = dir.path().join("c.jsonl");
    let o = mine_to(&plain, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot open the git repository"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    assert!(!Path::new(&format!("{}.state.sqlite", out.display())).exists());
}

/// Path-rule settings that cannot work are bad input (exit code 2) and nothing is written: a glob
/// that does not parse, ignore globs with the strict rule (which sets nothing aside), an unknown
/// rule name.
#[test]
fn unusable_path_rules_are_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = JavaRepo::new(dir.path(), "repo");
    repo.good_commits(2);
    let out = dir.path().join("c.jsonl");
    for (args, says) in [
        (
            &["--ignore", "docs/[a"][..],
            "invalid ignore glob \"docs/[a\"",
        ),
        (
            &["--path-rule", "strict", "--ignore", "benchmarks/**"][..],
            "the strict path rule sets no path aside",
        ),
        (&["--path-rule", "loose"][..], "loose"),
    ] {
        let o = mine_to(&repo.path, &out, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(!out.exists());
    }
    // `jeto` names the strict rule.
    let o = mine_to(&repo.path, &out, &["--path-rule", "jeto"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
