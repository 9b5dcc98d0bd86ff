#!/usr/bin/env bash
# Simulated vs measured on one GPU cut into SM partitions (issue 15, docs/gpu.md#fidelity): one
# command on a GPU node builds mario-executor, profiles the model on a P-way partition, alone and
# with the other partitions busy (the stages' contention: sim/SharedHardware.h), and for 1F1B, ZB-H1 and Chimera, without and with Mario's passes, on 2 and 4
# partitions, plans with that profile (`mario plan`), simulates (`mario simulate --json`), runs
# (`mario-executor run --backend cuda --partition-sms`) and prints one row each: simulated and
# measured step time (median of the iterations after warm-up, and their spread) and each
# device's peak memory, with the error (simulated − measured) / measured, core/session/Fidelity's
# formula. The target is within 5% for both. Then, per row, the contention the run itself shows
# (instruction_fidelity.py on its --events; the whole table in WORK/*.instructions.txt).
#   bash tests/bench/gpu_fidelity.sh [--dry-run] [--skip-build]
# --dry-run prints every command it would run and every row it would fill, and runs nothing.
# Overrides: BUILD (build-node), MODEL (layers=8,hidden=4096,heads=32,seq=2048,vocab=32000),
# PARTITIONS ("2 4"), SCHEMES ("1f1b zb-h1 chimera"), MICROBATCHES (8), ITERATIONS (12), WARMUP (2),
# REPEATS (20), DTYPE (bfloat16), MARIO_CUDA_ARCH (for packaging/gpu-node.sh), WORK (a folder that
# keeps every profile, plan, simulation and run; default a scratch folder removed at the end),
# PROFILES (a folder with pP.profile.json measured before: used instead of profiling), ROWS
# (only these rows, named SCHEME-P-PASSES as their files are, e.g. "chimera-2-all zb-h1-4-all").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dry=0
build_first=1
for arg in "$@"; do
  case "$arg" in
    --dry-run) dry=1 ;;
    --skip-build) build_first=0 ;;
    *) echo "gpu_fidelity.sh: unknown option $arg (--dry-run, --skip-build)" >&2; exit 2 ;;
  esac
done
build="${BUILD:-$root/build-node}"
model="${MODEL:-layers=8,hidden=4096,heads=32,seq=2048,vocab=32000}"
partitions="${PARTITIONS:-2 4}"
schemes="${SCHEMES:-1f1b zb-h1 chimera}"
microbatches="${MICROBATCHES:-8}"
iterations="${ITERATIONS:-12}"
warmup="${WARMUP:-2}"
repeats="${REPEATS:-20}"
dtype="${DTYPE:-bfloat16}"
mario="$build/app/mario"
executor="$build/executor/mario-executor"
# A dry run names a scratch folder it never creates.
if ((dry)); then work="${WORK:-${TMPDIR:-/tmp}/gpu-fidelity}"
elif [[ -n "${WORK:-}" ]]; then work="$WORK"; mkdir -p "$work"
else work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT; fi

# Runs a command, or prints it (shell-quoted) in a dry run. `to FILE cmd...` sends stdout to FILE.
run() {
  if ((dry)); then printf '%q ' "$@" | sed 's/ $//'; echo; else "$@"; fi
}
to() {
  local file="$1"; shift
  if ((dry)); then printf '%q ' "$@" | sed 's/ $//'; echo " > $file"; else "$@" >"$file"; fi
}

