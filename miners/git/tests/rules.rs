//! Every rule of SPEC 2 on repositories built here with git2, for Java and for Python.

mod common;

use std::collections::BTreeMap;

use common::{Fixture, check_explanations, check_same_when_packed, java_class, read_candidates};
use etip_core::candidate::{Candidate, IssueLinkKind, Language};
use etip_mine_git::{MineConfig, NoProgress, RejectReason, explain, mine};
use git2::{Oid, Repository};

const FOO_BODY: &str = "    private static final int LIMIT = 4;\n\n    private int bar(int x) {\n        return x + 1;\n    }\n\n    int baz() {\n        return 1;\n    }\n";

#[test]
fn java_rules() {
    let mut fx = Fixture::new();
    let foo = "core/src/main/java/a/Foo.java";
    let foo_test = "core/src/test/java/a/FooTest.java";
    let root = java_class("a", "Foo", FOO_BODY);
    fx.commit(
        &[
            ("pom.xml", Some("<project/>")),
            ("mvnw", Some("#!/bin/sh\n")),
            ("core/pom.xml", Some("<project/>")),
            (foo, Some(&root)),
            (
                foo_test,
                Some(&java_class("a", "FooTest", "    void t() {}\n")),
            ),
        ],
        "Initial import",
        Some(RejectReason::NonSourceFile),
        "root with pom.xml",
    );
    fx.commit(
        &[(
            foo_test,
            Some(&java_class("a", "FooTest", "    void t() { t(); }\n")),
        )],
        "Test only",
        Some(RejectReason::TestFile),
        "test-only",
    );
    let v1 = root.replace("return x + 1;", "return x + 2;");
    fx.commit(
        &[
            (foo, Some(&v1)),
            (
                foo_test,
                Some(&java_class("a", "FooTest", "    void t() { }\n")),
            ),
        ],
        "Source and test",
        Some(RejectReason::TestFile),
        "mixed source/test",
    );
    let many: Vec<(String, String)> = (0..21)
        .map(|i| {
            (
                format!("core/src/main/java/a/Util{i}.java"),
                java_class(
                    "a",
                    &format!("Util{i}"),
                    &format!("    int f() {{ return {i}; }}\n"),
                ),
            )
        })
        .collect();
    let changes: Vec<(&str, Option<&str>)> = many
        .iter()
        .map(|(p, c)| (p.as_str(), Some(c.as_str())))
        .collect();
    fx.commit(
        &changes,
        "Add utils",
        Some(RejectReason::TooManyFiles),
        "21 files",
    );
    let commented = v1.replace(
        "        return x + 2;",
        "        // add two\n        return x + 2; /* fast */",
    );
    fx.commit(
        &[(foo, Some(&commented))],
        "Comment",
        Some(RejectReason::WhitespaceOrCommentOnly),
        "comment-only",
    );
    // Rename-only: a file moved unchanged, and a file moved with only its package changed.
    fx.mv(
        "core/src/main/java/a/Util0.java",
        "core/src/main/java/b/Util0.java",
        None,
    );
    let util1 = fx.files["core/src/main/java/a/Util1.java"].replace("package a;", "package b;");
    fx.mv(
        "core/src/main/java/a/Util1.java",
        "core/src/main/java/b/Util1.java",
        Some(util1),
    );
    fx.commit(
        &[],
        "Move utils",
        Some(RejectReason::RenameOnly),
        "rename-only",
    );
    let imported = commented.replace(
        "import java.util.List;",
        "import java.util.List;\nimport java.util.Map;",
    );
    fx.commit(
        &[(foo, Some(&imported))],
        "Imports",
        Some(RejectReason::ImportOnly),
        "import-only",
    );
    let sig = imported.replace("private int bar(int x)", "protected int bar(int x)");
    fx.commit(
        &[(foo, Some(&sig))],
        "Visibility",
        Some(RejectReason::NoBodyChange),
        "modifier-only",
    );
    let body = sig.replace("return x + 2;", "return x << 1;");
    let body_sha = fx.commit(
        &[(foo, Some(&body))],
        "Speed up Foo.bar\n\nUses UTF-8 and Java-17 APIs as on JDK-8. Fixes #12 and GH-13, see DEMO-77 and https://github.com/acme/demo/issues/14",
        None,
        "body change",
    );
    let squash = body.replace("return 1;", "return 2;");
    let squash_sha = fx.commit(
        &[(foo, Some(&squash))],
        "Faster baz (#34)",
        None,
        "squash PR",
    );
    // A merged pull request: side commit, then a merge commit diffed against its first parent.
    let main_tip = fx.head().unwrap();
    let merged = squash.replace("LIMIT = 4;", "LIMIT = 8;");
    fx.files.insert(foo.to_string(), merged.clone());
    let side = fx.commit_with_parents("Tune limit", &[main_tip], false);
    let merge = fx.commit_with_parents(
        "Merge pull request #56 from dev/limit\n\nTune limit, fixes #55",
        &[main_tip, side],
        true,
    );
    fx.expect.push((merge, None, "merge PR"));
    // Duplicates: 2 -> 3, back to 2, then 2 -> 3 again.
    let three = merged.replace("return 2;", "return 3;");
    let first = fx.commit(
        &[(foo, Some(&three))],
        "Return three",
        None,
        "first of a duplicate pair",
    );
    fx.commit(&[(foo, Some(&merged))], "Revert", None, "revert");
    let dup = fx.commit(
        &[(foo, Some(&three))],
        "Return three again",
        Some(RejectReason::Duplicate),
        "duplicate",
    );
    let tip = fx.head().unwrap();
    let empty = {
        let parents = [tip];
        fx.commit_with_parents("Empty", &parents, true)
    };
    fx.expect
        .push((empty, Some(RejectReason::EmptyDiff), "empty commit"));

    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("candidates.jsonl");
    let mut cfg = fx.config(Language::Java, &out);
    // DEMO-77 is a key of the project's JIRA by configuration; JDK-8 is not.
    cfg.jira_projects = vec!["DEMO".into()];
    let summary = mine(&cfg, &mut NoProgress).unwrap();
    assert_eq!(summary.commits_scanned, fx.expect.len() as u64);
    assert_eq!(summary.repo.as_deref(), Some("acme/demo"));
    assert_eq!(summary.build_tools, vec!["mvnw", "pom.xml"]);
    assert!(summary.build_tool_supported);
    let mut expected_counts: BTreeMap<RejectReason, u64> =
        RejectReason::ALL.into_iter().map(|r| (r, 0)).collect();
    for (_, r, _) in &fx.expect {
        if let Some(r) = r {
            *expected_counts.get_mut(r).unwrap() += 1;
        }
    }
    assert_eq!(summary.rejected, expected_counts);
    check_explanations(&fx, &cfg);

    let cands = read_candidates(&out);
    check_same_when_packed(&fx, &cfg, &summary, &cands);
    let shas: Vec<&str> = cands.iter().map(|c| c.patched_commit.as_str()).collect();
    let expect_kept: Vec<String> = fx
        .expect
        .iter()
        .filter(|(_, r, _)| r.is_none())
        .map(|(o, _, _)| o.to_string())
        .collect();
    assert_eq!(
        shas, expect_kept,
        "history order, oldest first, duplicates folded"
    );
    assert_eq!(summary.candidates, cands.len() as u64);

    let c = &cands[0];
    assert_eq!(c.patched_commit, body_sha.to_string());
    assert_eq!(c.id, format!("acme__demo-{}", &body_sha.to_string()[..12]));
    assert_eq!(c.repo.as_deref(), Some("acme/demo"));
    assert_eq!(c.language, Language::Java);
    assert_eq!(c.changed_files, vec![foo.to_string()]);
    assert_eq!(c.changed_modules, vec!["core".to_string()]);
    assert_eq!(c.changed_functions, vec!["a.Foo#bar".to_string()]);
    assert_eq!(
        (
            c.diff_stats.files,
            c.diff_stats.insertions,
            c.diff_stats.deletions
        ),
        (1, 1, 1)
    );
    assert_eq!(c.author_date, "2024-01-01T10:00:00+01:00");
    let links: Vec<(IssueLinkKind, Option<u64>, Option<&str>)> = c
        .issues
        .iter()
        .map(|i| (i.kind, i.number, i.key.as_deref()))
        .collect();
    assert_eq!(
        links,
        vec![
            (IssueLinkKind::ClosingKeyword, Some(12), None),
            (IssueLinkKind::ClosingKeyword, Some(13), None),
            (IssueLinkKind::Url, Some(14), None),
            (IssueLinkKind::JiraKey, None, Some("DEMO-77")),
        ],
        "UTF-8 and Java-17 are not issue 8 or 17; JDK-8 is not the project's JIRA"
    );
    assert_eq!(c.pr_number, None);

    let s = cands
        .iter()
        .find(|c| c.patched_commit == squash_sha.to_string())
        .unwrap();
    assert_eq!(s.pr_number, Some(34));
    assert!(s.issues.is_empty());
    assert_eq!(s.changed_functions, vec!["a.Foo#baz".to_string()]);

    let m = cands
        .iter()
        .find(|c| c.patched_commit == merge.to_string())
        .unwrap();
    assert_eq!(m.pr_number, Some(56));
    assert_eq!(m.base_commit, main_tip.to_string());
    assert_eq!(m.changed_functions, vec!["a.Foo#LIMIT".to_string()]);
    assert_eq!(m.issues.len(), 1);
    assert_eq!(m.issues[0].number, Some(55));

    let d = cands
        .iter()
        .find(|c| c.patched_commit == first.to_string())
        .unwrap();
    assert_eq!(d.duplicates, vec![dup.to_string()]);
    let e = explain(&cfg, &dup.to_string()).unwrap();
    assert_eq!(e.duplicate_of.as_deref(), Some(first.to_string().as_str()));

    // Without the semantic rule, the comment/rename/import/modifier commits are kept.
    let out2 = out_dir.path().join("no-semantic.jsonl");
    let mut cfg2 = fx.config(Language::Java, &out2);
    cfg2.semantic = false;
    cfg2.jira_projects = vec!["DEMO".into()];
    let s2 = mine(&cfg2, &mut NoProgress).unwrap();
    assert_eq!(s2.candidates, summary.candidates + 4);
    assert!(
        read_candidates(&out2)
            .iter()
            .all(|c| c.changed_functions.is_empty())
    );

    // The output does not depend on the number of jobs.
    let out1 = out_dir.path().join("one-job.jsonl");
    let mut cfg1 = fx.config(Language::Java, &out1);
    cfg1.jobs = 1;
    cfg1.jira_projects = vec!["DEMO".into()];
    mine(&cfg1, &mut NoProgress).unwrap();
    assert_eq!(std::fs::read(&out1).unwrap(), std::fs::read(&out).unwrap());

    // A second run with the same settings decides nothing again and writes the same file.
    let before = std::fs::read(&out).unwrap();
    let again = mine(&cfg, &mut NoProgress).unwrap();
    assert_eq!(again.resumed, again.commits_scanned);
    assert_eq!(std::fs::read(&out).unwrap(), before);

    // The date window.
    let mut cfg3 = fx.config(Language::Java, &out_dir.path().join("window.jsonl"));
    cfg3.until = Some(1_704_067_200 + 5 * 3600);
    let s3 = mine(&cfg3, &mut NoProgress).unwrap();
    assert_eq!(s3.commits_scanned, 4);
    assert_eq!(s3.outside_window, fx.expect.len() as u64 - 4);
    let e = explain(&cfg3, &body_sha.to_string()).unwrap();
    assert_eq!(e.reason, Some(RejectReason::OutsideDateWindow));
}

