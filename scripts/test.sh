#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite through ctest (under 10 minutes on 2 cores).
# Usage: scripts/test.sh [--sanitize]
#   --sanitize  builds with AddressSanitizer + UndefinedBehaviorSanitizer (NORMLAB_SANITIZE, RelWithDebInfo,
#               CPU only, no MPI: Open MPI's own allocations trip LeakSanitizer) in build-asan/ and runs the suite there; any sanitizer report fails the test.
#               Slower: allow about 3x the normal time.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
for a in "$@"; do
  case "$a" in
    --sanitize) sanitize=1 ;;
    *) echo "test.sh: unknown option '$a' (use --sanitize)" >&2; exit 2 ;;
  esac
done
scripts/install-deps.sh --distributed  # Open MPI: the data-parallel tests launch ranks with mpirun
if ((sanitize)); then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNORMLAB_SANITIZE=ON -DNORMLAB_CUDA=OFF -DNORMLAB_MPI=OFF >/dev/null
  cmake --build build-asan -j"$(nproc)"
  # halt_on_error: a UBSan finding aborts the test instead of only printing (the build allows recovery).
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  cd build-asan && ctest --output-on-failure -j"$(nproc)" --timeout 1800
else
  scripts/build.sh
  cd build && ctest --output-on-failure -j"$(nproc)" --timeout 600
fi
