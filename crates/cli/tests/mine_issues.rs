//! `etip mine local --issues` against a real HTTP server on 127.0.0.1 that answers like GitHub's
//! REST API: a referenced number that is an issue becomes the candidate's issue; one that is a
//! pull request moves to `pull_requests`, and the commit's pull request then links the issue; a
//! rate limit (403 with `x-ratelimit-remaining: 0`) is waited out; with `--classify` the issue is
//! what is classified; the token is sent and never printed; a re-run reads every answer from the
//! cache.

use assert_cmd::Command;
use etip_testkit::git;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

fn etip() -> Command {
    Command::cargo_bin("etip").expect("the etip binary is built")
}

/// (path, authorization header) of each request.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// Serves `routes` (path → JSON); other paths are 404. The first request is rate-limited.
fn fake_github(routes: HashMap<String, Value>) -> (String, Seen) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        let mut limited = false;
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            if reader.read_line(&mut request).unwrap_or(0) == 0 {
                continue;
            }
            let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
            let mut auth = String::new();
            let mut line = String::new();
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if line.to_ascii_lowercase().starts_with("authorization:") {
                    auth = line["authorization:".len()..].trim().to_string();
                }
            }
            log.lock().unwrap().push((path.clone(), auth));
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs();
            let (status, extra, body) = if !limited {
                limited = true;
                (
                    "403 Forbidden",
                    format!(
                        "x-ratelimit-remaining: 0\r\nx-ratelimit-reset: {}\r\n",
                        now + 1
                    ),
                    json!({"message": "API rate limit exceeded"}).to_string(),
                )
            } else {
                let key = path.split('?').next().unwrap_or("").to_string();
                match routes.get(&key) {
                    Some(v) => ("200 OK", String::new(), v.to_string()),
                    None => (
                        "404 Not Found",
                        String::new(),
                        json!({"message": "Not Found"}).to_string(),
                    ),
                }
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, seen)
}

fn commit(repo: &Path, file: &str, content: &str, message: &str) -> String {
    std::fs::write(repo.join(file), content).unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", message]);
    git(repo, &["rev-parse", "HEAD"])
}

#[test]
fn candidates_get_their_issues_through_the_api() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("pkg")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("pyproject.toml"), "[project]\nname = \"pkg\"\n").unwrap();
    let body = |a: &str, b: &str, c: &str| {
        format!(
            "def f(x):\n    return {a}\n\n\ndef g(x):\n    return {b}\n\n\ndef h(x):\n    return {c}\n"
        )
    };
    commit(&repo, "pkg/__init__.py", &body("x", "x", "x"), "Initial");
    let fixes = commit(
        &repo,
        "pkg/__init__.py",
        &body("x + 1", "x", "x"),
        "Make f cheaper\n\nFixes #5",
    );
    let via_pr = commit(
        &repo,
        "pkg/__init__.py",
        &body("x + 1", "x + 2", "x"),
        "Rework g, see #7",
    );
    let none = commit(
        &repo,
        "pkg/__init__.py",
        &body("x + 1", "x + 2", "x + 3"),
        "Tidy h",
    );
    let issue = |n: u64, title: &str, body: &str, labels: &[&str]| {
        json!({"number": n, "title": title, "body": body, "state": "closed",
               "labels": labels.iter().map(|l| json!({"name": l})).collect::<Vec<_>>()})
    };
    let mut routes = HashMap::new();
    routes.insert(
        "/repos/a/b/issues/5".to_string(),
        issue(
            5,
            "f is slow on large inputs",
            "profiling shows f is the hot spot",
            &["performance"],
        ),
    );
    routes.insert(
        "/repos/a/b/issues/7".to_string(),
        json!({"number": 7, "title": "an earlier PR", "state": "closed", "pull_request": {"url": "x"}}),
    );
    routes.insert(
        "/repos/a/b/issues/8".to_string(),
        issue(8, "g takes 10 s on big input", "", &[]),
    );
    routes.insert(
        format!("/repos/a/b/commits/{via_pr}/pulls"),
        json!([{"number": 9, "title": "Rework g", "body": "Closes #8", "merge_commit_sha": via_pr}]),
    );
    routes.insert(
        "/repos/a/b/pulls/9/commits".to_string(),
        json!([{"sha": via_pr, "commit": {"message": "Rework g, see #7"}}]),
    );
    routes.insert(format!("/repos/a/b/commits/{none}/pulls"), json!([]));
    let (url, seen) = fake_github(routes);
    let out = tmp.path().join("c.jsonl");
    let cache = tmp.path().join("gh.sqlite");
    let run = || {
        etip()
            .args(["mine", "local", "--lang", "python", "--since", "none"])
            .args([
                "--repo-name",
                "a/b",
                "--issues",
                "--classify",
                "--github-api",
                &url,
            ])
            .arg("--github-cache")
            .arg(&cache)
            .arg("--repo")
            .arg(&repo)
            .arg("--out")
            .arg(&out)
            .env("GITHUB_TOKEN", "ghp_secret123")
            .assert()
            .success()
    };
    let first = run();
    let stderr = String::from_utf8_lossy(&first.get_output().stderr).to_string();
    let stdout = String::from_utf8_lossy(&first.get_output().stdout).to_string();
    assert!(!stderr.contains("ghp_secret") && !stdout.contains("ghp_secret"));
    assert!(
        stderr.contains("2 candidates linked to an issue (1 through their pull request); 1 referenced numbers are pull requests"),
        "{stderr}"
    );
    let cands: HashMap<String, Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["patched_commit"].as_str().unwrap().to_string(), v)
        })
        .collect();
    let c = &cands[&fixes];
    assert_eq!(c["issue"]["number"], 5);
    assert_eq!(c["issue"]["via"], "commit message");
    assert_eq!(c["issue"]["labels"], json!(["performance"]));
    assert_eq!(c["classification"]["read"], "issue #5");
    assert_eq!(c["classification"]["answer"], "yes");
    let c = &cands[&via_pr];
    assert_eq!(c["pull_requests"], json!([7]), "{c}");
    assert_eq!(c["pr_number"], 9);
    assert_eq!(c["issue"]["number"], 8);
    assert_eq!(c["issue"]["via"], "pull request #9");
    let c = &cands[&none];
    assert!(c.get("issue").is_none(), "{c}");
    assert_eq!(c["classification"]["read"], "commit message");
    let requests = seen.lock().unwrap().clone();
    assert!(
        requests
            .iter()
            .all(|(_, auth)| auth.contains("ghp_secret123")),
        "{requests:?}"
    );
    let rate_limited = requests.len();
    // Again: every answer from the cache, nothing sent.
    let again = run();
    let stderr = String::from_utf8_lossy(&again.get_output().stderr).to_string();
    assert!(stderr.contains("GitHub API: 0 requests"), "{stderr}");
    assert_eq!(seen.lock().unwrap().len(), rate_limited);
}
