"""PyTorch writes, Mario reads: every schedule class of torch.distributed.pipelining at a few
sizes, dumped as PyTorch dumps it, must import into Mario (`mario import`), validate and
simulate, with the placement PyTorch chose and the same per-rank order of computations.

Mario writes, PyTorch writes the same: for the V classes (ZBVZeroBubble and DualPipeV, whose
orders Mario generates from the same published algorithms) at 2 to 8 ranks and every
micro-batch count from 2P to 2P + 5, odd ones included (PyTorch builds DualPipeV with any count
from 2P), `mario plan` of the scheme must give every rank PyTorch's computations in PyTorch's
order, overlapped pairs included.

Where PyTorch's own validator refuses a class's order (Schedule1F1B's order for the timeline
view starts the last rank at micro-batch 1), Mario must refuse it too (exit 2), and the test
notices the day PyTorch fixes it.
"""
import csv
import json

from pytorch_peer import (Checks, Mario, Scratch, StandInStage, exit_with, parse_args,
                          parse_rows, plan_compute_order, plan_placement, read_csv_rows,
                          schedules, stages_on_rank, style_placement, unit_cost_config)

S = schedules
# (class, stages per rank, PyTorch's placement style, rule for the micro-batch counts it takes)
CLASSES = [
    (S.ScheduleGPipe, 1, "loop"),
    (S.Schedule1F1B, 1, "loop"),
    # The runtime's interleaved 1F1B with one stage per rank is plain 1F1B, lowered by the
    # runtime: the 1F1B that PyTorch actually runs when Schedule1F1B's own order is malformed.
    (S.ScheduleInterleaved1F1B, 1, "loop"),
    (S.ScheduleInterleaved1F1B, 2, "loop"),
    (S.ScheduleLoopedBFS, 2, "loop"),
    (S.ScheduleInterleavedZeroBubble, 2, "loop"),
    (S.ScheduleZBVZeroBubble, 2, "v"),
    (S.ScheduleDualPipeV, 2, "v"),
    # Three stages per rank, on 2 ranks only: the looped classes beyond the common case.
    (S.ScheduleInterleaved1F1B, 3, "loop"),
    (S.ScheduleLoopedBFS, 3, "loop"),
    (S.ScheduleInterleavedZeroBubble, 3, "loop"),
]


# PyTorch's V classes and the Mario scheme generated from the same algorithm; the ranks and
# micro-batch counts compared (every count from 2P to 2P + 5).
GENERATED_ALIKE = [(S.ScheduleZBVZeroBubble, "zbv"), (S.ScheduleDualPipeV, "dualpipev")]
GENERATED_RANKS = [2, 3, 4, 5, 8]


def microbatch_counts(cls, ranks):
    """P, 2P and one odd count, where the class takes them (the constructors say why not):
    DualPipeV needs at least 2P; the interleaved classes need M % max(1, M // P) == 0, which
    P + 1 meets; 1F1B needs M >= P."""
    if cls is S.ScheduleDualPipeV:
        return [2 * ranks, 2 * ranks + 1]
    return [ranks, 2 * ranks, ranks + 1]


def build(cls, ranks, per_rank, style, microbatches):
    """The schedule object on the stand-in stages of rank 0, and PyTorch's placement rule."""
    num_stages = ranks * per_rank
    placement = style_placement(ranks, num_stages, style)
    if issubclass(cls, S.PipelineScheduleSingle):
        return cls(StandInStage(0, num_stages, ranks, 0), microbatches), placement
    return cls(stages_on_rank(placement, 0, ranks), microbatches), placement


