#!/usr/bin/env python3
"""etip: installs a commit's Python requirements as they were on its date (the env layer runs it
with the env venv's python, the index settings in the PIP_* variables).

    etip_pyinstall.py REQUIREMENTS CONSTRAINTS AS_OF REPORT [--no-relax]

AS_OF is an ISO 8601 time (2015-12-02T00:00:00Z); CONSTRAINTS may be an empty file.

1. Requirements the environment already satisfies (the base image's pytest, ...) need no index.
   When all of them are, nothing is installed: as without a date. Except the test tools of a
   commit older than the interpreter: they come as of its date (see below), not from the image.
2. Otherwise uv (fetched into /tmp/etip-uv from the configured index) installs the missing ones
   from the releases uploaded before AS_OF (`--exclude-newer`; the index must serve PEP 700
   upload times, as PyPI does). uv rather than pip >= 26 (`--uploaded-prior-to`): pip 26 needs
   Python 3.10, and the interpreters of older commits are older; uv also moves the date of one
   package (`--exclude-newer-package`), which relaxing needs. The PIP_* index, trusted-host,
   find-links and certificate settings are passed on as uv's.
3. A requirement with no release before AS_OF (uv names it), or whose release of that time does
   not build on the interpreter, is relaxed, unless --no-relax: its own date moves to AS_OF + 1,
   2 and 4 years, then to none, until the install resolves; one that does not build skips the
   dates before the interpreter's release (an sdist older than the interpreter seldom builds on
   it, and each try rebuilds every sdist). Each relaxation is recorded.
   A pin of a release the index no longer has (deleted since: codecov==2.0.5) loses its
   version, unless --no-relax: the package then comes as of AS_OF like any other, recorded
   with the pin it replaced.

Some packages are not taken as of AS_OF when that old would not run on the interpreter: they
get releases up to the first day they work on it (FLOORS), unless the commit is younger. The
build tools: setuptools 40.8.0 (2019-01-28) is the first whose legacy backend builds a
setup.py-only sdist under PEP 517, which uv requires, 41.1.0 (2019-08-13) the first that runs on
Python 3.9 (it stopped reading HTMLParser.unescape); cffi and Cython, which old C extensions
build with, those of the interpreter's release. The test runner: pytest 3.0 (2016-08-18) is the
oldest that collects on Python 3.9 (pytest 2.9 fails in its own assertion check), later Pythons
the pytest of their release; a commit's pin of a pytest older than 3.0, and of pytest's own
py and pluggy, is set aside and recorded. The earliest floors keep what old sdists still
import (setuptools.Feature, gone in 46.0).

REPORT (JSON) says what was done: as_of, tool, relaxed [{requirement, installed, before, why}],
runner (the pins set aside), note.
Exit 0; 15 with "etip: requirement not installable: X" when X cannot be installed at all; 16
with "etip: no release before AS_OF: X" when only later releases have X and relaxing is off.
Standard library only, Python 3.7+.
"""

import datetime
import json
import os
import re
import subprocess
import sys

# The interpreter's own path, before anything of pip's is imported: Debian's pip puts the wheels
# of /usr/share/python-wheels (certifi, ...) on sys.path when its vendored packages load, and
# their metadata would read as installed.
OWN_PATH = list(sys.path)


def installed(name):
    """The version of `name` installed for this interpreter, or None."""
    try:
        from importlib import metadata
    except ImportError:  # Python 3.7
        return None
    # By canonical name: Python 3.9's lookup by name misses `ruamel.yaml` asked as `ruamel-yaml`.
    wanted = re.sub(r"[-_.]+", "-", name).lower()
    for dist in metadata.distributions(path=OWN_PATH):
        if re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower() == wanted:
            return dist.version
    return None

