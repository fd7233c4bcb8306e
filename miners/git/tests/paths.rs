//! Rule 1's path policy on repositories built here: changelog fragments, `.mailmap` edits, Sphinx
//! pages, Maven `src/site` pages and Cython files, each decision checked under the default `code`
//! rule, JETO's literal `strict` rule and the compiled-extensions option.

mod common;

use common::{Fixture, check_explanations, java_class, read_candidates};
use etip_core::candidate::{Candidate, Language};
use etip_mine_git::{MineConfig, NoProgress, PathPolicy, RejectReason, mine};
use git2::Oid;

/// The candidates and the decision counts of one run under `paths`.
fn run(
    fx: &Fixture,
    lang: Language,
    paths: PathPolicy,
    max_files: usize,
) -> (Vec<Candidate>, MineConfig, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("candidates.jsonl");
    let mut cfg = fx.config(lang, &out);
    cfg.paths = paths;
    cfg.max_files = max_files;
    mine(&cfg, &mut NoProgress).unwrap();
    (read_candidates(&out), cfg, dir)
}

fn find(cands: &[Candidate], oid: Oid) -> &Candidate {
    cands
        .iter()
        .find(|c| c.patched_commit == oid.to_string())
        .unwrap_or_else(|| panic!("{oid} is a candidate"))
}

fn module(n: u32) -> String {
    format!(
        "\"\"\"Units.\"\"\"\n\n\ndef scale(x):\n    return x * {n}\n\n\ndef other():\n    return 0\n"
    )
}

