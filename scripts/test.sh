#!/usr/bin/env bash
# etip's test command (the README's second command; .ci/run calls it).
#
# Installs what the tests need when it is missing, then runs every test of the workspace against real
# components: real git repositories, SQLite files, the machine's Docker engine, local HTTP servers, and the
# official leaderboard data vendored in datasets/leaderboards.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Docker tests bootstrap etip's offline base image (once per machine) with debootstrap; the
# online build tests make a throw-away certificate authority with openssl; the HTML reports are
# rendered by headless Chromium.
source scripts/prereqs.sh
install_missing "the Docker tests need them" debootstrap openssl
# The HTML reports are checked as a browser draws them.
install_missing "the HTML rendering tests need it" chromium

cargo test --workspace --locked "$@"
