#!/usr/bin/env python3
"""Recall of `etip mine local` against a public optimisation benchmark's performance pull requests.

    scripts/recall.py REPO STATE [--gold CSV] [--prefix owner__name] [--since YYYY-MM-DD] [--json]

REPO is the mined repository (normal or bare), STATE the state file of the run
(`<out>.state.sqlite`). The benchmark's task ids name pull requests (SWE-fficiency:
`sympy__sympy-24313` is sympy's PR 24313; the vendored gold report is the default). Each pull
request is found on the first-parent history by its merge commit (`Merge pull request #N`) or its
squash commit (subject ending in `(#N)`); recall is the share of those found, inside the mined
date window, that the run kept as candidates (duplicates count as kept: their change is a
candidate). The rejected ones are counted by reason, with the offending path for `non_source_file`.
"""

import argparse
import collections
import csv
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLD = ROOT / "datasets/leaderboards/swefficiency/eval_report_gold.csv"
MERGE = re.compile(r"^Merge pull request #(\d+)\b")
SQUASH = re.compile(r"\(#(\d+)\)\s*$")


def pull_requests(gold, prefix):
    with open(gold, newline="") as f:
        ids = [row["instance_id"] for row in csv.DictReader(f)]
    return sorted({int(i.rsplit("-", 1)[1]) for i in ids if i.rsplit("-", 1)[0] == prefix})


def first_parent_commits(repo, since):
    args = ["git", "-C", str(repo), "log", "--first-parent", "--format=%H %s"]
    if since:
        args.append(f"--since={since}")
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    by_pr = {}
    for line in out.splitlines():
        sha, _, subject = line.partition(" ")
        m = MERGE.match(subject) or SQUASH.search(subject)
        if m:
            by_pr.setdefault(int(m.group(1)), sha)
    return by_pr


def repo_prefix(repo):
    """`owner__name` from the origin remote's URL, else from the folder name."""
    url = subprocess.run(["git", "-C", str(repo), "config", "remote.origin.url"],
                         capture_output=True, text=True).stdout.strip()
    m = re.search(r"[/:]([^/:]+)/([^/]+?)(?:\.git)?/?$", url)
    if m:
        return f"{m.group(1)}__{m.group(2)}"
    path = Path(repo).resolve()
    name = path.parent.name if path.name in ("repo", ".git") else path.name
    return name.replace("+", "__")


def decisions(state):
    con = sqlite3.connect(f"file:{state}?mode=ro", uri=True)
    run = con.execute("SELECT max(id) FROM mine_runs").fetchone()[0]
    rows = con.execute(
        "SELECT sha, kept, reason, detail FROM mine_decisions WHERE run = ?", (run,)
    )
    return {sha: (bool(kept), reason, detail) for sha, kept, reason, detail in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo")
    ap.add_argument("state")
    ap.add_argument("--gold", default=str(GOLD))
    ap.add_argument("--prefix", help="task id prefix, e.g. sympy__sympy (default: from the repo's directory)")
    ap.add_argument("--since", default="2015-01-01")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    prefix = a.prefix or repo_prefix(a.repo)
    prs = pull_requests(a.gold, prefix)
    if not prs:
        sys.exit(f"no task of {prefix!r} in {a.gold}")
    commits = first_parent_commits(a.repo, a.since)
    decided = decisions(a.state)
    found = [(pr, commits[pr]) for pr in prs if pr in commits]
    kept, reasons, missing = [], collections.Counter(), []
    examples = collections.defaultdict(list)
    for pr, sha in found:
        d = decided.get(sha)
        if d is None:
            missing.append(pr)
        elif d[0] or d[1] == "duplicate":
            kept.append(pr)
        else:
            reasons[d[1]] += 1
            examples[d[1]].append(f"#{pr} {d[2] or ''}"[:100])
    decided_n = len(found) - len(missing)
    report = {
        "benchmark_prs": len(prs),
        "on_first_parent_history": len(found),
        "decided": decided_n,
        "kept": len(kept),
        "recall": round(len(kept) / decided_n, 3) if decided_n else None,
        "rejected": dict(reasons.most_common()),
        "not_decided": missing,
    }
    if a.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{prefix}: {len(prs)} benchmark PRs, {len(found)} on the first-parent history since {a.since}, "
          f"{decided_n} decided by the run")
    print(f"kept {len(kept)}/{decided_n} = {report['recall']:.0%}" if decided_n else "nothing decided")
    for reason, n in reasons.most_common():
        print(f"  {reason}: {n}  e.g. {'; '.join(examples[reason][:3])}")
    if missing:
        print(f"  not in the run's decisions (outside its window or branch): {missing}")


if __name__ == "__main__":
    main()
