//! Criterion benchmarks (ns per call): Mann–Whitney U with and without ties,
//! and the SWE-Perf δ search, against the literal definition (one full
//! Mann–Whitney test, with allocation and sorting, per step) measured in the
//! same run as the baseline; the δ search and the sign test on 200 000 runs;
//! the binomial tail on both sides of the exact/saddle-point switch.
//!
//! Run: `cargo bench -p etip-stats --bench stats`

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use etip_stats::{
    Alternative, DeltaConfig, MwuMethod, SignTestConfig, binomial_sf_half, mann_whitney_u,
    sign_test, sweperf_delta,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SIZES: [usize; 6] = [20, 50, 100, 200, 500, 1000];
/// Runs per version (δ) and rounds (sign test) of the large cases.
const LARGE: usize = 200_000;

fn continuous(rng: &mut ChaCha8Rng, n: usize, centre: f64) -> Vec<f64> {
    (0..n)
        .map(|_| centre * (1.0 + 0.1 * (rng.random::<f64>() - 0.5)))
        .collect()
}

fn integers(rng: &mut ChaCha8Rng, n: usize, offset: u32) -> Vec<f64> {
    (0..n)
        .map(|_| f64::from(rng.random_range(0..10u32) + offset))
        .collect()
}

/// rules §4.1 verbatim: a complete Mann–Whitney test per step (`sweperf_delta_reference`).
fn naive_delta(base: &[f64], patched: &[f64]) -> f64 {
    etip_stats::sweperf_delta_reference(base, patched, &etip_stats::DeltaConfig::default())
        .expect("valid inputs")
}

fn bench_mwu(c: &mut Criterion) {
    let mut g = c.benchmark_group("mann_whitney_u");
    g.warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for n in SIZES {
        let x = continuous(&mut rng, n, 1.05);
        let y = continuous(&mut rng, n, 1.0);
        g.bench_with_input(BenchmarkId::new("no_ties", n), &n, |b, _| {
            b.iter(|| {
                mann_whitney_u(
                    black_box(&x),
                    black_box(&y),
                    Alternative::Greater,
                    MwuMethod::Auto,
                )
            })
        });
        let x = integers(&mut rng, n, 1);
        let y = integers(&mut rng, n, 0);
        g.bench_with_input(BenchmarkId::new("ties", n), &n, |b, _| {
            b.iter(|| {
                mann_whitney_u(
                    black_box(&x),
                    black_box(&y),
                    Alternative::Greater,
                    MwuMethod::Auto,
                )
            })
        });
    }
    g.finish();
}

fn bench_delta(c: &mut Criterion) {
    let mut g = c.benchmark_group("sweperf_delta");
    g.warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let cfg = DeltaConfig::default();
    for n in SIZES {
        // A 50% gain: the scan runs about 480 steps before it stops.
        let base = continuous(&mut rng, n, 2.0);
        let patched = continuous(&mut rng, n, 1.0);
        let fast = sweperf_delta(&base, &patched, &cfg).expect("valid");
        assert_eq!(
            fast,
            naive_delta(&base, &patched),
            "fast scan must equal the definition"
        );
        g.bench_with_input(BenchmarkId::new("scan", n), &n, |b, _| {
            b.iter(|| sweperf_delta(black_box(&base), black_box(&patched), &cfg))
        });
        g.bench_with_input(BenchmarkId::new("naive_baseline", n), &n, |b, _| {
            b.iter(|| naive_delta(black_box(&base), black_box(&patched)))
        });
    }
    g.finish();
}

/// 200 000 runs per version, the size the scoring rules must handle: the scan alone (the literal
/// definition takes seconds per call here; `examples/delta_speedup.rs` times it once).
fn bench_delta_large(c: &mut Criterion) {
    let mut g = c.benchmark_group("sweperf_delta_large");
    g.warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5))
        .sample_size(10);
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let cfg = DeltaConfig::default();
    let n = LARGE;
    // A 10 % gain: about 100 scan steps.
    let base = continuous(&mut rng, n, 1.0);
    let patched = continuous(&mut rng, n, 0.9);
    g.bench_with_input(BenchmarkId::new("scan", n), &n, |b, _| {
        b.iter(|| sweperf_delta(black_box(&base), black_box(&patched), &cfg))
    });
    g.finish();
}

fn bench_sign(c: &mut Criterion) {
    let mut g = c.benchmark_group("sign");
    g.warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    // Exact up to 1024 rounds, saddle point above (1025 and LARGE).
    for (n, wins) in [
        (30usize, 20usize),
        (100, 60),
        (1000, 530),
        (1024, 540),
        (1025, 540),
        (LARGE, 100_500),
    ] {
        g.bench_with_input(
            BenchmarkId::new("binomial_sf_half", format!("{n}_{wins}")),
            &n,
            |b, _| b.iter(|| binomial_sf_half(black_box(n), black_box(wins))),
        );
    }
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let original = continuous(&mut rng, 30, 1.0);
    let patched = continuous(&mut rng, 30, 0.93);
    let cfg = SignTestConfig::default();
    g.bench_function("sign_test/30", |b| {
        b.iter(|| sign_test(black_box(&original), black_box(&patched), &cfg))
    });
    let original = continuous(&mut rng, LARGE, 1.0);
    let patched = continuous(&mut rng, LARGE, 0.95);
    g.bench_function(format!("sign_test/{LARGE}"), |b| {
        b.iter(|| sign_test(black_box(&original), black_box(&patched), &cfg))
    });
    g.finish();
}

criterion_group!(
    benches,
    bench_mwu,
    bench_delta,
    bench_delta_large,
    bench_sign
);
criterion_main!(benches);
