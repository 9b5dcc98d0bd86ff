#!/usr/bin/env python3
"""Issue 45's speed grid: the passes' time, and that a faster binary gives the same plans byte for byte.

The grid: GPT-3 13B, LLaMA-2 7B and LLaMA-2 13B on A100-40G; 1F1B, Chimera and interleaved (2
chunks); PP 8 and 16; m = PP, 2·PP and 4·PP micro-batches of size 1 (54 configurations, built
as tests/core/RecomputeGrid.h builds issue 11's smaller grid). Beside it the two big rows of
docs/benchmarks.md: LLaMA-3 70B interleaved on 32 H100 × 128 micro-batches, and the bundled
GPT-3 13B Chimera example at 32 × 2048.

Each configuration is written once as a PLAN with no passes (`mario plan CONFIG --passes none
-o`), so that it carries its stage costs: a change to the cost model (core/cost) then cannot move
what the passes are given, and two binaries of different commits can be compared on the same
input.

usage:
  speed_grid.py build DIR [MARIO]           write the plans into DIR (MARIO: default build/app/mario)
  speed_grid.py check BASE NEW DIR [--big]  run both binaries on every plan with `--passes all` and
                                            `--passes all,hide`; the written plans (mario plan -o) and
                                            `simulate --json` less its own timings must be equal byte
                                            for byte (on the keys both write; a key one binary
                                            adds is named and left out). Prints each row's passes_us, both binaries,
                                            and the median and max; exits 1 on any difference.
                                            --big adds the 32 × 2048 plan (tens of seconds a run).
  speed_grid.py time MARIO DIR [--big]      only the timing table for one binary.
  --repeat N: each passes_us is the median of N runs; --only TEXT: only the plans whose name holds TEXT.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MARIO = os.path.join(HERE, "..", "..", "build", "app", "mario")
MODELS = ["gpt3-13b", "llama2-7b", "llama2-13b"]
SCHEMES = [("1f1b", None), ("chimera", None), ("interleaved", 2)]
PIPELINES = [8, 16]
PASS_LISTS = ["all", "all,hide"]
BIG = "gpt3-13b-chimera-32x2048"
# simulate --json's own stopwatch readings: the only keys that may differ between two runs.
TIMINGS = ("load_us", "passes_us", "simulate_us")


def grid_configs():
    """(name, config JSON) for every row, the two big rows last."""
    for model in MODELS:
        for scheme, chunks in SCHEMES:
            for pp in PIPELINES:
                for m in (pp, 2 * pp, 4 * pp):
                    parallel = {"scheme": scheme, "pp": pp, "dp": 1, "tp": 1, "micro_batch_size": 1,
                                "global_batch_size": m}
                    if chunks:
                        parallel["chunks"] = chunks
                    yield f"{model}-{scheme}-{pp}x{m}", {
                        "format": "mario-config", "version": 1, "name": f"{model} {scheme} {pp}x{m}",
                        "model": model, "hardware": "a100-40g", "devices": pp, "parallel": parallel}
    yield "llama3-70b-interleaved-32x128", {
        "format": "mario-config", "version": 1, "name": "llama3-70b interleaved 32x128", "model": "llama3-70b",
        "hardware": "h100", "devices": 32,
        "parallel": {"scheme": "interleaved", "chunks": 2, "pp": 32, "micro_batch_size": 1,
                     "global_batch_size": 128}}
    with open(os.path.join(HERE, "..", "..", "resources", "examples", "gpt3-13b-chimera.config.json")) as f:
        chimera = json.load(f)
    chimera["parallel"]["global_batch_size"] = 2048
    chimera["name"] = "gpt3-13b chimera 32x2048"
    chimera.pop("passes", None)
    yield BIG, chimera


def build(directory, mario):
    os.makedirs(directory, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, config in grid_configs():
            path = os.path.join(tmp, name + ".config.json")
            with open(path, "w") as f:
                json.dump(config, f)
            subprocess.run([mario, "plan", path, "--passes", "none", "-o",
                            os.path.join(directory, name + ".mario.json")], check=True, capture_output=True)
            print(f"wrote {name}.mario.json")


def plans(directory, big):
    names = sorted(n[:-len(".mario.json")] for n in os.listdir(directory) if n.endswith(".mario.json"))
    return [n for n in names if big or n != BIG]


def run(mario, plan, passes, tmp, repeat=1):
    """(written plan bytes, simulate --json less its timings, median passes_us of `repeat` runs)."""
    out = os.path.join(tmp, "out.mario.json")
    subprocess.run([mario, "plan", plan, "--passes", passes, "-o", out], check=True, capture_output=True)
    with open(out, "rb") as f:
        written = f.read()
    times = []
    for _ in range(repeat):
        sim = subprocess.run([mario, "simulate", plan, "--passes", passes, "--json"], check=True,
                             capture_output=True, text=True)
        result = json.loads(sim.stdout)
        times.append(result["passes_us"])
    passes_us = statistics.median(times)
    for key in TIMINGS:
        result.pop(key, None)
    return written, result, passes_us


def same_summary(base, new, added):
    """The two simulate --json objects equal on every key both write. A key only one of them
    writes (a field added between the two commits, or by edits in the tree) is noted in `added`
    and left out, so that what both say is still compared byte for byte."""
    for key in set(base) ^ set(new):
        added.add(key)
    common = set(base) & set(new)
    return json.dumps({k: base[k] for k in common}, sort_keys=True) == json.dumps(
        {k: new[k] for k in common}, sort_keys=True)


def table(rows, labels):
    print("| plan | passes | " + " | ".join(f"{label} ms" for label in labels) + " |")
    print("|---|---|" + "---|" * len(labels))
    for name, passes, times in rows:
        print(f"| {name} | {passes} | " + " | ".join(f"{t / 1000:.1f}" for t in times) + " |")
    for passes in PASS_LISTS:
        grid = list(zip(*[times for name, p, times in rows if p == passes and name.startswith(tuple(MODELS))]))
        if grid:
            print(f"grid ({len(grid[0])} rows) {passes}: median " +
                  " / ".join(f"{statistics.median(c) / 1000:.1f}" for c in grid) + " ms, max " +
                  " / ".join(f"{max(c) / 1000:.1f}" for c in grid) + " ms  (" + " / ".join(labels) + ")")


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return
    big = "--big" in args
    args = [a for a in args if a != "--big"]
    repeat, only = 1, None
    if "--repeat" in args:
        at = args.index("--repeat")
        repeat = int(args[at + 1])
        del args[at:at + 2]
    if "--only" in args:
        at = args.index("--only")
        only = args[at + 1]
        del args[at:at + 2]
    command = args[0]
    if command == "build" and len(args) in (2, 3):
        build(args[1], args[2] if len(args) == 3 else DEFAULT_MARIO)
        return
    if command == "time" and len(args) == 3:
        binaries, directory = [args[1]], args[2]
    elif command == "check" and len(args) == 4:
        binaries, directory = [args[1], args[2]], args[3]
    else:
        sys.exit("speed_grid.py: usage: build DIR [MARIO] | check BASE NEW DIR [--big] | time MARIO DIR [--big]"
                 " [--repeat N] [--only TEXT]")
    rows, differences, added = [], [], set()
    with tempfile.TemporaryDirectory() as tmp:
        for name in plans(directory, big or (only is not None and BIG.startswith(only))):
            if only is not None and only not in name:
                continue
            plan = os.path.join(directory, name + ".mario.json")
            for passes in PASS_LISTS:
                # A and B in turn, `repeat` times each, so that drift in the machine's speed
                # falls on both.
                results = [run(mario, plan, passes, tmp, repeat) for mario in binaries]
                rows.append((name, passes, [r[2] for r in results]))
                for other in results[1:]:
                    if other[0] != results[0][0]:
                        differences.append(f"{name} --passes {passes}: the written plans differ")
                    if not same_summary(results[0][1], other[1], added):
                        differences.append(f"{name} --passes {passes}: simulate --json differs")
    table(rows, ["base", "new"] if len(binaries) == 2 else ["mario"])
    if command == "check":
        for line in differences:
            print("DIFFERENT: " + line)
        if added:
            print("written by one binary only, not compared: " + ", ".join(sorted(added)))
        print(f"{len(rows)} runs, {len(differences)} differences")
        sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
