#!/usr/bin/env bash
# Builds what a GPU node or cluster node needs — core, the `mario` CLI and `mario-executor` with
# its CUDA/NCCL backend — without Qt, tests or benchmarks, against the LibTorch of the node's
# PyTorch (Debian's LibTorch is CPU-only). nlohmann_json comes from the system or from .deps/
# (packaging/fetch-header-deps.sh, run beforehand where there is network).
#   bash packaging/gpu-node.sh            # → build-node/executor/mario-executor
# Overrides: MARIO_TORCH_PREFIX (LibTorch's cmake folder, when there is no `import torch`),
# MARIO_CUDA_ARCH (default `native`, which needs a visible GPU; e.g. 90 for H100, 80 for A100),
# MARIO_NODE_BUILD (build folder, default build-node).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
torch_prefix="${MARIO_TORCH_PREFIX:-}"
if [[ -z "$torch_prefix" ]]; then
  torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)" || {
    echo "gpu-node.sh: no PyTorch for python3 here; set MARIO_TORCH_PREFIX to LibTorch's cmake folder" >&2
    exit 1
  }
fi
build="${MARIO_NODE_BUILD:-$root/build-node}"
deps=()
[[ -d "$root/.deps/usr" ]] && deps=(-DCMAKE_PREFIX_PATH="$root/.deps/usr")
export PATH="/usr/local/cuda/bin:$PATH"
# MARIO_TORCH_PREFIX (not CMAKE_PREFIX_PATH): executor/CMakeLists.txt then takes every part of
# LibTorch from that prefix and configures a CUDA wheel's with Debian 12's CMake.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMARIO_BUILD_GUI=OFF -DMARIO_BUILD_TESTS=OFF -DMARIO_BUILD_BENCHMARKS=OFF -DMARIO_BUILD_EXECUTOR=ON \
  -DMARIO_TORCH_PREFIX="$torch_prefix" "${deps[@]}" -DCMAKE_CUDA_ARCHITECTURES="${MARIO_CUDA_ARCH:-native}"
cmake --build "$build" -j"$(nproc)" --target mario mario-executor
echo "built $build/executor/mario-executor"
