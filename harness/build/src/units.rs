//! A batch of builds as work units: one [`WorkUnit`] per ETIP (stage `build`, the ETIP's input as
//! its spec, a key of the input, the build configuration and the builder), run by any
//! [`Backend`] through [`run`], with a [`MemoryLedger`].
//!
//! A build's lasting record is its images, tagged by content key: a finished build run again finds
//! its layers and reports them reused, and a removed image is built again. So the ledger of a
//! batch lives in memory and every run asks the engine. The unit's output is the ETIP's
//! [`InstanceStatus`]; a build that failed for the ETIP (it does not compile, a commit is missing)
//! is a finished unit, one the engine failed ([`FailureKind::Engine`]) an infrastructure failure
//! that keeps its status. Workers write each ETIP's log folder; the coordinating thread appends
//! the statuses to `<out>/status.jsonl` as they finish and reports them.

use crate::config::BuildConfig;
use crate::local::LocalBuilder;
use crate::{Builder, EtipInput, Event, list, refuse_repeated};
use etip_core::cancel::CancelToken;
use etip_core::instance::{FailureKind, InstanceStatus};
use etip_core::unit::{
    Backend, BackendError, MemoryLedger, RunSummary, Stage, UnitError, UnitEvent, UnitOutput,
    UnitRunner, WorkUnit, position,
};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;

/// A builder a batch can run on worker threads: images (Docker) or host processes (local).
pub trait BuildOne: Sync {
    /// `docker` or `local`.
    fn kind(&self) -> &'static str;
    fn config(&self) -> &BuildConfig;
    /// The output folder (`status.jsonl`, `logs/`).
    fn out(&self) -> &Path;
    /// Builds one ETIP and records its status in its log folder (not in `status.jsonl`).
    fn build(&self, etip: &EtipInput, on_event: &(dyn Fn(&Event) + Sync)) -> InstanceStatus;
}

impl BuildOne for Builder {
    fn kind(&self) -> &'static str {
        "docker"
    }
    fn config(&self) -> &BuildConfig {
        Builder::config(self)
    }
    fn out(&self) -> &Path {
        Builder::out(self)
    }
    fn build(&self, etip: &EtipInput, on_event: &(dyn Fn(&Event) + Sync)) -> InstanceStatus {
        Builder::build(self, etip, on_event)
    }
}

impl BuildOne for LocalBuilder {
    fn kind(&self) -> &'static str {
        "local"
    }
    fn config(&self) -> &BuildConfig {
        LocalBuilder::config(self)
    }
    fn out(&self) -> &Path {
        LocalBuilder::out(self)
    }
    fn build(&self, etip: &EtipInput, on_event: &(dyn Fn(&Event) + Sync)) -> InstanceStatus {
        LocalBuilder::build(self, etip, on_event)
    }
}

/// One unit per ETIP. An id an earlier ETIP of the batch has is not built (it would replace the
/// first one's log folder while that builds): its unit says which ETIP it repeats.
pub fn units(etips: &[EtipInput], builder: &dyn BuildOne) -> Vec<WorkUnit> {
    let mut first_of: HashMap<&str, usize> = HashMap::new();
    let config = serde_json::to_value(builder.config()).unwrap_or_default();
    etips
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let repeats = first_of.get(e.id.as_str()).copied();
            first_of.entry(&e.id).or_insert(i);
            let spec = serde_json::to_value(e).unwrap_or_default();
            let params = serde_json::json!({ "builder": builder.kind(), "repeats": repeats });
            let key = serde_json::json!({ "etip": spec, "config": config, "params": params });
            let key = hex::encode(Sha256::digest(key.to_string().as_bytes()));
            WorkUnit::new(Stage::Build, e.id.clone(), spec, params, key)
        })
        .collect()
}

/// Runs build units on a worker: builds the ETIP of the unit's spec.
pub struct Runner<'a> {
    pub builder: &'a dyn BuildOne,
    /// Sees each ETIP's start and layers (from the worker).
    pub on_event: &'a (dyn Fn(&Event) + Sync),
}

impl UnitRunner for Runner<'_> {
    fn run(&self, unit: &WorkUnit, _cancel: &CancelToken) -> Result<UnitOutput, UnitError> {
        let etip: EtipInput =
            serde_json::from_value(unit.spec.clone()).map_err(UnitError::Record)?;
        let status = match unit.params["repeats"].as_u64() {
            Some(first) => refuse_repeated(&etip, first as usize),
            None => self.builder.build(&etip, self.on_event),
        };
        let output = UnitOutput::of(&status)?;
        match status.failure {
            // The engine failed: the build says nothing about the ETIP.
            Some(FailureKind::Engine) => Err(UnitError::infrastructure_with(
                status
                    .reason
                    .as_deref()
                    .unwrap_or("the Docker engine failed"),
                output,
            )),
            _ => Ok(output),
        }
    }
}