EXIT_DEPENDENCY = 15
EXIT_UNAVAILABLE_BEFORE = 16
EXIT_SETUP = 12
TOOL_DIR = "/tmp/etip-uv"
LOG = "/tmp/etip-uv.log"
MISSING = "/tmp/etip-missing.txt"
FILTERED = re.compile(r"`([^`]+)` was filtered by `exclude-newer(?:-package)?`")
ABSENT = re.compile(r"Because (\S+) was not found in the package registry")
NO_VERSIONS = re.compile(r"Because there are no versions of (\S+?)(?:[<>=!~ ,]|$)", re.M)
# uv on a pinned release the index does not have (any more): `codecov==2.0.5`.
PIN_ABSENT = re.compile(r"Because there is no version of ([A-Za-z0-9][A-Za-z0-9._-]*==[^\s,]+)")
BUILD_FAILED = re.compile(r"Failed to (?:download and )?build `([^`]+)`")
WINDOWS_YEARS = (1, 2, 4)
ANY_TIME = "2100-01-01T00:00:00Z"
MAX_STEPS = 32
# When each feature release of Python came out: the floors of the packages below for it.
PY_RELEASED = {
    (3, 9): "2020-10-05T00:00:00Z",
    (3, 10): "2021-10-04T00:00:00Z",
    (3, 11): "2022-10-24T00:00:00Z",
    (3, 12): "2023-10-02T00:00:00Z",
    (3, 13): "2024-10-07T00:00:00Z",
    (3, 14): "2025-10-07T00:00:00Z",
}
PEP517_SETUPTOOLS = "2019-01-28T00:00:00Z"
PY39_SETUPTOOLS = "2019-08-14T00:00:00Z"
# pytest's own packages: a commit pins the versions its (old) pytest wanted.
PYTEST_PARTS = ("py", "pluggy")
# The test tools (what etip drives and what it measures coverage with): per interpreter, the
# oldest version that runs on it and the day it came out. On Python 3.9 pytest 3.0 still collects
# (2.9 fails in its own assertion check), so commits of 2016-2019 keep a pytest that accepts their
# marks in parametrize (gone in 4.0); coverage 5.0 is the first without the BREAK_LOOP opcode
# (gone in 3.8). Later Pythons: the versions of their release.
TEST_TOOLS = {
    (3, 9): {
        "pytest": ("3.0", "2016-08-19T00:00:00Z"),
        "coverage": ("5.0", "2019-12-15T00:00:00Z"),
        "pytest-cov": ("2.6", "2018-09-04T00:00:00Z"),
    },
    (3, 10): {"pytest": ("6.2.5", ""), "coverage": ("6.0", ""), "pytest-cov": ("3.0", "")},
    (3, 11): {"pytest": ("7.0", ""), "coverage": ("6.5", ""), "pytest-cov": ("4.0", "")},
    (3, 12): {"pytest": ("7.4", ""), "coverage": ("7.3", ""), "pytest-cov": ("4.1", "")},
    (3, 13): {"pytest": ("8.2", ""), "coverage": ("7.6", ""), "pytest-cov": ("5.0", "")},
    (3, 14): {"pytest": ("8.4", ""), "coverage": ("7.10", ""), "pytest-cov": ("6.2", "")},
}


def test_tools():
    """Test tool -> (oldest version that runs here, the first day to take it from)."""
    version = sys.version_info[:2]
    table = TEST_TOOLS.get(min(max(version, (3, 9)), (3, 14)))
    released = PY_RELEASED.get(version, max(PY_RELEASED.values()))
    return {name: (v, day or released) for name, (v, day) in table.items()}


def floors():
    """Package -> the first day its releases work on this interpreter (see the docstring)."""
    version = sys.version_info[:2]
    released = PY_RELEASED.get(version, max(PY_RELEASED.values()))
    if version <= (3, 8):
        tools, ext = PEP517_SETUPTOOLS, PEP517_SETUPTOOLS
    elif version == (3, 9):
        tools, ext = PY39_SETUPTOOLS, released
    else:
        tools, ext = released, released
    out = {"setuptools": tools, "wheel": tools, "cffi": ext, "cython": ext}
    out.update({name: day for name, (_, day) in test_tools().items()})
    return out


def build_floor():
    """The first day setuptools works on this interpreter (and builds under PEP 517)."""
    return floors()["setuptools"]


def say(text):
    print("etip: " + text, flush=True)


def requirement_lines(path):
    """The requirement lines of a requirements file etip_pydeps.py wrote (one per line)."""
    try:
        with open(path, encoding="utf-8") as f:
            return [l.strip() for l in f if l.strip() and not l.lstrip().startswith("#")]
    except OSError:
        return []


