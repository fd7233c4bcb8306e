//! What a finished demo is exported as, and the sandbox an agent works in: `etip export` of the
//! demo's ETIPs (SWE-bench's schema, etip's columns, Parquet read back by pyarrow, the images
//! saved), `etip import` of the export giving the same ETIPs back, and `etip sandbox` on one of
//! them (the original tree, the reference tree masked, no network, an agent's change read with
//! `git diff`, a patch applied first).

use super::{etip, lines};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn run_ok(cmd: &mut Command) -> std::process::Output {
    let o = cmd.output().expect("the command runs");
    assert!(
        o.status.success(),
        "{cmd:?} failed ({:?})\n{}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn git(repo: &Path, args: &[&str]) -> String {
    let o = run_ok(Command::new("git").arg("-C").arg(repo).args(args));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The tree `patch` makes of `base` in a clone of `repo` (git's own apply, not etip's).
fn tree_after(repo: &Path, base: &str, patch: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let clone = tmp.path().join("c");
    run_ok(
        Command::new("git")
            .args(["clone", "-q"])
            .arg(repo)
            .arg(&clone),
    );
    git(&clone, &["checkout", "-q", base]);
    let file = tmp.path().join("p.diff");
    std::fs::write(&file, patch).unwrap();
    git(&clone, &["apply", file.to_str().unwrap()]);
    git(&clone, &["add", "-A"]);
    git(&clone, &["write-tree"])
}

/// `etip export` of the demo, checked against the build, the measurements, git and pyarrow;
/// then `etip import` of the export. Returns the exported records by id.
pub fn export_and_reimport(out: &Path) -> BTreeMap<String, Value> {
    let bench = out.join("bench");
    let o = run_ok(
        etip()
            .args(["export", "--etips"])
            .arg(out.join("build/status.jsonl"))
            .arg("--measurements")
            .arg(out.join("measure"))
            .arg("--mined")
            .arg(out.join("candidates.jsonl"))
            .arg("--out")
            .arg(&bench)
            .args(["--output-format", "json"]),
    );
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    let statuses: BTreeMap<String, Value> = lines(&out.join("build/status.jsonl"))
        .into_iter()
        .map(|s| (s["id"].as_str().unwrap().to_string(), s))
        .collect();
    let measured: BTreeMap<String, Value> = lines(&out.join("measure/measurements.jsonl"))
        .into_iter()
        .map(|m| (m["id"].as_str().unwrap().to_string(), m))
        .collect();
    let candidates: BTreeMap<String, Value> = lines(&out.join("candidates.jsonl"))
        .into_iter()
        .map(|c| (c["id"].as_str().unwrap().to_string(), c))
        .collect();
    // The dataset holds exactly the ETIPs measured executable and faster overall.
    let improved: Vec<&String> = measured
        .iter()
        .filter(|(_, m)| {
            m["executable"] == true && m["overall"]["sign_test"]["direction"] == "patched_faster"
        })
        .map(|(id, _)| id)
        .collect();
    assert!(!improved.is_empty(), "the demo's ETIPs are faster");
    let rows: BTreeMap<String, Value> = lines(&bench.join("tasks.jsonl"))
        .into_iter()
        .map(|r| (r["instance_id"].as_str().unwrap().to_string(), r))
        .collect();
    assert_eq!(rows.keys().collect::<Vec<_>>(), improved, "{summary}");
    assert_eq!(summary["counts"]["built"], 2, "{summary}");
    assert_eq!(summary["counts"]["to_build"], 3, "{summary}");
    assert_eq!(summary["counts"]["mined"], 3, "{summary}");
    let repo = out.join("repos/python");
    for (id, r) in &rows {
        let (s, m, c) = (&statuses[id], &measured[id], &candidates[id]);
        assert_eq!(r["repo"], "etip-demo/textutil-python", "{r}");
        assert_eq!(r["base_commit"], s["base_commit"]);
        assert_eq!(r["patched_commit"], s["patched_commit"]);
        assert_eq!(r["language"], "python");
        assert_eq!(r["benchmark"], "etip");
        assert_eq!(
            r["problem_statement"], c["message"],
            "no issue: the message"
        );
        assert_eq!(r["created_at"], c["author_date"]);
        assert_eq!(r["FAIL_TO_PASS"], serde_json::json!([]));
        // The patch makes the patched commit's tree, by git's own apply.
        let patched_tree = git(
            &repo,
            &[
                "rev-parse",
                &format!("{}^{{tree}}", s["patched_commit"].as_str().unwrap()),
            ],
        );
        assert_eq!(
            tree_after(
                &repo,
                s["base_commit"].as_str().unwrap(),
                r["patch"].as_str().unwrap()
            ),
            patched_tree,
            "{id}"
        );
        // The measured figures, as the measurement has them.
        let ratio = m["overall"]["effect"]["median_ratio"].as_f64().unwrap();
        assert_eq!(r["ratio"].as_f64().unwrap(), ratio);
        assert!((r["speedup"].as_f64().unwrap() - 1.0 / ratio).abs() < 1e-12);
        assert_eq!(r["ratio_ci_low"], m["overall"]["effect"]["ratio_ci"][0]);
        assert_eq!(r["p_value"], m["overall"]["sign_test"]["p_patched"]);
        assert_eq!(r["verdict"], "patched_faster");
        assert_eq!(r["detected_by"], m["detectors"]);
        assert_eq!(r["rounds"], m["rounds"]);
        assert_eq!(r["image"], s["image"]);
        // The image is in its archive: docker save's manifest names it.
        let archive = bench.join(r["image_archive"].as_str().unwrap());
        let manifest = run_ok(
            Command::new("tar")
                .arg("-xOf")
                .arg(&archive)
                .arg("manifest.json"),
        );
        let manifest = String::from_utf8_lossy(&manifest.stdout);
        assert!(
            manifest.contains(s["image"].as_str().unwrap()),
            "{} in {manifest}",
            s["image"]
        );
    }
    let card = std::fs::read_to_string(bench.join("README.md")).unwrap();
    for needle in [
        "| built | 2 |",
        "| mined candidates | 3 |",
        "timed rounds",
        "| detectors timed | test",
        "`detected_by`",
    ] {
        assert!(card.contains(needle), "{needle} in the card:\n{card}");
    }

    push(out);

    // pyarrow reads the Parquet file: the same rows, lists and objects as JSON text.
    let script = "import json, sys, pyarrow.parquet as pq\n\
                  t = pq.read_table(sys.argv[1])\n\
                  print(json.dumps({'columns': t.column_names, 'rows': t.to_pylist()}))";
    let parquet = bench.join("tasks.parquet");
    let read: Value =
        serde_json::from_str(&etip_testkit::python(script, &[parquet.as_os_str()])).unwrap();
    let columns: Vec<&str> = read["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(&columns[..3], ["instance_id", "repo", "base_commit"]);
    for row in read["rows"].as_array().unwrap() {
        let r = &rows[row["instance_id"].as_str().unwrap()];
        for col in &columns {
            let (want, got) = (&r[*col], &row[*col]);
            let got = match (want, got) {
                (Value::Array(_) | Value::Object(_), Value::String(s)) => {
                    serde_json::from_str(s).unwrap()
                }
                _ => got.clone(),
            };
            assert_eq!(&got, want, "{col} of {}", row["instance_id"]);
        }
    }

    // Imported back, from either file: the same ETIPs (id, language, base, patch, workloads).
    for file in ["tasks.parquet", "tasks.jsonl"] {
        let again = out.join(format!("reimported-{file}.jsonl"));
        let o = run_ok(
            etip()
                .args(["import", "--format", "swebench"])
                .arg(bench.join(file))
                .arg("--source")
                .arg(&repo)
                .arg("--out")
                .arg(&again),
        );
        let shown = String::from_utf8_lossy(&o.stdout);
        assert!(
            !shown.contains("not swebench's"),
            "no unknown field: {shown}"
        );
        let etips = lines(&again);
        assert_eq!(etips.len(), rows.len());
        for e in &etips {
            let r = &rows[e["id"].as_str().unwrap()];
            assert_eq!(e["language"], r["language"]);
            assert_eq!(e["base_commit"], r["base_commit"]);
            assert_eq!(e["patch"], r["patch"]);
            assert_eq!(e["workloads"].as_array().map_or(0, Vec::len), 0);
            assert_eq!(e["task"]["extra"]["speedup"], r["speedup"], "{file}");
        }
    }
    rows
}

/// `--images push=`: each image in a real registry (Debian's docker-registry on 127.0.0.1), the
/// record's digest the one the registry serves for the pushed tag.
fn push(out: &Path) {
    let registry = etip_testkit::registry::Registry::start();
    let bench = out.join("bench-pushed");
    run_ok(
        etip()
            .args(["export", "--keep", "built", "--etips"])
            .arg(out.join("build/status.jsonl"))
            .arg("--out")
            .arg(&bench)
            .arg(format!("--images=push={}/etiptest", registry.host())),
    );
    let rows = lines(&bench.join("tasks.jsonl"));
    assert_eq!(rows.len(), 2, "both built ETIPs");
    for r in &rows {
        let image = r["image"].as_str().unwrap();
        let (repo, tag) = image.rsplit_once(':').unwrap();
        let pushed = r["image_digest"].as_str().expect("a digest");
        let prefix = format!("{}/etiptest/{repo}@", registry.host());
        let digest = pushed
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{pushed}"));
        assert_eq!(
            registry
                .manifest_digest(&format!("etiptest/{repo}"), tag)
                .as_deref(),
            Some(digest),
            "{pushed}"
        );
        assert!(r["image_archive"].is_null());
    }
    assert!(!bench.join("images").exists(), "pushed, not saved");
}

fn docker(args: &[&str]) -> String {
    let o = run_ok(Command::new("docker").args(args));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Starts `etip sandbox` on `id` (with `patch` applied first, when given); returns its facts.
fn start_sandbox(out: &Path, ns: &str, id: &str, patch: Option<&Path>) -> Value {
    let mut cmd = etip();
    cmd.args(["sandbox", id, "--etips"])
        .arg(out.join("build/status.jsonl"))
        .args(["--namespace", ns, "--output-format", "json"]);
    if let Some(p) = patch {
        cmd.arg("--patch").arg(p);
    }
    serde_json::from_slice(&run_ok(&mut cmd).stdout).unwrap()
}

/// In the sandbox container `c`: `sh -c script` in the working directory `wd`; its stdout.
fn in_sandbox(c: &str, wd: &str, script: &str) -> String {
    docker(&["exec", "-w", wd, c, "sh", "-c", script])
}

/// The agent's change in the sandbox, as an agent framework takes it.
const AGENT_DIFF: &str = "git add -A && git diff --cached";

/// `etip sandbox ID [extra] --patch FILE`, which must be refused as bad input (exit 2).
fn refused_patch(
    out: &Path,
    ns: &str,
    id: &str,
    file: &Path,
    extra: &[&str],
) -> std::process::Output {
    let o = etip()
        .args(["sandbox", id])
        .args(extra)
        .arg("--etips")
        .arg(out.join("build/status.jsonl"))
        .args(["--namespace", ns, "--patch"])
        .arg(file)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The lines a diff adds and removes (no headers): two diffs of one change agree on them.
fn changed_lines(diff: &str) -> Vec<&str> {
    diff.lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect()
}

/// `etip sandbox` as an agent framework uses it.
pub fn sandbox(out: &Path, ns: &str, id: &str, gold: &str) {
    let sb = start_sandbox(out, ns, id, None);
    let c = sb["container"].as_str().unwrap().to_string();
    let wd = sb["workdir"].as_str().unwrap().to_string();
    let inspect = docker(&[
        "inspect",
        "-f",
        "{{.HostConfig.NetworkMode}} {{.HostConfig.Memory}} {{.HostConfig.PidsLimit}} {{.State.Running}}",
        &c,
    ]);
    assert_eq!(inspect, format!("none {} 4096 true", 8192u64 << 20));
    // The original tree is there and committed; the reference tree is masked.
    assert!(!in_sandbox(&c, &wd, "ls").is_empty());
    let hidden = sb["hidden"][0]
        .as_str()
        .expect("the reference tree is hidden");
    assert_eq!(docker(&["exec", &c, "ls", "-A", hidden]), "");
    assert_eq!(in_sandbox(&c, &wd, "git status --porcelain"), "");
    // An agent's edit is its `git diff`.
    in_sandbox(&c, &wd, "echo '# an agent was here' >> pyproject.toml");
    let diff = in_sandbox(&c, &wd, AGENT_DIFF);
    assert_eq!(changed_lines(&diff), ["+# an agent was here"], "{diff}");
    docker(&["rm", "-f", &c]);

    // With the gold patch applied first: the sandbox's diff is the gold change.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("gold.diff");
    std::fs::write(&file, gold).unwrap();
    let sb = start_sandbox(out, ns, id, Some(&file));
    let c = sb["container"].as_str().unwrap().to_string();
    assert_eq!(sb["applied"], "git_apply", "{sb}");
    let diff = in_sandbox(&c, &wd, AGENT_DIFF);
    docker(&["rm", "-f", &c]);
    assert_eq!(changed_lines(&diff), changed_lines(gold), "{diff}");

    // For frameworks that start their own container: an image without the reference tree.
    let mut cmd = etip();
    cmd.args(["sandbox", id, "--image", "--etips"])
        .arg(out.join("build/status.jsonl"))
        .args(["--namespace", ns, "--output-format", "json"]);
    let made: Value = serde_json::from_slice(&run_ok(&mut cmd).stdout).unwrap();
    let image = made["image"].as_str().unwrap();
    assert_eq!(
        image,
        format!("{ns}/sandbox:{}", id.replace('_', "-")),
        "{made}"
    );
    assert_eq!(made["workdir"], wd.as_str(), "{made}");
    assert!(
        made["removed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == hidden),
        "{made}"
    );
    let inside = docker(&[
        "run",
        "--rm",
        "--network",
        "none",
        image,
        "sh",
        "-c",
        &format!(
            "pwd; test -e {hidden} && echo reference-present; git status --porcelain; git log --format=%s"
        ),
    ]);
    let lines: Vec<&str> = inside.lines().collect();
    assert_eq!(lines[0], wd, "{inside}");
    assert!(!inside.contains("reference-present"), "{inside}");
    assert_eq!(lines.len(), 2, "a clean tree with one commit: {inside}");
    assert!(lines[1].contains("original tree"), "{inside}");
    assert_eq!(
        docker(&[
            "image",
            "inspect",
            "-f",
            "{{index .Config.Labels \"etip.namespace\"}}",
            image
        ]),
        ns
    );
    // With a patch it is refused: the image is the original tree's.
    std::fs::write(&file, gold).unwrap();
    refused_patch(out, ns, id, &file, &["--image"]);

    // A patch that does not apply is the user's error (exit 2), and leaves no container.
    std::fs::write(&file, "--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n").unwrap();
    let o = refused_patch(out, ns, id, &file, &[]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("does not apply"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let left = docker(&[
        "ps",
        "-aq",
        "--filter",
        &format!("label=etip.namespace={ns}"),
    ]);
    assert!(left.is_empty(), "containers left: {left}");
}
