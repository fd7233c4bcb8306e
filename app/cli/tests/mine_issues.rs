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

/// Serves what `route` gives for a request's path and query (other requests: 404). The first
/// request meets the primary rate limit (403, `x-ratelimit-remaining: 0`), the second a
/// secondary one (403 with `retry-after`), the third a 502.
/// Each connection is served on its own thread (a request that hangs holds up no other).
fn fake_github(route: impl Fn(&str) -> Option<Value> + Send + Sync + 'static) -> (String, Seen) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let route = Arc::new(route);
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (log, route, count) = (log.clone(), route.clone(), count.clone());
            std::thread::spawn(move || serve(stream, &log, &*route, &count));
        }
    });
    (url, seen)
}

fn serve(
    mut stream: std::net::TcpStream,
    log: &Mutex<Vec<(String, String)>>,
    route: &dyn Fn(&str) -> Option<Value>,
    count: &std::sync::atomic::AtomicUsize,
) {
    {
        {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            if reader.read_line(&mut request).unwrap_or(0) == 0 {
                return;
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
            let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            let (status, extra, body) = if n == 1 {
                (
                    "403 Forbidden",
                    format!(
                        "x-ratelimit-remaining: 0\r\nx-ratelimit-reset: {}\r\n",
                        now + 1
                    ),
                    json!({"message": "API rate limit exceeded"}).to_string(),
                )
            } else if n == 2 {
                (
                    "403 Forbidden",
                    "retry-after: 1\r\n".to_string(),
                    json!({"message": "You have exceeded a secondary rate limit"}).to_string(),
                )
            } else if n == 3 {
                (
                    "502 Bad Gateway",
                    String::new(),
                    json!({"message": "Server Error"}).to_string(),
                )
            } else {
                match route(&path) {
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
    }
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
        "Tidy h (see #6)",
    );
    // Pull request #12, merged by rebase: two commits on the branch, one candidate as a whole.
    let part1 = commit(
        &repo,
        "pkg/__init__.py",
        &body("x + 1", "x + 2", "x + 4"),
        "Cache h's table",
    );
    let part2 = commit(
        &repo,
        "pkg/__init__.py",
        &body("x + 1", "x + 2", "x + 5"),
        "Cache h's table, part 2",
    );
    // Pull request #13, merged by rebase: its second commit changes a test, so the whole pull
    // request fails the rules and its first commit is no candidate either.
    let faster = commit(
        &repo,
        "pkg/__init__.py",
        &body("x + 6", "x + 2", "x + 5"),
        "Faster f again",
    );
    std::fs::create_dir_all(repo.join("tests")).unwrap();
    let with_test = commit(
        &repo,
        "tests/test_f.py",
        "def test_f():\n    assert True\n",
        "Test f",
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
    // Not the JSON of an issue: counted as malformed, the run goes on.
    routes.insert("/repos/a/b/issues/6".to_string(), json!({"number": 6}));
    let merged = |n: u64, last: &str| json!([{"number": n, "merge_commit_sha": last, "merged_at": "2024-01-01T00:00:00Z"}]);
    for (n, last, commits) in [
        (12, &part2, [&part1, &part2]),
        (13, &with_test, [&faster, &with_test]),
    ] {
        for c in commits {
            routes.insert(format!("/repos/a/b/commits/{c}/pulls"), merged(n, last));
        }
        routes.insert(
            format!("/repos/a/b/pulls/{n}"),
            json!({"number": n, "merged": true, "merge_commit_sha": last, "commits": 2}),
        );
    }
    let (url, seen) = fake_github(move |p| routes.get(p.split('?').next().unwrap_or("")).cloned());
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
        stderr.contains("2 candidates linked to an issue (1 through their pull request); 1 referenced numbers are pull requests, 0 unknown to GitHub, 1 answers malformed"),
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
    // #12 is one candidate from its base to its last commit; #13 is gone.
    let whole = &cands[&part2];
    assert_eq!(whole["base_commit"], json!(none), "{whole}");
    assert_eq!(whole["replaces"], json!([part2, part1]));
    assert_eq!(whole["pr_number"], 12);
    assert!(
        !cands.contains_key(&part1) && !cands.contains_key(&faster),
        "{cands:?}"
    );
    assert!(
        stderr.contains("2 candidates replaced by their rebase-merged pull request, 1 dropped because the whole pull request fails a rule"),
        "{stderr}"
    );
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

/// `etip mine github`: the search is cut into windows while one holds more than 1,000 results,
/// and each window read page by page;
/// each repository found is mirrored and mined; one without a build tool is skipped; the
/// candidates classified `yes` are written; a re-run reads the search from the cache.
#[test]
fn mine_github_searches_in_windows_mirrors_and_mines() {
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("one");
    etip_fixtures::write_repo(etip_fixtures::Kind::Python, &one).unwrap();
    let two = tmp.path().join("two");
    std::fs::create_dir_all(&two).unwrap();
    git(&two, &["init", "-q", "-b", "main"]);
    commit(&two, "a.py", "def f():\n    return 1\n", "Initial");
    commit(&two, "a.py", "def f():\n    return 2\n", "Speed up f");
    let items = json!([
        {"full_name": "o/one", "clone_url": one.display().to_string(), "stargazers_count": 500,
         "archived": false, "fork": false, "default_branch": "main"},
        {"full_name": "o/two", "clone_url": two.display().to_string(), "stargazers_count": 300,
         "archived": false, "fork": false, "default_branch": "main"},
        {"full_name": "o/fork", "clone_url": "/nonexistent", "stargazers_count": 900,
         "archived": false, "fork": true}
    ]);
    let (url, seen) = fake_github(move |p| {
        if !p.starts_with("/search/repositories?") {
            return None;
        }
        // pushed:A..B: a window of more than 40 days holds "1,500" repositories.
        let q = p.replace("%3A", ":").replace('+', " ");
        let range = q.split("pushed:").nth(1)?.split(' ').next()?.to_string();
        let (a, b) = range.split_once("..")?;
        let days = |d: &str| -> i64 {
            let v: Vec<i64> = d.split('-').map(|x| x.parse().unwrap()).collect();
            v[0] * 372 + v[1] * 31 + v[2]
        };
        let total = if days(b) - days(a) > 40 { 1500 } else { 150 };
        // Two pages: the fork and o/one, then o/two.
        let page: Vec<Value> = if p.contains("page=2") {
            vec![items[1].clone()]
        } else {
            vec![items[0].clone(), items[2].clone()]
        };
        Some(json!({"total_count": total, "incomplete_results": false, "items": page}))
    });
    let out = tmp.path().join("etips.jsonl");
    let cache = tmp.path().join("cache");
    // The window comes from a configuration file that `etip config init` wrote and a user edited.
    let config = tmp.path().join("etip.toml");
    etip()
        .args(["config", "init", "--out"])
        .arg(&config)
        .assert()
        .success();
    etip()
        .args(["config", "init", "--out"])
        .arg(&config)
        .assert()
        .code(2);
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("# pushed_before ="), "{text}");
    std::fs::write(
        &config,
        text.replace(
            "# pushed_before = \"2026-12-31\"",
            "pushed_before = \"2024-03-01\"",
        ),
    )
    .unwrap();
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "[mine.github]\nstars = 3\n").unwrap();
    etip()
        .args(["mine", "github", "--lang", "python", "--out"])
        .arg(&out)
        .arg("--config")
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("unknown field `stars`"));
    let run = || {
        etip()
            .args([
                "mine", "github", "--lang", "python", "--since", "none", "--config",
            ])
            .arg(&config)
            .args(["--github-api", &url, "--format", "json", "--cache"])
            .arg(&cache)
            .arg("--out")
            .arg(&out)
            .assert()
            .success()
    };
    let first = run();
    let s: Value = serde_json::from_slice(&first.get_output().stdout).unwrap();
    assert_eq!(s["windows_bisected"], 1, "{s}");
    assert_eq!(s["windows"].as_array().unwrap().len(), 3, "{s}");
    assert_eq!(s["repos_found"], 2, "the fork is left out: {s}");
    // No endpoint: the offline rules classified, no LLM request, no cost.
    assert_eq!(
        (s["llm_requests"].as_u64(), s["llm_cost_usd"].is_null()),
        (Some(0), true)
    );
    assert_eq!(s["classifier"], "offline-rules-2");
    let repos = s["repos"].as_array().unwrap();
    assert_eq!(repos[0]["repo"], "o/one");
    assert_eq!(repos[0]["outcome"], "mined");
    assert!(repos[0]["candidates"].as_u64().unwrap() >= 2, "{s}");
    assert!(
        repos[1]["outcome"]
            .as_str()
            .unwrap()
            .starts_with("skipped: build tools"),
        "{s}"
    );
    let written: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        written.len() as u64,
        s["classified"]["yes"].as_u64().unwrap_or(0)
    );
    assert!(!written.is_empty(), "{s}");
    for c in &written {
        assert_eq!(c["repo"], "o/one");
        assert_eq!(c["classification"]["answer"], "yes");
    }
    assert!(cache.join("repos/o__one.git/HEAD").is_file());
    // Again: the search and the lookups come from the cache, the mirror is fetched.
    let asked = seen.lock().unwrap().len();
    let again = run();
    let s2: Value = serde_json::from_slice(&again.get_output().stdout).unwrap();
    assert_eq!(s2["github_requests"], 0, "{s2}");
    assert_eq!(seen.lock().unwrap().len(), asked);
    assert_eq!(s2["written"], s["written"]);
}

/// A killed `etip mine github` started again finishes with the output of a run never killed, and
/// asks no API question twice.
#[test]
fn a_killed_crawl_resumes_to_the_same_output() {
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("one");
    etip_fixtures::write_repo(etip_fixtures::Kind::Python, &one).unwrap();
    let item = json!({"full_name": "o/one", "clone_url": one.display().to_string(),
                      "stargazers_count": 5, "archived": false, "fork": false});
    // The first lookup of issue #8 hangs (the run is killed while it waits); later ones answer.
    let hang = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let hold = hang.clone();
    let (url, seen) = fake_github(move |p| {
        if p.starts_with("/search/repositories?") {
            return Some(
                json!({"total_count": 1, "incomplete_results": false, "items": [item.clone()]}),
            );
        }
        if p == "/repos/o/one/issues/8" && hold.swap(false, std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_secs(120));
        }
        None
    });
    let crawl = |cache: &Path, out: &Path| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_etip"));
        cmd.args(["mine", "github", "--lang", "python", "--since", "none"])
            .args([
                "--pushed-after",
                "2024-01-01",
                "--pushed-before",
                "2024-01-02",
            ])
            .args(["--github-api", &url, "--format", "json", "--cache"])
            .arg(cache)
            .arg("--out")
            .arg(out)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd
    };
    let (cache, out) = (tmp.path().join("cache"), tmp.path().join("etips.jsonl"));
    let mut child = crawl(&cache, &out).spawn().unwrap();
    let started = std::time::Instant::now();
    while !seen
        .lock()
        .unwrap()
        .iter()
        .any(|(p, _)| p == "/repos/o/one/issues/8")
    {
        assert!(
            started.elapsed().as_secs() < 120,
            "the crawl never reached issue #8"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = seen.lock().unwrap().len();
    let resumed = crawl(&cache, &out).output().unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    // Every question answered before the kill comes from the cache (only the one that hung is
    // asked again).
    let paths: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(p, _)| p.clone())
        .collect();
    for p in &paths[before..] {
        assert!(
            p == "/repos/o/one/issues/8" || !paths[..before].contains(p),
            "{p} asked again: {paths:?}"
        );
    }
    // A run never killed, with a cache of its own, writes the same ETIPs.
    let (cache2, out2) = (tmp.path().join("cache2"), tmp.path().join("etips2.jsonl"));
    let fresh = crawl(&cache2, &out2).output().unwrap();
    assert!(fresh.status.success());
    let read = |p: &Path| -> Vec<Value> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                // The mirror's path differs with the cache.
                v.as_object_mut().unwrap().remove("source");
                v
            })
            .collect()
    };
    let (a, b) = (read(&out), read(&out2));
    assert!(!a.is_empty());
    assert_eq!(a, b);
}