def satisfied(line):
    """Whether the environment already satisfies one requirement line (markers evaluated);
    anything etip cannot tell (URLs, editables, options) counts as not satisfied."""
    try:
        from pip._vendor.packaging.requirements import Requirement
    except ImportError:
        return False
    try:
        req = Requirement(line)
    except Exception:  # noqa: BLE001 - not a plain PEP 508 line
        return False
    if req.url:
        return False
    if req.marker is not None and not req.marker.evaluate():
        return True
    version = installed(req.name)
    if version is None:
        return False
    return req.specifier.contains(version, prereleases=True)


def run(cmd, env=None):
    """Runs `cmd`, its output to the log file and then to ours; (exit code, output)."""
    with open(LOG, "w") as f:
        code = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
    with open(LOG) as f:
        out = f.read()
    sys.stdout.write(out)
    sys.stdout.flush()
    return code, out


def pip(args):
    return run([sys.executable, "-m", "pip"] + args)


def uv_env():
    """The environment of uv: the PIP_* settings the build container has, as uv's."""
    env = dict(os.environ)
    moves = {
        "PIP_INDEX_URL": "UV_INDEX_URL",
        "PIP_EXTRA_INDEX_URL": "UV_EXTRA_INDEX_URL",
        "PIP_TRUSTED_HOST": "UV_INSECURE_HOST",
        "PIP_FIND_LINKS": "UV_FIND_LINKS",
        "PIP_CERT": "SSL_CERT_FILE",
    }
    for pip_name, uv_name in moves.items():
        if os.environ.get(pip_name) and not os.environ.get(uv_name):
            env[uv_name] = os.environ[pip_name]
    env["UV_CACHE_DIR"] = "/tmp/etip-uv-cache"
    env["UV_NO_PROGRESS"] = "1"
    return env


def fetch_uv():
    """uv from the configured index into TOOL_DIR; its path and version, or None."""
    code, _ = pip(["install", "--quiet", "--target", TOOL_DIR, "uv"])
    uv = os.path.join(TOOL_DIR, "bin", "uv")
    if code != 0 or not os.path.exists(uv):
        return None
    probe = subprocess.run([uv, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
    return (uv, probe.stdout.strip()) if probe.returncode == 0 else None


def later(as_of, years):
    when = datetime.datetime.strptime(as_of, "%Y-%m-%dT%H:%M:%SZ")
    return (when + datetime.timedelta(days=365 * years)).strftime("%Y-%m-%dT%H:%M:%SZ")


def installed_version(name):
    version = installed(name)
    return "%s==%s" % (name, version) if version else name


def write_report(path, report):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)


def fail(name, code, tool="uv"):
    print("etip: requirement not installable: %s (%s exit %d)"
          % (name or "a requirement of the requirements file", tool, code))
    return EXIT_DEPENDENCY


PIP_NAMES = (
    re.compile(r"^ERROR: No matching distribution found for (\S+)", re.M),
    re.compile(r"^ERROR: Could not find a version that satisfies the requirement (\S+)", re.M),
    re.compile(r"^ERROR: Cannot install (.*) because these package versions have conflicting", re.M),
)


def named(out):
    """The package a failed resolution (uv's or pip's) names, if any."""
    for pattern in (BUILD_FAILED, ABSENT, NO_VERSIONS, PIN_ABSENT) + PIP_NAMES:
        m = pattern.search(out)
        if m:
            return m.group(1)
    collecting = re.findall(r"^Collecting (\S+)", out, re.M)
    return collecting[-1] if collecting else None


def unpin(path, pin):
    """Drops the version of `pin` (name==version) from the requirements file at PATH, keeping
    extras and markers; whether the file had it."""
    name = requirement_name(pin)
    lines = requirement_lines(path)
    changed = False
    for i, line in enumerate(lines):
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*==\s*[^;\s]+\s*(;.*)?$", line)
        if m and requirement_name(m.group(1)) == name:
            lines[i] = m.group(1) + (m.group(2) or "") + ((" " + m.group(3)) if m.group(3) else "")
            changed = True
    if changed:
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(l + "\n" for l in lines))
    return changed


