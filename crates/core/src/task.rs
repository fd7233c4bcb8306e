//! What an ETIP imported from a benchmark's task dataset carries beyond its two versions
//! (`etip import`): the task as its benchmark defines it (SWE-bench's schema, SWE-fficiency's
//! workload and covering tests, GSO's performance tests and API), kept as given so that
//! evaluation can apply the benchmark's own rules and an export can give the task back.
//!
//! Travels from `etips.jsonl` through `etip build` into the status of the built instance.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The dataset formats `etip import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskFormat {
    /// SWE-bench's schema (`instance_id`, `repo`, `base_commit`, `patch`, `test_patch`,
    /// `FAIL_TO_PASS`, ...).
    Swebench,
    /// SWE-bench's schema with a `workload` per task, `covering_tests` and the expert `speedup`.
    Swefficiency,
    /// GSO: `opt_commit`, `api`, `prob_script`, performance `tests`, setup and install commands.
    Gso,
}

impl TaskFormat {
    pub const ALL: [TaskFormat; 3] = [
        TaskFormat::Swebench,
        TaskFormat::Swefficiency,
        TaskFormat::Gso,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskFormat::Swebench => "swebench",
            TaskFormat::Swefficiency => "swefficiency",
            TaskFormat::Gso => "gso",
        }
    }

    /// The format named `s` (`swebench`, `swe-bench`, `swefficiency`, `swe-fficiency`, `gso`).
    pub fn parse(s: &str) -> Option<TaskFormat> {
        match s.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "swebench" => Some(TaskFormat::Swebench),
            "swefficiency" => Some(TaskFormat::Swefficiency),
            "gso" => Some(TaskFormat::Gso),
            _ => None,
        }
    }
}

/// How a task's benchmark sets up and runs it, as the dataset gives it (recorded, not guessed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskEnvironment {
    /// SWE-fficiency's `test_cmd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_cmd: Option<String>,
    /// SWE-fficiency's `rebuild_cmd` (rebuilds compiled extensions after a patch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuild_cmd: Option<String>,
    /// GSO's `setup_commands`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup_commands: Vec<String>,
    /// GSO's `install_commands`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub install_commands: Vec<String>,
    /// The benchmark's own image (SWE-fficiency's `image_name`, GSO's `instance_image_tag`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// GSO's `arch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// SWE-bench's `environment_setup_commit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_commit: Option<String>,
    /// The benchmark's environment spec for the task's repository version, when the user gave
    /// the benchmark's specs (`etip import --specs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<EnvironmentSpec>,
}

/// A benchmark's environment spec of one repository version, in the shape SWE-bench's harness
/// keeps them (`MAP_REPO_VERSION_TO_SPECS[repo][version]`): what `etip build` honours instead of
/// inferring it, and records as the source of each setting.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvironmentSpec {
    /// Where it was read: `specs.json: sympy/sympy 1.1`.
    pub source: String,
    /// The Python version (`"3.9"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// Requirements installed beside the project's own (`packages` when it lists them, and
    /// `pip_packages`): `gmpy2`, `numpy==1.17.3`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<String>,
    /// SWE-bench's `pre_install` commands (system packages, locales).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_install: Vec<String>,
    /// SWE-bench's `install` command (how the project itself is installed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
    /// What the spec says that etip does not use, as given (`packages: requirements.txt`:
    /// the repository's own file, which etip's inference reads anyway; `eval_commands`; ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_used: Vec<String>,
}

/// A benchmark task an ETIP was imported from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub format: TaskFormat,
    /// The task's id in its dataset (`astropy__astropy-12907`).
    pub instance_id: String,
    /// `owner/name`.
    pub repo: String,
    /// The repository version the benchmark's environment specs are keyed by (`4.3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem_statement: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints_text: Option<String>,
    /// The tests the task adds or changes (SWE-bench's `test_patch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_patch: Option<String>,
    /// Tests that fail before the gold patch and pass after it (SWE-bench's `FAIL_TO_PASS`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_to_pass: Vec<String>,
    /// Tests that pass before and after (`PASS_TO_PASS`): the correctness gate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_to_pass: Vec<String>,
    /// SWE-fficiency's `covering_tests`: the correctness tests that execute the changed code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub covering_tests: Vec<String>,
    /// SWE-fficiency's `single_thread_tests`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub single_thread_tests: Vec<String>,
    /// The expert patch's speedup the benchmark measured (SWE-fficiency's `speedup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expert_speedup: Option<f64>,
    /// GSO's `api`: the API whose performance the task is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// GSO's `prob_script`: the task's performance script as shown to the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prob_script: Option<String>,
    /// GSO's `gt_commit_message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_message: Option<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub environment: TaskEnvironment,
    /// Fields of the record this format does not define, kept as given (and GSO's `gt_diff`
    /// when an `opt_commit` makes it the patched version: kept for an export).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
}

fn is_default(e: &TaskEnvironment) -> bool {
    *e == TaskEnvironment::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_have_names() {
        for f in TaskFormat::ALL {
            assert_eq!(TaskFormat::parse(f.as_str()), Some(f));
        }
        assert_eq!(TaskFormat::parse("SWE-bench"), Some(TaskFormat::Swebench));
        assert_eq!(
            TaskFormat::parse("swe-fficiency"),
            Some(TaskFormat::Swefficiency)
        );
        assert_eq!(TaskFormat::parse("humaneval"), None);
    }
}
