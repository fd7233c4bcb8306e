#!/usr/bin/env bash
# etip's test command (the README's second command; .ci/run calls it).
#
# Installs what the tests need when it is missing, then runs every test of the workspace against real
# components: real git repositories, SQLite files, the machine's Docker engine, local HTTP servers, and the
# official leaderboard data vendored in datasets/leaderboards.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Docker tests bootstrap etip's offline base image (once per machine) with debootstrap.
if ! command -v debootstrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing debootstrap (needed to bootstrap etip's offline base image)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  else
    echo "warning: debootstrap is missing; the Docker tests will say how to install it" >&2
  fi
fi

cargo test --workspace --locked "$@"