def install_dated(uv, args, as_of, relaxing, report):
    """uv pip install ARGS as of AS_OF, relaxing packages it names; the exit code."""
    env = uv_env()
    moved = {}  # package -> the date its releases come before
    unpinned = {}  # package -> the pin the index no longer has
    reasons = {}  # package -> why its date moved
    for _ in range(MAX_STEPS):
        extra = []
        first_days = floors()
        for name, floor in sorted(first_days.items()):
            if as_of < floor and name not in moved:
                extra += ["--exclude-newer-package", "%s=%s" % (name, floor)]
        for name, date in sorted(moved.items()):
            when = max(date, first_days.get(name, ""))
            extra += ["--exclude-newer-package", "%s=%s" % (name, when)]
        cmd = [uv, "pip", "install", "--python", sys.executable, "--exclude-newer", as_of]
        code, out = run(cmd + extra + args, env=env)
        if code == 0:
            for name in sorted(set(moved) | set(unpinned)):
                before = moved.get(name, as_of)
                report["relaxed"].append({
                    "requirement": unpinned.get(name, name),
                    "installed": installed_version(name),
                    "before": "" if before == ANY_TIME else before,
                    "why": "; ".join(
                        (["the pinned release is no longer on the index"] if name in unpinned
                         else []) + ([reasons[name]] if name in reasons else [])),
                })
            return 0
        gone = PIN_ABSENT.search(out)
        if gone is not None and relaxing and MISSING in args:
            pin = gone.group(1)
            if requirement_name(pin) not in unpinned and unpin(MISSING, pin):
                unpinned[requirement_name(pin)] = pin
                say("relaxing %s: the index no longer has that release; trying the package's "
                    "releases before %s" % (pin, as_of))
                continue
        m = FILTERED.search(out)
        built = BUILD_FAILED.search(out)
        if m is None and built is None:
            return fail(named(out), code)
        if m is not None:
            name, why = m.group(1), "nothing fits before %s" % as_of
            if not relaxing:
                say("no release before %s: %s" % (as_of, name))
                return EXIT_UNAVAILABLE_BEFORE
        else:
            # A release of the time that does not build here (its setup.py or C code older
            # than the interpreter): a later one may.
            name = requirement_name(built.group(1))
            why = "%s does not build on Python %d.%d" % ((built.group(1),) + sys.version_info[:2])
            if not relaxing:
                return fail(built.group(1), code)
        date = next_window(as_of, moved.get(name, as_of), built is not None and m is None)
        if date is None:
            return fail(built.group(1) if m is None else name, code)
        moved[name] = date
        reasons.setdefault(name, why)
        say("relaxing %s: %s; trying releases before %s" % (name, why, date))
    return fail(None, 1)


def window(as_of, step):
    return later(as_of, WINDOWS_YEARS[step]) if step < len(WINDOWS_YEARS) else ANY_TIME


def next_window(as_of, current, build_failed, released=None):
    """The date a relaxed package's releases come before next, after CURRENT; None when none is
    left. AS_OF + 1, 2, 4 years, then any time. A release that does not build on the interpreter
    is older than it: the next try starts at the interpreter's release (RELEASED, the
    interpreter's own by default), one year after it being the window its packages caught up."""
    dates = [window(as_of, step) for step in range(len(WINDOWS_YEARS) + 1)]
    if build_failed:
        if released is None:
            released = PY_RELEASED.get(sys.version_info[:2], max(PY_RELEASED.values()))
        dates = [d for d in dates + [later(released, 1)] if d >= released]
    later_dates = sorted(d for d in dates if d > current)
    return later_dates[0] if later_dates else None


def requirement_name(line):
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
    return re.sub(r"[-_.]+", "-", m.group(1)).lower() if m else None


RUNNER_CONSTRAINTS = "/tmp/etip-runner-constraints.txt"


def etip_added_pytest(reqs):
    """Whether the `pytest` line is etip's own (the project names no pytest): etip_pydeps.py says
    so in the pydeps.json beside the requirements."""
    try:
        with open(os.path.join(os.path.dirname(reqs), "pydeps.json"), encoding="utf-8") as f:
            sources = json.load(f).get("sources", [])
    except (OSError, ValueError, AttributeError):
        return False
    return any(s.get("file") == "(etip)" for s in sources if isinstance(s, dict))


def set_aside(line):
    """Whether a requirement line pins a test tool older than what runs on this interpreter
    (`test_tools`), or pytest's own py and pluggy (the pytest installed brings the versions it
    needs)."""
    name = requirement_name(line)
    if name in PYTEST_PARTS:
        return True
    tools = test_tools()
    if name not in tools:
        return False
    try:
        from pip._vendor.packaging.requirements import Requirement
        from pip._vendor.packaging.version import Version
        spec = Requirement(line).specifier
        oldest = Version(tools[name][0])
        for clause in spec:
            bound = Version(clause.version.rstrip(".*"))
            if clause.operator in ("==", "===", "~=", "<=") and bound < oldest:
                return True
            if clause.operator == "<" and bound <= oldest:
                return True
    except Exception:  # noqa: BLE001 - not a plain PEP 508 line
        return False
    return False


