use super::*;
use serde_json::json;

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

fn swebench() -> Value {
    json!({
        "instance_id": "psf__requests-6667",
        "repo": "psf/requests",
        "base_commit": "a".repeat(40),
        "patch": "diff --git a/x.py b/x.py\n",
        "test_patch": "diff --git a/tests/t.py b/tests/t.py\n",
        "problem_statement": "Certificates are loaded on every request.",
        "hints_text": "",
        "created_at": "2024-03-19T12:00:00Z",
        "version": 2.31,
        "FAIL_TO_PASS": "[]",
        "PASS_TO_PASS": "[\"tests/test_requests.py::test_a\", \"tests/test_requests.py::test_b\"]",
        "environment_setup_commit": "b".repeat(40),
    })
}

#[test]
fn a_swebench_record_becomes_an_etip_with_its_gold_patch() {
    let t = convert(TaskFormat::Swebench, obj(swebench()), Language::Python).unwrap();
    assert_eq!(t.id, "psf__requests-6667");
    assert_eq!(t.repo, "psf/requests");
    assert_eq!(t.patch.as_deref(), Some("diff --git a/x.py b/x.py\n"));
    assert!(t.patched_commit.is_none() && t.workloads.is_empty());
    assert_eq!(t.task.version.as_deref(), Some("2.31"));
    assert_eq!(t.task.pass_to_pass.len(), 2);
    assert!(t.task.fail_to_pass.is_empty());
    assert!(t.task.hints_text.is_none(), "empty reads as absent");
    assert_eq!(
        t.task.environment.setup_commit.as_deref(),
        Some(&*"b".repeat(40))
    );
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    // The same as a JSON list.
    let mut v = swebench();
    v["PASS_TO_PASS"] = json!(["tests/test_requests.py::test_a"]);
    let t = convert(TaskFormat::Swebench, obj(v), Language::Python).unwrap();
    assert_eq!(t.task.pass_to_pass, ["tests/test_requests.py::test_a"]);
}

#[test]
fn missing_and_mistyped_fields_refuse_the_task_and_unknown_ones_are_kept_and_named() {
    for (field, value, problem) in [
        ("patch", Value::Null, "patch is missing"),
        ("base_commit", json!(""), "base_commit is empty"),
        (
            "repo",
            json!("requests"),
            "repo \"requests\" is not owner/name",
        ),
        ("instance_id", json!("a/b"), "cannot name an ETIP"),
        (
            "PASS_TO_PASS",
            json!("not a list"),
            "PASS_TO_PASS is a string that is not a JSON list",
        ),
        (
            "FAIL_TO_PASS",
            json!([1]),
            "FAIL_TO_PASS holds an item that is not a string",
        ),
        ("created_at", json!(5), "created_at is not a string"),
    ] {
        let mut v = swebench();
        v[field] = value;
        let e = convert(TaskFormat::Swebench, obj(v), Language::Python).unwrap_err();
        assert!(e.contains(problem), "{field}: {e}");
    }
    let mut v = swebench();
    v["difficulty"] = json!("<15 min fix");
    let t = convert(TaskFormat::Swebench, obj(v), Language::Python).unwrap();
    assert_eq!(t.task.extra["difficulty"], "<15 min fix");
    assert!(t.warnings[0].contains("difficulty"), "{:?}", t.warnings);
}

#[test]
fn a_swefficiency_record_carries_its_workload_and_covering_tests() {
    let mut v = swebench();
    v["instance_id"] = json!("sympy__sympy-20000");
    v["repo"] = json!("sympy/sympy");
    v["FAIL_TO_PASS"] = json!([null, null]);
    v["workload"] = json!(
        "import timeit\n\ndef workload():\n    pass\n\nprint(timeit.repeat(workload, number=1, repeat=5))\n"
    );
    v["speedup"] = json!(3.25);
    v["covering_tests"] = json!(["sympy/core/tests/test_basic.py"]);
    v["test_cmd"] = json!("pytest -rA");
    v["rebuild_cmd"] = json!("");
    v["image_name"] = json!("ghcr.io/swefficiency/sympy:20000");
    v["single_thread_tests"] = json!([]);
    let t = convert(TaskFormat::Swefficiency, obj(v.clone()), Language::Python).unwrap();
    assert_eq!(t.workloads.len(), 1);
    assert_eq!(t.workloads[0].name, "workload");
    assert!(
        t.workloads[0]
            .script
            .as_deref()
            .unwrap()
            .contains("def workload")
    );
    assert_eq!(t.task.expert_speedup, Some(3.25));
    assert_eq!(t.task.covering_tests, ["sympy/core/tests/test_basic.py"]);
    assert_eq!(t.task.environment.test_cmd.as_deref(), Some("pytest -rA"));
    assert!(t.task.environment.rebuild_cmd.is_none());
    assert!(
        t.warnings
            .iter()
            .any(|w| w.contains("FAIL_TO_PASS: 2 null item(s) dropped"))
    );
    // SWE-bench's reader keeps SWE-fficiency's own fields as extra, and says so.
    let t = convert(TaskFormat::Swebench, obj(v.clone()), Language::Python).unwrap();
    assert!(t.task.extra.contains_key("workload") && t.workloads.is_empty());
    v.as_object_mut().unwrap().remove("workload");
    let e = convert(TaskFormat::Swefficiency, obj(v), Language::Python).unwrap_err();
    assert_eq!(e, "workload is missing");
}

