//! The offline base images: `debootstrap` of a Debian suite from the machine's mirror, imported
//! through the Docker API, tagged `etip/base:<suite>-<key>` where the key hashes suite, packages,
//! mirror and recipe version — so each suite's image is built once per machine and reused
//! afterwards. The suites differ in their interpreters and JDKs (bullseye: Python 3.9, JDK 11
//! and 17; bookworm: 3.11, 17; trixie: 3.13, 21 and 25): the toolchain tables of the build
//! configuration name the suite that provides each version.

use crate::config::BootstrapConfig;
use bytes::Bytes;
use etip_docker::{Engine, EngineError, LABEL_KIND, LABEL_MANAGED, LABEL_NAMESPACE};
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Bumped whenever the bootstrap recipe (not its inputs) changes.
pub const RECIPE_VERSION: &str = "base-2";
const APT_SOURCES: &str = "/etc/apt/sources.list.d/debian.sources";

#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    #[error(
        "debootstrap is not installed: run `apt-get install debootstrap` (as root) and try again"
    )]
    NoDebootstrap,
    #[error(
        "bootstrapping the base image needs root (debootstrap creates device files and chroots): run as root"
    )]
    NotRoot,
    #[error(
        "no Debian mirror configured: set bootstrap.mirror or add a `URIs:` line to {APT_SOURCES}"
    )]
    NoMirror,
    #[error("debootstrap of {suite} from {mirror} failed (exit {code:?}); last output:\n{tail}")]
    Debootstrap {
        suite: String,
        mirror: String,
        code: Option<i32>,
        tail: String,
    },
    #[error("{action}: {source}")]
    Io {
        action: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Engine(#[from] EngineError),
}

fn io(action: impl Into<String>) -> impl FnOnce(std::io::Error) -> BootstrapError {
    let action = action.into();
    move |source| BootstrapError::Io { action, source }
}

/// The bootstrapped base image.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseImage {
    pub tag: String,
    pub image_id: String,
    pub key: String,
    /// The Debian suite it was bootstrapped from.
    pub suite: String,
    /// False when the image existed already (nothing was built).
    pub built: bool,
    pub secs: f64,
    /// The image's size as the engine reports it.
    pub size_bytes: i64,
}

/// Reads the mirror of `suite` from the machine's apt sources (deb822 `URIs:` line), falling back
/// to the first `URIs:` line.
pub fn machine_mirror(suite: &str) -> Option<String> {
    let text = std::fs::read_to_string(APT_SOURCES).ok()?;
    mirror_from_sources(&text, suite)
}

fn mirror_from_sources(text: &str, suite: &str) -> Option<String> {
    let mut first = None;
    for stanza in text.split("\n\n") {
        let field = |name: &str| {
            stanza.lines().find_map(|l| {
                l.strip_prefix(name)
                    .and_then(|r| r.strip_prefix(':'))
                    .map(|r| r.trim().to_string())
            })
        };
        let Some(uris) = field("URIs") else { continue };
        let uri = uris.split_whitespace().next()?.to_string();
        if first.is_none() {
            first = Some(uri.clone());
        }
        if field("Suites").is_some_and(|s| s.split_whitespace().any(|x| x == suite)) {
            return Some(uri);
        }
    }
    first
}

/// The Debian mirror `suite` is bootstrapped from.
fn mirror_of(cfg: &BootstrapConfig, suite: &str) -> Result<String, BootstrapError> {
    if cfg.mirror.is_empty() {
        machine_mirror(suite).ok_or(BootstrapError::NoMirror)
    } else {
        Ok(cfg.mirror.clone())
    }
}

/// The content key and full tag of `suite`'s base image (does not touch the engine).
pub fn base_tag(cfg: &BootstrapConfig, suite: &str) -> Result<(String, String), BootstrapError> {
    let mirror = mirror_of(cfg, suite)?;
    let packages = cfg.packages_of(suite);
    let mut h = Sha256::new();
    for part in [RECIPE_VERSION, suite, &mirror, &packages.join(",")] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    let key = hex::encode(h.finalize())[..12].to_string();
    Ok((key.clone(), format!("{}:{suite}-{key}", cfg.repository)))
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

fn find_debootstrap() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join("debootstrap"))
        .find(|p| p.is_file())
}

