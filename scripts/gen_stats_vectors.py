#!/usr/bin/env python3
"""Reference vectors for the etip-stats crate, computed with scipy and numpy.

Pinned versions (also in scripts/requirements-vectors.txt):
    scipy==1.17.1  numpy==2.4.6  (CPython 3.11)

    pip install -r scripts/requirements-vectors.txt
    python3 scripts/gen_stats_vectors.py            # writes crates/stats/tests/data/*.json

Deterministic: a fixed seed drives every random choice. Files written:

  mannwhitney_vectors.json  scipy.stats.mannwhitneyu(x, y, alternative=..., method=...)
                            (use_continuity=True), U1 and p for every alternative and
                            for methods auto / asymptotic / exact. Exact results are also
                            checked here against the exact distribution computed with
                            Python integers; a case where scipy's own exact p-value is off
                            by more than 1e-11 relative would be dropped (counted on stdout).
  quantile_iqr_vectors.json numpy.quantile (default 'linear') at several q, and the IQR
                            filter [Q1 - k IQR, Q3 + k IQR] with numpy.percentile quartiles.
  delta_vectors.json        SWE-Perf delta (SPEC 4.1), faithful Python implementation below.
  binomial_vectors.json     scipy.stats.binomtest(wins, n, 0.5, alternative='greater').pvalue,
                            plus the correctly rounded exact value (fractions).
  normal_vectors.json       scipy.special.ndtr(-z) (the normal survival function used by
                            mannwhitneyu's asymptotic method).
  wilcoxon_vectors.json     scipy.stats.wilcoxon(d, alternative=...) (zero_method 'wilcox',
                            no continuity correction, method 'auto': exact up to 50
                            differences), r_plus and p for every alternative.
"""

import argparse
import json
import math
import os
from fractions import Fraction

import numpy as np
import scipy
from scipy import special, stats

SEED = 20261121
PINNED = {"scipy": "1.17.1", "numpy": "2.4.6"}


def header():
    return {
        "generator": "scripts/gen_stats_vectors.py",
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "seed": SEED,
    }


def floats(a):
    return [float(v) for v in a]


# ---------------------------------------------------------------- Mann-Whitney

_COUNTS = {}


def u_counts(m, n):
    """Exact frequencies of U for sizes (m, n): coefficients of the Gaussian
    binomial [m+n choose m]_q, with Python integers."""
    m, n = min(m, n), max(m, n)
    key = (m, n)
    if key not in _COUNTS:
        k_max = m * n
        c = [0] * (k_max + 1)
        c[0] = 1
        for i in range(1, m + 1):
            d = n + i
            for u in range(k_max, d - 1, -1):
                c[u] -= c[u - d]
            for u in range(i, k_max + 1):
                c[u] += c[u - i]
        _COUNTS[key] = c
    return _COUNTS[key]


def exact_mwu_p(m, n, u1, alternative):
    """Exact p-value as scipy defines it (U truncated to int, two-sided doubled, clipped)."""
    c = u_counts(m, n)
    total = math.comb(m + n, m)
    u2 = m * n - u1
    if alternative == "greater":
        u, f = u1, 1
    elif alternative == "less":
        u, f = u2, 1
    else:
        u, f = max(u1, u2), 2
    k = int(u)
    p = Fraction(sum(c[k:]), total) * f
    return float(min(p, Fraction(1)))


