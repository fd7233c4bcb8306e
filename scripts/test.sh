#!/usr/bin/env bash
# etip's test command (the README's second command; .ci/run calls it).
#
# Installs what the tests need when it is missing, then runs every test of the workspace against real
# components: real git repositories, SQLite files, the machine's Docker engine, local HTTP servers, and the
# official leaderboard data vendored in datasets/leaderboards.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Docker tests bootstrap etip's offline base image (once per machine) with debootstrap; the
# online build tests make a throw-away certificate authority with openssl.
missing=()
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]} (the Docker tests need them)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "warning: ${missing[*]} missing; the tests that need them will say how to install them" >&2
  fi
fi

cargo test --workspace --locked "$@"
