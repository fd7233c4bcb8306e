//! Checks etip-stats against reference vectors produced by scipy 1.17.1 /
//! numpy 2.4.6 (`scripts/gen_stats_vectors.py`, data in `tests/data`).

use std::path::PathBuf;

use etip_stats::{
    Alternative, DeltaConfig, MwuMethod, binomial_sf_half, iqr_filter, mann_whitney_u, normal_sf,
    quantile_linear, sweperf_delta,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;

const REL: f64 = 1e-9;

#[derive(Deserialize)]
struct File<T> {
    scipy: String,
    numpy: String,
    cases: Vec<T>,
}

fn load<T: DeserializeOwned>(name: &str) -> Vec<T> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read reference vectors {}: {e}; regenerate them with \
             `python3 scripts/gen_stats_vectors.py`",
            path.display()
        )
    });
    let file: File<T> = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not valid vector JSON: {e}", path.display()));
    assert_eq!(
        (file.scipy.as_str(), file.numpy.as_str()),
        ("1.17.1", "2.4.6"),
        "{name} was generated with other scipy/numpy versions than the pinned ones"
    );
    assert!(!file.cases.is_empty(), "{name} holds no cases");
    file.cases
}

fn rel_err(got: f64, want: f64) -> f64 {
    if got == want {
        0.0
    } else {
        (got - want).abs() / want.abs()
    }
}

#[derive(Deserialize)]
struct MwuCase {
    id: usize,
    kind: String,
    x: Vec<f64>,
    y: Vec<f64>,
    results: Vec<MwuResult>,
}

#[derive(Deserialize)]
struct MwuResult {
    alternative: String,
    method: String,
    u: f64,
    p: f64,
}

#[test]
fn mann_whitney_matches_scipy() {
    let cases: Vec<MwuCase> = load("mannwhitney_vectors.json");
    let mut checked = 0;
    let mut worst = (0.0f64, String::new());
    let mut tiny = 0;
    for case in &cases {
        for r in &case.results {
            let alternative = match r.alternative.as_str() {
                "two-sided" => Alternative::TwoSided,
                "less" => Alternative::Less,
                "greater" => Alternative::Greater,
                other => panic!("unknown alternative {other}"),
            };
            let method = match r.method.as_str() {
                "auto" => MwuMethod::Auto,
                "exact" => MwuMethod::Exact,
                "asymptotic" => MwuMethod::Asymptotic,
                other => panic!("unknown method {other}"),
            };
            let got = mann_whitney_u(&case.x, &case.y, alternative, method)
                .expect("reference inputs are valid");
            let what = format!(
                "case {} ({}, n1={}, n2={}) {} {}",
                case.id,
                case.kind,
                case.x.len(),
                case.y.len(),
                r.alternative,
                r.method
            );
            assert_eq!(got.u, r.u, "U differs for {what}");
            let e = rel_err(got.p_value, r.p);
            assert!(
                e <= REL,
                "p differs for {what}: got {:e}, scipy {:e} (rel {e:e})",
                got.p_value,
                r.p
            );
            if e > worst.0 {
                worst = (e, what);
            }
            if r.p < 1e-10 {
                tiny += 1;
            }
            checked += 1;
        }
    }
    assert!(checked >= 200, "only {checked} Mann–Whitney vectors");
    assert!(
        tiny >= 10,
        "vectors should cover tiny tail p-values, only {tiny} do"
    );
    eprintln!(
        "{checked} Mann–Whitney results match scipy; worst relative p error {:e} ({})",
        worst.0, worst.1
    );
}

#[derive(Deserialize)]
struct IqrCase {
    xs: Vec<f64>,
    quantiles: Vec<(f64, f64)>,
    k: f64,
    kept: Vec<f64>,
}

#[test]
fn quantiles_and_iqr_filter_match_numpy_exactly() {
    let cases: Vec<IqrCase> = load("quantile_iqr_vectors.json");
    for (i, case) in cases.iter().enumerate() {
        for &(q, want) in &case.quantiles {
            let got = quantile_linear(&case.xs, q);
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "case {i}: quantile({q}) = {got}, numpy {want}"
            );
        }
        assert_eq!(
            iqr_filter(&case.xs, case.k),
            case.kept,
            "case {i}: IQR filter (k = {}) keeps different values",
            case.k
        );
    }
}

