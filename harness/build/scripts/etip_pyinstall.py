#!/usr/bin/env python3
"""etip: installs a commit's Python requirements as they were on its date (the env layer runs it
with the env venv's python, the index settings in the PIP_* variables).

    etip_pyinstall.py REQUIREMENTS CONSTRAINTS AS_OF REPORT [--no-relax]

AS_OF is an ISO 8601 time (2015-12-02T00:00:00Z); CONSTRAINTS may be an empty file.

1. Requirements the environment already satisfies (the base image's pytest, ...) need no index.
   When all of them are, nothing is installed: as without a date.
2. Otherwise pip >= 26 is fetched into /tmp/etip-pip (from the configured index) and installs
   every requirement from the releases uploaded before AS_OF (`--uploaded-prior-to`; the index
   must serve PEP 700 upload times, as PyPI does).
3. A requirement with no release before AS_OF is relaxed, unless --no-relax: it is installed
   alone (`--no-deps`) from the releases before AS_OF + 1, 2 and 4 years, then from all of
   them, and the install is tried again. Each relaxation is recorded.

REPORT (JSON) says what was done: as_of, tool, relaxed [{requirement, installed, before}], note.
Exit 0; 15 with "etip: requirement not installable: X" when pip fails on X (also when no
release at all has it); 16 with "etip: no release before AS_OF: X" when only later releases have
it and relaxing is off (or it was relaxed already).
Standard library only, Python 3.7+.
"""

import datetime
import json
import os
import re
import subprocess
import sys

EXIT_DEPENDENCY = 15
EXIT_UNAVAILABLE_BEFORE = 16
EXIT_SETUP = 12
TOOL_DIR = "/tmp/etip-pip"
PIP_LOG = "/tmp/etip-pip.log"
NOT_FOUND = (
    re.compile(r"^ERROR: No matching distribution found for (\S+)", re.M),
    re.compile(r"^ERROR: Could not find a version that satisfies the requirement (\S+)", re.M),
)
MAX_RELAXED = 8
WINDOWS_YEARS = (1, 2, 4)


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
    try:
        from importlib import metadata
        version = metadata.version(req.name)
    except Exception:  # noqa: BLE001 - not installed (or no metadata)
        return False
    return req.specifier.contains(version, prereleases=True)


def pip(args, env=None, log=PIP_LOG):
    """Runs `python -m pip ARGS`, its output to the log file and then to our output; returns
    (exit code, output)."""
    with open(log, "w") as f:
        code = subprocess.call([sys.executable, "-m", "pip"] + args, stdout=f,
                               stderr=subprocess.STDOUT, env=env)
    with open(log) as f:
        out = f.read()
    sys.stdout.write(out)
    sys.stdout.flush()
    return code, out


