#!/usr/bin/env bash
# The first thing to run on a GPU: builds normlab with CUDA, runs the CUDA tests, compares every backend
# kernel on the GPU with the CPU (normlab_op_check: forward and backward kernels, each dtype row, per-op
# NMSE bounds, timed), trains Multi30k for 200 updates on --device cuda and on the cpu and compares the
# logged losses, and runs `normlab bench transformer --device cuda` (float32, then --bf16) beside PyTorch on CUDA. Everything
# goes into one report folder (summary.md last); exit status 0 when every step passed, 1 on any failure
# or mismatch, 77 when there is no GPU (after the CPU part: build, CUDA tests skipped, op check against
# the fake device). docs/cuda.md gives the exact device `run` command and how the .debs travel.
#
#   scripts/gpu-check.sh [--out DIR] [--bundle DIR] [--budget S] [--jobs N] [--build DIR] [--arch LIST]
#                        [--updates N] [--tol R] [--prebuilt DIR] [--campaign "ARGS"] [--campaign-only]
#   scripts/gpu-check.sh --prepare     # here, before a GPU session: fetch the .debs, prepare the data
# --bundle DIR: summary.md is written there as the steps finish, and at the end the whole report folder
# as report.tar.gz (the device tool returns at most 8 files from $OUT). --budget S (default 560): every
# step's time limit is cut to what is left of S seconds, so the script ends inside a 10-minute call.
#
# --prepare fills .gpu-carry/ (ignored by git; name it in the run's carry): debs/ (apt-get download of
# the build dependencies, for a machine without Debian packages) and data-bin/multi30k (`normlab data
# prepare`; needs a built normlab and $NORMLAB_DATA_ROOT/multi30k, default ../shared/data beside the
# checkout). A run finds them there. When build/ here is a CUDA build (nvcc 13 here, sm_90 in its cache),
# --prepare also copies its four programs (normlab, libnormlab_cuda.so, tests/normlab_cuda_tests,
# tests/normlab_op_check) into .gpu-carry/prebuilt: `--prebuilt .gpu-carry/prebuilt` on the device then
# skips configure and build (minutes of device time) and builds from source only if those programs do not
# start there. It also copies the raw data sets the GPU campaigns read (CAMPAIGN_DATA below) into
# .gpu-carry/data.
#
# --campaign "ARGS": after the check, `normlab --device cuda ARGS` (e.g. "reproduce powernorm --parts
# table1,table2 --seeds 3 --data-bin .gpu-carry/data-bin") in what is left of the budget, with
# ../shared/data/<set> pointing at .gpu-carry/data/<set> where the device has no shared/ (the same paths,
# so the records' settings match the CPU runs'). Runs that finish are recorded in results/; their files come
# back as registry.tar.gz in --bundle (unpack it in the checkout here). A run cut by the budget is lost.
# --campaign-only: the campaign alone, after the dependencies and programs (the check ran in an earlier call).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CARRY=$ROOT/.gpu-carry
OUT=gpu-report BUNDLE= BUDGET=560 JOBS=$(nproc) BUILD=build-gpu ARCH=90 UPDATES=200 TOL=0.01 PREPARE=0 PREBUILT=
CAMPAIGN='' CAMPAIGN_ONLY=0
CAMPAIGN_DATA="ptb-lm tinyshakespeare"  # raw data sets of ../shared/data that GPU campaigns read (the lm task: PTB; Tiny Shakespeare for Xu et al.'s Enwiki8 column)
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$2; shift 2 ;;
    --bundle) BUNDLE=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --arch) ARCH=$2; shift 2 ;;
    --updates) UPDATES=$2; shift 2 ;;
    --tol) TOL=$2; shift 2 ;;
    --prepare) PREPARE=1; shift ;;
    --prebuilt) PREBUILT=$2; shift 2 ;;
    --campaign) CAMPAIGN=$2; shift 2 ;;
    --campaign-only) CAMPAIGN_ONLY=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
DEBS="libopenblas0-openmp libopenblas-openmp-dev libgfortran5 libsentencepiece0 libsentencepiece-dev catch2
      libcli11-dev nlohmann-json3-dev zlib1g-dev pkgconf pkgconf-bin libpkgconf3
      libdnnl2 libdnnl-dev ocl-icd-libopencl1 libopenmpi3 libevent-core-2.1-7 libevent-pthreads-2.1-7 libhwloc15
      libgomp1 libquadmath0 libudev1"

if [ $CAMPAIGN_ONLY = 1 ] && [ -z "$CAMPAIGN" ]; then
  echo "gpu-check: --campaign-only needs --campaign \"ARGS\"" >&2; exit 2
fi

