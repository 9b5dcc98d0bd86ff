#!/usr/bin/env python3
"""What parallel.layer_split = "balanced" and "search" buy on the published-model grid of
docs/hide-recompute.md.

For every configuration of recompute_grid.py's grid it runs `mario simulate --json` on the even
split (the key left out) with no passes (T_base, and the plan's lower bound LB) and with PASSES
(default all,hide,reorder), then the same with "balanced", then with "search" (the split of
fastest step with PASSES, core/session/SearchedLayerSplit.h), and prints a Markdown table: each
split's layers per chain position (from `mario plan`, or the search's own report), each step
above max(T_base, LB) of the even split (the target every split chases: the step without
checkpointing on today's split), balanced's own T_base ("even over memory" where even's plan with PASSES exceeds the card or the
limit: the search then keeps the fastest split that fits), and medians and worsts; then the
search's time per plan (median, max) and how many splits it simulated. Rows whose split equals
the even one are marked "same" (for balanced: the cost model finds no split with a lighter
busiest device; ties go to even).

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
            rows.append([name, even_layers, layers_of(mario, path, tmp), base["makespan"], reference,
                         even["makespan"] / reference - 1, balanced["makespan"] / reference - 1,
                         balanced_base["makespan"]])
        by_name = {r[0]: r for r in rows}
        for name, path in grid(schemes, tmp, "search"):
            if name not in by_name:
                continue
            r = by_name[name]
            searched = simulate(mario, path, passes)
            found = searched["layer_split_search"]
            r += ["-".join(str(k) for k in found["counts"]), searched["makespan"] / r[4] - 1,
                  found["search_us"] / 1000, found["evaluations"], found["local_optimum"],
                  even_runs[name][1]["fits_memory"] is not False, searched["fits_memory"] is not False]
    print(f"| configuration | even split | balanced split | searched split | T_base | max(T_base, LB) | "
          f"even {passes} | balanced {passes} | search {passes} | balanced T_base | search ms (splits) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        split = "same" if r[2] == r[1] else r[2]
        found = "same" if r[8] == r[1] else r[8]
        capped = "" if r[12] else ", cap"
        over = "" if r[13] else " (even over memory)"
        print(f"| {r[0]} | {r[1]} | {split} | {found} | {r[3]:.1f} | {r[4]:.1f} | {100 * r[5]:+.1f}%{over} | "
              f"{100 * r[6]:+.1f}% | {100 * r[9]:+.1f}% | {r[7]:.1f} | {r[10]:.0f} ({r[11]}{capped}) |")
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
    search_gaps = [r[9] for r in rows]
    print(f"| search, {passes} | {100 * statistics.median(search_gaps):+.1f}% | {100 * max(search_gaps):+.1f}% |")
    within = sum(1 for g in search_gaps if g <= 0.02)
    slower = [r for r in rows if r[9] > r[5] + 1e-9]
    print(f"\nsearch within 2% of max(T_base, LB) on {within} of {len(rows)}; slower than even on {len(slower)}, "
          f"{sum(1 for r in slower if not r[13])} of them where even's plan is over memory (the search keeps "
          f"splits that fit); search's plan over memory on {sum(1 for r in rows if not r[14])}")
    times = [r[10] for r in rows]
    print(f"search time per plan: median {statistics.median(times):.0f} ms, max {max(times):.0f} ms; splits "
          f"simulated median {statistics.median(r[11] for r in rows):.0f}, max {max(r[11] for r in rows)}; "
          f"stopped at the cap on {sum(1 for r in rows if not r[12])}")
    moved = sum(1 for r in rows if r[2] != r[1])
    faster = sum(1 for r in rows if r[6] < r[5] - 1e-9)
    slower = sum(1 for r in rows if r[6] > r[5] + 1e-9)
    print(f"\nbalanced differs from even on {moved} of {len(rows)}; faster on {faster}, slower on {slower}")


if __name__ == "__main__":
    main()
