"""etip's workload runner: times one workload script in this (fresh) process and writes a report.

    python etip_workload.py --name NAME --repeat R --out REPORT.json SCRIPT

Two shapes of script are understood, the ones SWE-fficiency and GSO use:

1. A script with a top-level ``workload()`` function (and optionally ``setup()``). Its own timing
   harness, the top-level statements that use ``workload`` and every later statement that uses a
   name they bind (``runtimes = timeit.repeat(workload, ...)``, ``print("Mean:", ...)``), is left
   out; the rest runs once (imports, data). Then, R times, ``setup()`` runs untimed and
   ``workload()`` timed with ``time.perf_counter``. etip's figure is the sum of the R timed calls;
   the script's own statistic, the mean of the last half of the calls (SWE-fficiency's), is
   recorded beside it.
2. A script without ``workload()``: it runs as ``__main__`` and the whole run is timed. It must
   print its own statistic (``Mean: 0.123``, or a JSON object with ``mean``), which is recorded;
   a script that prints nothing is a failure. When the JSON object also has ``total`` (the sum
   of the runs the script timed itself, as a benchmark framework reports it), that total is
   etip's figure and the process's wall time is kept beside it.

A workload that raises, exits non-zero or prints nothing it should is a failed detector: the
report says so with the error, and the runner exits 1.

Works on Python 3.6 and later; nothing outside the standard library.
"""

import argparse
import ast
import io
import json
import math
import os
import re
import sys
import time
import traceback

OWN_MEAN = re.compile(r"^\s*mean\s*[:=]\s*([0-9.eE+-]+)\s*(s|sec|secs|seconds|ms)?\s*$", re.I | re.M)


def _names_used(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _names_bound(node):
    bound = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            bound.add(n.id)
    return bound


def split_harness(tree):
    """The module without its own timing harness: top-level statements (other than definitions
    and imports) that use ``workload``, and those that use what they bound, transitively."""
    tainted = {"workload"}
    kept, dropped = [], []
    for stmt in tree.body:
        definition = isinstance(
            stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
        )
        if not definition and _names_used(stmt) & tainted:
            tainted |= _names_bound(stmt)
            dropped.append(stmt)
        else:
            kept.append(stmt)
    tree.body = kept
    return tree, len(dropped)


def own_stats(text):
    """The statistic a self-timing script printed, in seconds, or None; and the total of its timed
    runs when its JSON object gives one (``total``), else None."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("mean"), (int, float)):
                total = obj.get("total")
                return float(obj["mean"]), float(total) if isinstance(total, (int, float)) else None
    m = OWN_MEAN.findall(text)
    if m:
        value, unit = m[-1]
        try:
            v = float(value)
        except ValueError:
            return None, None
        return (v / 1000.0 if unit.lower() == "ms" else v), None
    return None, None


class Tee(io.TextIOBase):
    """Keeps what the script prints (to read its statistic) and passes it on."""

    def __init__(self, inner):
        self.inner = inner
        self.buf = io.StringIO()

    def write(self, s):
        self.buf.write(s)
        return self.inner.write(s)

    def flush(self):
        self.inner.flush()


def run(args):
    with open(args.script, "r") as f:
        source = f.read()
    tree = ast.parse(source, filename=args.script)
    has_workload = any(
        isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "workload" for s in tree.body
    )
    entry = {"name": args.name, "kind": "workload", "passed": False, "secs": None}
    sys.path.insert(0, os.getcwd())
    if has_workload:
        tree, dropped = split_harness(tree)
        namespace = {"__name__": "__etip_workload__", "__file__": args.script}
        exec(compile(tree, args.script, "exec"), namespace)
        setup = namespace.get("setup")
        workload = namespace["workload"]
        if not callable(workload):
            raise TypeError("workload is not callable")
        times = []
        for _ in range(args.repeat):
            if callable(setup):
                setup()
            t0 = time.perf_counter()
            workload()
            times.append(time.perf_counter() - t0)
        half = times[len(times) // 2:] if len(times) > 1 else times
        entry.update(
            passed=True,
            secs=sum(times),
            times=times,
            own={"statistic": "mean of the last half of the calls", "secs": sum(half) / len(half)},
            shape="workload()",
            harness_statements_left_out=dropped,
        )
        return entry
    tee = Tee(sys.stdout)
    old = sys.stdout
    sys.stdout = tee
    namespace = {"__name__": "__main__", "__file__": args.script}
    t0 = time.perf_counter()
    try:
        exec(compile(tree, args.script, "exec"), namespace)
    except SystemExit as e:
        if e.code not in (None, 0):
            raise RuntimeError("the script exited with %r" % (e.code,))
    finally:
        secs = time.perf_counter() - t0
        sys.stdout = old
    mean, total = own_stats(tee.buf.getvalue())
    if mean is None or not math.isfinite(mean):
        entry["error"] = (
            "the script has no workload() function and printed no statistic "
            "(a line `Mean: <seconds>` or a JSON object with `mean`)"
        )
        return entry
    if total is not None and math.isfinite(total) and total >= 0:
        # The script timed its own runs (a benchmark framework's rounds): their total is the
        # figure, the process's wall time is kept beside it.
        entry.update(passed=True, secs=total, times=[total], wall=secs,
                     own={"statistic": "printed mean", "secs": mean}, shape="self-timed script (total)")
        return entry
    entry.update(
        passed=True,
        secs=secs,
        times=[secs],
        own={"statistic": "printed mean", "secs": mean},
        shape="self-timed script",
    )
    return entry


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--name", required=True)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--out", required=True)
    p.add_argument("script")
    args = p.parse_args()
    try:
        entry = run(args)
    except BaseException:  # noqa: B902 - a workload's failure of any kind is its result
        entry = {
            "name": args.name,
            "kind": "workload",
            "passed": False,
            "secs": None,
            "error": "".join(traceback.format_exc().splitlines(True)[-12:]),
        }
    report = {"runner": "etip_workload", "resolution": time.get_clock_info("perf_counter").resolution,
              "detectors": [entry]}
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f)
    os.replace(tmp, args.out)
    sys.stdout.flush()
    os._exit(0 if entry.get("passed") else 1)


if __name__ == "__main__":
    main()
