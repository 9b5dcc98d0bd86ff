#!/usr/bin/env python3
"""Simulated vs measured step time of the H200 fidelity runs, re-timed with contention
(core/sim/SharedHardware.h) for a range of per-neighbour contentions κ.

The runs' plans (tests/bench/data/h200-2026-11-26) were costed from profiles measured on one SM
partition with every other partition busy: times with all P − 1 neighbours computing. Under the
contention model those are the alone times stretched by 1 + (P − 1)·κ, so each plan is re-costed
to alone times t / (1 + (P − 1)·κ) with contention κ, simulated with `mario simulate --json`, and
compared with the median measured step after the warm-up. κ = 0 is the simulation as it ran.

κ is fitted here, one number for every row: the next GPU lease measures it instead
(`mario-executor profile --partition-sms K` now times every stage alone and beside busy
neighbours). An H100 GEMM took 2.51 ms alone on its partition and 3.14 ms beside one busy
neighbour, κ = 0.25 (docs/gpu.md#partitions).

  python3 tests/bench/contention_refit.py [BUILD_DIR] [--data DIR] [--kappa 0,0.1,0.2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMES = ["forward_ms", "backward_ms", "recompute_ms", "backward_input_ms", "backward_weight_ms",
         "optimizer_ms", "reduce_grad_ms"]


def recosted(plan, kappa):
    """The plan with its busy-neighbour times turned into alone times and contention κ."""
    neighbours = len(plan["devices"]) - 1
    for stage in plan["stages"]:
        for key in TIMES:
            if key in stage:
                stage[key] /= 1 + neighbours * kappa
        if kappa > 0:
            stage["contention"] = kappa
    return plan


def simulate(mario, plan, scratch):
    path = os.path.join(scratch, "plan.mario.json")
    with open(path, "w") as f:
        json.dump(plan, f)
    out = subprocess.run([mario, "simulate", path, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["makespan"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--data", default=os.path.join(ROOT, "tests/bench/data/h200-2026-11-26"))
    parser.add_argument("--kappa", default="0,0.05,0.1,0.15,0.2,0.25,0.3")
    args = parser.parse_args()
    mario = os.path.join(args.build, "app", "mario")
    kappas = [float(k) for k in args.kappa.split(",")]
    with open(os.path.join(args.data, "measured.json")) as f:
        measured = json.load(f)
    warmup = measured["warmup"]
    errors = {k: [] for k in kappas}
    print(f"{'run':<16} {'measured':>9}" + "".join(f"  κ={k:<5g}" for k in kappas))
    with tempfile.TemporaryDirectory() as scratch:
        for name, run in sorted(measured["runs"].items()):
            step = statistics.median(run["step_ms"][warmup:])
            row = f"{name:<16} {step:8.1f} "
            for k in kappas:
                with open(os.path.join(args.data, name + ".mario.json")) as f:
                    plan = json.load(f)
                error = (simulate(mario, recosted(plan, k), scratch) - step) / step
                errors[k].append(error)
                row += f" {100 * error:+7.1f}%"
            print(row)
    print(f"{'within 5%':<26}" + "".join(f" {sum(abs(e) <= 0.05 for e in errors[k]):>5}/{len(errors[k]):<2}"
                                         for k in kappas))
    print(f"{'mean |error|':<26}" + "".join(f" {100 * statistics.mean(map(abs, errors[k])):7.1f}%" for k in kappas))
    best = min(kappas, key=lambda k: statistics.mean(map(abs, errors[k])))
    print(f"smallest mean |error| at κ = {best:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
