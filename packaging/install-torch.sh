#!/usr/bin/env bash
# Installs PyTorch 2.x, pinned, from the Python package index into a virtual environment
# (default .venv-torch/ at the repository root, git-ignored), so the executor can be built and
# tested against a current LibTorch as well as Debian's 1.13: the wheel carries LibTorch's
# headers, libraries and share/cmake/Torch. Prints LibTorch's cmake folder
# (torch.utils.cmake_prefix_path) as its last line, and links it as VENV/cmake-prefix, the path
# the `torch2` preset builds against (so that path names no Python version).
#   bash packaging/install-torch.sh && cmake --preset torch2 && cmake --build build-torch2 -j2
# It also installs torchtitan (pinned, with the packages its train entry point imports to parse
# its command line), so the tests can check exported torchtitan settings against torchtitan itself.
# Idempotent: with the pinned version already in the environment it installs nothing. The wheels
# are kept in a cache of their own (pip's HTTP cache keeps nothing when the index sends no caching
# headers, as the one these machines reach does), so a fresh environment on the same machine,
# CI's fresh clone included, installs from there without the network.
# Linux x86_64 wheels on the index are CUDA builds (the CPU-only ones live on PyTorch's own
# index); their CUDA libraries come as pip packages beside torch, and no GPU is needed to build
# against them or to run the executor's CPU backend.
# Overrides: MARIO_TORCH_VENV (the environment's folder), MARIO_TORCH_WHEELS (the wheel cache,
# default ~/.cache/mario/torch-VERSION), MARIO_PYTHON (interpreter, >= 3.11).
set -euo pipefail

# The newest 2.x on the index when this was pinned; raise it on purpose, not by drift.
torch_version="2.15.0"
# torchtitan, for the tests that check exported settings against its own rules (tests/pytorch):
# the wheel and the packages that `python -m torchtitan.train` imports before it parses its
# command line (its trainer config names the data loader, tokenizer, validator and metrics, so
# their modules load: tensorboard, datasets, tokenizers, torchdata and what they import), each
# found needed by removing it; without dependencies, so that nothing else (wandb, the rest of
# their stacks) comes in. NumPy is also what PyTorch's object collectives (the pipeline
# stages' shape exchange) need.
peers=("torchtitan==0.3.0" "spmd_types==0.2.3" "tyro==1.0.17" "docstring_parser==0.18.0" "typeguard==4.6.1"
       "numpy==2.4.6"
       "tensorboard==2.21.0" "protobuf==7.36.2" "absl-py==2.5.1"
       "torchdata==0.11.0" "tokenizers==0.23.3"
       "datasets==5.2.0" "multiprocess==0.70.19" "dill==0.4.1" "pandas==3.1.1" "python-dateutil==4.0.0"
       "pyarrow==26.0.1" "xxhash==4.1.0" "tqdm==4.70.1" "pyyaml==6.0.3" "packaging==26.3"
       "huggingface-hub==2.4.0" "httpx2==2.16.2" "httpcore2==2.16.2" "h11==0.16.0" "idna==3.20"
       "truststore==0.10.5")

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${MARIO_TORCH_VENV:-$root/.venv-torch}"
wheels="${MARIO_TORCH_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/mario/torch-$torch_version}"
python="${MARIO_PYTHON:-python3}"
fail() {
  echo "install-torch: $*" >&2
  exit 1
}

# Where the installed torch package keeps LibTorch's cmake folder, found without importing torch
# (importing it takes seconds; this is what torch.utils.cmake_prefix_path computes).
prefix_of() {
  "$venv/bin/python" - <<'EOF'
import importlib.util, os
spec = importlib.util.find_spec("torch")
print(os.path.join(spec.submodule_search_locations[0], "share", "cmake"))
EOF
}

has_pin() {
  [[ -x "$venv/bin/python" ]] &&
    "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('torch') != '$torch_version')" 2>/dev/null
}

has_peers() {
  "$venv/bin/python" - "${peers[@]}" <<'EOF' 2>/dev/null
import importlib.metadata as m, sys
sys.exit(any(m.version(name) != version for name, version in (p.split("==") for p in sys.argv[1:])))
EOF
}

install_peers() {
  local log="$venv/install-torch.log"
  local pip=("$venv/bin/python" -m pip --disable-pip-version-check)
  has_peers && return 0
  if ! "${pip[@]}" install --no-index --no-deps --find-links "$wheels" "${peers[@]}" >>"$log" 2>&1; then
    mkdir -p "$wheels"
    "${pip[@]}" download --no-deps --progress-bar off --dest "$wheels" "${peers[@]}" >>"$log" 2>&1 &&
      "${pip[@]}" install --no-index --no-deps --find-links "$wheels" "${peers[@]}" >>"$log" 2>&1 ||
      fail "pip could not install ${peers[*]} (log: $log)"
  fi
  echo "install-torch: installed ${peers[*]}" >&2
}

if has_pin; then
  install_peers
  prefix="$(prefix_of)"
  [[ -f "$prefix/Torch/TorchConfig.cmake" ]] || fail "torch $torch_version in $venv has no $prefix/Torch/TorchConfig.cmake; remove $venv and run again"
  ln -sfn "$prefix" "$venv/cmake-prefix"
  echo "install-torch: torch $torch_version present in $venv" >&2
  echo "$prefix"
  exit 0
fi

command -v "$python" >/dev/null || fail "no $python on PATH (set MARIO_PYTHON to a Python 3.11 or newer)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null ||
  fail "torch $torch_version needs Python 3.11 or newer; $python is $("$python" -V 2>&1 | head -n1) (set MARIO_PYTHON)"
if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv" 2>/dev/null ||
    fail "could not create a virtual environment in $venv with $python (Debian: apt-get install python3-venv)"
fi

log="$venv/install-torch.log"
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
# Offline from the wheel cache when it holds the whole set; else download the set into it first.
if "${pip[@]}" install --no-index --find-links "$wheels" "torch==$torch_version" >"$log" 2>&1; then
  echo "install-torch: installed torch $torch_version from $wheels" >&2
else
  echo "install-torch: downloading torch $torch_version and its CUDA libraries (about 3 GB) into $wheels" >&2
  mkdir -p "$wheels"
  if ! "${pip[@]}" download --progress-bar off --dest "$wheels" "torch==$torch_version" >"$log" 2>&1 ||
    ! "${pip[@]}" install --no-index --find-links "$wheels" "torch==$torch_version" >>"$log" 2>&1; then
    fail "pip could not install torch==$torch_version: $(grep -m1 -E '^ERROR' "$log" || tail -n1 "$log") (full log: $log)"
  fi
fi
# Importing torch loads libtorch and its CUDA libraries: a broken install fails here, not in a build.
prefix="$("$venv/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>>"$log")" ||
  fail "torch $torch_version installed but does not import (log: $log)"
[[ -f "$prefix/Torch/TorchConfig.cmake" ]] || fail "torch $torch_version has no $prefix/Torch/TorchConfig.cmake"
ln -sfn "$prefix" "$venv/cmake-prefix"
install_peers
echo "install-torch: torch $torch_version installed in $venv" >&2
echo "$prefix"
