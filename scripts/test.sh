#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite through ctest (under 10 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build && ctest --output-on-failure -j"$(nproc)" --timeout 600