const CORE_PY: &str = "\"\"\"Core.\"\"\"\nimport os\n\nLIMIT = 4\n\n\nclass Session:\n    timeout = 5\n\n    def send(self, req):\n        \"\"\"Send.\"\"\"\n        return req + 1\n\n\ndef helper(x):\n    return x * 2\n";

#[test]
fn python_rules() {
    let mut fx = Fixture::new();
    let core = "src/demo/core.py";
    fx.commit(
        &[
            ("pyproject.toml", Some("[project]\nname='demo'\n")),
            ("src/demo/__init__.py", Some("")),
            (core, Some(CORE_PY)),
            (
                "tests/test_core.py",
                Some("def test_x():\n    assert True\n"),
            ),
        ],
        "Initial",
        Some(RejectReason::NonSourceFile),
        "root",
    );
    fx.commit(
        &[("tests/test_core.py", Some("def test_x():\n    assert 1\n"))],
        "Test only",
        Some(RejectReason::TestFile),
        "test-only",
    );
    fx.commit(
        &[("conftest.py", Some("import pytest\n"))],
        "Fixtures",
        Some(RejectReason::TestFile),
        "conftest",
    );
    let v1 = CORE_PY.replace("return x * 2", "return x << 1");
    fx.commit(
        &[
            (core, Some(&v1)),
            (
                "src/demo/helpers_test.py",
                Some("def test_h():\n    pass\n"),
            ),
        ],
        "Mixed",
        Some(RejectReason::TestFile),
        "mixed source/test",
    );
    let many: Vec<(String, String)> = (0..21)
        .map(|i| {
            (
                format!("src/demo/m{i}.py"),
                format!("def f():\n    return {i}\n"),
            )
        })
        .collect();
    let changes: Vec<(&str, Option<&str>)> = many
        .iter()
        .map(|(p, c)| (p.as_str(), Some(c.as_str())))
        .collect();
    fx.commit(
        &changes,
        "Many",
        Some(RejectReason::TooManyFiles),
        "21 files",
    );
    let doc = v1
        .replace("\"\"\"Send.\"\"\"", "\"\"\"Send a request.\"\"\"  # doc")
        .replace("LIMIT = 4", "LIMIT = 4  # max");
    fx.commit(
        &[(core, Some(&doc))],
        "Docs",
        Some(RejectReason::WhitespaceOrCommentOnly),
        "docstring/comment-only",
    );
    fx.mv("src/demo/m0.py", "src/demo/sub/m0.py", None);
    fx.commit(
        &[],
        "Move m0",
        Some(RejectReason::RenameOnly),
        "rename-only",
    );
    let imports = doc.replace("import os\n", "import os\nimport sys\n");
    fx.commit(
        &[(core, Some(&imports))],
        "Imports",
        Some(RejectReason::ImportOnly),
        "import-only",
    );
    let base = imports.replace("class Session:", "class Session(object):");
    fx.commit(
        &[(core, Some(&base))],
        "New-style class",
        Some(RejectReason::NoBodyChange),
        "class header only",
    );
    let body = base
        .replace("return req + 1", "return req")
        .replace("import os\nimport sys\n", "import os\n");
    let body_sha = fx.commit(
        &[(core, Some(&body))],
        "Avoid an addition in send\n\nDecode as UTF-8. Closes #21, related to #22. PROJ-9",
        None,
        "body change",
    );
    let attr = body.replace("timeout = 5", "timeout = 6");
    let squash_sha = fx.commit(
        &[(core, Some(&attr))],
        "Shorter timeout (#40)",
        None,
        "squash",
    );
    let lazy = attr
        .replace("import os\n", "")
        .replace("    return x << 1", "    import os\n    return x << 1");
    let lazy_sha = fx.commit(
        &[(core, Some(&lazy))],
        "Import os lazily",
        None,
        "lazy import",
    );
    let first = fx.commit(
        &[(core, Some(&lazy.replace("LIMIT = 4", "LIMIT = 5")))],
        "Limit 5",
        None,
        "first of a duplicate pair",
    );
    fx.commit(&[(core, Some(&lazy))], "Limit 4", None, "revert");
    let dup = fx.commit(
        &[(core, Some(&lazy.replace("LIMIT = 4", "LIMIT = 5")))],
        "Limit 5 again",
        Some(RejectReason::Duplicate),
        "duplicate",
    );

    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("py.jsonl");
    let mut cfg = fx.config(Language::Python, &out);
    cfg.jira_projects = vec!["PROJ".into()];
    let summary = mine(&cfg, &mut NoProgress).unwrap();
    assert_eq!(summary.commits_scanned, fx.expect.len() as u64);
    assert_eq!(summary.build_tools, vec!["pyproject.toml"]);
    assert!(summary.build_tool_supported);
    check_explanations(&fx, &cfg);
    let cands = read_candidates(&out);
    check_same_when_packed(&fx, &cfg, &summary, &cands);
    let c = cands
        .iter()
        .find(|c| c.patched_commit == body_sha.to_string())
        .unwrap();
    assert_eq!(c.language, Language::Python);
    assert_eq!(c.changed_modules, vec!["demo".to_string()]);
    assert_eq!(
        c.changed_functions,
        vec!["demo.core.Session.send".to_string()]
    );
    let links: Vec<(IssueLinkKind, Option<u64>, Option<&str>)> = c
        .issues
        .iter()
        .map(|i| (i.kind, i.number, i.key.as_deref()))
        .collect();
    assert_eq!(
        links,
        vec![
            (IssueLinkKind::ClosingKeyword, Some(21), None),
            (IssueLinkKind::BareReference, Some(22), None),
            (IssueLinkKind::JiraKey, None, Some("PROJ-9")),
        ]
    );
    let s = cands
        .iter()
        .find(|c| c.patched_commit == squash_sha.to_string())
        .unwrap();
    assert_eq!(s.pr_number, Some(40));
    assert_eq!(
        s.changed_functions,
        vec!["demo.core.Session.timeout".to_string()]
    );
    let l = cands
        .iter()
        .find(|c| c.patched_commit == lazy_sha.to_string())
        .unwrap();
    assert_eq!(l.changed_functions, vec!["demo.core.helper".to_string()]);
    let d = cands
        .iter()
        .find(|c| c.patched_commit == first.to_string())
        .unwrap();
    assert_eq!(d.changed_functions, vec!["demo.core.LIMIT".to_string()]);
    assert_eq!(d.duplicates, vec![dup.to_string()]);
}

