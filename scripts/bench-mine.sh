#!/usr/bin/env bash
# Throughput of `etip mine local` against `git log` on the same first-parent commits.
#
#   scripts/bench-mine.sh REPO [LANG=java] [SINCE=2015-01-01] [JOBS=2] [ROUNDS=3]
#
# Times, on REPO (normal or bare) and each ROUNDS times (the best round is reported, the machine may
# be shared):
#   1. git log --first-parent --name-only --no-renames --since=SINCE   (the baseline)
#   2. etip mine local --no-semantic --jobs JOBS                       (rules 1-3, diff stats, dedup)
#   3. etip mine local --jobs JOBS                                     (the whole pipeline)
# with a fresh state store every round, and prints commits/s for each, the ratios to git and the
# peak memory of the largest process (the parent or one worker; /usr/bin/time's maximum resident set).
# EXTRA_FLAGS (environment) go to both etip runs, e.g. EXTRA_FLAGS="--path-rule strict".
# ETIP_BIN (environment) times that etip binary instead of building this checkout's (to compare
# releases in the same hour).
set -euo pipefail

REPO=${1:?usage: scripts/bench-mine.sh REPO [LANG] [SINCE] [JOBS] [ROUNDS]}
LANG_=${2:-java}
SINCE=${3:-2015-01-01}
JOBS=${4:-2}
ROUNDS=${5:-3}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${ETIP_BIN:-}" ]; then
  ETIP=$ETIP_BIN
else
  cargo build --release -q -p etip --manifest-path "$ROOT/Cargo.toml"
  ETIP=${CARGO_TARGET_DIR:-$ROOT/target}/release/etip
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

now() { date +%s.%N; }

best_git=""
for _ in $(seq "$ROUNDS"); do
  t0=$(now)
  git -C "$REPO" log --first-parent --name-only --no-renames --since="$SINCE" --format='commit %H' >"$WORK/git.log"
  t1=$(now)
  t=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", b-a}')
  best_git=$(awk -v a="$t" -v b="${best_git:-1e9}" 'BEGIN{print (a<b)?a:b}')
done
git_commits=$(grep -c '^commit ' "$WORK/git.log")

run_etip() { # $1 = label, rest = extra flags; prints "seconds commits peak-KiB"
  local best="" commits=0 peak=0
  shift
  for _ in $(seq "$ROUNDS"); do
    rm -f "$WORK"/out.jsonl*
    t0=$(now)
    # shellcheck disable=SC2086
    /usr/bin/time -o "$WORK/rss" -f '%M' "$ETIP" mine local --repo "$REPO" --lang "$LANG_" \
      --since "$SINCE" --jobs "$JOBS" --out "$WORK/out.jsonl" --format json ${EXTRA_FLAGS:-} "$@" \
      >"$WORK/summary.json"
    t1=$(now)
    peak=$(awk -v a="$(tail -1 "$WORK/rss")" -v b="$peak" 'BEGIN{print (a>b)?a:b}')
    t=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", b-a}')
    best=$(awk -v a="$t" -v b="${best:-1e9}" 'BEGIN{print (a<b)?a:b}')
    commits=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["commits_scanned"])' "$WORK/summary.json")
  done
  echo "$best $commits $peak"
}

read -r t_ns n_ns p_ns < <(run_etip no-semantic --no-semantic)
cp "$WORK/summary.json" "$WORK/summary-no-semantic.json"
read -r t_full n_full p_full < <(run_etip full)

rate() { awk -v n="$1" -v t="$2" 'BEGIN{printf "%.0f", n/t}'; }
r_git=$(rate "$git_commits" "$best_git")
r_ns=$(rate "$n_ns" "$t_ns")
r_full=$(rate "$n_full" "$t_full")

echo "repository: $REPO (language $LANG_, since $SINCE, --jobs $JOBS, best of $ROUNDS rounds)"
printf '%-44s %7s commits %8.3f s %8s commits/s\n' "git log --first-parent --name-only --no-renames" "$git_commits" "$best_git" "$r_git"
printf '%-44s %7s commits %8.3f s %8s commits/s  peak %6.0f MiB\n' "etip mine local --no-semantic" "$n_ns" "$t_ns" "$r_ns" "$(awk -v k="$p_ns" 'BEGIN{print k/1024}')"
printf '%-44s %7s commits %8.3f s %8s commits/s  peak %6.0f MiB\n' "etip mine local (whole pipeline)" "$n_full" "$t_full" "$r_full" "$(awk -v k="$p_full" 'BEGIN{print k/1024}')"
awk -v g="$r_git" -v a="$r_ns" -v b="$r_full" 'BEGIN{
  printf "ratio no-semantic / git: %.3f x\nratio whole pipeline / git: %.3f x\nsemantic rule cost: %.2f x the no-semantic run\n", a/g, b/g, a/b }'
python3 - "$WORK/summary.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"candidates: {s['candidates']} (kept {s['kept']}), rejected: " +
      ", ".join(f"{k} {v}" for k, v in s["rejected"].items() if v))
EOF
