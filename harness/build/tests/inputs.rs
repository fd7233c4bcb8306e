//! ETIPs a batch cannot build are refused without touching git or the images: a repeated id
//! (its log folder is the first one's) and a root commit (no original version). Needs the
//! engine only to make the builder; nothing is built.

mod common;

use common::{builder, etip, fixture_repo};
use etip_core::instance::{BuildOutcome, FailureKind, InstanceStatus, Language};

#[test]
fn repeated_ids_and_root_commits_are_refused_in_a_batch() {
    let tb = builder("inputs");
    let (_tmp, repo, c) = fixture_repo("python");
    let missing = "0123456789abcdef0123456789abcdef01234567";
    let batch = vec![
        etip("same", Language::Python, &repo, &c[0], missing),
        etip("same", Language::Python, &repo, &c[0], &c[1]),
        etip("root", Language::Python, &repo, &"0".repeat(40), &c[0]),
    ];
    let statuses = tb.builder.build_all(&batch, 2, &|_| {});
    assert_eq!(statuses.len(), 3);
    assert!(statuses.iter().all(|s| s.outcome == BuildOutcome::Failed));
    assert_eq!(statuses[0].failure, Some(FailureKind::Checkout));
    assert_eq!(statuses[1].failure, Some(FailureKind::Input));
    let detail = statuses[1].detail.as_deref().unwrap();
    assert!(detail.contains("also ETIP 1"), "{detail}");
    assert_eq!(statuses[2].failure, Some(FailureKind::Input));
    let detail = statuses[2].detail.as_deref().unwrap();
    assert!(
        detail.contains("root commit has no original version"),
        "{detail}"
    );
    // The log folder of `same` is the first one's.
    let logs = etip_build::output::log_dir(tb.out.path(), "same");
    let recorded: InstanceStatus =
        serde_json::from_str(&std::fs::read_to_string(logs.join("status.json")).unwrap()).unwrap();
    assert_eq!(recorded.failure, Some(FailureKind::Checkout));
    assert_eq!(recorded.patched_commit, missing);
}
