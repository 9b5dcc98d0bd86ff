#!/usr/bin/env python3
"""Does the executor compile against another LibTorch? Checked without a GPU and without linking.

Every translation unit of the executor is compiled with -fsyntax-only, exactly as the build
compiles it (flags from BUILD/compile_commands.json), but against the headers of the LibTorch
whose include directory is given, with the Torch-CUDA branch on (MARIO_TORCH_CUDA=1), so the
sources a GPU node builds are the ones checked. A LibTorch include directory is the `include/`
of an unpacked libtorch archive, or `torch/include` inside an installed PyTorch wheel.

Then it makes sure nothing was mixed in: each unit's header list (-M) must hold no LibTorch
header from anywhere but the given directory (Debian's own LibTorch lives in /usr/include,
which the compiler searches last, so a header missing from the given tree would otherwise be
taken silently from there).

CPU-only wheels and archives lack one generated header, c10/cuda/impl/cuda_cmake_macros.h (it
only says the library is shared); it is supplied here, as executor/CMakeLists.txt does for CI.

usage: packaging/check-torch-headers.py LIBTORCH_INCLUDE_DIR [BUILD_DIR]   (default BUILD_DIR: build)
exit:  0 every unit compiles, 1 some do not (their first errors are printed), 2 bad usage
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

TORCH_HEADER = re.compile(r"/(ATen|c10|torch|caffe2)/")


def units(build_dir, include_dir, shim_dir):
    """The executor's compile commands, rewritten for the given LibTorch."""
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        commands = json.load(f)
    api = os.path.join(include_dir, "torch", "csrc", "api", "include")
    seen, result = set(), []
    for entry in commands:
        source = entry["file"]
        if "/executor/" not in source or "/tests/" in source or source in seen:
            continue
        seen.add(source)
        args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
        out, i = [], 0
        while i < len(args):
            if args[i] == "-o":
                i += 2
                continue
            # The build's own LibTorch and CUDA shim give way to the ones checked.
            if args[i] == "-isystem" and ("/torch/" in args[i + 1] or "torch-cuda-shim" in args[i + 1]):
                i += 2
                continue
            out.append(args[i])
            i += 1
        # A default system directory (Debian's LibTorch is in /usr/include) is searched anyway;
        # naming it with -isystem would break the C library's #include_next.
        added = [] if include_dir in ("/usr/include", "/usr/local/include") else ["-isystem", include_dir]
        added += ["-isystem", api, "-isystem", shim_dir]
        first_include = next(k for k, a in enumerate(out) if a.startswith("-I") or a == "-isystem")
        out[first_include:first_include] = added
        out[1:1] = ["-DMARIO_TORCH_CUDA=1"]
        result.append((source, out, entry.get("directory", build_dir)))
    return result


def check(unit, include_dir):
    source, args, directory = unit
    compiled = subprocess.run(args[:1] + ["-fsyntax-only"] + args[1:], cwd=directory, capture_output=True, text=True)
    if compiled.returncode != 0:
        return source, False, compiled.stderr.strip().splitlines()[:12]
    listed = subprocess.run(args[:1] + ["-M"] + args[1:], cwd=directory, capture_output=True, text=True)
    foreign = [h for h in listed.stdout.replace("\\\n", " ").split()
               if TORCH_HEADER.search(h) and not os.path.realpath(h).startswith(os.path.realpath(include_dir))
               and "torch-headers-shim" not in h]
    if foreign:
        return source, False, [f"took {len(foreign)} LibTorch header(s) from elsewhere, e.g. {foreign[0]}"]
    return source, True, []


def version_of(include_dir):
    for relative in ("torch/headeronly/version.h", "torch/csrc/api/include/torch/version.h"):
        path = os.path.join(include_dir, relative)
        if os.path.exists(path):
            found = re.search(r'#define TORCH_VERSION\s*\\?\s*"([^"]+)"', open(path).read())
            if found:
                return found.group(1)
    return "unknown"


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    include_dir = os.path.abspath(sys.argv[1])
    build_dir = os.path.abspath(sys.argv[2] if len(sys.argv) == 3 else "build")
    if not os.path.exists(os.path.join(include_dir, "c10", "core", "Allocator.h")):
        print(f"check-torch-headers: {include_dir} holds no LibTorch headers (no c10/core/Allocator.h)",
              file=sys.stderr)
        return 2
    if not os.path.exists(os.path.join(build_dir, "compile_commands.json")):
        print(f"check-torch-headers: {build_dir}/compile_commands.json missing: configure with cmake first",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="torch-headers-shim") as shim:
        os.makedirs(os.path.join(shim, "c10", "cuda", "impl"))
        with open(os.path.join(shim, "c10", "cuda", "impl", "cuda_cmake_macros.h"), "w") as f:
            f.write("#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n")
        todo = units(build_dir, include_dir, shim)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda unit: check(unit, include_dir), todo))
    failed = [r for r in results if not r[1]]
    for source, _, lines in failed:
        print(f"FAIL {os.path.relpath(source)}")
        for line in lines:
            print(f"     {line}")
    print(f"LibTorch {version_of(include_dir)} ({include_dir}): {len(results) - len(failed)} of {len(results)} "
          f"executor units compile with MARIO_TORCH_CUDA=1")
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main())
