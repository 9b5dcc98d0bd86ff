"""Mario's plans run on PyTorch's own pipeline runtime and compute what mario-executor computes.

For each case: `mario plan` makes a plan for a tiny model, `mario export --csv` writes its
compute_only order, `mario-executor run --dump-step` runs one step of it and writes the model,
its initial weights, the token ids, the loss and every gradient (executor/StepDump.h). Then N
gloo processes on loopback build the same stages (executor_gpt.py, the slices from the dump),
load the CSV into torch.distributed.pipelining's _PipelineScheduleRuntime (which lowers it,
adding the sends and receives itself) and run one step. The loss and every parameter's
gradient must equal the executor's.

Tolerance: 1e-9 relative (per tensor: max |g_torch - g_exec| / max |g_exec|; the loss: |diff|
/ |loss|). Both runs are float64 and compute the same operations on the same numbers; they
differ only in summation order (PyTorch divides the summed gradients by M at the end, the
executor each micro-batch's loss by M), worth ~1e-15 here. A wrong slice, a lost or doubled
micro-batch, a forward or backward run against the wrong input, or a missed 1/M shows up at
1e-2 or more, so 1e-9 leaves six orders of margin on both sides. A whole-model run of the
mirror without any pipeline is compared too, so a failure says which side is wrong.
"""
import argparse
import csv
import json
import os
import re
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ for executor_gpt in the source tree

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.distributed.pipelining import PipelineStage  # noqa: E402
from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime  # noqa: E402

import executor_gpt  # noqa: E402
from pytorch_peer import plan_and_export, run_checked  # noqa: E402

TOLERANCE = 1e-9
RANK_TIMEOUT_S = 120  # one step of a tiny model takes about a second
MODEL = {"layers": 8, "hidden": 16, "heads": 2, "vocab": 32, "sequence_length": 8}

# name, scheme, devices, chunks, micro-batches, passes, model flavour; 2 to 4 ranks, one to two
# stages per rank, V placements (a rank holding the first and the last stage), DualPipeV's
# OVERLAP_F_B cells, micro-batch counts that 1/M cannot divide exactly, both model flavours.
# The last case carries Mario's passes, chosen where they change the scheme's compute order
# (bound-w moves W's); the executor runs its recomputations, the export drops them (PyTorch has
# no R), which changes no number. Not prepose: it runs forwards early because they are
# checkpointed, so the export refuses a plan carrying it (core/session/RecomputeFreeOrder.h).
CASES = [
    ("1f1b-4", "1f1b", 4, 1, 8, None, "gpt"),
    ("1f1b-3-llama", "1f1b", 3, 1, 5, None, "llama"),
    ("interleaved-2x2", "interleaved", 2, 2, 4, None, "gpt"),
    ("interleaved-4x2", "interleaved", 4, 2, 8, None, "gpt"),
    ("zb-h1-3", "zb-h1", 3, 1, 6, None, "gpt"),
    ("zbv-2", "zbv", 2, 1, 4, None, "gpt"),
    ("zbv-2-llama", "zbv", 2, 1, 4, None, "llama"),
    ("zbv-4", "zbv", 4, 1, 8, None, "gpt"),
    ("dualpipev-2", "dualpipev", 2, 1, 4, None, "gpt"),
    ("zb-h1-3-passes", "zb-h1", 3, 1, 6, "checkpoint,overlap,redundancy,bound-w", "gpt"),
]


def model_spec(flavor):
    spec = "layers={layers},hidden={hidden},heads={heads},seq={sequence_length},vocab={vocab}".format(**MODEL)
    return spec + (",flavor=llama" if flavor == "llama" else "")


def prepare(args, folder, case):
    """Plan, CSV and executor dump of one case; returns the CSV's path, the dump's folder and a
    note on what the passes did to the order."""
    name, scheme, devices, chunks, microbatches, passes, flavor = case
    parallel = {"scheme": scheme, "pp": devices, "micro_batch_size": 2}
    if chunks > 1:
        parallel["chunks"] = chunks
    config = {"format": "mario-config", "version": 1, "name": name, "model": MODEL, "hardware": "a100-40g",
              "parallel": parallel, "microbatches": microbatches}
    paths = {k: os.path.join(folder, f"{name}.{k}") for k in ("config.json", "plan.json", "csv", "dump")}
    with open(paths["config.json"], "w") as f:
        json.dump(config, f)
    dropped, reordered = plan_and_export(args.mario, paths["config.json"], paths["plan.json"], paths["csv"], passes)
    note = f"{dropped} R dropped, " + ("reordered" if reordered else "same order") if passes else ""
    run_checked([args.executor, "run", paths["plan.json"], "--backend", "cpu", "--model", model_spec(flavor), "--seed", "11",
         "--dump-step", paths["dump"]])
    return paths["csv"], paths["dump"], note


def csv_placement(path):
    """Stage -> rank as PyTorch infers it from the CSV: the rank whose line names the stage."""
    placement = {}
    with open(path, newline="") as f:
        for rank, row in enumerate(csv.reader(f)):
            for cell in row:
                match = re.match(r"\s*(\d+)", cell)
                if match:
                    placement.setdefault(int(match.group(1)), rank)
    return placement


def stage_shapes(dump, stage):
    """A stage's input and output as meta tensors. Given to PipelineStage, they spare its shape
    inference, which sends Python objects between ranks at the first step. Float
    ones require grad: PyTorch derives from that which gradients travel back."""
    rows, seq = dump.inputs[0].shape
    meta = {"dtype": torch.float64, "device": "meta", "requires_grad": True}
    hidden = torch.empty(rows, seq, dump.model["hidden"], **meta)
    ids = torch.empty(rows, seq, dtype=torch.int64, device="meta")
    logits = torch.empty(rows, seq, dump.model["vocab"], **meta)
    return ids if stage["embedding"] else hidden, logits if stage["head"] else hidden


