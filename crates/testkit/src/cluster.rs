//! A Docker Swarm of real engines on this machine, for the cluster tests: a manager and workers,
//! each `dockerd` in a network namespace of its own with its own data root, exec root and socket,
//! joined over a private bridge the test makes (in a namespace of its own, so the machine's
//! firewall never sees the traffic), and a registry (Debian's `docker-registry`) the nodes pull
//! from. Dropping the [`Cluster`] tears all of it down; the machine's own engine is never touched.
//!
//! Needs root, `ip` (iproute2), `nsenter`, `dockerd` (its engines use this machine's engine's
//! storage driver), and `docker-registry`; panics with what is missing. Addresses are `10.231.N.0/24` with `N` free on this machine.
//!
//! The registry has two names, as on a real cluster host: `127.0.0.1:P` for this machine's engine
//! (which pushes; engines accept registries on loopback without TLS) and `10.231.N.1:Q` for the
//! nodes (configured as an insecure registry on each). Both are the same storage.
//!
//! A node's engine socket is reachable at `<dir>/sockets/<node id>.sock` (a link to the node's
//! own socket): the runner's mount source `<dir>/sockets/{{.Node.ID}}.sock` names each node's own.
//! The engines share this machine's cores, so each worker is labelled `etip.cpus` with a core of
//! its own (the last cores first), which its units pin their timed sessions to.
//! The engines share this machine's cores, so each worker is labelled `etip.cpus` with a core of
//! its own (the last cores first), which its units pin their timed sessions to.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// One engine of the cluster.
pub struct Node {
    /// `manager` or `worker-<i>`.
    pub name: String,
    /// The swarm's id of the node.
    pub id: String,
    /// Its address on the cluster's network.
    pub addr: String,
    /// `unix://<socket>`.
    pub endpoint: String,
    dir: PathBuf,
    netns: String,
    engine: Option<Child>,
}

/// A test swarm; torn down when dropped.
pub struct Cluster {
    pub manager: Node,
    pub workers: Vec<Node>,
    /// The registry as this machine's engine pushes to it.
    pub registry_push: String,
    /// The registry as the nodes pull from it.
    pub registry_pull: String,
    /// The runner's socket mount source (with the `{{.Node.ID}}` template).
    pub node_socket: String,
    switch: String,
    host_leg: String,
    registries: Vec<Child>,
    dir: tempfile::TempDir,
}

fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn must(cmd: &str, args: &[&str]) -> String {
    run(cmd, args).unwrap_or_else(|e| panic!("setting up the test cluster: {e}"))
}

fn docker(endpoint: &str, args: &[&str]) -> Result<String, String> {
    let mut all = vec!["-H", endpoint];
    all.extend_from_slice(args);
    run("docker", &all)
}

/// The storage driver of this machine's engine (what works on this kernel and file system), for
/// the cluster's engines; `fuse-overlayfs` when it does not say.
fn storage_driver() -> String {
    run("docker", &["info", "--format", "{{.Driver}}"])
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "fuse-overlayfs".into())
}

