//! How every command reads the files a user names (issue 29): within the limits the score readers
//! set (64 MiB per line, 256 MiB per file), so that `/dev/zero` or one enormous line is refused
//! (exit 2) after a bounded amount of memory; a UTF-8 byte order mark accepted everywhere; and
//! messages that say what is wrong with the file (a damaged measurements file, a JSON array of
//! predictions, a bad `--namespace` of the demo before anything is written).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const ETIP: &str = env!("CARGO_BIN_EXE_etip");

/// Runs `etip args...` in `dir` with at most 2 GiB of address space, so that a reader without a
/// bound fails here instead of filling the machine's memory.
fn etip(dir: &Path, args: &[&str]) -> Output {
    let quoted: Vec<String> = args
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 2097152; exec '{ETIP}' {}",
            quoted.join(" ")
        ))
        .current_dir(dir)
        .env_remove("ETIP_LOG")
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .stdin(Stdio::null())
        .output()
        .expect("running etip")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
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

/// A status list of one failed build (`etip build`'s status.jsonl).
const STATUS: &str = "{\"id\":\"x\",\"language\":\"java\",\"outcome\":\"failed\",\"base_commit\":\"a\",\"patched_commit\":\"b\",\"original_dir\":\"/work/original\",\"patched_dir\":\"/work/patched\",\"build_secs\":1.0}\n";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// `etip classify /dev/zero` grew without bound (5 GB after 12 s): every reader stops at the line
/// limit, quickly, with exit code 2 and the file named.
#[test]
fn endless_inputs_are_refused_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "status.jsonl", STATUS);
    write(d, "etips.jsonl", "");
    let cases: [&[&str]; 7] = [
        &["classify", "/dev/zero"],
        &["build", "--config", "/dev/zero", "--print-config"],
        &["build", "--etips", "/dev/zero", "--out", "o"],
        &["measure", "--etips", "/dev/zero", "--out", "m"],
        &["select", "--etips", "/dev/zero", "--out", "s"],
        &[
            "eval",
            "--predictions",
            "/dev/zero",
            "--etips",
            "status.jsonl",
            "--out",
            "e",
        ],
        &[
            "mine",
            "github",
            "--lang",
            "java",
            "--out",
            "g.jsonl",
            "--config",
            "/dev/zero",
        ],
    ];
    for args in cases {
        let started = std::time::Instant::now();
        let o = etip(d, args);
        expect(&o, 2, "/dev/zero");
        expect(&o, 2, "64 MiB");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{args:?} took {:?}",
            started.elapsed()
        );
    }
}

/// One line over 64 MiB (a 400 MB line used to be accepted and use 1.5 GB) is refused with its
/// line number by the readers of issues, ETIP and status lists, predictions and configurations.
#[test]
fn a_line_over_the_limit_is_refused_with_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "status.jsonl", STATUS);
    let mut big = String::from("{\"title\":\"ok\"}\n\"");
    big.push_str(&"a".repeat((64 << 20) + 10));
    big.push_str("\"\n");
    write(d, "big.jsonl", &big);
    drop(big);
    let cases: [&[&str]; 5] = [
        &["classify", "big.jsonl"],
        &["build", "--etips", "big.jsonl", "--out", "o"],
        &["measure", "--etips", "big.jsonl", "--out", "m"],
        &[
            "eval",
            "--predictions",
            "big.jsonl",
            "--etips",
            "status.jsonl",
            "--out",
            "e",
        ],
        &["build", "--config", "big.jsonl", "--print-config"],
    ];
    for args in cases {
        let o = etip(d, args);
        expect(&o, 2, "big.jsonl");
        expect(&o, 2, "line 2 is longer than the limit of 64 MiB");
    }
}

