#!/usr/bin/env bash
# A library-only configure (README, "Using normlab as a library") compiles no CUDA, MPI or NCCL unless
# asked: NORMLAB_CUDA, NORMLAB_MPI and NORMLAB_NCCL default to OFF there, so libnormlab.a links by hand
# without CUDA or MPI libraries. Usage: library_only_defaults.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
src=$1 work=$2
rm -rf "$work"
if ! cmake -S "$src" -B "$work" -DNORMLAB_LIBRARY_ONLY=ON >"$work.log" 2>&1; then
  cat "$work.log"
  exit 1
fi
status=0
for o in NORMLAB_CUDA NORMLAB_MPI NORMLAB_NCCL; do
  grep -q "^$o:BOOL=OFF$" "$work/CMakeCache.txt" || { echo "FAIL: $o is not OFF in a library-only build: $(grep "^$o:" "$work/CMakeCache.txt")"; status=1; }
done
grep -q "normlab distributed: MPI OFF, NCCL OFF" "$work.log" || { echo "FAIL: MPI or NCCL configured:"; grep "normlab distributed" "$work.log"; status=1; }
grep -q "normlab CUDA backend: OFF" "$work.log" || { echo "FAIL: CUDA configured:"; grep "CUDA backend" "$work.log"; status=1; }
rm -rf "$work" "$work.log"
exit $status