/// A `10.231.N` prefix no interface of this machine uses.
fn free_subnet(seq: u32) -> String {
    let used = run("ip", &["-o", "addr"]).unwrap_or_default();
    let start = (std::process::id() + seq * 37) % 200;
    (0..200)
        .map(|k| format!("10.231.{}", 20 + (start + k) % 200))
        .find(|p| !used.contains(&format!("{p}.")))
        .expect("a free 10.231.N.0/24 on this machine")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < limit,
            "the test cluster: {what} within {}s",
            limit.as_secs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Cluster {
    /// A manager and `workers` workers, labelled `etip.profile=<profiles[i]>` (workers without a
    /// profile get none). The manager is drained: units run on workers only.
    pub fn start(workers: usize, profiles: &[&str]) -> Cluster {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let seq = SEQ.fetch_add(1, Ordering::SeqCst);
        assert!(
            run("id", &["-u"]).as_deref() == Ok("0"),
            "the cluster tests need root (network namespaces, engines)"
        );
        for tool in ["ip", "nsenter", "dockerd", "docker", "docker-registry"] {
            assert!(
                run("sh", &["-c", &format!("command -v {tool}")]).is_ok(),
                "the cluster tests need {tool} (scripts/test.sh installs Debian's docker-registry; iproute2, util-linux and the Docker engine come with the machine)"
            );
        }
        let subnet = free_subnet(seq);
        let n = subnet.rsplit('.').next().unwrap_or("0").to_string();
        let tag = format!("ek{n}");
        let dir = tempfile::Builder::new()
            .prefix("etip-cluster-")
            .tempdir()
            .expect("a temporary folder");
        let switch = format!("{tag}sw");
        let host_leg = format!("{tag}h");
        let mut cluster = Cluster {
            manager: Node::empty("manager"),
            workers: Vec::new(),
            registry_push: String::new(),
            registry_pull: String::new(),
            node_socket: format!("{}/sockets/{{{{.Node.ID}}}}.sock", dir.path().display()),
            switch: switch.clone(),
            host_leg: host_leg.clone(),
            registries: Vec::new(),
            dir,
        };
        // The switch: a bridge in its own namespace, and this machine's leg into it.
        must("ip", &["netns", "add", &switch]);
        must(
            "ip",
            &["-n", &switch, "link", "add", "br0", "type", "bridge"],
        );
        must("ip", &["-n", &switch, "link", "set", "br0", "up"]);
        must("ip", &["-n", &switch, "link", "set", "lo", "up"]);
        cluster.plug(&host_leg, None);
        must(
            "ip",
            &["addr", "add", &format!("{subnet}.1/24"), "dev", &host_leg],
        );
        must("ip", &["link", "set", &host_leg, "up"]);
        cluster.start_registries(&subnet);
        let sockets = cluster.dir.path().join("sockets");
        std::fs::create_dir_all(&sockets).expect("the sockets folder");
        for i in 0..=workers {
            let name = if i == 0 {
                "manager".to_string()
            } else {
                format!("worker-{i}")
            };
            let node = cluster.start_node(&tag, i, &name, &subnet);
            if i == 0 {
                cluster.manager = node;
            } else {
                cluster.workers.push(node);
            }
        }
        // The swarm.
        let m = cluster.manager.endpoint.clone();
        docker(
            &m,
            &["swarm", "init", "--advertise-addr", &cluster.manager.addr],
        )
        .unwrap_or_else(|e| panic!("swarm init: {e}"));
        let token = docker(&m, &["swarm", "join-token", "-q", "worker"])
            .unwrap_or_else(|e| panic!("swarm join-token: {e}"));
        let join_at = format!("{}:2377", cluster.manager.addr);
        for w in &cluster.workers {
            docker(&w.endpoint, &["swarm", "join", "--token", &token, &join_at])
                .unwrap_or_else(|e| panic!("{} joining the swarm: {e}", w.name));
        }
        let mut nodes = vec![&mut cluster.manager];
        nodes.extend(cluster.workers.iter_mut());
        for node in nodes {
            node.id = docker(&node.endpoint, &["info", "--format", "{{.Swarm.NodeID}}"])
                .unwrap_or_else(|e| panic!("{}: {e}", node.name));
            let link = sockets.join(format!("{}.sock", node.id));
            std::os::unix::fs::symlink(node.dir.join("docker.sock"), &link)
                .expect("linking the node's socket");
        }
        docker(
            &m,
            &[
                "node",
                "update",
                "--availability",
                "drain",
                &cluster.manager.id,
            ],
        )
        .unwrap_or_else(|e| panic!("draining the manager: {e}"));
        for (w, profile) in cluster.workers.iter().zip(profiles) {
            docker(
                &m,
                &[
                    "node",
                    "update",
                    "--label-add",
                    &format!("etip.profile={profile}"),
                    &w.id,
                ],
            )
            .unwrap_or_else(|e| panic!("labelling {}: {e}", w.name));
        }
        // The engines share this machine's cores: each worker pins its units to its own.
        let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get());
        for (i, w) in cluster.workers.iter().enumerate() {
            let cpu = (ncpu - 1).saturating_sub(i % ncpu);
            docker(
                &m,
                &[
                    "node",
                    "update",
                    "--label-add",
                    &format!("etip.cpus={cpu}"),
                    &w.id,
                ],
            )
            .unwrap_or_else(|e| panic!("labelling {}: {e}", w.name));
        }
        let ids: Vec<String> = cluster.workers.iter().map(|w| w.id.clone()).collect();
        wait_for("every worker ready", Duration::from_secs(60), || {
            ids.iter().all(|id| {
                docker(
                    &m,
                    &["node", "inspect", "--format", "{{.Status.State}}", id],
                )
                .as_deref()
                    == Ok("ready")
            })
        });
        cluster
    }

    /// A veth pair: `name` here (or in namespace `into`), its peer on the switch's bridge.
    fn plug(&self, name: &str, into: Option<&str>) {
        let peer = format!("{name}s");
        must(
            "ip",
            &["link", "add", name, "type", "veth", "peer", "name", &peer],
        );
        must("ip", &["link", "set", &peer, "netns", &self.switch]);
        must(
            "ip",
            &[
                "-n",
                &self.switch,
                "link",
                "set",
                &peer,
                "master",
                "br0",
                "up",
            ],
        );
        if let Some(ns) = into {
            must("ip", &["link", "set", name, "netns", ns]);
        }
    }

    /// Two registry processes on one storage: one on loopback, one on the cluster's network.
    fn start_registries(&mut self, subnet: &str) {
        let storage = self.dir.path().join("registry");
        let (push, pull) = (free_port(), free_port());
        for (addr, file) in [
            (format!("127.0.0.1:{push}"), "registry-local.yml"),
            (format!("{subnet}.1:{pull}"), "registry-cluster.yml"),
        ] {
            let child = crate::registry::spawn(&self.dir.path().join(file), &storage, &addr);
            self.registries.push(child);
            wait_for("the registry answering", Duration::from_secs(20), || {
                std::net::TcpStream::connect(&addr).is_ok()
            });
        }
        self.registry_push = format!("127.0.0.1:{push}");
        self.registry_pull = format!("{subnet}.1:{pull}");
    }

    fn start_node(&self, tag: &str, i: usize, name: &str, subnet: &str) -> Node {
        let netns = format!("{tag}n{i}");
        let dir = self.dir.path().join(name);
        std::fs::create_dir_all(dir.join("data")).expect("the node's folder");
        must("ip", &["netns", "add", &netns]);
        let leg = format!("{tag}v{i}");
        self.plug(&leg, Some(&netns));
        let addr = format!("{subnet}.{}", i + 2);
        must(
            "ip",
            &[
                "-n",
                &netns,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                &leg,
            ],
        );
        must("ip", &["-n", &netns, "link", "set", &leg, "up"]);
        must("ip", &["-n", &netns, "link", "set", "lo", "up"]);
        let config = dir.join("daemon.json");
        std::fs::write(
            &config,
            format!(
                "{{\"insecure-registries\": [\"{}\"], \"log-driver\": \"json-file\"}}",
                self.registry_pull
            ),
        )
        .expect("the engine's configuration");
        let socket = dir.join("docker.sock");
        let log = std::fs::File::create(dir.join("dockerd.log")).expect("the engine's log");
        let child = Command::new("nsenter")
            .arg(format!("--net=/var/run/netns/{netns}"))
            .arg("dockerd")
            .arg("--config-file")
            .arg(&config)
            .arg("--data-root")
            .arg(dir.join("data"))
            .arg("--exec-root")
            .arg(dir.join("exec"))
            .arg("-H")
            .arg(format!("unix://{}", socket.display()))
            .arg("--pidfile")
            .arg(dir.join("dockerd.pid"))
            .args(["--storage-driver", &storage_driver(), "--bridge", "none"])
            .args(["--iptables=false", "--ip6tables=false"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting dockerd for {name}: {e}"));
        let endpoint = format!("unix://{}", socket.display());
        wait_for(
            &format!("{name}'s engine answering"),
            Duration::from_secs(60),
            || docker(&endpoint, &["version", "--format", "{{.Server.Version}}"]).is_ok(),
        );
        Node {
            name: name.to_string(),
            id: String::new(),
            addr,
            endpoint,
            dir,
            netns,
            engine: Some(child),
        }
    }

    /// Kills worker `i`'s engine (SIGKILL to dockerd and its containerd): the node is lost as a
    /// machine that died would be; its containers stop with it.
    pub fn kill_worker(&mut self, i: usize) {
        let node = &mut self.workers[i];
        node.kill();
    }

    /// The folder of the cluster's files (engines' logs under `<node name>/dockerd.log`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Node {
    fn empty(name: &str) -> Node {
        Node {
            name: name.into(),
            id: String::new(),
            addr: String::new(),
            endpoint: String::new(),
            dir: PathBuf::new(),
            netns: String::new(),
            engine: None,
        }
    }

    /// SIGKILL to the engine, every process that runs from its folders (containerd, shims) and
    /// every process of its containers (found by the container ids in its data root and their
    /// cgroups).
    fn kill(&mut self) {
        let containers: Vec<String> = std::fs::read_dir(self.dir.join("data/containers"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(mut engine) = self.engine.take() {
            let _ = engine.kill();
            let _ = engine.wait();
        }
        let root = self.dir.display().to_string();
        if !root.is_empty() && root.starts_with(&std::env::temp_dir().display().to_string()) {
            let _ = run("pkill", &["-9", "-f", &root]);
        }
        for id in containers.iter().filter(|id| id.len() == 64) {
            for procs in cgroup_procs(id) {
                for pid in std::fs::read_to_string(&procs)
                    .unwrap_or_default()
                    .split_whitespace()
                {
                    let _ = run("kill", &["-9", pid]);
                }
            }
        }
    }

    /// Leaves the swarm and stops the engine (SIGTERM, then SIGKILL), then unmounts what it left.
    fn stop(&mut self) {
        if self.endpoint.is_empty() {
            return;
        }
        if let Some(engine) = &mut self.engine {
            let _ = docker(&self.endpoint, &["swarm", "leave", "--force"]);
            let ids = docker(&self.endpoint, &["ps", "-aq"]).unwrap_or_default();
            for id in ids.split_whitespace() {
                let _ = docker(&self.endpoint, &["rm", "-f", id]);
            }
            let _ = run("kill", &["-TERM", &engine.id().to_string()]);
            let start = Instant::now();
            while !matches!(engine.try_wait(), Ok(Some(_)))
                && start.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        self.kill();
        // Mounts under the node's folder (fuse-overlayfs layers, the exec root's).
        if let Ok(mounts) = std::fs::read_to_string("/proc/mounts") {
            let root = self.dir.display().to_string();
            let mut points: Vec<&str> = mounts
                .lines()
                .filter_map(|l| l.split_whitespace().nth(1))
                .filter(|p| !root.is_empty() && p.starts_with(&root))
                .collect();
            points.sort_by_key(|p| std::cmp::Reverse(p.len()));
            for p in points {
                let _ = run("umount", &["-l", p]);
            }
        }
        if !self.netns.is_empty() {
            let _ = run("ip", &["netns", "del", &self.netns]);
        }
    }
}

/// The `cgroup.procs` files of container `id` (cgroup v1 controllers or the v2 tree; the
/// engines here use the cgroupfs driver, parent `/docker`).
fn cgroup_procs(id: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let v2 = Path::new("/sys/fs/cgroup/docker")
        .join(id)
        .join("cgroup.procs");
    if v2.exists() {
        out.push(v2);
    }
    if let Ok(controllers) = std::fs::read_dir("/sys/fs/cgroup") {
        for c in controllers.flatten() {
            let p = c.path().join("docker").join(id).join("cgroup.procs");
            if p.exists() {
                out.push(p);
            }
        }
    }
    out
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for w in &mut self.workers {
            w.stop();
        }
        self.manager.stop();
        for r in &mut self.registries {
            let _ = r.kill();
            let _ = r.wait();
        }
        let _ = run("ip", &["link", "del", &self.host_leg]);
        let _ = run("ip", &["netns", "del", &self.switch]);
    }
}
