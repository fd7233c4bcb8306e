//! A run stopped by a signal (Ctrl-C, `kill`) removes the containers and the snapshot images it
//! created, exits with 128 + the signal's number and says how many it removed; what it finished
//! stays on disk.
//!
//! Each test interrupts an evaluation whose rounds run in fresh containers (the default: every
//! round starts from a snapshot image of the prepared sessions) at one point: while the candidate
//! is built, while a session is committed to a snapshot image, while the fresh containers of a
//! round are created (the previous round's are being removed at the same time), and while a
//! round runs. An engine request in flight at the signal (a create, a commit, a removal) still
//! finishes in the engine after the signal: the tests look for leftovers a few seconds after the
//! process ended, through the engine's event stream as well as by label.
//!
//! They need the machine's Docker engine and fail with a clear message without one.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Runs `docker args`; panics with a clear message when the command cannot run.
fn docker(args: &[&str]) -> Output {
    Command::new("docker")
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("these tests need the docker command and a running Docker engine: {e}")
        })
}

fn require_engine() {
    let out = docker(&["info", "--format", "{{.ServerVersion}}"]);
    assert!(
        out.status.success(),
        "these tests need a running Docker engine (docker info: {})",
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// Lines of a `docker` listing.
fn listed(args: &[&str]) -> Vec<String> {
    let out = docker(args);
    assert!(
        out.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn now_nanos() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// The ETIP every test evaluates, built once per test process and removed by the last test that
/// uses it.
struct Built {
    _tmp: tempfile::TempDir,
    status: PathBuf,
    namespace: String,
}

struct Shared {
    built: Option<Arc<Built>>,
    users: usize,
}

static SHARED: Mutex<Shared> = Mutex::new(Shared {
    built: None,
    users: 0,
});

/// A use of the shared build; the last one dropped removes the build's images.
struct BuildUse(Arc<Built>);

fn built() -> BuildUse {
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    shared.users += 1;
    if shared.built.is_none() {
        let tmp = tempfile::tempdir().unwrap();
        let namespace = format!("etiptest-signal-{}", std::process::id());
        let status = common::build_python(tmp.path(), "sig-py", &namespace);
        shared.built = Some(Arc::new(Built {
            _tmp: tmp,
            status,
            namespace,
        }));
    }
    BuildUse(shared.built.clone().expect("built above"))
}

impl Drop for BuildUse {
    fn drop(&mut self) {
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        shared.users -= 1;
        if shared.users == 0
            && let Some(b) = shared.built.take()
        {
            clean(&b.namespace);
        }
    }
}

fn clean(namespace: &str) {
    let _ = Command::new(assert_cmd::cargo::cargo_bin("etip"))
        .args(["clean", "--namespace", namespace])
        .output();
}

/// One event of the engine (`docker events`).
#[derive(Debug, Clone)]
struct Event {
    nanos: i128,
    kind: String,
    action: String,
    id: String,
    attributes: BTreeMap<String, String>,
}

impl Event {
    fn namespace(&self) -> Option<&str> {
        self.attributes.get("etip.namespace").map(String::as_str)
    }
}

/// The engine's container and image events from the test's start on, read by a thread.
struct Events {
    child: Child,
    seen: Arc<Mutex<Vec<Event>>>,
}

impl Events {
    fn watch(since: SystemTime) -> Events {
        let since = since
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
            .saturating_sub(1);
        let mut child = Command::new("docker")
            .args(["events", "--since", &since.to_string()])
            .args(["--filter", "type=container", "--filter", "type=image"])
            .args(["--format", "{{json .}}"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker events starts");
        let out = child.stdout.take().expect("piped");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
                let attributes = v["Actor"]["Attributes"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                            .collect()
                    })
                    .unwrap_or_default();
                let event = Event {
                    nanos: v["timeNano"].as_i64().unwrap_or(0) as i128,
                    kind: text("Type"),
                    action: text("Action"),
                    id: v["Actor"]["ID"].as_str().unwrap_or_default().to_string(),
                    attributes,
                };
                sink.lock().unwrap_or_else(|e| e.into_inner()).push(event);
            }
        });
        Events { child, seen }
    }

    fn all(&self) -> Vec<Event> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where an evaluation is interrupted: the first point at which `when` holds for the
/// namespace's events (in order).
struct Point {
    name: &'static str,
    /// The signal: `INT` or `TERM`.
    signal: &'static str,
    /// Called with the namespace's container events so far; true when the signal is due.
    when: fn(&[Event]) -> bool,
    /// Extra wait after `when` first holds.
    delay: Duration,
}

/// Removes what a failed test left in its namespace (and kills its etip) on every exit path.
struct Cleanup {
    namespace: String,
    child: Option<Child>,
    snapshots: Arc<Mutex<BTreeSet<String>>>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        clean(&self.namespace);
        for id in self
            .snapshots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let _ = docker(&["rmi", "-f", id]);
        }
    }
}

/// The counts of "removed N container(s) and M snapshot image(s)".
fn reported_counts(stderr: &str) -> Option<(usize, usize)> {
    let line = stderr.lines().find(|l| l.starts_with("removed "))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    match words[..] {
        [
            "removed",
            n,
            "container(s)",
            "and",
            m,
            "snapshot",
            "image(s)",
            ..,
        ] => Some((n.parse().ok()?, m.parse().ok()?)),
        _ => None,
    }
}

fn interrupt_at(point: Point) {
    require_engine();
    let build = built();
    let started = SystemTime::now();
    let events = Events::watch(started);
    let ns = format!("{}-{}", build.0.namespace, point.name);
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("stderr.txt");
    let snapshots = Arc::new(Mutex::new(BTreeSet::new()));
    let mut cleanup = Cleanup {
        namespace: ns.clone(),
        child: None,
        snapshots: Arc::clone(&snapshots),
    };
    let child = Command::new(assert_cmd::cargo::cargo_bin("etip"))
        .args(["eval", "--predictions", "gold", "--rounds", "30"])
        .args(["--namespace", &ns, "--etips"])
        .arg(&build.0.status)
        .arg("--out")
        .arg(tmp.path().join("eval"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("etip starts");
    let pid = child.id();
    let child = cleanup.child.insert(child);
    let ours = |events: &[Event]| -> Vec<Event> {
        events
            .iter()
            .filter(|e| e.kind == "container" && e.namespace() == Some(ns.as_str()))
            .cloned()
            .collect()
    };
    let stderr = || std::fs::read_to_string(&log).unwrap_or_default();

    // Wait for the point, then send the signal.
    let deadline = Instant::now() + Duration::from_secs(300);
    while !(point.when)(&ours(&events.all())) {
        assert!(
            Instant::now() < deadline,
            "{}: the evaluation did not reach the point within 300 s: {}",
            point.name,
            stderr()
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "{}: etip ended before the point: {}",
            point.name,
            stderr()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(point.delay);
    let signalled = now_nanos();
    let killed = Command::new("kill")
        .args([&format!("-{}", point.signal), &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(240);
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        assert!(
            Instant::now() < deadline,
            "{}: etip did not stop within 240 s of the signal: {}",
            point.name,
            stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = stderr();
    let expected = if point.signal == "INT" { 130 } else { 143 };
    assert_eq!(code, Some(expected), "{}: {stderr}", point.name);
    assert!(
        stderr.contains("interrupted: removing this run's containers"),
        "{}: {stderr}",
        point.name
    );

    // A request the engine was still serving when etip ended creates its object later: a commit
    // (it pauses the container first) takes seconds and ends even when the container was removed
    // meanwhile, a create takes a fraction of one.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !commits_in_flight(&ours(&events.all())).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(3));
    let all = events.all();
    let ours = ours(&all);
    let committed: BTreeSet<String> = ours
        .iter()
        .filter(|e| e.action == "commit")
        .filter_map(|e| e.attributes.get("imageID").cloned())
        .collect();
    snapshots
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(committed.iter().cloned());
    let containers = listed(&[
        "ps",
        "-aq",
        "--no-trunc",
        "--filter",
        &format!("label=etip.namespace={ns}"),
    ]);
    let images = listed(&[
        "images",
        "-aq",
        "--no-trunc",
        "--filter",
        &format!("label=etip.namespace={ns}"),
    ]);
    let snapshots_left: Vec<&String> = committed
        .iter()
        .filter(|id| docker(&["image", "inspect", id.as_str()]).status.success())
        .collect();
    assert!(
        containers.is_empty() && images.is_empty() && snapshots_left.is_empty(),
        "{}: left behind: containers {containers:?}, images {images:?}, snapshots {snapshots_left:?}\n{stderr}",
        point.name
    );

    // The message counts what was removed after the signal. A removal the run itself finished
    // about when the signal came (the previous round's containers are removed as the fresh ones
    // are created) may or may not be counted: the engine's clock for the event and the moment the
    // process reads the engine's answer and reacts to the signal differ by milliseconds, and on a
    // busy machine by more. Within BOUNDARY_MS of the signal on either side it may go either way.
    const BOUNDARY_MS: i128 = 150;
    let removals: Vec<(&str, i128)> = ours
        .iter()
        .filter(|e| e.action == "destroy")
        .chain(
            all.iter()
                .filter(|e| e.kind == "image" && e.action == "delete")
                .filter(|e| committed.contains(&e.id)),
        )
        .map(|e| (e.id.as_str(), (e.nanos - signalled).div_euclid(1_000_000)))
        .filter(|(_, ms)| *ms >= -BOUNDARY_MS)
        .collect();
    let count = |containers: bool, from_ms: i128| {
        removals
            .iter()
            .filter(|(id, _)| id.starts_with("sha256:") != containers)
            .filter(|(_, ms)| *ms >= from_ms)
            .map(|(id, _)| *id)
            .collect::<BTreeSet<_>>()
            .len()
    };
    let (n, m) = reported_counts(&stderr).unwrap_or_else(|| {
        panic!(
            "{}: no \"removed N container(s) and M snapshot image(s)\": {stderr}",
            point.name
        )
    });
    let (sure, maybe) = (BOUNDARY_MS, -BOUNDARY_MS);
    assert!(
        (count(true, sure)..=count(true, maybe)).contains(&n)
            && (count(false, sure)..=count(false, maybe)).contains(&m),
        "{}: the message counts {n} container(s) and {m} snapshot image(s); removed about or \
         after the signal (id, ms after it): {removals:?}\n{stderr}",
        point.name
    );
    // What etip said, for `--nocapture` runs: how often a request was in flight at the signal.
    for line in stderr.lines().filter(|l| !l.is_empty()) {
        eprintln!("{}: {line}", point.name);
    }
    eprintln!(
        "{}: removed about or after the signal (id, ms after it): {removals:?}",
        point.name
    );
    drop(cleanup);
}

/// Containers paused for a commit whose commit has not ended (no `commit` or `unpause` since).
fn commits_in_flight(events: &[Event]) -> BTreeSet<&str> {
    let mut paused = BTreeSet::new();
    for e in events {
        match e.action.as_str() {
            "pause" => {
                paused.insert(e.id.as_str());
            }
            "commit" | "unpause" => {
                paused.remove(e.id.as_str());
            }
            _ => {}
        }
    }
    paused
}

/// Whether the session containers were renewed once (a round's fresh containers exist).
fn renewed(events: &[Event]) -> Option<usize> {
    let commit = events.iter().position(|e| e.action == "commit")?;
    let destroy = events[commit..]
        .iter()
        .position(|e| e.action == "destroy")?;
    Some(commit + destroy)
}

#[test]
fn a_signal_while_the_candidate_is_built_removes_its_container() {
    interrupt_at(Point {
        name: "candidate",
        signal: "TERM",
        when: |ev| ev.iter().any(|e| e.action == "start"),
        delay: Duration::from_secs(2),
    });
}

#[test]
fn a_signal_while_a_session_is_committed_removes_the_snapshot_image_too() {
    // The engine pauses a container to commit it; the commit takes seconds here.
    interrupt_at(Point {
        name: "commit",
        signal: "INT",
        when: |ev| ev.iter().any(|e| e.action == "pause"),
        delay: Duration::ZERO,
    });
}

#[test]
fn a_signal_while_fresh_containers_are_created_removes_them() {
    // The first removal of a round's renewal: the other sessions are being removed and the
    // fresh containers created from the snapshot images.
    interrupt_at(Point {
        name: "create",
        signal: "TERM",
        when: |ev| renewed(ev).is_some(),
        delay: Duration::ZERO,
    });
}

#[test]
fn a_signal_during_a_round_in_fresh_containers_removes_them_and_the_snapshots() {
    interrupt_at(Point {
        name: "round",
        signal: "INT",
        when: |ev| {
            renewed(ev).is_some_and(|at| {
                ev[at..]
                    .iter()
                    .any(|e| e.action.starts_with("exec_start") && !e.action.contains("/proc/"))
            })
        },
        delay: Duration::from_millis(500),
    });
}
