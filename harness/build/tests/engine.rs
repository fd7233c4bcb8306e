//! Tests against the real Docker engine: base-image bootstrap (cached), both fixtures built offline,
//! rebuild is a no-op, broken patches are recorded and the batch goes on, the run API's limits, and
//! clean leaves nothing labelled behind.

mod common;

use common::{builder, etip, fixture_repo};
use etip_core::instance::{BuildOutcome, FailureKind, InstanceStatus, Language, LayerKind};
use etip_docker::{LABEL_MANAGED, LABEL_NAMESPACE, Limits, RunSpec, TmpFile};
use std::time::Duration;

fn no_events(_: &etip_build::Event) {}

fn run(
    tb: &common::TestBuilder,
    image: &str,
    env: &[String],
    script: &str,
) -> etip_docker::RunOutput {
    let mut spec = RunSpec::new(image, ["sh", "-c", script])
        .limits(Limits {
            cpus: 1.0,
            memory_bytes: 1 << 30,
            timeout: Duration::from_secs(300),
            pids: 512,
        })
        .label(LABEL_NAMESPACE, tb.ns.clone());
    for e in env {
        spec = spec.env(e.clone());
    }
    tb.builder
        .block_on(tb.builder.engine().run(&spec))
        .expect("running a container")
}

/// The `time="..."` attribute of a JUnit XML report's first testsuite/testcase for `class`.
fn xml_time(xml: &str, marker: &str) -> f64 {
    let at = xml
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} not in:\n{xml}"));
    let rest = &xml[at..];
    let t = rest.find("time=\"").unwrap() + 6;
    let end = rest[t..].find('"').unwrap();
    rest[t..t + end].replace(',', "").parse().unwrap()
}

fn assert_built(s: &InstanceStatus) {
    assert!(
        matches!(s.outcome, BuildOutcome::Built | BuildOutcome::Reused),
        "{} failed: {:?}\n{}",
        s.id,
        s.reason,
        s.detail.as_deref().unwrap_or("")
    );
}

#[test]
fn bootstrap_is_cached_by_content_key() {
    let tb = builder("boot");
    let first = tb
        .builder
        .bootstrap_base(false, &mut |_| {})
        .expect("bootstrap");
    let again = tb
        .builder
        .bootstrap_base(false, &mut |_| {})
        .expect("bootstrap again");
    assert!(!again.built, "the second call must reuse the image");
    assert_eq!(first.tag, again.tag);
    assert_eq!(first.image_id, again.image_id);
    let info = tb
        .builder
        .block_on(tb.builder.engine().image(&again.tag))
        .unwrap()
        .expect("base image exists");
    assert_eq!(
        info.labels.get("etip.kind").map(String::as_str),
        Some("base")
    );
    assert_eq!(
        info.labels.get(LABEL_MANAGED).map(String::as_str),
        Some("true")
    );
}

