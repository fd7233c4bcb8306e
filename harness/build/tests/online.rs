//! The env layer online, against real local servers (real Docker engine, no internet): each test
//! makes a private internal Docker network, starts a container of the base image on it that
//! serves `tests/fixtures/online/server/` with Python's `http.server` (a PEP 503 index of wheels
//! built in the container, a Maven repository of the test's parent POM merged with Debian's
//! `/usr/share/maven-repo`, forward-proxy answers for the names it is given and, when asked, the
//! image's Maven as the distribution a Maven wrapper downloads; with a test CA's certificate, HTTPS
//! under a public repository's name), and builds the
//! `tests/fixtures/online/` repositories with `env_network` set to that network. The instance
//! layer and test runs stay offline; credentials reach the downloads and nothing else.
//! Network, server and images (namespace `etiptest-<name>-<pid>`) are removed at the end, also on
//! failure.

mod common;

use common::{TestBuilder, commit_at, etip, fixture_repo};
use etip_build::config::{BuildConfig, EnvNetwork, NetworkConfig};
use etip_build::network::HostNetwork;
use etip_build::{Builder, Event};
use etip_core::instance::{BuildOutcome, FailureKind, InstanceStatus, Language};
use etip_docker::{Engine, ExecSpec, LABEL_NAMESPACE, Limits, RunSpec, ServiceSpec, SessionSpec};
use etip_testkit::git;
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn no_events(_: &Event) {}

fn online_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/online")
}

/// The private network and the server container on it; both removed on drop.
struct Server {
    engine: Engine,
    rt: tokio::runtime::Handle,
    network: String,
    /// The server's host name on `network` (it listens on port 8000).
    host: String,
    id: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(id) = &self.id {
            let _ = self.rt.block_on(self.engine.remove_container(id));
        }
        let _ = self.rt.block_on(self.engine.remove_network(&self.network));
    }
}

impl Server {
    /// The server's output so far: its start-up line and access log.
    fn log(&self) -> String {
        let id = self.id.as_deref().unwrap_or_default();
        self.rt
            .block_on(self.engine.container_output(id))
            .unwrap_or_else(|e| format!("(no log: {e})"))
    }
}

/// A builder in namespace `etiptest-<name>-<pid>` whose env layer is on a new internal network
/// with the test server, configured by `configure` (given the server's host name; every
/// `[network]` key starts empty). `server_args` go to `prepare.py`: `host:port` names the server
/// also answers as a proxy for, `--maven-distribution=VERSION` to serve a Maven distribution.
fn online(
    name: &str,
    server_args: &[&str],
    configure: impl FnOnce(&mut BuildConfig, &str),
) -> (TestBuilder, Server) {
    online_as(name, server_args, None, configure)
}

/// [`online`], with the server also answering HTTPS on port 443 under `tls`'s host names (network
/// aliases), with `tls`'s certificate.
fn online_as(
    name: &str,
    server_args: &[&str],
    tls: Option<&TestPki>,
    configure: impl FnOnce(&mut BuildConfig, &str),
) -> (TestBuilder, Server) {
    let pid = std::process::id();
    let ns = format!("etiptest-{name}-{pid}");
    let network = format!("etiptest-net-{name}-{pid}");
    let host = format!("etiptest-srv-{name}-{pid}");
    let mut cfg = BuildConfig {
        namespace: ns.clone(),
        env_network: EnvNetwork::Named(network.clone()),
        network: NetworkConfig {
            pip_index_url: String::new(),
            pip_extra_index_urls: Vec::new(),
            pip_trusted_hosts: Vec::new(),
            maven_mirror_url: String::new(),
            http_proxy: String::new(),
            https_proxy: String::new(),
            no_proxy: String::new(),
            ca_bundle: String::new(),
        },
        ..BuildConfig::default()
    };
    configure(&mut cfg, &host);
    cfg.validate().expect("a valid test configuration");
    let out = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // "auto" finds nothing, whatever this machine's pip and Maven settings say.
    let builder = Builder::new(cfg, out.path().to_path_buf(), rt.handle().clone())
        .unwrap_or_else(|e| {
            panic!("these tests need the real Docker engine, and it is not usable: {e}")
        })
        .with_host_network(HostNetwork::default());
    let base = builder
        .bootstrap_base(false, &mut |_| {})
        .expect("the base image (bootstrapped once per machine)");
    let tb = TestBuilder {
        builder,
        rt,
        ns,
        out,
    };
    let server = start_server(&tb, &base.tag, &network, &host, server_args, tls);
    (tb, server)
}

/// A certificate authority and a server certificate it signed for `names`, made with the host's
/// `openssl` in a temporary folder (valid for two days; the keys die with the folder).
struct TestPki {
    _dir: tempfile::TempDir,
    names: Vec<String>,
    /// The CA's certificate (PEM): what `network.ca_bundle` names.
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

fn test_pki(names: &[&str]) -> TestPki {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let openssl = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(d)
            .output()
            .expect("openssl on the host (the test's certificate authority)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-subj",
        "/CN=etip test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "key.pem",
        "-out",
        "req.csr",
        "-subj",
        &format!("/CN={}", names[0]),
    ]);
    let sans: Vec<String> = names.iter().map(|n| format!("DNS:{n}")).collect();
    std::fs::write(
        d.join("ext.cnf"),
        format!(
            "subjectAltName={}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
            sans.join(",")
        ),
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "req.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        "cert.pem",
        "-extfile",
        "ext.cnf",
    ]);
    TestPki {
        names: names.iter().map(|n| n.to_string()).collect(),
        ca: d.join("ca.pem"),
        cert: d.join("cert.pem"),
        key: d.join("key.pem"),
        _dir: dir,
    }
}

