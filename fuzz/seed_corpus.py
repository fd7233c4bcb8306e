#!/usr/bin/env python3
"""Regenerates fuzz/corpus/<target>/ from the real data vendored in the repository.

Run from anywhere: `python3 fuzz/seed_corpus.py`. Deterministic (no randomness, sorted inputs); every
seed is a trimmed or converted copy of a file named in its provenance below, so that the committed
corpus stays small (well under 2 MB) and can be rebuilt after the data changes. Seeds that libFuzzer
adds while fuzzing are not kept: scripts/fuzz.sh fuzzes a copy of this corpus.
"""

import csv
import io
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fuzz" / "corpus"
SWEF = ROOT / "datasets" / "leaderboards" / "swefficiency"
GSO = ROOT / "datasets" / "leaderboards" / "gso"

written = {}
# Start from nothing: inputs added by fuzzing runs by hand are not seeds.
shutil.rmtree(OUT, ignore_errors=True)


def seed(target: str, name: str, data) -> None:
    if isinstance(data, str):
        data = data.encode("utf-8")
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)
    written[target] = written.get(target, 0) + len(data)


def head_lines(path: Path, n: int) -> str:
    with path.open(encoding="utf-8", newline="") as f:
        return "".join(line for _, line in zip(range(n), f))


def short(stem: str) -> str:
    """A short file name for a long leaderboard stem."""
    s = stem.replace("eval_report_", "").replace("_maxiter_100_N_", "_")
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", s)
    return s[:60]


# --- swefficiency_csv: SWE-fficiency eval_report_*.csv, header + 12 rows each -------------------
for p in sorted(SWEF.glob("eval_report_*.csv")):
    seed("swefficiency_csv", short(p.stem) + ".csv", head_lines(p, 13))
# Other CSV shapes found in datasets/ (refused with an error: wrong columns).
seed(
    "swefficiency_csv",
    "comparison_opus45_vs_opus46.csv",
    head_lines(SWEF / "comparison_opus45_vs_opus46.csv", 4),
)
for p in sorted((ROOT / "datasets" / "examples" / "synthetic-leaderboard").glob("*.csv")):
    seed("swefficiency_csv", "synthetic_" + p.stem + ".csv", head_lines(p, 13))
for p in sorted((ROOT / "datasets" / "jeto").glob("*.csv")):
    seed("swefficiency_csv", "jeto_" + p.stem + ".csv", head_lines(p, 4))
# Edge shapes of the real header: missing raw value, incorrect patch, CRLF line ends.
gold = head_lines(SWEF / "eval_report_gold.csv", 3).splitlines()
seed("swefficiency_csv", "crlf.csv", "\r\n".join(gold) + "\r\n")
seed("swefficiency_csv", "header_only.csv", gold[0] + "\n")
row = gold[1].split(",")
seed(
    "swefficiency_csv",
    "raw_missing_incorrect.csv",
    gold[0] + "\n" + ",".join([row[0], "", "1.0", row[3], "1.0", "0.0", "0.5", row[7], row[8]]) + "\n",
)


# --- gso_json: GSO per-model reports trimmed to a few instances per set ----------------------------
def trim_report(report: dict, keep: int) -> dict:
    sets = report["instance_sets"]
    kept_ids = set()
    for k in sorted(sets):
        ids = sets[k][:keep]
        kept_ids.update(ids)
    out_sets = {k: [i for i in v if i in kept_ids] for k, v in sets.items()}
    out = {"summary": report["summary"], "instance_sets": out_sets}
    if "schema_version" in report:
        out["schema_version"] = report["schema_version"]
    stats = {}
    for i in sorted(report.get("opt_stats", {})):
        if i not in kept_ids or len(stats) >= 2:
            continue
        s = report["opt_stats"][i]
        m = s.get("per_test_means")
        if m:
            m = {k: v[:3] for k, v in m.items() if k in ("base", "patch", "commit")}
        stats[i] = {"per_test_means": m} if m else {}
        for k in ("gm_speedup_patch_base", "base_mean", "patch_mean", "commit_mean"):
            if k in s:
                stats[i][k] = s[k]
    out["opt_stats"] = stats
    return out


for p in sorted(GSO.glob("*.json")):
    if p.name == "manifest.json":
        continue
    report = json.loads(p.read_text(encoding="utf-8"))
    seed("gso_json", p.stem + ".json", json.dumps(trim_report(report, 2), indent=2) + "\n")
manifest = json.loads((GSO / "manifest.json").read_text(encoding="utf-8"))
models = dict(sorted(manifest["models"].items())[:3])
seed("gso_json", "manifest.json", json.dumps({**manifest, "models": models}, indent=2) + "\n")