#[test]
fn bare_repository_and_unknown_remote() {
    let mut fx = Fixture::new();
    fx.repo.remote_delete("origin").unwrap();
    let foo = "src/main/java/a/Foo.java";
    let root = java_class("a", "Foo", FOO_BODY);
    fx.commit(&[(foo, Some(&root))], "Initial", None, "root");
    let sha = fx.commit(
        &[(foo, Some(&root.replace("return 1;", "return 0;")))],
        "Zero",
        None,
        "body",
    );
    let bare_dir = tempfile::tempdir().unwrap();
    let mut builder = git2::build::RepoBuilder::new();
    builder.bare(true);
    let bare2 = bare_dir.path().join("other.git");
    builder
        .clone(&format!("file://{}", fx.path.display()), &bare2)
        .unwrap();
    let r = Repository::open(&bare2).unwrap();
    assert!(r.is_bare());
    r.remote_delete("origin").unwrap();
    let out = bare_dir.path().join("c.jsonl");
    let cfg = MineConfig {
        jobs: 1,
        ..MineConfig::new(bare2.clone(), Language::Java, out.clone())
    };
    let summary = mine(&cfg, &mut NoProgress).unwrap();
    assert_eq!(summary.candidates, 2);
    let cands = read_candidates(&out);
    assert_eq!(cands[1].id, format!("other-{}", &sha.to_string()[..12]));
    assert_eq!(cands[1].repo, None);
    assert_eq!(cands[0].base_commit, "0".repeat(40));
}