def rank_main(rank, world, store, csv_path, dump_dir, out_dir):
    """One rank of PyTorch's runtime: this rank's stages from the dump, the CSV, one step."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    try:
        dump = executor_gpt.StepDump(dump_dir)
        count = len(dump.stages)
        modules = [executor_gpt.StageModule(dump.model, st, dump.weights)
                   for st in dump.stages if st["device"] == rank]
        stages = [PipelineStage(m, m.stage["index"], count, torch.device("cpu"), *stage_shapes(dump, m.stage))
                  for m in modules]
        schedule = _PipelineScheduleRuntime(stages, n_microbatches=len(dump.inputs), loss_fn=executor_gpt.loss_fn,
                                            scale_grads=True)
        schedule._load_csv(csv_path, format="compute_only")
        first = any(m.stage["index"] == 0 for m in modules)
        last = any(m.stage["index"] == count - 1 for m in modules)
        losses = []
        schedule.step(arg_mbs=[(x,) for x in dump.inputs] if first else [()] * len(dump.inputs),
                      target_mbs=dump.targets if last else None, losses=losses, return_outputs=False)
        grads = {}
        for m in modules:
            grads.update(m.named_grads())
        torch.save({"grads": grads, "losses": [float(x.detach()) for x in losses]},
                   os.path.join(out_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def relative(a, b):
    return float((a - b).abs().max() / max(float(b.abs().max()), 1e-300))


def compare(label, loss, grads, dump, failures):
    """Max relative differences of `loss` and `grads` from the executor's; failures appended."""
    loss_diff = abs(loss - dump.header["loss"]) / abs(dump.header["loss"])
    grad_diff = 0.0
    for name, expected in dump.grads.items():
        got = grads.get(name)
        if got is None:
            failures.append(f"{label}: no gradient for {name}")
            continue
        grad_diff = max(grad_diff, relative(got, expected))
    if loss_diff > TOLERANCE or grad_diff > TOLERANCE:
        failures.append(f"{label}: loss differs by {loss_diff:.2e}, gradients by up to {grad_diff:.2e}")
    return loss_diff, grad_diff


def check_case(args, folder, case, failures):
    name, devices = case[0], case[2]
    started = time.perf_counter()
    csv_path, dump_dir, note = prepare(args, folder, case)
    dump = executor_gpt.StepDump(dump_dir)
    # The CSV must put every stage on the device the executor ran it on, or the comparison
    # would be between two different pipelines.
    placement = {st["index"]: st["device"] for st in dump.stages}
    if csv_placement(csv_path) != placement:
        failures.append(f"{name}: the CSV places stages {csv_placement(csv_path)}, the plan {placement}")
        return None
    mirror = compare(f"{name} (mirror, no pipeline)", *executor_gpt.whole_model_step(dump), dump, failures)

    out_dir = os.path.join(folder, name + ".ranks")
    os.makedirs(out_dir)
    # Forked, not spawned: the children start with torch already imported (seconds each on a
    # busy machine); the parent has no process group or threads for them to inherit.
    ranks = mp.start_processes(rank_main, nprocs=devices, join=False, start_method="fork",
                               args=(devices, os.path.join(folder, name + ".store"), csv_path, dump_dir, out_dir))
    # A schedule that waits forever (a receive nobody sends) ends this case, not the whole test.
    deadline = time.monotonic() + RANK_TIMEOUT_S
    while not ranks.join(timeout=1):
        if time.monotonic() > deadline:
            for process in ranks.processes:
                process.kill()
            raise TimeoutError(f"PyTorch's ranks did not finish the step in {RANK_TIMEOUT_S} s")
    grads, losses = {}, []
    for rank in range(devices):
        part = torch.load(os.path.join(out_dir, f"rank{rank}.pt"))
        grads.update(part["grads"])
        losses += part["losses"]
    if len(losses) != len(dump.inputs):
        failures.append(f"{name}: PyTorch reported {len(losses)} losses for {len(dump.inputs)} micro-batches")
        return None
    runtime = compare(f"{name} (PyTorch runtime)", sum(losses) / len(losses), grads, dump, failures)
    return name, len(dump.stages), devices, len(dump.inputs), mirror, runtime, time.perf_counter() - started, note


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mario", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--executor", required=True, help="mario-executor, with --dump-step")
    parser.add_argument("--only", help="run only the case of this name")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder and say where")
    args = parser.parse_args()
    torch.set_num_threads(1)
    folder = tempfile.mkdtemp(prefix="mario_pytorch_runtime_")
    failures, rows = [], []
    try:
        for case in CASES:
            if args.only and case[0] != args.only:
                continue
            try:
                row = check_case(args, folder, case, failures)
            except Exception as error:  # one broken case must not hide the others' results
                failures.append(f"{case[0]}: {type(error).__name__}: {error}")
                row = None
            if row:
                rows.append(row)
    finally:
        if args.keep:
            print(f"scratch folder: {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"torch {torch.__version__}, tolerance {TOLERANCE:g} relative")
    print(f"{'case':18} {'stages':>6} {'ranks':>5} {'M':>4} {'mirror loss':>11} {'mirror grad':>11} "
          f"{'torch loss':>11} {'torch grad':>11} {'seconds':>7}  passes")
    for name, stages, ranks, mbs, mirror, runtime, seconds, note in rows:
        print(f"{name:18} {stages:>6} {ranks:>5} {mbs:>4} {mirror[0]:11.2e} {mirror[1]:11.2e} "
              f"{runtime[0]:11.2e} {runtime[1]:11.2e} {seconds:7.1f}  {note}")
    for line in failures:
        print("FAIL " + line)
    return 1 if failures or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