# --- etip_jsonl: etip task results ------------------------------------------------------------------
results_doc = (ROOT / "docs" / "schemas" / "results.md").read_text(encoding="utf-8")
doc_line = next(l for l in results_doc.splitlines() if l.startswith('{"instance_id"'))
seed("etip_jsonl", "results_schema_example.jsonl", doc_line + "\n")
# SWE-fficiency rows as etip task results (the fields the SWE-fficiency rule needs).
for p in sorted(SWEF.glob("eval_report_*.csv"))[:4]:
    lines = []
    with p.open(encoding="utf-8", newline="") as f:
        for _, r in zip(range(8), csv.DictReader(f)):
            t = {"instance_id": r["instance_id"], "correct": float(r["correctness"]) == 1.0}
            if r["correctness_pct"]:
                t["pass_fraction"] = float(r["correctness_pct"])
            if r["raw_pred_speedup_ratio"]:
                t["speedup"] = float(r["raw_pred_speedup_ratio"])
            t["gold_speedup"] = float(r["gold_speedup_ratio"])
            t["official"] = {"speedup_ratio": float(r["human_speedup_ratio"])}
            lines.append(json.dumps(t, separators=(",", ":")))
    seed("etip_jsonl", "swefficiency_" + short(p.stem) + ".jsonl", "\n".join(lines) + "\n")
# GSO tasks with per-test means as etip task results.
for p in sorted(GSO.glob("*.json"))[:4]:
    if p.name == "manifest.json":
        continue
    report = json.loads(p.read_text(encoding="utf-8"))
    passed = set(report["instance_sets"].get("passed_ids", []))
    ob = set(report["instance_sets"].get("opt_base_ids", []))
    oc = set(report["instance_sets"].get("opt_commit_ids", []))
    lines = []
    for i, s in sorted(report.get("opt_stats", {}).items())[:4]:
        m = s.get("per_test_means")
        t = {"instance_id": i, "correct": i in passed, "status": "passed" if i in passed else "test_failed"}
        if m:
            t["per_test_means"] = {k: m[k][:3] for k in ("base", "patch", "commit")}
        t["official"] = {"opt_base": i in ob, "opt_commit": i in oc}
        lines.append(json.dumps(t, separators=(",", ":")))
    seed("etip_jsonl", "gso_" + p.stem + ".jsonl", "\n".join(lines) + "\n")

# --- measurements_jsonl: docs/schemas/measurements.md examples --------------------------------------
mdoc = (ROOT / "docs" / "schemas" / "measurements.md").read_text(encoding="utf-8")
blocks = re.findall(r"```json\n(.*?)```", mdoc, re.S)
measurements = []
for b in blocks:
    b = b.strip()
    if '"… rounds 2 to 5 alike …"' in b:
        b = b.replace(',\n    "… rounds 2 to 5 alike …"', "")
    try:
        v = json.loads(b)
    except json.JSONDecodeError:
        continue
    measurements.append(v)
executable = [m for m in measurements if m.get("schema_version") == 1 and m.get("executable")]
broken = [m for m in measurements if m.get("schema_version") == 1 and not m.get("executable")]
summary = [m for m in measurements if "detectors" in m and "schema_version" not in m]
one = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)
if executable:
    ex = executable[0]
    seed("measurements_jsonl", "schema_example.jsonl", one(ex) + "\n")
    if broken:
        seed("measurements_jsonl", "schema_examples_both.jsonl", one(ex) + "\n" + one(broken[0]) + "\n")
    # Non-finite statistics as `etip measure` writes them (strings), e.g. a ratio over a 0 s time.
    inf = json.loads(json.dumps(ex))
    inf["id"] = "demo__zero-2"
    inf["classes"][0]["effect"]["ratio_ci"] = [0.5, "inf"]
    inf["classes"][0]["sign_test"]["median_ratio"] = "nan"
    seed("measurements_jsonl", "nonfinite_stats.jsonl", one(inf) + "\n")
    # Pretty-printed over several lines (refused: one measurement per line).
    seed("measurements_jsonl", "pretty.jsonl", json.dumps(ex, indent=1) + "\n")
if broken:
    seed("measurements_jsonl", "not_executable.jsonl", one(broken[0]) + "\n")
if summary:
    seed("measurements_jsonl", "executable_summary.jsonl", one(summary[0]) + "\n")

