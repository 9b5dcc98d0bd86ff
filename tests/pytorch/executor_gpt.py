"""The executor's model in Python, read from a `mario-executor run --dump-step DIR` dump.

pytorch_runtime_test.py runs a Mario plan on PyTorch's own pipeline runtime and compares the
loss and every gradient with the executor's run of the same plan. For that comparison to mean
anything, both runtimes must compute the same function from the same numbers: this module is
a functional mirror of executor/GptModel.cpp (both flavours), written operation for operation
in the same order, so that in float64 the two differ only by rounding (~1e-15). The weights,
token ids and layer slices all come from the dump (executor/StepDump.h), never from a seed.
"""
import json
import math
import os

import torch
import torch.nn.functional as F

RMS_EPS = 1e-6  # GptModel.cpp: kRmsEps (LLaMA's norm_eps)
ROTARY_THETA = 10000.0  # GptModel.cpp: kRotaryTheta


class StepDump:
    """step.json and its tensors: header fields, initial weights, pipeline gradients, tokens."""

    def __init__(self, folder):
        with open(os.path.join(folder, "step.json")) as f:
            self.header = json.load(f)
        if self.header.get("format") != "mario-step-dump" or self.header.get("version") != 1:
            raise ValueError(f"{folder}: not a mario-step-dump v1")
        self.model = self.header["model"]
        self.weights, self.grads, self.inputs, self.targets = {}, {}, {}, {}
        kinds = {"weight": self.weights, "grad": self.grads, "input": self.inputs, "target": self.targets}
        for entry in self.header["tensors"]:
            kinds[entry["kind"]][entry["name"]] = _read_tensor(folder, entry)
        # Token files are named by micro-batch number; keep them in that order.
        self.inputs = [self.inputs[str(m)] for m in range(len(self.inputs))]
        self.targets = [self.targets[str(m)] for m in range(len(self.targets))]

    @property
    def stages(self):
        return self.header["stages"]


def _read_tensor(folder, entry):
    dtype = {"float64": torch.float64, "int64": torch.int64}[entry["dtype"]]
    with open(os.path.join(folder, entry["file"]), "rb") as f:
        raw = bytearray(f.read())
    count = math.prod(entry["shape"])
    if len(raw) != 8 * count:
        raise ValueError(f"{entry['file']}: {len(raw)} bytes for shape {entry['shape']}")
    # The files are little-endian (StepDump.cpp); so is every machine this test runs on.
    flat = torch.frombuffer(raw, dtype=dtype) if count else torch.empty(0, dtype=dtype)
    return flat.reshape(entry["shape"]).clone()


def _split_heads(y, heads):
    b, t, width = y.shape
    return y.reshape(b, t, heads, width // heads).transpose(1, 2)


def _causal_attention(q, k, v):
    b, nh, t, hd = q.shape
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hd)
    causal = torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(causal, -math.inf)
    return torch.matmul(torch.softmax(scores, -1), v).transpose(1, 2).reshape(b, t, nh * hd)