if [ $PREPARE = 1 ]; then
  set -e
  mkdir -p "$CARRY/debs" "$CARRY/data-bin"
  grep -qx '/.gpu-carry/' .git/info/exclude 2>/dev/null || echo '/.gpu-carry/' >> "$(git rev-parse --git-common-dir)/info/exclude"
  (cd "$CARRY/debs" && apt-get download $DEBS)
  NL=${NORMLAB:-build/normlab}
  [ -x "$NL" ] || { echo "gpu-check --prepare: build normlab first (scripts/build.sh) or set NORMLAB=path" >&2; exit 2; }
  SRC=${NORMLAB_DATA_ROOT:-$ROOT/../shared/data}/multi30k
  [ -d "$CARRY/data-bin/multi30k" ] || "$NL" data prepare multi30k --data "$SRC" --out "$CARRY/data-bin/multi30k"
  for d in $CAMPAIGN_DATA; do
    [ -d "$CARRY/data/$d" ] || { mkdir -p "$CARRY/data" && cp -r "$(dirname "$SRC")/$d" "$CARRY/data/$d"; }
  done
  B=$(dirname "$NL")
  if [ -f "$B/libnormlab_cuda.so" ] && grep -q '^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=.*90' "$B/CMakeCache.txt" 2>/dev/null; then
    cmake --build "$B" --target normlab_cli normlab_cuda normlab_cuda_tests normlab_op_check
    mkdir -p "$CARRY/prebuilt/tests"
    cp "$B/normlab" "$B/libnormlab_cuda.so" "$CARRY/prebuilt/"
    cp "$B/tests/normlab_cuda_tests" "$B/tests/normlab_op_check" "$CARRY/prebuilt/tests/"
  fi
  du -sh "$CARRY"/* ; echo "gpu-check --prepare: done; carry .gpu-carry in the device run (docs/cuda.md)"
  exit 0
fi

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
[ -n "$BUNDLE" ] && mkdir -p "$BUNDLE"
SUMMARY=${BUNDLE:-$OUT}/summary.md
DEADLINE=$((SECONDS + BUDGET))
FAILED=0
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
left() { local l=$((DEADLINE - SECONDS - 15)); [ $l -lt $1 ] && echo $l || echo $1; }  # limit cut to the budget
bundle() { [ -n "$BUNDLE" ] && tar czf "$BUNDLE/report.tar.gz" -C "$OUT" . 2>/dev/null; [ -n "$BUNDLE" ] && cp "$SUMMARY" "$OUT/" 2>/dev/null; true; }
step() {  # step NAME TIMEOUT_S CMD...: runs CMD with a time limit, logs to $OUT/NAME.log, records the outcome
  local name=$1 limit; limit=$(left $2); shift 2
  local t0=$SECONDS rc
  if [ "$limit" -le 0 ]; then note "- $name: FAIL (no time left of the ${BUDGET} s budget)"; FAILED=1; return 1; fi
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1; rc=$?
  if [ $rc = 0 ]; then note "- $name: PASS ($((SECONDS - t0)) s)"
  else note "- $name: FAIL (exit $rc after $((SECONDS - t0)) s; see $name.log)"; tail -20 "$OUT/$name.log"; FAILED=1; fi
  return $rc
}

run_campaign() {  # --campaign in what is left of the budget; the records it wrote into registry.tar.gz
  [ -n "$CAMPAIGN" ] || return 0
  local d t0=$SECONDS limit rc
  for d in "$CARRY"/data/*/; do
    d=$(basename "$d")
    [ -e "$ROOT/../shared/data/$d" ] || { mkdir -p "$ROOT/../shared/data" && ln -s "$CARRY/data/$d" "$ROOT/../shared/data/$d"; }
  done
  limit=$(left 100000)
  if [ "$limit" -le 0 ]; then note "- campaign: not started (no time left of the ${BUDGET} s budget)"; return 1; fi
  # word splitting of ARGS is wanted: it is one command line
  # shellcheck disable=SC2086
  timeout "$limit" "$NL" --device cuda $CAMPAIGN > "$OUT/campaign.log" 2>&1; rc=$?
  note "- campaign: exit $rc after $((SECONDS - t0)) s$([ $rc = 124 ] && echo ' (cut by the budget: its last run is lost)'): normlab --device cuda $CAMPAIGN"
  grep -E "^\[run [0-9]+ of|registry: " "$OUT/campaign.log" | sed 's/^ */  /' | tee -a "$SUMMARY"
  git status --porcelain --untracked-files=all -- results | sed 's/^...//' > "$OUT/campaign-records.txt"
  if [ -s "$OUT/campaign-records.txt" ]; then
    tar czf "${BUNDLE:-$OUT}/registry.tar.gz" -T "$OUT/campaign-records.txt"
    note "  $(wc -l < "$OUT/campaign-records.txt") new or changed files under results/ in registry.tar.gz"
  fi
  [ $rc = 0 ] || [ $rc = 124 ]
}