def setuptools_core(uv, as_of, relaxing, report):
    """setuptools 71 and later prefer the installed copies of what they vendor: an older one of
    the base image's (Debian bullseye's importlib_metadata 1.6, seen through the env venv's
    system site packages) breaks `import setuptools`. When a setuptools the install brought does
    not import, its `core` extra (the versions it needs) is installed as of AS_OF too."""
    probe = [sys.executable, "-c", "import setuptools"]
    if subprocess.call(probe, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
        return 0
    version = installed("setuptools")
    if not version:
        return 0
    say("setuptools %s does not import with the environment's packages: installing its core "
        "extra as of %s" % (version, as_of))
    code = install_dated(uv, ["setuptools[core]==%s" % version], as_of, relaxing, report)
    if code == 0:
        report["note"] = (report["note"] + "; " if report["note"] else "") + \
            "setuptools[core]==%s added: setuptools did not import with the image's packages" \
            % version
    return code


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    relaxing = "--no-relax" not in argv
    if len(args) != 4:
        sys.stderr.write("usage: etip_pyinstall.py REQUIREMENTS CONSTRAINTS AS_OF REPORT "
                         "[--no-relax]\n")
        return 2
    reqs, cons, as_of, report_path = args
    report = {"as_of": as_of, "tool": "", "relaxed": [], "note": ""}
    has_constraints = os.path.exists(cons) and os.path.getsize(cons) > 0
    lines = requirement_lines(reqs)
    report["runner"] = [l for l in lines if set_aside(l)]
    for line in report["runner"]:
        lines.remove(line)
        say("set aside %s: no interpreter etip has runs it (the installed pytest brings its own)"
            % line)
    # A commit older than the interpreter gets the test tools of its time (from the floors on):
    # the image's are younger than its tests (pytest 6 rejects the marks in parametrize that a
    # 2016 test suite passes). A younger commit keeps the image's, as without a date.
    released = PY_RELEASED.get(sys.version_info[:2], max(PY_RELEASED.values()))
    of_its_time = set(test_tools()) if as_of < released else set()
    if etip_added_pytest(reqs):
        of_its_time.discard("pytest")
    missing = [l for l in lines if requirement_name(l) in of_its_time or not satisfied(l)]
    if not missing:
        report["note"] = "every requirement was already satisfied: nothing installed"
        say("every requirement is already satisfied by the environment: no index needed")
        write_report(report_path, report)
        return 0
    say("%d requirement(s) to install as of %s: %s" % (len(missing), as_of, ", ".join(missing)))
    with open(MISSING, "w", encoding="utf-8") as f:
        f.write("".join(l + "\n" for l in missing))
    install = ["-r", MISSING] + (["-c", cons] if has_constraints else [])
    # Whatever pulls a test tool in gets one that runs here (a plugin of 2015 takes pytest 2.7).
    with open(RUNNER_CONSTRAINTS, "w", encoding="utf-8") as f:
        f.write("".join("%s>=%s\n" % (n, v) for n, (v, _) in sorted(test_tools().items())))
    install += ["-c", RUNNER_CONSTRAINTS]
    tool = fetch_uv()
    if tool is None:
        say("uv (for --exclude-newer) is not installable from the index: installing today's "
            "releases instead")
        report["note"] = "uv was not installable: today's releases"
        code, out = pip(["install"] + install)
        write_report(report_path, report)
        return 0 if code == 0 else fail(named(out), code, "pip")
    uv, version = tool
    report["tool"] = "%s --exclude-newer" % version
    code = install_dated(uv, install, as_of, relaxing, report)
    if code == 0:
        code = setuptools_core(uv, as_of, relaxing, report)
    for r in report["relaxed"]:
        say("relaxed %s: %s; installed %s (%s)" % (
            r["requirement"], r["why"], r["installed"],
            "uploaded before " + r["before"] if r["before"] else "any release"))
    write_report(report_path, report)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