def new_pip():
    """pip >= 26 in TOOL_DIR (the environment's own pip is older); its version, or None."""
    code, out = pip(["install", "--quiet", "--target", TOOL_DIR, "pip>=26"])
    if code != 0:
        return None
    env = dict(os.environ, PYTHONPATH=TOOL_DIR)
    probe = subprocess.run([sys.executable, "-m", "pip", "--version"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
    m = re.match(r"pip (\S+)", probe.stdout)
    return m.group(1) if probe.returncode == 0 and m else None


def not_found(out):
    for pattern in NOT_FOUND:
        m = pattern.search(out)
        if m:
            return m.group(1)
    return None


def named_failure(out):
    """The requirement pip's failure names, as the env steps without a date read it."""
    req = not_found(out)
    if req:
        return req
    m = re.search(r"^ERROR: Cannot install (.*) because these package versions have "
                  r"conflicting dependencies", out, re.M)
    if m:
        return m.group(1) + " (conflicting dependencies)"
    collecting = re.findall(r"^Collecting (\S+)", out, re.M)
    return collecting[-1] if collecting else None


def later(as_of, years):
    when = datetime.datetime.strptime(as_of, "%Y-%m-%dT%H:%M:%SZ")
    return (when + datetime.timedelta(days=365 * years)).strftime("%Y-%m-%dT%H:%M:%SZ")


def installed_version(req):
    name = re.split(r"[\s\[<>=!~;]", req, 1)[0]
    try:
        from importlib import metadata
        return "%s==%s" % (name, metadata.version(name))
    except Exception:  # noqa: BLE001
        return name


def relax(req, as_of, env):
    """Installs `req` alone from the first window after AS_OF that has a release; the cutoff
    used ("" for none), or None when nothing installs."""
    for years in WINDOWS_YEARS:
        before = later(as_of, years)
        code, _ = pip(["install", "--no-deps", "--uploaded-prior-to", before, req], env=env)
        if code == 0:
            return before
    code, _ = pip(["install", "--no-deps", req], env=env)
    return "" if code == 0 else None


def write_report(path, report):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    relaxing = "--no-relax" not in argv
    if len(args) != 4:
        sys.stderr.write("usage: etip_pyinstall.py REQUIREMENTS CONSTRAINTS AS_OF REPORT "
                         "[--no-relax]\n")
        return 2
    reqs, cons, as_of, report_path = args
    report = {"as_of": as_of, "tool": "", "relaxed": [], "note": ""}
    install = ["install", "-r", reqs]
    if os.path.getsize(cons) if os.path.exists(cons) else 0:
        install += ["-c", cons]
    missing = [l for l in requirement_lines(reqs) if not satisfied(l)]
    if not missing:
        report["note"] = "every requirement was already satisfied: nothing installed"
        say("every requirement is already satisfied by the environment: no index needed")
        code, out = pip(install)
        write_report(report_path, report)
        return 0 if code == 0 else fail_named(out, code)
    say("%d requirement(s) to install as of %s: %s" % (len(missing), as_of, ", ".join(missing)))
    version = new_pip()
    if version is None:
        say("pip >= 26 (for --uploaded-prior-to) is not installable from the index: "
            "installing today's releases instead")
        report["note"] = "pip >= 26 was not installable: today's releases"
        code, out = pip(install)
        write_report(report_path, report)
        return 0 if code == 0 else fail_named(out, code)
    report["tool"] = "pip %s --uploaded-prior-to" % version
    env = dict(os.environ, PYTHONPATH=TOOL_DIR)
    dated = install + ["--uploaded-prior-to", as_of]
    say("pip %s install %s" % (version, " ".join(dated[1:])))
    tried = set()
    while True:
        code, out = pip(dated, env=env)
        if code == 0:
            write_report(report_path, report)
            return 0
        req = not_found(out)
        if req is None:
            write_report(report_path, report)
            return fail_named(out, code)
        write_report(report_path, report)
        if not relaxing or req in tried or len(tried) >= MAX_RELAXED:
            # Whether a later release would do: then the date is what is missing.
            later_code, later_out = pip(["install", "--dry-run", "--no-deps", req], env=env)
            if later_code != 0:
                return fail_named(later_out, later_code)
            say("no release before %s: %s" % (as_of, req))
            return EXIT_UNAVAILABLE_BEFORE
        tried.add(req)
        before = relax(req, as_of, env)
        if before is None:
            # Not even today's releases have it: not a matter of the date.
            return fail_named(out, code)
        got = installed_version(req)
        report["relaxed"].append({"requirement": req, "installed": got, "before": before})
        say("relaxed %s: nothing released before %s; installed %s (%s)"
            % (req, as_of, got, "uploaded before " + before if before else "any release"))


def fail_named(out, code):
    req = named_failure(out)
    print("etip: requirement not installable: %s (pip exit %d)"
          % (req or "a requirement of the requirements file", code))
    return EXIT_DEPENDENCY


if __name__ == "__main__":
    sys.exit(main(sys.argv))