#[test]
fn maven_fixture_builds_offline_and_rebuild_is_a_no_op() {
    let tb = builder("maven");
    let (_tmp, repo, c) = fixture_repo("maven");
    let e = etip("textutil-dedup", Language::Java, &repo, &c[0], &c[1]);
    let first = tb.builder.build_one(&e, &no_events);
    assert_built(&first);
    let tc = first.toolchain.as_ref().unwrap();
    assert_eq!(tc.version, "17");
    assert_eq!(tc.source, "pom.xml: maven.compiler.release");
    assert_eq!(tc.build_tool, "mvn");
    let kinds: Vec<LayerKind> = first.layers.iter().map(|l| l.kind).collect();
    assert_eq!(
        kinds,
        [LayerKind::Base, LayerKind::Env, LayerKind::Instance]
    );
    assert!(
        first
            .layers
            .iter()
            .all(|l| l.size_bytes > 0 && l.layer_bytes >= 0)
    );
    let image = first.image.clone().unwrap();

    // Both trees are in the image and built; the fixture's ETIP is genuine (>= 2x on its test).
    let out = run(
        &tb,
        &image,
        &first.env["original"],
        "set -e; for v in original patched; do test -f /work/$v/target/classes/demo/TextUtil.class; \
         test -f /work/$v/target/test-classes/demo/TextDedupTest.class; done; \
         for v in original patched; do cd /work/$v; mvn $ETIP_MAVEN_ARGS -q test -Dtest=TextDedupTest >/dev/null; \
         echo \"== $v\"; cat target/surefire-reports/TEST-demo.TextDedupTest.xml; done",
    );
    assert_eq!(out.exit_code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let (o, p) = out.stdout.split_once("== patched").unwrap();
    let (to, tp) = (xml_time(o, "<testcase"), xml_time(p, "<testcase"));
    assert!(to >= 2.0 * tp, "original {to} s vs patched {tp} s");

    // The log folder holds the Dockerfiles, the context summary, the build log and the status.
    let logs = tb
        .out
        .path()
        .join("logs")
        .join(etip_build::instance::log_slug("textutil-dedup"));
    for f in [
        "Dockerfile.env",
        "Dockerfile.instance",
        "context.txt",
        "build.log",
        "status.json",
    ] {
        assert!(logs.join(f).is_file(), "{f} missing in {}", logs.display());
    }
    let status: InstanceStatus =
        serde_json::from_str(&std::fs::read_to_string(logs.join("status.json")).unwrap()).unwrap();
    assert_eq!(status.image, first.image);

    // Rebuild: same tags, nothing built.
    let start = std::time::Instant::now();
    let again = tb.builder.build_one(&e, &no_events);
    assert_eq!(again.outcome, BuildOutcome::Reused);
    assert_eq!(again.image, first.image);
    assert!(again.layers.iter().all(|l| l.reused && l.build_secs == 0.0));
    let tags = |s: &InstanceStatus| s.layers.iter().map(|l| l.tag.clone()).collect::<Vec<_>>();
    assert_eq!(tags(&again), tags(&first));
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn python_fixture_builds_offline() {
    let tb = builder("python");
    let (_tmp, repo, c) = fixture_repo("python");
    let e = etip("textutil-py-dedup", Language::Python, &repo, &c[0], &c[1]);
    let s = tb.builder.build_one(&e, &no_events);
    assert_built(&s);
    let tc = s.toolchain.as_ref().unwrap();
    assert_eq!(tc.version, "3.11");
    assert_eq!(tc.requested.as_deref(), Some(">=3.8"));
    let image = s.image.clone().unwrap();
    let mut times = Vec::new();
    for v in ["original", "patched"] {
        let out = run(
            &tb,
            &image,
            &s.env[v],
            &format!(
                "set -e; cd /work/{v}; python -c 'import textutil, sys; assert textutil.__file__.startswith(\"/work/{v}/\"), textutil.__file__'; \
                 python -m pytest -q -p no:randomly -p no:cacheprovider tests/test_text_dedup.py --junitxml=/tmp/r.xml >/dev/null; cat /tmp/r.xml"
            ),
        );
        assert_eq!(
            out.exit_code,
            Some(0),
            "{v}: {}\n{}",
            out.stdout,
            out.stderr
        );
        times.push(xml_time(&out.stdout, "<testcase"));
    }
    assert!(
        times[0] >= 2.0 * times[1],
        "original {} s vs patched {} s",
        times[0],
        times[1]
    );
}

#[test]
fn broken_patch_is_recorded_and_the_batch_goes_on() {
    let tb = builder("broken");
    let (_tmp, repo, c) = fixture_repo("python");
    let mut by_url = etip("py-join-url", Language::Python, &repo, &c[1], &c[2]);
    by_url.source = Some(format!("file://{}", repo.display()));
    let mut no_repo = etip("py-no-repo", Language::Python, &repo, &c[1], &c[2]);
    no_repo.source = Some("file:///nonexistent/etip-repo.git".into());
    let batch = vec![
        etip("py-broken", Language::Python, &repo, &c[2], &c[3]),
        etip("py-join", Language::Python, &repo, &c[1], &c[2]),
        etip(
            "py-missing",
            Language::Python,
            &repo,
            &c[1],
            "0123456789abcdef0123456789abcdef01234567",
        ),
        by_url,
        no_repo,
    ];
    // Two workers: the shared env layer and the identical instance layer are built once.
    let statuses = tb.builder.build_all(&batch, 2, &no_events);
    assert_eq!(statuses.len(), 5);
    assert_eq!(statuses[0].outcome, BuildOutcome::Failed);
    assert_eq!(statuses[0].failure, Some(FailureKind::PatchedCompile));
    assert_eq!(
        statuses[0].reason.as_deref(),
        Some("patched does not compile")
    );
    assert!(
        statuses[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("SyntaxError")
    );
    assert_built(&statuses[1]);
    assert_eq!(statuses[2].failure, Some(FailureKind::Checkout));
    // The same commits cloned from a URL give the same content key (the tag also names the id).
    assert_built(&statuses[3]);
    let key = |s: &InstanceStatus| {
        s.image
            .as_ref()
            .unwrap()
            .rsplit('-')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(key(&statuses[3]), key(&statuses[1]));
    assert_eq!(statuses[4].failure, Some(FailureKind::Clone));
    let jsonl = std::fs::read_to_string(tb.out.path().join("status.jsonl")).unwrap();
    assert_eq!(jsonl.lines().count(), 5);
}

#[test]
fn maven_broken_patch_is_patched_does_not_compile() {
    let tb = builder("mvnbroken");
    let (_tmp, repo, c) = fixture_repo("maven");
    let s = tb.builder.build_one(
        &etip("mvn-broken", Language::Java, &repo, &c[2], &c[3]),
        &no_events,
    );
    assert_eq!(
        s.reason.as_deref(),
        Some("patched does not compile"),
        "{:?}",
        s.detail
    );
    assert!(s.detail.as_deref().unwrap().contains("COMPILATION ERROR"));
}

/// A JDK no toolchain table entry provides (nor a newer one) is `interpreter_unavailable`, naming
/// the registry image that would.
#[test]
fn missing_jdk_is_interpreter_unavailable() {
    let tb = builder("nojdk");
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("r");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join(".java-version"), "26\n").unwrap();
    std::fs::write(repo.join("pom.xml"), "<project/>\n").unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .status()
            .unwrap()
            .success();
        assert!(ok);
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "a"]);
    let s = tb.builder.build_one(
        &etip("jdk26", Language::Java, &repo, "HEAD", "HEAD"),
        &no_events,
    );
    assert_eq!(
        s.failure,
        Some(FailureKind::InterpreterUnavailable),
        "{s:?}"
    );
    assert_eq!(s.reason.as_deref(), Some("no image for JDK 26"));
    let detail = s.detail.unwrap_or_default();
    assert!(detail.contains("eclipse-temurin:26-jdk"), "{detail}");
}

#[test]
fn run_api_enforces_limits_and_always_removes_the_container() {
    let tb = builder("run");
    let base = tb
        .builder
        .bootstrap_base(false, &mut |_| {})
        .expect("bootstrap");
    let engine = tb.builder.engine();
    let labels = [format!("{LABEL_NAMESPACE}={}", tb.ns)];
    let spec = |cmd: &str, timeout: u64| {
        RunSpec::new(&base.tag, ["sh", "-c", cmd])
            .limits(Limits {
                cpus: 0.5,
                memory_bytes: 256 << 20,
                timeout: Duration::from_secs(timeout),
                pids: 64,
            })
            .label(LABEL_NAMESPACE, tb.ns.clone())
    };
    // No network: only the loopback interface; memory limit visible in the cgroup.
    let out = tb
        .builder
        .block_on(engine.run(&spec(
            "ls /sys/class/net; echo out; echo err >&2; exit 3",
            60,
        )))
        .unwrap();
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(
        out.stdout.split_whitespace().collect::<Vec<_>>(),
        ["lo", "out"]
    );
    assert_eq!(out.stderr.trim(), "err");
    // Files under /tmp arrive before the command starts, however large (here 300 KiB, more than
    // a variable or an argument may hold); a path outside /tmp is refused before any container.
    let big = "x".repeat(300 * 1024);
    let mut with_files = spec(
        "wc -c < /tmp/etip-t/a/big.txt; stat -c %a /tmp/etip-t/a/big.txt",
        60,
    );
    with_files.files.push(TmpFile {
        path: "/tmp/etip-t/a/big.txt".into(),
        data: big.into_bytes(),
        mode: 0o640,
    });
    let out = tb.builder.block_on(engine.run(&with_files)).unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout.split_whitespace().collect::<Vec<_>>(),
        ["307200", "640"]
    );
    with_files.files[0].path = "/etc/etip.txt".into();
    let err = tb.builder.block_on(engine.run(&with_files)).unwrap_err();
    assert!(err.to_string().contains("under /tmp/"), "{err}");
    // Timeout: killed, reported, removed.
    let out = tb
        .builder
        .block_on(engine.run(&spec("sleep 30", 2)))
        .unwrap();
    assert!(out.timed_out);
    assert_eq!(out.exit_code, None);
    assert!(out.duration < Duration::from_secs(20));
    let left = tb
        .builder
        .block_on(engine.list_containers(&labels))
        .unwrap();
    assert!(left.is_empty(), "containers left behind: {left:?}");
}

