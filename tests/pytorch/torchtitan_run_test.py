"""torchtitan runs Mario's plans for real, on CPU, and computes what the unpipelined model computes.

For each case: `mario plan` and `mario export --csv` write a compute-only CSV and its
`.torchtitan.args` for a config whose model is torchtitan's llama3 "debugmodel" (6 layers,
dim 256, 16 heads, FFN 768, vocab 2048; only the sequence is short). Then P gloo processes on
loopback do what torchtitan's trainer does with pipeline parallelism, with torchtitan's own code:
parse the settings with torchtitan's config parser, build ParallelDims and its meshes, build
the llama3 debug model, and call torchtitan's pipeline_llm (the pipelining_fn of llama3's
model_registry), which splits the model, builds the PipelineStages and builds the schedule
that loads the CSV (_build_pipeline_schedule: _PipelineScheduleRuntime, scale_grads=False).
One schedule.step runs as torchtitan's pp_forward_backward_step calls it: micro-batch inputs
to the first stage, labels to the last, loss_kwargs={"global_valid_tokens": N}, and
torchtitan's CrossEntropyLoss (sum over the micro-batch's tokens / N), so the step's loss is
the sum of the micro-batch losses. Every parameter's gradient (by FQN) and the loss are
compared with the same model (same initial weights) run without a pipeline on the whole batch
with the same loss function: sum over all tokens / N, one backward.

Tolerance: 1e-9 relative (per tensor max |g_pp - g_ref| / max |g_ref|, the loss |diff| / |loss|).
The model runs in float64. torchtitan's cross_entropy_loss casts the logits to float32, but
per token, so both runs round the same logits the same way; the loss is a float32 sum, over
each micro-batch's tokens in the pipeline and over all tokens in the reference, which can
differ by a float32 rounding of the sum (~1e-7 relative): the loss gets 1e-5. The gradients
differ only by float64 summation order (the pipeline accumulates micro-batch gradients, the
reference sums the whole batch at once), ~1e-14. A lost or doubled micro-batch, a stage run
on the wrong input, or a wrong split changes them by 1e-2 or more.

What this test has to set that torchtitan would not (each one named in the summary):
  - torchtitan.distributed.parallel_dims.device_type = "cpu": torchtitan.tools.utils picks
    the device type once at import, "cuda" when no accelerator is found, and ParallelDims
    builds its world mesh with it (parallel_dims.py build_mesh: init_device_mesh(device_type,
    ...)), so on a CPU-only machine the mesh would be a CUDA one.
  - the llama3 attention backend: debugmodel's layers use FlexAttention, which calls a
    class-level torch.compile(flex_attention, max_autotune) and needs block masks built by
    torch.compile'd create_block_mask; torchtitan's get_attention_config refuses "sdpa" for
    language models. The layers here get torchtitan's own ScaledDotProductAttention.Config
    (causal, no masks) in their config, the same in both runs; everything else is debugmodel's.
  - parallelize_fn returns each model part unchanged (no TP/FSDP/compile/AC on one CPU rank),
    so ac_config is None and compile_config torchtitan's default (off).
  - the whole model is built and initialised (init_weights, seeded) on CPU before pipeline_llm,
    which deep-copies its parts out of it; torchtitan's trainer builds it on meta and
    initialises each part after the split. Both runs thus start from the same weights.
  - NumPy is installed beside PyTorch (packaging/install-torch.sh): torchtitan's
    _pipeline_module_split builds its PipelineStages without input_args, so the stages infer
    their shapes at the first step by exchanging Python objects, which PyTorch decodes with
    NumPy.
"""
import argparse
import copy
import dataclasses
import json
import os
import shutil
import socket
import sys
import tempfile
import time