/// Links as a project's history shows them: a JIRA prefix counts when three distinct keys open
/// commit subjects (a `JDK-8` or `ORA-01000` in passing is no link); a merge commit that links no
/// issue takes its merged branch's; `--classify` records the offline classifier's verdict on each
/// commit message.
#[test]
fn links_from_the_history_merged_branches_and_classified_messages() {
    let mut fx = Fixture::new();
    let foo = "src/main/java/a/Foo.java";
    let mut body = FOO_BODY.to_string();
    fx.commit(
        &[(foo, Some(&java_class("a", "Foo", &body)))],
        "Initial",
        Some(RejectReason::EmptyDiff),
        "root",
    );
    let mut change = |fx: &mut Fixture, msg: &str, n: usize| {
        body = body.replace(
            &format!("return x + {n};"),
            &format!("return x + {};", n + 1),
        );
        fx.commit(
            &[(foo, Some(&java_class("a", "Foo", &body)))],
            msg,
            None,
            "change",
        )
    };
    change(&mut fx, "NETTY-1: make bar cheaper", 1);
    change(&mut fx, "[NETTY-2] Reuse the buffer", 2);
    let third = change(&mut fx, "NETTY-3. Speed up bar, 10x faster than before", 3);
    let passing = change(
        &mut fx,
        "Close cursors for ORA-01000 on JDK-8 (see NETTY-3)",
        4,
    );
    // A merged pull request whose merge message links nothing; its branch commit does.
    let main_tip = fx.head().unwrap();
    body = body.replace("return x + 5;", "return x + 6;");
    fx.files
        .insert(foo.to_string(), java_class("a", "Foo", &body));
    let side = fx.commit_with_parents(
        "Cache the lookup\n\nFixes #77, based on PR #70",
        &[main_tip],
        false,
    );
    let merge = fx.commit_with_parents(
        "Merge pull request #80 from dev/cache-lookup",
        &[main_tip, side],
        true,
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("c.jsonl");
    let mut cfg = fx.config(Language::Java, &out);
    cfg.classify = true;
    let summary = mine(&cfg, &mut NoProgress).unwrap();
    assert_eq!(summary.jira_projects, vec!["NETTY".to_string()]);
    let cands = read_candidates(&out);
    let by = |oid: Oid| {
        cands
            .iter()
            .find(|c| c.patched_commit == oid.to_string())
            .unwrap_or_else(|| panic!("{oid} kept"))
    };
    let keys =
        |c: &Candidate| -> Vec<String> { c.issues.iter().filter_map(|i| i.key.clone()).collect() };
    assert_eq!(keys(by(third)), vec!["NETTY-3".to_string()]);
    assert_eq!(
        keys(by(passing)),
        vec!["NETTY-3".to_string()],
        "no JDK-8, no ORA-01000"
    );
    let m = by(merge);
    assert_eq!(m.pr_number, Some(80));
    assert_eq!(m.issues.len(), 1, "{:?}", m.issues);
    assert_eq!(m.issues[0].number, Some(77));
    assert_eq!(
        m.issues[0].via.as_deref(),
        Some(format!("merged commit {}", &side.to_string()[..12]).as_str())
    );
    assert_eq!(m.pull_requests, vec![70]);
    // Classified from the commit messages, with the evidence.
    let fast = by(third).classification.as_ref().unwrap();
    assert_eq!(
        (fast.answer.as_str(), fast.read.as_str()),
        ("yes", "commit message")
    );
    assert!(
        fast.evidence
            .iter()
            .any(|e| e.starts_with("execution_time in title")),
        "{fast:?}"
    );
    assert_eq!(by(passing).classification.as_ref().unwrap().answer, "no");
    assert_eq!(
        summary.classified.get("yes").copied().unwrap_or(0),
        cands
            .iter()
            .filter(|c| c.classification.as_ref().unwrap().answer == "yes")
            .count() as u64
    );
}
