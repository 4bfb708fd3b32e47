#!/usr/bin/env bash
# Failure paths of `normlab train --distributed` on 2 ranks (run by ctest; tests/mpi/CMakeLists.txt):
#   kill-and-resume  a rank killed with SIGKILL mid-run ends the job with a clear error (mpirun names the
#                    killed rank) within 60 s, and `--resume` then completes the run from checkpoint_last;
#   timeout-abort    a rank that stops answering (SIGSTOP) makes the other abort after --dist-timeout
#                    (10) seconds with normlab's message naming the waiting operation.
# Usage: failure_test.sh MODE MPIRUN NORMLAB MNIST_DIR. Exit 77 (NORMLAB_SKIP) when MNIST_DIR is missing.
set -uo pipefail
mode=$1 mpirun=$2 normlab=$3 data=$4
if [[ ! -d $data ]]; then echo "NORMLAB_SKIP: data not found at $data"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; echo "--- job output:"; cat "$work/log" 2>/dev/null; exit 1; }
args=(train mnist --distributed --data "$data" --out "$work/run" --max-update 60 --save-interval-updates 10
      --validate-interval-updates 0 --quiet)
[[ $mode == timeout-abort ]] && args+=(--dist-timeout 10)

"$mpirun" --oversubscribe -np 2 "$normlab" "${args[@]}" >"$work/log" 2>&1 &
job=$!
# Wait for the first interval checkpoint, then hit one rank (a child of mpirun).
for _ in $(seq 1200); do
  [[ -f $work/run/checkpoint_last.safetensors ]] && break
  kill -0 $job 2>/dev/null || fail "the job ended before writing a checkpoint"
  sleep 0.1
done
[[ -f $work/run/checkpoint_last.safetensors ]] || { kill $job; fail "no checkpoint after 120 s"; }
ranks=($(pgrep -P $job))
((${#ranks[@]} == 2)) || { kill $job; fail "expected 2 rank processes under mpirun, found ${#ranks[@]}"; }
victim=${ranks[1]}
if [[ $mode == kill-and-resume ]]; then sig=KILL; want='signal 9|Killed'; else sig=STOP; want='has waited [0-9]+ s for the other ranks'; fi
kill -$sig "$victim"
start=$SECONDS
while kill -0 $job 2>/dev/null && ((SECONDS - start < 60)); do sleep 0.2; done
if kill -0 $job 2>/dev/null; then
  kill -CONT "$victim" 2>/dev/null; kill $job; fail "the job still runs 60 s after SIGSTOP/SIGKILL of rank ${victim}"
fi
wait $job; rc=$?
kill -KILL "$victim" 2>/dev/null  # a stopped rank that mpirun could not end
echo "job ended $((SECONDS - start)) s after SIG$sig of one rank, exit status $rc"
((rc != 0)) || fail "the job exited with status 0 after losing a rank"
grep -Eq "$want" "$work/log" || fail "no clear error matching '$want' in the job's output"
grep -E "$want" "$work/log" | head -2
[[ $mode == kill-and-resume ]] || exit 0

"$mpirun" --oversubscribe -np 2 "$normlab" "${args[@]}" --resume >"$work/log" 2>&1 || fail "the resumed run failed"
grep -q '"updates": 60' "$work/run/results.json" || fail "the resumed run did not reach update 60"
echo "resumed run completed: $(grep -o '"updates": 60' "$work/run/results.json")"