STARTED = time.monotonic()
sys.dont_write_bytecode = True

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import tyro  # noqa: E402
from torchtitan.components.loss import CrossEntropyLoss  # noqa: E402
from torchtitan.config import CompileConfig, ParallelismConfig, TrainingConfig  # noqa: E402
from torchtitan.config.manager import custom_registry  # noqa: E402
from torchtitan.distributed import ParallelDims  # noqa: E402
from torchtitan.distributed import parallel_dims as titan_parallel_dims  # noqa: E402
from torchtitan.models.common.attention import ScaledDotProductAttention  # noqa: E402
from torchtitan.models.llama3 import model_registry  # noqa: E402
from pytorch_peer import plan_and_export  # noqa: E402

LOSS_TOLERANCE = 1e-5
GRAD_TOLERANCE = 1e-9
RANK_TIMEOUT_S = 120
SEQ_LEN = 16
MICRO_BATCH = 2
DTYPE = torch.float64
SEED = 1234

# name, scheme, pp, chunks, micro-batches, Mario passes (None: none)
CASES = [
    ("1f1b-2", "1f1b", 2, 1, 4, None),
    ("interleaved-2x2", "interleaved", 2, 2, 4, None),
    ("zbv-2", "zbv", 2, 1, 4, None),
    ("zb-h1-2-passes", "zb-h1", 2, 1, 4, "checkpoint,overlap,redundancy,bound-w"),
]


@dataclasses.dataclass
class Settings:
    """The two torchtitan config sections the file sets, parsed as torchtitan parses them."""
    parallelism: ParallelismConfig = dataclasses.field(default_factory=ParallelismConfig)
    training: TrainingConfig = dataclasses.field(default_factory=TrainingConfig)


def model_config():
    """torchtitan's llama3 debugmodel config, with SDPA attention and a RoPE cache for SEQ_LEN."""
    config = copy.deepcopy(model_registry("debugmodel").model)
    for layer in config.layers:
        layer.attention.inner_attention = ScaledDotProductAttention.Config()
        layer.attention.rope = dataclasses.replace(layer.attention.rope, max_seq_len=SEQ_LEN)
    return config


def build_model(config):
    """The whole model on CPU, initialised by torchtitan's init_weights from SEED."""
    torch.manual_seed(SEED)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(DTYPE)
    try:
        with torch.device("cpu"):
            model = config.build()
            model.init_weights(buffer_device=None)
    finally:
        torch.set_default_dtype(previous)
    model.train()
    return model


def mario_config(path, name, scheme, pp, chunks, microbatches, config):
    attention = config.layers[0].attention
    model = {"format": "mario-model", "version": 1, "name": "llama3-debugmodel", "layers": len(config.layers),
             "hidden": config.dim, "heads": attention.n_heads, "kv_heads": attention.n_kv_heads or attention.n_heads,
             "ffn_hidden": config.layers[0].feed_forward.w1.out_features, "vocab": config.vocab_size,
             "sequence_length": SEQ_LEN, "gated_mlp": True, "tied_embeddings": False}
    parallel = {"scheme": scheme, "pp": pp, "dp": 1, "tp": 1, "chunks": chunks, "micro_batch_size": MICRO_BATCH,
                "global_batch_size": MICRO_BATCH * microbatches}
    with open(path, "w") as handle:
        json.dump({"format": "mario-config", "version": 1, "name": name, "model": model,
                   "hardware": "a100-40g", "devices": pp, "parallel": parallel}, handle)


def read_overrides(path):
    with open(path) as handle:
        return [line.strip() for line in handle if line.strip() and not line.startswith("#")]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def identity_parallelize(model, **_):
    return model


