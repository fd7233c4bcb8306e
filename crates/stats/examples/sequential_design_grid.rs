//! Chooses the adaptive-rounds design by exact computation over a grid, and
//! prints a lower bound on what any procedure based on win counts can reach.
//!
//! Scenario: log-normal noise with CV 10% on each measured time, `min_impr =
//! 0.05`, `p_val = alpha = 0.1`, a first batch of 30 rounds. Every design
//! keeps the false-positive rate at the margin (true ratio 0.95, `P(win) =
//! 1/2`) below alpha by construction; among those with power >= 0.9 for a true
//! 10% improvement (ratio 0.90, `P(win) = 0.649`) the grid ranks by expected
//! rounds under that alternative (exact dynamic programming), then checks the
//! best ones with both directions tested (`operating_pair`).
//!
//! Run: `cargo run --release -p etip-stats --example sequential_design_grid`

use etip_stats::{Futility, SequentialDesign, Spending, lognormal_win_probability};

const FIRST: usize = 30;
const ALPHA: f64 = 0.1;
const POWER: f64 = 0.9;

#[derive(Clone, Copy)]
struct Row {
    batch: usize,
    max: usize,
    spending: Spending,
    futility: Futility,
    fpr: f64,
    power: f64,
    rounds: f64,
    rounds_null: f64,
}