def dump(schedule, scratch, name):
    """(path, format label) of each CSV PyTorch writes for this schedule.

    The runtime classes write both formats with their own _dump_csv. The single-stage
    classes (GPipe, 1F1B) have no writer of their own, but their order for the timeline view
    (pipeline_order, with REDUCE_GRAD and WAIT_REDUCE_GRAD) is what PipelineScheduleMulti's
    _dump_csv writes, so that writer writes it; and its compute cells alone are the
    compute_only file the runtime's _load_csv takes.
    """
    files = []
    if isinstance(schedule, S._PipelineScheduleRuntime):
        for fmt in ("compute_only", "compute_comms"):
            path = scratch.file(f"{name}.{fmt}.csv")
            schedule._dump_csv(path, format=fmt)
            files.append((path, fmt))
    else:
        path = scratch.file(f"{name}.ir.csv")
        S.PipelineScheduleMulti._dump_csv(schedule, path)
        files.append((path, "ir"))
        path = scratch.file(f"{name}.compute_only.csv")
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            for rank in sorted(schedule.pipeline_order):
                writer.writerow([a for a in schedule.pipeline_order[rank]
                                 if a is not None and a.is_compute_op])
        files.insert(0, (path, "compute_only"))
    return files


def simulate_makespan(mario, plan_path):
    rc, out, err = mario.run("simulate", plan_path, "--json")
    return rc, (json.loads(out)["makespan"] if rc == 0 else None), err


def main():
    args = parse_args(__doc__)
    mario = Mario(args.mario)
    checks = Checks("pytorch_generates", args.verbose)
    counts = {"cases": 0, "csvs": 0, "imported": 0, "refused_as_pytorch_does": 0,
              "generated": 0, "generated_alike": 0, "generated_odd": 0}
    with Scratch(args.keep) as scratch:
        for cls, per_rank, style in CLASSES:
            for ranks in ((2,) if per_rank == 3 else (2, 4)):
                for microbatches in microbatch_counts(cls, ranks):
                    case = f"{cls.__name__} P={ranks} stages/rank={per_rank} M={microbatches}"
                    name = f"{cls.__name__}-p{ranks}-s{per_rank}-m{microbatches}"
                    counts["cases"] += 1
                    try:
                        schedule, placement = build(cls, ranks, per_rank, style, microbatches)
                    except Exception as error:  # a size the class should take
                        checks.check(False, case, "PyTorch builds the schedule", repr(error))
                        continue
                    run_case(mario, checks, counts, scratch, case, name, schedule,
                             placement, ranks, per_rank * ranks, microbatches)
        for cls, scheme in GENERATED_ALIKE:
            for ranks in GENERATED_RANKS:
                for microbatches in range(2 * ranks, 2 * ranks + 6):
                    compare_generated(mario, checks, counts, scratch, cls, scheme, ranks,
                                      microbatches)
    summary = (f"{counts['cases']} PyTorch schedules, {counts['csvs']} CSVs: "
               f"{counts['imported']} imported, validated and simulated by mario; "
               f"{counts['refused_as_pytorch_does']} refused by mario as PyTorch's own "
               f"validator refuses them (Schedule1F1B's order); mario generates PyTorch's order "
               f"for {counts['generated_alike']} of {counts['generated']} V schedules "
               f"({counts['generated_odd']} with an odd micro-batch count)")
    exit_with(checks.finish(summary))