/// A cross-process lock (a file holding the owner's pid), so concurrent test binaries or workers
/// bootstrap once. A lock whose owner is gone is taken over.
struct FileLock(PathBuf);

impl FileLock {
    fn acquire(path: PathBuf) -> Result<FileLock, BootstrapError> {
        let start = Instant::now();
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    use std::io::Write;
                    let _ = write!(f, "{}", std::process::id());
                    return Ok(FileLock(path));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let owner = std::fs::read_to_string(&path).unwrap_or_default();
                    let alive = owner
                        .trim()
                        .parse::<u32>()
                        .is_ok_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
                    if !alive && start.elapsed() > Duration::from_secs(2) {
                        let _ = std::fs::remove_file(&path);
                        continue;
                    }
                    if start.elapsed() > Duration::from_secs(1800) {
                        return Err(BootstrapError::Io {
                            action: format!("waiting for the bootstrap lock {}", path.display()),
                            source: std::io::Error::other("timed out after 30 minutes"),
                        });
                    }
                    std::thread::sleep(Duration::from_millis(500));
                }
                Err(e) => {
                    return Err(io(format!("creating lock {}", path.display()))(e));
                }
            }
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

static IN_PROCESS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Returns the base image of `suite`, bootstrapping and importing it when it does not exist yet.
/// `on_line` receives progress lines (debootstrap output, import status).
pub async fn bootstrap(
    engine: &Engine,
    cfg: &BootstrapConfig,
    suite: &str,
    force: bool,
    on_line: &mut (dyn FnMut(&str) + Send),
) -> Result<BaseImage, BootstrapError> {
    let (key, tag) = base_tag(cfg, suite)?;
    // The image as it exists (checked again once the locks are held: another build may have
    // made it meanwhile).
    let existing = || async {
        Ok::<_, BootstrapError>(match force {
            true => None,
            false => engine.image(&tag).await?.map(|img| BaseImage {
                tag: tag.clone(),
                image_id: img.id,
                key: key.clone(),
                suite: suite.to_string(),
                built: false,
                secs: 0.0,
                size_bytes: img.size,
            }),
        })
    };
    if let Some(img) = existing().await? {
        return Ok(img);
    }
    let _guard = IN_PROCESS.lock().await;
    let _lock = FileLock::acquire(std::env::temp_dir().join(format!("etip-bootstrap-{key}.lock")))?;
    if let Some(img) = existing().await? {
        return Ok(img);
    }
    let start = Instant::now();
    let debootstrap = find_debootstrap().ok_or(BootstrapError::NoDebootstrap)?;
    if !is_root() {
        return Err(BootstrapError::NotRoot);
    }
    let mirror = mirror_of(cfg, suite)?;
    let tmp = tempfile::Builder::new()
        .prefix("etip-rootfs-")
        .tempdir_in("/var/tmp")
        .or_else(|_| tempfile::tempdir())
        .map_err(io("creating a temporary directory for the rootfs"))?;
    let rootfs = tmp.path().join("rootfs");
    on_line(&format!(
        "debootstrap {suite} into {} from {mirror}",
        rootfs.display()
    ));
    let rootfs_for_thread = rootfs.clone();
    let suite_arg = suite.to_string();
    let packages = cfg.packages_of(suite).join(",");
    let mirror_for_thread = mirror.clone();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let runner = std::thread::spawn(
        move || -> Result<(Option<i32>, Vec<String>), std::io::Error> {
            let mut child = Command::new(debootstrap)
                .arg("--variant=minbase")
                .arg(format!("--include={packages}"))
                .arg(&suite_arg)
                .arg(&rootfs_for_thread)
                .arg(&mirror_for_thread)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()?;
            let stderr = child.stderr.take().expect("stderr was piped");
            let err_tx = tx.clone();
            let err_thread = std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let _ = err_tx.send(line);
                }
            });
            let stdout = child.stdout.take().expect("stdout was piped");
            let mut tail = Vec::new();
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                tail.push(line.clone());
                if tail.len() > 30 {
                    tail.remove(0);
                }
                let _ = tx.send(line);
            }
            let _ = err_thread.join();
            let status = child.wait()?;
            Ok((status.code(), tail))
        },
    );
    for line in rx {
        on_line(&line);
    }
    let (code, tail) = runner
        .join()
        .map_err(|_| BootstrapError::Io {
            action: "running debootstrap".into(),
            source: std::io::Error::other("the debootstrap thread panicked"),
        })?
        .map_err(io("running debootstrap"))?;
    if code != Some(0) {
        return Err(BootstrapError::Debootstrap {
            suite: suite.to_string(),
            mirror,
            code,
            tail: tail.join("\n"),
        });
    }
    prune_rootfs(&rootfs);
    on_line(&format!("importing {} as {tag}", rootfs.display()));
    let stream = tar_stream(&rootfs)?;
    let (repo, tag_part) = tag.split_once(':').expect("base tags are repo:tag");
    let changes = vec![
        format!(
            "LABEL {LABEL_MANAGED}=true {LABEL_KIND}=base {LABEL_NAMESPACE}={} etip.key={key} etip.suite={}",
            cfg.repository.split('/').next().unwrap_or("etip"),
            suite
        ),
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8"
            .to_string(),
        "CMD [\"/bin/bash\"]".to_string(),
    ];
    let image_id = engine
        .import_rootfs(stream, repo, tag_part, changes)
        .await?;
    drop(tmp);
    let size_bytes = engine.image(&tag).await?.map(|i| i.size).unwrap_or(0);
    Ok(BaseImage {
        tag,
        image_id,
        key,
        suite: suite.to_string(),
        built: true,
        secs: start.elapsed().as_secs_f64(),
        size_bytes,
    })
}

