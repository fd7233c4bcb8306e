#!/usr/bin/env bash
# Benchmark and calibration of `etip measure` on a fixture ETIP (one genuinely faster test class, one
# unchanged class), in a fresh namespace:
#
# 1. the harness's own cost per round: round wall time minus the test commands' own wall times,
#    as a share of the round (target: at most 5%), from one measurement of ROUNDS rounds;
# 2. noise: the coefficient of variation of each class's per-round times and of the paired
#    log-ratio log(patched/original) (A/A: log of the second original over the first);
# 3. AA_RUNS repeated A/A runs (both sides the original version): how many (class, run) verdicts
#    come out significant, i.e. the false-positive rate on this machine;
# 4. Maven only: the time per round of one version's test command as etip runs it
#    (`surefire:test` on the compiled tree, with etip's Surefire fix) against `mvn test` and
#    against `surefire:test` without the fix, alternated A B A B in one container of the instance
#    image (PAIRS pairs).
#
#   scripts/bench-measure.sh [maven|python]     (default: python)
#   ROUNDS=30 AA_RUNS=10 PAIRS=5 ETIP=target/release/etip scripts/bench-measure.sh maven
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KIND=${1:-python}
ROUNDS=${ROUNDS:-30}
AA_RUNS=${AA_RUNS:-10}
PAIRS=${PAIRS:-5}
case "$KIND" in maven) LANG_=java ;; python) LANG_=python ;; *) echo "usage: $0 [maven|python]" >&2; exit 2 ;; esac
if [ -z "${ETIP:-}" ]; then
  (cd "$ROOT" && cargo build -q --release -p etip)
  ETIP=$ROOT/target/release/etip