def make_pair(rng, kind):
    n1 = int(rng.integers(2, 61))
    n2 = int(rng.integers(2, 61))
    if kind == "small":  # at least one side <= 8: scipy 'auto' may pick exact
        if rng.random() < 0.5:
            n1 = int(rng.integers(2, 9))
        else:
            n2 = int(rng.integers(2, 9))
    shift = float(rng.choice([0.0, 0.0, 0.3, 0.8, 2.0]))
    if kind in ("continuous", "small"):
        x = rng.lognormal(0.0, 0.4, n1) * (1.0 + shift)
        y = rng.lognormal(0.0, 0.4, n2)
    elif kind == "integer":  # moderate ties
        hi = int(rng.integers(8, 40))
        x = rng.integers(0, hi, n1).astype(float) + round(shift * hi / 4)
        y = rng.integers(0, hi, n2).astype(float)
    elif kind == "heavy_ties":  # a handful of distinct values
        vals = np.array([1.0, 2.0, 3.0, 5.0])[: int(rng.integers(2, 5))]
        x = rng.choice(vals, n1) + (1.0 if shift > 1.0 else 0.0)
        y = rng.choice(vals, n2)
    elif kind == "rounded":  # JUnit-like millisecond times: some ties
        x = np.round(rng.normal(0.050 * (1 + shift), 0.004, n1), 3)
        y = np.round(rng.normal(0.050, 0.004, n2), 3)
    elif kind == "separated":  # far apart: tiny p-values in the tails
        x = rng.normal(100.0, 1.0, n1)
        y = rng.normal(10.0, 1.0, n2)
        if rng.random() < 0.5:
            x, y = y, x
    else:
        raise ValueError(kind)
    return floats(x), floats(y)


def mwu_cases(rng):
    kinds = ["continuous"] * 30 + ["small"] * 30 + ["integer"] * 20 + [
        "heavy_ties"] * 15 + ["rounded"] * 15 + ["separated"] * 12
    pairs = [make_pair(rng, k) + (k,) for k in kinds]
    # Hand-picked edge cases.
    pairs += [
        ([19.0, 22.0, 16.0, 29.0, 24.0], [20.0, 11.0, 17.0, 12.0], "scipy_doc"),
        ([1.0], [2.0], "singletons"),
        ([1.0, 1.0], [1.0, 1.0, 1.0], "all_tied"),
        ([0.0, -0.0, 1.0], [0.0, 2.0], "signed_zero_ties"),
        (floats(np.arange(60) + 100.0), floats(np.arange(60)), "disjoint_60"),
        (floats(np.arange(8) + 100.0), floats(np.arange(60)), "disjoint_8_60"),
        ([1.0, 2.0, 2.5], [2.0, 3.0, 0.5, 4.0], "exact_with_ties"),
    ]
    cases = []
    dropped = 0
    n_results = 0
    for i, (x, y, kind) in enumerate(pairs):
        results = []
        for alternative in ("two-sided", "less", "greater"):
            for method in ("auto", "asymptotic", "exact"):
                r = stats.mannwhitneyu(x, y, alternative=alternative, method=method)
                u, p = float(r.statistic), float(r.pvalue)
                if method == "exact" or (method == "auto" and
                                         stats._mannwhitneyu._mwu_choose_method(
                                             len(x), len(y),
                                             len(set(x + y)) < len(x) + len(y)) == "exact"):
                    ref = exact_mwu_p(len(x), len(y), u, alternative)
                    if abs(p - ref) > 1e-11 * ref:
                        dropped += 1
                        continue
                results.append({"alternative": alternative, "method": method,
                                "u": u, "p": p})
        n_results += len(results)
        cases.append({"id": i, "kind": kind, "x": x, "y": y, "results": results})
    print(f"mannwhitney: {len(cases)} sample pairs, {n_results} (pair, alternative, method) "
          f"results, {dropped} dropped (scipy exact off by > 1e-11)")
    return cases


# ------------------------------------------------------------ quantiles / IQR

QS = [0.0, 0.1, 0.25, 1.0 / 3.0, 0.5, 0.6, 0.75, 0.9, 0.99, 1.0]


def iqr_filter(xs, k):
    """SPEC 4.1 outlier filter: keep [Q1 - k IQR, Q3 + k IQR], numpy default quartiles."""
    xs = np.asarray(xs, dtype=float)
    q1, q3 = np.percentile(xs, [25, 75])
    iqr = q3 - q1
    lower, upper = q1 - k * iqr, q3 + k * iqr
    return xs[(xs >= lower) & (xs <= upper)]


