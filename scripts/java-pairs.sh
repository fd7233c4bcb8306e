#!/usr/bin/env bash
# Extracts the two versions of every modified Java source file (outside src/test) of the last N
# first-parent commits of a repository, as OUT/NNNN.old and OUT/NNNN.new: the input of
#   cargo run --release -p etip-lang --example window_check -- OUT
# which checks the window judgement against whole-file parses and times both.
#
#   scripts/java-pairs.sh REPO [N=600] [SINCE=2020-01-01] [OUT=pairs]
set -euo pipefail
REPO=${1:?usage: scripts/java-pairs.sh REPO [N] [SINCE] [OUT]}
N=${2:-600}
SINCE=${3:-2020-01-01}
OUT=${4:-pairs}
mkdir -p "$OUT"
i=0
while read -r sha; do
  while IFS=$'\t' read -r meta path; do
    read -r _ _ old new status <<<"$meta"
    [[ $status == M && $path == *.java && $path != */src/test/* ]] || continue
    name=$(printf '%04d' "$i")
    git -C "$REPO" cat-file blob "$old" >"$OUT/$name.old"
    git -C "$REPO" cat-file blob "$new" >"$OUT/$name.new"
    i=$((i + 1))
  done < <(git -C "$REPO" diff-tree -r --no-renames --no-commit-id --raw "$sha^1" "$sha" 2>/dev/null || true)
done < <(git -C "$REPO" log --first-parent --since="$SINCE" --format=%H -n "$N")
echo "$i pairs in $OUT"
