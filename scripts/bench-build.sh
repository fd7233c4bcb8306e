#!/usr/bin/env bash
# Build-time benchmark of `etip build`: two ETIPs of the same fixture repository, built one after the
# other in a fresh namespace. The first builds the env and instance layers (the base image is the
# machine's bootstrapped one, shared); the second reuses base and env and builds only its instance
# layer. Prints per-layer times and sizes and the ratio second/first (target <= 0.20). With
# COLD_BASE=1 the first build also bootstraps the base, as the first ETIP on a new machine does, and
# the second reuses both layers the first one built.
#
#   scripts/bench-build.sh [maven|python]      (default: maven)
#   ETIP=path/to/etip scripts/bench-build.sh   (default: builds and uses target/debug/etip)
#   COLD_BASE=1 ...                             cold machine: the first build also bootstraps its base
#                                               image (a private copy, repository <ns>/base, removed
#                                               afterwards; takes minutes)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KIND=${1:-maven}
case "$KIND" in maven) LANG_=java ;; python) LANG_=python ;; *) echo "usage: $0 [maven|python]" >&2; exit 2 ;; esac
if [ -z "${ETIP:-}" ]; then
  (cd "$ROOT" && cargo build -q -p etip)
  ETIP=$ROOT/target/debug/etip
fi
WORK=$(mktemp -d)
NS=etipbench-$$
cleanup() { "$ETIP" clean --all --namespace "$NS" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

# The fixture repository: one commit per step folder.
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
printf '{"id":"bench-1","language":"%s","base_commit":"%s","patched_commit":"%s","source":"%s"}\n' \
  "$LANG_" "${COMMITS[0]}" "${COMMITS[1]}" "$REPO" > "$WORK/first.jsonl"
printf '{"id":"bench-2","language":"%s","base_commit":"%s","patched_commit":"%s","source":"%s"}\n' \
  "$LANG_" "${COMMITS[1]}" "${COMMITS[2]}" "$REPO" > "$WORK/second.jsonl"

CONFIG=$WORK/etip.toml
if [ -n "${COLD_BASE:-}" ]; then
  printf '[bootstrap]\nrepository = "%s/base"\n' "$NS" > "$CONFIG"
else
  : > "$CONFIG"
  "$ETIP" base-image bootstrap >/dev/null
fi
"$ETIP" build --config "$CONFIG" --etips "$WORK/first.jsonl" --namespace "$NS" --out "$WORK/out" > "$WORK/status1.jsonl"
"$ETIP" build --config "$CONFIG" --etips "$WORK/second.jsonl" --namespace "$NS" --out "$WORK/out" > "$WORK/status2.jsonl"

python3 - "$WORK/status1.jsonl" "$WORK/status2.jsonl" "${COLD_BASE:-}" <<'PY'
import json, sys
rows = [json.loads(open(p).read().splitlines()[0]) for p in sys.argv[1:3]]
for s in rows:
    if s["outcome"] == "failed":
        sys.exit(f"{s['id']} failed: {s.get('reason')}\n{s.get('detail','')}")
    print(f"{s['id']}: {s['outcome']} in {s['build_secs']:.1f} s")
    for l in s["layers"]:
        state = "reused" if l["reused"] else f"built in {l['build_secs']:.1f} s"
        print(f"  {l['kind']:<8} {l['tag']:<60} {l['layer_bytes']/1e6:9.1f} MB layer  {l['size_bytes']/1e6:8.1f} MB image  {state}")
first, second = rows[0]["build_secs"], rows[1]["build_secs"]
if sys.argv[3]:
    what = "the first build bootstrapped its base, as on a new machine"
else:
    what = "base bootstrapped beforehand: the second build saves only the env layer"
print(f"second/first build time ratio: {second:.1f} / {first:.1f} = {second/first:.3f} ({what}; target <= 0.20)")
PY
