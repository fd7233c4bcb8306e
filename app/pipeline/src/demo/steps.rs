//! The demo's steps in order, each printing its header and the command that repeats it, then
//! calling its stage with the output captured in the step's file.

use super::command;
use super::files::{capture, join_candidates, repo, sample_predictions, sample_tests};
use super::{Config, Host};
use crate::eval::{Predictions, Records, RunConfig};
use crate::executor::{ExecutorChoice, ExecutorKind};
use crate::mine::local::{self, LocalConfig};
use crate::progress::Progress;
use crate::score::{self, ScoreConfig};
use crate::timing::{TestChoice, Timing};
use crate::{base_image, build, eval, eval_test, measure};
use etip_core::Language;
use etip_core::instance::{BuildOutcome, InstanceStatus};
use etip_fixtures::Kind;
use etip_measure::protocol::Order;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A fixture repository: its kind, folder and commits.
pub(super) type Repo = (Kind, PathBuf, Vec<String>);

/// The demo as it runs: the steps so far and what every step uses.
pub(super) struct Demo<'a> {
    pub cfg: &'a Config,
    pub host: &'a dyn Host,
    pub progress: &'a dyn Progress,
    /// On the local executor (no Docker engine).
    pub local: bool,
    pub total: usize,
    pub n: usize,
    pub started: Instant,
}

