"""Shared by the PyTorch-peer tests: the real torch.distributed.pipelining judges Mario's CSVs.

Every script gets `--mario PATH --repo ROOT` from tests/pytorch/CMakeLists.txt. The schedules
are built in one process without a process group: PyTorch's schedule classes read only a few
attributes of their stages while they build and lower the order, so a stand-in stage serves.
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# Each script's run time is reported from here, before the seconds that importing torch takes.
STARTED = time.monotonic()


import torch  # noqa: E402  (after the filter above)
import torch.distributed.pipelining.schedules as schedules  # noqa: E402
from torch.distributed.pipelining._utils import generate_stage_to_rank_mapping  # noqa: E402

TORCH_VERSION = torch.__version__.split("+")[0]


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--mario", required=True, help="the mario CLI under test")
    parser.add_argument("--repo", required=True, help="the repository root")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--verbose", action="store_true", help="print every case")
    return parser.parse_args()


class StandInStage:
    """What a schedule reads of a _PipelineStageBase while it builds and lowers an order.

    The schedule constructors read stage_index, num_stages, group_size and group_rank; the
    zero-bubble ones look at submod for torch.compile wrappers (None: no module); the
    schedule writes stage_index_to_group_rank back. Nothing here runs a tensor.
    """

    def __init__(self, stage_index, num_stages, group_size, group_rank):
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.group_size = group_size
        self.group_rank = group_rank
        self.submod = None
        self.is_first = stage_index == 0
        self.is_last = stage_index == num_stages - 1
        self.stage_index_to_group_rank = {}


def stages_on_rank(placement, rank, group_size):
    """The stand-in stages that `placement` (stage -> rank) puts on `rank`, in stage order."""
    num_stages = len(placement)
    return [StandInStage(s, num_stages, group_size, rank)
            for s in range(num_stages) if placement[s] == rank]


def style_placement(group_size, num_stages, style):
    """PyTorch's own stage -> rank rule: "loop" (s % P) or "v" (rank r: r and 2P-1-r)."""
    return generate_stage_to_rank_mapping(group_size, num_stages, style=style)


def read_csv_rows(path):
    """The cells of a schedule CSV, one list per rank, as PyTorch's csv reader sees them."""
    with open(path, newline="") as handle:
        return [list(row) for row in csv.reader(handle)]


def parse_rows(rows):
    """rank -> [_Action | None] with PyTorch's own parser (empty cell: idle slot, None)."""
    return {rank: [schedules._Action.from_str(cell) for cell in row]
            for rank, row in enumerate(rows)}


# One computation in a Mario plan program or a CSV cell: 3F0, 2I1, 0W4, 1B2, or an overlapped
# pair (0F3;3B1)OVERLAP_F_B. Everything else (SEND/RECV, OPT, REDUCE_GRAD, ...) is not compute.
_COMPUTE = re.compile(r"^(\d+[FBIW]\d+|\(.*\)OVERLAP_F_B)$")


def compute_only(cells):
    return [c for c in cells if _COMPUTE.match(c)]


class Mario:
    """Runs the CLI; each call returns (exit code, stdout, stderr)."""

    def __init__(self, path):
        self.path = path
        self.calls = 0

    def run(self, *args):
        self.calls += 1
        done = subprocess.run([self.path, *map(str, args)], capture_output=True, text=True,
                              timeout=120)
        return done.returncode, done.stdout, done.stderr

    def plan_json(self, path):
        with open(path) as handle:
            return json.load(handle)


def plan_placement(plan):
    """stage -> device of a Mario plan."""
    return {stage["index"]: stage["device"] for stage in plan["stages"]}


def plan_compute_order(plan):
    """rank -> the plan's computations in program order (communication and OPT left out)."""
    return {device["index"]: compute_only(device["program"]) for device in plan["devices"]}


class Checks:
    """Counts checks and keeps every failure, so one run reports them all, not the first."""

    def __init__(self, name, verbose=False):
        self.name = name
        self.verbose = verbose
        self.passed = 0
        self.failures = []

    def check(self, condition, case, what, detail=""):
        if condition:
            self.passed += 1
        else:
            message = f"FAIL [{case}] {what}" + (f"\n      {detail}" if detail else "")
            self.failures.append(message)
            print(message, flush=True)
        return condition

    def finish(self, summary):
        seconds = time.monotonic() - STARTED
        print(f"{self.name}: {summary}; {self.passed} checks passed, "
              f"{len(self.failures)} failed ({seconds:.1f} s, PyTorch {TORCH_VERSION})")
        return 0 if not self.failures else 1


class Scratch:
    """A folder under the temporary directory (peer-*), removed at exit unless --keep."""

    def __init__(self, keep):
        self.path = tempfile.mkdtemp(prefix="peer-")
        self.keep = keep

    def file(self, name):
        return os.path.join(self.path, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.keep:
            print(f"scratch kept: {self.path}")
        else:
            shutil.rmtree(self.path, ignore_errors=True)


def unit_cost_config(path, scheme, pp, microbatches, chunks=1, memory_limit_gb=None):
    """A teaching-mode config (docs/config-format.md): unit costs, no model or hardware."""
    config = {
        "format": "mario-config", "version": 1,
        "name": f"{scheme} pp{pp} m{microbatches} c{chunks}",
        "devices": pp,
        "parallel": {"scheme": scheme, "pp": pp, "chunks": chunks, "micro_batch_size": 1,
                     "global_batch_size": microbatches},
        "unit_costs": {"forward": 1, "backward": 2, "recompute": 1,
                       "activation_bytes": 1000, "checkpoint_bytes": 10, "static_bytes": 0},
        "microbatches": microbatches,
    }
    if memory_limit_gb is not None:
        config["memory_limit_gb"] = memory_limit_gb
    with open(path, "w") as handle:
        json.dump(config, handle)
    return path


def run_checked(command):
    """Runs a command; its stdout, or RuntimeError naming the command and its stderr."""
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def plan_and_export(mario_path, config, plan, csv_path, passes):
    """`mario plan CONFIG --passes PASSES -o PLAN`, then `mario export PLAN --csv CSV` (compute-only,
    with --drop-recompute when there are passes: PyTorch has no R). With passes, also whether the
    exported order differs from the config's own without passes, so a test can say that it ran
    an order Mario's passes made. Returns (recomputations dropped, reordered)."""
    run_checked([mario_path, "plan", config, "--passes", passes or "none", "-o", plan])
    said = run_checked([mario_path, "export", plan, "--csv", csv_path] + (["--drop-recompute"] if passes else []))
    if not passes:
        return 0, False
    plain = csv_path + ".plain"
    run_checked([mario_path, "plan", config, "--passes", "none", "-o", plain + ".json"])
    run_checked([mario_path, "export", plain + ".json", "--csv", plain + ".csv"])
    with open(plain + ".csv") as a, open(csv_path) as b:
        reordered = a.read() != b.read()
    dropped = re.search(r"(\d+) recomputation", said)
    return int(dropped.group(1)) if dropped else 0, reordered


def exit_with(code):
    sys.stdout.flush()
    sys.exit(code)
