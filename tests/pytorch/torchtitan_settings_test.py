"""torchtitan judges the settings `mario export --csv` writes beside a compute-only CSV.

For every scheme torchtitan can run, at a few sizes and layer counts (even splits, uneven
ones, more than two stages a rank), with and without Mario's passes: the `.torchtitan.args`
file must parse with torchtitan's own config parser (tyro with torchtitan's registry), and
torchtitan's own pipeline functions, given those settings, must
  - build exactly the plan's number of stages (_get_pipeline_metadata),
  - deal the layers as the plan does, or as the file's note says (_generate_llm_fqn_per_model_part),
  - put on every rank exactly the stages the plan puts there (_get_pp_rank_to_stage_indices_mapping),
  - and build the schedule that loads the CSV (_build_pipeline_schedule: _PipelineScheduleRuntime
    with local_batch_size / microbatch_size micro-batches, then _load_csv), on stand-in stages.
"""
import dataclasses
import json
import re
import types
from collections import Counter

from pytorch_peer import Checks, Mario, Scratch, exit_with, parse_args, stages_on_rank

import torchtitan  # noqa: E402
import tyro  # noqa: E402
from torchtitan.config import ParallelismConfig, TrainingConfig  # noqa: E402
from torchtitan.config.manager import custom_registry  # noqa: E402
from torchtitan.distributed import pipeline_parallel as titan  # noqa: E402

# (scheme, pp, chunks, micro-batches, layers)
CASES = [
    ("gpipe", 4, 1, 8, 16), ("1f1b", 4, 1, 8, 16), ("1f1b", 4, 1, 8, 14), ("1f1b", 3, 1, 6, 13),
    ("zb-h1", 4, 1, 8, 16), ("zb-h2", 2, 1, 4, 6),
    ("interleaved", 4, 2, 8, 16), ("interleaved", 2, 4, 8, 16), ("interleaved", 2, 3, 6, 13),
    ("bfs", 2, 2, 4, 8), ("interleaved-zb", 4, 2, 8, 16), ("interleaved-zb", 2, 3, 6, 12),
    ("zbv", 4, 1, 8, 16), ("zbv", 2, 1, 4, 10), ("dualpipev", 4, 1, 8, 16),
]
PASSES = ["none", "all"]


@dataclasses.dataclass
class Settings:
    """The two torchtitan config sections the file sets, parsed as torchtitan parses them."""
    parallelism: ParallelismConfig = dataclasses.field(default_factory=ParallelismConfig)
    training: TrainingConfig = dataclasses.field(default_factory=TrainingConfig)


def config(path, scheme, pp, chunks, microbatches, layers):
    model = {"format": "mario-model", "version": 1, "name": f"l{layers}", "layers": layers,
             "hidden": 256, "heads": 4, "kv_heads": 4, "ffn_hidden": 1024, "vocab": 1024,
             "sequence_length": 128, "gated_mlp": False, "tied_embeddings": False}
    text = {"format": "mario-config", "version": 1, "name": path, "model": model,
            "hardware": "a100-40g", "devices": pp,
            "parallel": {"scheme": scheme, "pp": pp, "dp": 1, "tp": 1, "chunks": chunks,
                         "micro_batch_size": 2, "global_batch_size": 2 * microbatches}}
    with open(path, "w") as handle:
        json.dump(text, handle)
    return path


def read_args(path):
    """The overrides (lines not starting with '#') and the split the note names, if any."""
    overrides, note_split = [], None
    with open(path) as handle:
        for line in handle:
            line = line.strip()
            if line.startswith("# note: torchtitan deals the layers"):
                note_split = [int(n) for n in re.search(r"layers ([\d,]+) over", line).group(1).split(",")]
            elif line and not line.startswith("#"):
                overrides.append(line)
    return overrides, note_split


def plan_split(plan):
    stages = sorted(plan["stages"], key=lambda s: s["index"])
    return [s["layers"][1] - s["layers"][0] for s in stages]


