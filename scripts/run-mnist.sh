#!/usr/bin/env bash
# The main job: installs dependencies, builds, and trains the MNIST CNN of Xu et al. 2019 (appendix A.3)
# with every LayerNorm variant on Fashion-MNIST (Debian package dataset-fashion-mnist), then prints and
# writes the comparison table to results/mnist/. Extra arguments go to `normlab reproduce mnist`
# (defaults: config one-epoch, 1 seed; the paper's setting is --config default --seeds 3, i.e. 20 epochs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/normlab reproduce mnist --config one-epoch --seeds 1 --out results/mnist "$@"
