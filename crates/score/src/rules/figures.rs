//! One task's figures under each benchmark's rule ([`task_figures`]), as `etip eval` writes them
//! beside its own verdict: the same per-task functions whose results the rules' scores aggregate,
//! so a task's figure and its part in `etip score` cannot disagree.

use super::Params;
use super::gso::{gso_task_verdict, means_of};
use super::swefficiency::speedups_of;
use super::sweperf::mean_delta;
use etip_records::results::{BenchmarkFigures, TaskResult, TestRuns};

/// SWE-fficiency's SR, GSO's speedups and opt verdicts, and SWE-Perf's δ of one task result.
///
/// - SR: the measured speedup over the gold speedup when the patch is correct, 1 / gold when
///   not; absent without a gold speedup.
/// - GSO: the geometric-mean speedup over base and the harmonic-mean speedup over the
///   reference from the per-test means of the runs; `opt_base`/`opt_commit` after GSO's
///   correctness gate (an incorrect patch is never opt, with or without runs).
/// - SWE-Perf: δ over the task's tests; 0 for an incorrect patch or a test that failed a run
///   (SWE-Perf's Σ δ / N counts those tasks as 0); absent when a test's runs are too few for the
///   search.
pub fn task_figures(task: &TaskResult, params: &Params) -> BenchmarkFigures {
    let correct = task.correct;
    let mut f = BenchmarkFigures::default();
    let (speedup, gold) = speedups_of(task);
    f.swefficiency_sr = match (correct, speedup, gold) {
        (Some(true), Some(s), Some(g)) if g > 0.0 => Some(s / g),
        (Some(false), _, Some(g)) if g > 0.0 => Some(1.0 / g),
        _ => None,
    };
    if let Some(v) = means_of(task).as_ref().and_then(gso_task_verdict) {
        f.gso_speedup_base = Some(v.gm_speedup_patch_base);
        f.gso_speedup_commit = Some(v.hm_speedup_patch_commit);
        f.gso_opt_base = correct.map(|c| c && v.opt_base);
        f.gso_opt_commit = correct.map(|c| c && v.opt_commit);
    } else if correct == Some(false) {
        f.gso_opt_base = Some(false);
        f.gso_opt_commit = Some(false);
    }
    f.sweperf_delta = match correct {
        Some(false) => Some(0.0),
        Some(true) if task.tests.iter().any(|t| !t.passed) => Some(0.0),
        Some(true) => {
            let tests: Vec<&TestRuns> = task.tests.iter().collect();
            mean_delta(&tests, &params.delta).ok().flatten()
        }
        None => None,
    };
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Format, Submission};
    use crate::rules::{Rule, score};
    use etip_records::results::TestRuns;

    fn runs(name: &str, base: f64, patched: f64, reference: f64) -> TestRuns {
        let wobble = |x: f64| (0..10).map(|i| x * (1.0 + 0.01 * (i % 3) as f64)).collect();
        TestRuns {
            name: name.into(),
            base: wobble(base),
            patched: wobble(patched),
            reference: wobble(reference),
            passed: true,
        }
    }

    fn task(id: &str, correct: bool, tests: Vec<TestRuns>) -> TaskResult {
        TaskResult {
            instance_id: id.into(),
            correct: Some(correct),
            tests,
            ..TaskResult::default()
        }
    }

    #[test]
    fn figures_are_the_parts_of_each_rules_score() {
        let tasks = vec![
            task(
                "fast",
                true,
                vec![runs("a", 2.0, 1.0, 1.0), runs("b", 4.0, 2.0, 2.5)],
            ),
            task("slow", true, vec![runs("a", 1.0, 1.05, 0.5)]),
            task("wrong", false, vec![runs("a", 2.0, 0.5, 1.0)]),
        ];
        let figures: Vec<BenchmarkFigures> = tasks
            .iter()
            .map(|t| task_figures(t, &Params::default()))
            .collect();
        let sub = Submission {
            name: "sub".into(),
            path: "sub.jsonl".into(),
            format: Format::EtipJsonl,
            lines: (1..=tasks.len()).collect(),
            tasks,
            total_instances: None,
            official_score: None,
            official_summary: Default::default(),
            measurements: Vec::new(),
        };
        let p = Params::default();
        let n = figures.len() as f64;
        // SWE-fficiency: harmonic mean of the SRs.
        let srs: Vec<f64> = figures.iter().map(|f| f.swefficiency_sr.unwrap()).collect();
        let hm = n / srs.iter().map(|s| 1.0 / s).sum::<f64>();
        assert!((score(&sub, Rule::Swefficiency, &p).unwrap().score - hm).abs() < 1e-12);
        // Fast: speedup (3 + ..)/(1.5..) = 2, gold 6/3.5; incorrect: 1 / gold.
        assert!((srs[0] - 2.0 / (6.0 / 3.5)).abs() < 1e-9, "{srs:?}");
        assert!((srs[2] - 0.5).abs() < 1e-9, "{srs:?}");
        // GSO: opt@1 = share of opt_commit; the incorrect patch is fast but never opt.
        assert_eq!(figures[0].gso_opt_commit, Some(true));
        assert_eq!(figures[1].gso_opt_base, Some(false));
        assert_eq!(figures[2].gso_opt_base, Some(false));
        assert!((figures[2].gso_speedup_base.unwrap() - 4.0).abs() < 1e-9);
        let opt = figures
            .iter()
            .filter(|f| f.gso_opt_commit == Some(true))
            .count() as f64;
        let gso = score(&sub, Rule::Gso, &p).unwrap().score;
        assert!(
            (gso - (100.0 * opt / n * 100.0).round() / 100.0).abs() < 1e-9,
            "{gso}"
        );
        // SWE-Perf: 100 · Σ δ / N, the incorrect task 0.
        assert_eq!(figures[2].sweperf_delta, Some(0.0));
        let sum: f64 = figures.iter().map(|f| f.sweperf_delta.unwrap()).sum();
        let sweperf = score(&sub, Rule::Sweperf, &p).unwrap().score;
        assert!(
            (sweperf - 100.0 * sum / n).abs() < 1e-9,
            "{sweperf} vs {sum}"
        );
        assert!(figures[0].sweperf_delta.unwrap() > 0.0);
    }

    #[test]
    fn a_task_without_data_has_no_figures() {
        let t = TaskResult {
            instance_id: "x".into(),
            ..TaskResult::default()
        };
        assert!(task_figures(&t, &Params::default()).is_empty());
    }
}
