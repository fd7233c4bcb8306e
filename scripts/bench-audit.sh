#!/usr/bin/env bash
# Times `etip audit` over official leaderboard reports against a baseline measured in the same run: a
# minimal Python script that only reads the same files and computes the SWE-fficiency harmonic means.
#
#   scripts/bench-audit.sh [LEADERBOARDS_DIR]     (default: datasets/leaderboards)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-datasets/leaderboards}
runs=${RUNS:-10}
cargo build --release -q -p etip
etip=target/release/etip
shopt -s nullglob
files=("$dir"/swefficiency/eval_report_*.csv "$dir"/gso/*.json)
[ ${#files[@]} -gt 0 ] || { echo "no reports under $dir" >&2; exit 1; }

baseline=$(mktemp)
trap 'rm -f "$baseline"' EXIT
cat > "$baseline" <<'PY'
import csv, glob, json, sys
d = sys.argv[1]
for f in sorted(glob.glob(d + "/swefficiency/eval_report_*.csv")):
    srs = [float(r["human_speedup_ratio"]) for r in csv.DictReader(open(f))]
    print(f, len(srs) / sum(1 / max(s, 0.001) for s in srs))
for f in sorted(glob.glob(d + "/gso/*.json")):
    json.load(open(f))
PY

now() { date +%s%N; }
time_it() { # best of $runs, in ms
  local best=""
  for _ in $(seq "$runs"); do
    local t0 t1; t0=$(now); "$@" > /dev/null; t1=$(now)
    local ms=$(( (t1 - t0) / 1000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  echo "$best"
}
e=$(time_it "$etip" audit "${files[@]}")
p=$(time_it python3 "$baseline" "$dir")
echo "files: ${#files[@]}"
echo "etip audit (all diagnostics): ${e} ms (best of $runs)"
echo "python baseline (HM only):    ${p} ms (best of $runs)"
awk -v e="$e" -v p="$p" 'BEGIN { if (e == 0) e = 1; printf "ratio baseline/etip: %.1fx\n", p / e }'
