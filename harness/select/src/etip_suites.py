"""etip: the benchmarks of a project's own suites in one tree, for `etip select`.

    python3 -c SCRIPT asv TREE DATA_FILE [LIMIT]
        Finds asv.conf.json (the tree's root, or a folder up to two levels down), imports every
        module of its benchmark_dir as asv does (the folder's parent on sys.path, the folder as a
        package) and runs each timing benchmark (`time_*`, once per parameter combination) once:
        setup_cache, setup(*params), the call, teardown(*params). Coverage records every file of
        the tree, the run of benchmark NAME in context `asv:NAME|run`, the imports in the empty
        context, into DATA_FILE (coverage.py 5.0 or later). Prints JSON: {conf, dir, benchmarks:
        [{name, module, target, params, ok, error, secs}], errors, skipped, truncated}, where
        secs is the call's time under coverage. At most LIMIT (default 400) benchmarks run.
    python3 -c SCRIPT bench-tests TREE
        The test functions that take pytest-benchmark's `benchmark` fixture (read with `ast`, not
        imported): JSON list of `path::func` and `path::Class::func`.

Works on Python 3.6 and later; coverage.py is the only module outside the standard library.
"""

import ast
import importlib
import inspect
import itertools
import json
import os
import re
import signal
import sys
import time
import traceback

SKIP_DIRS = {".git", ".hg", ".tox", ".nox", ".venv", "venv", "env", "node_modules", "build", "dist",
             "site-packages", "__pycache__", ".eggs"}
TIMING = re.compile(r"^(time|timeraw)_")
BENCH_TIMEOUT = 60


def strip_comments(text):
    """asv.conf.json allows // comments and trailing commas (asv reads it leniently)."""
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def find_conf(tree):
    for depth in range(3):
        found = []
        for root, dirs, files in os.walk(tree):
            rel = os.path.relpath(root, tree)
            level = 0 if rel == "." else rel.count(os.sep) + 1
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            if level > depth:
                dirs[:] = []
                continue
            if level == depth and "asv.conf.json" in files:
                found.append(os.path.join(root, "asv.conf.json"))
        if found:
            return sorted(found)[0]
    return None


def modules_of(bench_dir):
    mods = []
    for root, dirs, files in os.walk(bench_dir):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for f in sorted(files):
            if f.endswith(".py") and f != "__init__.py":
                rel = os.path.relpath(os.path.join(root, f), bench_dir)[:-3]
                mods.append(rel.replace(os.sep, "."))
    return mods


def param_sets(params):
    if not params:
        return [()]
    if not isinstance(params, (list, tuple)):
        params = [params]
    if params and not isinstance(params[0], (list, tuple)):
        params = [params]
    return list(itertools.product(*params))


def benchmarks_of(module):
    """(target, owner class or None, function) of each timing benchmark, in name order."""
    found = []
    for name in sorted(dir(module)):
        obj = getattr(module, name)
        if inspect.isclass(obj) and getattr(obj, "__module__", None) == module.__name__:
            for m in sorted(dir(obj)):
                if TIMING.match(m) and callable(getattr(obj, m)):
                    found.append(("%s.%s" % (name, m), obj, m))
        elif TIMING.match(name) and inspect.isfunction(obj):
            found.append((name, None, name))
    return found


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout("ran past %d s" % BENCH_TIMEOUT)


def first_attr(sources, name):
    for s in sources:
        v = getattr(s, name, None)
        if v is not None:
            return v
    return None


def run_one(module, owner, attr, params, cache):
    """setup_cache, setup, the call, teardown: asv's order for one parameter combination."""
    if owner is not None:
        inst = owner()
        func = getattr(inst, attr)
        sources = [func, inst, module]
    else:
        inst = None
        func = getattr(module, attr)
        sources = [func, module]
    args = list(params)
    setup_cache = first_attr(sources[1:] if owner is not None else [], "setup_cache")
    if setup_cache is not None:
        key = (owner, "setup_cache")
        if key not in cache:
            cache[key] = setup_cache()
        args = [cache[key]] + args
    setup = first_attr(sources, "setup")
    teardown = first_attr(sources, "teardown")
    if setup is not None:
        setup(*args)
    try:
        t0 = time.perf_counter()
        func(*args)
        return time.perf_counter() - t0
    finally:
        if teardown is not None:
            teardown(*args)