#[test]
fn a_gso_record_is_its_expert_commit_and_its_performance_tests() {
    let v = json!({
        "instance_id": "numpy__numpy-1234",
        "repo": "numpy/numpy",
        "base_commit": "a".repeat(40),
        "opt_commit": "c".repeat(40),
        "api": "numpy.unique",
        "prob_script": "import numpy",
        "tests": ["print('t0')", "print('t1')"],
        "hints_text": "",
        "setup_commands": ["apt-get install -y gcc"],
        "install_commands": ["uv pip install -e ."],
        "created_at": "2023-01-01",
        "gt_commit_message": "ENH: faster unique",
        "gt_diff": "diff --git a/x b/x\n",
        "arch": "x86_64",
        "instance_image_tag": "latest",
    });
    let t = convert(TaskFormat::Gso, obj(v.clone()), Language::Python).unwrap();
    assert_eq!(t.patched_commit.as_deref(), Some(&*"c".repeat(40)));
    assert!(
        t.patch.is_none(),
        "the expert commit is exact: the diff is not needed"
    );
    let names: Vec<&str> = t.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["gso_test_0", "gso_test_1"]);
    assert_eq!(t.workloads[0].repeat, Some(1));
    assert_eq!(t.task.api.as_deref(), Some("numpy.unique"));
    assert_eq!(t.task.environment.install_commands, ["uv pip install -e ."]);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    let mut no_commit = v.clone();
    no_commit.as_object_mut().unwrap().remove("opt_commit");
    let t = convert(TaskFormat::Gso, obj(no_commit), Language::Python).unwrap();
    assert_eq!(t.patch.as_deref(), Some("diff --git a/x b/x\n"));
    let mut no_tests = v;
    no_tests["tests"] = json!([]);
    let e = convert(TaskFormat::Gso, obj(no_tests), Language::Python).unwrap_err();
    assert!(e.contains("tests"), "{e}");
}

#[test]
fn files_are_json_lines_arrays_or_objects_of_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.jsonl");
    let line = swebench().to_string();
    std::fs::write(&p, format!("{line}\n\n{line}\n")).unwrap();
    let r = read_records(&p).unwrap();
    assert_eq!(r.len(), 2);
    let imported = import(TaskFormat::Swebench, r, Language::Python);
    assert_eq!(imported.tasks.len(), 1);
    assert_eq!(imported.refused[0].index, 2);
    assert!(imported.refused[0].problem.contains("also task 1's"));
    std::fs::write(&p, format!("[{line}, {line}]")).unwrap();
    assert_eq!(read_records(&p).unwrap().len(), 2);
    let mut one = swebench();
    one.as_object_mut().unwrap().remove("instance_id");
    std::fs::write(&p, json!({"psf__requests-1": one}).to_string()).unwrap();
    let r = read_records(&p).unwrap();
    assert_eq!(r[0]["instance_id"], "psf__requests-1");
    std::fs::write(&p, format!("{line}\n[1]\n")).unwrap();
    assert!(matches!(
        read_records(&p),
        Err(ReadError::Line { line: 2, .. })
    ));
    std::fs::write(&p, "[1]").unwrap();
    assert!(matches!(read_records(&p), Err(ReadError::Shape { .. })));
    std::fs::write(&p, "\n").unwrap();
    assert!(matches!(read_records(&p), Err(ReadError::Empty { .. })));
}

