//! Helpers shared by the fuzz targets: the properties every reader must keep, and a scratch
//! folder for the readers that only read from a path.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Longest error message accepted: readers may quote a clipped piece of the input, never all of it.
pub const MAX_ERROR_BYTES: usize = 4096;

/// An error of a reader: a non-empty message of bounded length.
///
/// `what` names the reader in the panic message. With `ETIP_FUZZ_DEBUG` set, every error is
/// printed (to see what a reader says about an input: `ETIP_FUZZ_DEBUG=1 cargo fuzz run t input`).
pub fn check_error(what: &str, message: &str) {
    if std::env::var_os("ETIP_FUZZ_DEBUG").is_some() {
        eprintln!("{what}: error of {} bytes: {message}", message.len());
    }
    assert!(
        !message.trim().is_empty(),
        "{what}: an error with an empty message"
    );
    assert!(
        message.len() < MAX_ERROR_BYTES,
        "{what}: an error message of {} bytes (limit {MAX_ERROR_BYTES}); it starts with {:?}",
        message.len(),
        message.chars().take(300).collect::<String>()
    );
}

/// A number the reader promises finite and not negative.
pub fn check_time(what: &str, x: f64) {
    assert!(
        x.is_finite() && x >= 0.0,
        "{what}: the reader accepted {x}, promised finite and >= 0"
    );
}

/// The text the score readers see: UTF-8 with a leading byte order mark dropped (`None` when the
/// input is not UTF-8).
pub fn text_as_read(data: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(data).ok()?;
    Some(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// Lines a JSON Lines reader reads: those that are not blank.
pub fn non_blank_lines(text: &str) -> usize {
    text.lines().filter(|l| !l.trim().is_empty()).count()
}

/// The process's scratch folder, under `TMPDIR` (libFuzzer ends the process with `exit`, so it is
/// not removed: scripts/fuzz.sh points `TMPDIR` into its own work folder, which it removes).
fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        tempfile::Builder::new()
            .prefix("etip-fuzz-")
            .tempdir()
            .expect("a scratch folder")
    })
    .path()
}

/// Writes `data` to `<scratch>/<rel>` (folders created) and returns the path, for the readers that
/// have no in-memory entry point.
pub fn write_scratch(rel: &str, data: &[u8]) -> PathBuf {
    let path = scratch().join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("a scratch subfolder");
    }
    std::fs::write(&path, data).expect("writing the scratch file");
    path
}

/// Reads `data` with `etip_score::input::load_file`, the only entry point of the score readers
/// (path-based: the format is told by content and extension), from `<scratch>/<rel>`, and checks
/// the properties every score reader promises. Returns the submission when it was read.
pub fn load_score(what: &str, rel: &str, data: &[u8]) -> Option<etip_score::input::Submission> {
    let path = write_scratch(rel, data);
    match etip_score::input::load_file(&path, None) {
        Ok(sub) => {
            check_submission(what, &sub);
            Some(sub)
        }
        Err(e) => {
            check_error(what, &e.to_string());
            None
        }
    }
}

/// What every submission the score readers return promises (`etip_score::input`): at least one
/// task, unique non-blank instance ids, and every number read from the input finite and >= 0 (with
/// fractions at most 1 and ratios not 0).
pub fn check_submission(what: &str, sub: &etip_score::input::Submission) {
    use etip_score::input::Format;
    assert!(!sub.tasks.is_empty(), "{what}: a submission without tasks");
    let mut ids = std::collections::BTreeSet::new();
    for t in &sub.tasks {
        assert!(
            !t.instance_id.trim().is_empty(),
            "{what}: a task with a blank instance id"
        );
        assert!(
            ids.insert(t.instance_id.as_str()),
            "{what}: instance id {:?} twice",
            t.instance_id
        );
        if let Some(p) = t.pass_fraction {
            check_time(what, p);
            assert!(p <= 1.0, "{what}: pass_fraction {p} above 1");
        }
        for r in [t.speedup, t.gold_speedup].into_iter().flatten() {
            check_time(what, r);
            assert!(r != 0.0, "{what}: a speedup of 0 was accepted");
        }
        for test in &t.tests {
            for &x in test.base.iter().chain(&test.patched).chain(&test.reference) {
                check_time(what, x);
            }
        }
        if let Some(m) = &t.per_test_means {
            assert!(
                m.base.len() == m.patch.len() && m.base.len() == m.commit.len(),
                "{what}: per_test_means of different lengths"
            );
            for &x in m.base.iter().chain(&m.patch).chain(&m.commit) {
                check_time(what, x);
            }
        }
        if let Some(sr) = t.official.as_ref().and_then(|o| o.speedup_ratio) {
            check_time(what, sr);
        }
        if let (Some(s), Some(g)) = (t.speedup, t.gold_speedup) {
            // Both finite and > 0: the ratio the rules divide by is defined (may overflow to inf
            // only for extreme inputs, which the rules must then handle).
            assert!(!(s / g).is_nan(), "{what}: speedup / gold_speedup is NaN");
        }
    }
    if let Some(n) = sub.total_instances {
        assert!(
            n >= sub.tasks.len(),
            "{what}: total_instances {n} below the {} tasks read",
            sub.tasks.len()
        );
    }
    if let Some(s) = sub.official_score {
        assert!(s.is_finite(), "{what}: official score {s}");
    }
    for (k, v) in &sub.official_summary {
        assert!(v.is_finite(), "{what}: official summary {k} = {v}");
    }
    match sub.format {
        Format::EtipMeasurements => assert_eq!(
            sub.measurements.len(),
            sub.tasks.len(),
            "{what}: measurements and tasks differ in number"
        ),
        _ => assert!(
            sub.measurements.is_empty(),
            "{what}: measurements outside a measurements file"
        ),
    }
}
