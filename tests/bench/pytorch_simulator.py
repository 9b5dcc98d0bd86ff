#!/usr/bin/env python3
"""Mario's simulator against PyTorch's own, on the same schedules (issue 45).

PyTorch 2.x's torch.distributed.pipelining lowers a compute_only order to compute+comms
(_add_send_recv: SEND/RECV actions in a round robin over the ranks) and dry-runs it
(_simulate_comms_compute: every rank steps until each RECV finds its SEND). That is the
nearest thing PyTorch has to `mario simulate`, so it is the yardstick: for 1F1B with PP × m of
4 × 8, 8 × 32, 16 × 64 and 32 × 128 (GPT-3 1.6B on A100-40G, no passes) this script
  - writes the plan with `mario plan`, and the order PyTorch reads with `mario export --csv`
    (compute_only), so both simulators get the same order;
  - times PyTorch's lowering plus dry run on that order in this process (best of 5, after the
    import of torch), and the dry run alone (its best of the same 5): the lowering is what
    `mario plan` does, which `simulate_us` does not time, so simulate_us against the dry run
    alone is the nearer like for like (ours still times every instruction and the summary,
    theirs only steps the ranks until each RECV finds its SEND);
  - reads `simulate_us` from `mario simulate PLAN --json` (the simulator alone: the best of up
    to 7 runs inside the process, with the summary: bounds, critical chain, FLOPs);
  - times the whole `mario simulate PLAN --json` process (start-up, reading the plan, the
    simulation, the JSON) from outside, 9 times: the best, comparable with PyTorch's best of 5,
    and the median, which on a loaded machine mostly adds the wait for a core.
and prints one Markdown table with the ratios. Then, because a shared machine's speed drifts by
half within minutes (the same simulation took 8.5 µs and 13 µs a quarter of an hour apart),
ROUNDS rounds that time both simulators back to back, PyTorch's dry run with its lowering (best
of 5) and one `mario simulate` process's simulate_us, so that each round's ratio compares the two
under the same conditions: a second table gives the median, lowest and highest of those ratios
per size. Each round reads simulate_us twice: as `mario simulate` reports it (its best of up to 7,
about 0.1 ms of runs at 8 × 32), and with `--time-ms` set to how long PyTorch's best of 5 took
(about 40 ms). A neighbour on the same core slows any busy loop by up to half in phases of
milliseconds to seconds (docs/benchmarks.md), so a best over 0.1 ms and a
best over 40 ms sample different machines; equal windows compare the programs. Run it with the interpreter that has PyTorch:

    .venv-torch/bin/python tests/bench/pytorch_simulator.py [build/app/mario] [--sizes 4x8,8x32] [--rounds N]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MARIO = os.path.join(HERE, "..", "..", "build", "app", "mario")
SIZES = [(4, 8), (8, 32), (16, 64), (32, 128)]
REPEATS = 5
PROCESS_REPEATS = 9
ROUNDS = 15


def config(pp, m):
    return {"format": "mario-config", "version": 1, "name": f"gpt3-1.6b 1f1b {pp}x{m}", "model": "gpt3-1.6b",
            "hardware": "a100-40g", "devices": pp,
            "parallel": {"scheme": "1f1b", "pp": pp, "dp": 1, "tp": 1, "micro_batch_size": 1,
                         "global_batch_size": m}}


def read_order(path, schedules):
    """compute_only CSV -> {rank: [_Action]} (empty cells are idle slots)."""
    order = {}
    with open(path) as f:
        for rank, line in enumerate(f.read().splitlines()):
            order[rank] = [schedules._Action.from_str(cell.strip()) for cell in line.split(",") if cell.strip()]
    return order


def time_pytorch(order, pp, schedules):
    """(lowering + dry run, dry run alone) in µs, each the best of REPEATS, and the ms the REPEATS took."""
    stage_to_rank = lambda s: s % pp  # 1F1B: one stage per rank  # noqa: E731
    best = best_dry = float("inf")
    window_start = time.perf_counter()
    for _ in range(REPEATS):
        fresh = {rank: list(actions) for rank, actions in order.items()}  # the lowering empties its input
        start = time.perf_counter()
        lowered = schedules._add_send_recv(fresh, stage_to_rank=stage_to_rank, num_stages=pp)
        lowered_at = time.perf_counter()
        schedules._simulate_comms_compute(lowered, stage_to_rank, pp)
        end = time.perf_counter()
        best = min(best, end - start)
        best_dry = min(best_dry, end - lowered_at)
    return best * 1e6, best_dry * 1e6, (time.perf_counter() - window_start) * 1e3


def time_mario(mario, plan):
    walls, sim = [], []
    for _ in range(PROCESS_REPEATS):
        start = time.perf_counter()
        run = subprocess.run([mario, "simulate", plan, "--json"], check=True, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        sim.append(json.loads(run.stdout)["simulate_us"])
    return min(sim), min(walls) * 1e6, statistics.median(walls) * 1e6, json.loads(run.stdout)["instructions"]


def simulate_us(mario, plan, *extra):
    run = subprocess.run([mario, "simulate", plan, "--json", *extra], check=True, capture_output=True, text=True)
    return json.loads(run.stdout)["simulate_us"]


def paired_rounds(mario, plan, order, pp, schedules, rounds):
    """Per round, timed back to back: PyTorch's lowering + dry run (best of REPEATS) over mario's
    simulate_us as `mario simulate` reports it (best of up to 7, about 0.1 ms at 8 × 32), and over
    mario's best in a window as long as PyTorch's REPEATS took (--time-ms)."""
    default, equal = [], []
    for _ in range(rounds):
        theirs, _, window_ms = time_pytorch(order, pp, schedules)
        default.append(theirs / simulate_us(mario, plan))
        equal.append(theirs / simulate_us(mario, plan, "--time-ms", f"{window_ms:.3f}"))
    return default, equal


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return
    sizes = SIZES
    if "--sizes" in args:
        at = args.index("--sizes")
        sizes = [tuple(int(x) for x in size.split("x")) for size in args[at + 1].split(",")]
        del args[at:at + 2]
    rounds = ROUNDS
    if "--rounds" in args:
        at = args.index("--rounds")
        rounds = int(args[at + 1])
        del args[at:at + 2]
    mario = args[0] if args else DEFAULT_MARIO
    try:
        import torch
        import torch.distributed.pipelining.schedules as schedules
    except ImportError:
        sys.exit("pytorch_simulator.py: needs PyTorch (run it with .venv-torch/bin/python)")
    print(f"PyTorch {torch.__version__}; mario {mario}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}")
    print("| PP × m | instructions | PyTorch lower + dry run µs | mario simulate_us | ratio | "
          "mario simulate process µs, best | ratio | median | ratio | PyTorch dry run alone µs | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    paired = []
    with tempfile.TemporaryDirectory() as tmp:
        for pp, m in sizes:
            path = os.path.join(tmp, f"c{pp}x{m}.config.json")
            plan = os.path.join(tmp, f"p{pp}x{m}.mario.json")
            csv = os.path.join(tmp, f"p{pp}x{m}.csv")
            with open(path, "w") as f:
                json.dump(config(pp, m), f)
            subprocess.run([mario, "plan", path, "--passes", "none", "-o", plan], check=True, capture_output=True)
            subprocess.run([mario, "export", plan, "--csv", csv], check=True, capture_output=True)
            order = read_order(csv, schedules)
            theirs, dry, _ = time_pytorch(order, pp, schedules)
            ours, best, median, instructions = time_mario(mario, plan)
            print(f"| {pp} × {m} | {instructions} | {theirs:.0f} | {ours:.1f} | {theirs / ours:.0f}× | "
                  f"{best:.0f} | {theirs / best:.1f}× | {median:.0f} | {theirs / median:.1f}× | "
                  f"{dry:.0f} | {dry / ours:.0f}× |")
            if rounds > 0:
                paired.append((pp, m, paired_rounds(mario, plan, order, pp, schedules, rounds)))
    if paired:
        print(f"\n{rounds} rounds, each PyTorch's lowering + dry run (best of {REPEATS}) over one process's "
              "simulate_us, timed back to back: as `mario simulate` reports it (best of up to 7), and the best "
              "in a window as long as PyTorch's runs took (--time-ms):\n")
        print("| PP × m | timing of simulate_us | median ratio | lowest | highest | rounds at 1000× or more |")
        print("|---|---|---|---|---|---|")
        for pp, m, (default, equal) in paired:
            for name, ratios in (("best of up to 7", default), ("equal windows", equal)):
                print(f"| {pp} × {m} | {name} | {statistics.median(ratios):.0f}× | {min(ratios):.0f}× | "
                      f"{max(ratios):.0f}× | {sum(r >= 1000 for r in ratios)} of {len(ratios)} |")

if __name__ == "__main__":
    main()
