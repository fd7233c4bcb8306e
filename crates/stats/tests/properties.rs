//! Property tests of the statistical invariants.

use etip_stats::{
    Alternative, DeltaConfig, Direction, Futility, MwuMethod, Sample, SequentialDesign,
    SignTestConfig, Spending, TimerRule, binomial_sf_half, bootstrap_speedup_ci, cliffs_delta,
    mann_whitney_u, paired_ratio_ci, sign_test, sign_test_with, sweperf_delta,
};
use proptest::prelude::*;

const ALTERNATIVES: [Alternative; 3] = [
    Alternative::TwoSided,
    Alternative::Less,
    Alternative::Greater,
];
const METHODS: [MwuMethod; 3] = [MwuMethod::Auto, MwuMethod::Exact, MwuMethod::Asymptotic];

/// Either continuous-looking values or small integers (many ties).
fn series(max_len: usize) -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        prop::collection::vec(0.0f64..100.0, 1..=max_len),
        prop::collection::vec((0u8..6).prop_map(f64::from), 1..=max_len),
    ]
}

fn p_of(x: &[f64], y: &[f64], alt: Alternative, method: MwuMethod) -> f64 {
    mann_whitney_u(x, y, alt, method)
        .expect("generated inputs are valid")
        .p_value
}

/// rules §4.1 verbatim: a complete Mann–Whitney test per step (`sweperf_delta_reference`).
fn naive_delta(base: &[f64], patched: &[f64]) -> f64 {
    etip_stats::sweperf_delta_reference(base, patched, &etip_stats::DeltaConfig::default())
        .expect("valid inputs")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn p_values_are_probabilities(x in series(40), y in series(40)) {
        for alt in ALTERNATIVES {
            for method in METHODS {
                let p = p_of(&x, &y, alt, method);
                prop_assert!((0.0..=1.0).contains(&p), "{alt:?} {method:?}: p = {p}");
            }
        }
    }

    #[test]
    fn shifting_x_up_never_raises_greater_p(x in series(30), y in series(30), c in 0.001f64..50.0) {
        let shifted: Vec<f64> = x.iter().map(|v| v + c).collect();
        for method in [MwuMethod::Exact, MwuMethod::Asymptotic] {
            let before = p_of(&x, &y, Alternative::Greater, method);
            let after = p_of(&shifted, &y, Alternative::Greater, method);
            prop_assert!(after <= before, "{method:?}: p rose from {before} to {after}");
        }
    }

    #[test]
    fn shifting_x_up_never_raises_auto_greater_p_without_ties(
        x in prop::collection::vec(0.0f64..100.0, 1..30),
        y in prop::collection::vec(0.0f64..100.0, 1..30),
        c in 0.001f64..50.0,
    ) {
        let shifted: Vec<f64> = x.iter().map(|v| v + c).collect();
        let before = p_of(&x, &y, Alternative::Greater, MwuMethod::Auto);
        let after = p_of(&shifted, &y, Alternative::Greater, MwuMethod::Auto);
        prop_assert!(after <= before, "p rose from {before} to {after}");
    }

    #[test]
    fn swapping_samples_mirrors_one_sided_tests(x in series(40), y in series(40)) {
        for method in METHODS {
            let xy = mann_whitney_u(&x, &y, Alternative::Greater, method).expect("valid");
            let yx = mann_whitney_u(&y, &x, Alternative::Less, method).expect("valid");
            prop_assert_eq!(xy.p_value, yx.p_value);
            prop_assert_eq!(xy.method_used, yx.method_used);
            prop_assert_eq!(xy.u + yx.u, (x.len() * y.len()) as f64);
            prop_assert_eq!(
                p_of(&x, &y, Alternative::TwoSided, method),
                p_of(&y, &x, Alternative::TwoSided, method)
            );
        }
    }

    #[test]
    fn sign_test_is_symmetric_under_swapping_roles(
        pairs in prop::collection::vec((0.0f64..10.0, 0.0f64..10.0), 1..60),
        min_impr in 0.0f64..0.5,
        p_val in 0.001f64..0.5,
    ) {
        let (o, p): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
        let cfg = SignTestConfig { min_impr, p_val };
        let a = sign_test(&o, &p, &cfg).expect("valid");
        let b = sign_test(&p, &o, &cfg).expect("valid");
        prop_assert_eq!(a.n, b.n);
        prop_assert_eq!(a.wins_patched, b.wins_original);
        prop_assert_eq!(a.wins_original, b.wins_patched);
        prop_assert_eq!(a.p_patched, b.p_original);
        prop_assert_eq!(a.p_original, b.p_patched);
        let both = a.p_patched < p_val && a.p_original < p_val;
        if !both {
            let mirrored = match a.direction {
                Direction::PatchedFaster => Direction::OriginalFaster,
                Direction::OriginalFaster => Direction::PatchedFaster,
                Direction::NotSignificant => Direction::NotSignificant,
            };
            prop_assert_eq!(b.direction, mirrored);
        }
        prop_assert!((0.0..=1.0).contains(&a.p_patched) && (0.0..=1.0).contains(&a.p_original));
    }

    #[test]
    fn binomial_tail_is_monotone(n in 1usize..400, k in 0usize..400) {
        let k = k.min(n);
        let here = binomial_sf_half(n, k);
        let next = binomial_sf_half(n, k + 1);
        prop_assert!((0.0..=1.0).contains(&here));
        prop_assert!(next <= here);
    }

    #[test]
    fn binomial_tail_is_monotone_above_the_exact_range(n in 1025usize..300_000, at in 0.0f64..1.0) {
        // Loader's saddle point (n > EXACT_SIGN_ROUNDS): in [0, 1], non-increasing in wins, and
        // P(X >= k) + P(X >= n - k + 1) = 1 within its 1e-12 relative error.
        let k = ((at * n as f64) as usize).min(n);
        let here = binomial_sf_half(n, k);
        let next = binomial_sf_half(n, k + 1);
        prop_assert!((0.0..=1.0).contains(&here));
        prop_assert!(next <= here, "n {n} k {k}: {next} > {here}");
        if k >= 1 {
            let sum = here + binomial_sf_half(n, n - k + 1);
            prop_assert!((sum - 1.0).abs() < 1e-12, "n {n} k {k}: {sum}");
        }
    }

    #[test]
    fn bootstrap_interval_is_ordered(
        before in prop::collection::vec(0.5f64..2.0, 2..30),
        after in prop::collection::vec(0.5f64..2.0, 2..30),
        level in 0.5f64..0.99,
        seed in any::<u64>(),
    ) {
        let b = Sample::new(before).expect("valid");
        let a = Sample::new(after).expect("valid");
        let ci = bootstrap_speedup_ci(&b, &a, level, 200, seed);
        prop_assert!(ci.lower <= ci.upper);
        prop_assert_eq!(ci, bootstrap_speedup_ci(&b, &a, level, 200, seed));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn fast_delta_scan_equals_the_definition(
        base in prop_oneof![
            prop::collection::vec(1.0f64..2.0, 3..25),
            prop::collection::vec((10u16..20).prop_map(|v| f64::from(v) / 10.0), 3..25),
        ],
        patched in prop_oneof![
            prop::collection::vec(0.5f64..1.6, 3..25),
            prop::collection::vec((5u16..16).prop_map(|v| f64::from(v) / 10.0), 3..25),
        ],
    ) {
        let fast = sweperf_delta(&base, &patched, &DeltaConfig::default()).expect("valid");
        prop_assert_eq!(fast, naive_delta(&base, &patched));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn cliffs_delta_is_antisymmetric_and_bounded(x in series(40), y in series(40)) {
        let d = cliffs_delta(&x, &y).expect("valid");
        prop_assert!((-1.0..=1.0).contains(&d));
        prop_assert_eq!(cliffs_delta(&y, &x).expect("valid"), -d);
        // Equal to 2U/(nm) - 1 with scipy's U.
        let u = mann_whitney_u(&x, &y, Alternative::Greater, MwuMethod::Asymptotic)
            .expect("valid")
            .u;
        prop_assert!((d - (2.0 * u / (x.len() * y.len()) as f64 - 1.0)).abs() < 1e-12);
    }

    #[test]
    fn resolution_rule_only_removes_wins(
        pairs in prop::collection::vec(((0u8..4).prop_map(f64::from), (0u8..4).prop_map(f64::from)), 1..40),
        r in prop_oneof![Just(0.0), Just(1.0), Just(2.5)],
    ) {
        let (o, p): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
        let cfg = SignTestConfig::default();
        let lit = sign_test_with(&o, &p, &cfg, TimerRule::Literal).expect("valid");
        let res = sign_test_with(&o, &p, &cfg, TimerRule::Resolution(r)).expect("valid");
        let ties = o.iter().zip(&p).filter(|(a, b)| **a <= r && **b <= r).count();
        prop_assert_eq!(res.n, lit.n);
        prop_assert!(res.wins_patched <= lit.wins_patched && res.wins_original <= lit.wins_original);
        // Only the tied pairs lose their wins.
        prop_assert!(res.wins_patched + ties >= lit.wins_patched);
        prop_assert!(res.wins_patched + res.wins_original + ties <= res.n);
    }

    #[test]
    fn paired_ratio_interval_is_ordered_and_reproducible(
        pairs in prop::collection::vec((0.5f64..2.0, 0.4f64..2.0), 1..30),
        level in 0.5f64..0.99,
        seed in any::<u64>(),
    ) {
        let (o, p): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
        let r = paired_ratio_ci(&o, &p, level, 100, seed);
        prop_assert!(r.lower <= r.upper, "{:?}", r);
        let ratios: Vec<f64> = o.iter().zip(&p).map(|(a, b)| b / a).collect();
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        prop_assert!(lo <= r.lower && r.upper <= hi && lo <= r.estimate && r.estimate <= hi);
        prop_assert_eq!(r, paired_ratio_ci(&o, &p, level, 100, seed));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn sequential_designs_keep_the_false_positive_rate(
        first in 1usize..40,
        batch in 1usize..12,
        extra in 0usize..60,
        alpha in prop_oneof![Just(0.1), Just(0.05), 0.001f64..0.5],
        rho in 0.2f64..4.0,
        beta in 0.0f64..0.3,
    ) {
        let futility = if beta < 0.05 {
            Futility::Curtail
        } else {
            Futility::BetaSpending { q1: 0.65, beta, rho: 1.0 }
        };
        let d = SequentialDesign::new(first, batch, first + extra, alpha, Spending::Power { rho }, futility)
            .expect("valid");
        let fpr = d.false_positive_rate();
        let bound = d.looks().last().expect("a look").alpha_spent;
        prop_assert!(fpr <= bound && bound < alpha, "{} {} {}", fpr, bound, alpha);
        // Monotone boundaries: more wins never turn significance off.
        for l in d.looks() {
            prop_assert!(l.futile_below <= l.min_wins && l.min_wins <= l.n + 1);
        }
        let op = d.operating(0.5).expect("valid");
        prop_assert!((op.rejection_probability - fpr).abs() < 1e-12);
        prop_assert!(op.expected_rounds >= first as f64 && op.expected_rounds <= d.max() as f64 + 1e-9);
    }
}