/// Removes what an offline test image never needs: package caches, manual pages, translations and
/// documentation except copyright files. Fewer files also make every later layer faster (each
/// layer build walks the whole tree to find what its script changed).
fn prune_rootfs(rootfs: &Path) {
    fn walk(dir: &Path, keep: &dyn Fn(&Path) -> bool) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => {
                    walk(&p, keep);
                    let _ = std::fs::remove_dir(&p); // only when empty
                }
                Ok(_) if !keep(&p) => {
                    let _ = std::fs::remove_file(&p);
                }
                _ => {}
            }
        }
    }
    let nothing = |_: &Path| false;
    for dir in [
        "var/cache/apt/archives",
        "var/lib/apt/lists",
        "usr/share/man",
        "usr/share/locale",
    ] {
        walk(&rootfs.join(dir), &nothing);
    }
    walk(&rootfs.join("usr/share/doc"), &|p: &Path| {
        p.file_name().is_some_and(|n| n == "copyright")
    });
}

/// Streams `tar -C dir -c .` (numeric owners, hard links and device files kept) in 256 KiB chunks.
fn tar_stream(
    dir: &Path,
) -> Result<
    impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
    BootstrapError,
> {
    let mut child = Command::new("tar")
        .arg("--numeric-owner")
        .arg("-C")
        .arg(dir)
        .arg("-cf")
        .arg("-")
        .arg(".")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(io("running tar on the rootfs"))?;
    let stdout = child.stdout.take().expect("stdout was piped");
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(8);
    std::thread::spawn(move || {
        let mut reader = stdout;
        loop {
            let mut buf = vec![0u8; 256 * 1024];
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    buf.truncate(n);
                    if tx.blocking_send(Ok(Bytes::from(buf))).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    break;
                }
            }
        }
        match child.wait() {
            Ok(s) if s.success() => {}
            Ok(s) => {
                let _ = tx.blocking_send(Err(std::io::Error::other(format!(
                    "tar of the rootfs exited with {s}"
                ))));
            }
            Err(e) => {
                let _ = tx.blocking_send(Err(e));
            }
        }
    });
    Ok(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    }))
}