IFS=, read -ra kv <<<"$model"
declare -A m=([layers]=8 [hidden]=32 [heads]=4 [seq]=16 [vocab]=64)
for pair in "${kv[@]}"; do m[${pair%%=*}]=${pair#*=}; done

# The config of one row. Links are free: the executor hands tensors between partitions in GPU
# memory (an event, no copy). Costs and memory come from the profile.
config() {
  local scheme="$1" pp="$2" profile="$3" file="$4"
  if ((dry)); then echo "# write $file: scheme $scheme, pp $pp, $microbatches micro-batches, profile $profile"; return; fi
  cat >"$file" <<JSON
{"format": "mario-config", "version": 1, "name": "gpu fidelity $scheme ${pp} partitions",
 "model": {"name": "gpu-fidelity", "layers": ${m[layers]}, "hidden": ${m[hidden]}, "heads": ${m[heads]},
           "kv_heads": ${m[heads]}, "ffn_hidden": $((4 * ${m[hidden]})), "vocab": ${m[vocab]},
           "sequence_length": ${m[seq]}, "gated_mlp": false, "tied_embeddings": false},
 "hardware": {"name": "one GPU in SM partitions", "peak_tflops": 989, "memory_gb": 80, "hbm_gb_per_s": 3350,
              "intra_node_gb_per_s": 1000000, "inter_node_gb_per_s": 1000000, "link_latency_ms": 0},
 "devices": $pp, "profile": "$profile",
 "parallel": {"scheme": "$scheme", "pp": $pp, "dp": 1, "tp": 1, "micro_batch_size": 1},
 "microbatches": $microbatches}
JSON
}

# One row of the table from the simulation and the run (the run's last stdout line is its summary).
row() {
  local label="$1" sim="$2" measured="$3"
  if ((dry)); then echo "# row: $label  <- $sim, $measured"; return; fi
  python3 - "$label" "$sim" "$measured" "$warmup" <<'PY'
import json, statistics, sys
label, sim_path, run_path, warmup = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sim = json.load(open(sim_path))
try:
    run = json.loads(open(run_path).read().splitlines()[-1])
    run["step_ms"]  # a run that failed mid-way ends with an instruction event, not its summary
except (IndexError, ValueError, KeyError):
    sys.exit(print(f"{label:<24} {sim['makespan']:9.1f}  the run wrote no summary (see its stderr above)"))
steps = run["step_ms"][warmup:] or run["step_ms"]
measured = statistics.median(steps)
spread = (max(steps) - min(steps)) / measured
err = lambda s, m: (s - m) / m  # core/session/Fidelity.h's simulationError
sim_peaks = [d["peak_memory_bytes"] for d in sim["devices"]]
run_peaks = run.get("peak_allocated_bytes", [])
mem = [err(s, m) for s, m in zip(sim_peaks, run_peaks) if m > 0]
worst = max(mem, key=abs) if mem else float("nan")
ok = abs(err(sim["makespan"], measured)) <= 0.05 and mem and all(abs(e) <= 0.05 for e in mem)
print(f"{label:<24} {sim['makespan']:9.1f} {measured:9.1f} {100*spread:6.1f}% {100*err(sim['makespan'], measured):+7.1f}%"
      f" {max(sim_peaks)/1e9:8.2f} {max(run_peaks or [0])/1e9:8.2f} {100*worst:+7.1f}%  {'ok' if ok else 'OFF'}")
print("    per device GB, simulated / measured: " +
      "  ".join(f"{s/1e9:.2f}/{m/1e9:.2f}" for s, m in zip(sim_peaks, run_peaks)))
PY
}

if ((build_first)); then
  run env MARIO_CUDA_ARCH="${MARIO_CUDA_ARCH:-native}" MARIO_NODE_BUILD="$build" bash "$root/packaging/gpu-node.sh"
fi

rows=()
for pp in $partitions; do
  profile="$work/p$pp.profile.json"
  if [[ -n "${PROFILES:-}" ]]; then
    # A profile measured earlier (a second lease finishing the rows of a first): copied, not measured.
    run cp "$PROFILES/p$pp.profile.json" "$profile"
  else
    # Measured on one of pp partitions, alone and while the other pp − 1 run the same blocks (the
    # simulation stretches each instruction by the neighbours busy beside it), with the optimizer
    # step the runs take (Adam).
    to "$work/p$pp.profile.out" "$executor" profile --model "$model" --device cuda:0 --dtype "$dtype" \
      --partition-sms "$pp" --optimizer adam --max-blocks 4 --repeats "$repeats" -o "$profile"
  fi
  for scheme in $schemes; do
    for passes in none all; do
      label="$scheme ${pp}x$microbatches $passes"
      stem="$work/$scheme-$pp-$passes"
      # ROWS="chimera-2-none zb-h1-4-all …" runs only those rows.
      [[ -z "${ROWS:-}" || " $ROWS " == *" $scheme-$pp-$passes "* ]] || continue
      config "$scheme" "$pp" "$profile" "$stem.config.json"
      run "$mario" plan "$stem.config.json" --passes "$passes" -o "$stem.mario.json"
      to "$stem.sim.json" "$mario" simulate "$stem.mario.json" --json
      # --events: every instruction's times, before the summary line, for instruction_fidelity.py.
      to "$stem.run.json" "$executor" run "$stem.mario.json" --backend cuda --partition-sms --dtype "$dtype" \
        --model "$model" --optimizer adam --iterations "$iterations" --events ||
        echo "$label: the run failed (exit $?)" >&2
      rows+=("$label|$stem.sim.json|$stem.run.json")
    done
  done
done

printf '\n%-24s %9s %9s %7s %8s %8s %8s %8s\n' row "sim ms" "meas ms" spread "step err" "sim GB" "meas GB" "mem err"
for r in "${rows[@]}"; do
  IFS='|' read -r label sim measured <<<"$r"
  row "$label" "$sim" "$measured"
done

# Which instructions part from their costs, row by row (tests/bench/instruction_fidelity.py), each
# table kept beside its run; here the run's own contention per busy neighbour and what it costs
# beyond the profile alone, to hold against the profile's contention.
echo
for r in "${rows[@]}"; do
  IFS='|' read -r label sim measured <<<"$r"
  stem="${measured%.run.json}"
  if ((dry)); then
    echo "# instructions: python3 $root/tests/bench/instruction_fidelity.py $stem.mario.json $measured > $stem.instructions.txt"
    continue
  fi
  if python3 "$root/tests/bench/instruction_fidelity.py" "$stem.mario.json" "$measured" --warmup "$warmup" \
      >"$stem.instructions.txt" 2>&1; then
    printf '%-24s %s\n' "$label" "$(tail -n 1 "$stem.instructions.txt")"
  else
    printf '%-24s no instruction events (%s)\n' "$label" "$(tail -n 1 "$stem.instructions.txt")"
  fi
done