/// A parameter with at most 3 decimals, trailing zeros dropped.
fn short(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn describe(r: &Row) -> String {
    let s = match r.spending {
        Spending::Power { rho } => format!("a*t^{}", short(rho)),
        Spending::Pocock => "pocock".to_string(),
    };
    let f = match r.futility {
        Futility::Curtail => "curtail".to_string(),
        Futility::BetaSpending { q1, beta, rho } => {
            format!("beta {}*t^{} q1 {q1}", short(beta), short(rho))
        }
    };
    format!(
        "batch {:>2} max {:>3} {:<11} {:<24} fpr {:.4} power {:.4} E[N|10%] {:>6.2} E[N|margin] {:>6.2}",
        r.batch, r.max, s, f, r.fpr, r.power, r.rounds, r.rounds_null
    )
}

/// Lagrangian lower bound on E_q1[N] over every procedure that looks after
/// each round from round `first` on (up to `horizon` rounds), stops on the
/// win count, and has size <= alpha at q = 1/2 and power >= power at q1
/// (weak duality: for any such procedure, E1[N] >= V(l0, l1) - l0·alpha -
/// l1·(1 - power), V the minimum of E1[N] + l0·P0(reject) + l1·P1(accept)).
fn lower_bound(first: usize, horizon: usize, q1: f64, alpha: f64, power: f64) -> (f64, f64, f64) {
    let (a, b) = ((0.5 / q1).ln(), (0.5 / (1.0 - q1)).ln());
    let value = |l0: f64, l1: f64| -> f64 {
        let mut v: Vec<f64> = Vec::new();
        for n in (first..=horizon).rev() {
            let next: Vec<f64> = (0..=n)
                .map(|w| {
                    let lr = (w as f64 * a + (n - w) as f64 * b).exp();
                    let stop = (l0 * lr).min(l1);
                    if n == horizon {
                        stop
                    } else {
                        stop.min(1.0 + q1 * v[w + 1] + (1.0 - q1) * v[w])
                    }
                })
                .collect();
            v = next;
        }
        // Rounds 1..first are forced: add their cost and average over Bin(first, q1).
        let mut dist = vec![1.0];
        for _ in 0..first {
            dist.push(0.0);
            for w in (1..dist.len()).rev() {
                dist[w] = dist[w] * (1.0 - q1) + dist[w - 1] * q1;
            }
            dist[0] *= 1.0 - q1;
        }
        first as f64 + dist.iter().zip(&v).map(|(p, x)| p * x).sum::<f64>()
    };
    let dual = |l0: f64, l1: f64| value(l0, l1) - l0 * alpha - l1 * (1.0 - power);
    let mut best = (f64::NEG_INFINITY, 0.0, 0.0);
    let mut l0 = 50.0;
    while l0 <= 400.0 {
        let mut l1 = 40.0;
        while l1 <= 160.0 {
            let d = dual(l0, l1);
            if d > best.0 {
                best = (d, l0, l1);
            }
            l1 += 5.0;
        }
        l0 += 10.0;
    }
    best
}

fn main() {
    let q1 = lognormal_win_probability(0.90, 0.10, 0.05);
    let qo1 = lognormal_win_probability(1.0 / 0.90, 0.10, 0.05);
    let qo0 = lognormal_win_probability(1.0 / 0.95, 0.10, 0.05);
    println!("P(win) at 10% improvement: {q1:.4} (original wins {qo1:.4}); margin: 0.5 ({qo0:.4})");

    let mut spendings: Vec<Spending> = [0.2, 0.25, 1.0 / 3.0, 0.5, 0.75, 1.0, 2.0]
        .iter()
        .map(|&rho| Spending::Power { rho })
        .collect();
    spendings.push(Spending::Pocock);
    let mut futilities = vec![Futility::Curtail];
    for beta in [0.06, 0.07, 0.08, 0.09, 0.1, 0.11, 0.12] {
        for rho in [0.5, 1.0, 2.0] {
            futilities.push(Futility::BetaSpending {
                q1: 0.65,
                beta,
                rho,
            });
        }
    }
    let batches = [1usize, 2, 3, 5, 10];
    let mut rows = Vec::new();
    let mut designs = 0usize;
    for batch in batches {
        // Every max from 60 to 180 reachable by whole batches (steps of 3 for batches of 1, 2).
        let step = if batch < 3 { 6 / batch * batch } else { batch };
        for max in (60..=180).filter(|m| (m - FIRST).is_multiple_of(step)) {
            for &spending in &spendings {
                for &futility in &futilities {
                    let d = SequentialDesign::new(FIRST, batch, max, ALPHA, spending, futility)
                        .expect("valid design");
                    designs += 1;
                    let op = d.operating(q1).expect("valid q");
                    if op.rejection_probability < POWER {
                        continue;
                    }
                    let fpr = d.false_positive_rate();
                    assert!(fpr < ALPHA);
                    rows.push(Row {
                        batch,
                        max,
                        spending,
                        futility,
                        fpr,
                        power: op.rejection_probability,
                        rounds: op.expected_rounds,
                        rounds_null: d.operating(0.5).expect("valid q").expected_rounds,
                    });
                }
            }
        }
    }
    rows.sort_by(|a, b| a.rounds.total_cmp(&b.rounds));
    println!(
        "{designs} designs, {} with power >= {POWER} (one direction)",
        rows.len()
    );
    println!("\nfewest expected rounds at 10% improvement, per batch size (one direction):");
    for batch in batches {
        for r in rows.iter().filter(|r| r.batch == batch).take(3) {
            println!("  {}", describe(r));
        }
    }

    // Selection: the largest batch size for which a design meets both
    // targets with both directions tested; among those designs, the fewest
    // expected rounds at the margin.
    let meets = |r: &Row| -> Option<(f64, f64, f64)> {
        if r.rounds > 45.0 {
            return None;
        }
        let d = SequentialDesign::new(FIRST, r.batch, r.max, ALPHA, r.spending, r.futility)
            .expect("valid design");
        let alt = d.operating_pair(q1, qo1).expect("valid q");
        let null = d.operating_pair(0.5, qo0).expect("valid q");
        (alt.patched_faster >= POWER && alt.expected_rounds <= 45.0 && null.patched_faster <= ALPHA)
            .then_some((
                alt.patched_faster,
                alt.expected_rounds,
                null.expected_rounds,
            ))
    };
    let mut chosen = None;
    for batch in batches.iter().rev() {
        let mut ok: Vec<(Row, (f64, f64, f64))> = rows
            .iter()
            .filter(|r| r.batch == *batch)
            .filter_map(|r| meets(r).map(|m| (*r, m)))
            .collect();
        if ok.is_empty() {
            println!("\nbatches of {batch}: no design reaches power {POWER} within 45 rounds");
            continue;
        }
        ok.sort_by(|a, b| a.1.2.total_cmp(&b.1.2));
        println!(
            "\nbatches of {batch}: {} designs meet both targets; fewest rounds at the margin:",
            ok.len()
        );
        for (r, (p, n1, n0)) in ok.iter().take(5) {
            println!(
                "  {}\n      both directions: power {p:.4} E[N|10%] {n1:.2} E[N|margin] {n0:.2}",
                describe(r)
            );
        }
        chosen = Some(ok[0].0);
        break;
    }
    if let Some(r) = chosen {
        let rec = SequentialDesign::recommended(FIRST, ALPHA).expect("valid design");
        let p = rec.params();
        let same = p.batch == r.batch
            && p.max == r.max
            && p.spending == r.spending
            && p.futility == r.futility;
        println!(
            "\nselected: {}\nSequentialDesign::recommended(30, 0.1) is this design: {same}",
            describe(&r)
        );
    }
    for first in [1usize, FIRST] {
        let (lb, l0, l1) = lower_bound(first, 400, q1, ALPHA, POWER);
        println!(
            "lower bound, any win-count procedure with first batch {first}, batches of 1, <= 400 rounds: \
             E[N|10%] >= {lb:.2} (multipliers {l0}, {l1})"
        );
    }
}
