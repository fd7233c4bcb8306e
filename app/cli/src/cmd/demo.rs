//! `etip demo`: the whole pipeline on the embedded fixture repositories, as a new user would run
//! it: write the Java and Python repositories, mine them, build the candidates, measure them,
//! evaluate the ground-truth patches and five sample agent patches, score every rule and write one
//! HTML report. Each step is the real command, run with the arguments it prints, so every step can
//! be repeated by hand; its output goes to a file in the demo folder.

use anyhow::Context;
use clap::Parser;
use etip_core::instance::{BuildOutcome, InstanceStatus};
use etip_fixtures::Kind;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::UsageError;
use super::format::FormatArg;

/// The marker that says a folder is a demo folder (the demo writes only into such folders).
const MARKER: &str = ".etip-demo";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The demo folder: created, or a folder an earlier demo made (a re-run reuses its
    /// repositories, images and stored results).
    #[arg(long, default_value = "etip-demo")]
    out: PathBuf,
    /// Timed rounds of `etip measure` and `etip eval` (warm-up excluded). 10 is the fewest at which
    /// JETO's sign test can call a 5% improvement significant with room to spare.
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    /// Which fixture repositories to use.
    #[arg(long, value_enum, default_value_t = Langs::Both)]
    lang: Langs,
    /// Let each version of an evaluation run all its rounds in one container (`etip eval
    /// --reuse-containers`): about half the evaluation time, without the guard against patches
    /// that keep results from one round to the next.
    #[arg(long)]
    reuse_containers: bool,
    /// Namespace of the demo's images and containers (`etip clean --namespace` removes them).
    #[arg(long, default_value = "etip-demo")]
    namespace: String,
    /// How to print the summary.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    format: FormatArg,
}

/// The fixture repositories of a demo run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Langs {
    Both,
    Java,
    Python,
}

impl Langs {
    fn kinds(self) -> Vec<Kind> {
        match self {
            Langs::Both => vec![Kind::Maven, Kind::Python],
            Langs::Java => vec![Kind::Maven],
            Langs::Python => vec![Kind::Python],
        }
    }
}

/// Parses a command line of one subcommand (without `etip` and the subcommand's name).
#[derive(Parser)]
#[command(no_binary_name = true)]
struct Argv<T: clap::Args> {
    #[command(flatten)]
    inner: T,
}

fn parse<T: clap::Args>(argv: &[String]) -> anyhow::Result<T> {
    Argv::<T>::try_parse_from(argv)
        .map(|a| a.inner)
        .map_err(|e| anyhow::anyhow!("the demo made a command line etip refuses: {e}"))
}

/// Prints the step's header and the command that repeats it.
struct Steps {
    total: usize,
    n: usize,
    started: Instant,
}

impl Steps {
    fn begin(&mut self, title: &str, command: &[String]) {
        self.n += 1;
        eprintln!(
            "\n[{}/{}] {title}  ({:.0} s so far)",
            self.n,
            self.total,
            self.started.elapsed().as_secs_f64()
        );
        if !command.is_empty() {
            eprintln!("      etip {}", shell_words(command));
        }
    }
}

