//! etip's own task-result JSON Lines (`etip_records::results::TaskResult`, one object per line).

use super::check::{At, IdSet, check_number, check_positive, check_task_runtimes, checked_ratio};
use super::{Format, Submission};
use crate::clip::foreign;
use crate::error::{Result, ScoreError};
use etip_records::results::TaskResult;
use std::collections::BTreeMap;
use std::path::Path;

/// One submission being read: (model, run id), the ids seen, the tasks and their lines.
type Group = (
    (Option<String>, Option<String>),
    IdSet,
    Vec<TaskResult>,
    Vec<usize>,
);

/// Reads a task-results file: one submission, or, for `etip eval`'s output, one per model (and
/// run id, when a model has several: `model@run`), in the order they first appear. `name` names a
/// file without models; a given name (`named`) is refused for a file of several submissions.
pub(super) fn read(path: &Path, text: &str, name: String, named: bool) -> Result<Vec<Submission>> {
    // (model, run id) of each submission, in first-seen order, with its tasks and lines.
    let mut subs: Vec<Group> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let task: TaskResult = serde_json::from_str(raw).map_err(|e| ScoreError::Malformed {
            path: path.to_path_buf(),
            line,
            message: format!("not an etip task result: {}", foreign(syntax_first(raw, e))),
        })?;
        validate(At { path, line }, &task)?;
        let key = (task.model.clone(), task.run_id.clone());
        let at = match subs.iter().position(|s| s.0 == key) {
            Some(at) => at,
            None => {
                subs.push((key, IdSet::new(), Vec::new(), Vec::new()));
                subs.len() - 1
            }
        };
        let s = &mut subs[at];
        s.1.insert(path, line, &task.instance_id)?;
        s.2.push(task);
        s.3.push(line);
    }
    if subs.is_empty() {
        return Err(ScoreError::Empty {
            path: path.to_path_buf(),
            expected: "one JSON task result per line",
        });
    }
    if subs.len() > 1 && named {
        return Err(ScoreError::InvalidParameter(format!(
            "{} holds {} submissions (models or runs of `etip eval`): they are named by their model; give no --name for it",
            path.display(),
            subs.len()
        )));
    }
    let runs_of = |model: &Option<String>| subs.iter().filter(|s| &s.0.0 == model).count();
    let names: Vec<String> = subs
        .iter()
        .map(|((model, run), ..)| match (model, run) {
            (None, _) => name.clone(),
            (Some(_), _) if subs.len() == 1 && named => name.clone(),
            (Some(m), Some(r)) if runs_of(model) > 1 => format!("{m}@{r}"),
            (Some(m), _) => m.clone(),
        })
        .collect();
    Ok(subs
        .into_iter()
        .zip(names)
        .map(|((_, _, tasks, lines), name)| Submission {
            name,
            path: path.to_path_buf(),
            format: Format::EtipJsonl,
            tasks,
            lines,
            total_instances: None,
            official_score: None,
            official_summary: BTreeMap::new(),
            measurements: Vec::new(),
        })
        .collect())
}

/// The error to report for a line that is no task result: a syntax error anywhere in the line
/// (a truncated line, a `NaN`) before a schema error found earlier in it (an unknown field of a
/// measurement), so that a damaged file is reported as damaged.
fn syntax_first(raw: &str, schema: serde_json::Error) -> String {
    match serde_json::from_str::<serde::de::IgnoredAny>(raw) {
        Err(e) if e.is_syntax() || e.is_eof() => {
            format!("invalid JSON at column {}: {e}", e.column())
        }
        _ => schema.to_string(),
    }
}

fn validate(at: At, task: &TaskResult) -> Result<()> {
    if let Some(p) = task.pass_fraction {
        check_number(at.path, at.line, "pass_fraction", p)?;
        if p > 1.0 {
            return Err(at.err(format!("pass_fraction is {p}, expected a value in [0, 1]")));
        }
    }
    let speedup = task
        .speedup
        .map(|v| check_positive(at, "speedup", v))
        .transpose()?;
    let gold = task
        .gold_speedup
        .map(|v| check_positive(at, "gold_speedup", v))
        .transpose()?;
    if let Some(g) = gold {
        // SR = credited / gold: the measured speedup when correct, 1 otherwise.
        checked_ratio(at, &|| "the SR 1 / gold_speedup".into(), 1.0, g)?;
        if let Some(s) = speedup {
            checked_ratio(at, &|| "the SR speedup / gold_speedup".into(), s, g)?;
        }
    }
    check_task_runtimes(at, task)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str, named: bool) -> Result<Vec<(String, usize)>> {
        Ok(read(Path::new("r.jsonl"), text, "r".into(), named)?
            .into_iter()
            .map(|s| (s.name, s.tasks.len()))
            .collect())
    }

    #[test]
    fn an_eval_output_holds_one_submission_per_model_and_run() {
        let plain = "{\"instance_id\":\"a\"}\n{\"instance_id\":\"b\"}\n";
        assert_eq!(names(plain, false).unwrap(), [("r".to_string(), 2)]);
        let models = "{\"instance_id\":\"a\",\"model\":\"m1\",\"run_id\":\"x\"}\n\
                      {\"instance_id\":\"a\",\"model\":\"m2\",\"run_id\":\"x\"}\n\
                      {\"instance_id\":\"b\",\"model\":\"m1\",\"run_id\":\"x\"}\n";
        assert_eq!(
            names(models, false).unwrap(),
            [("m1".to_string(), 2), ("m2".to_string(), 1)]
        );
        assert!(
            names(models, true).is_err(),
            "--name cannot name two submissions"
        );
        let runs = "{\"instance_id\":\"a\",\"model\":\"m\",\"run_id\":\"1\"}\n\
                    {\"instance_id\":\"a\",\"model\":\"m\",\"run_id\":\"2\"}\n";
        assert_eq!(
            names(runs, false).unwrap(),
            [("m@1".to_string(), 1), ("m@2".to_string(), 1)]
        );
        // An instance twice in one submission is still refused.
        let twice =
            "{\"instance_id\":\"a\",\"model\":\"m\"}\n{\"instance_id\":\"a\",\"model\":\"m\"}\n";
        assert!(names(twice, false).is_err());
    }
}
