//! `etip classify` through the binary: each record printed back with the answer, the classifier and
//! the evidence; GitHub's label objects read; a malformed line is bad input (exit 2) and nothing
//! is printed.

use assert_cmd::Command;
use serde_json::Value;

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built")
}

#[test]
fn records_come_back_with_answer_classifier_and_evidence() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("issues.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"repo": "a/b", "id": 7, "title": "JSON parsing is 3 times slower since 2.1", "body": "profiled: the hot spot is the tokenizer", "labels": [{"name": "performance"}]}"#,
            "\n\n",
            r#"{"repo": "a/b", "title": "Memory leak when a connection is closed", "labels": ["bug"], "commit_message": "Close the buffer"}"#,
            "\n",
            r#"{"repo": "a/b", "title": ""}"#,
            "\n",
        ),
    )
    .unwrap();
    let out = etip().arg("classify").arg(&file).assert().success();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.get_output().stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["answer"], "yes");
    assert_eq!(lines[0]["id"], 7, "other fields are printed back");
    assert_eq!(lines[0]["classifier"], "offline-rules-2");
    let evidence = lines[0]["evidence"].as_array().unwrap();
    assert!(
        evidence
            .iter()
            .any(|e| e["field"] == "label" && e["matched"] == "performance"),
        "{evidence:?}"
    );
    assert!(
        evidence.iter().any(|e| e["field"] == "title"),
        "{evidence:?}"
    );
    assert_eq!(lines[1]["answer"], "no");
    assert_eq!(lines[1]["rival"][0], "memory");
    assert_eq!(lines[2]["answer"], "unclassified");
    assert!(lines[2]["reason"].as_str().is_some());

    let table = etip()
        .args(["classify", "--format", "table"])
        .arg(&file)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&table.get_output().stdout).to_string();
    assert!(text.contains("1 of 3 about execution time"), "{text}");
}

#[test]
fn a_malformed_record_is_bad_input_and_nothing_is_printed() {
    let tmp = tempfile::tempdir().unwrap();
    for (content, says) in [
        ("{\"title\": \"ok\"}\n{not json\n", "issues.jsonl: line 2"),
        ("{\"title\": 3}\n", "`title` must be a string"),
        (
            "{\"title\": \"x\", \"labels\": \"perf\"}\n",
            "`labels` must be a list",
        ),
        ("[1, 2]\n", "line 1: not a JSON object"),
    ] {
        let file = tmp.path().join("issues.jsonl");
        std::fs::write(&file, content).unwrap();
        let out = etip().arg("classify").arg(&file).assert().code(2);
        let o = out.get_output();
        assert!(o.stdout.is_empty(), "{content}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{content}: {err}");
    }
    etip()
        .arg("classify")
        .arg(tmp.path().join("missing.jsonl"))
        .assert()
        .code(2);
}
