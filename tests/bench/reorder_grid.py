#!/usr/bin/env python3
"""What the `reorder` pass adds to `hide` on the published-model grid of docs/hide-recompute.md.

For every configuration of recompute_grid.py's grid (gpt3-1.6b and llama2-3b on a100-40g;
1f1b, chimera and interleaved with 2 chunks, or another scheme set; PP 4 and 8; m = PP, 2*PP,
4*PP) it runs `mario simulate --json` with no passes (T_base), with `all,hide` and with
`all,hide,reorder`, writes the reorder plan with `mario plan` and checks it with `mario validate`,
and prints a Markdown table: each step against max(T_base, lower_bound) (the plan's own bound:
its busiest device's compute, or its longest micro-batch chain), the pipeline bound, the
highest peak of the reorder plan over the highest of hide's, and the passes' time. The order bound
(`reorder_bound`, core/passes/ReorderBound.h) is what no order, checkpointing or placement of the
Rs within the budget beats; "forced" is how far it stands above T_base (what the budget costs any
schedule at least; negative where the bound cannot rule T_base out), and the last gap is the step
above it (what a search may still find). Medians and worsts are printed for the whole grid and per scheme. Both runs keep
hide's memory budget (each device's peak after the four passes plus one activation set of its
largest stage), which `reorder` shares with `hide` (core/passes/PassRegistry.cpp).

`--layer-split even|balanced|search` writes parallel.layer_split into every configuration, as in
recompute_grid.py (with search, each run searches the split with its own passes);
tests/bench/layer_split_grid.py compares them.

usage: tests/bench/reorder_grid.py [path/to/mario] [--schemes paper|zero-bubble|remaining]
       [--layer-split even|balanced|search]
"""
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recompute_grid import Refused, grid, layer_split_of, schemes_and_mario, simulate  # noqa: E402


def plan_is_valid(mario, config_path, passes, tmp):
    out = os.path.join(tmp, "p.mario.json")
    subprocess.run([mario, "plan", config_path, "--passes", passes, "-o", out], check=True, capture_output=True)
    return subprocess.run([mario, "validate", out], capture_output=True).returncode == 0


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return
    layer_split = layer_split_of(args, "reorder_grid.py")
    schemes, mario = schemes_and_mario(args, "reorder_grid.py")
    rows, gaps_hide, gaps_reorder, skipped, invalid = [], [], [], [], []
    forced, to_bound, by_scheme = [], [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in grid(schemes, tmp, layer_split):
            try:
                base = simulate(mario, path, "none")
            except Refused as why:
                skipped.append(f"{name}: {why}")
                continue
            hide = simulate(mario, path, "all,hide")
            reorder = simulate(mario, path, "all,hide,reorder")
            if not plan_is_valid(mario, path, "all,hide,reorder", tmp):
                invalid.append(name)
            tb = base["makespan"]

            def gap(r):
                return r["makespan"] / max(tb, r["lower_bound"]) - 1

            def peak(r):
                return max(d["peak_memory_bytes"] for d in r["devices"])

            gaps_hide.append(gap(hide))
            gaps_reorder.append(gap(reorder))
            bound = (reorder.get("reorder_bound") or {}).get("makespan")
            forced.append(bound / tb - 1 if bound else float("nan"))
            to_bound.append(reorder["makespan"] / bound - 1 if bound else float("nan"))
            scheme = name.split()[1]
            by_scheme.setdefault(scheme, []).append((gap(hide), gap(reorder), forced[-1], to_bound[-1]))
            rows.append((name, tb, hide["makespan"], reorder["makespan"], gap(hide), gap(reorder),
                         reorder["makespan"] / max(tb, reorder["tight_lower_bound"]) - 1,
                         peak(reorder) / peak(hide), hide["passes_us"] / 1000,
                         reorder["passes_us"] / 1000, bound or float("nan"), forced[-1], to_bound[-1]))
    print("| configuration | T_base | T_hide | T_reorder | gap hide | gap reorder | gap reorder (pipeline bound) | "
          "order bound | forced | gap reorder to order bound | peak reorder / peak hide | passes all,hide ms | "
          "passes all,hide,reorder ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]:.1f} | {r[2]:.1f} | {r[3]:.1f} | {100 * r[4]:+.1f}% | {100 * r[5]:+.1f}% | "
              f"{100 * r[6]:+.1f}% | {r[10]:.1f} | {100 * r[11]:+.1f}% | {100 * r[12]:+.1f}% | {r[7]:.3f} | "
              f"{r[8]:.1f} | {r[9]:.1f} |")
    for line in skipped:
        print(f"skipped {line}")
    print()
    print("| | median | worst |")
    print("|---|---|---|")
    print(f"| gap to max(T_base, lower_bound), all,hide | {100 * statistics.median(gaps_hide):+.1f}% | "
          f"{100 * max(gaps_hide):+.1f}% |")
    print(f"| gap to max(T_base, lower_bound), all,hide,reorder | {100 * statistics.median(gaps_reorder):+.1f}% | "
          f"{100 * max(gaps_reorder):+.1f}% |")
    # No bound (null) for plans it does not model: DualPipe's overlapped pairs.
    bounded = [(f, g) for f, g in zip(forced, to_bound) if not math.isnan(f)]
    if bounded:
        print(f"| order bound above T_base (forced) | {100 * statistics.median(f for f, _ in bounded):+.1f}% | "
              f"{100 * max(f for f, _ in bounded):+.1f}% |")
        print(f"| gap to the order bound, all,hide,reorder | {100 * statistics.median(g for _, g in bounded):+.1f}% | "
              f"{100 * max(g for _, g in bounded):+.1f}% |")
    print("\n| scheme | gap hide median / worst | gap reorder median / worst | forced median / worst | "
          "gap to order bound median / worst |")
    print("|---|---|---|---|---|")
    for scheme, values in by_scheme.items():
        cells = []
        for k in range(4):
            column = [v[k] for v in values if not math.isnan(v[k])]
            cells.append(f"{100 * statistics.median(column):+.1f}% / {100 * max(column):+.1f}%" if column else "no bound")
        print(f"| {scheme} | " + " | ".join(cells) + " |")
    ruled_out = sum(1 for f in forced if f > 0.02)
    unbounded = len(forced) - len(bounded)
    print(f"\nthe order bound rules out a step within 2% of T_base on {ruled_out} of {len(rows)}"
          + (f"; {unbounded} without a bound (overlapped pairs)" if unbounded else ""))
    # Settled rows: the step within 2% of what no schedule of the space beats.
    settled = sum(1 for _, g in bounded if g <= 0.02)
    print(f"the step is within 2% of the order bound on {settled} of {len(bounded)}")
    faster = sum(1 for r in rows if r[3] < r[2] * (1 - 1e-6))
    print(f"\nreorder shorter than hide on {faster} of {len(rows)}; plans refused by mario validate: "
          f"{', '.join(invalid) if invalid else 'none'}")


if __name__ == "__main__":
    main()