def asv(tree, data_file, limit):
    tree = os.path.abspath(tree)
    result = {"conf": None, "dir": None, "benchmarks": [], "errors": [], "skipped": [], "truncated": 0}
    conf_path = find_conf(tree)
    if conf_path is None:
        return result
    result["conf"] = os.path.relpath(conf_path, tree)
    try:
        with open(conf_path) as f:
            conf = json.loads(strip_comments(f.read()))
    except (OSError, ValueError) as e:
        result["errors"].append("%s: %s" % (result["conf"], e))
        return result
    bench_dir = os.path.normpath(os.path.join(os.path.dirname(conf_path), conf.get("benchmark_dir", "benchmarks")))
    if not os.path.isdir(bench_dir) or not bench_dir.startswith(tree + os.sep):
        result["errors"].append("%s: benchmark_dir %s is not a folder of the tree" % (result["conf"], bench_dir))
        return result
    result["dir"] = os.path.relpath(bench_dir, tree)
    try:
        import coverage
    except ImportError:
        result["errors"].append("coverage.py is not installed: the benchmarks cannot be selected by coverage")
        return result
    cov = coverage.Coverage(data_file=data_file, source=[tree], config_file=False)
    if not hasattr(cov, "switch_context"):
        result["errors"].append("coverage.py %s has no contexts (5.0 or later is needed)" % coverage.__version__)
        return result
    sys.path.insert(0, os.path.dirname(bench_dir))
    package = os.path.basename(bench_dir)
    devnull = open(os.devnull, "w")
    real_stdout = sys.stdout
    cov.start()
    try:
        runs = 0
        for mod in modules_of(bench_dir):
            sys.stdout = devnull
            try:
                module = importlib.import_module("%s.%s" % (package, mod))
            except BaseException:  # noqa: B902 - a module that does not import is reported
                result["errors"].append("%s: %s" % (mod, traceback.format_exc().strip().splitlines()[-1]))
                continue
            finally:
                sys.stdout = real_stdout
            cache = {}
            for target, owner, attr in benchmarks_of(module):
                if attr.startswith("timeraw_"):
                    result["skipped"].append("%s.%s: timeraw benchmarks run code in a process of their own" % (mod, target))
                    continue
                sources = [getattr(owner, attr), owner, module] if owner is not None else [getattr(module, attr), module]
                combos = param_sets(first_attr(sources, "params"))
                for idx, params in enumerate(combos):
                    name = "%s.%s" % (mod, target)
                    if len(combos) > 1 or params:
                        name += "(%s)" % ", ".join(repr(p) for p in params)
                    if runs >= limit:
                        result["truncated"] += 1
                        continue
                    runs += 1
                    entry = {"name": name, "module": mod, "target": target,
                             "params": idx if (len(combos) > 1 or params) else None, "ok": True}
                    cov.switch_context("asv:%s|run" % name)
                    old = signal.signal(signal.SIGALRM, _alarm)
                    signal.alarm(BENCH_TIMEOUT)
                    sys.stdout = devnull
                    try:
                        entry["secs"] = run_one(module, owner, attr, params, cache)
                    except NotImplementedError:
                        entry["ok"] = False
                        entry["error"] = "skipped: setup raised NotImplementedError (asv skips the combination)"
                    except BaseException:  # noqa: B902 - a failing benchmark is its result
                        entry["ok"] = False
                        entry["error"] = traceback.format_exc().strip().splitlines()[-1]
                    finally:
                        sys.stdout = real_stdout
                        signal.alarm(0)
                        signal.signal(signal.SIGALRM, old)
                        cov.switch_context("")
                    result["benchmarks"].append(entry)
    finally:
        cov.stop()
        cov.save()
    return result


def bench_tests(tree):
    found = []
    for root, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for f in sorted(files):
            if not (f.endswith(".py") and (f.startswith("test_") or f.endswith("_test.py"))):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, tree).replace(os.sep, "/")
            try:
                with open(path, "rb") as fh:
                    module = ast.parse(fh.read(), filename=rel)
            except (SyntaxError, ValueError, OSError):
                continue

            def takes_benchmark(fn):
                a = fn.args
                names = [x.arg for x in getattr(a, "posonlyargs", []) + a.args + a.kwonlyargs]
                return fn.name.startswith("test") and "benchmark" in names

            for node in module.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and takes_benchmark(node):
                    found.append("%s::%s" % (rel, node.name))
                elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                    for m in node.body:
                        if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and takes_benchmark(m):
                            found.append("%s::%s::%s" % (rel, node.name, m.name))
    return found


def main():
    cmd, tree = sys.argv[1], sys.argv[2]
    if cmd == "asv":
        limit = int(sys.argv[4]) if len(sys.argv) > 4 else 400
        out = asv(tree, sys.argv[3], limit)
    elif cmd == "bench-tests":
        out = bench_tests(tree)
    else:
        raise SystemExit("unknown command %r" % cmd)
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
