"""Mario writes, PyTorch reads: every CSV `mario export --csv` writes, for every scheme PyTorch
can run, both formats, with and without Mario's passes, at a few sizes, must load with the real
_PipelineScheduleRuntime._load_csv (whose validation and, for compute_only, lowering must not
raise) on the stand-in stages of each rank, and place stages as the plan does.

Then the compute+comms lowering: Mario's compute_comms must be exactly PyTorch's own lowering
passes without FSDP, PyTorch 2.15's waits included (comms_lowering.lower_without_fsdp). Against PyTorch's full lowering of
the same compute_only file, with UNSHARD/RESHARD removed, it is equal, or (only where a rank
holds several stages) differs in where RECVs sit and nowhere else; both lowerings must pass a
blocking send/recv rendezvous and PyTorch's own dry run. docs/pytorch.md says why.
Chimera and DualPipe (two stage chains) must be refused with exit 2.
"""
import os
import re
from collections import Counter

import comms_lowering as low
from pytorch_peer import (Checks, Mario, Scratch, exit_with, parse_args, parse_rows,
                          plan_compute_order, plan_placement, read_csv_rows, schedules,
                          stages_on_rank, unit_cost_config)

S = schedules
# (scheme, chunks): the exportable schemes, the looped interleaved ones also with 3 stages a rank.
SCHEMES = [("gpipe", 1), ("1f1b", 1), ("interleaved", 2), ("bfs", 2), ("zb-h1", 1),
           ("zb-h2", 1), ("interleaved-zb", 2), ("zbv", 1), ("dualpipev", 1),
           ("interleaved", 3), ("bfs", 3), ("interleaved-zb", 3)]
# (pp, micro-batches): P and 2P, odd counts where the scheme takes one (the config reader
# refuses them for the interleaved schemes, whose group of P must divide the count), and 8
# ranks, where PyTorch 2.15's own lowering places RECVs apart from Mario's for the looped
# multi-stage schemes (docs/pytorch.md#the-lowering).
SIZES = [(2, 4), (4, 8), (3, 6), (3, 5), (4, 9), (8, 16)]
RECOMPUTE = re.compile(r"^\d+R\d+$")  # a plan's recomputation cell, e.g. 3R1
ODD_REFUSED = {"interleaved", "interleaved-zb"}
# Pass selections: none (exported from the plan), and three with checkpointing, exported from
# the config with --drop-recompute (the documented way: prepose runs forwards early only
# because they are checkpointed, so the export leaves it out). bound-w moves zero-bubble Ws,
# which changes the exported order; the last runs under a 3 KB memory limit (3 activations).
PASSES = [("none", None), ("all", None), ("all,bound-w", None),
          ("all,relax,bound-w,hide", 3e-6)]




def main():
    args = parse_args(__doc__)
    mario = Mario(args.mario)
    checks = Checks("exports_load_in_pytorch", args.verbose)
    tally = Counter()
    tally["recv_only_where"] = set()
    with Scratch(args.keep) as scratch:
        for scheme, chunks in SCHEMES:
            for pp, microbatches in SIZES:
                if microbatches % 2 and scheme in ODD_REFUSED:
                    continue
                if scheme == "dualpipev" and microbatches < 2 * pp:
                    continue  # Mario and PyTorch both need 2P micro-batches
                if chunks == 3 and pp == 3:
                    continue  # 3 stages a rank at 2, 4 and 8 ranks is enough
                for passes, memory_limit in PASSES:
                    case = f"{scheme} chunks={chunks} pp={pp} m={microbatches} passes={passes}"
                    name = f"{scheme}-c{chunks}-p{pp}-m{microbatches}-{passes.replace(',', '+')}"
                    run_case(mario, checks, tally, scratch, case, name, scheme, chunks, pp,
                             microbatches, passes, memory_limit)
        check_two_chain_refusals(mario, checks, tally, scratch)
    summary = (
        f"{tally['csvs']} CSVs from {tally['plans']} plans loaded by PyTorch without error "
        f"{tally['loaded']} times (once per file and rank); {tally['lowerings']} compute_comms "
        f"= PyTorch's passes without FSDP, waits included; against PyTorch's full lowering "
        f"{tally['equal']} equal once UNSHARD/"
        f"RESHARD are removed, {tally['recv_only']} differ only in RECV placement "
        f"({', '.join(sorted(tally['recv_only_where']))}); "
        f"PyTorch's dry run refuses {tally['dry_run_refuses_as_written']} lowerings as written "
        f"(an unknown cell) and runs every one without its rank-local cells; "
        f"{tally['refused']} two-chain exports refused")
    exit_with(checks.finish(summary))


