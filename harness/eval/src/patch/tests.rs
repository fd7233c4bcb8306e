use super::*;

/// `git diff` of the Python fixture's dedup change (crates/fixtures/repos/python).
const DEDUP: &str = "diff --git a/textutil/__init__.py b/textutil/__init__.py
index 3b18e51..a1c3d2e 100644
--- a/textutil/__init__.py
+++ b/textutil/__init__.py
@@ -3,11 +3,7 @@
 
 def dedup(values):
     \"\"\"The distinct values, in first-seen order.\"\"\"
-    out = []
-    for v in values:
-        if v not in out:
-            out.append(v)
-    return out
+    return list(dict.fromkeys(values))
 
 
 def join(parts, sep):
";

#[test]
fn a_git_diff_is_read_with_its_counts() {
    let v = check(Language::Python, DEDUP, false).unwrap();
    assert_eq!(v.files.len(), 1);
    let f = &v.files[0];
    assert_eq!(f.old_path.as_deref(), Some("textutil/__init__.py"));
    assert_eq!(f.new_path.as_deref(), Some("textutil/__init__.py"));
    assert_eq!((f.hunks, f.added, f.removed, f.binary), (1, 1, 5, false));
    // CRLF line ends and a plain `diff -u` without the git header read the same.
    let crlf = DEDUP.replace('\n', "\r\n");
    assert_eq!(
        check(Language::Python, &crlf, false).unwrap().files,
        v.files
    );
    let plain = DEDUP
        .split_once("index 3b18e51..a1c3d2e 100644\n")
        .unwrap()
        .1;
    let plain = plain.replace(
        "--- a/textutil/__init__.py",
        "--- a/textutil/__init__.py\t2024-01-01 10:00:00",
    );
    assert_eq!(
        check(Language::Python, &plain, false).unwrap().files,
        v.files
    );
}

#[test]
fn empty_malformed_and_miscounted_patches_are_refused() {
    assert_eq!(check(Language::Python, "", false), Err(PatchProblem::Empty));
    assert_eq!(
        check(Language::Python, "  \n\n", false),
        Err(PatchProblem::Empty)
    );
    let cat = |r: Result<Verdict, PatchProblem>| r.unwrap_err().category();
    assert_eq!(
        cat(check(Language::Python, "just some text\n", false)),
        "malformed"
    );
    // A hunk header that counts one line more than the hunk has: git's "corrupt patch".
    let short = DEDUP.replace("@@ -3,11 +3,7 @@", "@@ -3,12 +3,7 @@");
    let e = check(Language::Python, &short, false).unwrap_err();
    assert_eq!(e.category(), "malformed");
    assert!(e.to_string().contains("ends inside a hunk"), "{e}");
    let long = DEDUP.replace("@@ -3,11 +3,7 @@", "@@ -3,11 +3,6 @@");
    assert_eq!(cat(check(Language::Python, &long, false)), "malformed");
    let bad_header = DEDUP.replace("@@ -3,11 +3,7 @@", "@@ -x +3,7 @@");
    assert_eq!(
        cat(check(Language::Python, &bad_header, false)),
        "malformed"
    );
    // Headers without any hunk change nothing.
    let headers = "diff --git a/x.py b/x.py\nindex 1..2 100644\n";
    assert_eq!(
        check(Language::Python, headers, false),
        Err(PatchProblem::Empty)
    );
}

#[test]
fn paths_leaving_the_tree_are_malformed() {
    for bad in [
        "../etc/passwd",
        "/etc/passwd",
        "a/../../x.py",
        ".git/hooks/pre-commit",
        "pkg//x.py",
    ] {
        let p = format!("--- a/{bad}\n+++ b/{bad}\n@@ -1 +1 @@\n-a\n+b\n");
        let e = check(Language::Python, &p, true).unwrap_err();
        assert_eq!(e.category(), "malformed", "{bad}: {e}");
    }
    let abs = "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n";
    assert_eq!(
        check(Language::Python, abs, true).unwrap_err().category(),
        "malformed"
    );
}