/// Builds every ETIP of `etips` on `backend` (see the module docs); the statuses come back in
/// input order (those of units a cancellation left unstarted are missing), with the backend's
/// summary, or what stopped it.
pub fn run(
    backend: &dyn Backend,
    builder: &dyn BuildOne,
    etips: &[EtipInput],
    cancel: &CancelToken,
    on_event: &(dyn Fn(&Event) + Sync),
) -> (Vec<InstanceStatus>, Result<RunSummary, BackendError>) {
    let units = units(etips, builder);
    let runner = Runner { builder, on_event };
    let mut statuses: Vec<Option<InstanceStatus>> = vec![None; units.len()];
    let mut ledger = MemoryLedger::new();
    let ran = backend.run(&units, &runner, &mut ledger, cancel, &mut |event| {
        let (unit, output) = match event {
            UnitEvent::Finished(u, o) | UnitEvent::Reused(u, o) => (u, o),
            // A build the interrupt cut short (its containers removed under it) says nothing
            // about the ETIP: not a status, so the yield report does not count it.
            UnitEvent::Failed(u, _) if cancel.is_cancelled() => {
                tracing::warn!("{}: interrupted, not built", u.instance);
                return;
            }
            UnitEvent::Failed(u, e) => match e.record() {
                Some(o) => (u, o),
                None => {
                    tracing::warn!("{}: not built: {e}", u.instance);
                    return;
                }
            },
            UnitEvent::Started(_) => return,
        };
        match output.read::<InstanceStatus>() {
            Ok(status) => {
                list(builder.out(), &status, on_event);
                if let Some(i) = position(&units, unit) {
                    statuses[i] = Some(status);
                }
            }
            Err(e) => tracing::warn!("{}: status unreadable: {e}", unit.instance),
        }
    });
    (statuses.into_iter().flatten().collect(), ran)
}

#[cfg(test)]
mod tests {
    use super::*;
    use etip_core::instance::{BuildOutcome, Language};
    use etip_core::unit::Threads;
    use std::sync::Mutex;

    /// Builds nothing: `down` fails in the engine, everything else is built.
    struct Fake {
        cfg: BuildConfig,
        out: tempfile::TempDir,
        built: Mutex<Vec<String>>,
        /// Cancelled when `down` is built (an interrupt during a build).
        interrupts: Option<CancelToken>,
    }

    impl BuildOne for Fake {
        fn kind(&self) -> &'static str {
            "fake"
        }
        fn config(&self) -> &BuildConfig {
            &self.cfg
        }
        fn out(&self) -> &Path {
            self.out.path()
        }
        fn build(&self, etip: &EtipInput, _: &(dyn Fn(&Event) + Sync)) -> InstanceStatus {
            self.built.lock().unwrap().push(etip.id.clone());
            let mut s = crate::new_status(etip);
            if etip.id == "down" {
                if let Some(token) = &self.interrupts {
                    token.cancel();
                }
                s.failure = Some(FailureKind::Engine);
                s.reason = Some("the engine went away".into());
            } else {
                s.outcome = BuildOutcome::Built;
            }
            s
        }
    }

    fn etip(id: &str) -> EtipInput {
        EtipInput {
            id: id.into(),
            language: Language::Python,
            base_commit: "a".repeat(40),
            patched_commit: "b".repeat(40),
            patch: None,
            task: None,
            source: Some("/repo".into()),
            repo: None,
            changed_modules: None,
            extension_files: Vec::new(),
            workloads: Vec::new(),
        }
    }

    #[test]
    fn a_batch_lists_every_status_in_input_order_and_refuses_a_repeated_id() {
        let fake = Fake {
            cfg: BuildConfig::default(),
            out: tempfile::tempdir().unwrap(),
            built: Mutex::new(Vec::new()),
            interrupts: None,
        };
        let etips = [etip("a"), etip("down"), etip("a"), etip("c")];
        let finished = Mutex::new(Vec::new());
        let on_event = |e: &Event| {
            if let Event::Finished(s) = e {
                finished.lock().unwrap().push(s.id.clone());
            }
        };
        let (statuses, ran) = run(
            &Threads::new(2),
            &fake,
            &etips,
            &CancelToken::new(),
            &on_event,
        );
        let summary = ran.unwrap();
        // The engine's failure is an infrastructure failure that keeps its status.
        assert_eq!((summary.ran, summary.failed), (3, 1));
        let ids: Vec<&str> = statuses.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["a", "down", "a", "c"]);
        assert_eq!(statuses[1].failure, Some(FailureKind::Engine));
        assert_eq!(statuses[2].failure, Some(FailureKind::Input));
        let mut built = fake.built.lock().unwrap().clone();
        built.sort();
        assert_eq!(built, ["a", "c", "down"]);
        assert_eq!(finished.lock().unwrap().len(), 4);
        let listed = std::fs::read_to_string(fake.out.path().join("status.jsonl")).unwrap();
        assert_eq!(listed.lines().count(), 4);
    }

    #[test]
    fn a_cancelled_batch_builds_nothing() {
        let fake = Fake {
            cfg: BuildConfig::default(),
            out: tempfile::tempdir().unwrap(),
            built: Mutex::new(Vec::new()),
            interrupts: None,
        };
        let cancel = CancelToken::new();
        cancel.cancel();
        let (statuses, ran) = run(&Threads::new(2), &fake, &[etip("a")], &cancel, &|_| {});
        assert_eq!(ran.unwrap().not_started, 1);
        assert!(statuses.is_empty());
        assert!(fake.built.lock().unwrap().is_empty());
    }

    #[test]
    fn a_build_an_interrupt_cut_short_is_not_a_status() {
        let cancel = CancelToken::new();
        let fake = Fake {
            cfg: BuildConfig::default(),
            out: tempfile::tempdir().unwrap(),
            built: Mutex::new(Vec::new()),
            interrupts: Some(cancel.clone()),
        };
        let (statuses, ran) = run(
            &Threads::new(1),
            &fake,
            &[etip("a"), etip("down"), etip("c")],
            &cancel,
            &|_| {},
        );
        let summary = ran.unwrap();
        assert_eq!(summary.not_started, 1, "{summary:?}");
        let ids: Vec<&str> = statuses.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["a"]);
        let listed = std::fs::read_to_string(fake.out.path().join("status.jsonl")).unwrap();
        assert_eq!(listed.lines().count(), 1);
    }
}
