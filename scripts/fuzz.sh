#!/usr/bin/env bash
# Fuzzes every reader of etip (fuzz/fuzz_targets/*.rs, see fuzz/README.md) for a bounded time:
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]      (default: 60 s, every target)
#
# Uses the nightly toolchain when rustup has it (else stable with RUSTC_BOOTSTRAP=1, no sanitizer) and
# cargo-fuzz, which is installed from crates.io when missing.
# Each target runs with AddressSanitizer on a copy of its committed seed corpus (fuzz/corpus/<target>),
# so a run never grows the repository's corpus. Prints the executions run per target (libFuzzer's
# stat::number_of_executed_units) and fails when any target finds a crash, a leak, a timeout or an
# out-of-memory input; the input is kept under fuzz/artifacts/<target>/ and its path printed.
# Environment: FUZZ_SANITIZER (address|none, default address), FUZZ_KEEP_LOGS=1 keeps the logs folder,
# FUZZ_DEV=1 builds the targets without optimisation (about 3 minutes instead of 8 from nothing on
# 2 cores; each execution is slower: CI's short runs use it).
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-60}"
shift || true
case "$secs" in
  '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 2 ;;
esac
sanitizer="${FUZZ_SANITIZER:-address}"
profile=()
if [ "${FUZZ_DEV:-0}" = 1 ]; then
  profile=(--dev)
fi

# cargo fuzz needs nightly features; on a machine with only the stable toolchain, RUSTC_BOOTSTRAP=1
# lets stable accept them, without a sanitizer (its runtime ships with nightly only).
toolchain=+nightly
if ! cargo $toolchain --version >/dev/null 2>&1; then
  echo "no nightly toolchain: fuzzing with the stable one (RUSTC_BOOTSTRAP=1, no sanitizer)" >&2
  toolchain=+stable
  export RUSTC_BOOTSTRAP=1
  sanitizer=none
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz (cargo install cargo-fuzz --locked)" >&2
  cargo install cargo-fuzz --locked
fi

start=$(date +%s)
# fuzz/Cargo.lock is committed: refuse to run against a lock file cargo would have to change.
cargo $toolchain fetch --locked --quiet --manifest-path fuzz/Cargo.toml

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo $toolchain fuzz list)
fi
echo "fuzzing ${#targets[@]} targets for ${secs} s each (sanitizer: ${sanitizer})"
cargo $toolchain fuzz build "${profile[@]}" --sanitizer "$sanitizer"

work="$(mktemp -d "${TMPDIR:-/tmp}/etip-fuzz.XXXXXX")"
if [ "${FUZZ_KEEP_LOGS:-0}" != 1 ]; then
  trap 'rm -rf "$work"' EXIT
fi

failed=()
summary=()
for t in "${targets[@]}"; do
  corpus="$work/corpus/$t"
  mkdir -p "$corpus" "fuzz/artifacts/$t"
  if [ -d "fuzz/corpus/$t" ]; then
    cp -R "fuzz/corpus/$t/." "$corpus/"
  fi
  args=(-max_total_time="$secs" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1)
  if [ -f "fuzz/dict/$t.dict" ]; then
    args+=(-dict="fuzz/dict/$t.dict")
  fi
  log="$work/$t.log"
  echo "== $t"
  status=0
  t0=$(date +%s)
  # The outer timeout only guards against a stuck run; libFuzzer stops itself after $secs.
  # TMPDIR: the scratch files of the path-based readers go to (and go with) the work folder.
  mkdir -p "$work/tmp"
  TMPDIR="$work/tmp" timeout --kill-after=30 "$((secs + 300))" \
    cargo $toolchain fuzz run "${profile[@]}" --sanitizer "$sanitizer" "$t" "$corpus" -- "${args[@]}" \
    >"$log" 2>&1 || status=$?
  took=$(($(date +%s) - t0))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  corpus_after=$(find "$corpus" -type f | wc -l | tr -d ' ')
  if [ "$status" -eq 0 ]; then
    line="$t: ${execs:-?} executions in ${took} s, corpus ${corpus_after} inputs, no findings"
  elif grep -q "failed to build fuzz script" "$log"; then
    # The sources changed after the build above and no longer compile: not a finding.
    line="$t: BUILD FAILED (the sources changed during the run?)"
    failed+=("$t")
    grep -E "^error" -A3 "$log" | head -n 20 || true
  else
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    line="$t: FAILED (exit $status) after ${execs:-?} executions in ${took} s; input: ${artifact:-none written}"
    failed+=("$t")
    echo "---- last lines of the $t log"
    grep -A1 "panicked at" "$log" | cut -c1-1000 | head -n 4 || true
    grep -E "ERROR: |SUMMARY: |Test unit written" "$log" | head -n 10 || true
    tail -n 25 "$log"
    echo "----"
  fi
  echo "$line"
  summary+=("$line")
done

echo
echo "== fuzz summary (${secs} s per target, $(($(date +%s) - start)) s in all)"
printf '%s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]} (reproduce: cargo $toolchain fuzz run <target> <input>)" >&2
  exit 1
fi
