//! Helpers shared by the binary's tests that need real repositories.

#![allow(dead_code)]

use std::path::Path;

/// The Python fixture of harness/build as a git repository in `dir`; returns its commits.
pub fn python_fixture(dir: &Path) -> Vec<String> {
    etip_testkit::fixture_repo("python", dir)
}
