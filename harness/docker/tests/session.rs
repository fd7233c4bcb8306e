//! Sessions against the real Docker engine: execs (env, working directory, exit codes, output),
//! time limits (all three layers), copying files out, hidden paths, no network, cpusets, stopping,
//! and the per-exec overhead. Each test runs in its own namespace and removes its containers
//! (see `common::engine_test`); without a usable engine the tests fail.

mod common;

use common::{Ctx, Flavour, engine_test, image};
use etip_docker::{
    Engine, EngineError, ExecOutput, ExecSpec, LABEL_KIND, LABEL_MANAGED, LABEL_NAMESPACE, Limits,
    OUTPUT_CAP, Session, SessionSpec, extract_tar,
};
use std::time::{Duration, Instant};

fn spec(ctx: &Ctx, image: &str) -> SessionSpec {
    SessionSpec::new(image)
        .label(LABEL_NAMESPACE, ctx.ns.clone())
        .limits(Limits {
            cpus: 1.0,
            memory_bytes: 256 << 20,
            timeout: Duration::from_secs(60),
            pids: 256,
        })
}

async fn exec(engine: &Engine, s: &Session, argv: &[&str]) -> ExecOutput {
    engine
        .exec(
            s,
            &ExecSpec::new(argv.iter().copied()).timeout(Duration::from_secs(60)),
        )
        .await
        .unwrap_or_else(|e| panic!("exec {argv:?}: {e}"))
}

