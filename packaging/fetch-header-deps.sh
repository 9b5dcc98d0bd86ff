#!/usr/bin/env bash
# Fetches the header-only dependencies into .deps/ (git-ignored) on a machine with network and
# Debian's apt, for a GPU node that has CUDA, NCCL, CMake and PyTorch but no Debian packages and
# no network (packaging/gpu-node.sh finds them there). Idempotent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$root/.deps/debs"
cd "$root/.deps/debs"
[[ -f .fetched ]] || { apt-get download nlohmann-json3-dev && touch .fetched; }
for deb in ./*.deb; do dpkg -x "$deb" "$root/.deps"; done
echo "header-only dependencies in $root/.deps/usr"
