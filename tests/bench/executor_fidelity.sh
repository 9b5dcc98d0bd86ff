#!/usr/bin/env bash
# Simulated vs measured step time on the CPU backend (issue 5, "Fidelity"): profiles a model with
# `mario-executor profile`, plans schedules whose stage costs come from that profile, simulates
# them with `mario simulate`, runs them with `mario-executor`, and prints one row per schedule:
# simulated ms, measured ms (median of the iterations after the first, and their spread), error;
# then the peak memory, simulated and measured (the executor's peak_allocated_bytes), of the
# device where they differ most, and that error; under each row the contention the run itself
# shows and what it costs beyond the profile alone (instruction_fidelity.py on its --events).
# Devices run as threads, so keep devices <= cores for a fair number.
#   bash tests/bench/executor_fidelity.sh [BUILD_DIR] [MODEL] [ITERATIONS]
# BUILD_DIR holds app/mario and executor/mario-executor: `build` (Debian's LibTorch 1.13) or
# `build-torch2` (PyTorch 2.x's LibTorch, the torch2 preset).
# On a GPU machine: BACKEND=cuda DTYPE=float32 bash tests/bench/executor_fidelity.sh build-node
# (single-GPU mode: the pipeline devices share the GPU, one stream each, so their kernels
# contend where separate GPUs would not — read the error with that in mind).
set -euo pipefail
build="${1:-build}"
model="${2:-layers=8,hidden=128,heads=4,seq=64,vocab=256}"
iterations="${3:-7}"
backend="${BACKEND:-cpu}"
dtype="${DTYPE:-float64}"
device=cpu
[[ "$backend" == cuda ]] && device=cuda:0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
IFS=, read -ra kv <<<"$model"
declare -A m=([layers]=8 [hidden]=32 [heads]=4 [seq]=16 [vocab]=64)
for pair in "${kv[@]}"; do m[${pair%%=*}]=${pair#*=}; done

# Every row runs 2 devices: each stage is timed alone and beside 1 busy neighbour (its contention).
neighbours=1
[[ "$backend" == cuda ]] && neighbours=0  # one GPU's streams without partitions: gpu_fidelity.sh
"$build/executor/mario-executor" profile --model "$model" --max-blocks 4 --repeats 5 --device "$device" \
    --dtype "$dtype" --neighbours "$neighbours" -o "$work/cpu.profile.json" >/dev/null
printf '%-26s %10s %10s %10s %8s %12s %12s %8s\n' schedule simulated measured spread error \
    'peak sim' 'peak meas' error
for scheme in 1f1b:2:8 zb-h1:2:8 gpipe:2:8 chimera:2:8 1f1b:2:8:all zb-h1:2:8:all chimera:2:8:all; do
  IFS=: read -r name pp mb passes <<<"$scheme"
  cat >"$work/c.config.json" <<JSON
{"format": "mario-config", "version": 1, "name": "cpu fidelity",
 "model": {"format": "mario-model", "version": 1, "name": "cpu", "layers": ${m[layers]}, "hidden": ${m[hidden]},
           "heads": ${m[heads]}, "kv_heads": ${m[heads]}, "ffn_hidden": $((4 * ${m[hidden]})), "vocab": ${m[vocab]},
           "sequence_length": ${m[seq]}, "gated_mlp": false, "tied_embeddings": false},
 "hardware": "a100-40g", "devices": $pp, "profile": "$work/cpu.profile.json",
 "parallel": {"scheme": "$name", "pp": $pp, "dp": 1, "tp": 1, "micro_batch_size": 1}, "microbatches": $mb}
JSON
  "$build/app/mario" plan "$work/c.config.json" --passes "${passes:-none}" -o "$work/p.mario.json" >/dev/null
  "$build/app/mario" simulate "$work/p.mario.json" --json >"$work/sim.json"
  "$build/executor/mario-executor" run "$work/p.mario.json" --backend "$backend" --dtype "$dtype" \
      --model "$model" --iterations "$iterations" --events >"$work/run.json"
  python3 - "$work/run.json" "$work/sim.json" "$name ${pp}x$mb ${passes:-none}" <<'PY'
import json, statistics, sys
run = json.loads(open(sys.argv[1]).read().splitlines()[-1])
sim = json.load(open(sys.argv[2]))
steps = run["step_ms"][1:]
simulated, measured = float(sim["makespan"]), statistics.median(steps)
spread = (max(steps) - min(steps)) / measured
# The error is core/session/Fidelity.h's simulationError(): (simulated − measured) / measured.
peaks = [(d["peak_memory_bytes"], m) for d, m in zip(sim["devices"], run["peak_allocated_bytes"])]
worst = max(peaks, key=lambda p: abs(p[0] - p[1]) / p[1])
print(f"{sys.argv[3]:<26} {simulated:10.2f} {measured:10.2f} {100*spread:9.1f}% {100*(simulated-measured)/measured:+7.1f}%"
      f" {worst[0]/1e6:9.2f} MB {worst[1]/1e6:9.2f} MB {100*(worst[0]-worst[1])/worst[1]:+7.1f}%")
PY
  # The run's own contention and its offset from the profile (tests/bench/instruction_fidelity.py).
  echo "    $(python3 "$(dirname "${BASH_SOURCE[0]}")/instruction_fidelity.py" "$work/p.mario.json" "$work/run.json" | tail -n 1)"
done
