//! Reading inputs (issue 10, section 4): reads are bounded (a line and a file have a size limit, so
//! `/dev/zero` or one huge line is refused instead of filling the memory), JSON that is not what etip
//! reads says what was expected and where, a UTF-8 byte order mark is skipped, and errors quote at
//! most a short prefix of the input.

use etip_score::input;
use std::path::{Path, PathBuf};

const HEADER: &str = "instance_id,raw_pred_speedup_ratio,pred_speedup_ratio,gold_speedup_ratio,\
human_speedup_ratio,correctness,correctness_pct,pre_edit_runtime,patch_length";

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).expect("temp file");
    p
}

fn load_err(path: &Path) -> String {
    match input::load_file(path, None) {
        Ok(_) => panic!("{} was accepted", path.display()),
        Err(e) => {
            assert!(e.is_input_error(), "{e}");
            e.to_string()
        }
    }
}

#[test]
fn an_endless_line_is_refused_at_the_line_limit() {
    let zero = Path::new("/dev/zero");
    if !zero.exists() {
        return;
    }
    let started = std::time::Instant::now();
    let e = load_err(zero);
    assert!(
        e.contains("line 1 of /dev/zero is longer than 64 MiB"),
        "{e}"
    );
    assert!(
        started.elapsed().as_secs() < 60,
        "stopped at the limit: {:?}",
        started.elapsed()
    );
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let t = tempfile::tempdir().expect("temp dir");
    let f = write(
        t.path(),
        "bom.csv",
        &format!("\u{feff}{HEADER}\nx,1,1,2,0.5,1,1,1,1\n"),
    );
    let sub = input::load_file(&f, None).expect("a CSV with a BOM loads");
    assert_eq!(sub.tasks[0].instance_id, "x");
    let f = write(
        t.path(),
        "bom.jsonl",
        "\u{feff}{\"instance_id\":\"a\",\"correct\":true}\n",
    );
    input::load_file(&f, None).expect("JSON Lines with a BOM load");
    let f = write(
        t.path(),
        "bom.json",
        "\u{feff}{\"summary\": {\"total_instances\": 2}, \"instance_sets\": {\"completed_ids\": [\"a\"], \
         \"passed_ids\": [\"a\"], \"opt_base_ids\": [], \"opt_commit_ids\": []}}",
    );
    input::load_file(&f, None).expect("a GSO report with a BOM loads");
}

#[test]
fn json_of_the_wrong_shape_says_what_was_expected_and_where() {
    let t = tempfile::tempdir().expect("temp dir");
    for (content, found) in [
        ("[]", "found an array"),
        ("null", "found null"),
        ("42", "found a number"),
        ("\"text\"", "found a string"),
        ("true", "found a boolean"),
        ("\u{feff}[]", "found an array"),
        ("\n\n  42\n", "found a number"),
    ] {
        let f = write(t.path(), "x.json", content);
        let e = load_err(&f);
        assert!(
            e.contains("x.json") && e.contains(found) && e.contains("expected"),
            "{content:?}: {e}"
        );
        assert!(!e.contains("neither CSV nor JSON"), "{content:?}: {e}");
        let line = if content.starts_with('\n') {
            "line 3 column 3"
        } else {
            "line 1 column 1"
        };
        assert!(e.contains(line), "{content:?}: {e}");
    }
}

#[test]
fn deep_nesting_is_a_clean_error() {
    let t = tempfile::tempdir().expect("temp dir");
    let deep = "[".repeat(100_000);
    for name in ["deep.json", "deep.txt", "deep"] {
        let f = write(t.path(), name, &deep);
        let e = load_err(&f);
        assert!(
            e.contains(&format!("{name}:1: invalid JSON at column")),
            "{name}: {e}"
        );
        assert!(e.len() < 600, "{name}: {} bytes: {e}", e.len());
    }
    let deep_object = format!("{}{}", "{\"a\":".repeat(50_000), "1");
    let f = write(t.path(), "deep-object.json", &deep_object);
    let e = load_err(&f);
    assert!(e.contains("deep-object.json:1:"), "{e}");
    assert!(e.len() < 600, "{} bytes", e.len());
}

#[test]
fn errors_quote_a_short_prefix_of_the_input() {
    let t = tempfile::tempdir().expect("temp dir");
    let huge = "h".repeat(1_000_000);
    let f = write(
        t.path(),
        "header.csv",
        &format!("{HEADER},{huge}\nx,1,1,2,0.5,1,1,1,1,1\n"),
    );
    let e = load_err(&f);
    assert!(e.contains("header.csv:1: unknown column"), "{}", &e[..200]);
    assert!(e.len() < 1_000, "{} bytes of error", e.len());
    assert!(e.contains('…'), "{e}");

    let f = write(
        t.path(),
        "ids.csv",
        &format!("{HEADER}\n{huge},1,1,2,0.5,1,1,1,1\n{huge},1,1,2,0.5,1,1,1,1\n"),
    );
    let e = load_err(&f);
    assert!(
        e.contains("ids.csv:3: duplicate instance_id"),
        "{}",
        &e[..200]
    );
    assert!(e.len() < 1_000, "{} bytes of error", e.len());

    let f = write(
        t.path(),
        "number.csv",
        &format!("{HEADER}\nx,1,1,{huge},0.5,1,1,1,1\n"),
    );
    let e = load_err(&f);
    assert!(e.len() < 1_000, "{} bytes of error", e.len());

    let f = write(
        t.path(),
        "key.json",
        &format!("{{\"{huge}\": 1, \"other\": 2}}"),
    );
    let e = load_err(&f);
    assert!(e.len() < 1_000, "{} bytes of error", e.len());

    let f = write(
        t.path(),
        "field.jsonl",
        &format!("{{\"instance_id\":\"a\",\"{huge}\":true}}\n"),
    );
    let e = load_err(&f);
    assert!(e.contains("field.jsonl:1:"), "{}", &e[..100]);
    assert!(e.len() < 1_000, "{} bytes of error", e.len());
}