# --- etips_jsonl: candidates.jsonl / etips.jsonl ----------------------------------------------------
cand_src = (ROOT / "crates" / "core" / "src" / "candidate.rs").read_text(encoding="utf-8")
m = re.search(r'let line = r#"(.*?)"#;', cand_src, re.S)
cand = json.loads(m.group(1).replace("\n", "").replace("//!", ""))
cand_full = dict(cand)
cand_full.update(
    {
        "id": "netty__netty-4f1c0a9e2b7d",
        "repo": "netty/netty",
        "source": "https://github.com/netty/netty.git",
        "base_commit": "3a1f0c2b9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f40",
        "patched_commit": "4f1c0a9e2b7d6c5b4a39281706f5e4d3c2b1a098",
        "pr_number": 14321,
        "issues": [
            {"kind": "closing_keyword", "number": 14300, "text": "fixes #14300"},
            {"kind": "jira_key", "key": "NETTY-123", "text": "NETTY-123"},
        ],
        "message": "Speed up ByteBuf.indexOf (#14321)\n\nfixes #14300, NETTY-123",
        "changed_files": ["buffer/src/main/java/io/netty/buffer/AbstractByteBuf.java"],
        "changed_modules": ["buffer"],
        "changed_functions": ["io.netty.buffer.AbstractByteBuf.indexOf(int,int,byte)"],
        "diff_stats": {"files": 1, "insertions": 12, "deletions": 7},
        "duplicates": ["5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2e1"],
    }
)
seed("etips_jsonl", "candidate_doc_example.jsonl", one(cand) + "\n")
seed("etips_jsonl", "candidate_full.jsonl", one(cand_full) + "\n" + one(cand) + "\n")
seed(
    "etips_jsonl",
    "etips_repo_and_source.jsonl",
    '{"id":"a","language":"java","base_commit":"b","patched_commit":"c","repo":"o/n","score":1.5,"files":["x"]}\n'
    "\n"
    '{"id":"b","language":"python","base_commit":"b","patched_commit":"c","source":"/tmp/x"}\n',
)
seed(
    "etips_jsonl",
    "etips_cli.jsonl",
    '{"id":"cli-py","language":"python","base_commit":"0123456789abcdef0123456789abcdef01234567",'
    '"patched_commit":"89abcdef0123456789abcdef0123456789abcdef","source":"repo","score":0.9,'
    '"changed_modules":["textutil"]}\n',
)

# --- build_config_toml: the documented example of harness/build/src/config.rs ------------------------
cfg_src = (ROOT / "harness" / "build" / "src" / "config.rs").read_text(encoding="utf-8")
m = re.search(r"//! ```toml\n(.*?)//! ```", cfg_src, re.S)
doc = "\n".join(l[4:] if l.startswith("//! ") else l[3:] for l in m.group(1).splitlines()) + "\n"
doc = doc.replace(', ...]', ', "git"]')
seed("build_config_toml", "config_doc_example.toml", doc)
seed(
    "build_config_toml",
    "partial.toml",
    'namespace = "t1"\n[java]\nbase_images = { "*" = "eclipse-temurin:{jdk}-jdk" }\n',
)
seed("build_config_toml", "empty.toml", "")
seed("build_config_toml", "network_bridge.toml", 'env_network = "bridge"\nbuild_cpus = 1.5\n[python]\nbase_images = { "3.12" = "python:{version}" }\n')
seed("build_config_toml", "aliases.toml", (ROOT / "datasets" / "aliases" / "swefficiency-gso.toml").read_text(encoding="utf-8"))
seed("build_config_toml", "fixture_pyproject.toml", (ROOT / "harness" / "build" / "tests" / "fixtures" / "python" / "1-original" / "pyproject.toml").read_text(encoding="utf-8"))

# --- xml_reports: etip-exec test data and the XML of the report tests -----------------------------------
for p in sorted((ROOT / "harness" / "exec" / "tests" / "data" / "reports").rglob("*.xml")):
    name = p.parent.name + "_" + p.name.replace("$", "_")
    seed("xml_reports", name, p.read_bytes())
tests_src = (ROOT / "harness" / "exec" / "src" / "reports" / "tests.rs").read_text(encoding="utf-8")
for i, x in enumerate(re.findall(r'r#"(<.*?)"#', tests_src, re.S)):
    seed("xml_reports", f"reports_tests_{i:02}.xml", x)
seed("xml_reports", "fixture_pom.xml", (ROOT / "harness" / "build" / "tests" / "fixtures" / "maven" / "1-original" / "pom.xml").read_bytes())

# --- coverage_py: coverage.py 6.5 data files of the Python fixture (etip-exec test data) ----------------
for p in sorted((ROOT / "harness" / "select" / "tests" / "data" / "coverage").glob("*.db")):
    seed("coverage_py", p.name, p.read_bytes())
