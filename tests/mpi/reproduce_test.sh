#!/usr/bin/env bash
# `normlab reproduce <task> --distributed` on 2 ranks (run by ctest; tests/mpi/CMakeLists.txt): both ranks
# train the run together, only rank 0 writes, and the record goes to its own registry column "+ddp2" (a
# data-parallel run has another global batch), never into the single-process column.
# Usage: reproduce_test.sh MPIRUN NORMLAB MNIST_DIR. Exit 77 (NORMLAB_SKIP) when MNIST_DIR is missing.
set -uo pipefail
mpirun=$1 normlab=$2 data=$3
if [[ ! -d $data ]]; then echo "NORMLAB_SKIP: data not found at $data"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; echo "--- job output:"; cat "$work/log" 2>/dev/null; exit 1; }
"$mpirun" --oversubscribe -np 2 "$normlab" reproduce mnist --config one-epoch --data "$data" --variants layernorm \
  --seeds 1 --distributed --max-update 8 --validate-interval-updates 0 --registry "$work/reg" --out "$work/rep" \
  >"$work/log" 2>&1 || fail "the 2-rank reproduce exited with status $?"
records=$(find "$work/reg" -name '*.json')
[[ $(wc -l <<<"$records") == 1 ]] || fail "expected one registry record, found: $records"
[[ $records == */mnist/one-epoch@mnist+ddp2/layernorm/seed1.json ]] || fail "record not in the +ddp2 column: $records"
grep -q '"world_size": 2' "$records" || fail "the record does not say it ran on 2 ranks"
grep -q '"distributed": true' "$records" || fail "the record's settings lack distributed: true"
n=$(grep -c '^\[run 1 of 1\]' "$work/log")
((n == 1)) || fail "the progress line was printed $n times (only rank 0 reports)"
[[ -s $work/rep/results.md ]] || fail "rank 0 wrote no results.md"
echo "record: ${records#$work/reg/}"