fn shell_words(argv: &[String]) -> String {
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

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Whether the demo runs in containers: without an engine it runs on the local executor (host
/// processes, the Python fixture only) and says so; `None`: the reason there is no engine.
fn engine_answers() -> anyhow::Result<Option<String>> {
    let rt = super::runtime()?;
    Ok(rt
        .block_on(etip_docker::Engine::connect())
        .err()
        .map(|e| e.to_string()))
}

/// Creates the demo folder, or accepts one an earlier demo made; refuses anything else.
fn prepare(out: &Path) -> anyhow::Result<()> {
    if out.exists() {
        let meta = std::fs::symlink_metadata(out)?;
        let ours = out.join(MARKER).is_file();
        let empty = meta.is_dir() && std::fs::read_dir(out)?.next().is_none();
        if !meta.is_dir() || !(ours || empty) {
            return Err(UsageError(format!(
                "{} exists and is not a demo folder (no {MARKER} in it); pass another --out",
                out.display()
            ))
            .into());
        }
    }
    std::fs::create_dir_all(out)
        .map_err(|e| UsageError(format!("creating {}: {e}", out.display())))?;
    super::output::write(
        &out.join(MARKER),
        "made by `etip demo`; a re-run reuses this folder\n",
    )
    .with_context(|| format!("writing {}", out.join(MARKER).display()))?;
    Ok(())
}

/// The fixture repository `kind` under `out/repos/`, written unless an earlier run wrote it.
fn repo(out: &Path, kind: Kind) -> anyhow::Result<(PathBuf, Vec<String>)> {
    let dir = out.join("repos").join(kind.name());
    if dir.join(".git").is_dir() {
        // Written by an earlier run: fixed authors and dates give the same commits.
        let tmp = tempfile::tempdir()?;
        let want = etip_fixtures::write_repo(kind, &tmp.path().join("r"))?;
        return Ok((dir, want));
    }
    let commits = etip_fixtures::write_repo(kind, &dir)
        .with_context(|| format!("writing the fixture repository {}", dir.display()))?;
    Ok((dir, commits))
}

/// Runs one step's command with its output in `file` (and returns that output).
fn capture(
    file: &Path,
    f: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<String> {
    let mut buf: Vec<u8> = Vec::new();
    let result = f(&mut buf);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    super::output::write(file, &String::from_utf8_lossy(&buf))?;
    result?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Concatenates the candidates of every language into one file for `etip build`.
fn join_candidates(files: &[PathBuf], to: &Path) -> anyhow::Result<usize> {
    let mut all = String::new();
    for f in files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            all.push_str(line);
            all.push('\n');
        }
    }
    super::output::write(to, &all)?;
    Ok(all.lines().count())
}

/// The sample predictions for the Python `dedup` ETIP, in SWE-bench's format.
fn sample_predictions(instance: &str) -> anyhow::Result<String> {
    let mut text = String::new();
    for sample in etip_fixtures::SAMPLES {
        let line = serde_json::json!({
            "instance_id": instance,
            "model_name_or_path": sample.model,
            "model_patch": sample.patch(),
        });
        text.push_str(&serde_json::to_string(&line)?);
        text.push('\n');
    }
    Ok(text)
}

/// The sample generated tests for the Python `dedup` ETIP, as `etip eval-test` reads them.
fn sample_tests(instance: &str) -> anyhow::Result<String> {
    let mut text = String::new();
    for t in etip_fixtures::TEST_SAMPLES {
        let line = serde_json::json!({
            "instance_id": instance,
            "model_name_or_path": t.model,
            "test_patch": t.patch(),
            "test_classes": [t.classes],
        });
        text.push_str(&serde_json::to_string(&line)?);
        text.push('\n');
    }
    Ok(text)
}

pub fn run(args: Args, stdout: &mut dyn Write) -> anyhow::Result<()> {
    let started = Instant::now();
    if args.rounds < 6 {
        return Err(UsageError(
            "--rounds must be at least 6: fewer rounds cannot make a sign test significant".into(),
        )
        .into());
    }
    // Before anything is written: the images' namespace must be one the build accepts.
    let build = etip_build::config::BuildConfig {
        namespace: args.namespace.clone(),
        ..Default::default()
    };
    build
        .validate()
        .map_err(|e| UsageError(format!("--namespace: {e}")))?;
    let no_engine = engine_answers()?;
    let local = no_engine.is_some();
    let kinds: Vec<Kind> = match &no_engine {
        None => args.lang.kinds(),
        Some(e) if args.lang == Langs::Java => anyhow::bail!(
            "no Docker engine answered ({e}), and the Java fixture needs one: its ETIPs build with \
             the base images' JDK and offline Maven repository (without an engine, run `etip demo \
             --lang python`)"
        ),
        Some(e) => {
            eprintln!(
                "no Docker engine answered ({e}):\n  running on the local executor: host processes \
                 with no isolation, on the Python fixture only (the Java fixture needs the base \
                 images' JDK and Maven repository); the sample patches are etip's own"
            );
            vec![Kind::Python]
        }
    };
    prepare(&args.out)?;
    let out = args.out.as_path();
    let rounds = args.rounds.to_string();
    let mut steps = Steps {
        total: 8 + kinds.len() - usize::from(local),
        n: 0,
        started,
    };

    steps.begin("fixture repositories with genuine ETIPs", &[]);
    let mut repos = Vec::new();
    for kind in &kinds {
        let (dir, commits) = repo(out, *kind)?;
        eprintln!("      {} ({} commits)", dir.display(), commits.len());
        repos.push((*kind, dir, commits));
    }

    let mut candidate_files = Vec::new();
    for (kind, dir, _) in &repos {
        let file = out.join("mine").join(format!("{}.jsonl", kind.language()));
        std::fs::create_dir_all(out.join("mine"))?;
        let argv: Vec<String> = vec![
            "local".into(),
            "--repo".into(),
            s(dir),
            "--lang".into(),
            kind.language().into(),
            "--since".into(),
            "none".into(),
            "--repo-name".into(),
            format!("etip-demo/textutil-{}", kind.language()),
            "--jobs".into(),
            "1".into(),
            "--out".into(),
            s(&file),
        ];
        let mut shown = vec!["mine".to_string()];
        shown.extend(argv.iter().cloned());
        steps.begin(&format!("mine the {} history", kind.language()), &shown);
        let text = capture(
            &out.join("mine")
                .join(format!("{}.summary.txt", kind.language())),
            |w| super::mine::run(parse(&argv)?, w),
        )?;
        eprint!("{}", indent(&text));
        candidate_files.push(file);
    }
    let candidates = out.join("candidates.jsonl");
    let n = join_candidates(&candidate_files, &candidates)?;
    eprintln!("      {n} candidates in {}", candidates.display());

    if !local {
        let argv: Vec<String> = vec!["bootstrap".into()];
        steps.begin(
            "the offline base image (once per machine: a few minutes the first time)",
            &["base-image".into(), "bootstrap".into()],
        );
        capture(&out.join("logs/base-image.txt"), |w| {
            super::base_image::run(parse(&argv)?, w)
        })?;
    }

    let build_dir = out.join("build");
    let mut argv: Vec<String> = vec![
        "--etips".into(),
        s(&candidates),
        "--out".into(),
        s(&build_dir),
        "--namespace".into(),
        args.namespace.clone(),
    ];
    if local {
        argv.extend(["--executor".into(), "local".into()]);
    }
    steps.begin(
        if local {
            "build each candidate as host processes, both versions built (pip installs pytest if missing)"
        } else {
            "build one image per candidate, both versions built"
        },
        &prefixed("build", &argv),
    );
    capture(&out.join("logs/build.txt"), |w| {
        super::build::run(parse(&argv)?, w)
    })?;
    let status = build_dir.join("status.jsonl");
    let statuses = etip_pipeline::records::read_statuses(&status)?;
    for st in &statuses {
        eprintln!(
            "      {}: {}",
            st.id,
            match st.outcome {
                BuildOutcome::Failed => format!("failed ({})", st.reason.as_deref().unwrap_or("-")),
                o => format!("{o:?}").to_lowercase(),
            }
        );
    }
    let built: Vec<&InstanceStatus> = statuses
        .iter()
        .filter(|s| s.outcome != BuildOutcome::Failed)
        .collect();
    if built.is_empty() {
        anyhow::bail!(
            "no candidate built; see {}",
            out.join("build/logs").display()
        );
    }

    let timed = |lead: [String; 2], to: &Path| -> Vec<String> {
        let mut v: Vec<String> = lead.into();
        v.extend([
            "--etips".into(),
            s(&status),
            "--out".into(),
            s(to),
            "--rounds".into(),
            rounds.clone(),
            "--namespace".into(),
            args.namespace.clone(),
        ]);
        v
    };
    // Without an engine: measure runs the local builds, and eval runs etip's own sample patches
    // and tests as host processes (never anyone else's).
    let executor = |mut v: Vec<String>, eval: bool| {
        if local {
            if eval {
                v.push("--local-trusted".into());
            } else {
                v.extend(["--executor".into(), "local".into()]);
            }
        } else if eval && args.reuse_containers {
            v.push("--reuse-containers".into());
        }
        v
    };
    let mut argv = executor(
        timed(["--tests".into(), "modules".into()], &out.join("measure")),
        false,
    );
    for st in &built {
        argv.push("--id".into());
        argv.push(st.id.clone());
    }
    steps.begin(
        "measure: tests timed in alternated rounds; which classes detect the improvement",
        &prefixed("measure", &argv),
    );
    capture(&out.join("logs/measure.txt"), |w| {
        super::measure::run(parse(&argv)?, w)
    })?;

    let eval_dir = out.join("eval");
    let mut gold_argv = executor(
        timed(["--predictions".into(), "gold".into()], &eval_dir),
        true,
    );
    // The dedup ETIP of each language (its second commit): the self-check of every ETIP, with
    // `etip eval --predictions gold` on the whole status.jsonl, takes twice as long.
    let dedup: Vec<&InstanceStatus> = repos
        .iter()
        .filter_map(|(_, _, commits)| commits.get(1))
        .filter_map(|c| built.iter().find(|s| &s.patched_commit == c).copied())
        .collect();
    for st in &dedup {
        gold_argv.push("--id".into());
        gold_argv.push(st.id.clone());
    }
    steps.begin(
        "eval the dedup ETIPs' own patches as if an agent wrote them (the harness's self-check)",
        &prefixed("eval", &gold_argv),
    );
    capture(&out.join("logs/eval-gold.txt"), |w| {
        super::eval::run(parse(&gold_argv)?, w)
    })?;

    let python_dedup = repos
        .iter()
        .find(|(k, _, _)| *k == Kind::Python)
        .and_then(|(_, _, commits)| commits.get(1))
        .and_then(|c| built.iter().find(|s| &s.patched_commit == c));
    if let Some(target) = python_dedup {
        let preds = out.join("predictions.jsonl");
        super::output::write(&preds, &sample_predictions(&target.id)?)?;
        let argv = executor(timed(["--predictions".into(), s(&preds)], &eval_dir), true);
        steps.begin(
            "eval five sample agent patches on the Python dedup ETIP",
            &prefixed("eval", &argv),
        );
        capture(&out.join("logs/eval-samples.txt"), |w| {
            super::eval::run(parse(&argv)?, w)
        })?;
        let tests = out.join("generated-tests.jsonl");
        super::output::write(&tests, &sample_tests(&target.id)?)?;
        let argv = executor(
            timed(["--tests".into(), s(&tests)], &out.join("eval-test")),
            true,
        );
        steps.begin(
            "eval-test three sample generated tests: which detect the dedup ETIP?",
            &prefixed("eval-test", &argv),
        );
        capture(&out.join("logs/eval-test.txt"), |w| {
            super::eval::run_tests(parse(&argv)?, w)
        })?;
    } else {
        steps.begin(
            "eval sample agent patches: skipped (no Python dedup ETIP built)",
            &[],
        );
        steps.begin(
            "eval-test sample generated tests: skipped (no Python dedup ETIP built)",
            &[],
        );
    }

    let results = eval_dir.join("results.jsonl");
    steps.begin(
        "score the eval run under every rule, write the report",
        &["score".into(), "--rule".into(), "RULE".into(), s(&results)],
    );
    for (rule, _) in etip_report::eval::RULES {
        let argv: Vec<String> = vec![
            "--rule".into(),
            rule.into(),
            "--format".into(),
            "json".into(),
            s(&results),
        ];
        capture(&out.join(format!("scores/{rule}.json")), |w| {
            super::score::run(parse(&argv)?, w)
        })?;
    }
    let mut summary = read_summary(
        out,
        &repos_of(&repos),
        if local { "local" } else { "docker" },
    )?;
    let html = out.join("report.html");
    super::output::write(&html, &etip_report::demo::html(&summary))?;
    let secs = started.elapsed().as_secs_f64();
    stdout.write_all(summary.text(args.format.into(), secs)?.as_bytes())?;
    eprintln!(
        "\ndemo finished in {:.0} s; report: {}",
        secs,
        html.display()
    );
    Ok(())
}

fn repos_of(repos: &[(Kind, PathBuf, Vec<String>)]) -> Vec<(String, PathBuf)> {
    repos
        .iter()
        .map(|(k, d, _)| (k.language().to_string(), d.clone()))
        .collect()
}

fn prefixed(command: &str, argv: &[String]) -> Vec<String> {
    let mut v = vec![command.to_string()];
    v.extend(argv.iter().cloned());
    v
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("      {l}\n")).collect()
}

fn jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<Vec<T>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// Reads the demo folder `out` back; scores the eval results under every rule.
fn read_summary(
    out: &Path,
    repos: &[(String, PathBuf)],
    executor: &str,
) -> anyhow::Result<etip_report::demo::Summary> {
    let mut rs = Vec::new();
    for (lang, dir) in repos {
        let n = std::fs::read_to_string(out.join("mine").join(format!("{lang}.jsonl")))
            .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
            .unwrap_or(0);
        rs.push((lang.clone(), dir.clone(), n));
    }
    let (scores, not_scored) = etip_report::eval::scores(&out.join("eval/results.jsonl"));
    Ok(etip_report::demo::Summary {
        repos: rs,
        statuses: etip_pipeline::records::read_statuses(&out.join("build/status.jsonl"))?,
        measurements: jsonl(&out.join("measure/measurements.jsonl"))?,
        results: jsonl(&out.join("eval/results.jsonl"))?,
        generated_tests: if out.join("eval-test/results.jsonl").is_file() {
            jsonl(&out.join("eval-test/results.jsonl"))?
        } else {
            Vec::new()
        },
        scores,
        not_scored,
        seconds: 0.0,
        executor: executor.to_string(),
    })
}