def export(mario, checks, case, source, out, fmt, extra):
    rc, _, err = mario.run("export", source, "--csv", out, "--format", fmt, *extra)
    return checks.check(rc == 0, case, f"mario export --format {fmt} exits 0",
                        f"exit {rc}: {err.strip()}")


def run_case(mario, checks, tally, scratch, case, name, scheme, chunks, pp, microbatches,
             passes, memory_limit):
    config = unit_cost_config(scratch.file(f"{name}.config.json"), scheme, pp, microbatches,
                              chunks, memory_limit)
    plan_path = scratch.file(f"{name}.mario.json")
    rc, _, err = mario.run("plan", config, "--passes", passes, "-o", plan_path)
    if not checks.check(rc == 0, case, "mario plan exits 0", f"exit {rc}: {err.strip()}"):
        return
    tally["plans"] += 1
    plan = mario.plan_json(plan_path)
    placement = plan_placement(plan)
    ranks = len(plan["devices"])
    recomputes = sum(bool(RECOMPUTE.match(cell))
                     for device in plan["devices"] for cell in device["program"])
    if recomputes:
        # PyTorch has no recompute action: without --drop-recompute the export refuses.
        rc, _, err = mario.run("export", plan_path, "--csv", scratch.file(f"{name}.r.csv"))
        checks.check(rc == 2 and len(err.strip().splitlines()) == 1, case,
                     "export of a plan with recomputation, without --drop-recompute, exits 2",
                     f"exit {rc}: {err.strip()}")
    if passes == "none":
        source, extra = plan_path, []
    else:
        source, extra = config, ["--passes", passes, "--drop-recompute"]
    files = {fmt: scratch.file(f"{name}.{fmt}.csv") for fmt in ("compute_only", "compute_comms")}
    if not all(export(mario, checks, case, source, files[fmt], fmt, extra) for fmt in files):
        return
    tally["csvs"] += 2
    rows = {fmt: read_csv_rows(path) for fmt, path in files.items()}
    order = parse_rows(rows["compute_only"])

    # What the file orders is what the plan orders. (With passes the file comes from the
    # config, where --drop-recompute also leaves prepose out, so the saved plan may differ.)
    if passes == "none":
        plan_order = plan_compute_order(plan)
        checks.check(all(plan_order[r] == [c for c in rows["compute_only"][r] if c]
                         for r in range(ranks)), case,
                     "compute_only CSV = the plan's per-rank computations")

    # PyTorch loads both files on each rank's own stages. Its checks do not depend on the
    # rank, so a refusal is reported once per file, with the ranks it happened on.
    lowered = None
    for fmt, path in files.items():
        refused = {}
        for rank in range(ranks):
            runtime = S._PipelineScheduleRuntime(stages_on_rank(placement, rank, ranks),
                                                 microbatches)
            try:
                runtime._load_csv(path, format=fmt)
            except Exception as error:
                refused[rank] = f"{type(error).__name__}: {str(error).splitlines()[0]}"
                continue
            tally["loaded"] += 1
            checks.check(runtime.stage_index_to_group_rank == placement, case,
                         f"PyTorch's stage -> rank from the {fmt} file = the plan's",
                         f"{runtime.stage_index_to_group_rank} vs {placement}")
            if fmt == "compute_only" and lowered is None:
                lowered = runtime.pipeline_order_with_comms
        checks.check(not refused, case, f"PyTorch's _load_csv(format={fmt!r}) takes the file",
                     f"refused on ranks {sorted(refused)}: {next(iter(refused.values()), '')}"
                     f"  (mario export {source} --csv OUT --format {fmt} {' '.join(extra)})")
    if lowered is not None:
        compare_lowering(checks, tally, case, order, parse_rows(rows["compute_comms"]),
                         lowered, placement, microbatches, f"{scheme} v={chunks} pp={pp}")


