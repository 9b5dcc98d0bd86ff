#!/usr/bin/env python3
"""Every instruction of a run against its plan's cost: where a simulated step and a measured one
part, this says which instructions do.

Reads a plan (*.mario.json) and the output of `mario-executor run PLAN --events` (its instruction
lines; the summary line at the end is skipped) and prints, per instruction kind and stage, how
many ran, their median measured time, the stage's cost for that kind (its time alone,
StageCost::durationOf) and the ratio. Then the contention seen inside the run: for every compute
instruction, how many other devices computed beside it on average (from the same events), and a
least-squares line through (busy neighbours, measured / cost − 1): its slope is the run's own
contention per busy neighbour (StageCost::contention, docs/execution-model.md), its intercept
what the run costs beyond its profile even alone.

Found with it on the CPU: the first stage's I took 0.001 ms against a cost of 4.19 ms (the
executor's first stage has no input gradient to make), which put ZB-H1 with the passes 17% high
on an H200 (docs/gpu.md#on-an-h200-2026-11-26).

  python3 tests/bench/instruction_fidelity.py PLAN RUN_OUTPUT [--warmup N]
"""
import argparse
import json
import re
import statistics
import sys

ACTION = re.compile(r"^(\d+)([A-Z_]+?)(\d*)$")
COMPUTE = {"F", "B", "I", "W", "R", "OPT", "REDUCE_GRAD"}


def cost_of(stage, op):
    """StageCost::durationOf for one stage of a plan file (its defaults included)."""
    backward = stage["backward_ms"]
    return {
        "F": stage["forward_ms"],
        "R": stage.get("recompute_ms", stage["forward_ms"]),
        "B": backward,
        "I": stage.get("backward_input_ms", backward / 2),
        "W": stage.get("backward_weight_ms", backward / 2),
        "OPT": stage.get("optimizer_ms", 0.0),
        "REDUCE_GRAD": stage.get("reduce_grad_ms", 0.0),
    }[op]


def read_events(path, warmup):
    """The run's compute instructions after the warm-up iterations: (device, iteration, stage, op,
    start, end); with data parallelism the device is (replica, device), since a plan's contention
    counts the devices of its own pipeline."""
    out = []
    with open(path) as f:
        for line in f:
            if not line.startswith("{"):
                continue
            event = json.loads(line)
            if event.get("event") != "instruction" or event["iteration"] < warmup:
                continue
            match = ACTION.match(event["instruction"])
            if not match or match.group(2) not in COMPUTE:
                continue
            device = (event.get("replica", 0), event["device"])
            out.append((device, event["iteration"], int(match.group(1)), match.group(2),
                        event["start_us"] / 1000.0, event["end_us"] / 1000.0))
    return out


def busy_neighbours(events):
    """For each event, the other devices' compute time inside it over its length (same iteration)."""
    by_iteration = {}
    for e in events:  # (replica, iteration): other replicas are not the plan's devices
        by_iteration.setdefault((e[0][0], e[1]), []).append(e)
    result = []
    for e in events:
        device, iteration, _, _, start, end = e
        span = end - start
        if span <= 0:
            result.append(0.0)
            continue
        inside = sum(max(0.0, min(end, o[5]) - max(start, o[4]))
                     for o in by_iteration[(device[0], iteration)] if o[0] != device)
        result.append(inside / span)
    return result


def line_fit(xs, ys):
    """Least squares y = slope·x + intercept (slope 0 when the xs do not spread)."""
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
    return slope, my - slope * mx


def analyse(plan, events):
    """Rows per (op, stage), the in-run contention fit (slope, intercept, points) and the range of
    busy neighbours it was fitted over."""
    stages = {s["index"]: s for s in plan["stages"]}
    busy = busy_neighbours(events)
    groups = {}
    xs, ys = [], []
    for e, b in zip(events, busy):
        _, _, stage, op, start, end = e
        cost = cost_of(stages[stage], op)
        groups.setdefault((op, stage), []).append((end - start, b))
        # Instructions that cost nothing, or next to nothing, say nothing about a ratio.
        if op in {"F", "B", "I", "W", "R"} and cost > 1e-3:
            xs.append(b)
            ys.append((end - start) / cost - 1)
    rows = []
    for (op, stage), runs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        cost = cost_of(stages[stage], op)
        measured = statistics.median(t for t, _ in runs)
        rows.append({"op": op, "stage": stage, "count": len(runs), "measured_ms": measured, "cost_ms": cost,
                     "ratio": measured / cost if cost > 0 else None,
                     "busy_neighbours": statistics.mean(b for _, b in runs)})
    fit = line_fit(xs, ys) + (len(xs),) if xs else (0.0, 0.0, 0)
    spread = (min(xs), max(xs)) if xs else (0.0, 0.0)
    return rows, fit, spread


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan")
    parser.add_argument("run")
    parser.add_argument("--warmup", type=int, default=1, help="iterations left out (default 1)")
    args = parser.parse_args()
    with open(args.plan) as f:
        plan = json.load(f)
    events = read_events(args.run, args.warmup)
    if not events:
        print(f"instruction_fidelity.py: {args.run}: no instruction events after iteration {args.warmup - 1} "
              "(run mario-executor with --events)", file=sys.stderr)
        return 2
    rows, (slope, intercept, points), (low, high) = analyse(plan, events)
    print(f"{'instruction':<20} {'count':>5} {'measured ms':>12} {'cost ms':>9} {'ratio':>7} {'busy nbrs':>9}")
    for r in rows:
        ratio = f"{r['ratio']:7.3f}" if r["ratio"] is not None else "      –"
        print(f"{r['op'] + ' stage ' + str(r['stage']):<20} {r['count']:5d} {r['measured_ms']:12.3f}"
              f" {r['cost_ms']:9.3f} {ratio} {r['busy_neighbours']:9.2f}")
    # Where nearly every instruction has the same neighbours busy (a CPU 1F1B: about 1), slope and
    # intercept cannot be told apart: the range says how far to trust them.
    print(f"in-run contention: measured / cost − 1 = {slope:.3f} × busy neighbours {intercept:+.3f}"
          f" ({points} F, B, I, W, R instructions, busy neighbours {low:.2f} to {high:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
