#!/usr/bin/env python3
"""How much of the checkpointing cost the passes hide, on the public grid of issue "hide".

For every configuration (models gpt3-1.6b and llama2-3b on a100-40g; schemes 1f1b, chimera and
interleaved with 2 chunks; PP 4 and 8; m = PP, 2*PP, 4*PP micro-batches of size 1; analytical
costs) it runs `mario simulate --json` with no passes (T_base), checkpointing alone (T_ckpt),
the paper's four passes (T_four) and the four passes plus `hide` (T_hide), and prints a
Markdown table: recovered share 1 - (T - T_base) / (T_ckpt - T_base), the gap to
max(T_base, lower_bound) (the plan's own bound; the tight bound beside it), the recompute bound
(no placement of the Rs within hide's budget runs faster: core/sim/RecomputeBound.h) and the gap
to the larger of it and max(T_base, lower_bound), the peak per device against hide's memory budget,
and the time the passes took.

`--schemes zero-bubble` runs the same grid on the split-backward schedules people train with
today (zb-h1, zbv, dualpipev, interleaved-zb with 2 chunks); a configuration a scheme refuses
(dualpipev needs at least 2*PP micro-batches) is listed as skipped, with mario's reason.
`--schemes remaining` runs every other scheme Mario generates (gpipe, bfs with 2 chunks, zb-h2,
dualpipe), so that the three sets together cover them all.

`--layer-split even|balanced` writes parallel.layer_split into every configuration (default: the
key left out, today's even split; docs/config-format.md).

usage: tests/bench/recompute_grid.py [path/to/mario] [--passes EXTRA] [--schemes paper|zero-bubble|remaining]
       [--layer-split even|balanced]   (default build/app/mario, hide, paper, no layer_split)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

MODELS = ["gpt3-1.6b", "llama2-3b"]
SCHEME_SETS = {
    "paper": [("1f1b", None), ("chimera", None), ("interleaved", 2)],
    "zero-bubble": [("zb-h1", None), ("zbv", None), ("dualpipev", None), ("interleaved-zb", 2)],
    "remaining": [("gpipe", None), ("bfs", 2), ("zb-h2", None), ("dualpipe", None)],
}
PIPELINES = [4, 8]


class Refused(Exception):
    """mario refused the configuration (exit 2, bad input): the scheme's own rules."""


def simulate(mario, config_path, passes):
    run = subprocess.run([mario, "simulate", config_path, "--passes", passes, "--json"],
                         capture_output=True, text=True)
    if run.returncode == 2:
        raise Refused(run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "refused")
    run.check_returncode()
    return json.loads(run.stdout)


def config(model, scheme, chunks, pp, m, layer_split=None):
    parallel = {"scheme": scheme, "pp": pp, "dp": 1, "tp": 1, "micro_batch_size": 1, "global_batch_size": m}
    if chunks:
        parallel["chunks"] = chunks
    if layer_split:
        parallel["layer_split"] = layer_split
    return {"format": "mario-config", "version": 1, "name": f"{model} {scheme} {pp}x{m}", "model": model,
            "hardware": "a100-40g", "devices": pp, "parallel": parallel}


def grid(schemes, tmp, layer_split=None):
    """Every configuration of the grid as (name, path of its config file in tmp), one at a time
    (the file is rewritten for the next one); the name as the tables print it. layer_split, when
    given, is written as parallel.layer_split."""
    path = os.path.join(tmp, "c.config.json")
    for model in MODELS:
        for scheme, chunks in schemes:
            for pp in PIPELINES:
                for m in (pp, 2 * pp, 4 * pp):
                    with open(path, "w") as f:
                        json.dump(config(model, scheme, chunks, pp, m, layer_split), f)
                    yield f"{model} {scheme}{'(v=2)' if chunks else ''} {pp}x{m}", path


def layer_split_of(args, script):
    """--layer-split WORD (removed from args): parallel.layer_split for every configuration, or
    None to leave the key out."""
    if "--layer-split" not in args:
        return None
    at = args.index("--layer-split")
    if at + 1 >= len(args) or args[at + 1] not in ("even", "balanced", "search"):
        sys.exit(f"{script}: --layer-split takes even, balanced or search")
    word = args[at + 1]
    del args[at:at + 2]
    return word


