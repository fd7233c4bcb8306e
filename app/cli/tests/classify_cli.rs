//! `etip classify` through the binary: each record printed back with the answer, the classifier and
//! the evidence; GitHub's label objects read; a malformed line is bad input (exit 2) and nothing
//! is printed. With `--llm-base-url`, a real HTTP server on 127.0.0.1 that speaks OpenAI's chat
//! completions answers: the temperature is sent, the key only in the header, a rate limit is
//! retried, answers are parsed robustly and cached, tokens and cost printed.

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

/// A chat-completions server on 127.0.0.1 (the test kit's) that answers like a model would: the
/// first four requests get a rate limit (429: async-openai's own layer retries three times, then
/// etip once more), then "Yes." for an issue that says "slower", "**No**" for one that says
/// "leak", a body that is no chat completion for "Garbage", "maybe" otherwise. Each request's
/// authorization header and body are recorded.
fn fake_openai() -> (String, etip_testkit::chat::Seen) {
    use etip_testkit::chat::{Reply, chat_server};
    chat_server(|body, n| {
        if n < 4 {
            return Reply::Raw(
                429,
                r#"{"error":{"message":"rate limited","type":"rate_limit_error","param":null,"code":null}}"#.into(),
            );
        }
        let prompt = body["messages"][1]["content"].as_str().unwrap_or_default();
        if prompt.contains("Garbage") {
            Reply::Raw(200, r#"{"oops": true}"#.into())
        } else if prompt.contains("slower") {
            Reply::Content("Yes.".into())
        } else if prompt.contains("leak") {
            Reply::Content("**No**".into())
        } else {
            Reply::Content("maybe".into())
        }
    })
}

#[test]
fn an_llm_endpoint_answers_with_temperature_zero_cached_and_counted() {
    let (url, seen) = fake_openai();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("issues.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"repo": "a/b", "title": "Parsing is 3 times slower since 2.1"}"#,
            "\n",
            r#"{"repo": "a/b", "title": "Memory leak on close"}"#,
            "\n",
            r#"{"repo": "a/b", "title": "Add a setting"}"#,
            "\n",
            r#"{"repo": "a/b", "title": "Garbage in"}"#,
            "\n",
        ),
    )
    .unwrap();
    let cache = tmp.path().join("cache.sqlite");
    let run = || {
        etip()
            .arg("classify")
            .arg(&file)
            .args(["--llm-base-url", &url, "--llm-model", "test-model"])
            .args([
                "--llm-price-in",
                "1",
                "--llm-price-out",
                "2",
                "--llm-retries",
                "1",
            ])
            .arg("--llm-cache")
            .arg(&cache)
            .env("OPENAI_API_KEY", "sk-secret-123")
            .assert()
            .success()
    };
    let out = run();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let answers: Vec<&str> = lines
        .iter()
        .map(|l| l["answer"].as_str().unwrap())
        .collect();
    assert_eq!(answers, ["yes", "no", "unclassified", "unclassified"]);
    assert_eq!(lines[0]["classifier"], "llm:test-model");
    assert!(
        lines[2]["reason"].as_str().unwrap().contains("maybe"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3]["reason"]
            .as_str()
            .unwrap()
            .contains("not a chat completion"),
        "a malformed answer is recorded, not dropped: {}",
        lines[3]
    );
    let requests = seen.lock().unwrap().clone();
    let order: Vec<String> = requests
        .iter()
        .map(|r| {
            r.body["messages"][1]["content"]
                .to_string()
                .chars()
                .take(60)
                .collect()
        })
        .collect();
    assert_eq!(
        requests.len(),
        8,
        "four issues, four attempts rate-limited: {order:?}"
    );
    for r in &requests {
        assert_eq!(r.authorization.as_deref(), Some("Bearer sk-secret-123"));
        let body = &r.body;
        assert_eq!(body["temperature"], 0.0, "{body}");
        assert_eq!(body["model"], "test-model");
        assert!(body.to_string().contains("Repository: a/b"));
    }
    assert!(
        stderr.contains("4 request(s), 0 answer(s) from the cache, 1 retried, 300 prompt and 30 completion tokens, cost $0.0004"),
        "{stderr} {order:?}"
    );
    assert!(!stdout.contains("sk-secret") && !stderr.contains("sk-secret"));
    // Again: the answers come from the cache; the malformed one was not stored and is asked again.
    let again = run();
    let stderr = String::from_utf8_lossy(&again.get_output().stderr).to_string();
    assert!(
        stderr.contains("1 request(s), 3 answer(s) from the cache"),
        "{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&again.get_output().stdout), stdout);
    assert_eq!(seen.lock().unwrap().len(), 9);
    // An endpoint that does not answer: a failed run (exit 1) that names it.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://{}/v1", dead.local_addr().unwrap());
    drop(dead);
    let out = etip()
        .arg("classify")
        .arg(&file)
        .args([
            "--llm-base-url",
            &dead_url,
            "--llm-model",
            "other",
            "--llm-retries",
            "0",
        ])
        .arg("--llm-cache")
        .arg(&cache)
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("LLM endpoint") && stderr.contains(&dead_url),
        "{stderr}"
    );
}

/// `etip mine local --classify` with an endpoint: every candidate's commit message is asked once,
/// the verdicts recorded with the model's name.
#[test]
fn mine_local_classifies_candidates_with_the_endpoint() {
    let (url, seen) = fake_openai();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    etip_testkit::fixture_repo("python", &repo);
    let out = tmp.path().join("c.jsonl");
    let run = etip()
        .args([
            "mine",
            "local",
            "--lang",
            "python",
            "--since",
            "none",
            "--classify",
        ])
        .args([
            "--repo-name",
            "a/b",
            "--llm-base-url",
            &url,
            "--llm-model",
            "test-model",
        ])
        .args(["--llm-retries", "1", "--repo"])
        .arg(&repo)
        .arg("--llm-cache")
        .arg(tmp.path().join("cache.sqlite"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).to_string();
    assert!(stdout.contains("classified (llm:test-model"), "{stdout}");
    let cands: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!cands.is_empty());
    for c in &cands {
        let v = &c["classification"];
        assert_eq!(v["classifier"], "llm:test-model", "{c}");
        assert_eq!(v["read"], "commit message");
    }
    // One request per candidate, and the four rate-limited attempts.
    assert_eq!(seen.lock().unwrap().len(), cands.len() + 4);
}
