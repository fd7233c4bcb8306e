//! The toolchain of a commit's time (`etip_toolchain::era`): a commit's files, read as the build
//! reads them (setup.py, setup.cfg, pyproject.toml, tox.ini, .travis.yml, a GitHub workflow,
//! appveyor.yml, .python-version, runtime.txt, pom.xml, toolchains.xml), then the Python and JDK
//! chosen among a fixed set of configured versions. Input: the files' texts separated by NUL
//! bytes, in that order; then a commit time. A choice is one of the configured versions; an
//! unavailable toolchain names a version and a registry image.
#![no_main]

use etip_toolchain::era;
use libfuzzer_sys::fuzz_target;

const FILES: [&str; 12] = [
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "tox.ini",
    ".travis.yml",
    ".github/workflows/ci.yml",
    "appveyor.yml",
    ".python-version",
    "runtime.txt",
    "pom.xml",
    "toolchains.xml",
    ".mvn/jvm.config",
];

fuzz_target!(|data: &[u8]| {
    let (time, rest) = match data.split_first_chunk::<8>() {
        Some((t, rest)) => (i64::from_le_bytes(*t) % 4_102_444_800, rest),
        None => (1_500_000_000, data),
    };
    let texts: Vec<String> = rest
        .split(|b| *b == 0)
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect();
    let files: Vec<(&str, &str)> = FILES
        .iter()
        .zip(texts.iter())
        .map(|(p, t)| (*p, t.as_str()))
        .collect();
    let read = |path: &str| {
        files
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, t)| t.to_string())
    };
    let paths: Vec<&str> = files.iter().map(|(p, _)| *p).collect();
    let support = era::python_support(&paths, &read);
    let available: Vec<String> = ["3.9", "3.11", "3.13"].map(String::from).to_vec();
    match era::choose_python(&support, time, &available) {
        Ok(c) => {
            assert!(available.contains(&c.version), "chose {}", c.version);
            assert!(c.older.iter().all(|v| available.contains(v)));
        }
        Err(u) => assert!(!u.wanted.is_empty() && !u.registry_image.is_empty()),
    }
    let jdks: Vec<String> = ["11", "17", "21", "25"].map(String::from).to_vec();
    let request = era::jdk_evidence(&paths, &read);
    match era::choose_jdk(request.as_ref(), "17", &jdks) {
        Ok(c) => assert!(jdks.contains(&c.version), "chose JDK {}", c.version),
        Err(u) => assert!(!u.wanted.is_empty() && !u.registry_image.is_empty()),
    }
});
