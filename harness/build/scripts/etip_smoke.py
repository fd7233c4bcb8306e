"""etip: smoke check of one tree, run in it with the version's venv by the instance layer
(harness/build/src/spec.rs, instance_script).

argv: version, the changed modules, "--", extra pytest arguments. Each changed package must import:
a failure names the package and the error ("cannot import requests: No module named 'urllib3'");
a package that cannot be found itself (a src/ layout without an install, which pytest's
configuration may put on the path) is skipped. Then pytest must collect the tests (the options of
the timed runs, PYTHONPATH holding etip_sorted); no tests at all is not a failure here (measure
reports no_tests). Failures print "etip: smoke failed: VERSION: ..." and exit 1.
"""
import importlib
import os
import subprocess
import sys

version = sys.argv[1]
rest = sys.argv[2:]
cut = rest.index("--") if "--" in rest else len(rest)
modules, test_args = rest[:cut], rest[cut + 1:]
SKIP = {"tests", "test", "testing", "conftest", "setup", "docs", "doc", "examples"}


def fail(message):
    print("etip: smoke failed: %s: %s" % (version, message), flush=True)


def packages():
    for name in modules:
        parts = name.split(".")
        if name in SKIP or not all(p.isidentifier() for p in parts):
            continue
        # Packages only: importing a loose script may run it.
        if any(os.path.isfile(os.path.join(b, parts[0], "__init__.py")) for b in (".", "src")):
            yield name


sys.path.insert(0, os.getcwd())
failed = False
for name in packages():
    try:
        importlib.import_module(name)
        print("etip: smoke: %s: imported %s" % (version, name), flush=True)
    except ImportError as e:
        if getattr(e, "name", None) in (name, name.split(".")[0]):
            print("etip: smoke: %s: %s is not importable outside pytest (%s)" % (version, name, e))
            continue
        fail("cannot import %s: %s" % (name, e))
        failed = True
    except (Exception, SystemExit) as e:
        fail("cannot import %s: %s: %s" % (name, type(e).__name__, e))
        failed = True
if failed:
    sys.exit(1)
cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly",
       "-p", "no:cacheprovider", "-p", "etip_sorted"] + test_args
run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                     errors="replace")
lines = run.stdout.splitlines()
if run.returncode == 5:
    print("etip: smoke: %s: pytest collected no tests" % version)
    sys.exit(0)
if run.returncode != 0:
    print(run.stdout, flush=True)
    errors = [l[1:].strip() for l in lines if l.startswith("E ")]
    where = [l[len("ERROR "):] for l in lines if l.startswith("ERROR ")]
    usage = [l.split(": error: ", 1)[1] for l in lines if ": error: " in l]
    what = (errors or usage or lines[-1:] or ["no output"])[0]
    at = "%s: " % where[0] if where else ""
    fail("pytest cannot collect the tests (exit %d): %s%s" % (run.returncode, at, what))
    sys.exit(1)
# -q lists one test id per line (path::name); the summary line differs between pytest versions
# (pytest 3 says "no tests ran" after a collection).
ids = sum(1 for l in lines if "::" in l and not l[:1].isspace())
print("etip: smoke: %s: pytest collects %s" % (
    version, "%d tests" % ids if ids else (lines[-1] if lines else "the tests")))
