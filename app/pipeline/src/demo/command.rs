//! The `etip ...` command line that repeats each demo step, rendered from the step's typed
//! configuration (only the flags the demo sets, in the order the demo has always printed them).

use crate::ExecutorKind;
use crate::eval::{self, Predictions, RunConfig};
use crate::mine::local::LocalConfig;
use crate::{build, eval_test, measure};
use std::path::Path;

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// `etip mine local --repo R --lang L --since S --repo-name N --jobs J --out O`.
pub(super) fn mine(cfg: &LocalConfig) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "mine".into(),
        "local".into(),
        "--repo".into(),
        s(&cfg.repo),
        "--lang".into(),
        cfg.lang.as_str().into(),
        "--since".into(),
        cfg.since.clone(),
    ];
    if let Some(name) = &cfg.repo_name {
        v.extend(["--repo-name".into(), name.clone()]);
    }
    if let Some(jobs) = cfg.jobs {
        v.extend(["--jobs".into(), jobs.to_string()]);
    }
    v.extend(["--out".into(), s(&cfg.out)]);
    v
}

/// `etip score --rule RULE RESULTS`: one line for the scores of every rule.
pub(super) fn score(results: &Path) -> Vec<String> {
    vec!["score".into(), "--rule".into(), "RULE".into(), s(results)]
}

pub(super) fn build(cfg: &build::Config) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "build".into(),
        "--etips".into(),
        s(&cfg.etips),
        "--out".into(),
        s(&cfg.out),
    ];
    if let Some(ns) = &cfg.namespace {
        v.extend(["--namespace".into(), ns.clone()]);
    }
    if cfg.executor == ExecutorKind::Local {
        v.extend(["--executor".into(), "local".into()]);
    }
    v
}

/// `--etips STATUS --out DIR --rounds N --namespace NS`.
fn timed(v: &mut Vec<String>, etips: &Path, out: &Path, rounds: usize, namespace: &str) {
    v.extend([
        "--etips".into(),
        s(etips),
        "--out".into(),
        s(out),
        "--rounds".into(),
        rounds.to_string(),
        "--namespace".into(),
        namespace.to_string(),
    ]);
}

fn ids(v: &mut Vec<String>, ids: &[String]) {
    for id in ids {
        v.push("--id".into());
        v.push(id.clone());
    }
}

pub(super) fn measure(cfg: &measure::Config) -> Vec<String> {
    let mut v: Vec<String> = vec!["measure".into(), "--tests".into(), cfg.tests.flag()];
    timed(
        &mut v,
        &cfg.etips,
        &cfg.out,
        cfg.timing.rounds,
        &cfg.executor.namespace,
    );
    if cfg.executor.kind == ExecutorKind::Local {
        v.extend(["--executor".into(), "local".into()]);
    }
    ids(&mut v, &cfg.ids);
    v
}

/// The flags `eval` and `eval-test` share, after the first.
fn run_flags(v: &mut Vec<String>, run: &RunConfig) {
    timed(
        v,
        &run.etips,
        &run.out,
        run.timing.rounds,
        &run.executor.namespace,
    );
    if run.executor.kind == ExecutorKind::Local {
        v.push("--local-trusted".into());
    } else if run.reuse_containers {
        v.push("--reuse-containers".into());
    }
    ids(v, &run.ids);
}

pub(super) fn eval(cfg: &eval::Config) -> Vec<String> {
    let what = match &cfg.predictions {
        Predictions::Gold => "gold".to_string(),
        Predictions::Empty => "empty".to_string(),
        Predictions::File(p) => s(p),
    };
    let mut v: Vec<String> = vec!["eval".into(), "--predictions".into(), what];
    run_flags(&mut v, &cfg.run);
    v
}

pub(super) fn eval_test(cfg: &eval_test::Config) -> Vec<String> {
    let mut v: Vec<String> = vec!["eval-test".into(), "--tests".into(), s(&cfg.tests)];
    run_flags(&mut v, &cfg.run);
    v
}

/// The words of a command line, quoted for a POSIX shell where needed.
pub(super) fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=@,:".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
