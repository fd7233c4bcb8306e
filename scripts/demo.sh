#!/usr/bin/env bash
# etip's main command on a fresh machine (the README's first command): installs debootstrap when it
# is missing (the offline base image is bootstrapped with it, once per machine), builds etip and
# runs `etip demo`: the embedded Java and Python fixture repositories mined, built, measured,
# evaluated against sample agent patches and scored under every rule; the report is written to
# etip-demo/report.html. Arguments go to `etip demo` (e.g. --out DIR, --rounds N, --lang python).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/prereqs.sh
install_missing "etip's offline base image is bootstrapped with it" debootstrap
cargo run --release --locked -p etip -- demo "$@"