/// A UTF-8 byte order mark, which `score` and `audit` accepted, is accepted by every reader (it
/// was refused as "expected value at line 1 column 1"): each command below gets past reading its
/// file to the check that follows.
#[test]
fn a_byte_order_mark_is_accepted_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bom = "\u{feff}";
    write(
        d,
        "issues.jsonl",
        &format!("{bom}{{\"title\":\"JSON parsing is 3 times slower\",\"body\":\"\"}}\n"),
    );
    let o = etip(d, &["classify", "issues.jsonl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"answer\""));

    write(
        d,
        "etips.jsonl",
        &format!(
            "{bom}{{\"id\":\"a\",\"language\":\"python\",\"base_commit\":\"aaaa\",\"patched_commit\":\"bbbb\",\"source\":\"repo\"}}\n"
        ),
    );
    let o = etip(
        d,
        &[
            "build",
            "--etips",
            "etips.jsonl",
            "--id",
            "nope",
            "--out",
            "o",
        ],
    );
    expect(&o, 2, "no ETIP with id nope");
    write(d, "etip.toml", &format!("{bom}namespace = \"mine\"\n"));
    let o = etip(d, &["build", "--config", "etip.toml", "--print-config"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("namespace = \"mine\""));

    write(d, "status.jsonl", &format!("{bom}{STATUS}"));
    let o = etip(
        d,
        &[
            "measure",
            "--etips",
            "status.jsonl",
            "--id",
            "nope",
            "--out",
            "m",
        ],
    );
    expect(&o, 2, "no ETIP with id nope");
    let o = etip(
        d,
        &[
            "select",
            "--etips",
            "status.jsonl",
            "--id",
            "nope",
            "--out",
            "s",
        ],
    );
    expect(&o, 2, "no ETIP with id nope");
    write(
        d,
        "preds.jsonl",
        &format!(
            "{bom}{{\"instance_id\":\"y\",\"model_name_or_path\":\"m\",\"model_patch\":null}}\n"
        ),
    );
    let o = etip(
        d,
        &[
            "eval",
            "--predictions",
            "preds.jsonl",
            "--etips",
            "status.jsonl",
            "--out",
            "e",
        ],
    );
    expect(&o, 2, "no prediction names an instance");

    write(
        d,
        "github.toml",
        &format!("{bom}[mine.github]\nmin_stars = 5\n"),
    );
    let o = etip(
        d,
        &[
            "mine",
            "github",
            "--lang",
            "java",
            "--out",
            "g.jsonl",
            "--config",
            "github.toml",
            "--pushed-after",
            "someday",
        ],
    );
    expect(&o, 2, "--pushed-after \"someday\" is not a day");
}

/// A measurements file cut short or holding a `NaN`, under a name other than measurements.jsonl,
/// was reported as "unknown field `schema_version`"; it is reported as the broken JSON it is.
#[test]
fn a_damaged_measurements_file_is_reported_as_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, text) in [
        (
            "run1.jsonl",
            "{\"schema_version\":1,\"id\":\"x\",\"executable\":tr\n",
        ),
        (
            "run2.jsonl",
            "{\"schema_version\":1,\"id\":\"x\",\"executable\":true,\"rounds\":NaN}\n",
        ),
    ] {
        write(d, name, text);
        let o = etip(d, &["score", "--rule", "jeto", name]);
        expect(
            &o,
            2,
            &format!("{name}:1: not an etip measurement: invalid JSON"),
        );
        assert!(!stderr(&o).contains("unknown field"), "{}", stderr(&o));
    }
    // A task result cut short is reported as broken JSON too.
    write(
        d,
        "results.jsonl",
        "{\"instance_id\":\"a\",\"correct\":true,\"speedup\":NaN}\n",
    );
    let o = etip(d, &["score", "--rule", "swefficiency", "results.jsonl"]);
    expect(
        &o,
        2,
        "results.jsonl:1: not an etip task result: invalid JSON",
    );
}

/// A JSON array in `--predictions` was reported as "expected struct Raw with 5 elements", and an
/// array of the five fields was even taken as a prediction.
#[test]
fn a_json_array_of_predictions_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "status.jsonl", STATUS);
    let one = r#"{"instance_id":"x","model_name_or_path":"m","model_patch":"diff"}"#;
    for text in [
        format!("[{one}]\n"),
        format!("[\n  {one}\n]\n"),
        "[]\n".to_string(),
        "[\"x\",\"m\",\"diff\",null,null]\n".to_string(),
    ] {
        write(d, "preds.json", &text);
        let o = etip(
            d,
            &[
                "eval",
                "--predictions",
                "preds.json",
                "--etips",
                "status.jsonl",
                "--out",
                "e",
            ],
        );
        expect(&o, 2, "not a JSON object but");
        expect(&o, 2, "jq -c");
        assert!(!stderr(&o).contains("struct Raw"), "{}", stderr(&o));
        assert!(!d.join("e/results.jsonl").exists());
    }
}

/// `etip demo --namespace 'BAD NS'` wrote and mined the repositories, then failed at the build:
/// the namespace is checked before anything is written.
#[test]
fn the_demo_checks_its_namespace_before_writing_anything() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = etip(d, &["demo", "--namespace", "BAD NS", "--out", "demo"]);
    expect(&o, 2, "--namespace");
    expect(&o, 2, "BAD NS");
    assert!(!d.join("demo").exists(), "nothing was written");
}
