//! `etip unit run --unit FILE`, the runner a cluster node starts for each unit (docs/cluster.md):
//! whatever happens to the unit, it prints a reply the coordinator can check and exits 0; a file
//! that is no unit is bad input (exit 2). An image the node cannot pull is an infrastructure
//! failure, so the coordinator runs the unit on another node. Needs a running Docker engine (the
//! runner asks it for the image).

use assert_cmd::Command;
use etip_core::unit::wire;
use etip_core::unit::{Stage, UnitError, WorkUnit};

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built by cargo test")
}

/// Runs `unit` through `etip unit run`; its reply, checked against the unit.
fn reply(unit: &WorkUnit) -> wire::Reply {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("unit.json");
    std::fs::write(&file, serde_json::to_string(unit).unwrap()).unwrap();
    let out = etip()
        .args(["unit", "run", "--unit"])
        .arg(&file)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let reply = wire::read(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    reply.check(unit).unwrap();
    reply
}

fn infrastructure(reply: wire::Reply) -> String {
    match reply.into_result() {
        Err(UnitError::Infrastructure { detail, .. }) => detail,
        other => panic!("not an infrastructure failure: {other:?}"),
    }
}

#[test]
fn an_image_the_node_cannot_pull_is_an_infrastructure_failure_in_a_checked_reply() {
    // Nothing listens on port 9: the pull fails at once.
    let image = format!("127.0.0.1:9/etip/none@sha256:{}", "0".repeat(64));
    let unit = WorkUnit::new(
        Stage::Eval,
        r#"["default","m","x"]"#,
        serde_json::json!({}),
        serde_json::json!({}),
        "k",
    )
    .with_images([image.clone()]);
    let detail = infrastructure(reply(&unit));
    assert!(
        detail.contains(&image) && detail.contains("could not be pulled"),
        "{detail}"
    );
}

#[test]
fn a_stage_nodes_do_not_run_is_refused_in_a_reply() {
    let unit = WorkUnit::new(
        Stage::Build,
        "x",
        serde_json::json!({}),
        serde_json::json!({}),
        "k",
    );
    let detail = infrastructure(reply(&unit));
    assert!(detail.contains("build units are not run"), "{detail}");
}

#[test]
fn a_file_that_is_no_unit_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("unit.json");
    std::fs::write(&file, "{\"stage\": \"eval\"").unwrap();
    etip()
        .args(["unit", "run", "--unit"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a work unit"));
    etip()
        .args(["unit", "run", "--unit"])
        .arg(dir.path().join("missing.json"))
        .assert()
        .code(2);
}
