#!/usr/bin/env python3
"""instruction_fidelity.py on a run worked by hand (ctest bench.instruction_fidelity).

Two devices, stage costs F 1 ms and B 2 ms. Iteration 1: device 0's first F alone (1 ms), its
second beside device 1's F (both 1.5 ms: 0.5 per busy neighbour), then each B alone (2 ms).
So the in-run contention line is measured / cost − 1 = 0.5 × busy neighbours + 0, the F of
stage 0 has a median of 1.25 ms, and device 1's F had one busy neighbour throughout. Iteration
0 (a warm-up with absurd times) and the summary line must be left out.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import instruction_fidelity as fidelity  # noqa: E402


def event(device, action, iteration, start_ms, end_ms):
    return json.dumps({"event": "instruction", "device": device, "instruction": action, "iteration": iteration,
                       "start_us": start_ms * 1000, "end_us": end_ms * 1000})


def main():
    plan = {"stages": [{"index": 0, "device": 0, "forward_ms": 1, "backward_ms": 2},
                       {"index": 1, "device": 1, "forward_ms": 1, "backward_ms": 2}]}
    lines = [json.dumps({"event": "hello", "devices": 2}),
             event(0, "0F0", 0, 0, 50), event(1, "1F0", 0, 50, 99),
             event(0, "0F0", 1, 0, 1), event(0, "0SEND_F0", 1, 1, 1),
             event(0, "0F1", 1, 1, 2.5), event(1, "1F0", 1, 1, 2.5),
             event(1, "1B0", 1, 2.5, 4.5), event(0, "0B0", 1, 4.5, 6.5),
             json.dumps({"step_ms": [100, 6.5], "devices": 2})]
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "run.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        events = fidelity.read_events(path, warmup=1)
    failures = []

    def check(what, got, want):
        if abs(got - want) > 1e-9:
            failures.append(f"{what}: {got} instead of {want}")

    check("compute instructions after the warm-up", len(events), 5)
    rows, (slope, intercept, points), (low, high) = fidelity.analyse(plan, events)
    check("fewest busy neighbours", low, 0.0)
    check("most busy neighbours", high, 1.0)
    check("contention per busy neighbour", slope, 0.5)
    check("alone offset", intercept, 0.0)
    check("instructions in the fit", points, 5)
    by = {(r["op"], r["stage"]): r for r in rows}
    check("median F of stage 0", by[("F", 0)]["measured_ms"], 1.25)
    check("ratio of stage 0's F", by[("F", 0)]["ratio"], 1.25)
    check("busy neighbours beside device 1's F", by[("F", 1)]["busy_neighbours"], 1.0)
    check("busy neighbours beside device 0's F", by[("F", 0)]["busy_neighbours"], 0.5)
    check("B of stage 1 against its cost", by[("B", 1)]["ratio"], 1.0)
    # A split backward's defaults: I and W are half of B when the plan does not give them.
    check("I by default", fidelity.cost_of(plan["stages"][0], "I"), 1.0)
    for failure in failures:
        print("instruction_fidelity_test: " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