def rank_main(rank, world, port, overrides, model, config, tokens, labels, out_dir):
    """One rank of torchtitan's pipeline path: settings, ParallelDims, pipeline_llm, one step."""
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        settings = tyro.cli(Settings, args=overrides, default=Settings(), registry=custom_registry)
        parallelism, training = settings.parallelism, settings.training
        titan_parallel_dims.device_type = "cpu"
        parallel_dims = ParallelDims.from_config(parallelism, world)
        parallel_dims.build_mesh()
        loss_fn = CrossEntropyLoss(CrossEntropyLoss.Config())
        from torchtitan.distributed.pipeline_parallel import pipeline_llm
        schedule, parts, has_first, has_last = pipeline_llm(
            model, parallel_dims=parallel_dims, training=training, parallelism=parallelism,
            compile_config=CompileConfig(), ac_config=None, dump_folder=out_dir,
            device=torch.device("cpu"), model_config=config, parallelize_fn=identity_parallelize,
            loss_fn=loss_fn)
        m = training.local_batch_size // parallelism.pipeline_parallel_microbatch_size
        token_mbs, label_mbs = tokens.chunk(m), labels.chunk(m)
        global_valid_tokens = torch.tensor(labels.numel())
        losses = [] if has_last else None
        schedule.step(arg_mbs=[(t,) for t in token_mbs] if has_first else None,
                      kwarg_mbs=[{} for _ in range(m)],
                      target_mbs=list(label_mbs) if has_last else None,
                      losses=losses, loss_kwargs={"global_valid_tokens": global_valid_tokens},
                      return_outputs=False)
        grads = {}
        for part in parts:
            for name, param in part.named_parameters():
                grads[name] = None if param.grad is None else param.grad.detach().clone()
        torch.save({"grads": grads, "losses": [float(x.detach()) for x in losses] if has_last else None,
                    "stages": [s.stage_index for s in schedule._stages],
                    "modules": [sorted({n.split(".")[0] if not n.startswith("layers.") else ".".join(n.split(".")[:2])
                                        for n, _ in p.named_parameters()}) for p in parts],
                    "class": type(schedule).__name__, "microbatches": schedule._n_microbatches},
                   os.path.join(out_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def reference_step(model, tokens, labels):
    """The whole model, no pipeline: torchtitan's loss on the whole batch, one backward."""
    loss_fn = CrossEntropyLoss(CrossEntropyLoss.Config())
    model.zero_grad(set_to_none=True)
    loss, _ = loss_fn(model(tokens), labels, torch.tensor(labels.numel()))
    loss.backward()
    return float(loss.detach()), {n: p.grad.detach().clone() for n, p in model.named_parameters()}


def relative(a, b):
    return float((a - b).abs().max() / max(float(b.abs().max()), 1e-300))


def check_case(args, folder, case, config, failures):
    name, scheme, pp, chunks, microbatches, passes = case
    started = time.perf_counter()
    paths = {k: os.path.join(folder, f"{name}.{k}") for k in ("config.json", "plan.json", "csv")}
    mario_config(paths["config.json"], name, scheme, pp, chunks, microbatches, config)
    dropped, reordered = plan_and_export(args.mario, paths["config.json"], paths["plan.json"], paths["csv"], passes)
    note = (f"; passes: {dropped} R dropped, " + ("reordered" if reordered else "same order")) if passes else ""
    with open(paths["plan.json"]) as handle:
        plan = json.load(handle)
    overrides = read_overrides(paths["csv"].replace(".csv", ".torchtitan.args"))

    model = build_model(config)
    reference = copy.deepcopy(model)
    generator = torch.Generator().manual_seed(SEED + 1)
    batch = MICRO_BATCH * microbatches
    tokens = torch.randint(config.vocab_size, (batch, SEQ_LEN), generator=generator)
    labels = torch.randint(config.vocab_size, (batch, SEQ_LEN), generator=generator)
    ref_loss, ref_grads = reference_step(reference, tokens, labels)

    out_dir = os.path.join(folder, name + ".ranks")
    os.makedirs(out_dir)
    # Forked: the children inherit torch, torchtitan and the model already built.
    ranks = mp.start_processes(rank_main, nprocs=pp, join=False, start_method="fork",
                               args=(pp, free_port(), overrides, model, config, tokens, labels, out_dir))
    deadline = time.monotonic() + RANK_TIMEOUT_S
    while not ranks.join(timeout=1):
        if time.monotonic() > deadline:
            for process in ranks.processes:
                process.kill()
            raise TimeoutError(f"torchtitan's ranks did not finish the step in {RANK_TIMEOUT_S} s")
    grads, losses, classes, stages = {}, [], set(), {}
    for rank in range(pp):
        part = torch.load(os.path.join(out_dir, f"rank{rank}.pt"))
        for fqn, grad in part["grads"].items():
            if fqn in grads:
                failures.append(f"{name}: {fqn} is on two ranks")
            grads[fqn] = grad
        losses += part["losses"] or []
        classes.add(part["class"])
        for index, modules in zip(part["stages"], part["modules"]):
            stages[index] = (rank, modules)
        if part["microbatches"] != microbatches:
            failures.append(f"{name}: torchtitan runs {part['microbatches']} micro-batches, the plan {microbatches}")
    if len(losses) != microbatches:
        failures.append(f"{name}: {len(losses)} losses for {microbatches} micro-batches")
    loss = sum(losses)
    loss_diff = abs(loss - ref_loss) / abs(ref_loss)
    grad_diff = 0.0
    for fqn, expected in ref_grads.items():
        got = grads.get(fqn)
        if got is None:
            failures.append(f"{name}: no gradient for {fqn}")
            continue
        grad_diff = max(grad_diff, relative(got, expected))
    extra = sorted(set(grads) - set(ref_grads))
    if extra:
        failures.append(f"{name}: gradients the whole model lacks: {extra}")
    if loss_diff > LOSS_TOLERANCE or grad_diff > GRAD_TOLERANCE:
        failures.append(f"{name}: loss differs by {loss_diff:.2e}, gradients by up to {grad_diff:.2e}")
    # torchtitan must have built the plan's stages: each on the plan's rank, with the plan's layers.
    for st in plan["stages"]:
        want = (st["device"], [f"layers.{i}" for i in range(*st["layers"])])
        got = stages.get(st["index"])
        got = got and (got[0], sorted((m for m in got[1] if m.startswith("layers.")), key=lambda m: int(m[7:])))
        if got != want:
            failures.append(f"{name}: stage {st['index']}: torchtitan built (rank, layers) {got}, the plan {want}")
    split = " | ".join(f"{i}@r{stages[i][0]}:" + ",".join(m.replace("layers.", "L") for m in stages[i][1])
                       for i in sorted(stages))
    return (name, "/".join(sorted(classes)), len(stages), pp, microbatches, loss, ref_loss, loss_diff, grad_diff,
            time.perf_counter() - started, split + note)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mario", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--only", help="run only the case of this name")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder and say where")
    args = parser.parse_args()
    torch.set_num_threads(1)
    config = model_config()
    folder = tempfile.mkdtemp(prefix="mario_torchtitan_run_")
    failures, rows = [], []
    try:
        for case in CASES:
            if args.only and case[0] != args.only:
                continue
            try:
                rows.append(check_case(args, folder, case, config, failures))
            except Exception as error:  # one broken case must not hide the others' results
                failures.append(f"{case[0]}: {type(error).__name__}: {error}")
    finally:
        if args.keep:
            print(f"scratch folder: {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"torch {torch.__version__}, torchtitan llama3 debugmodel ({len(config.layers)} layers, dim {config.dim}), "
          f"{DTYPE}, seq {SEQ_LEN}, micro-batch {MICRO_BATCH}; tolerance loss {LOSS_TOLERANCE:g}, "
          f"gradients {GRAD_TOLERANCE:g} relative")
    print(f"{'case':16} {'schedule':26} {'stages':>6} {'ranks':>5} {'M':>3} {'loss':>10} {'loss diff':>9} "
          f"{'grad diff':>9} {'seconds':>7}  split")
    for name, cls, stages, ranks, mbs, loss, ref_loss, loss_diff, grad_diff, seconds, split in rows:
        print(f"{name:16} {cls:26} {stages:>6} {ranks:>5} {mbs:>3} {loss:10.6f} {loss_diff:9.2e} "
              f"{grad_diff:9.2e} {seconds:7.1f}  {split}")
    for line in failures:
        print("FAIL " + line)
    print(f"torchtitan_run: {len(rows)} plans run by torchtitan's pipeline_llm, {len(failures)} failures "
          f"({time.monotonic() - STARTED:.1f} s)")
    return 1 if failures or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
