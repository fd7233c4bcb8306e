//! What the Docker tests of `etip measure` and `etip select` share: fixture repositories, a
//! builder and a Docker executor in a test namespace, a measurement configuration.
#![allow(dead_code)]

use etip_build::config::BuildConfig;
use etip_build::{Builder, EtipInput};
use etip_core::Language;
use etip_core::instance::{BuildOutcome, InstanceStatus};
use etip_exec::docker::DockerExecutor;
use etip_exec::executor::Resources;
use etip_measure::measure::{MeasureConfig, Tests, measure_one};
use etip_measure::protocol::ProtocolConfig;
use etip_measure::verdict::VerdictConfig;
use etip_records::measure::Measurement;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The timing tests take turns, so that they do not disturb each other's rounds.
pub static SERIAL: Mutex<()> = Mutex::new(());

use etip_testkit::{copy_tree, git};
/// A repository with one commit per step: each step is a list of (path, content) written over
/// the previous tree, or a fixture folder copied over it.
pub enum Step<'a> {
    Folder(PathBuf),
    Files(Vec<(&'a str, String)>),
}

pub fn repo(dir: &Path, steps: Vec<Step>) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    let mut commits = Vec::new();
    for (i, step) in steps.into_iter().enumerate() {
        match step {
            Step::Folder(f) => copy_tree(&f, dir),
            Step::Files(files) => {
                for (p, content) in files {
                    let path = dir.join(p);
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(path, content).unwrap();
                }
            }
        }
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &format!("step {i}")]);
        commits.push(git(dir, &["rev-parse", "HEAD"]));
    }
    commits
}

pub fn fixture_steps(kind: &str) -> Vec<Step<'static>> {
    let mut steps: Vec<PathBuf> = std::fs::read_dir(etip_testkit::fixtures().join(kind))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    steps.sort();
    steps.into_iter().map(Step::Folder).collect()
}

/// A builder and a Docker executor in a test namespace; everything is removed on drop.
pub struct Env {
    pub builder: Builder,
    pub executor: DockerExecutor,
    pub ns: String,
    pub dir: tempfile::TempDir,
    // Dropped last: the builder and executor block on it.
    _rt: tokio::runtime::Runtime,
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = self.builder.clean(Some(&self.ns), false);
    }
}

pub fn env(name: &str) -> Env {
    let ns = format!("etiptest-measure-{name}-{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let cfg = BuildConfig {
        namespace: ns.clone(),
        ..BuildConfig::default()
    };
    let builder =
        Builder::new(cfg, dir.path().join("build"), rt.handle().clone()).unwrap_or_else(|e| {
            panic!("these tests need the real Docker engine, and it is not usable: {e}")
        });
    let engine = builder.engine().clone();
    let executor = DockerExecutor::new(engine, rt.handle().clone(), &ns);
    Env {
        builder,
        executor,
        ns,
        dir,
        _rt: rt,
    }
}

impl Env {
    pub fn build(
        &self,
        id: &str,
        lang: Language,
        repo: &Path,
        base: &str,
        patched: &str,
    ) -> InstanceStatus {
        self.build_with(id, lang, repo, base, patched, Vec::new())
    }

    /// [`Env::build`] of an ETIP that carries workloads.
    pub fn build_with(
        &self,
        id: &str,
        lang: Language,
        repo: &Path,
        base: &str,
        patched: &str,
        workloads: Vec<etip_core::detector::Workload>,
    ) -> InstanceStatus {
        let s = self.builder.build_one(
            &EtipInput {
                id: id.into(),
                language: lang,
                base_commit: base.into(),
                patched_commit: patched.into(),
                patch: None,
                task: None,
                source: Some(repo.display().to_string()),
                repo: None,
                changed_modules: None,
                extension_files: Vec::new(),
                workloads,
            },
            &|_| {},
        );
        assert_ne!(
            s.outcome,
            BuildOutcome::Failed,
            "{:?} {:?}",
            s.reason,
            s.detail
        );
        s
    }

    pub fn measure(&self, status: &InstanceStatus, cfg: &MeasureConfig) -> Measurement {
        let mut store = etip_store::Store::open(&self.dir.path().join("state.sqlite")).unwrap();
        measure_one(&self.executor, &mut store, status, cfg, &()).unwrap()
    }
}

pub fn config(rounds: usize, aa: bool) -> MeasureConfig {
    MeasureConfig {
        detectors: Default::default(),
        protocol: ProtocolConfig {
            rounds,
            warmup: 1,
            round_timeout: Duration::from_secs(300),
            ..ProtocolConfig::default()
        },
        verdict: VerdictConfig::default(),
        tests: Tests::Modules,
        aa,
        resources: Resources::default(),
        cpusets: None,
        notes: vec![],
        build: BuildConfig::default(),
        logs: None,
        force: false,
    }
}

