//! `replay`: each ETIP's reference (or a prediction) evaluated again on every machine profile,
//! `repeats` times, and judged per task: evaluable everywhere, faster everywhere, valid by each
//! benchmark's own rule everywhere, and the median and spread of its runtime change
//! ([`etip_score::replay`], rules §5) — the audit paper's first question as one command.
//!
//! Each replay is an evaluation unit with its own run id (`<run id>/<profile>/<repeat>`). On a
//! swarm a profile is a node label (`etip.profile`): every unit is placed on a node of its
//! profile, all profiles at once. On one machine a profile is a CPU list (`--profiles 0,1` names
//! two profiles, CPU 0 and CPU 1): each replay's sessions are pinned to its cores, one profile
//! after another. The results (`replays.jsonl`, each with its node) are kept in the output
//! folder's state: a replay run again with the same arguments reuses what is done.

use super::{Config, Predictions, Records, jobs, results, units};
use crate::InputError;
use crate::backend::BackendKind;
use crate::executor::Workload;
use crate::progress::{Done, Progress};
use crate::timing::{TestChoice, pinning};
use crate::units::Halt;
use anyhow::Context as _;
use etip_core::unit::{Backend, Stage, WorkUnit};
use etip_records::results::TaskResult;
use etip_score::replay::ReplayRow;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayConfig {
    /// `gold` (each ETIP's reference) or a predictions file.
    pub predictions: Predictions,
    pub tests: TestChoice,
    pub selection: Option<PathBuf>,
    /// Where and how (its `run_id` prefixes each replay's).
    pub run: super::RunConfig,
    /// Machine profiles: node labels on a swarm, CPU lists on one machine.
    pub profiles: Vec<String>,
    /// Replays per profile.
    pub repeats: usize,
}

/// What a replay found.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayOutcome {
    pub profiles: Vec<String>,
    pub repeats: usize,
    pub rows: Vec<ReplayRow>,
    /// Every replay's result.
    pub results: Vec<TaskResult>,
    /// `replays.jsonl`.
    pub file: PathBuf,
}

fn check(cfg: &ReplayConfig) -> Result<(), InputError> {
    if cfg.profiles.is_empty() {
        return Err(InputError("--profiles names no profile".into()));
    }
    let mut seen = std::collections::BTreeSet::new();
    for p in &cfg.profiles {
        if p.is_empty() || !seen.insert(p) {
            return Err(InputError(format!(
                "--profiles: `{p}` is empty or repeated"
            )));
        }
        if cfg.run.backend == BackendKind::Local {
            etip_exec::noise::parse_cpu_list(p).map_err(|e| {
                InputError(format!(
                    "--profiles {p}: on one machine a profile is a CPU list (e.g. 0 or 2-3): {e}"
                ))
            })?;
        } else if p.contains(['"', '=', '!', ' ']) {
            return Err(InputError(format!("--profiles {p}: not a label value")));
        }
    }
    if cfg.repeats == 0 {
        return Err(InputError("--repeats must be at least 1".into()));
    }
    if matches!(cfg.predictions, Predictions::Empty) {
        return Err(InputError(
            "replay runs the reference (gold) or a predictions file, not empty".into(),
        ));
    }
    Ok(())
}