note "# gpu-check $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo '+changes'), $(date -u +%FT%TZ)"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > "$OUT/env.txt" 2>&1
{ command -v nvcc && nvcc --version | tail -2; lscpu | grep -E "Model name|^CPU\(s\)"; } >> "$OUT/env.txt" 2>&1
HAVE_GPU=0
nvidia-smi -L 2>/dev/null | grep -q "^GPU " && HAVE_GPU=1
note "- machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo 'no GPU') / $(lscpu | sed -n 's/^Model name: *//p')"

# ---- dependencies carried as .debs (a machine without Debian packages: docs/cuda.md) ----
CMAKE_EXTRA=()
PYTHON=python3
if [ -d "$CARRY/debs" ]; then  # always: the device image has some of these libraries, in other versions
  DEPS=/opt/normlab-deps
  mkdir -p $DEPS
  for f in "$CARRY"/debs/*.deb; do dpkg -x "$f" $DEPS; done
  A=x86_64-linux-gnu
  export LD_LIBRARY_PATH=$DEPS/usr/lib/$A/openblas-openmp:$DEPS/usr/lib/$A${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PKG_CONFIG_LIBDIR=$DEPS/usr/lib/$A/pkgconfig:$DEPS/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$DEPS
  command -v pkg-config > /dev/null || CMAKE_EXTRA+=(-DPKG_CONFIG_EXECUTABLE=$DEPS/usr/bin/pkgconf)
  CMAKE_EXTRA+=(-DCMAKE_PREFIX_PATH=$DEPS/usr -DNORMLAB_DEPS_ROOT=$DEPS)
  note "- dependencies: $(ls "$CARRY"/debs/*.deb | wc -l) carried .debs unpacked into $DEPS"
  # PyTorch (the bench twin) runs with the image's own libraries, not these
  PYTHON=$OUT/python3-system
  printf '#!/bin/sh\nunset LD_LIBRARY_PATH\nexec python3 "$@"\n' > "$PYTHON"; chmod +x "$PYTHON"
fi

# ---- build: only the targets this check runs (or the programs built elsewhere, --prebuilt) ----
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
if [ -n "$PREBUILT" ]; then
  if "$PREBUILT/normlab" --help > "$OUT/prebuilt.log" 2>&1 && ldd "$PREBUILT/libnormlab_cuda.so" >> "$OUT/prebuilt.log" 2>&1 \
     && ! grep -q "not found" "$OUT/prebuilt.log"; then
    BUILD=$PREBUILT
    export NORMLAB_CUDA_MODULE=$(cd "$PREBUILT" && pwd)/libnormlab_cuda.so
    note "- build: the programs in $PREBUILT (built elsewhere) start here; no build"
  else
    note "- build: the programs in $PREBUILT do not start here (see prebuilt.log); building from source"
    PREBUILT=
  fi
fi
if [ -z "$PREBUILT" ]; then
  GEN=(); command -v ninja > /dev/null && GEN=(-G Ninja)
  [ -f "$BUILD/CMakeCache.txt" ] && GEN=()  # an existing build keeps its generator
  if [ $HAVE_GPU = 1 ]; then ARCHS=(-DCMAKE_CUDA_ARCHITECTURES="$ARCH"); else ARCHS=(); fi
  step configure 300 cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
    "${ARCHS[@]}" "${CMAKE_EXTRA[@]}" $(command -v ccache > /dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache) \
    || { note "gpu-check: FAILED (configure)"; bundle; exit 1; }
  step build 480 cmake --build "$BUILD" -j "$JOBS" --target normlab_cli normlab_cuda_tests normlab_op_check \
    || { note "gpu-check: FAILED (build)"; bundle; exit 1; }
  [ -f "$BUILD/libnormlab_cuda.so" ] && note "- CUDA module: $BUILD/libnormlab_cuda.so" || note "- CUDA module: not built (no nvcc: CPU-only build)"
fi
NL=$BUILD/normlab
if [ $CAMPAIGN_ONLY = 1 ]; then
  if [ $HAVE_GPU = 0 ]; then note "gpu-check: NO GPU on this machine: the campaign needs one"; bundle; exit 77; fi
  run_campaign || FAILED=1
  bundle
  exit $FAILED
fi

# ---- CPU training in the background while the GPU steps run (same machine, same binary) ----
DATA=$CARRY/data-bin/multi30k
[ -d "$DATA" ] || DATA=data-bin/multi30k
TRAIN=(train mt --config multi30k --data "$DATA" --max-update "$UPDATES" --log-interval 10 --no-save --no-test --quiet)
CPU_PID=
if [ $HAVE_GPU = 1 ] && [ -d "$DATA" ]; then
  rm -rf "$OUT/train-cpu" "$OUT/train-cuda"
  CPU_THREADS=$(( $(nproc) > 4 ? $(nproc) - 2 : 1 ))
  ( timeout "$(left 540)" "$NL" --device cpu "${TRAIN[@]}" --out "$OUT/train-cpu" --threads $CPU_THREADS > "$OUT/train-cpu.log" 2>&1
    echo $? > "$OUT/train-cpu.rc" ) &
  CPU_PID=$!
fi

# ---- CUDA tests: a skip on a GPU machine is a failure ----
if [ $HAVE_GPU = 1 ]; then
  step cuda-tests 240 env NORMLAB_REQUIRE_GPU=1 "$BUILD/tests/normlab_cuda_tests" --durations yes
else
  "$BUILD/tests/normlab_cuda_tests" > "$OUT/cuda-tests.log" 2>&1
  note "- cuda-tests: $(tail -1 "$OUT/cuda-tests.log")"
fi

# ---- op-by-op comparison of every kernel (timed on the GPU); the fake device without one ----
if [ $HAVE_GPU = 1 ]; then
  step op-check 240 "$BUILD/tests/normlab_op_check" --time 20 --json "$OUT/op-check.json"
else
  step op-check-self-test 600 "$BUILD/tests/normlab_op_check" --self-test --json "$OUT/op-check.json"
fi
tail -1 "$OUT"/op-check*.log | sed 's/^/  /' | tee -a "$SUMMARY"

if [ $HAVE_GPU = 0 ]; then
  note ""
  note "gpu-check: NO GPU on this machine (nvidia-smi lists none): the CPU part ran (build, CUDA tests skipped, op check"
  note "against the fake device$([ $FAILED = 0 ] && echo ', all passed' || echo ', FAILURES above')). The GPU part needs an NVIDIA GPU with a"
  note "CUDA 13 driver (R580+), nvcc, cmake, .gpu-carry/ from 'scripts/gpu-check.sh --prepare' and python3 with torch"
  note "for the PyTorch column; the device run command is in docs/cuda.md."
  bundle
  [ $FAILED = 0 ] && exit 77 || exit 1
fi

# ---- 200 updates of Multi30k on the GPU against the CPU's losses ----
if [ -n "$CPU_PID" ]; then
  step train-cuda 300 "$NL" --device cuda "${TRAIN[@]}" --out "$OUT/train-cuda"
  wait $CPU_PID
  if [ "$(cat "$OUT/train-cpu.rc" 2>/dev/null)" != 0 ]; then
    note "- train-cpu: FAIL (see train-cpu.log)"; FAILED=1
  else
    step compare-losses 30 "$PYTHON" - "$OUT/train-cpu/metrics.jsonl" "$OUT/train-cuda/metrics.jsonl" "$TOL" <<'EOF'
import json, sys
def losses(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        if "update" in r and "train_loss" in r:
            out[r["update"]] = r["train_loss"]
    return out
cpu, gpu, tol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
common = sorted(set(cpu) & set(gpu))
if not common:
    sys.exit("no common training-loss lines in %s and %s" % (sys.argv[1], sys.argv[2]))
worst = 0.0
for u in common:
    rel = abs(gpu[u] - cpu[u]) / max(abs(cpu[u]), 1e-12)
    worst = max(worst, rel)
    print("update %5d  cpu %.6f  cuda %.6f  rel %.2e" % (u, cpu[u], gpu[u], rel))
print("%d logged losses, worst relative difference %.2e (tolerance %.0e)" % (len(common), worst, tol))
sys.exit(0 if worst <= tol and max(common) >= 100 else 1)
EOF
    tail -1 "$OUT/compare-losses.log" | sed 's/^/  /' | tee -a "$SUMMARY"
  fi
else
  note "- train: SKIPPED (no $DATA: run scripts/gpu-check.sh --prepare here and carry .gpu-carry)"; FAILED=1
fi

# ---- the transformer benchmark on the GPU, beside PyTorch CUDA: float32, then bf16 autocast ----
BENCH=(bench transformer --threads 1 --steps 30 --python "$PYTHON")
step bench-transformer 150 "$NL" --device cuda "${BENCH[@]}" --json "$OUT/bench-transformer.json"
grep -iE "median|ratio|reference" "$OUT/bench-transformer.log" | head -6 | sed 's/^/  /' | tee -a "$SUMMARY"
step bench-transformer-bf16 150 "$NL" --device cuda "${BENCH[@]}" --bf16 --json "$OUT/bench-transformer-bf16.json"
grep -iE "median|ratio|reference" "$OUT/bench-transformer-bf16.log" | head -8 | sed 's/^/  /' | tee -a "$SUMMARY"

note ""
[ $FAILED = 0 ] && note "gpu-check: PASSED" || note "gpu-check: FAILED (see the logs in $OUT)"
run_campaign || FAILED=1
bundle
exit $FAILED