/// The detectors an A/A run flags, after checking that none shows an effect of consequence: a
/// median ratio outside 0.8–1.25 whose 95 % bootstrap interval also excludes 1 (both sides ran
/// the original tree). A point estimate alone is not enough at 10 rounds: on a noisy machine
/// one short class timed 0.09–0.25 s on one tree and its median ratio was 0.77, with the
/// interval [0.58, 1.15] and the sign test at p = 0.38.
pub fn aa_flagged(aa: &Measurement) -> Vec<(String, etip_stats::Direction)> {
    assert!(aa.aa && aa.executable, "{:?}", aa.detail);
    let mut out = vec![];
    for c in aa.classes.iter().chain(aa.overall.as_ref()) {
        if let Some(st) = &c.sign_test {
            let ci = c.effect.as_ref().map(|e| e.ratio_ci);
            let includes_one = ci.is_some_and(|[lo, hi]| lo <= 1.0 && 1.0 <= hi);
            assert!(
                (0.8..=1.25).contains(&st.median_ratio) || includes_one,
                "A/A shows an effect on {}: {c:#?}",
                c.name
            );
            if st.direction != etip_stats::Direction::NotSignificant {
                out.push((c.name.clone(), st.direction));
            }
        }
    }
    out
}

const ASV_CONF: &str = r#"{
    // asv reads its configuration leniently: comments and trailing commas are allowed.
    "version": 1,
    "project": "textutil",
    "benchmark_dir": "benchmarks",
    "environment_type": "existing",
}
"#;

const ASV_BENCH: &str = r#"from textutil import dedup, join


class TimeDedup:
    params = [2000, 4000]
    param_names = ["n"]

    def setup(self, n):
        self.values = [(i * 7919) % (n // 2) for i in range(n)]

    def time_dedup(self, n):
        dedup(self.values)


def time_join():
    join(["part%d" % i for i in range(20000)], ",")
"#;

const SPEED_TESTS: &str = r#"from textutil import dedup, join


def test_dedup_speed(benchmark):
    values = [(i * 7919) % 2000 for i in range(4000)]
    out = benchmark(dedup, values)
    assert len(out) == 2000


def test_join_speed(benchmark):
    parts = ["part%d" % i for i in range(20000)]
    assert benchmark(join, parts, ",").startswith("part0,")
"#;

/// The Python fixture's asv suite (`asv.conf.json`, `benchmarks/bench_text.py`: a parametrised
/// dedup benchmark and a join benchmark) and pytest-benchmark tests (`tests/test_speed.py`), with
/// pytest-benchmark declared as a test dependency: a step to commit before the dedup ETIP.
pub fn suite_files() -> Step<'static> {
    let pyproject =
        std::fs::read_to_string(etip_testkit::fixtures().join("python/1-original/pyproject.toml"))
            .unwrap();
    Step::Files(vec![
        (
            "pyproject.toml",
            format!(
                "{pyproject}\n[project.optional-dependencies]\ntest = [\"pytest-benchmark\"]\n"
            ),
        ),
        ("asv.conf.json", ASV_CONF.into()),
        ("benchmarks/__init__.py", String::new()),
        ("benchmarks/bench_text.py", ASV_BENCH.into()),
        ("tests/test_speed.py", SPEED_TESTS.into()),
    ])
}

/// The detector `name` of a measurement (panics with the detectors when it is absent).
pub fn class<'a>(m: &'a Measurement, name: &str) -> &'a etip_records::measure::ClassRecord {
    m.classes
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no detector {name} in {:#?}", m.classes))
}

/// The sign test's direction of detector `name`.
pub fn direction(m: &Measurement, name: &str) -> etip_stats::Direction {
    class(m, name)
        .sign_test
        .as_ref()
        .unwrap_or_else(|| panic!("{name} has no verdict: {:#?}", class(m, name)))
        .direction
}

/// A Java workload with `setup()` and `workload()`: the quadratic `dedup` made linear.
pub const JAVA_DEDUP: &str = r#"import demo.TextUtil;
import java.util.ArrayList;
import java.util.List;

/** Times TextUtil.dedup on 20,000 values with 10,000 distinct. */
public class DedupWorkload {
    static List<Integer> values;

    public static void setup() {
        values = new ArrayList<>();
        for (int i = 0; i < 20000; i++) {
            values.add((i * 7919) % 10000);
        }
    }

    public static void workload() {
        TextUtil.dedup(values);
    }
}
"#;
