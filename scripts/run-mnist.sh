#!/usr/bin/env bash
# The main job: installs dependencies, builds, and trains the MNIST CNN of Xu et al. 2019 (appendix A.3)
# with every LayerNorm variant on Fashion-MNIST (Debian package dataset-fashion-mnist), three seeds each, then
# prints and writes the comparison table to runs/reproduce-mnist/one-epoch/. --no-registry: everything trains here, and
# the committed records of results/ are neither reused nor replaced. Extra arguments go to
# `normlab reproduce mnist` (e.g. --seeds 1; the paper's setting is --config default, i.e. 20 epochs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/normlab reproduce mnist --config one-epoch --no-registry "$@"
