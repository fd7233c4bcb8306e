#!/usr/bin/env bash
# etip's test command (the README's second command; .ci/run calls it).
#
# Installs what the tests need when it is missing, then runs every test of the workspace against real
# components: real git repositories, SQLite files, the machine's Docker engine, local HTTP servers, and the
# official leaderboard data in ../shared/data beside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d ../shared/data ]; then
  echo "error: ../shared/data is missing: the tests check etip's numbers against the official leaderboard" >&2
  echo "       data that sits beside the checkout (shared/data/leaderboards)." >&2
  exit 1
fi

cargo test --workspace --locked "$@"