def rms_norm(x, w, eps=RMS_EPS):
    xd = x.to(torch.float64)
    return (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def apply_rotary(x, theta=ROTARY_THETA):
    t, hd = x.shape[-2], x.shape[-1]
    opts = {"dtype": torch.float64, "device": x.device}
    inverse_frequency = torch.pow(theta, -torch.arange(0, hd, 2, **opts) / hd)
    angles = torch.outer(torch.arange(t, **opts), inverse_frequency)
    both = torch.cat([angles, angles], -1)
    first, second = x.chunk(2, -1)
    rotated = torch.cat([-second, first], -1)
    return x * both.cos().to(x.dtype) + rotated * both.sin().to(x.dtype)


def _gpt_block(model, i, p, x):
    pre, h = f"block{i}.", model["hidden"]
    a = F.layer_norm(x, [h], p[pre + "ln1.w"], p[pre + "ln1.b"])
    q, k, v = F.linear(a, p[pre + "attn.w"], p[pre + "attn.b"]).split(h, -1)
    heads = model["heads"]
    y = _causal_attention(_split_heads(q, heads), _split_heads(k, heads), _split_heads(v, heads))
    x = x + F.linear(y, p[pre + "proj.w"], p[pre + "proj.b"])
    m = F.layer_norm(x, [h], p[pre + "ln2.w"], p[pre + "ln2.b"])
    m = F.gelu(F.linear(m, p[pre + "fc1.w"], p[pre + "fc1.b"]))
    return x + F.linear(m, p[pre + "fc2.w"], p[pre + "fc2.b"])


def _llama_block(model, i, p, x):
    pre, heads = f"block{i}.", model["heads"]
    a = rms_norm(x, p[pre + "attn_norm.w"])

    def project(name):
        return _split_heads(F.linear(a, p[pre + name]), heads)

    q, k = apply_rotary(project("attn.wq")), apply_rotary(project("attn.wk"))
    x = x + F.linear(_causal_attention(q, k, project("attn.wv")), p[pre + "attn.wo"])
    m = rms_norm(x, p[pre + "mlp_norm.w"])
    gated = F.silu(F.linear(m, p[pre + "mlp.w1"])) * F.linear(m, p[pre + "mlp.w3"])
    return x + F.linear(gated, p[pre + "mlp.w2"])


def slice_forward(model, stage, p, x):
    """GptModel::forward without the loss: a slice with the head returns the logits, so that
    PyTorch's schedule applies the loss (its loss_fn) as it does for any model."""
    llama = model["flavor"] == "llama"
    if stage["embedding"]:
        ids = x
        x = F.embedding(ids, p["embed.tok"])
        if not llama:
            x = x + p["embed.pos"][: ids.shape[1]]
    for i in range(stage["begin"], stage["end"]):
        x = _llama_block(model, i, p, x) if llama else _gpt_block(model, i, p, x)
    if not stage["head"]:
        return x
    if llama:
        return F.linear(rms_norm(x, p["final.norm.w"]), p["head.w"])
    x = F.layer_norm(x, [model["hidden"]], p["final.ln.w"], p["final.ln.b"])
    return F.linear(x, p["head.w"], p["head.b"])


def loss_fn(logits, targets):
    """The executor's per-micro-batch loss: mean cross-entropy over every token of it."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def owns(stage, name):
    """Whether a stage's slice holds the parameter `name` (GptModel::cloneSlice's rule)."""
    if name.startswith("embed."):
        return stage["embedding"]
    if name.startswith(("final.", "head.")):
        return stage["head"]
    index = int(name[len("block"): name.index(".")])
    return stage["begin"] <= index < stage["end"]


class StageModule(torch.nn.Module):
    """One stage of the plan as an nn.Module, for PipelineStage: the slice's weights as fresh
    float64 leaves (nn.Parameter names cannot hold dots, so they are kept by position)."""

    def __init__(self, model, stage, weights):
        super().__init__()
        self.model, self.stage = model, stage
        self.names = sorted(n for n in weights if owns(stage, n))
        self.params = torch.nn.ParameterList(
            torch.nn.Parameter(weights[n].clone().to(torch.float64)) for n in self.names)

    def named_grads(self):
        return {n: p.grad for n, p in zip(self.names, self.params)}

    def forward(self, x):
        return slice_forward(self.model, self.stage, dict(zip(self.names, self.params)), x)


def whole_model_step(dump):
    """The dump's step without any pipeline: every micro-batch through the whole model, the
    loss averaged as the executor averages it. Separates a wrong mirror from a wrong runtime."""
    whole = {"begin": 0, "end": dump.model["layers"], "embedding": True, "head": True}
    module = StageModule(dump.model, whole, dump.weights)
    count, loss = len(dump.inputs), 0.0
    for inputs, targets in zip(dump.inputs, dump.targets):
        part = loss_fn(module(inputs), targets) / count
        part.backward()
        loss += part.item()
    return loss, module.named_grads()
