//! Reads coverage.py's SQLite data file (schema 7, coverage 5 and later): per dynamic context
//! (pytest-cov's `--cov-context=test` names them `<node id>|setup`, `|run`, `|teardown`), the lines
//! executed in each file.
//!
//! Tables read: `file(id, path)`, `context(id, context)` and `line_bits(file_id, context_id,
//! numbits)`, where `numbits` is a bitmap of line numbers (byte `i`, bit `j` is line `8 i + j`,
//! see coverage's `numbits.py`). A data file measured with branches (`arc` table) is read from its
//! arcs' end points instead. The empty context holds what ran outside any test: imports during
//! collection, module-level code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lines executed per file, for one test or for the code outside tests.
pub type FileLines = BTreeMap<String, BTreeSet<u32>>;

/// The lines of the files asked for, per test and outside tests.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TestLines {
    /// Per pytest node id (all phases of the test merged).
    pub tests: BTreeMap<String, FileLines>,
    /// The empty context: code run outside tests (collection, imports).
    pub outside: FileLines,
}

/// The line numbers of a coverage.py numbits blob, ascending.
pub fn numbits_to_lines(bits: &[u8]) -> Vec<u32> {
    let mut out = Vec::new();
    for (i, byte) in bits.iter().enumerate() {
        for j in 0..8u32 {
            if byte & (1 << j) != 0 {
                out.push(i as u32 * 8 + j);
            }
        }
    }
    out
}

/// The pytest node id of a context (`tests/t.py::test_a[x|y]|run` → `tests/t.py::test_a[x|y]`),
/// `None` for the empty context.
pub fn context_test(context: &str) -> Option<&str> {
    if context.is_empty() {
        return None;
    }
    Some(match context.rsplit_once('|') {
        Some((id, "setup" | "run" | "teardown")) => id,
        _ => context,
    })
}

/// The coverage data file could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum CoverageDbError {
    #[error("opening {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("reading {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
}

