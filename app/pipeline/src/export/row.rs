//! One ETIP as a record of the export: SWE-bench's columns from the task it was imported from, or
//! from what mining knows of it (the issue as the problem statement), then etip's columns from
//! its build and measurement. Fields of an imported task that SWE-bench's schema has no column
//! for go into `extra`, as they came.

use super::Inputs;
use etip_records::measure::{ClassRecord, Measurement};
use etip_stats::Direction;
use etip_tasks::ImportedTask;
use etip_tasks::export::{SWEBENCH_COLUMNS, is_etip_column};
use serde_json::{Map, Value, json};

/// The name a verdict has in the records (`patched_faster`, ...).
pub(crate) fn direction_name(d: Direction) -> String {
    serde_json::to_value(d)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A number as JSON, or null when it is not finite (JSON has no infinity).
fn num(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

/// The record of one ETIP.
pub(crate) fn record(i: &Inputs<'_>) -> Map<String, Value> {
    let s = i.status;
    let mut m = match &s.task {
        Some(task) => from_task(i, task),
        None => mined(i),
    };
    m.insert("language".into(), json!(s.language));
    let patched = if s.patch.is_some() {
        Value::Null
    } else {
        json!(s.patched_commit)
    };
    m.insert("patched_commit".into(), patched);
    let workloads: Vec<Value> = s
        .workloads
        .iter()
        .map(|w| {
            let mut o = Map::new();
            o.insert("name".into(), json!(w.name));
            o.insert("script".into(), json!(w.script));
            if let Some(r) = w.repeat {
                o.insert("repeat".into(), json!(r));
            }
            Value::Object(o)
        })
        .collect();
    m.insert("workloads".into(), Value::Array(workloads));
    m.insert(
        "benchmark".into(),
        json!(s.task.as_ref().map_or("etip", |t| t.format.as_str())),
    );
    if let Some(meas) = i.measurement {
        measured(&mut m, meas);
    }
    m.insert("image".into(), json!(s.image));
    let image_id = s
        .layers
        .iter()
        .rev()
        .find(|l| l.kind == etip_core::instance::LayerKind::Instance)
        .map(|l| l.image_id.clone());
    m.insert("image_id".into(), json!(image_id));
    if let Some(t) = &s.toolchain {
        m.insert(
            "toolchain".into(),
            json!(format!("{} {}", t.language, t.version)),
        );
        m.insert("deps_as_of".into(), json!(t.deps_as_of));
    }
    if let Some(c) = i.candidate {
        if let Some(cl) = &c.classification {
            m.insert("classification".into(), json!(cl.answer));
            m.insert("classifier".into(), json!(cl.classifier));
        }
        m.insert(
            "issue_number".into(),
            json!(c.issue.as_ref().map(|i| i.number)),
        );
        m.insert("pr_number".into(), json!(c.pr_number));
    }
    m
}

/// SWE-bench's columns of an imported task: the task's own record in its format, with the gold
/// patch as applied; what SWE-bench has no column for goes into `extra`.
fn from_task(i: &Inputs<'_>, task: &etip_core::task::Task) -> Map<String, Value> {
    let s = i.status;
    let it = ImportedTask {
        index: 0,
        id: s.id.clone(),
        language: s.language,
        repo: task.repo.clone(),
        base_commit: s.base_commit.clone(),
        patched_commit: s.patch.is_none().then(|| s.patched_commit.clone()),
        patch: Some(i.patch.clone()),
        workloads: s.workloads.clone(),
        task: task.clone(),
        warnings: Vec::new(),
    };
    let own = etip_tasks::export::record(task.format, &it);
    let mut m = Map::new();
    for c in SWEBENCH_COLUMNS {
        m.insert(
            (*c).to_string(),
            own.get(*c).cloned().unwrap_or(Value::Null),
        );
    }
    m.insert("patch".into(), json!(i.patch));
    for k in ["FAIL_TO_PASS", "PASS_TO_PASS"] {
        if m.get(k).is_none_or(Value::is_null) {
            m.insert(k.into(), json!([]));
        }
    }
    let extra: Map<String, Value> = own
        .into_iter()
        .filter(|(k, _)| !SWEBENCH_COLUMNS.contains(&k.as_str()) && !is_etip_column(k))
        .filter(|(_, v)| !v.is_null())
        .collect();
    if !extra.is_empty() {
        m.insert("extra".into(), Value::Object(extra));
    }
    m
}

/// SWE-bench's columns of a mined ETIP: the issue it fixes (else its commit message) as the
/// problem statement; no failing tests (an improvement fixes none) and no test patch (mined
/// ETIPs change no tests).
fn mined(i: &Inputs<'_>) -> Map<String, Value> {
    let s = i.status;
    let c = i.candidate;
    let repo = c.and_then(|c| c.repo.clone()).or_else(|| repo_of_id(&s.id));
    let problem = c.map(|c| match &c.issue {
        Some(issue) if issue.body.trim().is_empty() => issue.title.clone(),
        Some(issue) => format!("{}\n\n{}", issue.title, issue.body),
        None => c.message.clone(),
    });
    let created = c.map(|c| c.author_date.clone()).or_else(|| {
        s.commit_time.and_then(|t| {
            time::OffsetDateTime::from_unix_timestamp(t)
                .ok()
                .and_then(|d| {
                    d.format(&time::format_description::well_known::Rfc3339)
                        .ok()
                })
        })
    });
    let mut m = Map::new();
    m.insert("instance_id".into(), json!(s.id));
    m.insert("repo".into(), json!(repo));
    m.insert("base_commit".into(), json!(s.base_commit));
    m.insert("patch".into(), json!(i.patch));
    m.insert("test_patch".into(), Value::Null);
    m.insert("problem_statement".into(), json!(problem));
    m.insert("hints_text".into(), Value::Null);
    m.insert("created_at".into(), json!(created));
    m.insert("version".into(), Value::Null);
    m.insert("FAIL_TO_PASS".into(), json!([]));
    m.insert("PASS_TO_PASS".into(), json!([]));
    m.insert("environment_setup_commit".into(), Value::Null);
    m
}

/// `owner/name` from a mined id `owner__name-<sha12>`.
fn repo_of_id(id: &str) -> Option<String> {
    let (slug, sha) = id.rsplit_once('-')?;
    let (owner, name) = slug.split_once("__")?;
    (sha.len() == 12 && sha.chars().all(|c| c.is_ascii_hexdigit()) && !owner.is_empty())
        .then(|| format!("{owner}/{name}"))
}

/// etip's measurement columns.
fn measured(m: &mut Map<String, Value>, meas: &Measurement) {
    m.insert("executable".into(), json!(meas.executable));
    m.insert(
        "not_executable".into(),
        json!(meas.reason.and_then(|r| serde_json::to_value(r).ok())),
    );
    m.insert("rounds".into(), json!(meas.rounds));
    if let Some(o) = &meas.overall {
        if let Some(e) = &o.effect {
            m.insert("ratio".into(), num(e.median_ratio));
            m.insert("ratio_ci_low".into(), num(e.ratio_ci[0]));
            m.insert("ratio_ci_high".into(), num(e.ratio_ci[1]));
            let speedup = if e.median_ratio > 0.0 {
                1.0 / e.median_ratio
            } else {
                f64::INFINITY
            };
            m.insert("speedup".into(), num(speedup));
        }
        if let Some(t) = &o.sign_test {
            m.insert("p_value".into(), num(t.p_patched));
            m.insert("verdict".into(), json!(direction_name(t.direction)));
        }
    }
    let detectors: Vec<Value> = meas.classes.iter().filter_map(detector).collect();
    m.insert("detectors".into(), Value::Array(detectors));
    m.insert("detected_by".into(), json!(meas.detectors));
    let p = &meas.protocol;
    let env = &meas.environment;
    m.insert(
        "measurement".into(),
        json!({
            "rounds": p.rounds, "warmup": p.warmup, "order": p.order,
            "min_impr": p.min_impr, "p_val": p.p_val, "timer_rule": p.timer_rule,
            "tests": p.tests, "executor": env.executor, "cpu_model": env.cpu_model,
            "engine": env.engine, "cpus": env.cpus,
        }),
    );
}

/// A timed detector with its verdict (those left out of the verdicts are not detectors).
fn detector(c: &ClassRecord) -> Option<Value> {
    let (e, t) = (c.effect.as_ref()?, c.sign_test.as_ref()?);
    Some(json!({
        "name": c.name,
        "kind": c.kind.as_str(),
        "median_ratio": num(e.median_ratio),
        "ratio_ci": [num(e.ratio_ci[0]), num(e.ratio_ci[1])],
        "p_patched": num(t.p_patched),
        "direction": direction_name(t.direction),
        "cliffs_delta": num(e.cliffs_delta),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_from_a_mined_id() {
        assert_eq!(
            repo_of_id("psf__requests-0123456789ab").as_deref(),
            Some("psf/requests")
        );
        assert_eq!(repo_of_id("python-0123456789ab"), None);
        assert_eq!(repo_of_id("a__b-xyz"), None);
    }
}