#[test]
fn clean_leaves_no_labelled_image_or_container() {
    let tb = builder("clean");
    let (_tmp, repo, c) = fixture_repo("python");
    let s = tb.builder.build_one(
        &etip("py-clean", Language::Python, &repo, &c[0], &c[1]),
        &no_events,
    );
    assert_built(&s);
    let engine = tb.builder.engine();
    // A stopped container of the instance image, as a crashed run would leave.
    tb.builder
        .block_on(engine.create_container(
            s.image.as_ref().unwrap(),
            None,
            [(LABEL_NAMESPACE.to_string(), tb.ns.clone())].into(),
        ))
        .unwrap();
    let labels = [format!("{LABEL_NAMESPACE}={}", tb.ns)];
    assert_eq!(
        tb.builder
            .block_on(engine.list_images(&labels))
            .unwrap()
            .len(),
        2
    );
    let report = tb.builder.clean(Some(&tb.ns), false).unwrap();
    assert_eq!(report.containers.len(), 1);
    assert_eq!(report.images.len(), 2);
    assert!(
        tb.builder
            .block_on(engine.list_images(&labels))
            .unwrap()
            .is_empty()
    );
    assert!(
        tb.builder
            .block_on(engine.list_containers(&labels))
            .unwrap()
            .is_empty()
    );
    // The shared base image is kept.
    let base = s.layers.iter().find(|l| l.kind == LayerKind::Base).unwrap();
    assert!(
        tb.builder
            .block_on(engine.image(&base.tag))
            .unwrap()
            .is_some()
    );
}

