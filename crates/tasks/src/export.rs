//! ETIPs back into a dataset's schema: the inverse of [`crate::convert`]. A task imported and
//! exported in the same format is the record it was read from (every field the format defines,
//! and the fields it did not define, from `Task::extra`); an ETIP etip mined (no task) gets the
//! format's fields from what etip knows of it.

use crate::ImportedTask;

/// SWE-bench's columns, in its order: the first columns of an `etip export`.
pub const SWEBENCH_COLUMNS: &[&str] = &[
    "instance_id",
    "repo",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
];

/// The columns `etip export` adds to SWE-bench's, with what each holds (the dataset card and
/// `docs/commands/export.md` list them from here). `etip import` reads `language` and
/// `workloads` back into the ETIP and keeps the others with the task, as etip's own fields.
pub const ETIP_COLUMNS: &[(&str, &str)] = &[
    ("language", "`python` or `java`"),
    (
        "patched_commit",
        "the commit of the improvement in `repo` (absent when the ETIP's patched side is a patch)",
    ),
    (
        "workloads",
        "the workloads timed as detectors: `[{name, script, repeat}]`",
    ),
    (
        "benchmark",
        "where the ETIP comes from: `etip` (mined) or the dataset format it was imported from",
    ),
    (
        "executable",
        "both versions ran every timed round of `etip measure` and every test passed",
    ),
    (
        "not_executable",
        "why not (`test_failed`, `no_covering_tests`, ...), when not executable",
    ),
    (
        "speedup",
        "original time over patched time of the ETIP's overall verdict (1 / `ratio`)",
    ),
    (
        "ratio",
        "median over the rounds of patched / original time (overall)",
    ),
    (
        "ratio_ci_low",
        "95 % bootstrap interval of `ratio`, lower bound",
    ),
    ("ratio_ci_high", "upper bound"),
    (
        "p_value",
        "one-sided sign test p-value that the patched version is faster (overall)",
    ),
    (
        "verdict",
        "`patched_faster`, `original_faster` or `not_significant` (overall sign test)",
    ),
    ("rounds", "timed rounds (warm-up excluded)"),
    (
        "detectors",
        "every timed detector (test class, workload, benchmark): `[{name, kind, median_ratio, \
         ratio_ci, p_patched, direction, cliffs_delta}]`",
    ),
    (
        "detected_by",
        "the detectors whose sign test says `patched_faster`",
    ),
    (
        "image",
        "the instance image (both trees, toolchain, dependencies)",
    ),
    (
        "image_id",
        "the image's content digest on the machine that built it",
    ),
    (
        "image_archive",
        "the `docker save` archive under `images/` holding the image (`docker load -i`)",
    ),
    (
        "image_digest",
        "the registry reference the image was pushed to, by digest",
    ),
    ("toolchain", "the interpreter or JDK (`python 3.11`)"),
    (
        "deps_as_of",
        "the date the dependencies were resolved as of",
    ),
    (
        "classification",
        "the classifier's answer on the issue (`yes`, `no`, `unclassified`)",
    ),
    ("classifier", "the classifier's name and version"),
    ("issue_number", "the GitHub issue the ETIP fixes"),
    ("pr_number", "the pull request that merged it"),
    (
        "measurement",
        "how it was timed: `{rounds, warmup, order, min_impr, p_val, timer_rule, tests, \
         executor, cpu_model, engine, cpus}`",
    ),
    (
        "extra",
        "the fields of the dataset an ETIP was imported from that SWE-bench has no column for, \
         as they came (SWE-fficiency's `workload` and `covering_tests`, GSO's `api`, ...)",
    ),
];

/// Whether `name` is one of [`ETIP_COLUMNS`].
pub fn is_etip_column(name: &str) -> bool {
    ETIP_COLUMNS.iter().any(|(n, _)| *n == name)
}

/// Every column of an `etip export`, in order.
pub fn columns() -> Vec<&'static str> {
    SWEBENCH_COLUMNS
        .iter()
        .copied()
        .chain(ETIP_COLUMNS.iter().map(|(n, _)| *n))
        .collect()
}
use etip_core::task::TaskFormat;
use serde_json::{Map, Value, json};

/// The record of `t` in `format`'s schema. GSO's performance tests are exported as the scripts
/// they wrap (workloads etip's GSO wrapper did not make are left out: they are not GSO tests).
pub fn record(format: TaskFormat, t: &ImportedTask) -> Map<String, Value> {
    let task = &t.task;
    let mut m = Map::new();
    let opt = |v: &Option<String>| v.clone().map_or(Value::Null, Value::String);
    m.insert("instance_id".into(), json!(t.id));
    m.insert("repo".into(), json!(t.repo));
    m.insert("base_commit".into(), json!(t.base_commit));
    m.insert("created_at".into(), opt(&task.created_at));
    m.insert("hints_text".into(), opt(&task.hints_text));
    match format {
        TaskFormat::Swebench | TaskFormat::Swefficiency => {
            m.insert("patch".into(), opt(&t.patch));
            m.insert("test_patch".into(), opt(&task.test_patch));
            m.insert("problem_statement".into(), opt(&task.problem_statement));
            m.insert("version".into(), opt(&task.version));
            m.insert("FAIL_TO_PASS".into(), json!(task.fail_to_pass));
            m.insert("PASS_TO_PASS".into(), json!(task.pass_to_pass));
            m.insert(
                "environment_setup_commit".into(),
                opt(&task.environment.setup_commit),
            );
            if format == TaskFormat::Swefficiency {
                let workload = t
                    .workloads
                    .iter()
                    .find(|w| w.name == "workload")
                    .or(t.workloads.first())
                    .and_then(|w| w.script.clone());
                m.insert("workload".into(), opt(&workload));
                m.insert(
                    "speedup".into(),
                    task.expert_speedup.map_or(Value::Null, |s| json!(s)),
                );
                m.insert("covering_tests".into(), json!(task.covering_tests));
                m.insert(
                    "single_thread_tests".into(),
                    json!(task.single_thread_tests),
                );
                m.insert("test_cmd".into(), opt(&task.environment.test_cmd));
                m.insert("rebuild_cmd".into(), opt(&task.environment.rebuild_cmd));
                m.insert("image_name".into(), opt(&task.environment.image));
            }
        }
        TaskFormat::Gso => {
            m.insert("opt_commit".into(), opt(&t.patched_commit));
            // The expert commit's diff, as the task gave it beside `opt_commit`.
            let diff = t.patch.clone().or_else(|| {
                task.extra
                    .get("gt_diff")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
            m.insert("gt_diff".into(), opt(&diff));
            let tests: Vec<String> = t
                .workloads
                .iter()
                .filter_map(|w| w.script.as_deref().and_then(crate::gso::unwrap))
                .collect();
            m.insert("tests".into(), json!(tests));
            m.insert("api".into(), opt(&task.api));
            m.insert("prob_script".into(), opt(&task.prob_script));
            m.insert("gt_commit_message".into(), opt(&task.commit_message));
            m.insert(
                "setup_commands".into(),
                json!(task.environment.setup_commands),
            );
            m.insert(
                "install_commands".into(),
                json!(task.environment.install_commands),
            );
            m.insert("arch".into(), opt(&task.environment.arch));
            m.insert("instance_image_tag".into(), opt(&task.environment.image));
        }
    }
    // What the task's own format did not define travels as it came, unless this format defines
    // a field of that name.
    for (k, v) in &task.extra {
        m.entry(k.clone()).or_insert_with(|| v.clone());
    }
    m
}
