//! Prints how much faster `sweperf_delta`'s merge-based scan is than the
//! literal rules §4.1 definition (a complete Mann–Whitney test — copy, sort,
//! rank — per step), both measured in this run on the same data, interleaved,
//! from SWE-Perf's size up to 200 000 runs per version.
//!
//! Run: `cargo run --release -p etip-stats --example delta_speedup`

use std::hint::black_box;
use std::time::{Duration, Instant};

use etip_stats::{DeltaConfig, sweperf_delta};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// rules §4.1 verbatim: a complete Mann–Whitney test per step (`sweperf_delta_reference`).
fn naive_delta(base: &[f64], patched: &[f64]) -> f64 {
    etip_stats::sweperf_delta_reference(base, patched, &etip_stats::DeltaConfig::default())
        .expect("valid inputs")
}

/// Median wall time of `f` over `reps` calls.
fn time<F: FnMut() -> f64>(reps: usize, mut f: F) -> Duration {
    let mut t: Vec<Duration> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .collect();
    t.sort();
    t[reps / 2]
}

fn main() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let cfg = DeltaConfig::default();
    println!(
        "{:>6} {:>7} {:>14} {:>14} {:>8}",
        "n", "delta", "scan", "definition", "ratio"
    );
    for n in [20usize, 50, 100, 200, 500, 1000, 200_000] {
        let mut series = |centre: f64| -> Vec<f64> {
            (0..n)
                .map(|_| centre * (1.0 + 0.1 * (rng.random::<f64>() - 0.5)))
                .collect()
        };
        let base = series(2.0);
        let patched = series(1.0);
        let d = sweperf_delta(&base, &patched, &cfg).expect("valid");
        assert_eq!(
            d,
            naive_delta(&base, &patched),
            "scan must equal the definition"
        );
        // 200 000 runs: the definition sorts 200 000 values per step (seconds per call), so the
        // large size is timed once per round.
        let (reps, rounds) = match n {
            0..=200 => (41, 3),
            201..=10_000 => (11, 3),
            _ => (1, 1),
        };
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            fast.push(time(reps.max(3), || {
                sweperf_delta(black_box(&base), black_box(&patched), &cfg).expect("valid")
            }));
            slow.push(time(reps, || {
                naive_delta(black_box(&base), black_box(&patched))
            }));
        }
        let (fast, slow) = (fast.iter().min().copied(), slow.iter().min().copied());
        let (fast, slow) = (fast.expect("one round"), slow.expect("one round"));
        println!(
            "{n:>6} {d:>7.3} {:>11.1} µs {:>11.1} µs {:>7.1}x",
            fast.as_secs_f64() * 1e6,
            slow.as_secs_f64() * 1e6,
            slow.as_secs_f64() / fast.as_secs_f64()
        );
    }
}