def compare_lowering(checks, tally, case, order, mine, theirs, placement, microbatches, where):
    num_stages = len(placement)
    # Mario's compute_comms must be PyTorch 2.15's passes without FSDP, cell for cell: its
    # waits included, WAIT_REDUCE_GRAD taking its own round-robin turn as in PyTorch.
    reference = low.lower_without_fsdp(order, placement, num_stages, microbatches,
                                       wait_reduce_grad_takes_turn=True)
    if checks.check(low.as_text(mine) == low.as_text(reference), case,
                    "compute_comms = PyTorch's lowering passes without FSDP, waits included",
                    low.first_difference(low.as_text(mine), low.as_text(reference))):
        tally["lowerings"] += 1
    # Against what PyTorch itself runs for the compute_only file.
    theirs_cmp = low.without(theirs, low.FSDP)
    multi_stage = len(set(placement.values())) < num_stages
    if low.as_text(mine) == low.as_text(theirs_cmp):
        tally["equal"] += 1
    elif checks.check(multi_stage, case,
                      "one stage a rank: compute_comms = PyTorch's lowering less UNSHARD/RESHARD",
                      low.first_difference(low.as_text(mine), low.as_text(theirs_cmp))):
        problem = low.recv_only_difference(mine, theirs_cmp, placement)
        if checks.check(problem is None, case,
                        "compute_comms differs from PyTorch's lowering only in RECV placement",
                        problem or ""):
            tally["recv_only"] += 1
            tally["recv_only_where"].add(where)
            if checks.verbose:
                print(f"RECV placement differs [{case}]: "
                      f"{low.first_difference(low.as_text(mine), low.as_text(theirs_cmp))}")
    # Both must run: blocking rendezvous in posting order, and PyTorch's own dry run without
    # the rank-local cells it does not know. As written, PyTorch's dry run refuses both files
    # on such a cell (docs/pytorch.md says so): the test notices the day it takes them.
    for who, rows in (("mario", mine), ("PyTorch", theirs)):
        problem = low.rendezvous_problem(rows, placement)
        checks.check(problem is None, case, f"{who}'s compute_comms passes the rendezvous",
                     problem or "")
        problem = low.pytorch_dry_run_problem(rows, placement, num_stages)
        checks.check(problem is None, case,
                     f"{who}'s compute_comms passes PyTorch's _simulate_comms_compute "
                     f"(without REDUCE_GRAD, its wait and UNSHARD/RESHARD; pairs as two halves)",
                     problem or "")
        refusal = low.pytorch_dry_run_as_written(rows, placement, num_stages)
        if checks.check(refusal is not None and ("Unsupported action type" in refusal
                                                 or refusal == "KeyError: -1"), case,
                        f"{who}'s compute_comms as written: PyTorch's dry run refuses a cell it does "
                        f"not know (as docs/pytorch.md says)", refusal or "it ran"):
            tally["dry_run_refuses_as_written"] += 1


def check_two_chain_refusals(mario, checks, tally, scratch):
    """Chimera and DualPipe run two stage chains; PyTorch's pipelining runs one."""
    for scheme in ("chimera", "dualpipe"):
        config = unit_cost_config(scratch.file(f"{scheme}.config.json"), scheme, 4, 8)
        for fmt in ("compute_only", "compute_comms"):
            out = scratch.file(f"{scheme}.{fmt}.csv")
            rc, _, err = mario.run("export", config, "--passes", "none", "--csv", out,
                                   "--format", fmt)
            case = f"{scheme} {fmt}"
            if checks.check(rc == 2 and "stage chains" in err, case,
                            "export refused with exit 2 (two stage chains)",
                            f"exit {rc}: {err.strip()}"):
                tally["refused"] += 1
            checks.check(not os.path.exists(out), case, "nothing written on refusal")


if __name__ == "__main__":
    main()
