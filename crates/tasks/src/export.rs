//! ETIPs back into a dataset's schema: the inverse of [`crate::convert`]. A task imported and
//! exported in the same format is the record it was read from (every field the format defines,
//! and the fields it did not define, from `Task::extra`); an ETIP etip mined (no task) gets the
//! format's fields from what etip knows of it.

use crate::ImportedTask;
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
