#!/usr/bin/env bash
# The reproduction campaign of issue 28, resumable across sessions: every run of it is recorded in the
# results registry (results/, committed) as it finishes, and a rerun skips what is recorded and continues
# an interrupted run from its checkpoint in runs/. Runs one training at a time on --threads 1 (at nice
# $NICE, default 0: below that, parallel builds starve it), so the other core stays free; run it in the
# background and commit results/ as records land:
#   nohup scripts/campaign.sh > runs/campaign.log 2>&1 &
#   git add results && build/normlab report && git add README.md docs results && git commit
# Steps (each a `normlab reproduce` command; STEPS="1 3" runs only those):
#   1  the README's table: Fashion-MNIST, one epoch, 7 variants x 3 seeds
#   2  Xu et al. RT and SST-5 columns (10 epochs), 7 variants x 3 seeds each
#   3  Xu et al. MNIST column (real MNIST, 20 epochs), 7 variants x 3 seeds
#   4  Xu et al. Multi30k MT column (10 epochs), 7 variants x 3 seeds, in mixed precision ($MT_FLAGS,
#      default --bf16: every seed of the column in one precision, recorded in each record's "precision")
# NORMLAB (default build/normlab) is the binary; DATA_ROOT (default ../shared/data) the raw data.
set -euo pipefail
cd "$(dirname "$0")/.."
NORMLAB=${NORMLAB:-build/normlab}
DATA_ROOT=${DATA_ROOT:-../shared/data}
STEPS=${STEPS:-"1 2 3 4"}
MT_FLAGS=${MT_FLAGS---bf16}
NICE=${NICE:-0}
run() { echo "== $(date -u +%FT%TZ) $*"; nice -n "$NICE" "$NORMLAB" "$@"; }
prepare() {  # prepare <name> <raw folder>: tokenised corpus into data-bin/<name> unless there
  [[ -f data-bin/$1/dict.txt || -f data-bin/$1/dict.src.txt || -d data-bin/$1/train ]] && return 0
  run data prepare "$1" --data "$DATA_ROOT/$2" --out "data-bin/$1"
}
for step in $STEPS; do
  case "$step" in
    1) run reproduce mnist --config one-epoch --seeds 3 --threads 1 --quiet ;;
    2) prepare rt rt-polarity
       prepare sst5 sst5
       run reproduce xu2019 --tasks rt --seeds 3 --threads 1 --quiet
       run reproduce xu2019 --tasks sst5 --seeds 3 --threads 1 --quiet ;;
    3) run reproduce xu2019 --tasks mnist --seeds 3 --threads 1 --quiet --data-root "$DATA_ROOT" ;;
    4) prepare multi30k multi30k
       # shellcheck disable=SC2086
       run reproduce xu2019 --tasks mt --seeds 3 --threads 1 --quiet $MT_FLAGS ;;
    *) echo "campaign.sh: unknown step '$step' (1-4)" >&2; exit 2 ;;
  esac
done
echo "== $(date -u +%FT%TZ) campaign steps done: $STEPS"