/// A GSO-shaped test run through the wrapper by the host's `python3`: GSO's own time is printed.
#[test]
fn the_gso_wrapper_prints_gsos_execution_time() {
    let test = r#"import argparse
import timeit

def setup():
    return list(range(1000))

def experiment(data):
    return sorted(data, reverse=True)

def run_test(eqcheck=False, reference=False, prefix=''):
    data = setup()
    t = timeit.timeit(lambda: experiment(data), number=1)
    return t

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('output_file')
    parser.add_argument('--eqcheck', action='store_true')
    parser.add_argument('--reference', action='store_true')
    parser.add_argument('--file_prefix', type=str)
    args = parser.parse_args()
    t = run_test(args.eqcheck, args.reference, args.file_prefix)
    with open(args.output_file, 'a') as f:
        f.write(f'Execution time: {t:.6f}s\n')

if __name__ == '__main__':
    main()
"#;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("w.py");
    std::fs::write(&script, gso::wrap(test)).unwrap();
    let out = std::process::Command::new("python3")
        .arg(&script)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{out:?}");
    let line = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(line.trim()).unwrap();
    let total = v["total"].as_f64().unwrap();
    assert!(total > 0.0 && total < 1.0, "{v}");
    assert_eq!(v["mean"], v["total"]);
    std::fs::write(&script, gso::wrap("print('no time')\n")).unwrap();
    let out = std::process::Command::new("python3")
        .arg(&script)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrote no execution time"));
}

/// Parquet written by pyarrow (tests/data/README.md), as Hugging Face serves the datasets.
#[test]
fn parquet_files_written_by_pyarrow_are_read_as_their_json_would_be() {
    for file in [
        "swefficiency-schema-sample.snappy.parquet",
        "swefficiency-schema-sample.zstd.parquet",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(file);
        let records = read_records(&path).unwrap();
        assert_eq!(records.len(), 2, "{file}");
        let imported = import(TaskFormat::Swefficiency, records, Language::Python);
        assert!(
            imported.refused.is_empty(),
            "{file}: {:?}",
            imported.refused
        );
        let [a, b] = imported.tasks.as_slice() else {
            panic!("{file}: two tasks");
        };
        assert_eq!(a.id, "org__textutil-1");
        assert_eq!(
            a.task.pass_to_pass,
            ["tests/test_join.py::test_join_many_parts"]
        );
        assert_eq!(a.task.expert_speedup, Some(4.5));
        assert_eq!(a.task.covering_tests, ["tests/test_join.py"]);
        assert!(
            a.warnings
                .iter()
                .any(|w| w.contains("FAIL_TO_PASS: 1 null item(s) dropped"))
        );
        assert_eq!(
            a.workloads[0].script.as_deref(),
            Some("def workload():\n    pass\n")
        );
        assert_eq!(b.task.expert_speedup, None);
        assert_eq!(b.task.hints_text.as_deref(), Some("see #2"));
        assert_eq!(b.task.environment.rebuild_cmd.as_deref(), Some("make"));
        assert_eq!(b.task.single_thread_tests, ["tests/test_join.py"]);
    }
    // A file that says it is Parquet and is not.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("broken.parquet");
    std::fs::write(&p, b"PAR1 and then nothing of the kind").unwrap();
    assert!(matches!(read_records(&p), Err(ReadError::Parquet { .. })));
}

/// Import, export, import: the same ETIP, in every format.
#[test]
fn an_exported_task_reads_back_as_the_same_etip() {
    let mut eff = swebench();
    eff["workload"] = json!("def workload():\n    pass\n");
    eff["speedup"] = json!(2.5);
    eff["covering_tests"] = json!(["tests/test_requests.py"]);
    eff["difficulty"] = json!("hard");
    let gso = json!({
        "instance_id": "numpy__numpy-1234",
        "repo": "numpy/numpy",
        "base_commit": "a".repeat(40),
        "opt_commit": "c".repeat(40),
        "api": "numpy.unique",
        "tests": ["print('t0')\n", "print(\"t1\")\n"],
        "gt_diff": "diff --git a/x b/x\n",
        "setup_commands": ["true"],
    });
    for (format, v) in [
        (TaskFormat::Swebench, swebench()),
        (TaskFormat::Swefficiency, eff),
        (TaskFormat::Gso, gso),
    ] {
        let first = convert(format, obj(v), Language::Python).unwrap();
        let exported = export::record(format, &first);
        let second = convert(format, exported.clone(), Language::Python).unwrap();
        assert_eq!(
            ImportedTask {
                warnings: Vec::new(),
                ..second
            },
            ImportedTask {
                warnings: Vec::new(),
                ..first.clone()
            },
            "{format:?}: {exported:?}"
        );
        if format == TaskFormat::Gso {
            assert_eq!(
                exported["tests"],
                json!(["print('t0')\n", "print(\"t1\")\n"])
            );
            assert_eq!(exported["gt_diff"], "diff --git a/x b/x\n");
            assert!(first.warnings.is_empty(), "{:?}", first.warnings);
        }
    }
}