def iqr_cases(rng):
    cases = []
    for i in range(120):
        n = int(rng.integers(1, 61))
        style = i % 4
        if style == 0:
            xs = rng.lognormal(0.0, 0.3, n)
        elif style == 1:  # outliers on both sides
            xs = rng.normal(1.0, 0.05, n)
            m = max(1, n // 10)
            xs[rng.integers(0, n, m)] *= rng.choice([0.2, 5.0], m)
        elif style == 2:  # ties
            xs = np.round(rng.normal(0.02, 0.003, n), 3)
        else:
            xs = rng.integers(1, 6, n).astype(float)
        k = [1.0, 1.0, 1.5, 0.0, 3.0][i % 5]
        xs = floats(xs)
        cases.append({
            "xs": xs,
            "quantiles": [[q, float(np.quantile(xs, q))] for q in QS],
            "k": k,
            "kept": floats(iqr_filter(xs, k)),
        })
    print(f"quantile/iqr: {len(cases)} cases")
    return cases


# -------------------------------------------------------------- SWE-Perf delta

def sweperf_delta(base, patched, k=1.0):
    """SPEC 4.1: after the IQR filter, x = i/1000 for i = 0..1000 while
    mannwhitneyu(base*(1-x), patched, alternative='greater').pvalue < 0.1,
    record x; delta = last recorded x (0 if x = 0 is not significant)."""
    b = np.asarray(base, dtype=float)
    p = np.asarray(patched, dtype=float)
    if k is not None:
        b = iqr_filter(b, k)
        p = iqr_filter(p, k)
    delta = 0.0
    for i in range(0, 1001):
        x = i / 1000
        pv = stats.mannwhitneyu(b * (1 - x), p, alternative="greater").pvalue
        if pv < 0.1:
            delta = x
        else:
            break
    return delta


def delta_cases(rng):
    cases = []
    gains = [0.0, 0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.4, 0.7, 0.95]
    for i in range(110):
        n_b, n_p = 20, 20
        if i >= 100:  # a few short series (the exact method kicks in after filtering)
            n_b, n_p = int(rng.integers(3, 9)), int(rng.integers(3, 9))
        gain = gains[i % len(gains)]
        noise = float(rng.choice([0.005, 0.02, 0.05, 0.15]))
        mu = float(rng.choice([0.003, 0.05, 1.0, 12.0]))
        base = mu * rng.lognormal(0.0, noise, n_b)
        patched = mu * (1 - gain) * rng.lognormal(0.0, noise, n_p)
        if i % 7 == 3:  # outliers for the IQR filter
            base[0] *= 3.0
            patched[-1] *= 0.2
        if i % 5 == 4:  # timer resolution: ties
            base = np.round(base, 3 if mu < 1 else 2)
            patched = np.round(patched, 3 if mu < 1 else 2)
        k = None if i % 11 == 10 else 1.0
        base, patched = floats(base), floats(patched)
        d = sweperf_delta(base, patched, k)
        cases.append({"base": base, "patched": patched, "iqr_k": k, "delta": d})
    ds = [c["delta"] for c in cases]
    print(f"delta: {len(cases)} cases, {sum(d == 0 for d in ds)} with delta = 0, "
          f"{sum(0 < d <= 0.05 for d in ds)} in (0, 0.05], {sum(d > 0.05 for d in ds)} > 0.05")
    return cases


# ------------------------------------------------------------------- binomial

def binomial_cases(rng):
    pairs = [(30, w) for w in range(0, 31)]
    pairs += [(n, w) for n in (1, 2, 5, 63, 64, 65, 127, 128, 129, 1000) for w in
              (0, 1, n // 2, n // 2 + 1, n - 1, n)]
    for _ in range(150):
        n = int(rng.integers(1, 1001))
        centre = n / 2 + float(rng.normal(0, 2 * math.sqrt(n)))
        w = int(min(n, max(0, round(centre))))
        pairs.append((n, w))
    for _ in range(30):
        n = int(rng.integers(1, 1001))
        pairs.append((n, int(rng.integers(0, n + 1))))
    cases = []
    for n, w in pairs:
        p = float(stats.binomtest(w, n, 0.5, alternative="greater").pvalue)
        exact = float(Fraction(sum(math.comb(n, k) for k in range(w, n + 1)), 2 ** n))
        cases.append({"n": n, "wins": w, "p": p, "p_exact": exact})
    print(f"binomial: {len(cases)} cases")
    return cases


# --------------------------------------------------------------------- normal

def normal_cases(rng):
    zs = list(np.linspace(-38.0, 38.0, 761)) + list(rng.normal(0, 3, 200))
    zs += [0.0, 0.5, 0.7071067811865476, 1.0, 1.959963984540054, 5.0, 10.0, 20.0, 26.0, 37.0]
    cases = [{"z": float(z), "sf": float(special.ndtr(-z))} for z in zs]
    print(f"normal: {len(cases)} cases")
    return cases


# --------------------------------------------------------------------- wilcoxon

def wilcoxon_cases():
    rng = np.random.default_rng(SEED + 1)
    samples = []
    for n in [1, 2, 3, 5, 6, 7, 8, 10, 12, 15, 20, 30, 49, 50, 51, 60, 100, 300]:
        samples.append((floats(rng.normal(0.1, 0.3, n)), f"normal_{n}"))
    for n in [8, 12, 30, 60]:
        # Excess times as etip's timing check sees them: a shifted, heavy-tailed sample.
        samples.append((floats(rng.standard_t(3, n) * 0.2 + 0.3), f"shifted_t_{n}"))
        samples.append((floats(np.round(rng.normal(0.0, 0.05, n), 2)), f"rounded_ties_{n}"))
    samples += [
        ([0.3, 0.2, -0.1, 0.5, 0.4, 0.25], "doc_like"),
        ([0.3, 0.0, -0.1, 0.5, 0.4, 0.25], "one_zero"),
        ([0.3, 0.2, -0.2, 0.5, 0.4, 0.25], "tied_ranks"),
        ([1.0] * 12, "all_positive_tied"),
        ([-1.0, 1.0] * 30, "balanced_tied_60"),
    ]
    cases = []
    for d, kind in samples:
        results = []
        for alternative in ("two-sided", "less", "greater"):
            r = stats.wilcoxon(d, alternative=alternative)
            stat = float(r.statistic)
            if alternative == "two-sided":
                # scipy reports min(r_plus, r_minus) two-sided; r_plus is asked of "greater".
                stat = None
            results.append({"alternative": alternative, "r_plus": stat, "p": float(r.pvalue)})
        cases.append({"kind": kind, "d": d, "results": results})
    print(f"wilcoxon: {len(cases)} cases")
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "crates", "stats", "tests", "data"))
    args = ap.parse_args()
    if scipy.__version__ != PINNED["scipy"] or np.__version__ != PINNED["numpy"]:
        print(f"warning: scipy {scipy.__version__} / numpy {np.__version__} differ from the "
              f"pinned {PINNED}; vectors may change")
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(SEED)
    outputs = {
        "mannwhitney_vectors.json": mwu_cases(rng),
        "quantile_iqr_vectors.json": iqr_cases(rng),
        "delta_vectors.json": delta_cases(rng),
        "binomial_vectors.json": binomial_cases(rng),
        "normal_vectors.json": normal_cases(rng),
        "wilcoxon_vectors.json": wilcoxon_cases(),
    }
    for name, cases in outputs.items():
        path = os.path.join(args.out, name)
        with open(path, "w") as f:
            json.dump({**header(), "cases": cases}, f, separators=(",", ":"))
            f.write("\n")
        print(f"wrote {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
