//! etip's pack reader against libgit2 on repositories packed by the real git: offset deltas with
//! deep chains (`gc --aggressive`), reference deltas (`repack.useDeltaBaseOffset=false`), several
//! packs with loose objects beside them, and damaged packs and indexes.

use std::path::{Path, PathBuf};

use etip_mine_git::pack::PackReader;
use etip_testkit::git;
use git2::{ObjectType, Oid, Repository};

/// A history of 80 commits: a Python module edited in its middle and at both ends, a file over
/// 64 KiB (delta copies of more than 0x10000 bytes), a binary file, an empty file, and files
/// deleted and added back.
fn history(dir: &Path) -> PathBuf {
    let path = dir.join("repo");
    std::fs::create_dir_all(&path).unwrap();
    git(&path, &["init", "--quiet", "--initial-branch=main"]);
    let mut module: Vec<String> = (0..300)
        .map(|i| format!("def f{i}(x):\n    return x * {i} + {}\n", i % 7))
        .collect();
    let big: String = (0..4000)
        .map(|i| format!("line {i:05} of a large generated table\n"))
        .collect();
    for c in 0..80usize {
        module[(c * 37) % 300] = format!("def f{c}_v{c}(x):\n    return x - {c}\n");
        if c % 9 == 0 {
            module.insert(0, format!("# header {c}\n"));
        }
        if c % 11 == 0 {
            module.push(format!("TAIL_{c} = {c}\n"));
        }
        std::fs::write(path.join("module.py"), module.concat()).unwrap();
        let mut table = big.clone();
        table.insert_str(c * 1000 % table.len(), &format!("inserted {c}\n"));
        std::fs::write(path.join("table.txt"), table).unwrap();
        let binary: Vec<u8> = (0..5000u32)
            .map(|i| (i * (c as u32 + 3) % 251) as u8)
            .collect();
        std::fs::write(path.join("data.bin"), binary).unwrap();
        std::fs::write(path.join("empty.py"), "").unwrap();
        if c % 3 == 0 {
            let _ = std::fs::remove_file(path.join("sometimes.py"));
        } else {
            std::fs::write(path.join("sometimes.py"), format!("X = {c}\n")).unwrap();
        }
        git(&path, &["add", "--all"]);
        git(&path, &["commit", "--quiet", "-m", &format!("change {c}")]);
    }
    path
}

/// Every blob of the repository: its id, its content as libgit2 reads it, and whether it is a
/// loose object.
fn blobs(path: &Path) -> Vec<(Oid, Vec<u8>, bool)> {
    let repo = Repository::open(path).unwrap();
    let odb = repo.odb().unwrap();
    let mut ids = Vec::new();
    odb.foreach(|id| {
        ids.push(*id);
        true
    })
    .unwrap();
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .filter(|id| odb.read_header(*id).unwrap().1 == ObjectType::Blob)
        .map(|id| {
            let hex = id.to_string();
            let loose = path
                .join(".git/objects")
                .join(&hex[..2])
                .join(&hex[2..])
                .exists();
            (id, repo.find_blob(id).unwrap().content().to_vec(), loose)
        })
        .collect()
}

