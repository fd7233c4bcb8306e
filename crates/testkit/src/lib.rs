//! Helpers the test suites share: git, index entries for repositories written through libgit2,
//! copying trees, a local chat-completions endpoint ([`chat`]), a Docker Swarm of real engines in network namespaces ([`cluster`]), rendering HTML reports in headless Chromium ([`render_html`]), and the fixture
//! repositories of `etip build`
//! and `etip measure` (`crates/fixtures/repos/<kind>/<step>/`, one commit per step folder,
//! each step's files written over the previous tree). A dev-dependency only; it panics with a
//! clear message where a test could not go on.
//!
//! ```no_run
//! let dir = std::env::temp_dir().join("etip-fixture-example");
//! let commits = etip_testkit::fixture_repo("python", &dir.join("repo"));
//! assert_eq!(commits.len(), 4);
//! ```

pub mod chat;
pub mod cluster;
pub mod registry;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The fixture folders (`maven/`, `python/`).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/repos")
}

/// Runs git in `dir` with a fixed author, committer and date; returns its trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "etip")
        .env("GIT_AUTHOR_EMAIL", "etip@example.invalid")
        .env("GIT_COMMITTER_NAME", "etip")
        .env("GIT_COMMITTER_EMAIL", "etip@example.invalid")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .output()
        .expect("git must be installed for the fixture repositories");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Copies the files and folders of `from` into `to` (which exists).
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("a readable fixture folder") {
        let entry = entry.expect("a readable fixture entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            std::fs::create_dir_all(&dest).expect("a writable test folder");
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).expect("a writable test folder");
        }
    }
}

/// The folder of fixture `kind`: the shared repositories (`maven`, `python`) in
/// `crates/fixtures/repos/`, else the build tests' own (`online/...`) in
/// `harness/build/tests/fixtures/`.
pub fn fixture_dir(kind: &str) -> PathBuf {
    let shared = fixtures().join(kind);
    if shared.is_dir() {
        return shared;
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../harness/build/tests/fixtures")
        .join(kind)
}

/// Makes `dir` a git repository with one commit per step folder of the fixture `kind` (see
/// [`fixture_dir`]); returns the commit ids in step order.
pub fn fixture_repo(kind: &str, dir: &Path) -> Vec<String> {
    let mut steps: Vec<PathBuf> = std::fs::read_dir(fixture_dir(kind))
        .unwrap_or_else(|e| panic!("fixture {kind}: {e}"))
        .map(|e| e.expect("a readable fixture entry").path())
        .filter(|p| p.is_dir())
        .collect();
    steps.sort();
    std::fs::create_dir_all(dir).expect("a writable test folder");
    git(dir, &["init", "-q", "-b", "main"]);
    let mut commits = Vec::new();
    for step in steps {
        copy_tree(&step, dir);
        git(dir, &["add", "-A"]);
        let name = step
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        git(dir, &["commit", "-q", "-m", &name]);
        commits.push(git(dir, &["rev-parse", "HEAD"]));
    }
    commits
}

/// An index entry for a blob at `path` (mode 100644, no stat data): set `id` and `file_size`, or
/// use it with `Index::add_frombuffer`, to write commits through libgit2 without a work tree.
pub fn index_entry(path: &str) -> git2::IndexEntry {
    git2::IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: 0o100644,
        uid: 0,
        gid: 0,
        file_size: 0,
        id: git2::Oid::ZERO_SHA1,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
}

/// Every path under `dir` (symbolic links not followed) with its size and modification time: two
/// snapshots taken around a command show whether it wrote anything there.
pub fn tree_snapshot(
    dir: &Path,
) -> std::collections::BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).unwrap_or_else(|e| panic!("listing {}: {e}", d.display()));
        for e in entries {
            let path = e.expect("a directory entry").path();
            let md = path
                .symlink_metadata()
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            if md.is_dir() {
                stack.push(path.clone());
            }
            let mtime = md
                .modified()
                .expect("modification times on this file system");
            out.insert(path, (md.len(), mtime));
        }
    }
    out
}