#[test]
fn build_image_from_a_tar_context_tag_and_remove() {
    let tb = builder("dockerfile");
    let base = tb
        .builder
        .bootstrap_base(false, &mut |_| {})
        .expect("bootstrap");
    let engine = tb.builder.engine();
    let dockerfile = format!(
        "FROM {}\nCOPY hello.txt /hello.txt\nRUN test -f /hello.txt\n",
        base.tag
    );
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in [
        ("Dockerfile", dockerfile.as_bytes()),
        ("hello.txt", b"hi\n".as_slice()),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name, data).unwrap();
    }
    let tag = format!("{}/plain:1", tb.ns);
    let spec = etip_docker::BuildSpec {
        tag: tag.clone(),
        dockerfile: "Dockerfile".into(),
        labels: [
            (LABEL_MANAGED.to_string(), "true".to_string()),
            (LABEL_NAMESPACE.to_string(), tb.ns.clone()),
            ("etip.kind".to_string(), "env".to_string()),
        ]
        .into(),
        network: "none".into(),
        timeout: Duration::from_secs(300),
    };
    let mut lines = Vec::new();
    let id = tb
        .builder
        .block_on(
            engine.build_image(&spec, b.into_inner().unwrap(), &mut |l: &str| {
                lines.push(l.to_string())
            }),
        )
        .unwrap_or_else(|e| panic!("build failed: {e}\n{}", lines.join("\n")));
    let info = tb.builder.block_on(engine.image(&tag)).unwrap().unwrap();
    assert_eq!(info.id, id);
    assert_eq!(info.labels.get(LABEL_NAMESPACE), Some(&tb.ns));
    let second = format!("{}/plain", tb.ns);
    tb.builder.block_on(engine.tag(&tag, &second, "2")).unwrap();
    assert!(
        tb.builder
            .block_on(engine.image(&format!("{second}:2")))
            .unwrap()
            .is_some()
    );
    tb.builder.block_on(engine.remove_image(&tag)).unwrap();
    tb.builder
        .block_on(engine.remove_image(&format!("{second}:2")))
        .unwrap();
    assert!(tb.builder.block_on(engine.image(&tag)).unwrap().is_none());
    // A failing RUN step reports its exit code.
    let mut b = tar::Builder::new(Vec::new());
    let df = format!("FROM {}\nRUN exit 7\n", base.tag);
    let mut h = tar::Header::new_gnu();
    h.set_size(df.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    b.append_data(&mut h, "Dockerfile", df.as_bytes()).unwrap();
    let err = tb
        .builder
        .block_on(engine.build_image(&spec, b.into_inner().unwrap(), &mut |_| {}))
        .unwrap_err();
    assert!(
        matches!(
            err,
            etip_docker::EngineError::Build {
                exit_code: Some(7),
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn layer_build_over_its_time_limit_is_a_timeout() {
    let ns = format!("etiptest-timeout-{}", std::process::id());
    let out = tempfile::tempdir().unwrap();
    let cfg = etip_build::config::BuildConfig {
        namespace: ns.clone(),
        timeout_secs: 1,
        java: etip_build::config::JavaConfig {
            env_setup: vec!["sleep 30".into()],
            ..Default::default()
        },
        ..Default::default()
    };
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let b = etip_build::Builder::new(cfg, out.path().to_path_buf(), rt.handle().clone())
        .unwrap_or_else(|e| panic!("these tests need the real Docker engine: {e}"));
    let (_tmp, repo, c) = fixture_repo("maven");
    let s = b.build_one(
        &etip("slow-env", Language::Java, &repo, &c[0], &c[1]),
        &no_events,
    );
    let _ = b.clean(Some(&ns), false);
    assert_eq!(
        s.failure,
        Some(FailureKind::Timeout),
        "{:?} {:?}",
        s.reason,
        s.detail
    );
    assert_eq!(s.reason.as_deref(), Some("timeout"));
    let labels = [format!("{LABEL_NAMESPACE}={ns}")];
    assert!(
        b.block_on(b.engine().list_containers(&labels))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn unresolvable_dependency_is_dependency_resolution() {
    let tb = builder("deps");
    let (_tmp, repo, _c) = fixture_repo("maven");
    let pom = std::fs::read_to_string(repo.join("pom.xml")).unwrap();
    let pom = pom.replace(
        "  <dependencies>\n",
        "  <dependencies>\n    <dependency>\n      <groupId>org.example.absent</groupId>\n      <artifactId>absent</artifactId>\n      <version>9.9</version>\n    </dependency>\n",
    );
    std::fs::write(repo.join("pom.xml"), pom).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .status()
            .unwrap()
            .success();
        assert!(ok);
    };
    git(&["commit", "-q", "-am", "depend on an artifact nobody has"]);
    let s = tb.builder.build_one(
        &etip("mvn-absent-dep", Language::Java, &repo, "HEAD", "HEAD"),
        &no_events,
    );
    assert_eq!(
        s.failure,
        Some(FailureKind::DependencyResolution),
        "{:?}",
        s.detail
    );
    assert_eq!(
        s.reason.as_deref(),
        Some("dependency resolution failed (original)")
    );
    assert!(s.detail.as_deref().unwrap().contains("org.example.absent"));
}

/// The layer of a build container holds exactly what its command added, changed and deleted
/// (whiteouts), with modes, owners, symlinks and hard links; the image has the labels, working
/// directory and command; a second layer on it (parent file list from the cache) sees the first
/// one's files and can delete them; a failing command reports its exit code; `clean` removes both.
#[test]
fn layer_from_changed_files_is_exact() {
    let tb = builder("layer");
    let base = tb
        .builder
        .bootstrap_base(false, &mut |_| {})
        .expect("bootstrap");
    let engine = tb.builder.engine();
    let cache = etip_docker::TreeCache::new(tb.out.path().join("trees"));
    let labels = |kind: &str| -> std::collections::HashMap<String, String> {
        [
            (LABEL_MANAGED.to_string(), "true".to_string()),
            (LABEL_NAMESPACE.to_string(), tb.ns.clone()),
            ("etip.kind".to_string(), kind.to_string()),
        ]
        .into()
    };
    let limits = Limits {
        cpus: 1.0,
        memory_bytes: 512 << 20,
        timeout: Duration::from_secs(120),
        pids: 256,
    };
    // The context: a kept file and one the command deletes.
    let mut b = tar::Builder::new(Vec::new());
    for (name, data, mode) in [
        ("opt/t/ctx-kept", b"kept\n".as_slice(), 0o640),
        ("opt/t/ctx-deleted", b"gone\n".as_slice(), 0o644),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(mode);
        h.set_mtime(0);
        h.set_cksum();
        b.append_data(&mut h, name, data).unwrap();
    }
    let script = "set -e
        printf 'new\\n' > /opt/t/new.txt
        printf '#!/bin/sh\\necho hello\\n' > /usr/local/bin/etip-hello
        chmod 755 /usr/local/bin/etip-hello
        ln -s new.txt /opt/t/link
        ln /opt/t/new.txt /opt/t/hard
        mkdir -m 700 /opt/t/empty && chown 65534:65534 /opt/t/empty
        printf 'odd\\n' > '/opt/t/a b'
        echo appended >> /etc/debian_version
        chmod 600 /etc/issue.net
        rm /etc/motd /opt/t/ctx-deleted
        rm -r /etc/skel
        rm -r /etc/update-motd.d && echo file > /etc/update-motd.d
        rm /etc/issue && mkdir /etc/issue && echo inside > /etc/issue/x
        mv /etc/host.conf /etc/host.conf.moved
        ls /etc/ld.so.conf.d > /opt/t/ld-list
        mv /etc/ld.so.conf.d /etc/ld.so.conf.moved
        echo scratch > /tmp/scratch";
    let spec = |tag: &str, parent: &str, script: &str| etip_docker::LayerSpec {
        parent: parent.to_string(),
        tag: tag.to_string(),
        cmd: vec!["sh".into(), "-c".into(), script.to_string()],
        labels: labels("env"),
        workdir: "/opt/t".into(),
        limits,
        network_enabled: false,
        tree_cache: Some(cache.clone()),
        cache_tree: true,
        capture: Vec::new(),
    };
    let tag1 = format!("{}/layer:one", tb.ns);
    let mut log = String::new();
    let id1 = tb
        .builder
        .block_on(engine.build_layer(
            &spec(&tag1, &base.tag, script),
            b.into_inner().unwrap(),
            &mut |l: &str| log.push_str(l),
        ))
        .unwrap_or_else(|e| panic!("layer build failed: {e}\n{log}"));
    let check = "cd /opt/t; pwd
        for p in /opt/t/ctx-kept /opt/t/new.txt /opt/t/hard /opt/t/link /opt/t/empty '/opt/t/a b' \
                 /usr/local/bin/etip-hello /etc/issue.net /etc/update-motd.d /etc/issue /etc/issue/x; do
          stat -c '%n %a %u:%g %F %h' \"$p\"
        done
        readlink /opt/t/link; cat /opt/t/link /opt/t/ctx-kept /etc/issue/x /etc/update-motd.d
        tail -1 /etc/debian_version; etip-hello
        ls /etc/ld.so.conf.moved | cmp - /opt/t/ld-list && test -s /etc/host.conf.moved && echo moved
        for p in /etc/motd /etc/skel /opt/t/ctx-deleted /tmp/scratch /.etip-layer /etc/host.conf \
                 /etc/ld.so.conf.d; do
          test -e \"$p\" && echo \"$p still exists\"
        done; echo end";
    let out = run(&tb, &tag1, &[], check);
    assert_eq!(out.exit_code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout,
        "/opt/t\n\
         /opt/t/ctx-kept 640 0:0 regular file 1\n\
         /opt/t/new.txt 644 0:0 regular file 2\n\
         /opt/t/hard 644 0:0 regular file 2\n\
         /opt/t/link 777 0:0 symbolic link 1\n\
         /opt/t/empty 700 65534:65534 directory 2\n\
         /opt/t/a b 644 0:0 regular file 1\n\
         /usr/local/bin/etip-hello 755 0:0 regular file 1\n\
         /etc/issue.net 600 0:0 regular file 1\n\
         /etc/update-motd.d 644 0:0 regular file 1\n\
         /etc/issue 755 0:0 directory 2\n\
         /etc/issue/x 644 0:0 regular file 1\n\
         new.txt\nnew\nkept\ninside\nfile\nappended\nhello\nmoved\nend\n",
        "{}",
        out.stderr
    );
    // The image: labels, working directory, command, one layer more than its parent.
    let img = tb
        .builder
        .block_on(engine.client().inspect_image(&tag1))
        .unwrap();
    assert_eq!(img.id.as_deref(), Some(id1.as_str()));
    let cfg = img.config.unwrap();
    let l = cfg.labels.unwrap();
    assert_eq!(l.get(LABEL_NAMESPACE), Some(&tb.ns));
    assert_eq!(l.get(LABEL_MANAGED).map(String::as_str), Some("true"));
    assert_eq!(l.get("etip.kind").map(String::as_str), Some("env"));
    assert_eq!(cfg.working_dir.as_deref(), Some("/opt/t"));
    assert_eq!(cfg.cmd, Some(vec!["/bin/bash".to_string()]));
    assert!(
        cfg.env
            .unwrap()
            .iter()
            .any(|e| e.starts_with("PATH=/usr/local/sbin"))
    );
    let parent_layers = tb
        .builder
        .block_on(engine.client().inspect_image(&base.tag))
        .unwrap()
        .root_fs
        .unwrap()
        .layers
        .unwrap();
    let layers = img.root_fs.unwrap().layers.unwrap();
    assert_eq!(layers.len(), parent_layers.len() + 1);
    assert_eq!(layers[..parent_layers.len()], parent_layers[..]);

    // A second layer on it lists its parent's files from the cache, and deletes the first's.
    let tag2 = format!("{}/layer:two", tb.ns);
    let id2 = tb
        .builder
        .block_on(engine.build_layer(
            &spec(
                &tag2,
                &tag1,
                "rm /opt/t/new.txt /opt/t/link && rm -r /opt/t/empty",
            ),
            tar::Builder::new(Vec::new()).into_inner().unwrap(),
            &mut |_| {},
        ))
        .unwrap();
    assert!(
        std::fs::read_dir(tb.out.path().join("trees"))
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().contains(&id1[7..])),
        "the first layer's file list is cached"
    );
    let out = run(
        &tb,
        &id2,
        &[],
        "ls -A /opt/t; cat /opt/t/hard; test -e /etc/motd || echo no motd",
    );
    assert_eq!(
        out.stdout, "a b\nctx-kept\nhard\nld-list\nnew\nno motd\n",
        "{}",
        out.stderr
    );

    // A layer with capture roots keeps what changed under them (new, changed, deleted, a root
    // created by the command) and nothing else, and does not touch the tree cache.
    let tag4 = format!("{}/layer:roots", tb.ns);
    let cached_before = std::fs::read_dir(tb.out.path().join("trees"))
        .unwrap()
        .count();
    let mut rooted = spec(
        &tag4,
        &tag1,
        "set -e
         printf 'in\\n' > /opt/t/in.txt
         echo changed >> /opt/t/ctx-kept
         rm /opt/t/hard '/opt/t/a b'
         mkdir -p /srv/etip-new/sub && echo deep > /srv/etip-new/sub/f
         echo outside > /usr/local/bin/etip-outside
         echo appended-again >> /etc/debian_version
         rm /etc/issue.net",
    );
    rooted.capture = vec!["/opt/t".into(), "/srv/etip-new".into(), "/absent".into()];
    rooted.cache_tree = true;
    let mut log4 = String::new();
    tb.builder
        .block_on(engine.build_layer(
            &rooted,
            tar::Builder::new(Vec::new()).into_inner().unwrap(),
            &mut |l: &str| log4.push_str(l),
        ))
        .unwrap_or_else(|e| panic!("layer build with roots failed: {e}\n{log4}"));
    assert_eq!(
        std::fs::read_dir(tb.out.path().join("trees"))
            .unwrap()
            .count(),
        cached_before,
        "a layer with capture roots leaves the tree cache alone"
    );
    let out = run(
        &tb,
        &tag4,
        &[],
        "cat /opt/t/in.txt /opt/t/ctx-kept /srv/etip-new/sub/f; ls -A /opt/t
         test -e /usr/local/bin/etip-outside || echo no outside
         tail -1 /etc/debian_version; test -e /etc/issue.net && echo issue.net kept",
    );
    assert_eq!(
        out.stdout,
        "in\nkept\nchanged\ndeep\nctx-kept\nempty\nin.txt\nld-list\nlink\nnew.txt\n\
         no outside\nappended\nissue.net kept\n",
        "{}",
        out.stderr
    );

    // A failing command: its exit code, no image, no container left.
    let tag3 = format!("{}/layer:three", tb.ns);
    let err = tb
        .builder
        .block_on(engine.build_layer(
            &spec(&tag3, &tag1, "echo failing; exit 7"),
            tar::Builder::new(Vec::new()).into_inner().unwrap(),
            &mut |_| {},
        ))
        .unwrap_err();
    assert!(
        matches!(
            &err,
            etip_docker::EngineError::Build {
                exit_code: Some(7),
                log,
                ..
            } if log.contains("failing")
        ),
        "{err}"
    );
    assert!(tb.builder.block_on(engine.image(&tag3)).unwrap().is_none());
    let ns_labels = [format!("{LABEL_NAMESPACE}={}", tb.ns)];
    assert!(
        tb.builder
            .block_on(engine.list_containers(&ns_labels))
            .unwrap()
            .is_empty()
    );

    // clean removes the three images.
    let report = tb.builder.clean(Some(&tb.ns), false).unwrap();
    assert_eq!(report.images.len(), 3, "{report:?}");
    assert!(
        tb.builder
            .block_on(engine.list_images(&ns_labels))
            .unwrap()
            .is_empty()
    );
    assert!(tb.builder.block_on(engine.image(&tag1)).unwrap().is_none());
}

/// When the changes cannot be collected (here the command removes `find`, which the wrapper needs
/// afterwards) the build fails as an engine-side layer error with the wrapper's message, leaves no
/// image and removes the container.
#[test]
fn layer_collection_failure_is_reported() {
    let tb = builder("layerfail");
    let base = tb
        .builder
        .bootstrap_base(false, &mut |_| {})
        .expect("bootstrap");
    let engine = tb.builder.engine();
    let tag = format!("{}/layer:broken", tb.ns);
    let spec = etip_docker::LayerSpec {
        parent: base.tag.clone(),
        tag: tag.clone(),
        cmd: vec!["rm".into(), "/usr/bin/find".into()],
        labels: [
            (LABEL_MANAGED.to_string(), "true".to_string()),
            (LABEL_NAMESPACE.to_string(), tb.ns.clone()),
        ]
        .into(),
        workdir: "/".into(),
        limits: Limits {
            cpus: 1.0,
            memory_bytes: 512 << 20,
            timeout: Duration::from_secs(120),
            pids: 256,
        },
        network_enabled: false,
        tree_cache: None,
        cache_tree: false,
        capture: Vec::new(),
    };
    let err = tb
        .builder
        .block_on(engine.build_layer(
            &spec,
            tar::Builder::new(Vec::new()).into_inner().unwrap(),
            &mut |_| {},
        ))
        .unwrap_err();
    match &err {
        etip_docker::EngineError::Layer { log, .. } => {
            assert!(log.contains("listing the changed files"), "{log}")
        }
        other => panic!("expected a layer error, got {other}"),
    }
    assert!(tb.builder.block_on(engine.image(&tag)).unwrap().is_none());
    let labels = [format!("{LABEL_NAMESPACE}={}", tb.ns)];
    assert!(
        tb.builder
            .block_on(engine.list_containers(&labels))
            .unwrap()
            .is_empty()
    );
}