/// Reads the data file at `db`, keeping only `files` (paths relative to `tree`, where the data
/// file records absolute paths).
pub fn read(db: &Path, tree: &str, files: &[String]) -> Result<TestLines, CoverageDbError> {
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = rusqlite::Connection::open_with_flags(db, flags).map_err(|source| {
        CoverageDbError::Open {
            path: db.to_path_buf(),
            source,
        }
    })?;
    let q = |source| CoverageDbError::Read {
        path: db.to_path_buf(),
        source,
    };
    let tree = tree.trim_end_matches('/');
    let mut ids: BTreeMap<i64, String> = BTreeMap::new();
    {
        let mut st = conn.prepare("SELECT id, path FROM file").map_err(q)?;
        let rows = st
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(q)?;
        for row in rows {
            let (id, path) = row.map_err(q)?;
            let rel = path
                .strip_prefix(tree)
                .and_then(|p| p.strip_prefix('/'))
                .unwrap_or(&path);
            if files.iter().any(|f| f == rel) {
                ids.insert(id, rel.to_string());
            }
        }
    }
    let has_arcs = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'arc'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(q)?
        > 0;
    let mut out = TestLines::default();
    let mut add = |context: &str, file_id: i64, lines: &mut dyn Iterator<Item = u32>| {
        let Some(rel) = ids.get(&file_id) else {
            return;
        };
        let slot = match context_test(context) {
            Some(test) => out.tests.entry(test.to_string()).or_default(),
            None => &mut out.outside,
        };
        slot.entry(rel.clone()).or_default().extend(lines);
    };
    let sql = "SELECT c.context, l.file_id, l.numbits FROM line_bits l \
               JOIN context c ON c.id = l.context_id";
    let mut st = conn.prepare(sql).map_err(q)?;
    let mut rows = st.query([]).map_err(q)?;
    while let Some(r) = rows.next().map_err(q)? {
        let context: String = r.get(0).map_err(q)?;
        let file_id: i64 = r.get(1).map_err(q)?;
        let bits: Vec<u8> = r.get(2).map_err(q)?;
        add(&context, file_id, &mut numbits_to_lines(&bits).into_iter());
    }
    if has_arcs {
        let sql = "SELECT c.context, a.file_id, a.fromno, a.tono FROM arc a \
                   JOIN context c ON c.id = a.context_id";
        let mut st = conn.prepare(sql).map_err(q)?;
        let mut rows = st.query([]).map_err(q)?;
        while let Some(r) = rows.next().map_err(q)? {
            let context: String = r.get(0).map_err(q)?;
            let file_id: i64 = r.get(1).map_err(q)?;
            let ends = [
                r.get::<_, i64>(2).map_err(q)?,
                r.get::<_, i64>(3).map_err(q)?,
            ];
            let mut lines = ends.into_iter().filter(|n| *n > 0).map(|n| n as u32);
            add(&context, file_id, &mut lines);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbits_are_decoded_as_coverage_writes_them() {
        // coverage.numbits.nums_to_numbits([11, 12, 13, 14]) == b'\x00\x78'
        assert_eq!(numbits_to_lines(&[0x00, 0x78]), [11, 12, 13, 14]);
        // nums_to_numbits([1, 4]) == b'\x12'; [1, 2, 9] == b'\x06\x02'
        assert_eq!(numbits_to_lines(&[0x12]), [1, 4]);
        assert_eq!(numbits_to_lines(&[0x06, 0x02]), [1, 2, 9]);
        assert!(numbits_to_lines(&[]).is_empty());
    }

    #[test]
    fn contexts_name_the_test_without_its_phase() {
        assert_eq!(context_test(""), None);
        assert_eq!(
            context_test("tests/t.py::C::test_a|run"),
            Some("tests/t.py::C::test_a")
        );
        assert_eq!(
            context_test("tests/t.py::test_a[a|b]|setup"),
            Some("tests/t.py::test_a[a|b]")
        );
        assert_eq!(
            context_test("tests/t.py::test_a[a|b]"),
            Some("tests/t.py::test_a[a|b]")
        );
    }

    /// Real data files of coverage.py 6.5 / pytest-cov 4.0 (Debian bookworm) on the Python
    /// fixture's patched tree: lines, and branches (arcs) — see `tests/data/coverage/README.md`.
    #[test]
    fn real_data_files_of_lines_and_of_branches_read_alike() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/coverage");
        let files = ["textutil/__init__.py".to_string()];
        let lines = read(&data.join("lines.db"), "/work/original", &files).unwrap();
        let arcs = read(&data.join("arcs.db"), "/work/original", &files).unwrap();
        let f = "textutil/__init__.py";
        let get = |c: &TestLines, t: &str| -> Vec<u32> { c.tests[t][f].iter().copied().collect() };
        for c in [&lines, &arcs] {
            assert_eq!(c.tests.len(), 3, "{c:?}");
            assert_eq!(
                get(
                    c,
                    "tests/test_text_dedup.py::test_dedup_keeps_first_seen_order"
                ),
                [6]
            );
            assert_eq!(
                get(c, "tests/test_join.py::test_join_many_parts"),
                [11, 12, 13, 14]
            );
            assert_eq!(
                get(c, "tests/test_trivial.py::test_join_of_nothing_is_empty"),
                [11, 12, 14]
            );
            assert_eq!(c.outside[f].iter().copied().collect::<Vec<_>>(), [1, 4, 9]);
        }
    }

    /// A data file written the way coverage.py 6.5 writes it (schema 7), read back.
    #[test]
    fn a_data_file_gives_lines_per_test_and_outside_tests() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("coverage.db");
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE file (id integer primary key, path text, unique (path));
             CREATE TABLE context (id integer primary key, context text, unique (context));
             CREATE TABLE line_bits (file_id integer, context_id integer, numbits blob,
                                     unique (file_id, context_id));
             INSERT INTO file VALUES (1, '/work/original/textutil/__init__.py'),
                                     (2, '/work/original/tests/test_join.py');
             INSERT INTO context VALUES (1, ''), (2, 'tests/test_join.py::test_join|run'),
                                        (3, 'tests/test_join.py::test_join|setup');
             INSERT INTO line_bits VALUES (1, 1, x'12'), (1, 2, x'0078'), (2, 2, x'ff'),
                                          (1, 3, x'0001');",
        )
        .unwrap();
        drop(c);
        let cov = read(&db, "/work/original/", &["textutil/__init__.py".into()]).unwrap();
        assert_eq!(
            cov.outside["textutil/__init__.py"]
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            [1, 4]
        );
        let t = &cov.tests["tests/test_join.py::test_join"];
        assert_eq!(t.len(), 1, "only the files asked for: {t:?}");
        assert_eq!(
            t["textutil/__init__.py"]
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            [8, 11, 12, 13, 14]
        );
        let err = read(&dir.path().join("absent.db"), "/w", &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("absent.db"), "{err}");
    }
}