/// Checks that the reader gives libgit2's bytes for every packed blob and `None` for loose ones;
/// returns how many it read.
fn check_reader(path: &Path) -> usize {
    let all = blobs(path);
    let repo = Repository::open(path).unwrap();
    let mut reader = PackReader::open(&repo);
    assert!(reader.packs() > 0);
    let mut read = 0;
    // Twice: the second pass answers from the cache of inflated objects.
    for _ in 0..2 {
        for (id, content, loose) in &all {
            match reader.blob(*id).unwrap() {
                Some(data) => {
                    assert!(!loose, "{id} is loose");
                    assert_eq!(data.as_slice(), content.as_slice(), "blob {id}");
                    read += 1;
                }
                None => assert!(loose, "{id} is packed but not found"),
            }
        }
    }
    // Trees too, byte for byte as libgit2 reads them.
    let odb = repo.odb().unwrap();
    let mut trees = 0;
    odb.foreach(|id| {
        let o = odb.read(*id).unwrap();
        if o.kind() == ObjectType::Tree
            && let Some(data) = reader.tree(*id).unwrap()
        {
            assert_eq!(data.as_slice(), o.data(), "tree {id}");
            assert!(reader.blob(*id).is_err(), "a tree is not a blob");
            trees += 1;
        }
        true
    })
    .unwrap();
    assert!(trees >= 80, "{trees} trees read");
    // A packed commit is not a blob; an unknown id is in no pack.
    let commits = repo.revwalk().and_then(|mut w| {
        w.push_head()?;
        w.collect::<Result<Vec<Oid>, _>>()
    });
    let commit = *commits.unwrap().last().unwrap();
    assert!(
        reader.blob(commit).is_err(),
        "the root commit {commit} is packed"
    );
    assert!(
        reader
            .blob(Oid::from_str(&"5".repeat(40)).unwrap())
            .unwrap()
            .is_none()
    );
    read / 2
}

/// How many objects of the repository's one pack are stored as deltas of `kind` (6: by offset,
/// 7: by reference), from the offsets `git show-index` lists.
fn deltas(path: &Path, kind: u8) -> usize {
    let idx = std::fs::read_dir(path.join(".git/objects/pack"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "idx"))
        .unwrap();
    let pack = std::fs::read(idx.with_extension("pack")).unwrap();
    let out = std::process::Command::new("git")
        .args(["show-index"])
        .stdin(std::fs::File::open(&idx).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse::<usize>().ok())
        .filter(|&at| (pack[at] >> 4) & 7 == kind)
        .count()
}

#[test]
fn offset_deltas_with_deep_chains_read_as_libgit2_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = history(dir.path());
    git(&path, &["gc", "--aggressive", "--prune=now", "--quiet"]);
    assert!(deltas(&path, 6) > 100, "the pack holds offset deltas");
    let read = check_reader(&path);
    assert!(read > 200, "{read} blobs read");
}

#[test]
fn reference_deltas_read_as_libgit2_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = history(dir.path());
    git(&path, &["config", "repack.useDeltaBaseOffset", "false"]);
    git(&path, &["repack", "-a", "-d", "-f", "--quiet"]);
    git(&path, &["prune", "--expire=now"]);
    assert!(deltas(&path, 7) > 100, "the pack holds reference deltas");
    assert_eq!(deltas(&path, 6), 0);
    check_reader(&path);
}

#[test]
fn several_packs_and_loose_objects() {
    let dir = tempfile::tempdir().unwrap();
    let path = history(dir.path());
    git(&path, &["repack", "-d", "--quiet"]);
    for c in 0..5 {
        std::fs::write(
            path.join("module.py"),
            format!("def late{c}():\n    pass\n"),
        )
        .unwrap();
        git(&path, &["commit", "--quiet", "-am", &format!("late {c}")]);
        if c == 2 {
            // A second pack of the new objects only.
            git(&path, &["repack", "-d", "--quiet"]);
        }
    }
    let packs = std::fs::read_dir(path.join(".git/objects/pack"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
        .count();
    assert_eq!(packs, 2);
    assert!(blobs(&path).iter().any(|(_, _, loose)| *loose));
    check_reader(&path);
}

/// Entries end where the next object starts: the reader takes the pack order from git's reverse
/// index when it is sound, and sorts the offsets itself when there is none or it is damaged.
#[test]
fn entries_end_at_the_next_object_with_or_without_a_reverse_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = history(dir.path());
    let revs = |path: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(path.join(".git/objects/pack"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "rev"))
            .collect()
    };
    git(
        &path,
        &[
            "-c",
            "pack.writeReverseIndex=false",
            "repack",
            "-a",
            "-d",
            "-f",
            "--quiet",
        ],
    );
    assert!(revs(&path).is_empty());
    check_reader(&path);
    git(
        &path,
        &[
            "-c",
            "pack.writeReverseIndex=true",
            "repack",
            "-a",
            "-d",
            "-f",
            "--quiet",
        ],
    );
    let rev = revs(&path).pop().expect("git wrote a reverse index");
    check_reader(&path);
    let sound = std::fs::read(&rev).unwrap();
    let mut perm = std::fs::metadata(&rev).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    std::fs::set_permissions(&rev, perm).unwrap();
    // Two entries swapped (no longer in pack order), then a cut file.
    let mut swapped = sound.clone();
    let (a, b) = (12, 16);
    for k in 0..4 {
        swapped.swap(a + k, b + k);
    }
    std::fs::write(&rev, &swapped).unwrap();
    check_reader(&path);
    std::fs::write(&rev, &sound[..sound.len() - 7]).unwrap();
    check_reader(&path);
}