#[test]
fn binary_changes_are_refused() {
    let git = "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 5\nMcmZ?wbhEJ\n\nliteral 0\nHcmV?d00001\n\n";
    assert_eq!(
        check(Language::Python, git, true),
        Err(PatchProblem::Binary {
            paths: vec!["logo.png".into()]
        })
    );
    let differ = "diff --git a/data.bin b/data.bin\nindex 1..2 100644\nBinary files a/data.bin and b/data.bin differ\n";
    assert_eq!(
        check(Language::Python, differ, true)
            .unwrap_err()
            .category(),
        "binary"
    );
}

#[test]
fn protected_files_are_refused_unless_allowed() {
    let edit = |path: &str| {
        format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n")
    };
    for (lang, path, why) in [
        (
            Language::Python,
            "tests/test_join.py",
            "directory tests/ or test/",
        ),
        (Language::Python, "conftest.py", "file name conftest.py"),
        (Language::Python, "pyproject.toml", "build descriptor"),
        (Language::Python, "pytest.ini", "test configuration"),
        (
            Language::Python,
            "asv_bench/benchmarks/algos.py",
            "benchmark or workload folder",
        ),
        (
            Language::Java,
            "src/test/java/demo/JoinTest.java",
            "Maven test directory src/test/",
        ),
        (Language::Java, "pom.xml", "build descriptor"),
        (Language::Java, ".mvn/jvm.config", "build descriptor"),
        (
            Language::Java,
            "jmh/src/main/java/B.java",
            "benchmark or workload folder",
        ),
    ] {
        let e = check(lang, &edit(path), false).unwrap_err();
        assert_eq!(
            e,
            PatchProblem::Protected {
                paths: vec![(path.to_string(), why.to_string())]
            },
            "{path}"
        );
        let v = check(lang, &edit(path), true).unwrap();
        assert_eq!(v.allowed_protected, [(path.to_string(), why.to_string())]);
    }
    // Sources are not protected, whatever their names look like.
    for path in [
        "textutil/contest.py",
        "src/main/java/demo/Latest.java",
        "bench_utils.py",
    ] {
        let lang = if path.ends_with(".java") {
            Language::Java
        } else {
            Language::Python
        };
        assert!(check(lang, &edit(path), false).is_ok(), "{path}");
    }
}

#[test]
fn renames_new_and_deleted_files_and_quoted_paths() {
    let rename = "diff --git a/pkg/old.py b/pkg/new.py\nsimilarity index 100%\nrename from pkg/old.py\nrename to pkg/new.py\n";
    let v = check(Language::Python, rename, false).unwrap();
    assert_eq!(
        v.files[0].paths().collect::<Vec<_>>(),
        ["pkg/old.py", "pkg/new.py"]
    );
    // Renaming a source into the tests folder touches a protected path.
    let into_tests = rename.replace("pkg/new.py", "tests/new.py");
    assert_eq!(
        check(Language::Python, &into_tests, false)
            .unwrap_err()
            .category(),
        "protected"
    );
    let added = "diff --git a/pkg/fast.py b/pkg/fast.py\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n+++ b/pkg/fast.py\n@@ -0,0 +1,2 @@\n+def f():\n+    return 1\n";
    let f = &check(Language::Python, added, false).unwrap().files[0];
    assert_eq!(
        (f.old_path.as_deref(), f.new_path.as_deref(), f.added),
        (None, Some("pkg/fast.py"), 2)
    );
    let quoted = "diff --git \"a/pkg/na\\303\\257ve.py\" \"b/pkg/na\\303\\257ve.py\"\n--- \"a/pkg/na\\303\\257ve.py\"\n+++ \"b/pkg/na\\303\\257ve.py\"\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n";
    let f = &check(Language::Python, quoted, false).unwrap().files[0];
    assert_eq!(f.new_path.as_deref(), Some("pkg/na\u{ef}ve.py"));
}

#[test]
fn messages_quote_long_paths_clipped() {
    let long = "x".repeat(5000);
    let p = format!("--- a/../{long}\n+++ b/../{long}\n@@ -1 +1 @@\n-a\n+b\n");
    let e = check(Language::Python, &p, false).unwrap_err().to_string();
    assert!(e.len() < 400, "{} bytes", e.len());
}
