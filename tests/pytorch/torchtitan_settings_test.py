"""torchtitan judges the settings `mario export --csv` writes beside a compute-only CSV.

For every scheme torchtitan can run, at a few sizes and layer counts (even splits, uneven
ones, more than two stages a rank), with and without Mario's passes, and for the bundled
examples exported as the README shows: the `.torchtitan.args` file must pass torchtitan's whole
command-line path as `python -m torchtitan.train --module llama3 --config llama3_8b
$(grep -v '^#' FILE)` runs it up to the start of training (train.py's imports, then its
ConfigManager().parse_args: the llama3_8b config, tyro with torchtitan's registry over the whole
trainer config, every section's __post_init__ validation, then _validate_config). The two
sections the file sets must also parse alone (tyro over ParallelismConfig and TrainingConfig),
and torchtitan's own pipeline functions, given the settings, must
  - build exactly the plan's number of stages (_get_pipeline_metadata),
  - deal the layers as the plan does, or as the file's note says (_generate_llm_fqn_per_model_part),
  - put on every rank exactly the stages the plan puts there (_get_pp_rank_to_stage_indices_mapping),
  - and build the schedule that loads the CSV (_build_pipeline_schedule: _PipelineScheduleRuntime
    with local_batch_size / microbatch_size micro-batches, then _load_csv), on stand-in stages.
"""
import contextlib
import dataclasses
import io
import json
import os
import re
import types
from collections import Counter

from pytorch_peer import Checks, Mario, Scratch, exit_with, parse_args, stages_on_rank

import torchtitan  # noqa: E402
import torchtitan.train  # noqa: E402,F401  (what `python -m torchtitan.train` imports first)
import tyro  # noqa: E402
from torchtitan.config import ConfigManager  # noqa: E402
from torchtitan.config import ParallelismConfig, TrainingConfig  # noqa: E402
from torchtitan.config.manager import custom_registry  # noqa: E402
from torchtitan.distributed import pipeline_parallel as titan  # noqa: E402

# (scheme, pp, chunks, micro-batches, layers)
CASES = [
    ("gpipe", 4, 1, 8, 16), ("1f1b", 4, 1, 8, 16), ("1f1b", 4, 1, 8, 14), ("1f1b", 3, 1, 6, 13),
    ("zb-h1", 4, 1, 8, 16), ("zb-h2", 2, 1, 4, 6),
    ("interleaved", 4, 2, 8, 16), ("interleaved", 2, 4, 8, 16), ("interleaved", 2, 3, 6, 13),
    ("bfs", 2, 2, 4, 8), ("interleaved-zb", 4, 2, 8, 16), ("interleaved-zb", 2, 3, 6, 12),
    ("zbv", 4, 1, 8, 16), ("zbv", 2, 1, 4, 10), ("dualpipev", 4, 1, 8, 16), ("dualpipev", 2, 1, 5, 8),
]
PASSES = ["none", "all"]
# The README's command line: torchtitan's llama3 module and its 8B config.
TRAIN_ARGS = ["--module", "llama3", "--config", "llama3_8b"]
# Bundled examples the README's `mario export CONFIG --csv schedule.csv --drop-recompute` takes
# (the others are Chimera, which export refuses, and a one-device CPU config).
EXAMPLES = ["llama2-13b-1f1b.config.json", "llama2-13b-zbv.config.json"]


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


def args_tokens(path):
    """The words `$(grep -v '^#' FILE)` gives the shell: the lines not starting with '#',
    split at whitespace."""
    with open(path) as handle:
        return " ".join(line for line in handle if not line.startswith("#")).split()


def train_parse(tokens):
    """torchtitan.train's own parsing of its command line (main() up to config.build(), which
    starts the process group and the training): (config, None), or (None, what it said)."""
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
            return ConfigManager().parse_args(TRAIN_ARGS + tokens), None
    except SystemExit:  # tyro prints the refusal and exits 2
        lines = [line.strip(" │╭╮╰╯─") for line in said.getvalue().splitlines()]
        text = " ".join(line for line in lines if line and not line.startswith("For full"))
        return None, text[text.find("Error parsing"):] if "Error parsing" in text else text
    except Exception as error:  # a section's __post_init__ or _validate_config
        return None, f"{type(error).__name__}: {error}"


def check_train_parse(checks, tally, case, args_path):
    config, refusal = train_parse(args_tokens(args_path))
    if checks.check(config is not None, case,
                    "torchtitan.train's command-line parser (llama3_8b) takes the file", refusal or ""):
        tally["train_parsed"] += 1
    return config


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
    args_path = csv.replace(".csv", ".torchtitan.args")
    full = check_train_parse(checks, tally, case, args_path)
    overrides, note_split = read_args(args_path)
    try:
        settings = tyro.cli(Settings, args=overrides, default=Settings(), registry=custom_registry)
    except SystemExit:
        checks.check(False, case, "torchtitan's parser takes every override", " ".join(overrides))
        return
    par, training = settings.parallelism, settings.training
    if full is not None:
        # What the trainer would build from: the same values as the two sections alone.
        checks.check(full.parallelism == par and full.training.local_batch_size == training.local_batch_size,
                     case, "the full config's settings = the two sections parsed alone",
                     f"{full.parallelism} vs {par}")
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


def run_example(mario, checks, tally, scratch, repo, example):
    """The README's two commands on a bundled config: export, then torchtitan.train's parser."""
    case = f"example {example}"
    csv = scratch.file(example.replace(".config.json", ".csv"))
    code, out, err = mario.run("export", os.path.join(repo, "resources", "examples", example),
                               "--csv", csv, "--drop-recompute")
    if checks.check(code == 0 and "torchtitan:" in out, case, "export writes the settings", out + err):
        tally["files"] += 1
        check_train_parse(checks, tally, case, csv.replace(".csv", ".torchtitan.args"))


def main():
    args = parse_args(__doc__)
    mario = Mario(args.mario)
    checks = Checks("torchtitan_settings", args.verbose)
    tally = Counter()
    with Scratch(args.keep) as scratch:
        for case in CASES:
            for passes in PASSES:
                run_case(mario, checks, tally, scratch, *case, passes)
        for example in EXAMPLES:
            run_example(mario, checks, tally, scratch, args.repo, example)
    classes = ", ".join(f"{name} {tally[name]}" for name in sorted(tally)
                        if name[0].isupper() or name[0].isdigit())
    summary = (f"torchtitan {torchtitan.__version__ if hasattr(torchtitan, '__version__') else '0.3'}: "
               f"{tally['files']} settings files, {tally['train_parsed']} taken by torchtitan.train's parser; "
               f"{tally['loaded']} rank schedules built and loaded; "
               f"split as the plan {tally['split_as_plan']}, as noted {tally['split_noted']}; classes: {classes}")
    exit_with(checks.finish(summary))


if __name__ == "__main__":
    main()