/// Runs every replay of `cfg` and judges them.
pub fn replay(cfg: &ReplayConfig, progress: &dyn Progress) -> anyhow::Result<ReplayOutcome> {
    check(cfg)?;
    let eval_cfg = Config {
        predictions: cfg.predictions.clone(),
        tests: cfg.tests.clone(),
        selection: cfg.selection.clone(),
        allow_test_changes: false,
        run: cfg.run.clone(),
        records: Records::Patches,
        judge: None,
    };
    super::check(&eval_cfg)?;
    let statuses = super::statuses(&cfg.run)?;
    let _lock = crate::output::lock_folder(&cfg.run.out, "--out")?;
    let mut store = results::open_state(&cfg.run.out)?;
    let cache = cfg.run.out.join("repos");
    let jobs = jobs::jobs(&eval_cfg, &statuses, &cache, progress)?;
    let ex = crate::executor::choose(&cfg.run.executor, &statuses, Workload::Candidates, progress)?;
    let disk = super::disk_guard(&cfg.run, ex.data_root.clone());
    let tests = super::tests_of(&eval_cfg, &statuses, progress)?;
    let can_pin = ex.executor.info().can_pin;
    let swarm = cfg.run.backend == BackendKind::Swarm;
    let backend = cfg.run.backend(Stage::Eval)?.open(progress)?;

    let mut by_profile: Vec<(String, Vec<WorkUnit>)> = Vec::new();
    for profile in &cfg.profiles {
        // On one machine the profile is the CPU list the sessions are pinned to; on a swarm each
        // node pins to its own cores (`--cpus` applies there).
        let cpus = if swarm {
            cfg.run.timing.cpus.clone()
        } else {
            Some(profile.clone())
        };
        let (cpuset, notes) = if swarm {
            (None, Vec::new())
        } else {
            pinning(cpus.as_deref(), can_pin)?
        };
        let mut eval = super::eval_config(&eval_cfg, tests.clone(), cpuset, notes)?;
        let mut units = Vec::new();
        for r in 1..=cfg.repeats {
            let run_id = format!("{}/{profile}/{r}", cfg.run.run_id);
            eval.run_id = Some(run_id.clone());
            let params = units::Params {
                run_id,
                eval: eval.clone(),
                cpus: cpus.clone(),
                namespace: cfg.run.executor.namespace.clone(),
                min_free: disk.min,
            };
            let placement =
                swarm.then(|| format!("node.labels.{}=={profile}", etip_core::node::PROFILE_LABEL));
            for u in units::units(Stage::Eval, &jobs, &statuses, &params)? {
                units.push(u.with_placement(placement.clone()));
            }
        }
        by_profile.push((profile.clone(), units));
    }
    // One batch of every unit on a swarm (each placed on its profile's nodes, all at once); one
    // batch per profile on one machine (each with its own CPU set).
    let batches: Vec<(Option<String>, Vec<WorkUnit>)> = if swarm {
        vec![(None, by_profile.into_iter().flat_map(|(_, u)| u).collect())]
    } else {
        by_profile.into_iter().map(|(p, u)| (Some(p), u)).collect()
    };
    if cfg.run.force {
        for (_, units) in &batches {
            for u in units {
                store.forget_work_unit(&u.id())?;
            }
        }
    }
    let total: usize = batches.iter().map(|(_, u)| u.len()).sum();
    progress.start(Some(total as u64));
    let file = cfg.run.out.join("replays.jsonl");
    let mut all: Vec<TaskResult> = Vec::new();
    for (profile, mut units) in batches {
        backend.prepare(&mut units)?;
        // Each unit carries its own evaluation parameters (run id, CPU set); this one is the
        // batch's, for what the runner reads besides.
        let eval = super::eval_config(&eval_cfg, tests.clone(), None, Vec::new())?;
        tracing::info!(
            "replaying on {}",
            profile.as_deref().unwrap_or("every profile")
        );
        let halt = Halt::default();
        let runner = units::Runner {
            cx: super::worker::Context {
                executor: ex.executor.as_ref(),
                cfg: &eval,
                logs: &cfg.run.out.join("logs"),
                cache: &cache,
                labels: false,
                progress,
            },
            disk: &disk,
            halt: &halt,
        };
        let got = run_batch(
            backend.as_ref(),
            &units,
            &runner,
            &mut store,
            &file,
            &mut all,
            progress,
        )?;
        all = got;
        if let Some(why) = halt.reason() {
            anyhow::bail!(
                "{why}; the replays finished so far are in {}",
                file.display()
            );
        }
    }
    progress.end();
    let rows = etip_score::replay::summarize(
        &all,
        cfg.profiles.len() * cfg.repeats,
        &etip_score::rules::Params::default(),
    );
    let outcome = ReplayOutcome {
        profiles: cfg.profiles.clone(),
        repeats: cfg.repeats,
        rows,
        results: all,
        file,
    };
    let summary = serde_json::to_string_pretty(&serde_json::json!({
        "profiles": outcome.profiles,
        "repeats": outcome.repeats,
        "tasks": outcome.rows,
    }))?;
    crate::output::write(&cfg.run.out.join("replay.json"), &summary)?;
    crate::output::write(&cfg.run.out.join("replay.html"), &figure(&outcome))?;
    Ok(outcome)
}

/// `replay.html`: the strip plot of every replay's runtime change, by profile.
fn figure(outcome: &ReplayOutcome) -> String {
    let names: Vec<String> = outcome
        .rows
        .iter()
        .map(|r| format!("{} / {}", r.instance_id, r.model))
        .collect();
    let strips: Vec<etip_report::chart::ReplayStrip<'_>> = outcome
        .rows
        .iter()
        .zip(&names)
        .map(|(r, name)| etip_report::chart::ReplayStrip {
            task: name,
            changes: &r.changes,
            median: r.median_change_pct,
            valid: r.valid_everywhere.get("jeto").copied().unwrap_or(false),
        })
        .collect();
    let svg = etip_report::chart::replay_strips(&strips, &outcome.profiles);
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>etip replay</title></head>\n<body style=\"font-family: system-ui, sans-serif\">\n<h1>Replays: {} profile(s) × {} repeat(s)</h1>\n<p>Each dot is one replay's runtime change 1/s − 1 of the task's patch against the original, coloured by machine profile; the bar is the median, filled when the sign test (JETO's rule) found the patch faster in every replay.</p>\n{svg}\n</body></html>\n",
        outcome.profiles.len(),
        outcome.repeats
    )
}

/// Runs one batch; every result so far (`done` and this batch's, in order) is rewritten to
/// `file` as each arrives.
fn run_batch(
    backend: &dyn Backend,
    units: &[WorkUnit],
    runner: &units::Runner<'_>,
    store: &mut etip_store::Store,
    file: &Path,
    done: &mut Vec<TaskResult>,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<TaskResult>> {
    let before = std::mem::take(done);
    let mut got: Vec<Option<TaskResult>> = vec![None; units.len()];
    let mut failure: Option<anyhow::Error> = None;
    let ran = backend.run(
        units,
        runner,
        store,
        etip_core::cancel::process(),
        &mut |event| {
            let Some((i, r, new)) =
                units::event_result(&event, units, runner.halt.reason().is_some())
            else {
                return;
            };
            if new {
                progress.done(Done::Evaluated {
                    instance: &r.instance_id,
                    model: r.run_id.as_deref().unwrap_or(""),
                    result: &r,
                });
            }
            got[i] = Some(r);
            let lines: Vec<&TaskResult> = before.iter().chain(got.iter().flatten()).collect();
            if failure.is_none()
                && let Err(e) = write_lines(file, &lines)
            {
                failure = Some(e);
            }
        },
    );
    if let Some(e) = failure {
        return Err(e.context("writing the replays"));
    }
    ran.context("running the replays")?;
    Ok(before
        .into_iter()
        .chain(got.into_iter().flatten())
        .collect())
}

fn write_lines(file: &Path, results: &[&TaskResult]) -> anyhow::Result<()> {
    let mut text = String::new();
    for r in results {
        text.push_str(&serde_json::to_string(r)?);
        text.push('\n');
    }
    crate::output::write(file, &text)
}