#[test]
fn python_documentation_changelogs_and_metadata_are_set_aside() {
    let mut fx = Fixture::new();
    let code = "astropy/units/core.py";
    let (m1, m2, m3) = (module(1), module(2), module(3));
    fx.commit(
        &[
            ("pyproject.toml", Some("[project]\nname = \"astropy\"\n")),
            ("astropy/__init__.py", Some("")),
            ("astropy/units/__init__.py", Some("")),
            (code, Some(&m1)),
            ("astropy/units/data/prefixes.txt", Some("kilo 1e3\n")),
        ],
        "Initial import",
        Some(RejectReason::NonSourceFile),
        "pyproject.toml",
    );
    // (commit, decision under `strict`)
    let mut strict: Vec<(Oid, Option<RejectReason>)> = Vec::new();
    let mut step = |fx: &mut Fixture,
                    changes: &[(&str, Option<&str>)],
                    label: &'static str,
                    code_rule: Option<RejectReason>,
                    strict_rule: Option<RejectReason>| {
        let oid = fx.commit(changes, label, code_rule, label);
        strict.push((oid, strict_rule));
        oid
    };
    let non_source = Some(RejectReason::NonSourceFile);
    let fragment = step(
        &mut fx,
        &[
            (code, Some(&m2)),
            ("docs/changes/units/16742.perf.rst", Some("Faster.\n")),
        ],
        "Speed up scale (towncrier fragment)",
        None,
        non_source,
    );
    let changelog = step(
        &mut fx,
        &[(code, Some(&m3)), ("CHANGES.rst", Some("3.0\n- faster\n"))],
        "Speed up scale (CHANGES.rst)",
        None,
        non_source,
    );
    let mailmap = step(
        &mut fx,
        &[
            (code, Some(&m1)),
            (".mailmap", Some("Dev <dev@example.com>\n")),
            ("AUTHORS", Some("Dev\n")),
        ],
        "Revert the scale (mailmap, authors)",
        None,
        non_source,
    );
    let sphinx = step(
        &mut fx,
        &[
            (code, Some(&m2)),
            ("doc/src/modules/units.rst", Some("Units\n=====\n")),
            ("doc/src/conf.py", Some("project = 'astropy'\n")),
            ("README.md", Some("# astropy\n")),
        ],
        "Speed up scale again (docs, Sphinx conf, README)",
        Some(RejectReason::Duplicate),
        non_source,
    );
    step(
        &mut fx,
        &[("CHANGES.rst", Some("3.0\n- faster\n- smaller\n"))],
        "Changelog only",
        Some(RejectReason::OnlyIgnoredFiles),
        non_source,
    );
    step(
        &mut fx,
        &[
            (code, Some(&m3)),
            ("astropy/units/data/prefixes.txt", Some("kilo 1000\n")),
        ],
        "Package data is not documentation",
        non_source,
        non_source,
    );
    step(
        &mut fx,
        &[(code, Some(&m1)), ("setup.cfg", Some("[metadata]\n"))],
        "Build configuration",
        non_source,
        non_source,
    );
    step(
        &mut fx,
        &[
            (code, Some(&m2)),
            (
                "astropy/units/tests/test_core.py",
                Some("def test(): pass\n"),
            ),
            ("CHANGES.rst", Some("3.1\n")),
        ],
        "A test file rejects under both rules",
        Some(RejectReason::TestFile),
        non_source,
    );
    step(
        &mut fx,
        &[
            (code, Some(&m2.replace("return 0", "return 0  # zero"))),
            ("docs/changes/units/1.rst", Some("Comment.\n")),
        ],
        "The semantic rule sees the code files only",
        Some(RejectReason::WhitespaceOrCommentOnly),
        non_source,
    );
    let two = "astropy/units/quantity.py";
    let many_docs: Vec<(String, String)> = (0..3)
        .map(|i| (format!("docs/units/page{i}.rst"), format!("Page {i}\n")))
        .collect();
    let mut changes: Vec<(&str, Option<&str>)> =
        vec![(code, Some(&m3)), (two, Some("def q():\n    return 1\n"))];
    changes.extend(
        many_docs
            .iter()
            .map(|(p, c)| (p.as_str(), Some(c.as_str()))),
    );
    let counted = step(
        &mut fx,
        &changes,
        "--max-files counts code files",
        None,
        non_source,
    );

    let (cands, cfg, _d) = run(&fx, Language::Python, PathPolicy::default(), 2);
    check_explanations(&fx, &cfg);
    let c = find(&cands, fragment);
    assert_eq!(c.changed_files, vec![code.to_string()]);
    assert_eq!(c.ignored_files, vec!["docs/changes/units/16742.perf.rst"]);
    assert_eq!(c.changed_functions, vec!["astropy.units.core.scale"]);
    assert_eq!(c.changed_modules, vec!["astropy"]);
    assert_eq!(c.diff_stats.files, 1);
    assert!(c.extension_files.is_empty());
    assert_eq!(find(&cands, changelog).ignored_files, vec!["CHANGES.rst"]);
    let m = find(&cands, mailmap);
    assert_eq!(m.ignored_files, vec![".mailmap", "AUTHORS"]);
    // The Sphinx commit repeats the fragment commit's code change: the diff hash leaves the
    // ignored files out, so it is that candidate's duplicate.
    assert_eq!(
        find(&cands, fragment).duplicates,
        vec![sphinx.to_string()],
        "same code change, different documentation"
    );
    let n = find(&cands, counted);
    assert_eq!(n.changed_files.len(), 2);
    assert_eq!(n.ignored_files.len(), 3);

    // JETO's literal rule: every commit that touched a non-source file is rejected, as before.
    let mut fx_strict = fx;
    fx_strict.expect = std::iter::once((fx_strict.expect[0].0, non_source, "pyproject.toml"))
        .chain(strict.iter().map(|(o, r)| (*o, *r, "strict")))
        .collect();
    let (cands, cfg, _d) = run(&fx_strict, Language::Python, PathPolicy::strict(), 2);
    check_explanations(&fx_strict, &cfg);
    assert!(cands.is_empty(), "{cands:?}");
}

