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
# `etip export --images push=` is tested against a real registry on 127.0.0.1.
install_missing "the export test pushes to it" docker-registry

# The online build tests serve uv from their own package index: the env layer installs a commit's
# dependencies as of its date with it (`--exclude-newer`). Downloaded once from PyPI.
export ETIP_TEST_WHEELS="${ETIP_TEST_WHEELS:-$PWD/target/test-wheels}"
if ! compgen -G "$ETIP_TEST_WHEELS/uv-*.whl" >/dev/null; then
  python3 -m pip --version >/dev/null 2>&1 || install_missing "the online build tests need it" pip3
  python3 -m pip download --quiet --no-deps --only-binary=:all: uv -d "$ETIP_TEST_WHEELS"
fi

# The export test reads etip's Parquet files back with pyarrow, the reader the field's datasets
# are used with; the import test recomputes GSO's and SWE-fficiency's figures with numpy and
# scipy, as those benchmarks' harnesses do. Installed once into target/test-venv from PyPI.
export ETIP_TEST_PYTHON="${ETIP_TEST_PYTHON:-$PWD/target/test-venv/bin/python}"
if ! "$ETIP_TEST_PYTHON" -c 'import pyarrow, numpy, scipy' >/dev/null 2>&1; then
  python3 -m venv target/test-venv 2>/dev/null || {
    install_missing "the export test needs it" python3-venv
    python3 -m venv target/test-venv
  }
  target/test-venv/bin/python -m pip install --quiet pyarrow numpy scipy
fi

# cargo-nextest runs each test in a process of its own, as many at once as the machine has cores;
# the tests that time rounds take turns (.config/nextest.toml). Installed from crates.io if missing.
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "installing cargo-nextest from crates.io (the test runner)" >&2
  cargo install --locked cargo-nextest
fi
cargo nextest run --workspace --locked "$@"
# nextest does not run documentation examples: cargo does (with no arguments given, the whole run).
if [ "$#" -eq 0 ]; then
  cargo test --workspace --locked --doc
fi
