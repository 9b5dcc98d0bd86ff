#!/usr/bin/env python3
"""Simulated vs measured: GPU runs kept in tests/bench/data, planned again with today's build.

Each run of a data folder (measured.json: every iteration's step and each device's peak, from
gpu_fidelity.sh) has its config beside it, which names the profile the run was planned from. The
config is planned again with this build's `mario plan` (its passes from the run's name,
SCHEME-P-PASSES), simulated with `mario simulate --json`, and compared with the median measured
step after the warm-up and with each device's measured peak: error = (simulated − measured) /
measured, core/session/Fidelity's formula. Nothing is fitted here: the contention is the one the
profile measured (alone and beside busy partitions), so a change to the cost model or the
simulator that moves a row shows here.

--require-step and --require-peak exit 1 when a row's |error| is beyond the limit (ctest
`bench.h100_runs`; docs/gpu.md#on-an-h100-2026-11-28 says which rows miss the 5% target, and why).

  python3 tests/bench/measured_runs.py [BUILD_DIR] [--mario PATH] [--data DIR]
                                       [--require-step LIMIT] [--require-peak LIMIT]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def error(simulated, measured):
    return (simulated - measured) / measured


def simulate_again(mario, data, name, scratch):
    """The run's config planned and simulated by this build: (step ms, per-device peak bytes)."""
    plan = os.path.join(scratch, name + ".mario.json")
    passes = name.rsplit("-", 1)[1]
    subprocess.run([mario, "plan", os.path.join(data, name + ".config.json"), "--passes", passes, "-o", plan],
                   capture_output=True, text=True, check=True)
    out = subprocess.run([mario, "simulate", plan, "--json"], capture_output=True, text=True, check=True)
    sim = json.loads(out.stdout)
    return sim["makespan"], [d["peak_memory_bytes"] for d in sim["devices"]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--data", default=os.path.join(ROOT, "tests/bench/data/h100-2026-11-28"))
    parser.add_argument("--mario", help="the mario binary (default BUILD_DIR/app/mario)")
    parser.add_argument("--require-step", type=float, help="largest |step error| allowed")
    parser.add_argument("--require-peak", type=float, help="largest |peak error| allowed, any device")
    args = parser.parse_args()
    mario = args.mario or os.path.join(args.build, "app", "mario")
    with open(os.path.join(args.data, "measured.json")) as f:
        measured = json.load(f)
    warmup = measured["warmup"]
    print(f"{'run':<16} {'sim ms':>8} {'meas ms':>8} {'spread':>7} {'step err':>9}  peaks GB sim/meas (err)")
    step_errors, peak_errors, over = [], [], []
    with tempfile.TemporaryDirectory() as scratch:
        for name, run in sorted(measured["runs"].items()):
            steps = run["step_ms"][warmup:]
            step = statistics.median(steps)
            spread = (max(steps) - min(steps)) / step
            sim_step, sim_peaks = simulate_again(mario, args.data, name, scratch)
            e = error(sim_step, step)
            peaks = [(s, m, error(s, m)) for s, m in zip(sim_peaks, run["peak_allocated_bytes"]) if m > 0]
            step_errors.append(e)
            peak_errors.extend(p[2] for p in peaks)
            print(f"{name:<16} {sim_step:8.1f} {step:8.1f} {100 * spread:6.1f}% {100 * e:+8.1f}%  " +
                  " ".join(f"{s / 1e9:.2f}/{m / 1e9:.2f}({100 * pe:+.1f}%)" for s, m, pe in peaks))
            if args.require_step is not None and abs(e) > args.require_step:
                over.append(f"{name} step {100 * e:+.1f}%")
            if args.require_peak is not None:
                over.extend(f"{name} device {d} peak {100 * pe:+.1f}%" for d, (_, _, pe) in enumerate(peaks)
                            if abs(pe) > args.require_peak)
    print(f"step within 5%: {sum(abs(e) <= 0.05 for e in step_errors)} of {len(step_errors)}, "
          f"mean |error| {100 * statistics.mean(map(abs, step_errors)):.1f}%; "
          f"peaks within 5%: {sum(abs(e) <= 0.05 for e in peak_errors)} of {len(peak_errors)}")
    if over:
        print("measured_runs.py: beyond the limit: " + ", ".join(over), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