def run_case(mario, checks, tally, scratch, scheme, pp, chunks, microbatches, layers, passes):
    case = f"{scheme} pp={pp} v={chunks} m={microbatches} layers={layers} passes={passes}"
    name = f"{scheme}-{pp}-{chunks}-{microbatches}-{layers}-{passes}"
    cfg = config(scratch.file(name + ".config.json"), scheme, pp, chunks, microbatches, layers)
    plan_path, csv = scratch.file(name + ".mario.json"), scratch.file(name + ".csv")
    code, _, err = mario.run("plan", cfg, "--passes", passes, "-o", plan_path)
    if not checks.check(code == 0, case, "mario plan", err):
        return
    extra = ["--drop-recompute"] if passes != "none" else []
    code, out, err = mario.run("export", cfg, "--passes", passes, "--csv", csv, *extra)
    if not checks.check(code == 0 and "torchtitan:" in out, case, "export writes the settings", out + err):
        return
    tally["files"] += 1
    overrides, note_split = read_args(csv.replace(".csv", ".torchtitan.args"))
    try:
        settings = tyro.cli(Settings, args=overrides, default=Settings(), registry=custom_registry)
    except SystemExit:
        checks.check(False, case, "torchtitan's parser takes every override", " ".join(overrides))
        return
    par, training = settings.parallelism, settings.training
    plan = mario.plan_json(plan_path)
    stages = len(plan["stages"])
    dims = types.SimpleNamespace(pp=par.pipeline_parallel_degree)
    model = types.SimpleNamespace(layers=[None] * layers)
    virtual, num_layers, first, last = titan._get_pipeline_metadata(dims, par, model)
    checks.check(virtual == stages, case, "torchtitan builds the plan's stages", f"{virtual} != {stages}")
    parts = titan._generate_llm_fqn_per_model_part(virtual, num_layers, first, last)
    titan_split = [sum(1 for m in part if m.startswith("layers.")) for part in parts]
    expected = note_split if note_split is not None else plan_split(plan)
    checks.check(titan_split == expected, case, "torchtitan deals the layers as the plan (or the note) says",
                 f"torchtitan {titan_split}, expected {expected}")
    tally["split_as_plan" if note_split is None else "split_noted"] += 1
    placement = {s["index"]: s["device"] for s in plan["stages"]}
    for rank in range(pp):
        ours = sorted(s for s, r in placement.items() if r == rank)
        theirs = titan._get_pp_rank_to_stage_indices_mapping(rank, pp, par.pipeline_parallel_schedule, stages)
        checks.check(sorted(theirs) == ours, case, f"rank {rank} holds the plan's stages", f"{theirs} vs {ours}")
        # The schedule torchtitan builds for this rank, loading the CSV the file names.
        try:
            schedule = titan._build_pipeline_schedule(
                parallelism=par, local_batch_size=training.local_batch_size,
                stages=stages_on_rank(placement, rank, pp), loss_fn=lambda *a, **k: (None, None))
        except Exception as error:  # any refusal of torchtitan's or PyTorch's is the finding
            checks.check(False, case, f"torchtitan builds and loads the schedule on rank {rank}",
                         f"{type(error).__name__}: {error}")
            continue
        checks.check(schedule._n_microbatches == microbatches, case, "torchtitan runs the plan's micro-batches",
                     f"{schedule._n_microbatches} != {microbatches}")
        tally["loaded"] += 1
    tally[par.pipeline_parallel_schedule] += 1


def main():
    args = parse_args(__doc__)
    mario = Mario(args.mario)
    checks = Checks("torchtitan_settings", args.verbose)
    tally = Counter()
    with Scratch(args.keep) as scratch:
        for case in CASES:
            for passes in PASSES:
                run_case(mario, checks, tally, scratch, *case, passes)
    classes = ", ".join(f"{name} {tally[name]}" for name in sorted(tally)
                        if name[0].isupper() or name[0].isdigit())
    summary = (f"torchtitan {torchtitan.__version__ if hasattr(torchtitan, '__version__') else '0.3'}: "
               f"{tally['files']} settings files; {tally['loaded']} rank schedules built and loaded; "
               f"split as the plan {tally['split_as_plan']}, as noted {tally['split_noted']}; classes: {classes}")
    exit_with(checks.finish(summary))


if __name__ == "__main__":
    main()