/// Creates the internal network and starts the server on it (see the module documentation).
fn start_server(
    tb: &TestBuilder,
    image: &str,
    network: &str,
    host: &str,
    server_args: &[&str],
    tls: Option<&TestPki>,
) -> Server {
    let engine = tb.builder.engine().clone();
    let handle = tb.rt.handle().clone();
    let labels = HashMap::from([(LABEL_NAMESPACE.to_string(), tb.ns.clone())]);
    handle
        .block_on(engine.create_network(network, true, labels.clone()))
        .expect("creating the test network");
    let mut server = Server {
        engine: engine.clone(),
        rt: handle.clone(),
        network: network.to_string(),
        host: host.to_string(),
        id: None,
    };
    let mut files = tar::Builder::new(Vec::new());
    files
        .append_dir_all("srv/etip", online_fixtures().join("server"))
        .unwrap();
    let uv = uv_wheel();
    let name = uv.file_name().unwrap().to_string_lossy().into_owned();
    files
        .append_path_with_name(&uv, format!("srv/etip/extra-wheels/{name}"))
        .unwrap();
    if let Some(t) = tls {
        files
            .append_path_with_name(&t.cert, "srv/etip/tls/cert.pem")
            .unwrap();
        files
            .append_path_with_name(&t.key, "srv/etip/tls/key.pem")
            .unwrap();
    }
    let spec = ServiceSpec {
        image: image.to_string(),
        name: host.to_string(),
        network: network.to_string(),
        aliases: tls.map(|t| t.names.clone()).unwrap_or_default(),
        cmd: vec![
            "sh".into(),
            "-c".into(),
            format!(
                "python3 /srv/etip/prepare.py {} && exec python3 -u /srv/etip/serve.py",
                server_args.join(" ")
            ),
        ],
        files: files.into_inner().unwrap(),
        labels,
        limits: Limits::default(),
        ready_when: "Serving HTTP on".into(),
        ready_timeout: Duration::from_secs(60),
    };
    server.id = Some(
        handle
            .block_on(engine.start_service(&spec))
            .expect("starting the test server"),
    );
    server
}

/// A wheel of uv, which the env layer installs dependencies as of a date with: the test index
/// serves it. `scripts/test.sh` downloads it from PyPI into `$ETIP_TEST_WHEELS` (default
/// `target/test-wheels`).
fn uv_wheel() -> PathBuf {
    let dir = std::env::var_os("ETIP_TEST_WHEELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-wheels"));
    let found = std::fs::read_dir(&dir).ok().and_then(|rd| {
        rd.flatten().map(|e| e.path()).find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("uv-") && n.ends_with(".whl"))
        })
    });
    found.unwrap_or_else(|| {
        panic!(
            "the online tests serve a wheel of uv and {} has none: run scripts/test.sh (it \
             downloads one from PyPI), or `python3 -m pip download --no-deps uv -d {0}`",
            dir.display()
        )
    })
}

fn build_log(tb: &TestBuilder, id: &str) -> String {
    let dir = etip_build::output::log_dir(tb.out.path(), id);
    std::fs::read_to_string(dir.join("build.log")).unwrap_or_default()
}

fn assert_built(tb: &TestBuilder, s: &InstanceStatus) {
    assert_eq!(
        s.outcome,
        BuildOutcome::Built,
        "{}: {:?} {:?}\n{}",
        s.id,
        s.reason,
        s.detail,
        build_log(tb, &s.id)
    );
}

/// Runs `cmd` in `image` (network none, as every run) and returns its stdout.
fn run(tb: &TestBuilder, image: &str, workdir: &str, cmd: &[&str]) -> String {
    let spec = RunSpec::new(image, cmd.iter().copied())
        .workdir(workdir)
        .label(LABEL_NAMESPACE, tb.ns.clone());
    let out = tb.builder.block_on(tb.builder.engine().run(&spec)).unwrap();
    assert_eq!(
        out.exit_code,
        Some(0),
        "{cmd:?}: {}{}",
        out.stdout,
        out.stderr
    );
    out.stdout
}

