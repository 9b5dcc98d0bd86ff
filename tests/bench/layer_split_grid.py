#!/usr/bin/env python3
"""What parallel.layer_split = "balanced" buys on the published-model grid of docs/hide-recompute.md.

For every configuration of recompute_grid.py's grid it runs `mario simulate --json` on the even
split (the key left out) with no passes (T_base, and the plan's lower bound LB) and with PASSES
(default all,hide,reorder), then the same with "balanced", and prints a Markdown table: each
split's layers per chain position (from `mario plan`), each step above max(T_base, LB) of the
even split (the target both splits chase: the step without checkpointing on today's split),
balanced's own T_base, and medians and worsts. Rows whose balanced split equals the even one are
marked "same" (the cost model finds no split with a lighter busiest device; ties go to even).

usage: tests/bench/layer_split_grid.py [path/to/mario] [--schemes paper|zero-bubble|remaining]
       [--passes LIST]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recompute_grid import Refused, grid, schemes_and_mario, simulate  # noqa: E402


def layers_of(mario, config_path, tmp):
    """Layers per chain position of the plan `mario plan` writes (stages in index order)."""
    out = os.path.join(tmp, "p.mario.json")
    subprocess.run([mario, "plan", config_path, "-o", out], check=True, capture_output=True)
    with open(out) as f:
        plan = json.load(f)
    stages = plan["stages"]
    chain = plan["pipelines"][0] if plan.get("pipelines") else range(len(stages))
    return "-".join(str(stages[s]["layers"][1] - stages[s]["layers"][0]) for s in chain)


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return
    passes = "all,hide,reorder"
    if "--passes" in args:
        at = args.index("--passes")
        if at + 1 >= len(args):
            sys.exit("layer_split_grid.py: --passes takes a pass list, e.g. all,hide,reorder")
        passes = args[at + 1]
        del args[at:at + 2]
    schemes, mario = schemes_and_mario(args, "layer_split_grid.py")
    rows, skipped = [], []
    with tempfile.TemporaryDirectory() as tmp:
        even_runs = {}
        for name, path in grid(schemes, tmp):
            try:
                base = simulate(mario, path, "none")
            except Refused as why:
                skipped.append(f"{name}: {why}")
                continue
            even_runs[name] = (base, simulate(mario, path, passes), layers_of(mario, path, tmp))
        for name, path in grid(schemes, tmp, "balanced"):
            if name not in even_runs:
                continue
            base, even, even_layers = even_runs[name]
            balanced_base = simulate(mario, path, "none")
            balanced = simulate(mario, path, passes)
            reference = max(base["makespan"], base["lower_bound"])
            rows.append((name, even_layers, layers_of(mario, path, tmp), base["makespan"], reference,
                         even["makespan"] / reference - 1, balanced["makespan"] / reference - 1,
                         balanced_base["makespan"]))
    print(f"| configuration | even split | balanced split | T_base | max(T_base, LB) | even {passes} | "
          f"balanced {passes} | balanced T_base |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        split = "same" if r[2] == r[1] else r[2]
        print(f"| {r[0]} | {r[1]} | {split} | {r[3]:.1f} | {r[4]:.1f} | {100 * r[5]:+.1f}% | {100 * r[6]:+.1f}% | "
              f"{r[7]:.1f} |")
    for line in skipped:
        print(f"skipped {line}")
    even_gaps = [r[5] for r in rows]
    balanced_gaps = [r[6] for r in rows]
    print()
    print("| step above max(T_base, LB) of the even split | median | worst |")
    print("|---|---|---|")
    print(f"| even, {passes} | {100 * statistics.median(even_gaps):+.1f}% | {100 * max(even_gaps):+.1f}% |")
    print(f"| balanced, {passes} | {100 * statistics.median(balanced_gaps):+.1f}% | "
          f"{100 * max(balanced_gaps):+.1f}% |")
    moved = sum(1 for r in rows if r[2] != r[1])
    faster = sum(1 for r in rows if r[6] < r[5] - 1e-9)
    slower = sum(1 for r in rows if r[6] > r[5] + 1e-9)
    print(f"\nbalanced differs from even on {moved} of {len(rows)}; faster on {faster}, slower on {slower}")


if __name__ == "__main__":
    main()