#[derive(Deserialize)]
struct DeltaCase {
    base: Vec<f64>,
    patched: Vec<f64>,
    iqr_k: Option<f64>,
    delta: f64,
}

#[test]
fn sweperf_delta_matches_reference() {
    let cases: Vec<DeltaCase> = load("delta_vectors.json");
    let (mut zero, mut small, mut large) = (0, 0, 0);
    for (i, case) in cases.iter().enumerate() {
        let cfg = DeltaConfig {
            iqr_k: case.iqr_k,
            ..DeltaConfig::default()
        };
        let got = sweperf_delta(&case.base, &case.patched, &cfg).expect("valid inputs");
        assert_eq!(
            got, case.delta,
            "case {i}: delta {got}, reference {}",
            case.delta
        );
        if case.delta == 0.0 {
            zero += 1;
        } else if case.delta <= 0.05 {
            small += 1;
        } else {
            large += 1;
        }
    }
    assert!(
        zero >= 5 && small >= 5 && large >= 5,
        "delta vectors should cover 0, small and large deltas ({zero}, {small}, {large})"
    );
}

#[derive(Deserialize)]
struct BinomialCase {
    n: usize,
    wins: usize,
    p: f64,
    p_exact: f64,
}

#[test]
fn binomial_tail_matches_scipy_and_exact_fraction() {
    let cases: Vec<BinomialCase> = load("binomial_vectors.json");
    for c in &cases {
        let got = binomial_sf_half(c.n, c.wins);
        assert_eq!(
            got, c.p_exact,
            "n={} wins={}: {got:e} is not the correctly rounded exact tail {:e}",
            c.n, c.wins, c.p_exact
        );
        let e = rel_err(got, c.p);
        assert!(
            e <= REL,
            "n={} wins={}: {got:e} vs scipy binomtest {:e} (rel {e:e})",
            c.n,
            c.wins,
            c.p
        );
    }
    assert!(cases.iter().any(|c| c.n == 1000));
}

#[derive(Deserialize)]
struct NormalCase {
    z: f64,
    sf: f64,
}

#[test]
fn normal_sf_matches_scipy_ndtr() {
    let cases: Vec<NormalCase> = load("normal_vectors.json");
    let mut worst = 0.0f64;
    for c in &cases {
        let got = normal_sf(c.z);
        if c.sf < f64::MIN_POSITIVE {
            // Subnormal or underflowed tails: absolute agreement is all that is meaningful.
            assert!(
                (got - c.sf).abs() < 1e-300,
                "z={}: {got:e} vs {:e}",
                c.z,
                c.sf
            );
            continue;
        }
        let e = rel_err(got, c.sf);
        worst = worst.max(e);
        assert!(
            e <= 1e-12,
            "z={}: {got:e} vs scipy {:e} (rel {e:e})",
            c.z,
            c.sf
        );
    }
    eprintln!("normal sf: worst relative error vs scipy.special.ndtr {worst:e}");
}

#[derive(Deserialize)]
struct WilcoxonCase {
    kind: String,
    d: Vec<f64>,
    results: Vec<WilcoxonResult>,
}

#[derive(Deserialize)]
struct WilcoxonResult {
    alternative: String,
    r_plus: Option<f64>,
    p: f64,
}

#[test]
fn wilcoxon_signed_rank_matches_scipy() {
    let cases: Vec<WilcoxonCase> = load("wilcoxon_vectors.json");
    assert!(cases.len() >= 30);
    let mut exact = 0;
    for c in &cases {
        for r in &c.results {
            let alt = match r.alternative.as_str() {
                "two-sided" => Alternative::TwoSided,
                "less" => Alternative::Less,
                _ => Alternative::Greater,
            };
            let got = etip_stats::wilcoxon_signed_rank(&c.d, alt).unwrap();
            exact += usize::from(got.exact);
            if let Some(stat) = r.r_plus {
                assert_eq!(got.r_plus, stat, "{} {}", c.kind, r.alternative);
            }
            assert!(
                rel_err(got.p_value, r.p) < REL,
                "{} {} (n = {}): p {} against scipy's {}",
                c.kind,
                r.alternative,
                got.n,
                got.p_value,
                r.p
            );
        }
    }
    // Both methods are exercised.
    assert!(exact > 0 && exact < 3 * cases.len(), "{exact}");
}
