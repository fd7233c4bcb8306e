//! One SWE-Perf δ and one JETO sign test on 200 000 runs per version, the size at which the
//! scoring rules must stay fast; prints the results and the time each took. Meant to be timed
//! as a whole process against an older build of the same file (the public API it uses is
//! unchanged), e.g. with `/usr/bin/time -v`.
//!
//! Run: `cargo run --release -p etip-stats --example large_inputs [-- delta|sign] [n]`

use std::time::Instant;

use etip_stats::{DeltaConfig, SignTestConfig, sign_test, sweperf_delta};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map_or("both", String::as_str);
    let n = args
        .get(1)
        .and_then(|a| a.parse::<usize>().ok())
        .unwrap_or(200_000);
    let mut rng = ChaCha8Rng::seed_from_u64(12_345);
    if which == "delta" || which == "both" {
        // Uniform runtimes in [1, 1.1) against a 10 % faster patch: the scan runs ~100 steps.
        let base: Vec<f64> = (0..n).map(|_| 1.0 + 0.1 * rng.random::<f64>()).collect();
        let patched: Vec<f64> = (0..n).map(|_| 0.9 + 0.1 * rng.random::<f64>()).collect();
        let start = Instant::now();
        let delta = sweperf_delta(&base, &patched, &DeltaConfig::default());
        println!(
            "sweperf_delta, {n} runs per version: {delta:?} in {:.3} s",
            start.elapsed().as_secs_f64()
        );
    }
    if which == "sign" || which == "both" {
        // Paired rounds, patched 5 % faster on average with ±20 % noise: about half the rounds
        // are wins of the patch (p ≤ 0.95·o), a quarter wins of the original; both tails are
        // sums over about n/2 terms for the exact method.
        let original: Vec<f64> = (0..n).map(|_| 1.0 + 0.1 * rng.random::<f64>()).collect();
        let patched: Vec<f64> = original
            .iter()
            .map(|o| o * (0.75 + 0.4 * rng.random::<f64>()))
            .collect();
        let start = Instant::now();
        let verdict = sign_test(&original, &patched, &SignTestConfig::default());
        let took = start.elapsed().as_secs_f64();
        match verdict {
            Ok(v) => println!(
                "sign_test, {n} rounds: {:?}, wins {} / {}, p {:e} / {:e} in {took:.3} s",
                v.direction, v.wins_patched, v.wins_original, v.p_patched, v.p_original
            ),
            Err(e) => println!("sign_test, {n} rounds: {e}"),
        }
    }
}
