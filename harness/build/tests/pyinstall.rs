//! `scripts/etip_pyinstall.py`, the env layer's installer of dependencies as of a date, read by
//! the host's `python3`: how it reads uv's answers (the messages of uv 0.13, copied from real
//! runs against PyPI), which pins of a commit it sets aside, and the dates it moves a package to.
//! The whole installer runs against a real index in `tests/online.rs`.

use std::path::Path;
use std::process::Command;

/// Runs `code` with the script imported as `p`; its stdout, trimmed.
fn python(code: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let out = Command::new("python3")
        .arg("-c")
        .arg(format!(
            "import sys; sys.path.insert(0, {:?}); import etip_pyinstall as p\n{code}",
            dir.display().to_string()
        ))
        .output()
        .expect("running python3");
    assert!(
        out.status.success(),
        "{code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn uv_naming_a_package_filtered_by_the_date_is_read() {
    let first = "error: No solution found when resolving dependencies\n  cause: Because there are no versions of black and you require black, we can conclude that your requirements are unsatisfiable.\n\nhint: `black` was filtered by `exclude-newer` to only include packages uploaded before 2016-03-01T00:00:00Z. The latest version satisfying the requirement is v26.10.1, published at 2026-10-10T04:13:38.808Z. Consider using `exclude-newer-package` to override the cutoff for this package.";
    let moved = "hint: `etipdemo-late` was filtered by `exclude-newer-package` to only include packages uploaded before 2021-06-02T00:00:00Z. The latest version satisfying the requirement is v1.0, published at 2025-01-01T00:00:00Z. Consider removing the setting or updating it to a later date.";
    for (text, name) in [(first, "black"), (moved, "etipdemo-late")] {
        let got = python(&format!("print(p.FILTERED.search({text:?}).group(1))"));
        assert_eq!(got, name);
    }
    let absent = "  cause: Because etipdemo-absent-xyz was not found in the package registry and you require etipdemo-absent-xyz, we can conclude that your requirements are unsatisfiable.";
    assert_eq!(
        python(&format!("print(p.named({absent:?}))")),
        "etipdemo-absent-xyz"
    );
    let gone = "  cause: Because there is no version of codecov==2.0.5 and you require codecov==2.0.5, we can conclude that your requirements are unsatisfiable.";
    assert_eq!(
        python(&format!("print(p.PIN_ABSENT.search({gone:?}).group(1))")),
        "codecov==2.0.5"
    );
    assert_eq!(
        python(&format!("print(p.named({gone:?}))")),
        "codecov==2.0.5"
    );
    let build = "error: Failed to download and build `py==1.4.12`\n  cause: Failed to resolve requirements from `setup.py` build";
    assert_eq!(python(&format!("print(p.named({build:?}))")), "py==1.4.12");
    assert_eq!(
        python("print(p.FILTERED.search('error: something else') is None)"),
        "True"
    );
    // pip's, when uv could not be fetched (an env layer without network).
    let pip = "Collecting etip-absent-package>=1.0\nERROR: Could not find a version that satisfies the requirement etip-absent-package>=1.0 (from versions: none)\nERROR: No matching distribution found for etip-absent-package>=1.0";
    assert_eq!(
        python(&format!("print(p.named({pip:?}))")),
        "etip-absent-package>=1.0"
    );
}

#[test]
fn relaxed_dates_move_one_two_four_years_then_away() {
    let got = python("print(' '.join(p.window('2015-12-02T00:00:00Z', s) for s in range(4)))");
    assert_eq!(
        got,
        "2016-12-01T00:00:00Z 2017-12-01T00:00:00Z 2019-12-01T00:00:00Z 2100-01-01T00:00:00Z"
    );
}

/// A release of 2017 that does not build on Python 3.9 (released 2020-10-05) next tries the
/// releases of the interpreter's time, not 2018's: as of + 4 years (2021-08), then one year after
/// the interpreter's release, then any; a filtered one walks 1, 2, 4 years as before.
#[test]
fn a_release_that_does_not_build_moves_to_the_interpreters_time() {
    let walk = |built: &str| {
        python(&format!(
            "d = '2017-08-03T00:00:00Z'\nout = []\nwhile d:\n    d = p.next_window('2017-08-03T00:00:00Z', d, {built}, '2020-10-05T00:00:00Z')\n    out.append(d or '-')\nprint(' '.join(out))"
        ))
    };
    assert_eq!(
        walk("True"),
        "2021-08-02T00:00:00Z 2021-10-05T00:00:00Z 2100-01-01T00:00:00Z -"
    );
    assert_eq!(
        walk("False"),
        "2018-08-03T00:00:00Z 2019-08-03T00:00:00Z 2021-08-02T00:00:00Z 2100-01-01T00:00:00Z -"
    );
    // A commit younger than the interpreter: its own windows.
    assert_eq!(
        python(
            "print(p.next_window('2022-03-01T00:00:00Z', '2022-03-01T00:00:00Z', True, '2020-10-05T00:00:00Z'))"
        ),
        "2023-03-01T00:00:00Z"
    );
}

/// On Python 3.9: pytest older than 3.0, coverage older than 5.0, pytest-cov older than 2.6 and
/// any pin of pytest's py and pluggy; on 3.11 the oldest that run there are later.
#[test]
fn pins_of_test_tools_too_old_for_the_interpreter_are_set_aside() {
    let lines = "['pytest==2.8.1', 'pytest>=2.8.0', 'pytest<3', 'pytest==3.0.4', 'Py==1.4.30', 'pluggy>=0.3', 'pytest-cov==1.6', 'pytest~=2.9', 'coverage==4.0.3', 'pytest-cov', 'requests']";
    let got = python(&format!(
        "import sys\nsys.version_info = (3, 9, 2)\nprint(' '.join(str(p.set_aside(l)) for l in {lines}))"
    ));
    assert_eq!(
        got,
        "True False True False True True True True True False False"
    );
    let got = python(
        "import sys\nsys.version_info = (3, 11, 2)\nprint(p.set_aside('pytest==3.0.4'), p.set_aside('pytest==7.2.1'))",
    );
    assert_eq!(got, "True False");
}

#[test]
fn packages_get_releases_from_the_first_day_they_work_on_the_interpreter() {
    let got = python(
        "import sys\nfor v in [(3, 7, 3), (3, 9, 2), (3, 11, 2)]:\n    sys.version_info = v\n    f = p.floors()\n    print(f['setuptools'], f['cffi'], f['pytest'])",
    );
    assert_eq!(
        got,
        "2019-01-28T00:00:00Z 2019-01-28T00:00:00Z 2016-08-19T00:00:00Z\n\
         2019-08-14T00:00:00Z 2020-10-05T00:00:00Z 2016-08-19T00:00:00Z\n\
         2022-10-24T00:00:00Z 2022-10-24T00:00:00Z 2022-10-24T00:00:00Z"
    );
}

/// What is installed is read from the interpreter's own path: a distribution that appears on
/// `sys.path` later (as Debian's pip puts its bundled wheels there when its vendored packages
/// load) does not count as installed.
#[test]
fn installed_packages_are_read_from_the_interpreters_own_path() {
    let got = python(
        "import os, sys, tempfile\n\
         d = tempfile.mkdtemp()\n\
         os.makedirs(os.path.join(d, 'certifi_x-2020.6.20.dist-info'))\n\
         open(os.path.join(d, 'certifi_x-2020.6.20.dist-info', 'METADATA'), 'w').write('Metadata-Version: 2.1\\nName: certifi-x\\nVersion: 2020.6.20\\n')\n\
         sys.path.append(d)\n\
         from importlib import metadata\n\
         print(metadata.version('certifi-x'), p.installed('certifi-x'), p.satisfied('certifi-x>=2017'))",
    );
    assert_eq!(got, "2020.6.20 None False");
    // By canonical name: `ruamel.yaml` asked for as `ruamel-yaml` (as uv names it).
    let got = python(
        "import os, tempfile\n\
         d = tempfile.mkdtemp()\n\
         os.makedirs(os.path.join(d, 'ruamel.yaml-0.15.72.dist-info'))\n\
         open(os.path.join(d, 'ruamel.yaml-0.15.72.dist-info', 'METADATA'), 'w').write('Metadata-Version: 2.1\\nName: ruamel.yaml\\nVersion: 0.15.72\\n')\n\
         p.OWN_PATH = [d]\n\
         print(p.installed('ruamel-yaml'), p.installed_version('Ruamel_Yaml'), p.installed('ruamel'))",
    );
    assert_eq!(got, "0.15.72 Ruamel_Yaml==0.15.72 None");
}

/// The `pytest` line etip adds when a project names no pytest is known from pydeps.json's
/// sources; a project's own is not.
#[test]
fn etips_own_pytest_line_is_told_from_the_projects() {
    let dir = tempfile::tempdir().unwrap();
    let reqs = dir.path().join("requirements.txt");
    std::fs::write(&reqs, "pytest\n").unwrap();
    let check = || {
        python(&format!(
            "print(p.etip_added_pytest({:?}))",
            reqs.display().to_string()
        ))
    };
    assert_eq!(check(), "False", "no pydeps.json");
    std::fs::write(
        dir.path().join("pydeps.json"),
        r#"{"sources": [{"file": "setup.py", "what": "tests_require"}]}"#,
    )
    .unwrap();
    assert_eq!(check(), "False");
    std::fs::write(
        dir.path().join("pydeps.json"),
        r#"{"sources": [{"file": "(etip)", "what": "pytest, always installed"}]}"#,
    )
    .unwrap();
    assert_eq!(check(), "True");
}

/// A pin of a release the index no longer has loses its version (extras and markers kept); other
/// lines stay as they were.
#[test]
fn a_pin_the_index_lost_is_unpinned_in_the_requirements() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.txt");
    std::fs::write(
        &path,
        "pytest>=3.0\nCodecov[toml] == 2.0.5 ; python_version >= \"3\"\nsix==1.10.0\n",
    )
    .unwrap();
    let code = format!(
        "print(p.unpin({path:?}, 'codecov==2.0.5'), p.unpin({path:?}, 'absent==1.0'))",
        path = path.to_str().unwrap()
    );
    assert_eq!(python(&code), "True False");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "pytest>=3.0\nCodecov[toml] ; python_version >= \"3\"\nsix==1.10.0\n"
    );
}