/// Command lines of the container's processes (without the lister and its `timeout`).
async fn processes(engine: &Engine, s: &Session) -> Vec<String> {
    let out = exec(
        engine,
        s,
        &[
            "sh",
            "-c",
            "for d in /proc/[0-9]*; do case ${d#/proc/} in $$|$PPID) continue;; esac; \
             printf '%s ' ${d#/proc/}; cat $d/cmdline 2>/dev/null; echo; done",
        ],
    )
    .await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    out.stdout
        .lines()
        .map(|l| l.replace('\0', " ").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Only the init process and the main `sleep infinity` are left.
async fn assert_no_leftovers(engine: &Engine, s: &Session) {
    let ps = processes(engine, s).await;
    assert_eq!(ps.len(), 2, "leftover processes: {ps:#?}");
    assert!(ps.iter().any(|p| p.contains("docker-init")), "{ps:#?}");
    assert!(ps.iter().any(|p| p.ends_with("sleep infinity")), "{ps:#?}");
}

#[test]
fn exec_env_workdir_exit_codes_and_output() {
    engine_test("exec", |ctx| async move {
        let e = &ctx.engine;
        let s = e
            .start_session(
                &spec(&ctx, &ctx.image)
                    .env("FROM_SESSION=s1")
                    .workdir("/work"),
            )
            .await
            .expect("starting a session");
        assert!(s.has_timeout_wrapper());
        let labels = e
            .list_containers(&[format!("{LABEL_NAMESPACE}={}", ctx.ns)])
            .await
            .unwrap();
        assert_eq!(labels.len(), 1);
        assert_eq!(labels[0].labels[LABEL_MANAGED], "true");
        assert_eq!(labels[0].labels[LABEL_KIND], "session");

        // Environment: the session's and the exec's.
        let out = e
            .exec(&s, &ExecSpec::new(["env"]).env("FROM_EXEC=e1"))
            .await
            .unwrap();
        assert_eq!(out.exit_code, Some(0));
        assert!(
            out.stdout.lines().any(|l| l == "FROM_SESSION=s1"),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout.lines().any(|l| l == "FROM_EXEC=e1"),
            "{}",
            out.stdout
        );

        // Working directory: the session's by default, the exec's when given.
        let out = exec(e, &s, &["sh", "-c", "pwd"]).await;
        assert_eq!(out.stdout, "/work\n");
        let out = e
            .exec(
                &s,
                &ExecSpec::new(["sh", "-c", "pwd; ls"]).workdir("/work/original"),
            )
            .await
            .unwrap();
        assert_eq!(out.stdout, "/work/original\na.txt\n");

        // No shell is added: arguments reach the program as they are.
        let out = exec(e, &s, &["echo", "a  b", "$HOME", ";", "true"]).await;
        assert_eq!(out.stdout, "a  b $HOME ; true\n");

        // Exit codes, stdout and stderr apart.
        let out = exec(e, &s, &["sh", "-c", "echo out; echo err >&2; exit 7"]).await;
        assert_eq!(out.exit_code, Some(7));
        assert!(!out.timed_out);
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        assert_eq!((out.stdout_dropped, out.stderr_dropped), (0, 0));
        assert_eq!(exec(e, &s, &["false"]).await.exit_code, Some(1));
        assert_eq!(exec(e, &s, &["true"]).await.exit_code, Some(0));

        // A failing command: a missing program.
        let out = exec(e, &s, &["no-such-program", "x"]).await;
        assert_eq!(out.exit_code, Some(127), "{out:?}");
        assert!(out.stderr.contains("no-such-program"), "{out:?}");

        // The duration is the command's.
        let out = exec(e, &s, &["sleep", "1"]).await;
        assert!(
            out.duration >= Duration::from_secs(1) && out.duration < Duration::from_millis(1500),
            "{:?}",
            out.duration
        );
        assert_no_leftovers(e, &s).await;
        e.stop_session(&s).await.unwrap();
    });
}

#[test]
fn output_keeps_the_last_mebibyte() {
    engine_test("output", |ctx| async move {
        let e = &ctx.engine;
        let s = e.start_session(&spec(&ctx, &ctx.image)).await.unwrap();
        let n = 40_000;
        let script = format!(
            "i=0; while [ $i -lt {n} ]; do echo \"line $i ........................................\"; \
             echo \"e$i\" >&2; i=$((i+1)); done"
        );
        let out = exec(e, &s, &["sh", "-c", &script]).await;
        assert_eq!(out.exit_code, Some(0));
        let total: usize = (0..n)
            .map(|i| format!("line {i} ........................................\n").len())
            .sum();
        assert!(total > OUTPUT_CAP);
        assert_eq!(out.stdout.len(), OUTPUT_CAP);
        assert_eq!(out.stdout_dropped as usize, total - OUTPUT_CAP);
        assert!(out.stdout.ends_with(&format!(
            "line {} ........................................\n",
            n - 1
        )));
        let err_total: usize = (0..n).map(|i| format!("e{i}\n").len()).sum();
        assert_eq!(out.stderr.len(), err_total);
        assert_eq!(out.stderr_dropped, 0);
        e.stop_session(&s).await.unwrap();
    });
}

#[test]
fn hanging_command_is_stopped_by_timeout() {
    engine_test("timeout", |ctx| async move {
        let e = &ctx.engine;
        let s = e.start_session(&spec(&ctx, &ctx.image)).await.unwrap();
        assert!(s.has_timeout_wrapper());
        let t = Instant::now();
        let out = e
            .exec(
                &s,
                &ExecSpec::new(["sleep", "1000"]).timeout(Duration::from_secs(2)),
            )
            .await
            .unwrap();
        let took = t.elapsed();
        eprintln!("sleep 1000 with a 2 s limit returned after {took:?}: {out:?}");
        assert!(out.timed_out, "{out:?}");
        assert_eq!(out.exit_code, None);
        assert!(!out.session_killed);
        assert!(
            took >= Duration::from_secs(2) && took < Duration::from_secs(4),
            "returned after {took:?}"
        );
        assert_no_leftovers(e, &s).await;

        // A command (and its background child) ignoring TERM: KILL after the grace time.
        let t = Instant::now();
        let out = e
            .exec(
                &s,
                &ExecSpec::new(["sh", "-c", "trap '' TERM; sleep 1000 & sleep 1000"])
                    .timeout(Duration::from_secs(1)),
            )
            .await
            .unwrap();
        eprintln!(
            "TERM ignored, 1 s limit: returned after {:?}: {out:?}",
            t.elapsed()
        );
        assert!(out.timed_out, "{out:?}");
        assert!(t.elapsed() < Duration::from_secs(9), "{:?}", t.elapsed());
        assert_no_leftovers(e, &s).await;

        // The session still works.
        assert_eq!(exec(e, &s, &["true"]).await.exit_code, Some(0));

        // A command that exits within its limit is not a timeout, whatever its code.
        let out = e
            .exec(
                &s,
                &ExecSpec::new(["sh", "-c", "exit 124"]).timeout(Duration::from_secs(5)),
            )
            .await
            .unwrap();
        assert!(!out.timed_out);
        assert_eq!(out.exit_code, Some(124));

        // Leftovers of a command that ended normally are killed on request.
        let out = exec(
            e,
            &s,
            &["sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo started"],
        )
        .await;
        assert_eq!(out.stdout, "started\n");
        assert_eq!(processes(e, &s).await.len(), 3);
        assert_eq!(e.kill_leftovers(&s).await.unwrap(), 1);
        assert_no_leftovers(e, &s).await;
        e.stop_session(&s).await.unwrap();
    });
}

#[test]
fn without_timeout_program_the_host_kills_the_processes() {
    engine_test("notimeout", |ctx| async move {
        let e = &ctx.engine;
        let img = image(e, Flavour::NoTimeout).await;
        let s = e.start_session(&spec(&ctx, &img)).await.unwrap();
        assert!(!s.has_timeout_wrapper());
        let t = Instant::now();
        let out = e
            .exec(
                &s,
                &ExecSpec::new(["sleep", "1000"]).timeout(Duration::from_secs(2)),
            )
            .await
            .unwrap();
        let took = t.elapsed();
        assert!(out.timed_out, "{out:?}");
        assert!(!out.session_killed);
        assert!(out.killed_leftovers >= 1, "{out:?}");
        assert!(took < Duration::from_secs(6), "returned after {took:?}");
        assert_no_leftovers(e, &s).await;
        assert_eq!(exec(e, &s, &["true"]).await.exit_code, Some(0));
        e.stop_session(&s).await.unwrap();
    });
}

#[test]
fn without_shell_the_container_is_killed() {
    engine_test("noshell", |ctx| async move {
        let e = &ctx.engine;
        let img = image(e, Flavour::SleepOnly).await;
        let s = e.start_session(&spec(&ctx, &img)).await.unwrap();
        assert!(!s.has_timeout_wrapper());
        let out = e
            .exec(
                &s,
                &ExecSpec::new(["sleep", "0.1"]).timeout(Duration::from_secs(5)),
            )
            .await
            .unwrap();
        assert_eq!(out.exit_code, Some(0));
        let t = Instant::now();
        let out = e
            .exec(
                &s,
                &ExecSpec::new(["sleep", "1000"]).timeout(Duration::from_secs(2)),
            )
            .await
            .unwrap();
        assert!(out.timed_out && out.session_killed, "{out:?}");
        assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
        assert!(s.is_dead());
        let err = e.exec(&s, &ExecSpec::new(["true"])).await.unwrap_err();
        assert!(matches!(err, EngineError::Session { .. }), "{err}");
        e.stop_session(&s).await.unwrap();
    });
}

#[test]
fn copy_out_folder_and_missing_path() {
    engine_test("copyout", |ctx| async move {
        let e = &ctx.engine;
        let s = e.start_session(&spec(&ctx, &ctx.image)).await.unwrap();
        let out = exec(
            e,
            &s,
            &[
                "sh",
                "-c",
                "mkdir -p /work/out/sub && echo hello > /work/out/a.txt && \
                 echo bye > /work/out/sub/b.txt",
            ],
        )
        .await;
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        let tar = e.copy_out(&s, "/work/out").await.unwrap().expect("exists");
        let dir = tempfile::tempdir().unwrap();
        let r = extract_tar(&tar, dir.path()).unwrap();
        assert_eq!((r.files, r.dirs), (2, 2), "{r:?}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("out/a.txt")).unwrap(),
            "hello\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("out/sub/b.txt")).unwrap(),
            "bye\n"
        );
        // A single file.
        let tar = e.copy_out(&s, "/work/out/a.txt").await.unwrap().unwrap();
        let dir = tempfile::tempdir().unwrap();
        extract_tar(&tar, dir.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "hello\n"
        );
        assert!(e.copy_out(&s, "/work/missing").await.unwrap().is_none());
        e.stop_session(&s).await.unwrap();
    });
}

/// `etip eval`'s fresh rounds: a session committed after the candidate's build and started again
/// from that snapshot keeps what the build wrote and loses what a round wrote (a result cached in
/// a file by one round is gone in the next); the snapshot image is removed afterwards.
#[test]
fn a_session_started_from_its_snapshot_keeps_the_build_and_forgets_the_round() {
    engine_test("snapshot", |ctx| async move {
        let e = &ctx.engine;
        let spec = spec(&ctx, &ctx.image);
        let s = e.start_session(&spec).await.unwrap();
        let built = exec(
            e,
            &s,
            &["sh", "-c", "mkdir -p /work/t && echo built > /work/t/build"],
        )
        .await;
        assert_eq!(built.exit_code, Some(0), "{built:?}");
        let snapshot = e.snapshot_session(&s, &spec.labels).await.unwrap();
        // A round caches something in the tree and in /tmp.
        let round = exec(
            e,
            &s,
            &["sh", "-c", "echo cached > /work/t/cache && echo x > /tmp/x"],
        )
        .await;
        assert_eq!(round.exit_code, Some(0), "{round:?}");
        e.stop_session(&s).await.unwrap();

        let fresh = SessionSpec {
            image: snapshot.clone(),
            ..spec.clone()
        };
        let s2 = e.start_session(&fresh).await.unwrap();
        let seen = exec(e, &s2, &["sh", "-c", "ls /work/t; ls /tmp"]).await;
        assert_eq!(seen.exit_code, Some(0), "{seen:?}");
        let names: Vec<&str> = seen.stdout.split_whitespace().collect();
        assert_eq!(names, vec!["build"], "{seen:?}");
        e.stop_session(&s2).await.unwrap();
        e.remove_image(&snapshot).await.unwrap();
        let left = e
            .list_images(&[format!("{LABEL_NAMESPACE}={}", ctx.ns)])
            .await
            .unwrap();
        assert!(left.is_empty(), "snapshot images left: {left:?}");
    });
}

#[test]
fn hidden_paths_network_and_cpuset() {
    engine_test("isolation", |ctx| async move {
        let e = &ctx.engine;
        let info = e.describe().await.unwrap();
        let cpu = if info.ncpu >= 2 { "1" } else { "0" };
        let s = e
            .start_session(&spec(&ctx, &ctx.image).hide("/work/patched").cpuset(cpu))
            .await
            .unwrap();

        // The hidden folder is empty and read-only; the other tree is untouched.
        let out = exec(e, &s, &["ls", "-A", "/work/patched"]).await;
        assert_eq!(
            (out.exit_code, out.stdout.as_str()),
            (Some(0), ""),
            "{out:?}"
        );
        let out = exec(e, &s, &["touch", "/work/patched/x"]).await;
        assert_ne!(out.exit_code, Some(0), "{out:?}");
        assert!(out.stderr.contains("Read-only"), "{out:?}");
        let out = exec(e, &s, &["cat", "/work/original/a.txt"]).await;
        assert_eq!(out.stdout, "original\n");

        // No network: only the loopback interface.
        let out = exec(e, &s, &["ls", "/sys/class/net"]).await;
        assert_eq!(out.stdout.split_whitespace().collect::<Vec<_>>(), ["lo"]);
        // ... and localhost resolves (tests start servers on it), though the bootstrapped image's
        // own /etc/hosts is empty.
        let out = exec(e, &s, &["cat", "/etc/hosts"]).await;
        assert!(
            out.stdout
                .lines()
                .any(|l| l.starts_with("127.0.0.1") && l.contains("localhost")),
            "no localhost in the session's /etc/hosts: {out:?}"
        );

        // The cpuset.
        let out = exec(e, &s, &["cat", "/proc/self/status"]).await;
        let cpus = out
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .expect("Cpus_allowed_list")
            .trim()
            .to_string();
        assert_eq!(cpus, cpu);
        e.stop_session(&s).await.unwrap();

        // Bad hidden paths are refused before anything is created.
        for bad in ["/", "work/patched", "/work/../etc"] {
            let err = e
                .start_session(&spec(&ctx, &ctx.image).hide(bad))
                .await
                .unwrap_err();
            assert!(matches!(err, EngineError::Session { .. }), "{err}");
        }
    });
}

#[test]
fn stop_session_removes_the_container_and_failures_leave_nothing() {
    engine_test("stop", |ctx| async move {
        let e = &ctx.engine;
        let ns_label = [format!("{LABEL_NAMESPACE}={}", ctx.ns)];
        let s = e.start_session(&spec(&ctx, &ctx.image)).await.unwrap();
        assert_eq!(e.list_containers(&ns_label).await.unwrap().len(), 1);
        e.stop_session(&s).await.unwrap();
        assert!(e.list_containers(&ns_label).await.unwrap().is_empty());
        // Idempotent; execs on a stopped session fail.
        e.stop_session(&s).await.unwrap();
        assert!(e.exec(&s, &ExecSpec::new(["true"])).await.is_err());

        // A session that cannot start leaves no container.
        let err = e
            .start_session(&spec(&ctx, "etip-test/no-such-image:0"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no-such-image"), "{err}");
        let err = e
            .start_session(&spec(&ctx, &ctx.image).cpuset("999"))
            .await
            .unwrap_err();
        assert!(!err.to_string().is_empty());
        assert!(e.list_containers(&ns_label).await.unwrap().is_empty());
    });
}

#[test]
fn describe_reports_the_engine() {
    engine_test("describe", |ctx| async move {
        let info = ctx.engine.describe().await.unwrap();
        assert!(!info.server_version.is_empty(), "{info:?}");
        assert!(!info.kernel.is_empty(), "{info:?}");
        assert!(!info.os.is_empty(), "{info:?}");
        assert!(!info.storage_driver.is_empty(), "{info:?}");
        assert!(
            matches!(info.cgroup_version.as_str(), "1" | "2"),
            "{info:?}"
        );
        assert!(info.ncpu >= 1 && info.mem_total > 0, "{info:?}");
        let json = info.to_json();
        assert_eq!(json["ncpu"], info.ncpu);
        eprintln!("{json}");
    });
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The per-exec overhead: `true` run 50 times. Prints the medians; the bound only catches a
/// broken measurement (the figure itself is reported in the README).
#[test]
fn exec_overhead() {
    engine_test("overhead", |ctx| async move {
        let e = &ctx.engine;
        let s = e
            .start_session(&spec(&ctx, &ctx.image).cpuset("0"))
            .await
            .unwrap();
        let n = 50;
        let (mut durations, mut calls) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let t = Instant::now();
            let out = exec(e, &s, &["true"]).await;
            calls.push(t.elapsed());
            assert_eq!(out.exit_code, Some(0));
            durations.push(out.duration);
        }
        let (d, c) = (median(durations), median(calls));
        eprintln!(
            "exec overhead of `true` (median of {n}, with the timeout wrapper): duration {:.1} ms, \
             whole exec call {:.1} ms",
            d.as_secs_f64() * 1e3,
            c.as_secs_f64() * 1e3
        );
        assert!(d < Duration::from_secs(1), "{d:?}");
        // The same overhead on a command that takes time: duration - 0.5 s of `sleep 0.5`.
        let mut extra = Vec::new();
        for _ in 0..10 {
            let out = exec(e, &s, &["sleep", "0.5"]).await;
            assert_eq!(out.exit_code, Some(0));
            // `duration` starts when the engine's answer to the start request is read, which a
            // loaded machine can delay past the process's start: it may fall a little short.
            extra.push(out.duration.saturating_sub(Duration::from_millis(500)));
        }
        eprintln!(
            "duration of `sleep 0.5` minus 0.5 s (median of 10): {:.1} ms",
            median(extra).as_secs_f64() * 1e3
        );
        e.stop_session(&s).await.unwrap();
    });
}