/// The phases of a bootstrap, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    Starting,
    Resolving,
    Downloading,
    Extracting,
    Unpacking,
    Configuring,
    Importing,
}

impl Phase {
    /// What a user reads while the phase runs.
    pub fn describe(self) -> &'static str {
        match self {
            Phase::Starting => "starting debootstrap",
            Phase::Resolving => "resolving packages",
            Phase::Downloading => "downloading packages",
            Phase::Extracting => "extracting packages",
            Phase::Unpacking => "unpacking packages",
            Phase::Configuring => "configuring packages",
            Phase::Importing => "importing the root file system into Docker",
        }
    }

    /// The phase a progress line of [`bootstrap`] (debootstrap's `I:` lines, etip's own) starts,
    /// if any.
    pub fn of_line(line: &str) -> Option<Phase> {
        if line.starts_with("debootstrap ") {
            return Some(Phase::Starting);
        }
        if line.starts_with("importing ") {
            return Some(Phase::Importing);
        }
        let msg = line.strip_prefix("I: ")?;
        let word = msg.split_whitespace().next()?;
        match word {
            "Retrieving" | "Validating" if is_index(msg) => Some(Phase::Resolving),
            "Checking" | "Valid" | "Resolving" | "Found" => Some(Phase::Resolving),
            "Retrieving" | "Validating" => Some(Phase::Downloading),
            "Extracting" => Some(Phase::Extracting),
            "Installing" | "Unpacking" => Some(Phase::Unpacking),
            "Configuring" => Some(Phase::Configuring),
            _ => None,
        }
    }
}

/// `Retrieving InRelease`, `Validating Packages`: the archive's indexes, not a package.
fn is_index(msg: &str) -> bool {
    matches!(
        msg.split_whitespace().nth(1),
        Some("InRelease" | "Release" | "Release.gpg" | "Packages")
    )
}

/// Turns a bootstrap's progress lines into status lines a user can follow for the minutes it
/// takes: one when a phase starts, and a reminder every `heartbeat` within a long phase, each
/// with the time elapsed since the bootstrap started.
#[derive(Debug)]
pub struct Progress {
    start: Instant,
    heartbeat: Duration,
    phase: Option<Phase>,
    last_status: Instant,
    packages: usize,
}

impl Progress {
    pub fn new(start: Instant, heartbeat: Duration) -> Self {
        Progress {
            start,
            heartbeat,
            phase: None,
            last_status: start,
            packages: 0,
        }
    }

    /// The current phase, if one has started.
    pub fn phase(&self) -> Option<Phase> {
        self.phase
    }