/// The network interfaces a test-run session of `image` sees.
fn session_interfaces(tb: &TestBuilder, image: &str) -> String {
    let engine = tb.builder.engine();
    let spec = SessionSpec::new(image).label(LABEL_NAMESPACE, tb.ns.clone());
    let session = tb.builder.block_on(engine.start_session(&spec)).unwrap();
    let out = tb
        .builder
        .block_on(engine.exec(&session, &ExecSpec::new(["ls", "/sys/class/net"])));
    let _ = tb.builder.block_on(engine.stop_session(&session));
    let out = out.unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
    out.stdout.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// (i) and (iii), Python: a dependency only the test's index has is installed by the env layer,
/// both versions import it, the instance layer and test runs have no network; a dependency the
/// index lacks fails the build with `dependency_resolution`.
#[test]
fn python_dependencies_come_from_the_configured_index() {
    let t0 = Instant::now();
    let (tb, server) = online("pyindex", &[], |cfg, host| {
        cfg.network.pip_index_url = format!("http://{host}:8000/simple/");
    });
    let (_g1, repo, c) = fixture_repo("online/python-deps");
    let (_g2, missing, m) = fixture_repo("online/python-missing");
    let statuses = tb.builder.build_all(
        &[
            etip("pyindex-ok", Language::Python, &repo, &c[0], &c[1]),
            etip("pyindex-missing", Language::Python, &missing, &m[0], &m[1]),
        ],
        1,
        &no_events,
    );
    let ok = &statuses[0];
    assert_built(&tb, ok);
    let access = server.log();
    for get in [
        "\"GET /simple/etipdemo-dep/ HTTP",
        "\"GET /packages/etipdemo_dep-1.0-py3-none-any.whl HTTP",
    ] {
        assert!(access.contains(get), "{get} in the server's log:\n{access}");
    }
    let image = ok.image.as_deref().unwrap();
    for v in ["original", "patched"] {
        let python = format!("/opt/etip/venvs/{v}/bin/python");
        let out = run(
            &tb,
            image,
            &format!("/work/{v}"),
            &[
                &python,
                "-c",
                "import demoapp; print(demoapp.greet('etip'))",
            ],
        );
        assert_eq!(out.trim(), "hello etip from etipdemo-dep 1.0", "{v}");
    }
    // The instance layer built without network (setup.py recorded the interfaces it saw), and
    // so do test runs.
    let probe = run(&tb, image, "/work", &["cat", "original/etip-net-probe.txt"]);
    assert_eq!(probe.trim(), "lo", "the instance layer's interfaces");
    assert_eq!(session_interfaces(&tb, image), "lo");
    let bad = &statuses[1];
    assert_eq!(bad.outcome, BuildOutcome::Failed, "{bad:?}");
    assert_eq!(
        bad.failure,
        Some(FailureKind::DependencyResolution),
        "{bad:?}"
    );
    let detail = bad.detail.clone().unwrap_or_default();
    assert!(detail.contains("etipdemo-absent"), "{detail}");
    assert!(
        access.contains("\"GET /simple/etipdemo-absent/ HTTP/1.1\" 404"),
        "{access}"
    );
    eprintln!(
        "python_dependencies_come_from_the_configured_index: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}

/// (ii) and (iii), Maven: a parent POM only the test's repository has is downloaded by the env
/// layer through `maven_mirror_url` (Maven online there), the instance layer builds with `-o`;
/// a dependency the repository lacks fails the build with `dependency_resolution`.
#[test]
fn maven_parent_comes_from_the_mirror_and_the_instance_builds_offline() {
    let t0 = Instant::now();
    let (tb, server) = online("mvnmirror", &[], |cfg, host| {
        cfg.network.maven_mirror_url = format!("http://{host}:8000/maven2/");
    });
    let (_g1, repo, c) = fixture_repo("online/maven-parent");
    let (_g2, missing, m) = fixture_repo("online/maven-missing");
    let statuses = tb.builder.build_all(
        &[
            etip("mvn-ok", Language::Java, &repo, &c[0], &c[1]),
            etip("mvn-missing", Language::Java, &missing, &m[0], &m[1]),
        ],
        1,
        &no_events,
    );
    let ok = &statuses[0];
    assert_built(&tb, ok);
    let log = build_log(&tb, "mvn-ok");
    assert!(
        log.contains(
            "etip: Maven runs online in the env layer, every repository mirrored by http://"
        ),
        "{log}"
    );
    let access = server.log();
    assert!(
        access.contains(
            "\"GET /maven2/org/etipdemo/etipdemo-parent/1.0/etipdemo-parent-1.0.pom HTTP"
        ),
        "{access}"
    );
    // The instance layer runs Maven offline, and finds the parent in the local repository.
    let script = std::fs::read_to_string(
        etip_build::output::log_dir(tb.out.path(), "mvn-ok").join("build.sh"),
    )
    .unwrap();
    assert!(script.contains(" -o "), "{script}");
    assert!(
        log.matches("BUILD SUCCESS").count() >= 3,
        "env + both versions:\n{log}"
    );
    let image = ok.image.as_deref().unwrap();
    let remote = run(
        &tb,
        image,
        "/",
        &[
            "cat",
            "/opt/etip/m2/org/etipdemo/etipdemo-parent/1.0/_remote.repositories",
        ],
    );
    assert!(
        remote.contains("etipdemo-parent-1.0.pom>central="),
        "{remote}"
    );
    assert_eq!(session_interfaces(&tb, image), "lo");
    let bad = &statuses[1];
    assert_eq!(
        bad.failure,
        Some(FailureKind::DependencyResolution),
        "{bad:?}"
    );
    let detail = bad.detail.clone().unwrap_or_default();
    assert!(detail.contains("etipdemo-absent"), "{detail}");
    eprintln!(
        "maven_parent_comes_from_the_mirror_and_the_instance_builds_offline: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}

/// Maven Central's host name, which the test server answers for on its private network.
const CENTRAL_HOST: &str = "repo.maven.apache.org";

/// `maven_mirror_url = "auto"` on a host with no Maven mirror: the host's Maven would use Maven
/// Central, so the env layer asks Central (here the test server, which answers HTTPS for
/// `repo.maven.apache.org` on the private network with a certificate of the test's CA) and, as
/// it answers, resolves the parent POM from it; the instance layer builds offline. Without the
/// CA bundle Central's answer cannot be trusted: Maven stays offline, and the instance that needs
/// a download fails as `dependency_resolution` with the hint to configure a mirror.
#[test]
fn maven_central_stands_in_for_a_missing_mirror_when_it_answers() {
    let t0 = Instant::now();
    let pki = test_pki(&[CENTRAL_HOST]);
    // As large as a system bundle (about 200 KiB), beyond the 128 KiB a single variable or
    // argument of a process may hold: the probe must get it as a file.
    let pem = std::fs::read_to_string(&pki.ca).unwrap();
    let bundle = pki.ca.with_file_name("bundle.pem");
    std::fs::write(&bundle, pem.repeat(200 * 1024 / pem.len() + 1)).unwrap();
    let ca = bundle.to_string_lossy().into_owned();
    let (tb, server) = online_as("central", &[], Some(&pki), |cfg, _| {
        cfg.network.maven_mirror_url = "auto".into();
        cfg.network.ca_bundle = ca;
    });
    let (_g1, repo, c) = fixture_repo("online/maven-parent");
    let statuses = tb.builder.build_all(
        &[etip("central-ok", Language::Java, &repo, &c[0], &c[1])],
        1,
        &no_events,
    );
    assert_built(&tb, &statuses[0]);
    let log = build_log(&tb, "central-ok");
    for line in [
        "etip: network.maven_mirror_url = none on this host (auto)",
        "etip: Maven Central (https://repo.maven.apache.org/maven2/) answers from the env layer's network (HTTP 200)",
        "etip: Maven runs online in the env layer, against Maven Central",
    ] {
        assert!(log.contains(line), "{line} in:\n{log}");
    }
    let access = server.log();
    for line in [
        "\"HEAD /maven2/ HTTP",
        "\"GET /maven2/org/etipdemo/etipdemo-parent/1.0/etipdemo-parent-1.0.pom HTTP",
    ] {
        assert!(
            access
                .lines()
                .any(|l| l.starts_with("https ") && l.contains(line)),
            "{line} over HTTPS in:\n{access}"
        );
    }
    let image = statuses[0].image.as_deref().unwrap();
    let remote = run(
        &tb,
        image,
        "/",
        &[
            "cat",
            "/opt/etip/m2/org/etipdemo/etipdemo-parent/1.0/_remote.repositories",
        ],
    );
    assert!(
        remote.contains("etipdemo-parent-1.0.pom>central="),
        "{remote}"
    );
    assert_eq!(session_interfaces(&tb, image), "lo");

    // The same server, without the CA bundle: the probe's TLS handshake fails.
    let mut cfg = tb.builder.config().clone();
    cfg.network.ca_bundle = String::new();
    let untrusting = Builder::new(cfg, tb.out.path().to_path_buf(), tb.rt.handle().clone())
        .unwrap()
        .with_host_network(HostNetwork::default());
    let (_g2, missing, m) = fixture_repo("online/maven-missing");
    let statuses = untrusting.build_all(
        &[etip(
            "central-silent",
            Language::Java,
            &missing,
            &m[0],
            &m[1],
        )],
        1,
        &no_events,
    );
    let bad = &statuses[0];
    assert_eq!(
        bad.failure,
        Some(FailureKind::DependencyResolution),
        "{bad:?}"
    );
    let log = build_log(&tb, "central-silent");
    assert!(
        log.contains("etip: Maven Central (https://repo.maven.apache.org/maven2/) does not answer from the env layer's network (")
            && log.contains("CERTIFICATE_VERIFY_FAILED"),
        "{log}"
    );
    let detail = bad.detail.clone().unwrap_or_default();
    assert!(
        detail.contains("etipdemo-parent") && detail.contains("network.maven_mirror_url"),
        "{detail}"
    );
    eprintln!(
        "maven_central_stands_in_for_a_missing_mirror_when_it_answers: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}

/// Writes `files` (path, content) into `repo` and commits them; the commit id.
fn commit(repo: &Path, files: &[(&str, &str)], message: &str) -> String {
    for (path, content) in files {
        std::fs::write(repo.join(path), content).unwrap();
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", message]);
    git(repo, &["rev-parse", "HEAD"])
}

/// The base image's Maven (Debian's 3.8.7), which the server offers as the wrapper's distribution.
const WRAPPER_MAVEN: &str = "3.8.7";

/// Where the Maven wrapper installs the distribution of `url`: `~/.m2/wrapper/dists/<name>/<hash>`,
/// the hash Java's `String.hashCode` of the URL in hex (as the wrapper's script computes it).
fn wrapper_home(url: &str) -> String {
    let hash = url
        .chars()
        .fold(0u32, |h, c| h.wrapping_mul(31).wrapping_add(c as u32));
    let name = url.rsplit('/').next().unwrap().trim_end_matches("-bin.zip");
    format!("/root/.m2/wrapper/dists/{name}/{hash:x}")
}

/// Issue 11, the Maven wrapper online: `tests/fixtures/online/maven-wrapper/` builds with its
/// `./mvnw` (only-script, no jar), whose distribution (the base image's Maven, zipped) is on the
/// test's server only. The env layer (on the private network) installs it with the wrapper and,
/// with it, downloads the parent POM through the mirror; the instance layer (network none) builds
/// both trees with `./mvnw -o` and that distribution, and so can a test run. A `distributionUrl`
/// the server does not have fails the env layer as `dependency_resolution`, naming the URL.
#[test]
fn maven_wrapper_distribution_comes_from_the_server_and_the_instance_builds_offline() {
    let t0 = Instant::now();
    let dist_arg = format!("--maven-distribution={WRAPPER_MAVEN}");
    let (tb, server) = online("mvnwdist", &[&dist_arg], |cfg, host| {
        cfg.network.maven_mirror_url = format!("http://{host}:8000/maven2/");
    });
    let dist = |v: &str| {
        format!(
            "http://{}:8000/maven2/org/apache/maven/apache-maven/{v}/apache-maven-{v}-bin.zip",
            server.host
        )
    };
    let (url, absent) = (dist(WRAPPER_MAVEN), dist("3.8.99"));
    // The fixture's wrapper properties name the server as `SERVER`: its host name is the test's.
    let step = online_fixtures().join("maven-wrapper");
    let read = |p: &str| std::fs::read_to_string(step.join(p)).unwrap();
    let props_path = ".mvn/wrapper/maven-wrapper.properties";
    let props = read(&format!("1-original/{props_path}"));
    let fixture_url = format!("SERVER/maven2/org/apache/maven/apache-maven/{WRAPPER_MAVEN}/");
    assert!(props.contains(&fixture_url), "{props}");
    let props_for = |u: &str| {
        let line = props
            .lines()
            .find(|l| l.starts_with("distributionUrl="))
            .unwrap();
        props.replace(line, &format!("distributionUrl={u}"))
    };
    let greeter = "src/main/java/demo/Greeter.java";
    let (_g, repo, _c) = fixture_repo("online/maven-wrapper");
    let original = commit(
        &repo,
        &[
            (props_path, &props_for(&url)),
            (greeter, &read(&format!("1-original/{greeter}"))),
        ],
        "the wrapper downloads from the test server",
    );
    let patched = commit(
        &repo,
        &[(greeter, &read(&format!("2-patched/{greeter}")))],
        "patched",
    );
    let missing = commit(
        &repo,
        &[(props_path, &props_for(&absent))],
        "a distribution the server does not have",
    );
    let statuses = tb.builder.build_all(
        &[
            etip("mvnw-ok", Language::Java, &repo, &original, &patched),
            etip("mvnw-missing", Language::Java, &repo, &missing, &missing),
        ],
        1,
        &no_events,
    );
    let ok = &statuses[0];
    assert_built(&tb, ok);
    assert_eq!(ok.toolchain.as_ref().unwrap().build_tool, "./mvnw");
    let access = server.log();
    let zip_path = url.split_once(":8000").unwrap().1;
    for get in [
        format!("\"GET {zip_path} HTTP/1.1\" 200"),
        "\"GET /maven2/org/etipdemo/etipdemo-parent/1.0/etipdemo-parent-1.0.pom HTTP/1.1\" 200"
            .to_string(),
    ] {
        assert!(
            access.contains(&get),
            "{get} in the server's log:\n{access}"
        );
    }
    let home = wrapper_home(&url);
    let log = build_log(&tb, "mvnw-ok");
    assert!(
        log.contains(&format!("etip: the wrapper's Maven is kept in {home}")),
        "{home}:\n{log}"
    );
    // `-v` in the env layer and `-V` (`.mvn/maven.config`) in its resolution run and both
    // versions' builds: the wrapper's Maven ran every time, the image's never.
    let maven_home = format!("Maven home: {home}");
    assert!(
        log.matches(&maven_home).count() >= 4 && !log.contains("Maven home: /usr/share/maven"),
        "{maven_home} in the env layer (twice), original and patched:\n{log}"
    );
    for v in ["original", "patched"] {
        let at = log
            .find(&format!("etip: building {v} with sh ./mvnw"))
            .unwrap();
        let section = &log[at..];
        let end = section.find("BUILD SUCCESS").unwrap_or(section.len());
        assert!(section[..end].contains(&maven_home), "{v}:\n{log}");
    }
    assert!(
        log.matches("BUILD SUCCESS").count() >= 3,
        "env + both versions:\n{log}"
    );
    let script = std::fs::read_to_string(
        etip_build::output::log_dir(tb.out.path(), "mvnw-ok").join("build.sh"),
    )
    .unwrap();
    assert!(script.contains(" -o "), "{script}");
    // The distribution is in the image, and a test run (network none) uses it.
    let image = ok.image.as_deref().unwrap();
    let kept = run(&tb, image, "/", &["cat", &format!("{home}/mvnw.url")]);
    assert_eq!(kept.trim(), url);
    let version = run(
        &tb,
        image,
        "/work/patched",
        &["sh", "./mvnw", "-o", "-B", "-v"],
    );
    assert!(
        version.contains(&format!("Apache Maven {WRAPPER_MAVEN}")) && version.contains(&maven_home),
        "{version}"
    );

    let bad = &statuses[1];
    assert_eq!(bad.outcome, BuildOutcome::Failed, "{bad:?}");
    assert_eq!(
        bad.failure,
        Some(FailureKind::DependencyResolution),
        "{bad:?}"
    );
    let detail = bad.detail.clone().unwrap_or_default();
    assert!(
        detail.starts_with(&format!(
            "env layer: the Maven wrapper (./mvnw) cannot download distributionUrl={absent}"
        )),
        "{detail}"
    );
    assert!(
        detail.contains(&format!("java.io.FileNotFoundException: {absent}")),
        "{detail}"
    );
    let absent_path = absent.split_once(":8000").unwrap().1;
    assert!(
        access.contains(&format!("\"GET {absent_path} HTTP/1.1\" 404")),
        "{access}"
    );
    eprintln!(
        "maven_wrapper_distribution_comes_from_the_server_and_the_instance_builds_offline: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}

const IDX_SECRET: &str = "IdxS3cretPw";
const MIRROR_SECRET: &str = "MirS3cretPw";
const PROXY_SECRET: &str = "Pr0xyS3cretPw";

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Saves `image` and checks its config (Env, labels, history) and every entry (path, link,
/// extended headers, data) of its last `layers` layers for `needles`. Returns the number of
/// entries checked.
fn assert_image_clean(tb: &TestBuilder, image: &str, layers: usize, needles: &[&[u8]]) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("image.tar");
    tb.builder
        .block_on(tb.builder.engine().save_image(image, &saved))
        .unwrap();
    let mut members: HashMap<String, (u64, u64)> = HashMap::new();
    let mut small: HashMap<String, Vec<u8>> = HashMap::new();
    let mut a = tar::Archive::new(std::fs::File::open(&saved).unwrap());
    for e in a.entries_with_seek().unwrap() {
        let mut e = e.unwrap();
        let name = e.path().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".json") {
            let mut v = Vec::new();
            e.read_to_end(&mut v).unwrap();
            small.insert(name.clone(), v);
        }
        members.insert(name, (e.raw_file_position(), e.size()));
    }
    let manifest: serde_json::Value = serde_json::from_slice(&small["manifest.json"]).unwrap();
    let config_name = manifest[0]["Config"].as_str().unwrap();
    let config = &small[config_name];
    let parsed: serde_json::Value = serde_json::from_slice(config).unwrap();
    assert!(parsed["config"]["Env"].is_array() && parsed["history"].is_array());
    for n in needles {
        assert!(
            !contains(config, n),
            "{} in the config of {image}",
            String::from_utf8_lossy(n)
        );
    }
    let all: Vec<&str> = manifest[0]["Layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let mut checked = 0;
    for layer in &all[all.len() - layers..] {
        let (offset, len) = members[*layer];
        let mut f = std::fs::File::open(&saved).unwrap();
        f.seek(SeekFrom::Start(offset)).unwrap();
        let mut la = tar::Archive::new(f.take(len));
        for e in la.entries().unwrap() {
            let mut e = e.unwrap();
            let mut seen = e.path_bytes().into_owned();
            if let Some(link) = e.link_name_bytes() {
                seen.extend_from_slice(&link);
            }
            if let Some(pax) = e.pax_extensions().unwrap() {
                for x in pax {
                    seen.extend_from_slice(x.unwrap().value_bytes());
                }
            }
            let path = String::from_utf8_lossy(&e.path_bytes()).into_owned();
            assert!(
                !path.starts_with("tmp/") && !path.contains("etip-net/"),
                "{path} in a layer of {image}"
            );
            e.read_to_end(&mut seen).unwrap();
            for n in needles {
                assert!(
                    !contains(&seen, n),
                    "{} in {path} of {image}",
                    String::from_utf8_lossy(n)
                );
            }
            checked += 1;
        }
    }
    checked
}

/// An env layer built with a proxy URL holding a password, an index URL and a mirror URL with
/// credentials, and a CA bundle: the downloads go through the proxy (the index and mirror names
/// only the proxy knows), and neither the images (config Env, labels, history, every file of
/// the env and instance layers) nor the logs hold the credentials or the uploaded CA file.
#[test]
fn credentials_reach_the_downloads_and_no_image() {
    let t0 = Instant::now();
    let ca = online_fixtures().join("test-ca.pem");
    let (tb, server) = online(
        "secrets",
        &["index.invalid:8000", "mirror.invalid:8000"],
        |cfg, host| {
            let n = &mut cfg.network;
            n.pip_index_url = format!("http://idxuser:{IDX_SECRET}@index.invalid:8000/simple/");
            n.maven_mirror_url =
                format!("http://mvnuser:{MIRROR_SECRET}@mirror.invalid:8000/maven2/");
            n.http_proxy = format!("http://proxyuser:{PROXY_SECRET}@{host}:8000");
            n.https_proxy = n.http_proxy.clone();
            n.no_proxy = "localhost".into();
            n.ca_bundle = ca.to_string_lossy().into_owned();
        },
    );
    let (_g1, py, p) = fixture_repo("online/python-deps");
    let (_g2, mvn, m) = fixture_repo("online/maven-parent");
    let statuses = tb.builder.build_all(
        &[
            etip("secret-py", Language::Python, &py, &p[0], &p[1]),
            etip("secret-mvn", Language::Java, &mvn, &m[0], &m[1]),
        ],
        1,
        &no_events,
    );
    for s in &statuses {
        assert_built(&tb, s);
    }
    let access = server.log();
    for get in [
        "\"GET http://index.invalid:8000/simple/etipdemo-dep/ HTTP",
        "\"GET http://mirror.invalid:8000/maven2/org/etipdemo/etipdemo-parent/1.0/etipdemo-parent-1.0.pom HTTP",
    ] {
        assert!(
            access.contains(get),
            "{get} (through the proxy) in:\n{access}"
        );
    }
    assert!(
        build_log(&tb, "secret-mvn").contains("etip: Maven trusts 1 certificates of the CA bundle"),
        "{}",
        build_log(&tb, "secret-mvn")
    );
    let pem = std::fs::read_to_string(&ca).unwrap();
    let ca_line = pem.lines().nth(3).unwrap().as_bytes().to_vec();
    let needles: Vec<&[u8]> = vec![
        IDX_SECRET.as_bytes(),
        MIRROR_SECRET.as_bytes(),
        PROXY_SECRET.as_bytes(),
        &ca_line,
    ];
    for s in &statuses {
        let image = s.image.as_deref().unwrap();
        // The env layer and the instance layer.
        let checked = assert_image_clean(&tb, image, 2, &needles);
        assert!(checked > 10, "{checked} entries in the layers of {image}");
        let dir = etip_build::output::log_dir(tb.out.path(), &s.id);
        for f in ["build.log", "status.json", "env.sh", "context.txt"] {
            let text = std::fs::read_to_string(dir.join(f)).unwrap_or_default();
            for n in &needles[..3] {
                assert!(
                    !contains(text.as_bytes(), n),
                    "{} in {f}",
                    String::from_utf8_lossy(n)
                );
            }
        }
    }
    eprintln!(
        "credentials_reach_the_downloads_and_no_image: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}

/// A named `env_network` the engine does not have fails the instance as `input`, naming it,
/// before any container is made.
#[test]
fn a_missing_named_network_is_an_input_failure() {
    let tb = common::builder("nonet");
    let absent = format!("etiptest-absent-{}", std::process::id());
    let mut cfg = tb.builder.config().clone();
    cfg.env_network = EnvNetwork::Named(absent.clone());
    let builder = Builder::new(cfg, tb.out.path().to_path_buf(), tb.rt.handle().clone()).unwrap();
    let (_g, repo, c) = fixture_repo("online/python-deps");
    let s = builder.build_one(
        &etip("nonet", Language::Python, &repo, &c[0], &c[1]),
        &no_events,
    );
    assert_eq!(s.failure, Some(FailureKind::Input), "{s:?}");
    let detail = s.detail.unwrap_or_default();
    assert!(
        detail.contains(&absent) && detail.contains("not a Docker network"),
        "{detail}"
    );
}

/// A Python project of `when` depending on `dep` (a module of the test index with `VERSION`),
/// and a commit one day later changing its code: (base, patched).
fn dated_project(repo: &Path, when: &str, later: &str, dep: &str) -> (String, String) {
    if !repo.exists() {
        std::fs::create_dir_all(repo).unwrap();
        git(repo, &["init", "-q", "-b", "main"]);
    }
    let name = dep.split(['=', '<', '>']).next().unwrap_or(dep);
    let module = name.replace('-', "_");
    let pyproject = format!(
        "[project]\nname = \"dated-app\"\nversion = \"0.1\"\ndependencies = [\"{dep}\"]\n\n\
         [tool.setuptools]\npackages = [\"dated\"]\n"
    );
    let code = format!("import {module}\n\n\ndef version():\n    return {module}.VERSION\n");
    let test = "from dated import version\n\n\ndef test_version():\n    assert version()\n";
    let base = commit_at(
        repo,
        when,
        &[
            ("pyproject.toml", &pyproject),
            ("dated/__init__.py", &code),
            ("tests/test_dated.py", test),
        ],
        "a project of its time",
    );
    let patched = commit_at(
        repo,
        later,
        &[("dated/__init__.py", &format!("{code}\n\nFAST = True\n"))],
        "a change",
    );
    (base, patched)
}

/// Dependencies as of the base commit's date (`python.deps_as_of = "commit"`, the default): the
/// test index serves `etipdemo-dated` 1.0 (uploaded 2019) and 2.0 (2023), and `etipdemo-late` 1.0
/// (2025), with PEP 700 upload times. A commit of June 2020 (built with Python 3.9, the nearest
/// configured to its time) gets 1.0, one of 2024 (Python 3.11) gets 2.0; a commit of 2020 that
/// needs `etipdemo-late` has it relaxed and recorded, or, with `python.relax_deps` off, fails with
/// `dependency_unavailable_before`. A pin of a release the index does not have
/// (`etipdemo-dated==0.5`, as PyPI lost `codecov==2.0.5`) loses its version and is recorded.
#[test]
fn python_dependencies_come_as_of_the_commit_date() {
    let t0 = Instant::now();
    let (tb, server) = online("pydated", &[], |cfg, host| {
        cfg.network.pip_index_url = format!("http://{host}:8000/simple/");
    });
    let tmp = tempfile::tempdir().unwrap();
    let (old, new, late, gone) = (
        tmp.path().join("old"),
        tmp.path().join("new"),
        tmp.path().join("late"),
        tmp.path().join("gone"),
    );
    let (o1, o2) = dated_project(
        &old,
        "2020-06-01T12:00:00Z",
        "2020-06-02T12:00:00Z",
        "etipdemo-dated",
    );
    let (n1, n2) = dated_project(
        &new,
        "2024-01-10T12:00:00Z",
        "2024-01-11T12:00:00Z",
        "etipdemo-dated",
    );
    let (l1, l2) = dated_project(
        &late,
        "2020-06-01T12:00:00Z",
        "2020-06-02T12:00:00Z",
        "etipdemo-late",
    );
    let (g1, g2) = dated_project(
        &gone,
        "2020-06-01T12:00:00Z",
        "2020-06-02T12:00:00Z",
        "etipdemo-dated==0.5",
    );
    let statuses = tb.builder.build_all(
        &[
            etip("dated-old", Language::Python, &old, &o1, &o2),
            etip("dated-new", Language::Python, &new, &n1, &n2),
            etip("dated-late", Language::Python, &late, &l1, &l2),
            etip("dated-gone", Language::Python, &gone, &g1, &g2),
        ],
        1,
        &no_events,
    );
    for s in &statuses {
        assert_built(&tb, s);
    }
    let version_in = |s: &InstanceStatus, module: &str| {
        let python = "/opt/etip/venvs/original/bin/python";
        let code = format!("import {module}; print({module}.VERSION)");
        let image = s.image.as_deref().unwrap();
        run(&tb, image, "/work/original", &[python, "-c", &code])
            .trim()
            .to_string()
    };
    let toolchain = |s: &InstanceStatus| s.toolchain.clone().unwrap();
    assert_eq!(
        version_in(&statuses[0], "etipdemo_dated"),
        "1.0",
        "{}",
        build_log(&tb, "dated-old")
    );
    assert_eq!(toolchain(&statuses[0]).version, "3.9");
    assert_eq!(
        toolchain(&statuses[0]).deps_as_of.as_deref(),
        Some("2020-06-02T00:00:00Z")
    );
    assert!(toolchain(&statuses[0]).relaxed.is_empty());
    assert_eq!(version_in(&statuses[1], "etipdemo_dated"), "2.0");
    assert_eq!(toolchain(&statuses[1]).version, "3.11");
    assert_eq!(version_in(&statuses[2], "etipdemo_late"), "1.0");
    let relaxed = toolchain(&statuses[2]).relaxed;
    assert_eq!(relaxed.len(), 1, "{relaxed:?}");
    assert!(
        relaxed[0].starts_with("etipdemo-late (etipdemo-late==1.0"),
        "{relaxed:?}"
    );
    assert_eq!(version_in(&statuses[3], "etipdemo_dated"), "1.0");
    let relaxed = toolchain(&statuses[3]).relaxed;
    assert_eq!(relaxed.len(), 1, "{relaxed:?}");
    assert!(
        relaxed[0]
            .starts_with("etipdemo-dated==0.5 (etipdemo-dated==1.0, uploaded before 2020-06-02")
            && relaxed[0].ends_with("the pinned release is no longer on the index"),
        "{relaxed:?}"
    );
    let access = server.log();
    assert!(
        access.contains("\"GET /packages/uv-"),
        "uv came from the index:\n{access}"
    );

    // Relaxing off: the same commit fails, naming the requirement.
    let mut cfg = tb.builder.config().clone();
    cfg.python.relax_deps = false;
    let out = tempfile::tempdir().unwrap();
    let strict = Builder::new(cfg, out.path().to_path_buf(), tb.rt.handle().clone())
        .unwrap()
        .with_host_network(HostNetwork::default());
    let s = strict.build_one(
        &etip("dated-strict", Language::Python, &late, &l1, &l2),
        &no_events,
    );
    assert_eq!(s.outcome, BuildOutcome::Failed, "{s:?}");
    assert_eq!(
        s.failure,
        Some(FailureKind::DependencyUnavailableBefore),
        "{s:?}"
    );
    assert!(
        s.reason
            .as_deref()
            .unwrap_or_default()
            .contains("etipdemo-late"),
        "{s:?}"
    );
    eprintln!(
        "python_dependencies_come_as_of_the_commit_date: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}
