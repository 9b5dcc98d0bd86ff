#!/usr/bin/env bash
# Installs every Debian 12 package Mario Workbench needs to build, test and package.
# Idempotent and non-interactive: safe to run on every CI start.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git
  # compiler cache (optional: CMake uses it when found, cmake/MarioCompilerCache.cmake)
  ccache
  # core
  nlohmann-json3-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  # GUI (views/, app/)
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libqt6svg6 libgl-dev
  libqcustomplot-dev libqcustomplot2.1-qt6
  # executor (LibTorch CPU build, BLAS; Gloo's headers for PyTorch's ProcessGroupGloo)
  libtorch-dev libopenblas-dev libgloo-dev
  # headless GUI tests and screenshots
  xvfb xauth xfonts-base fonts-dejavu-core
  # .deb packaging
  dpkg-dev file
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
