//! `etip replay` on one machine, where CPU lists stand in for machine profiles: bad profiles and
//! counts exit 2 before anything runs; the Python fixture's reference replayed on two CPUs gives
//! one replay per profile, each pinned to its CPU, judged per task, with the figure. Replays on a
//! swarm's profiles are in swarm_cli.rs.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built by cargo test")
}

#[test]
fn bad_profiles_and_counts_exit_2_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let status = dir.path().join("status.jsonl");
    std::fs::write(
        &status,
        "{\"id\":\"x\",\"language\":\"python\",\"outcome\":\"failed\",\"base_commit\":\"a\",\"patched_commit\":\"b\",\"original_dir\":\"/work/original\",\"patched_dir\":\"/work/patched\",\"build_secs\":1.0}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    for (args, says) in [
        (vec!["--profiles", "small,large"], "a CPU list"),
        (vec!["--profiles", "0,0"], "repeated"),
        (
            vec!["--profiles", "0", "--repeats", "0"],
            "--repeats must be at least 1",
        ),
        (
            vec!["--profiles", "0", "--predictions", "empty"],
            "not empty",
        ),
    ] {
        etip()
            .arg("replay")
            .args(&args)
            .arg("--etips")
            .arg(&status)
            .arg("--out")
            .arg(&out)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(says));
        assert!(
            !out.join("replays.jsonl").exists(),
            "{args:?} wrote replays"
        );
    }
}

#[test]
fn the_reference_replayed_on_two_cpus_is_judged_per_task() {
    let tmp = tempfile::tempdir().unwrap();
    let ns = format!("etiptest-replay-{}", std::process::id());
    let status = common::build_python(tmp.path(), "dedup", &ns);
    let out = tmp.path().join("replay");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let profiles = if cpus >= 2 { "0,1" } else { "0" };
    // The replay's rows (stdout, JSON), within `limit` seconds.
    let replay = |limit: u64| -> serde_json::Value {
        let run = etip()
            .args([
                "replay",
                "--rounds",
                "6",
                "--repeats",
                "1",
                "--namespace",
                &ns,
            ])
            .args(["--profiles", profiles, "--format", "json", "--etips"])
            .arg(&status)
            .arg("--out")
            .arg(&out)
            .timeout(std::time::Duration::from_secs(limit))
            .assert()
            .success();
        serde_json::from_slice(&run.get_output().stdout).unwrap()
    };
    let rows = replay(1800);
    let n = profiles.split(',').count();
    assert_eq!(rows.as_array().unwrap().len(), 1);
    let row = &rows[0];
    assert_eq!(row["instance_id"], "dedup");
    assert_eq!(row["replays"], n);
    assert_eq!(row["evaluated"], n);
    assert_eq!(row["evaluable_everywhere"], true);
    // The fixture's reference is about 35% faster: faster in every replay, each change negative.
    assert_eq!(row["faster_everywhere"], true, "{row}");
    let changes = row["changes"].as_array().unwrap();
    assert_eq!(changes.len(), n);
    assert!(
        changes.iter().all(|c| c[1].as_f64().unwrap() < 0.0),
        "{row}"
    );
    // One result per replay, each pinned to its profile's CPU and named by its run id.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(out.join("replays.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut ids: Vec<&str> = lines
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    ids.sort();
    let want: Vec<String> = profiles
        .split(',')
        .map(|p| format!("default/{p}/1"))
        .collect();
    assert_eq!(ids, want);
    for r in &lines {
        assert!(
            !r["node"]["hostname"].as_str().unwrap_or("").is_empty(),
            "{r}"
        );
    }
    assert!(
        std::fs::read_to_string(out.join("replay.html"))
            .unwrap()
            .contains("<svg")
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("replay.json")).unwrap()).unwrap();
    assert_eq!(summary["tasks"][0]["instance_id"], "dedup");
    // Run again: every replay is reused, nothing runs.
    let again = replay(120);
    assert_eq!(again, rows);
    etip()
        .args(["clean", "--namespace", &ns])
        .assert()
        .success();
}
