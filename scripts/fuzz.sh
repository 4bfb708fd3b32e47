#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang, ASan + UBSan, build-fuzz/) and runs each of them.
# Usage: scripts/fuzz.sh [SECONDS]          run every target for SECONDS (default 60)
#        scripts/fuzz.sh --runs N            run every target for N executions (e.g. 1000000)
#        scripts/fuzz.sh ... --only NAME     run one target (idx, checkpoint, dictionary, token_dataset,
#                                            conllu, lines, sst, zip, config)
#        scripts/fuzz.sh --smoke [--build-dir DIR]   CI smoke test (ctest fuzz_smoke): installs nothing,
#                                            builds every target, runs each 10 s; exits 77 (skipped) when
#                                            clang or libFuzzer is not installed
# Seeds: synthetic ones from fuzz_make_seeds, plus the first few KiB of the real data sets under
# ../shared/data when present (copied into build-fuzz/corpus/, never into the repository). A crash,
# timeout or out-of-memory input is saved as build-fuzz/artifacts/<target>/crash-* (or timeout-*, oom-*)
# and the script exits non-zero; replay one with build-fuzz/fuzz/fuzz_<target> FILE.
# Adding a target: see fuzz/CMakeLists.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60 runs="" only="" smoke=0 B=build-fuzz
while (($#)); do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --smoke) smoke=1 seconds=10; shift ;;
    --build-dir) B="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) [[ "$1" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2; }
       seconds="$1"; shift ;;
  esac
done
if ((smoke)); then
  fuzzer_rt=$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)
  if ! command -v clang++ >/dev/null || [[ ! -f "$fuzzer_rt" ]]; then
    echo "fuzz.sh --smoke: SKIPPED: clang++ or its libFuzzer runtime is not installed (scripts/install-deps.sh --fuzz)"
    exit 77
  fi
else
  scripts/install-deps.sh --fuzz
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DNORMLAB_FUZZ=ON \
      -DNORMLAB_TESTS=OFF -DNORMLAB_CUDA=OFF -DNORMLAB_NATIVE=OFF "${launcher[@]}" >/dev/null
cmake --build "$B" --target normlab_fuzz_all -j"$(nproc)"

targets=$(sed -n 's/^set(NL_FUZZ_TARGETS \(.*\))$/\1/p' fuzz/CMakeLists.txt)
rm -rf "$B/seeds" && "$B/fuzz/fuzz_make_seeds" "$B/seeds"
# Real-data seeds (heads of files) when ../shared/data exists: name -> files.
D=../shared/data
add_real() {  # target mode file...
  local t=$1 mode=$2; shift 2
  for f in "$@"; do
    [[ -f "$f" ]] || continue
    local out="$B/seeds/$t/real-$(basename "$f")"
    if [[ "$mode" == raw ]]; then head -c 65536 "$f" > "$out"
    else { printf '\0'; head -c 4096 < <(zcat -f "$f"); } > "$out"; fi  # (no pipe: SIGPIPE under pipefail)
  done
}
add_real conllu text "$D/ud-english-ewt/en_ewt-ud-dev.conllu"
add_real lines text "$D/iwslt15-en-vi/tst2012.vi" "$D/ptb-lm/ptb.valid.txt" "$D/multi30k/raw/val.de.gz"
add_real sst text "$D/sst5/dev.txt" "$D/sst5/dev.sentences.txt"
add_real idx raw "$D/mnist/t10k-labels-idx1-ubyte.gz"
mkdir -p "$B/seeds/config"
for f in apps/configs/*/*.json; do  # the shipped run configs, named <task>-<name> (two tasks have a cpu.json)
  t=${f#apps/configs/}; cp "$f" "$B/seeds/config/${t//\//-}"
done

status=0
mkdir -p "$B/report"
for t in $targets; do
  [[ -n "$only" && "$t" != "$only" ]] && continue
  corpus="$B/corpus/$t" art="$B/artifacts/$t/"
  mkdir -p "$corpus" "$art"
  limit=(-max_total_time="$seconds")
  [[ -n "$runs" ]] && limit=(-runs="$runs")
  if [[ -n "$runs" ]]; then echo "== fuzz_$t ($runs runs)"; else echo "== fuzz_$t ($seconds s)"; fi
  if "$B/fuzz/fuzz_$t" "${limit[@]}" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$art" "$corpus" "$B/seeds/$t" >"$B/report/$t.log" 2>&1; then
    echo "   ok: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$B/report/$t.log" | tail -1)"
  else
    status=1
    echo "   FAILED: see $B/report/$t.log and $art" >&2
    grep -E '^==[0-9]+==ERROR|SUMMARY|runtime error|deadly signal|Test unit written' "$B/report/$t.log" | head -5 >&2 || true
  fi
done
exit $status
