//! What the examples share: the command line's `SINCE` and the modified files of a history.
#![allow(dead_code)]

use git2::{Oid, Repository};

/// One modified file of a first-parent commit.
pub struct Modified {
    pub commit: Oid,
    pub path: String,
    pub old: Oid,
    pub new: Oid,
}

/// `SINCE` as seconds or `YYYY-MM-DD` (default 2015-01-01).
pub fn since(arg: Option<&String>) -> i64 {
    arg.map_or(1_420_070_400, |s| {
        s.parse().unwrap_or_else(|_| {
            etip_mine_git::dates::parse_date(s, false).expect("SINCE as seconds or YYYY-MM-DD")
        })
    })
}

/// The modified files (whose path ends in `suffix`, if given) of HEAD's first-parent commits
/// authored since `since`, newest commit first, in tree order within a commit.
pub fn modified(repo: &Repository, since: i64, suffix: Option<&str>) -> Vec<Modified> {
    let mut walk = repo.revwalk().expect("revwalk");
    walk.push_head().expect("HEAD");
    walk.simplify_first_parent().expect("first parent");
    let mut out = Vec::new();
    for id in walk {
        let c = repo.find_commit(id.expect("commit id")).expect("commit");
        if c.time().seconds() < since {
            break;
        }
        let Ok(parent) = c.parent(0) else { continue };
        let (Ok(old), Ok(new)) = (parent.tree(), c.tree()) else {
            continue;
        };
        let diff = repo
            .diff_tree_to_tree(Some(&old), Some(&new), None)
            .expect("diff");
        for d in diff.deltas() {
            let path = d
                .new_file()
                .path()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            if d.status() == git2::Delta::Modified && suffix.is_none_or(|s| path.ends_with(s)) {
                out.push(Modified {
                    commit: c.id(),
                    path,
                    old: d.old_file().id(),
                    new: d.new_file().id(),
                });
            }
        }
    }
    out
}