seed("coverage_py", "numbits.bin", bytes([0x00, 0x78, 0x12]))
seed("coverage_py", "context.txt", "tests/test_a.py::TestB::test_c[x|y]|run")

# --- jacoco_report: EtipCovReport's JSON lines, from the report test of etip-select -------------------
java_src = (ROOT / "harness" / "select" / "src" / "java.rs").read_text(encoding="utf-8")
m = re.search(r'const REPORT: &str = r#"(.*?)"#;', java_src, re.S)
seed("jacoco_report", "fixture_report.jsonl", m.group(1))
seed("jacoco_report", "session_only.jsonl", '{"test":"a.B c.D","classes_hit":0,"exclusive":false}\n')

# --- patch_check: the patches of etip-eval's tests (git diff, renames, binary, quoted paths) ---------
patch_src = (ROOT / "harness" / "eval" / "src" / "patch" / "tests.rs").read_text(encoding="utf-8")
m = re.search(r'const DEDUP: &str = "(.*?)";\n', patch_src, re.S)
seed("patch_check", "dedup.diff", m.group(1).replace('\\"', '"'))
for i, x in enumerate(re.findall(r'let \w+ = "(diff --git .*?)";', patch_src)):
    seed("patch_check", f"eval_tests_{i:02}.diff", x.encode().decode("unicode_escape"))

# --- changed_lines: the Python fixture's dedup change (original NUL patched) ----------------------
FIX = ROOT / "harness" / "build" / "tests" / "fixtures" / "python"
seed(
    "changed_lines",
    "fixture_dedup.txt",
    (FIX / "1-original" / "textutil" / "__init__.py").read_bytes()
    + b"\0"
    + (FIX / "2-dedup-linear" / "textutil" / "__init__.py").read_bytes(),
)
seed("changed_lines", "insert_only.txt", "a\nb\n\0a\nx\nb\n")

# --- long values: errors must quote a clipped piece of them (the 4 KiB bound of every target) ---------
L = "A" * 5000
hdr = gold[0]
seed("swefficiency_csv", "long_column.csv", hdr + "," + L + "\n")
seed("swefficiency_csv", "long_number.csv", hdr + "\nx," + L + ",1,1,1,1,1,1,1\n")
seed("swefficiency_csv", "long_duplicate_id.csv", hdr + f"\n{L},1,1,1,1,1,1,1,1\n{L},1,1,1,1,1,1,1,1\n")
seed("gso_json", "long_string.json", one({"summary": {"total_instances": L}, "instance_sets": {}}))
seed(
    "gso_json",
    "long_duplicate_id.json",
    one({"summary": {"total_instances": 3}, "instance_sets": {"completed_ids": [], "passed_ids": [], "opt_base_ids": [], "opt_commit_ids": [L, L]}}),
)
seed("gso_json", "long_key.json", one({L: 1}))
seed("etip_jsonl", "long_field.jsonl", one({"instance_id": "x", L: 1}) + "\n")
seed("etip_jsonl", "long_duplicate_id.jsonl", one({"instance_id": L}) + "\n" + one({"instance_id": L}) + "\n")
if broken:
    seed("measurements_jsonl", "long_reason.jsonl", one({**broken[0], "reason": L}) + "\n")
seed("measurements_jsonl", "long_version.jsonl", one({"schema_version": L, "classes": []}) + "\n")
seed("build_config_toml", "long_key.toml", L + " = 1\n")
seed("build_config_toml", "long_line.toml", 'namespace = "' + L + '" x\n')
seed("xml_reports", "long_end_tag.xml", f"<testsuite><{L}></b></testsuite>")
seed("xml_reports", "long_entity.xml", f'<testsuite name="&{L};"><testcase name="t"/></testsuite>')
seed(
    "xml_reports",
    "long_duplicate_class.xml",
    f'<testsuites><testsuite name="{L}"><testcase name="t"/></testsuite><testsuite name="{L}"><testcase name="t"/></testsuite></testsuites>',
)

# Inputs that once broke a target's properties and were fixed (fuzz/fixed/<target>/): replayed by
# every run as seeds, so the fix stays checked.
FIXED = Path(__file__).resolve().parent / "fixed"
for target_dir in sorted(FIXED.iterdir()) if FIXED.is_dir() else []:
    for f in sorted(target_dir.iterdir()):
        seed(target_dir.name, "fixed_" + f.name, f.read_bytes())

total = 0
for t, n in sorted(written.items()):
    files = len(list((OUT / t).iterdir()))
    print(f"{t}: {files} seeds, {n} bytes")
    total += n
print(f"total: {total} bytes")
if total > 2_000_000:
    sys.exit("the corpus is over 2 MB; trim more")
