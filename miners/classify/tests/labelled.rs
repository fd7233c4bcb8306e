//! The offline classifier on the hand-labelled set of real GitHub threads
//! (`datasets/issues/labelled.jsonl`): precision and recall of `yes`, printed with the confusion
//! counts per negative category, once from what every thread shows at a glance (title and labels)
//! and once with the set's short paraphrase of the body added. The floors asserted here are the
//! figures the README reports, rounded down: a rule change that loses either fails.

use etip_classify::{Answer, IssueText, Offline};
use serde_json::Value;
use std::collections::BTreeMap;

fn records() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../datasets/issues/labelled.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[derive(Default, Debug)]
struct Counts {
    tp: usize,
    fp: usize,
    fn_: usize,
    tn: usize,
    /// Negatives called `yes`, by category.
    fp_by: BTreeMap<String, usize>,
}

impl Counts {
    fn precision(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fp).max(1) as f64
    }
    fn recall(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fn_).max(1) as f64
    }
}

fn evaluate(with_body: bool) -> Counts {
    let mut c = Counts::default();
    for r in records() {
        let labels: Vec<String> = r["labels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect();
        let text = IssueText {
            title: r["title"].as_str().unwrap(),
            body: if with_body {
                r["excerpt"].as_str().unwrap()
            } else {
                ""
            },
            labels: &labels,
            commit_message: "",
        };
        let got = Offline.classify(&text).answer;
        assert_ne!(got, Answer::Unclassified, "{r}");
        let truth = r["label"] == "yes";
        match (truth, got == Answer::Yes) {
            (true, true) => c.tp += 1,
            (true, false) => c.fn_ += 1,
            (false, true) => {
                c.fp += 1;
                *c.fp_by
                    .entry(r["category"].as_str().unwrap().to_string())
                    .or_default() += 1;
            }
            (false, false) => c.tn += 1,
        }
    }
    c
}

#[test]
fn precision_and_recall_on_the_labelled_threads() {
    let n = records().len();
    assert!(n >= 80, "the set has {n} threads");
    for (what, with_body, min_precision, min_recall) in [
        // offline-rules-1 (written before the set was looked at) and -2: 47/55 and 47/57.
        ("title and labels", false, 0.85, 0.82),
        // 53/61 and 53/57.
        ("title, labels and body excerpt", true, 0.86, 0.92),
    ] {
        let c = evaluate(with_body);
        println!(
            "{what}: precision {:.3} ({}/{}), recall {:.3} ({}/{}); false positives by category {:?}; {c:?}",
            c.precision(),
            c.tp,
            c.tp + c.fp,
            c.recall(),
            c.tp,
            c.tp + c.fn_,
            c.fp_by
        );
        assert!(c.precision() >= min_precision, "{what}: {c:?}");
        assert!(c.recall() >= min_recall, "{what}: {c:?}");
    }
}

/// The offline classifier on hand-labelled commit messages (`datasets/issues/commits.jsonl`), read
/// as `etip mine local --classify` reads them: precision of `yes` on the rules' tuning commits and
/// on held-out ones (classifier positives only: no recall).
#[test]
fn precision_on_labelled_commit_messages() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../datasets/issues/commits.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut by: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).expect("a JSON line");
        let message = r["message"].as_str().unwrap();
        let c = Offline.classify(&etip_classify::commit_text(message));
        if c.answer != Answer::Yes {
            continue;
        }
        let e = by
            .entry(r["split"].as_str().unwrap().to_string())
            .or_default();
        e.1 += 1;
        if r["label"] == "yes" {
            e.0 += 1;
        }
    }
    for (split, (tp, n)) in &by {
        println!(
            "{split}: precision {:.3} ({tp}/{n})",
            *tp as f64 / *n as f64
        );
    }
    let (tp, n) = by["held_out"];
    assert!(n >= 20 && tp * 100 >= 75 * n, "held-out precision {tp}/{n}");
    let (tp, n) = by["tuning"];
    assert!(tp * 100 >= 85 * n, "tuning precision {tp}/{n}");
}
