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

--replan makes each plan again from its config and profile (kept beside it) with this build's
`mario plan`, so cost-model changes since the runs count too; without it the plans are the
ones that ran.

--require K:LIMIT exits 1 unless every run's error at κ = K is within LIMIT (ctest
`bench.h200_runs` holds the cost model to these measured runs: 0.25:0.05).

  python3 tests/bench/contention_refit.py [BUILD_DIR] [--mario PATH] [--data DIR] [--kappa 0,0.1,0.2]
                                          [--replan] [--require K:LIMIT]
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


def plan_of(mario, data, name, replan, scratch):
    """The run's plan: as it ran, or made again from its config ("NAME-P-PASSES")."""
    if not replan:
        with open(os.path.join(data, name + ".mario.json")) as f:
            return json.load(f)
    out = os.path.join(scratch, "replanned.mario.json")
    passes = name.rsplit("-", 1)[1]
    subprocess.run([mario, "plan", os.path.join(data, name + ".config.json"), "--passes", passes, "-o", out],
                   capture_output=True, text=True, check=True)
    with open(out) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--data", default=os.path.join(ROOT, "tests/bench/data/h200-2026-11-26"))
    parser.add_argument("--kappa", default="0,0.05,0.1,0.15,0.2,0.25,0.3")
    parser.add_argument("--mario", help="the mario binary (default BUILD_DIR/app/mario)")
    parser.add_argument("--replan", action="store_true")
    parser.add_argument("--require", help="K:LIMIT")
    args = parser.parse_args()
    mario = args.mario or os.path.join(args.build, "app", "mario")
    kappas = [float(k) for k in args.kappa.split(",")]
    required = None
    if args.require:
        k, limit = (float(x) for x in args.require.split(":"))
        if k not in kappas:
            kappas.append(k)
        required = (k, limit)
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
                plan = plan_of(mario, args.data, name, args.replan, scratch)
                error = (simulate(mario, recosted(plan, k), scratch) - step) / step
                errors[k].append(error)
                row += f" {100 * error:+7.1f}%"
            print(row)
    print(f"{'within 5%':<26}" + "".join(f" {sum(abs(e) <= 0.05 for e in errors[k]):>5}/{len(errors[k]):<2}"
                                         for k in kappas))
    print(f"{'mean |error|':<26}" + "".join(f" {100 * statistics.mean(map(abs, errors[k])):7.1f}%" for k in kappas))
    best = min(kappas, key=lambda k: statistics.mean(map(abs, errors[k])))
    print(f"smallest mean |error| at κ = {best:g}")
    if required:
        k, limit = required
        names = sorted(measured["runs"])
        over = [f"{n} {100 * e:+.1f}%" for n, e in zip(names, errors[k]) if abs(e) > limit]
        if over:
            print(f"contention_refit.py: at κ = {k:g}, {len(over)} runs beyond {100 * limit:g}%: " + ", ".join(over),
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
