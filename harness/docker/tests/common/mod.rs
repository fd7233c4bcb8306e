//! Shared helpers of the engine tests: tiny offline images made from the host's own programs, and
//! a test runner that gives each test its own namespace and always removes its containers.
//!
//! No registry is reachable and no image can be assumed to exist, so the tests import root
//! filesystems of a few megabytes themselves: the host's `dash` and coreutils programs with the
//! shared libraries `ldd` lists for them. The images are tagged by a hash of their content,
//! labelled `etip.managed=true etip.kind=test etip.namespace=etiptest-docker` (so `etip clean`
//! removes them) and reused by later runs.

#![allow(dead_code)]

use bytes::Bytes;
use etip_docker::{CleanFilter, Engine, LABEL_NAMESPACE};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};

/// Namespace of the test images (kept between runs).
pub const IMAGE_NAMESPACE: &str = "etiptest-docker";

/// Which programs a test image holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flavour {
    /// `sh` and the coreutils programs the tests use, `timeout` included.
    Full,
    /// Like `Full` without `timeout`.
    NoTimeout,
    /// `sleep` only (no shell).
    SleepOnly,
}

const FULL: &[&str] = &[
    "sh", "sleep", "timeout", "cat", "ls", "env", "mkdir", "true", "false", "echo", "touch",
];

fn find_program(name: &str) -> PathBuf {
    let candidates: &[&str] = if name == "sh" {
        &["/usr/bin/dash", "/bin/dash", "/bin/sh"]
    } else {
        &["/usr/bin", "/bin"]
    };
    for c in candidates {
        let p = if name == "sh" {
            PathBuf::from(c)
        } else {
            Path::new(c).join(name)
        };
        if p.is_file() {
            return std::fs::canonicalize(&p).unwrap();
        }
    }
    panic!("the tests build their image from the host's programs, and {name} is missing");
}

/// Shared libraries of `program` (absolute paths as the loader looks them up).
fn libraries(program: &Path) -> Vec<PathBuf> {
    let out = std::process::Command::new("ldd")
        .arg(program)
        .output()
        .expect("ldd must be installed to build the test image");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// An uncompressed root filesystem tar: the programs of `flavour` in `/usr/bin` (`/bin` links
/// there), their libraries, `/tmp`, and `/work/original/a.txt` and `/work/patched/secret.txt`.
pub fn rootfs(flavour: Flavour) -> Vec<u8> {
    let names: Vec<&str> = match flavour {
        Flavour::Full => FULL.to_vec(),
        Flavour::NoTimeout => FULL.iter().copied().filter(|n| *n != "timeout").collect(),
        Flavour::SleepOnly => vec!["sleep"],
    };
    // path in the image -> (content, mode); BTreeMap for a stable order.
    let mut files: BTreeMap<String, (Vec<u8>, u32)> = BTreeMap::new();
    for name in names {
        let program = find_program(name);
        files.insert(
            format!("usr/bin/{name}"),
            (std::fs::read(&program).unwrap(), 0o755),
        );
        for lib in libraries(&program) {
            let content = std::fs::read(&lib).unwrap();
            files.insert(
                lib.to_string_lossy().trim_start_matches('/').to_string(),
                (content, 0o755),
            );
        }
    }
    files.insert(
        "work/original/a.txt".into(),
        (b"original\n".to_vec(), 0o644),
    );
    files.insert(
        "work/patched/secret.txt".into(),
        (b"patched\n".to_vec(), 0o644),
    );
    let mut dirs: BTreeMap<String, u32> = BTreeMap::new();
    for d in ["proc", "sys", "dev", "etc", "root", "tmp"] {
        dirs.insert(d.into(), if d == "tmp" { 0o1777 } else { 0o755 });
    }
    for path in files.keys() {
        let mut at = Path::new(path).parent();
        while let Some(p) = at.filter(|p| !p.as_os_str().is_empty()) {
            dirs.entry(p.to_string_lossy().into_owned())
                .or_insert(0o755);
            at = p.parent();
        }
    }
    let mut b = tar::Builder::new(Vec::new());
    let header = |kind: tar::EntryType, size: u64, mode: u32| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(mode);
        h.set_uid(0);
        h.set_gid(0);
        h.set_mtime(0);
        h
    };
    for (d, mode) in &dirs {
        let mut h = header(tar::EntryType::Directory, 0, *mode);
        b.append_data(&mut h, format!("{d}/"), std::io::empty())
            .unwrap();
    }
    let mut h = header(tar::EntryType::Symlink, 0, 0o777);
    b.append_link(&mut h, "bin", "usr/bin").unwrap();
    for (path, (content, mode)) in &files {
        let mut h = header(tar::EntryType::Regular, content.len() as u64, *mode);
        b.append_data(&mut h, path, content.as_slice()).unwrap();
    }
    b.into_inner().unwrap()
}

static IMAGES: tokio::sync::Mutex<BTreeMap<String, String>> =
    tokio::sync::Mutex::const_new(BTreeMap::new());

/// The test image of `flavour`, imported unless an image with the same content exists.
pub async fn image(engine: &Engine, flavour: Flavour) -> String {
    let key = format!("{flavour:?}");
    let mut known = IMAGES.lock().await;
    if let Some(tag) = known.get(&key) {
        return tag.clone();
    }
    let tar = rootfs(flavour);
    let hash = hex::encode(Sha256::digest(&tar));
    let repo = "etip-test/session-rootfs";
    let tag = format!("{}-{}", key.to_lowercase(), &hash[..12]);
    let full = format!("{repo}:{tag}");
    if engine.image(&full).await.unwrap().is_none() {
        let stream = futures_util::stream::once(async move { Ok(Bytes::from(tar)) });
        engine
            .import_rootfs(
                stream,
                repo,
                &tag,
                vec![
                    format!(
                        "LABEL etip.managed=true etip.kind=test {LABEL_NAMESPACE}={IMAGE_NAMESPACE}"
                    ),
                    "ENV PATH=/usr/bin:/bin".into(),
                    "CMD [\"sleep\", \"infinity\"]".into(),
                ],
            )
            .await
            .expect("importing the test image");
    }
    known.insert(key, full.clone());
    full
}

/// What a test body gets.
#[derive(Clone)]
pub struct Ctx {
    pub engine: Engine,
    /// The `Full` test image.
    pub image: String,
    /// The test's own namespace: label its sessions with it.
    pub ns: String,
}

/// Runs `body` against the real engine in namespace `etiptest-<name>-<pid>`, then removes every
/// container of that namespace, also when the body panicked (the panic is passed on). Fails with
/// a clear message when the engine is unreachable.
pub fn engine_test<F, Fut>(name: &str, body: F)
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let engine = Engine::connect().await.unwrap_or_else(|e| {
            panic!("these tests need the real Docker engine, and it is not usable: {e}")
        });
        let image = image(&engine, Flavour::Full).await;
        let ns = format!("etiptest-{name}-{}", std::process::id());
        let ctx = Ctx {
            engine: engine.clone(),
            image,
            ns: ns.clone(),
        };
        let result = tokio::spawn(body(ctx)).await;
        let cleaned = engine
            .clean(&CleanFilter {
                namespace: Some(ns.clone()),
                keep_kinds: Vec::new(),
                containers_only: false,
            })
            .await;
        if let Err(e) = result {
            std::panic::resume_unwind(e.into_panic());
        }
        let cleaned = cleaned.expect("cleaning the test's namespace");
        assert!(
            cleaned.containers.is_empty(),
            "the test left containers behind: {:?}",
            cleaned.containers
        );
    });
}
