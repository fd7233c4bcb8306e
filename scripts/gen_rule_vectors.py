#!/usr/bin/env python3
"""Reference scores for etip's SWE-Perf and JETO rules, computed independently with numpy/scipy.

Writes crates/score/tests/data/rule_vectors.json: synthetic submissions in etip's task-result schema
(per-test runtimes of base, patched and reference versions) with the scores that SPEC 4.1 (SWE-Perf)
and SPEC 3.1/4.4 (JETO) give them, and the SWE-fficiency and GSO scores of the same data.

    pip install -r scripts/requirements-vectors.txt
    python3 scripts/gen_rule_vectors.py

The data is synthetic (seeded); it exercises the rules, it is not a benchmark result.
"""
import json
import math
import os

import numpy as np
from scipy.stats import binomtest, mannwhitneyu

SEED = 20261121
OUT = os.path.join(os.path.dirname(__file__), "..", "crates", "score", "tests", "data", "rule_vectors.json")


def iqr_filter(xs, k=1.0):
    q1, q3 = np.percentile(xs, [25, 75])  # numpy default: linear interpolation
    iqr = q3 - q1
    return [x for x in xs if q1 - k * iqr <= x <= q3 + k * iqr]


def sweperf_delta(base, patched):
    b = np.array(iqr_filter(base))
    p = np.array(iqr_filter(patched))
    delta = 0.0
    for i in range(0, 1001):
        x = i / 1000
        pv = mannwhitneyu(b * (1 - x), p, alternative="greater").pvalue
        if pv < 0.1:
            delta = x
        else:
            break
    return delta


def sign_p(o, p, min_impr):
    wins = sum(1 for oj, pj in zip(o, p) if pj <= (1 - min_impr) * oj)
    return binomtest(wins, len(o), 0.5, alternative="greater").pvalue


def main():
    rng = np.random.default_rng(SEED)
    submissions = []
    for s in range(3):
        tasks = []
        n_tasks = 12
        for t in range(n_tasks):
            n_tests = int(rng.integers(1, 4))
            # Per task an effect: none, small, large; per submission a different mix.
            effect = [1.0, 0.97, 0.9, 0.6, 0.3][int(rng.integers(0, 5))]
            ref_effect = [0.9, 0.5, 0.3][int(rng.integers(0, 3))]
            correct = bool(rng.random() > 0.2)
            tests = []
            for k in range(n_tests):
                scale = float(rng.uniform(0.05, 2.0))
                base = scale * (1 + 0.05 * rng.standard_normal(20))
                patched = scale * effect * (1 + 0.05 * rng.standard_normal(20))
                reference = scale * ref_effect * (1 + 0.05 * rng.standard_normal(20))
                # an occasional outlier run, which the IQR filter should drop
                if rng.random() < 0.3:
                    base[int(rng.integers(0, 20))] *= 3
                tests.append({
                    "name": f"test_{k}",
                    "base": [round(float(x), 9) for x in np.abs(base)],
                    "patched": [round(float(x), 9) for x in np.abs(patched)],
                    "reference": [round(float(x), 9) for x in np.abs(reference)],
                    "passed": True,
                })
            tasks.append({"instance_id": f"synthetic-{t:02d}", "correct": correct, "tests": tests})
        # SWE-Perf: task δ = mean over tests; incorrect tasks count 0.
        sweperf = sum(
            (sum(sweperf_delta(ts["base"], ts["patched"]) for ts in task["tests"]) / len(task["tests"]))
            if task["correct"] else 0.0
            for task in tasks
        ) / len(tasks)
        # JETO: per-round totals over classes; success iff correct and p < p_val.
        def jeto(min_impr, p_val):
            ok = 0
            for task in tasks:
                if not task["correct"]:
                    continue
                o = np.sum([ts["base"] for ts in task["tests"]], axis=0)
                p = np.sum([ts["patched"] for ts in task["tests"]], axis=0)
                if sign_p(o, p, min_impr) < p_val:
                    ok += 1
            return 100.0 * ok / len(tasks)
        # SWE-fficiency from runs: speedup = Σ mean(base) / Σ mean(patched); gold likewise.
        srs = []
        for task in tasks:
            b = sum(np.mean(ts["base"]) for ts in task["tests"])
            p = sum(np.mean(ts["patched"]) for ts in task["tests"])
            r = sum(np.mean(ts["reference"]) for ts in task["tests"])
            gold = b / r
            srs.append((b / p if task["correct"] else 1.0) / gold)
        hm = len(srs) / sum(1 / max(x, 0.001) for x in srs)
        # GSO from runs: per-test means.
        opt = 0
        for task in tasks:
            if not task["correct"]:
                continue
            bm = [np.mean(ts["base"]) for ts in task["tests"]]
            pm = [np.mean(ts["patched"]) for ts in task["tests"]]
            cm = [np.mean(ts["reference"]) for ts in task["tests"]]
            gm = math.exp(np.mean([math.log(x / y) for x, y in zip(bm, pm)]))
            hmc = len(cm) / sum(y / x for x, y in zip(cm, pm))
            if np.mean(bm) > np.mean(pm) and round(gm, 1) >= 1.2 and hmc > 0.95:
                opt += 1
        submissions.append({
            "name": f"synthetic-{s}",
            "tasks": tasks,
            "expected": {
                "sweperf": 100.0 * sweperf,
                "jeto": jeto(0.05, 0.1),
                "jeto_conservative": jeto(0.1, 0.05),
                "swefficiency": hm,
                "gso": round(100.0 * opt / len(tasks), 2),
            },
        })
    with open(OUT, "w") as f:
        json.dump({"generator": "scripts/gen_rule_vectors.py", "seed": SEED, "submissions": submissions}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