def run_case(mario, checks, counts, scratch, case, name, schedule, placement, ranks,
             num_stages, microbatches):
    files = dump(schedule, scratch, name)
    compute_rows = read_csv_rows(files[0][0])
    pytorch_order = {rank: [c for c in row if c] for rank, row in enumerate(compute_rows)}
    # PyTorch's own verdict on the order, and the placement it infers from it.
    try:
        inferred = S._validate_schedule(parse_rows(compute_rows), ranks, num_stages,
                                        microbatches)
        refusal = None
    except AssertionError as error:
        inferred, refusal = None, str(error).splitlines()[0]
    if isinstance(schedule, S._PipelineScheduleRuntime):
        checks.check(schedule.stage_index_to_group_rank == placement, case,
                     "the runtime's stage_index_to_group_rank follows the class's style",
                     f"{schedule.stage_index_to_group_rank} vs {placement}")
    makespans = {}
    for path, fmt in files:
        counts["csvs"] += 1
        plan_path = scratch.file(f"{name}.{fmt}.mario.json")
        rc, out, err = mario.run("import", path, "-o", plan_path)
        if refusal is not None:
            # Mario must not run what PyTorch calls malformed, for the same reason (a backward
            # without its forward), in one line.
            if checks.check(rc == 2 and len(err.strip().splitlines()) == 1
                            and "no forward" in err, case,
                            f"mario import refuses the {fmt} CSV PyTorch refuses ({refusal})",
                            f"exit {rc}: {err.strip()}"):
                counts["refused_as_pytorch_does"] += 1
            continue
        if not checks.check(rc == 0, case, f"mario import of PyTorch's {fmt} CSV exits 0",
                            f"exit {rc}: {err.strip()}  (file {path})"):
            continue
        rc, _, err = mario.run("validate", plan_path)
        ok = checks.check(rc == 0, case, f"mario validate ({fmt}) exits 0", f"exit {rc}: {err}")
        rc, makespans[fmt], err = simulate_makespan(mario, plan_path)
        ok &= checks.check(rc == 0, case, f"mario simulate --json ({fmt}) exits 0",
                           f"exit {rc}: {err}")
        plan = mario.plan_json(plan_path)
        ok &= checks.check(plan_placement(plan) == placement == inferred, case,
                           f"imported placement ({fmt}) = PyTorch's stage -> rank",
                           f"mario {plan_placement(plan)}, PyTorch inferred {inferred}, "
                           f"style {placement}")
        mario_order = plan_compute_order(plan)
        ok &= checks.check(all(mario_order[r] == pytorch_order[r] for r in range(ranks)), case,
                           f"imported per-rank compute order ({fmt}) = PyTorch's",
                           first_difference(mario_order, pytorch_order))
        counts["imported"] += ok
        if checks.verbose:
            print(f"{'ok' if ok else 'FAILED'} [{case}] {fmt}: makespan {makespans[fmt]}")
    # Mario drops PyTorch's communication cells and adds its own, so both files of one
    # schedule must simulate alike.
    checks.check(len(set(makespans.values())) <= 1, case,
                 "both files simulate to the same makespan", str(makespans))


def compare_generated(mario, checks, counts, scratch, cls, scheme, ranks, microbatches):
    """`mario plan` of `scheme` on `ranks` x `microbatches` against PyTorch's own order."""
    case = f"{cls.__name__} P={ranks} M={microbatches}: mario plan --scheme {scheme}"
    counts["generated"] += 1
    schedule, _ = build(cls, ranks, 2, "v", microbatches)
    # PyTorch's order as its compute_only writer spells it (pairs as (F;B)OVERLAP_F_B).
    path = scratch.file(f"gen-{scheme}-p{ranks}-m{microbatches}.csv")
    schedule._dump_csv(path, format="compute_only")
    theirs = {rank: [c for c in row if c] for rank, row in enumerate(read_csv_rows(path))}
    config = unit_cost_config(scratch.file(f"gen-{scheme}-p{ranks}-m{microbatches}.config.json"),
                              scheme, ranks, microbatches)
    plan_path = scratch.file(f"gen-{scheme}-p{ranks}-m{microbatches}.mario.json")
    rc, _, err = mario.run("plan", config, "--passes", "none", "-o", plan_path)
    if not checks.check(rc == 0, case, "mario builds the count PyTorch builds", f"exit {rc}: {err.strip()}"):
        return
    mine = plan_compute_order(mario.plan_json(plan_path))
    if checks.check(all(mine.get(r) == theirs[r] for r in theirs), case,
                    "mario's generated order = PyTorch's, rank by rank", first_difference(mine, theirs)):
        counts["generated_alike"] += 1
        counts["generated_odd"] += microbatches % 2


def first_difference(mine, theirs):
    for rank in sorted(theirs):
        a, b = mine.get(rank, []), theirs[rank]
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"rank {rank}, position {i}: mario {x}, PyTorch {y}"
        if len(a) != len(b):
            return f"rank {rank}: mario has {len(a)} computations, PyTorch {len(b)}"
    return ""


if __name__ == "__main__":
    main()
