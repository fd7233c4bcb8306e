#!/usr/bin/env python3
"""Generates etip's embedded example: a SYNTHETIC leaderboard in SWE-fficiency's report format.

    python3 scripts/gen_example_leaderboard.py

Writes datasets/examples/synthetic-leaderboard/synthetic-<model>.csv (one submission each). Nothing in
these files was measured: the numbers come from a seeded random model chosen to show a fragile
harmonic-mean aggregate (one high-headroom near-miss decides the ranking). Standard library only.
"""
import csv
import math
import os
import random

SEED = 7
N_TASKS = 120
OUT = os.path.join(os.path.dirname(__file__), "..", "datasets", "examples", "synthetic-leaderboard")
COLUMNS = ["instance_id", "raw_pred_speedup_ratio", "pred_speedup_ratio", "gold_speedup_ratio",
           "human_speedup_ratio", "correctness", "correctness_pct", "pre_edit_runtime", "patch_length"]

# name: (probability correct, typical fraction of the gold speedup reached, spread)
MODELS = {
    "model-careful": (0.90, 0.70, 0.25),
    "model-bold": (0.80, 1.05, 0.35),
    "model-steady": (0.85, 0.85, 0.20),
    "model-weak": (0.55, 0.35, 0.30),
}


def main():
    rng = random.Random(SEED)
    # Gold speedups: heavy-tailed like real benchmarks (1.05x .. thousands x).
    gold = [1.02 + rng.lognormvariate(0.0, 1.3) for _ in range(N_TASKS)]
    gold[17] = 4200.0  # one task with enormous headroom
    runtime = [rng.uniform(0.05, 3.0) for _ in range(N_TASKS)]
    os.makedirs(OUT, exist_ok=True)
    for name, (p_correct, reach, spread) in MODELS.items():
        rows = []
        for i in range(N_TASKS):
            raw = max(0.2, gold[i] ** (reach * math.exp(rng.gauss(0, spread))))
            correct = rng.random() < p_correct
            pct = 1.0 if correct else rng.choice([rng.uniform(0.5, 0.999), 1 - rng.uniform(1e-5, 9e-5)])
            if name == "model-bold" and i == 17:
                # Fast, but a stray debug print fails 2 of 40,000 tests.
                correct, pct, raw = False, 1 - 2 / 40000, 3900.0
            if name != "model-bold" and i == 17:
                correct, pct, raw = True, 1.0, {"model-careful": 40.0, "model-steady": 300.0}.get(name, 8.0)
            pred = raw if correct else 1.0
            rows.append({
                "instance_id": f"synthetic__project-{i:03d}",
                "raw_pred_speedup_ratio": raw,
                "pred_speedup_ratio": pred,
                "gold_speedup_ratio": gold[i],
                "human_speedup_ratio": pred / gold[i],
                "correctness": 1.0 if correct else 0.0,
                "correctness_pct": pct,
                "pre_edit_runtime": runtime[i],
                "patch_length": rng.randint(3, 200),
            })
        with open(os.path.join(OUT, f"synthetic-{name}.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