fi
WORK=$(mktemp -d)
NS=etipbench-measure-$$
cleanup() {
  docker rm -f "etipbench-mvn-$$" >/dev/null 2>&1 || true
  "$ETIP" clean --namespace "$NS" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

REPO=$WORK/repo
mkdir -p "$REPO"
export GIT_AUTHOR_NAME=etip GIT_AUTHOR_EMAIL=etip@example.invalid GIT_COMMITTER_NAME=etip GIT_COMMITTER_EMAIL=etip@example.invalid
git -C "$REPO" init -q -b main
COMMITS=()
for step in "$ROOT"/crates/fixtures/repos/"$KIND"/*/; do
  cp -r "$step". "$REPO"/
  git -C "$REPO" add -A
  git -C "$REPO" commit -q -m "$(basename "$step")"
  COMMITS+=("$(git -C "$REPO" rev-parse HEAD)")
done
printf '{"id":"bench-%s","language":"%s","base_commit":"%s","patched_commit":"%s","source":"%s"}\n' \
  "$KIND" "$LANG_" "${COMMITS[0]}" "${COMMITS[1]}" "$REPO" > "$WORK/etips.jsonl"
"$ETIP" build --namespace "$NS" --etips "$WORK/etips.jsonl" --out "$WORK/build" >/dev/null

echo "== $KIND fixture: $ROUNDS rounds (+1 warm-up)"
"$ETIP" measure --namespace "$NS" --etips "$WORK/build/status.jsonl" --out "$WORK/m" --rounds "$ROUNDS" --format json >/dev/null
for i in $(seq 1 "$AA_RUNS"); do
  "$ETIP" measure --namespace "$NS" --etips "$WORK/build/status.jsonl" --out "$WORK/aa" --rounds "$ROUNDS" --aa --force --format json >/dev/null
  cp "$WORK/aa/measurements.jsonl" "$WORK/aa-$i.jsonl"
done

python3 - "$WORK" "$AA_RUNS" <<'EOF'
import json, math, statistics, sys
work, aa_runs = sys.argv[1], int(sys.argv[2])

def load(p):
    return json.loads(open(p).readline())

def cv(xs):
    m = statistics.mean(xs)
    return statistics.stdev(xs) / m if m > 0 and len(xs) > 1 else float("nan")

m = load(f"{work}/m/measurements.jsonl")
assert m["executable"], m.get("detail")
timed = [r for r in m["round_log"] if not r["warmup"]]
shares = sorted((r["wall_secs"] - sum(r["command_secs"])) / r["wall_secs"] for r in timed)
walls = sorted(r["wall_secs"] for r in timed)
own = sorted(r["wall_secs"] - sum(r["command_secs"]) for r in timed)
print(f"round wall time: median {statistics.median(walls):.3f} s (min {walls[0]:.3f}, max {walls[-1]:.3f})")
print(f"harness's own cost per round: median {1000*statistics.median(own):.0f} ms, "
      f"share of the round median {100*statistics.median(shares):.2f}% (max {100*shares[-1]:.2f}%)")
print("per class: verdict, CV original, CV patched, sd of log(patched/original)")
for c in [m["overall"]] + m["classes"]:
    st = c.get("sign_test") or {}
    o, p = c["original"], c["patched"]
    lr = [math.log(b / a) for a, b in zip(o, p) if a > 0 and b > 0]
    sd = statistics.stdev(lr) if len(lr) > 1 else float("nan")
    print(f"  {c['name']:<28} {st.get('direction', c.get('excluded', '-')):<16} "
          f"{cv(o):6.3f} {cv(p):6.3f} {sd:6.3f}")

flagged = total = overall_flagged = 0
aa_sd = []
for i in range(1, aa_runs + 1):
    a = load(f"{work}/aa-{i}.jsonl")
    assert a["executable"] and a["aa"], a.get("detail")
    for c in a["classes"]:
        if c.get("sign_test"):
            total += 1
            flagged += c["sign_test"]["direction"] != "not_significant"
            lr = [math.log(b / x) for x, b in zip(c["original"], c["patched"]) if x > 0 and b > 0]
            aa_sd.append((c["name"], statistics.stdev(lr)))
    overall_flagged += a["overall"]["sign_test"]["direction"] != "not_significant"
if aa_runs:
    print(f"A/A: {aa_runs} runs of {m['rounds']} rounds: {flagged} of {total} class verdicts and "
          f"{overall_flagged} of {aa_runs} overall verdicts significant "
          f"(false-positive rate {flagged / max(total, 1):.3f} per class)")
    by = {}
    for n, s in aa_sd:
        by.setdefault(n, []).append(s)
    for n, s in sorted(by.items()):
        print(f"  A/A sd of log-ratio, {n}: median {statistics.median(s):.3f} over {len(s)} runs")
EOF

if [ "$KIND" = maven ]; then
  IMAGE=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['image'])" "$WORK/build/status.jsonl")
  docker run -d --name "etipbench-mvn-$$" --network none "$IMAGE" sleep infinity >/dev/null
  MVN="mvn -o -B -q -Dmaven.repo.local=/opt/etip/m2"
  FIX="-Dmaven.ext.class.path=/opt/etip/surefire-fix.jar"
  SF="org.apache.maven.plugins:maven-surefire-plugin:test -Dsurefire.runOrder=alphabetical"
  run() { # label, MAVEN_OPTS, goals: prints seconds
    local t0 t1
    t0=$(date +%s.%N)
    docker exec -e MAVEN_OPTS="$2" -w /work/original "etipbench-mvn-$$" sh -c "$MVN $3 >/dev/null 2>&1" || { echo "$1 failed" >&2; exit 1; }
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}'
  }
  echo "== one version's test command, $PAIRS alternated pairs in one container"
  a=(); b=(); c=()
  run warm "$FIX" "$SF" >/dev/null
  for i in $(seq 1 "$PAIRS"); do
    a+=("$(run etip "$FIX" "$SF")")
    b+=("$(run mvn-test "$FIX" test)")
    c+=("$(run no-fix "" "$SF")")
  done
  python3 - "${a[*]}" "${b[*]}" "${c[*]}" <<'EOF'
import statistics, sys
a, b, c = ([float(x) for x in s.split()] for s in sys.argv[1:4])
med = statistics.median
print(f"surefire:test with etip's fix (what a round runs): median {med(a):.2f} s  {a}")
print(f"mvn test (recompile check + surefire):            median {med(b):.2f} s  {b}")
print(f"surefire:test without the fix:                     median {med(c):.2f} s  {c}")
print(f"ratio surefire:test / mvn test, pair by pair: median {med([x / y for x, y in zip(a, b)]):.3f}")
print(f"ratio with fix / without fix, pair by pair:    median {med([x / y for x, y in zip(a, c)]):.3f}")
EOF
fi
