//! Power table of JETO's fixed 30-round sign test against the recommended
//! group-sequential design (adaptive rounds), both directions tested, under
//! log-normal noise with CV 10% on every measured time (independently for the
//! original and the patched version), `min_impr = 0.05`, `p_val = 0.1`.
//!
//! "exact" columns come from dynamic programming over the win counts
//! (`SequentialDesign::operating_pair`; the fixed test from a direct binomial
//! sum); "sim" columns from 20,000 seeded runs of the whole procedure on
//! log-normal draws (the sign test with the timer rule on the rounds so far,
//! `decide_pair` at every look).
//!
//! Run: `cargo run --release -p etip-stats --example sequential_power`

use etip_stats::{
    Direction, PairDecision, SequentialDesign, SignTestConfig, TimerRule,
    lognormal_win_probability, sign_test_with,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CV: f64 = 0.10;
const RUNS: usize = 20_000;

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// One round: original mean 0.2 s, patched mean `ratio`·0.2 s, both
/// log-normal with coefficient of variation CV.
fn round(rng: &mut ChaCha8Rng, ratio: f64) -> (f64, f64) {
    let s2 = CV.mul_add(CV, 1.0).ln();
    let s = s2.sqrt();
    let o = 0.2 * (s * normal(rng) - s2 / 2.0).exp();
    let p = ratio * 0.2 * (s * normal(rng) - s2 / 2.0).exp();
    (o, p)
}

/// Simulated rate of "patched faster" and mean rounds of a design.
fn simulate(d: &SequentialDesign, ratio: f64, seed: u64) -> (f64, f64) {
    let cfg = SignTestConfig::default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut hits, mut rounds) = (0usize, 0usize);
    let (mut o, mut p) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        o.clear();
        p.clear();
        for n in d.look_rounds() {
            while o.len() < n {
                let (a, b) = round(&mut rng, ratio);
                o.push(a);
                p.push(b);
            }
            let v = sign_test_with(&o, &p, &cfg, TimerRule::Resolution(0.0)).expect("valid");
            if let PairDecision::Done(dir) = d.decide_pair(n, v.wins_patched, v.wins_original) {
                hits += usize::from(dir == Direction::PatchedFaster);
                rounds += n;
                break;
            }
        }
    }
    (hits as f64 / RUNS as f64, rounds as f64 / RUNS as f64)
}

/// `P(Bin(n, q) >= c)` by a direct sum.
fn binomial_tail(n: usize, q: f64, c: usize) -> f64 {
    let mut choose = 1.0;
    let mut sum = 0.0;
    for k in 0..=n {
        if k > 0 {
            choose *= (n - k + 1) as f64 / k as f64;
        }
        if k >= c {
            sum += choose * q.powi(k as i32) * (1.0 - q).powi((n - k) as i32);
        }
    }
    sum
}

fn main() {
    let fixed = SequentialDesign::fixed(30, 0.1).expect("valid");
    let seq = SequentialDesign::recommended(30, 0.1).expect("valid");
    let c = fixed.looks()[0].min_wins;
    println!(
        "log-normal CV {:.0}%, min_impr 0.05, p_val 0.1; fixed: 30 rounds ({c} wins needed); \
         sequential: first {}, batches of {}, max {}; {RUNS} simulated runs per cell",
        CV * 100.0,
        seq.first(),
        seq.batch(),
        seq.max()
    );
    println!(
        "sequential false-positive rate per direction (exact, one direction): {:.4}; bound {:.4}",
        seq.false_positive_rate(),
        seq.looks().last().expect("a look").alpha_spent
    );
    println!();
    println!(
        "{:>7} {:>6} {:>7} | {:>14} {:>8} | {:>15} {:>8} | {:>14} {:>8}",
        "improv",
        "ratio",
        "P(win)",
        "fixed30 exact",
        "sim",
        "seq exact P",
        "E[N]",
        "seq sim P",
        "mean N"
    );
    for (i, impr) in [0.0, 0.025, 0.05, 0.075, 0.10, 0.125, 0.15, 0.20]
        .into_iter()
        .enumerate()
    {
        let ratio = 1.0 - impr;
        let qp = lognormal_win_probability(ratio, CV, 0.05);
        let qo = lognormal_win_probability(1.0 / ratio, CV, 0.05);
        let fixed_exact = binomial_tail(30, qp, c);
        let check = fixed.operating_pair(qp, qo).expect("valid").patched_faster;
        assert!((check - fixed_exact).abs() < 1e-12);
        let (fixed_sim, _) = simulate(&fixed, ratio, 100 + i as u64);
        let exact = seq.operating_pair(qp, qo).expect("valid");
        let (sim, mean_n) = simulate(&seq, ratio, 200 + i as u64);
        println!(
            "{:>6.1}% {:>6.3} {:>7.4} | {:>14.4} {:>8.4} | {:>15.4} {:>8.2} | {:>14.4} {:>8.2}",
            impr * 100.0,
            ratio,
            qp,
            fixed_exact,
            fixed_sim,
            exact.patched_faster,
            exact.expected_rounds,
            sim,
            mean_n
        );
    }
}