#[test]
fn a_setuptools_that_does_not_import_with_the_images_packages_gets_its_core_extra() {
    // A setuptools 74 that fails on import as it does beside Debian bullseye's importlib_metadata
    // 1.6 (seen on sympy 1.14 with Python 3.9), first on the path; the install is recorded.
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().display().to_string();
    let got = python(&format!(
        r#"
import os
site = {site:?}
os.makedirs(os.path.join(site, "setuptools"))
with open(os.path.join(site, "setuptools", "__init__.py"), "w") as f:
    f.write("raise AttributeError(\"module 'importlib_metadata' has no attribute 'EntryPoints'\")\n")
os.makedirs(os.path.join(site, "setuptools-74.1.2.dist-info"))
with open(os.path.join(site, "setuptools-74.1.2.dist-info", "METADATA"), "w") as f:
    f.write("Metadata-Version: 2.1\nName: setuptools\nVersion: 74.1.2\n")
calls = []
p.install_dated = lambda uv, args, as_of, relaxing, report: calls.append((args, as_of)) or 0
report = {{"note": "", "relaxed": []}}
# A setuptools that imports: nothing to do.
print(p.setuptools_core("uv", "2024-09-15T00:00:00Z", True, report), calls)
os.environ["PYTHONPATH"] = site
p.OWN_PATH.insert(0, site)
print(p.setuptools_core("uv", "2024-09-15T00:00:00Z", True, report), calls)
print(report["note"])
"#
    ));
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines[0], "0 []", "{got}");
    assert!(
        lines[1].contains("setuptools 74.1.2 does not import"),
        "{got}"
    );
    assert_eq!(
        lines[2], "0 [(['setuptools[core]==74.1.2'], '2024-09-15T00:00:00Z')]",
        "{got}"
    );
    assert!(lines[3].contains("setuptools[core]==74.1.2 added"), "{got}");
}
