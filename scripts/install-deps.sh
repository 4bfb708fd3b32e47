#!/usr/bin/env bash
# Installs normlab's build and run dependencies from Debian 12 packages (run as root).
# Usage: scripts/install-deps.sh [--bench] [--fuzz] [--distributed]
#   --bench adds python3-torch for the PyTorch comparison
#   --distributed adds Open MPI (libopenmpi-dev, openmpi-bin) for `--distributed` training and its tests
#               (docs/distributed.md); scripts/test.sh installs it
#   --fuzz  adds clang, its libFuzzer/sanitizer runtimes and its OpenMP runtime (scripts/fuzz.sh only)
set -euo pipefail
# libdnnl-dev: oneDNN, the CPU's bfloat16 products (mixed precision, docs/mixed-precision.md)
pkgs=(build-essential cmake pkg-config libopenblas-openmp-dev libcli11-dev nlohmann-json3-dev catch2 zlib1g-dev
      libsentencepiece-dev dataset-fashion-mnist libdnnl-dev)
for a in "$@"; do
  case "$a" in
    --bench) pkgs+=(python3 python3-torch) ;;
    --fuzz) pkgs+=(clang libclang-rt-14-dev libomp-dev) ;;
    --distributed) pkgs+=(libopenmpi-dev openmpi-bin) ;;
    *) echo "install-deps.sh: unknown option '$a' (use --bench, --fuzz and/or --distributed)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "normlab needs these Debian packages: ${missing[*]}" >&2
    echo "run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