#[test]
fn cython_sources_count_as_code_only_when_asked() {
    let mut fx = Fixture::new();
    let pyx = "scipy/special/_ufuncs.pyx";
    let body = "def erf(double x):\n    # fast path\n    if x > 6:\n        return 1.0\n    return _erf(x)\n";
    fx.commit(
        &[
            ("pyproject.toml", Some("[project]\nname = \"scipy\"\n")),
            ("scipy/__init__.py", Some("")),
            (
                "scipy/special/__init__.py",
                Some("def erf(x):\n    return x\n"),
            ),
            (pyx, Some(body)),
            (
                "scipy/special/meson.build",
                Some("py.extension_module('_ufuncs')\n"),
            ),
        ],
        "Initial import",
        Some(RejectReason::NonSourceFile),
        "pyproject.toml",
    );
    let faster = body.replace("x > 6", "x > 5.9");
    let kept = fx.commit(
        &[
            (pyx, Some(&faster)),
            (
                "scipy/special/meson.build",
                Some("py.extension_module('_ufuncs', cython_args: ['-O3'])\n"),
            ),
            (
                "doc/release/upcoming_changes/1.perf.rst",
                Some("Faster erf.\n"),
            ),
        ],
        "ENH: special: faster erf",
        None,
        "pyx and meson.build",
    );
    fx.commit(
        &[(pyx, Some(&faster.replace("# fast path", "# the fast path")))],
        "DOC: comment",
        Some(RejectReason::WhitespaceOrCommentOnly),
        "comment in a .pyx",
    );
    let mixed = fx.commit(
        &[
            (
                pyx,
                Some(&faster.replace("return 1.0", "return 1.0 - 1e-17")),
            ),
            (
                "scipy/special/__init__.py",
                Some("def erf(x):\n    return -x\n"),
            ),
        ],
        "ENH: both",
        None,
        "pyx and py",
    );
    let with_ext = PathPolicy {
        compiled_extensions: true,
        ..PathPolicy::default()
    };
    let (cands, cfg, _d) = run(&fx, Language::Python, with_ext, 20);
    check_explanations(&fx, &cfg);
    let c = find(&cands, kept);
    assert_eq!(
        c.extension_files,
        vec!["scipy/special/_ufuncs.pyx", "scipy/special/meson.build"]
    );
    assert_eq!(c.changed_files, c.extension_files);
    assert_eq!(
        c.ignored_files,
        vec!["doc/release/upcoming_changes/1.perf.rst"]
    );
    assert!(c.changed_functions.is_empty(), "no grammar for Cython");
    let m = find(&cands, mixed);
    assert_eq!(m.changed_functions, vec!["scipy.special.erf"]);
    assert_eq!(m.extension_files, vec![pyx]);

    // Without the option a .pyx is a non-source file.
    for e in fx.expect.iter_mut().skip(1) {
        e.1 = Some(RejectReason::NonSourceFile);
    }
    let (cands, cfg, _d) = run(&fx, Language::Python, PathPolicy::default(), 20);
    check_explanations(&fx, &cfg);
    assert!(cands.is_empty());
}

#[test]
fn java_maven_site_pages_are_documentation() {
    let mut fx = Fixture::new();
    let src = "src/main/java/org/apache/ibatis/session/Configuration.java";
    let v1 = java_class(
        "org.apache.ibatis.session",
        "Configuration",
        "    int size() {\n        return 1;\n    }\n",
    );
    fx.commit(
        &[
            ("pom.xml", Some("<project/>")),
            ("mvnw", Some("#!/bin/sh\n")),
            (src, Some(&v1)),
        ],
        "Initial import",
        Some(RejectReason::NonSourceFile),
        "pom.xml",
    );
    // The shape of JETO-Bench's mybatis ETIP ddd931bd09: code and a translated site page.
    let etip = fx.commit(
        &[
            (src, Some(&v1.replace("return 1;", "return 2;"))),
            (
                "src/site/es/xdoc/configuration.xml",
                Some("<document><body>cache</body></document>\n"),
            ),
        ],
        "Faster configuration lookups",
        None,
        "java and src/site",
    );
    fx.commit(
        &[
            (src, Some(&v1)),
            ("src/main/resources/org/messages.txt", Some("hello\n")),
        ],
        "A resource is packaged, not documentation",
        Some(RejectReason::NonSourceFile),
        "resource",
    );
    let (cands, cfg, _d) = run(&fx, Language::Java, PathPolicy::default(), 20);
    check_explanations(&fx, &cfg);
    let c = find(&cands, etip);
    assert_eq!(c.ignored_files, vec!["src/site/es/xdoc/configuration.xml"]);
    assert_eq!(
        c.changed_functions,
        vec!["org.apache.ibatis.session.Configuration#size"]
    );
    fx.expect[1].1 = Some(RejectReason::NonSourceFile);
    let (cands, cfg, _d) = run(&fx, Language::Java, PathPolicy::strict(), 20);
    check_explanations(&fx, &cfg);
    assert!(cands.is_empty());
}
