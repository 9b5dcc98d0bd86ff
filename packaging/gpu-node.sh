#!/usr/bin/env bash
# Builds what a GPU node or cluster node needs — core, the `mario` CLI and `mario-executor` with
# its CUDA/NCCL backend — without Qt, tests or benchmarks, against the LibTorch of the node's
# PyTorch (Debian's LibTorch is CPU-only). nlohmann_json comes from the system or from .deps/
# (packaging/fetch-header-deps.sh, run beforehand where there is network).
#   bash packaging/gpu-node.sh            # → build-node/executor/mario-executor
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
prefix="$torch_prefix"
[[ -d "$root/.deps/usr" ]] && prefix="$prefix;$root/.deps/usr"
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S "$root" -B "$root/build-node" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMARIO_BUILD_GUI=OFF -DMARIO_BUILD_TESTS=OFF -DMARIO_BUILD_BENCHMARKS=OFF -DMARIO_BUILD_EXECUTOR=ON \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_ARCHITECTURES=native
cmake --build "$root/build-node" -j"$(nproc)" --target mario mario-executor
echo "built $root/build-node/executor/mario-executor"