/// A writable copy of the repository's pack and index files, to damage.
fn pack_files(path: &Path) -> (PathBuf, PathBuf) {
    let dir = path.join(".git/objects/pack");
    let pack = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "pack"))
        .unwrap();
    let idx = pack.with_extension("idx");
    for p in [&pack, &idx] {
        let mut perm = std::fs::metadata(p).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perm.set_readonly(false);
        std::fs::set_permissions(p, perm).unwrap();
    }
    (pack, idx)
}

#[test]
fn a_damaged_pack_gives_errors_or_the_right_bytes_never_wrong_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = history(dir.path());
    git(&path, &["gc", "--aggressive", "--prune=now", "--quiet"]);
    let all = blobs(&path);
    let (pack, _) = pack_files(&path);
    let original = std::fs::read(&pack).unwrap();
    let repo = Repository::open(&path).unwrap();
    let mut errors = 0;
    // Bytes flipped all over the object data, one position at a time.
    for k in 0..60 {
        let at = 12 + (original.len() - 32) * k / 60;
        let mut damaged = original.clone();
        damaged[at] ^= 0x5a;
        std::fs::write(&pack, &damaged).unwrap();
        let mut reader = PackReader::open(&repo);
        for (id, content, _) in &all {
            match reader.blob(*id) {
                Ok(Some(data)) => {
                    assert_eq!(data.as_slice(), content.as_slice(), "{id}, byte {at}")
                }
                Ok(None) => panic!("{id} not found after damaging byte {at}"),
                Err(_) => errors += 1,
            }
        }
    }
    assert!(errors > 0, "no damage was noticed");
    // A pack truncated under a reader that opened it: the objects past its end are errors.
    std::fs::write(&pack, &original).unwrap();
    let mut reader = PackReader::open(&repo);
    std::fs::write(&pack, &original[..original.len() / 2]).unwrap();
    let failed = all
        .iter()
        .filter(|(id, _, _)| reader.blob(*id).is_err())
        .count();
    assert!(failed > 0);
    // A pack shorter than its index says is left to libgit2.
    let mut reader = PackReader::open(&repo);
    assert_eq!(reader.packs(), 0);
    assert!(
        all.iter()
            .all(|(id, _, _)| reader.blob(*id).unwrap().is_none())
    );
}

#[test]
fn a_damaged_index_leaves_its_pack_to_libgit2() {
    let dir = tempfile::tempdir().unwrap();
    let path = history(dir.path());
    git(&path, &["gc", "--prune=now", "--quiet"]);
    let (id, _, _) = blobs(&path)[0].clone();
    let (_, idx) = pack_files(&path);
    let original = std::fs::read(&idx).unwrap();
    let repo = Repository::open(&path).unwrap();
    assert!(PackReader::open(&repo).blob(id).unwrap().is_some());
    for damaged in [
        original[..original.len() - 1].to_vec(),
        original[..1000].to_vec(),
        [b"\xfftOc\0\0\0\x01".as_slice(), &original[8..]].concat(),
        Vec::new(),
    ] {
        std::fs::write(&idx, &damaged).unwrap();
        let mut reader = PackReader::open(&repo);
        assert_eq!(reader.packs(), 0);
        assert!(reader.blob(id).unwrap().is_none());
    }
}