impl Demo<'_> {
    /// Prints the step's header and the command that repeats it.
    fn begin(&mut self, title: &str, command: &[String]) {
        self.n += 1;
        self.progress.note(&format!(
            "\n[{}/{}] {title}  ({:.0} s so far)",
            self.n,
            self.total,
            self.started.elapsed().as_secs_f64()
        ));
        if !command.is_empty() {
            self.progress
                .note(&format!("      etip {}", command::shell_words(command)));
        }
    }

    /// Prints a command's captured output, indented.
    fn show(&self, text: &str) {
        let indented: String = text.lines().map(|l| format!("      {l}\n")).collect();
        if let Some(lines) = indented.strip_suffix('\n') {
            self.progress.note(lines);
        }
    }

    fn out(&self) -> &Path {
        &self.cfg.out
    }

    pub fn repositories(&mut self, kinds: &[Kind]) -> anyhow::Result<Vec<Repo>> {
        self.begin("fixture repositories with genuine ETIPs", &[]);
        let mut repos = Vec::new();
        for kind in kinds {
            let (dir, commits) = repo(self.out(), *kind)?;
            self.progress.note(&format!(
                "      {} ({} commits)",
                dir.display(),
                commits.len()
            ));
            repos.push((*kind, dir, commits));
        }
        Ok(repos)
    }

    /// Mines each repository; returns the file of all candidates.
    pub fn mine(&mut self, repos: &[Repo]) -> anyhow::Result<PathBuf> {
        let out = self.out().to_path_buf();
        let mut candidate_files = Vec::new();
        for (kind, dir, _) in repos {
            let file = out.join("mine").join(format!("{}.jsonl", kind.language()));
            std::fs::create_dir_all(out.join("mine"))?;
            let cfg = LocalConfig {
                since: "none".into(),
                repo_name: Some(format!("etip-demo/textutil-{}", kind.language())),
                jobs: Some(1),
                ..LocalConfig::new(dir.clone(), language(*kind), file.clone())
            };
            self.begin(
                &format!("mine the {} history", kind.language()),
                &command::mine(&cfg),
            );
            let text = capture(
                &out.join("mine")
                    .join(format!("{}.summary.txt", kind.language())),
                |w| {
                    let mined = local::mine(&cfg, crate::runtime::get, &mut *self.host.phases())?;
                    self.host.mine(&mined, w)
                },
            )?;
            self.show(&text);
            candidate_files.push(file);
        }
        let candidates = out.join("candidates.jsonl");
        let n = join_candidates(&candidate_files, &candidates)?;
        self.progress
            .note(&format!("      {n} candidates in {}", candidates.display()));
        Ok(candidates)
    }

    pub fn base_image(&mut self) -> anyhow::Result<()> {
        self.begin(
            "the offline base image (once per machine: a few minutes the first time)",
            &["base-image".into(), "bootstrap".into()],
        );
        let file = self.out().join("logs/base-image.txt");
        capture(&file, |w| {
            for img in base_image::run(&base_image::Config::default(), self.progress)? {
                self.host.base_image(&img, w)?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Builds the candidates; returns the status.jsonl.
    pub fn build(&mut self, candidates: &Path) -> anyhow::Result<PathBuf> {
        let cfg = build::Config {
            etips: candidates.to_path_buf(),
            id: None,
            workers: 1,
            build_config: None,
            out: self.out().join("build"),
            namespace: Some(self.cfg.namespace.clone()),
            executor: if self.local {
                ExecutorKind::Local
            } else {
                ExecutorKind::Docker
            },
            deps_as_of: None,
        };
        self.begin(
            if self.local {
                "build each candidate as host processes, both versions built (pip installs pytest if missing)"
            } else {
                "build one image per candidate, both versions built"
            },
            &command::build(&cfg),
        );
        capture(&self.out().join("logs/build.txt"), |w| {
            let outcome = build::run(&cfg, self.progress)?;
            self.host.build(&outcome, w)
        })?;
        Ok(cfg.out.join("status.jsonl"))
    }

    /// The statuses of the build, each reported; the built ones (none is an error).
    pub fn built(&self, status: &Path) -> anyhow::Result<Vec<InstanceStatus>> {
        let statuses = crate::records::read_statuses(status)?;
        for st in &statuses {
            self.progress.note(&format!(
                "      {}: {}",
                st.id,
                match st.outcome {
                    BuildOutcome::Failed =>
                        format!("failed ({})", st.reason.as_deref().unwrap_or("-")),
                    o => format!("{o:?}").to_lowercase(),
                }
            ));
        }
        let built: Vec<InstanceStatus> = statuses
            .into_iter()
            .filter(|s| s.outcome != BuildOutcome::Failed)
            .collect();
        if built.is_empty() {
            anyhow::bail!(
                "no candidate built; see {}",
                self.out().join("build/logs").display()
            );
        }
        Ok(built)
    }

    /// The timing of every timed step: the demo's rounds, every other value the flags' default.
    fn timing(&self) -> Timing {
        Timing {
            rounds: self.cfg.rounds,
            ..Timing::default()
        }
    }

    fn executor(&self, kind: ExecutorKind) -> ExecutorChoice {
        ExecutorChoice {
            kind,
            namespace: self.cfg.namespace.clone(),
        }
    }

    pub fn measure(&mut self, status: &Path, built: &[InstanceStatus]) -> anyhow::Result<()> {
        let cfg = measure::Config {
            timing: self.timing(),
            etips: status.to_path_buf(),
            ids: built.iter().map(|s| s.id.clone()).collect(),
            out: self.out().join("measure"),
            order: Order::Alternate,
            tests: TestChoice::Modules,
            detectors: Default::default(),
            selection: None,
            max_rounds: None,
            aa: false,
            // Without an engine measure runs the local builds.
            executor: self.executor(if self.local {
                ExecutorKind::Local
            } else {
                ExecutorKind::Auto
            }),
            build_config: None,
            state: None,
            force: false,
            backend: Default::default(),
        };
        self.begin(
            "measure: tests timed in alternated rounds; which classes detect the improvement",
            &command::measure(&cfg),
        );
        capture(&self.out().join("logs/measure.txt"), |w| {
            let outcome = measure::run(&cfg, self.progress)?;
            self.host.measure(&outcome, w)
        })?;
        Ok(())
    }

    /// The options of the demo's evaluations: without an engine, eval runs etip's own sample
    /// patches and tests as host processes (never anyone else's).
    fn run_config(&self, status: &Path, out: PathBuf, ids: Vec<String>) -> RunConfig {
        RunConfig {
            etips: status.to_path_buf(),
            out,
            ids,
            run_id: "default".into(),
            workers: 1,
            timing: self.timing(),
            setup_timeout_secs: 1800,
            build_config: None,
            force: false,
            min_free_gb: 2.0,
            reuse_containers: !self.local && self.cfg.reuse_containers,
            executor: self.executor(if self.local {
                ExecutorKind::Local
            } else {
                ExecutorKind::Docker
            }),
            backend: Default::default(),
        }
    }

    fn eval_step(&mut self, title: &str, cfg: &eval::Config, log: &str) -> anyhow::Result<()> {
        self.begin(title, &command::eval(cfg));
        capture(&self.out().join(log), |w| {
            let outcome = eval::run(cfg, true, self.progress)?;
            self.host.eval(&outcome, w)
        })?;
        Ok(())
    }

    /// The dedup ETIPs' own patches, then the sample patches and generated tests on the Python
    /// one.
    pub fn evaluate(
        &mut self,
        status: &Path,
        repos: &[Repo],
        built: &[InstanceStatus],
    ) -> anyhow::Result<()> {
        let eval_dir = self.out().join("eval");
        // The dedup ETIP of each language (its second commit): the self-check of every ETIP, with
        // `etip eval --predictions gold` on the whole status.jsonl, takes twice as long.
        let dedup: Vec<String> = repos
            .iter()
            .filter_map(|(_, _, commits)| commits.get(1))
            .filter_map(|c| built.iter().find(|s| &s.patched_commit == c))
            .map(|s| s.id.clone())
            .collect();
        let gold = patches(
            Predictions::Gold,
            self.run_config(status, eval_dir.clone(), dedup),
        );
        self.eval_step(
            "eval the dedup ETIPs' own patches as if an agent wrote them (the harness's self-check)",
            &gold,
            "logs/eval-gold.txt",
        )?;
        let python_dedup = repos
            .iter()
            .find(|(k, _, _)| *k == Kind::Python)
            .and_then(|(_, _, commits)| commits.get(1))
            .and_then(|c| built.iter().find(|s| &s.patched_commit == c));
        let Some(target) = python_dedup else {
            self.begin(
                "eval sample agent patches: skipped (no Python dedup ETIP built)",
                &[],
            );
            self.begin(
                "eval-test sample generated tests: skipped (no Python dedup ETIP built)",
                &[],
            );
            return Ok(());
        };
        let preds = self.out().join("predictions.jsonl");
        crate::output::write(&preds, &sample_predictions(&target.id)?)?;
        let samples = patches(
            Predictions::File(preds),
            self.run_config(status, eval_dir, Vec::new()),
        );
        self.eval_step(
            "eval five sample agent patches on the Python dedup ETIP",
            &samples,
            "logs/eval-samples.txt",
        )?;
        let tests = self.out().join("generated-tests.jsonl");
        crate::output::write(&tests, &sample_tests(&target.id)?)?;
        let cfg = eval_test::Config {
            tests,
            run: self.run_config(status, self.out().join("eval-test"), Vec::new()),
        };
        self.begin(
            "eval-test three sample generated tests: which detect the dedup ETIP?",
            &command::eval_test(&cfg),
        );
        capture(&self.out().join("logs/eval-test.txt"), |w| {
            let outcome = eval_test::run(&cfg, self.progress)?;
            self.host.eval(&outcome, w)
        })?;
        Ok(())
    }

    /// Scores the eval run under every rule, each into `scores/RULE.json`.
    pub fn score(&mut self, results: &Path) -> anyhow::Result<()> {
        self.begin(
            "score the eval run under every rule, write the report",
            &command::score(results),
        );
        for rule in etip_score::rules::Rule::REPORT_ORDER {
            let name = rule.name();
            let cfg = ScoreConfig::new(rule, vec![results.to_path_buf()]);
            capture(&self.out().join(format!("scores/{name}.json")), |w| {
                self.host.score(rule, &score::score(&cfg)?, w)
            })?;
        }
        Ok(())
    }
}

/// An `etip eval` of agent patches with the default tests.
fn patches(predictions: Predictions, run: RunConfig) -> eval::Config {
    eval::Config {
        predictions,
        tests: TestChoice::Modules,
        selection: None,
        allow_test_changes: false,
        run,
        records: Records::Patches,
        judge: None,
    }
}

/// The language of a fixture repository.
fn language(kind: Kind) -> Language {
    match kind {
        Kind::Maven => Language::Java,
        Kind::Python => Language::Python,
    }
}

/// (language, folder) of each repository.
pub(super) fn repos_of(repos: &[Repo]) -> Vec<(String, PathBuf)> {
    repos
        .iter()
        .map(|(k, d, _)| (k.language().to_string(), d.clone()))
        .collect()
}
