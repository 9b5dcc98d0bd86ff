#!/usr/bin/env bash
# Step time of a multi-process CPU run through two executors (issue 42: PyTorch's Gloo process
# groups against the project's former TCP mesh), in one call: runs of the two alternate, A B A B,
# so both see the same machine, and each run is one 4-rank world launched as torchrun launches it
# (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT). Prints per variant the median, min and
# max over runs of each run's median step (iterations after the first), and A/B per pair.
#   A=path/to/mario-executor B=path/to/other [ENV_A="X=1"] [ENV_B="MARIO_DIST=mesh"] \
#     bash tests/bench/executor_transport.sh PLAN [RUNS] [MODEL] [ITERATIONS]
# PLAN must have 4 pipeline devices (e.g. tests/bench/data/h200-2026-11-26/1f1b-4-none.mario.json).
set -euo pipefail
plan="$1"
runs="${2:-5}"
model="${3:-layers=8,hidden=64,heads=4,seq=32,vocab=64}"
iterations="${4:-10}"
: "${A:?A=path of the executor to measure}" "${B:?B=path of the executor to compare with}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# One 4-rank world of executor $1 with the environment words in $2; appends rank 0's summary to $3.
world() {
  local bin="$1" extra="$2" out="$3" port r pids=()
  port="$(free_port)"
  for r in 0 1 2 3; do
    # shellcheck disable=SC2086 # $extra is a list of VAR=value words
    env $extra RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      "$bin" run "$plan" --backend cpu --iterations "$iterations" --model "$model" >"$work/rank$r" 2>&1 &
    pids+=($!)
  done
  for r in "${pids[@]}"; do wait "$r"; done
  tail -n 1 "$work/rank0" >>"$out"
}

for ((i = 0; i < runs; i++)); do
  world "$A" "${ENV_A:-}" "$work/a.jsonl"
  world "$B" "${ENV_B:-}" "$work/b.jsonl"
done

python3 - "$work/a.jsonl" "$work/b.jsonl" "$runs" "$model" "$iterations" <<'PY'
import json, os, statistics, sys
def steps(path):
    return [statistics.median(json.loads(l)["step_ms"][1:]) for l in open(path)]
a, b = steps(sys.argv[1]), steps(sys.argv[2])
print(f"# {sys.argv[3]} runs each, alternating; model {sys.argv[4]}; {sys.argv[5]} iterations a run; "
      f"{os.cpu_count()} cores; each run's figure: median step (ms) after the first iteration")
print("| variant | median | min | max |")
print("|---|---|---|---|")
for name, v in (("A", a), ("B", b)):
    print(f"| {name} | {statistics.median(v):.1f} | {min(v):.1f} | {max(v):.1f} |")
r = [x / y for x, y in zip(a, b)]
print(f"| A/B per pair | {statistics.median(r):.2f} | {min(r):.2f} | {max(r):.2f} |")
PY
