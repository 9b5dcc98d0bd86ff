"""Helpers for paper_eval.py: writing configs, running `mario`, formatting.

Every config is written to a temporary folder, run with `mario simulate CONFIG --json` (or
`mario tune`, or `mario capacity` for the largest size that fits), and forgotten; identical
configs are simulated once. A failed run raises
MarioFailed with one line that names the config.
"""
import copy
import errno
import json
import os
import subprocess
import sys
import threading
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MEMORY_GB = 40
# The two training settings every claim is simulated with: FlashAttention (the workbench's default),
# and 2023 Megatron-DeepSpeed's defaults (materialised attention scores, no sequence parallelism).
MODES = [("flash", {"attention": "flash"}),
         ("mds", {"attention": "materialized", "sequence_parallel": False})]
# The paper's letters: V = 1F1B, X = Chimera, W = interleaved with 2 chunks per device.
SCHEMES = [("V", "1f1b", 1), ("X", "chimera", 1), ("W", "interleaved", 2)]
PASSES = {"base": "none", "ckpt": ["checkpoint"], "ovlp": "all", "lmbs": "all"}


class MarioFailed(Exception):
    """A mario run that did not succeed; the message is one line naming the config."""


def hardware():
    """The bundled A100-40G preset on the paper's nodes: 4 GPUs each."""
    with open(os.path.join(ROOT, "profiles", "hardware", "a100-40g.json")) as f:
        hw = json.load(f)
    hw.update(gpus_per_node=4, name="a100-40g, 4 per node")
    return hw


def preset(name):
    with open(os.path.join(ROOT, "profiles", "models", name + ".json")) as f:
        model = json.load(f)
    for key in ("format", "version", "notes"):
        model.pop(key, None)
    return model


def gpt3_shaped(hidden, layers=32):
    """The paper's §6.4 family: GPT-3 blocks, 128-wide heads, tied 51200-word embeddings."""
    return {"name": f"gpt3 h{hidden}", "layers": layers, "hidden": hidden, "heads": hidden // 128, "vocab": 51200,
            "sequence_length": 2048, "tied_embeddings": True}


def layers_of(model):
    return model["layers"] if isinstance(model, dict) else preset(model)["layers"]


def config(model, scheme, pp, mbs, gbs, config_name, training, dp=1, tp=1, chunks=1):
    par = {"scheme": scheme, "pp": pp, "dp": dp, "tp": tp, "micro_batch_size": mbs, "global_batch_size": gbs}
    if chunks > 1:
        par["chunks"] = chunks
    model_name = model if isinstance(model, str) else model.get("name", "inline model")
    name = f"{model_name} {scheme} pp{pp} dp{dp} tp{tp} mbs{mbs} gbs{gbs} {config_name} {training['attention']}"
    return {"format": "mario-config", "version": 1, "name": name, "model": copy.deepcopy(model),
            "hardware": hardware(), "devices": pp * dp * tp, "memory_limit_gb": MEMORY_GB, "parallel": par,
            "passes": PASSES[config_name], "training": dict(training)}


class Runner:
    """Runs mario on configs written to `workdir`, caching results; safe to call from threads."""

    def __init__(self, mario, workdir):
        self.mario, self.workdir = mario, workdir
        self.cache, self.lock, self.count, self.runs = {}, threading.Lock(), 0, 0

    def _write(self, cfg):
        with self.lock:
            self.count += 1
            path = os.path.join(self.workdir, f"run{self.count}.config.json")
        with open(path, "w") as f:
            json.dump(cfg, f, indent=1)
        return path

    def _call(self, argv, what, ok_codes=(0,)):
        for attempt in range(6):  # the binary may be relinked under us: busy, unreadable or briefly gone
            try:
                done = subprocess.run(argv, capture_output=True, text=True)
            except OSError as e:
                if e.errno in (errno.ETXTBSY, errno.EACCES, errno.ENOENT) and attempt < 5:
                    time.sleep(3)
                    continue
                raise MarioFailed(f"could not run {argv[0]} on {what}: {e.strerror}")
            if done.returncode != 0 and "text file busy" in done.stderr.lower() and attempt < 5:
                time.sleep(3)
                continue
            with self.lock:
                self.runs += 1
            if done.returncode not in ok_codes:
                lines = (done.stderr.strip() or done.stdout.strip() or "no message").splitlines()
                raise MarioFailed(f"mario {argv[1]} failed (exit {done.returncode}) on {what}: {lines[-1]}")
            try:
                return json.loads(done.stdout)
            except ValueError:
                raise MarioFailed(f"mario {argv[1]} printed no JSON for {what}")

    def simulate(self, cfg):
        key = json.dumps(cfg, sort_keys=True)
        with self.lock:
            if key in self.cache:
                return self.cache[key]
        result = self._call([self.mario, "simulate", self._write(cfg), "--json"], f"config \"{cfg['name']}\"")
        result["peak_gb"] = max(d["peak_memory_bytes"] for d in result["devices"]) / 1e9
        with self.lock:
            self.cache[key] = result
        return result

    def capacity(self, cfg, grow):
        """`mario capacity CONFIG --grow KEY=MIN:MAX:STEP --json` with the config's own scheme and
        passes: the largest value that fits (0 when even MIN does not) and the point there. The
        search (doubling, then bisection) and its monotonicity check are the workbench's."""
        # Exit 4 (nothing fits) still prints the answers.
        result = self._call([self.mario, "capacity", self._write(cfg), "--grow", grow, "--json"],
                            f"config \"{cfg['name']}\"", ok_codes=(0, 4))
        answer = result["answers"][0]
        if answer["violations"]:
            print(f"warning: {cfg['name']}: {'; '.join(answer['violations'])}", file=sys.stderr)
        return int(answer["largest"] or 0), answer["at"]

    def tune(self, cfg, *options):
        path = self._write(cfg)
        start = time.monotonic()
        result = self._call([self.mario, "tune", path, *options, "--json"], f"config \"{cfg['name']}\"")
        result["wall_s"] = time.monotonic() - start
        return result


def host_op_us_for(r, runs_at, target, training, high=400.0, steps=12):
    """The per-operator host cost (training.host_op_us, docs/cost-model.md#host-time) at which the
    mean of runs_at(training)'s ratios reaches `target`, by bisection on [0, high] us; None when
    even `high` does not reach it. runs_at maps a training dict to the list of ratios."""
    def reached(us):
        return mean(runs_at(dict(training, host_op_us=us))) >= target
    if not reached(high):
        return None
    low = 0.0
    for _ in range(steps):
        mid = (low + high) / 2
        low, high = (low, mid) if reached(mid) else (mid, high)
    return high

# Formatting
def x(v):
    return f"{v:.2f}×"


def pct(v):
    return f"{100 * v:.1f}%"


def gb(v):
    return f"{v:.1f} GB"


def params(v):
    return f"{v / 1e9:.2f}B" if v else "none"


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)} to {fmt(hi)}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out