def schemes_and_mario(args, script):
    """The grid's scheme set (--schemes NAME, removed from args) and the mario binary (the one
    argument left, default build/app/mario): what every grid script reads the same way."""
    schemes = SCHEME_SETS["paper"]
    if "--schemes" in args:
        at = args.index("--schemes")
        if at + 1 >= len(args) or args[at + 1] not in SCHEME_SETS:
            sys.exit(f"{script}: --schemes takes one of {', '.join(SCHEME_SETS)}")
        schemes = SCHEME_SETS[args[at + 1]]
        del args[at:at + 2]
    mario = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "..", "build", "app", "mario")
    return schemes, mario


def main():
    args = [a for a in sys.argv[1:]]
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return
    extra = "hide"
    if "--passes" in args:
        at = args.index("--passes")
        if at + 1 >= len(args):
            sys.exit("recompute_grid.py: --passes takes a pass list, e.g. hide")
        extra = args[at + 1]
        del args[at:at + 2]
    layer_split = layer_split_of(args, "recompute_grid.py")
    schemes, mario = schemes_and_mario(args, "recompute_grid.py")
    rows, gaps_four, gaps_hide, rec_four, rec_hide, gaps_reach, skipped = [], [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in grid(schemes, tmp, layer_split):
            try:
                base = simulate(mario, path, "none")
            except Refused as why:
                skipped.append(f"{name}: {why}")
                continue
            ckpt = simulate(mario, path, "checkpoint")
            four = simulate(mario, path, "all")
            hide = simulate(mario, path, "all," + extra)
            tb, tc, tf, th = (r["makespan"] for r in (base, ckpt, four, hide))

            def recovered(t):
                return 1.0 if tc - tb <= 1e-9 else 1 - (t - tb) / (tc - tb)

            def gap(r):
                return r["makespan"] / max(tb, r["lower_bound"]) - 1

            budget = [f["peak_memory_bytes"] + 0 for f in four["devices"]]
            peak_ratio = max(h["peak_memory_bytes"] / b for h, b in zip(hide["devices"], budget))
            tight = hide.get("tight_lower_bound", hide["lower_bound"])
            reach = (hide.get("hide_bound") or {}).get("makespan", 0.0)
            reference = max(tb, hide["lower_bound"])
            rows.append((name, tb, tc, tf, th,
                         recovered(tf), recovered(th), gap(four), gap(hide),
                         th / max(tb, tight) - 1, reach, reach / reference - 1,
                         th / max(reference, reach) - 1, peak_ratio, four["passes_us"] / 1000,
                         hide["passes_us"] / 1000))
            gaps_reach.append(th / max(reference, reach) - 1)
            gaps_four.append(gap(four))
            gaps_hide.append(gap(hide))
            rec_four.append(recovered(tf))
            rec_hide.append(recovered(th))
    print("| configuration | T_base | T_ckpt | T_four | T_hide | recovered four | recovered hide | gap four | "
          "gap hide | gap hide (tight bound) | recompute bound | bound above max(T_base, lower_bound) | "
          "gap hide to max(both) | peak hide / peak four | passes four ms | passes all+hide ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]:.1f} | {r[2]:.1f} | {r[3]:.1f} | {r[4]:.1f} | {r[5]:.2f} | {r[6]:.2f} | "
              f"{100 * r[7]:+.1f}% | {100 * r[8]:+.1f}% | {100 * r[9]:+.1f}% | {r[10]:.1f} | {100 * r[11]:+.1f}% | "
              f"{100 * r[12]:+.1f}% | {r[13]:.3f} | {r[14]:.1f} | {r[15]:.1f} |")
    for line in skipped:
        print(f"skipped {line}")
    print()
    print("| | median | worst |")
    print("|---|---|---|")
    print(f"| recovered, four passes | {statistics.median(rec_four):.2f} | {min(rec_four):.2f} |")
    print(f"| recovered, all,{extra} | {statistics.median(rec_hide):.2f} | {min(rec_hide):.2f} |")
    print(f"| gap to max(T_base, lower_bound), four passes | {100 * statistics.median(gaps_four):+.1f}% | "
          f"{100 * max(gaps_four):+.1f}% |")
    print(f"| gap to max(T_base, lower_bound), all,{extra} | {100 * statistics.median(gaps_hide):+.1f}% | "
          f"{100 * max(gaps_hide):+.1f}% |")
    print(f"| gap to max(T_base, lower_bound, recompute bound), all,{extra} | "
          f"{100 * statistics.median(gaps_reach):+.1f}% | {100 * max(gaps_reach):+.1f}% |")


if __name__ == "__main__":
    main()