/// What a headless browser drew of an HTML page ([`render_html`]).
#[derive(Debug, Clone)]
pub struct Rendered {
    /// Width and height of the screenshot in pixels.
    pub size: (u32, u32),
    /// The screenshot's pixels, RGB, row by row.
    pub rgb: Vec<u8>,
    /// Where the screenshot was written (kept for a person to look at when a check fails).
    pub png: PathBuf,
}

impl Rendered {
    /// Share of the pixels that are not (nearly) white.
    pub fn ink(&self) -> f64 {
        let px = self.rgb.chunks_exact(3);
        let n = px.len().max(1);
        px.filter(|p| p.iter().any(|&c| c < 235)).count() as f64 / n as f64
    }

    /// Pixels within `tolerance` (per channel) of the colour `#rrggbb`.
    pub fn pixels_of(&self, hex: &str, tolerance: u8) -> usize {
        let c = |i: usize| u8::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).expect("#rrggbb");
        let want = [c(0), c(1), c(2)];
        self.rgb
            .chunks_exact(3)
            .filter(|p| p.iter().zip(want).all(|(a, b)| a.abs_diff(b) <= tolerance))
            .count()
    }
}

/// The headless Chromium the rendering tests use: `$ETIP_CHROMIUM`, else `chromium`,
/// `chromium-browser` or `google-chrome` on the PATH. Panics with how to install it when none is
/// there (scripts/test.sh installs Debian's `chromium`).
pub fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("ETIP_CHROMIUM") {
        return PathBuf::from(p);
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        let found = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        });
        if let Some(p) = found {
            return p;
        }
    }
    panic!(
        "the HTML rendering tests need a headless Chromium and found none: install it \
         (`apt-get install chromium`, which scripts/test.sh does as root) or set ETIP_CHROMIUM"
    );
}

/// Runs `script` with the tests' Python (`$ETIP_TEST_PYTHON`, else scripts/test.sh's
/// `target/test-venv`, else `python3`), the given arguments appended, and returns its stdout.
/// Panics with how to get the modules (scripts/test.sh installs pyarrow, numpy and scipy into
/// the venv) when the script fails.
pub fn python(script: &str, args: &[&std::ffi::OsStr]) -> String {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-venv/bin/python");
    let python = std::env::var("ETIP_TEST_PYTHON").unwrap_or_else(|_| {
        if venv.exists() {
            venv.display().to_string()
        } else {
            "python3".into()
        }
    });
    let o = std::process::Command::new(&python)
        .args(["-c", script])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{python}: {e} (scripts/test.sh makes target/test-venv)"));
    assert!(
        o.status.success(),
        "{python} failed (scripts/test.sh installs pyarrow, numpy and scipy into \
         target/test-venv; ETIP_TEST_PYTHON names another): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("the script prints UTF-8")
}

/// Renders `html` (a file) in headless Chromium at `width` × `height` CSS pixels and returns the
/// screenshot, written next to the page as `<page>.png`. No network: the page must be
/// self-contained. Panics when the browser fails, times out (120 s) or writes no image.
pub fn render_html(html: &Path, width: u32, height: u32) -> Rendered {
    let png = html.with_extension("png");
    let profile = tempfile::tempdir().expect("a browser profile folder");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-extensions",
            "--force-device-scale-factor=1",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("headless Chromium starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for Chromium") {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "headless Chromium did not render {} in 120 s",
                html.display()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    assert!(
        status.success() && png.is_file(),
        "headless Chromium failed on {} ({status}):\n{err}",
        html.display()
    );
    let mut decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png).expect("screenshot readable"),
    ));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().expect("a PNG screenshot");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("PNG frame");
    let channels = info.color_type.samples();
    let rgb: Vec<u8> = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .flat_map(|p| {
            if channels >= 3 {
                [p[0], p[1], p[2]]
            } else {
                [p[0]; 3]
            }
        })
        .collect();
    Rendered {
        size: (info.width, info.height),
        rgb,
        png,
    }
}