    /// Feeds one progress line seen at `now`; returns the status line to show, if one is due.
    pub fn observe(&mut self, line: &str, now: Instant) -> Option<String> {
        let phase = Phase::of_line(line);
        if phase == Some(Phase::Downloading) && line.starts_with("I: Retrieving") {
            self.packages += 1;
        }
        let elapsed = now.saturating_duration_since(self.start).as_secs();
        let changed = phase.is_some_and(|p| Some(p) > self.phase);
        if changed {
            self.phase = phase;
        } else if now.saturating_duration_since(self.last_status) < self.heartbeat {
            return None;
        }
        let current = self.phase?;
        self.last_status = now;
        let count = match current {
            Phase::Downloading if self.packages > 0 => format!(", {} so far", self.packages),
            _ => String::new(),
        };
        let state = if changed { "" } else { "still " };
        Some(format!(
            "bootstrap: {state}{}{count} ({elapsed} s elapsed)",
            current.describe()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_of_the_suite() {
        let text = "Types: deb\nURIs: http://a.example/debian\nSuites: bookworm bookworm-updates\n\nTypes: deb\nURIs: http://b.example/debian-security\nSuites: bookworm-security\n";
        assert_eq!(
            mirror_from_sources(text, "bookworm").as_deref(),
            Some("http://a.example/debian")
        );
        assert_eq!(
            mirror_from_sources(text, "bookworm-security").as_deref(),
            Some("http://b.example/debian-security")
        );
        assert_eq!(
            mirror_from_sources(text, "trixie").as_deref(),
            Some("http://a.example/debian")
        );
    }

    #[test]
    fn key_depends_on_inputs() {
        let mut cfg = BootstrapConfig {
            mirror: "http://m.example/debian".into(),
            ..Default::default()
        };
        let (k1, t1) = base_tag(&cfg, "bookworm").unwrap();
        assert!(t1.starts_with("etip/base:bookworm-"));
        cfg.packages.reverse();
        assert_eq!(
            base_tag(&cfg, "bookworm").unwrap().0,
            k1,
            "package order does not matter"
        );
        cfg.packages.push("curl".into());
        assert_ne!(base_tag(&cfg, "bookworm").unwrap().0, k1);
        let (k2, t2) = base_tag(&cfg, "trixie").unwrap();
        assert!(t2.starts_with("etip/base:trixie-") && k2 != k1);
        // A suite's own packages change its key only.
        let (kb, kt) = (base_tag(&cfg, "bookworm").unwrap().0, k2);
        cfg.suites
            .get_mut("trixie")
            .unwrap()
            .packages
            .push("pypy3".into());
        assert_eq!(base_tag(&cfg, "bookworm").unwrap().0, kb);
        assert_ne!(base_tag(&cfg, "trixie").unwrap().0, kt);
    }
    #[test]
    fn progress_reports_each_phase_once_then_heartbeats() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut p = Progress::new(t0, Duration::from_secs(30));
        let lines = [
            (
                0,
                "debootstrap bookworm into /var/tmp/x/rootfs from http://deb.debian.org/debian",
            ),
            (1, "I: Retrieving InRelease "),
            (2, "I: Checking Release signature"),
            (3, "I: Retrieving Packages "),
            (4, "I: Resolving dependencies of required packages..."),
            (5, "I: Retrieving adduser 3.134"),
            (6, "I: Validating adduser 3.134"),
            (7, "I: Retrieving apt 2.6.1"),
            (50, "I: Retrieving base-files 12.4"),
            (60, "I: Extracting adduser..."),
            (70, "I: Installing required packages..."),
            (71, "I: Unpacking required packages..."),
            (72, "I: Unpacking libc6:amd64..."),
            (80, "I: Configuring required packages..."),
            (81, "I: Configuring libc6:amd64..."),
            (90, "W: something debootstrap warns about"),
            (95, "importing /var/tmp/x/rootfs as etip/base:bookworm-abc"),
        ];
        let shown: Vec<String> = lines
            .iter()
            .filter_map(|(s, l)| p.observe(l, at(*s)))
            .collect();
        assert_eq!(
            shown,
            [
                "bootstrap: starting debootstrap (0 s elapsed)",
                "bootstrap: resolving packages (1 s elapsed)",
                "bootstrap: downloading packages, 1 so far (5 s elapsed)",
                "bootstrap: still downloading packages, 3 so far (50 s elapsed)",
                "bootstrap: extracting packages (60 s elapsed)",
                "bootstrap: unpacking packages (70 s elapsed)",
                "bootstrap: configuring packages (80 s elapsed)",
                "bootstrap: importing the root file system into Docker (95 s elapsed)",
            ]
        );
        assert_eq!(p.phase(), Some(Phase::Importing));
    }

    #[test]
    fn progress_says_nothing_before_a_phase() {
        let t0 = Instant::now();
        let mut p = Progress::new(t0, Duration::from_secs(1));
        assert_eq!(p.observe("W: noise", t0 + Duration::from_secs(5)), None);
        assert_eq!(p.phase(), None);
    }
}
