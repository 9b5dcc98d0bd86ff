#!/usr/bin/env bash
# Everything the GPU issue asks of a GPU node, in one command, for a short lease (docs/gpu.md):
# build against the node's PyTorch, capabilities, reference-checked partitioned runs (Figure 2
# and Chimera, float32 and bfloat16, with and without the passes), a whole-GPU profile for the
# analytical model's comparison, a two-rank NCCL run with one rank killed, and the fidelity
# table (gpu_fidelity.sh). Each step has its own time limit, so one that hangs costs only its
# own minutes; every output lands in RESULTS (default ./gpu-results) and is packed after every
# step into PACK (default RESULTS/gpu-results.tar.gz), so what ran comes back even when a later
# step did not.
#   bash tests/bench/gpu_node_check.sh [RESULTS]
# Overrides: BUILD (build-node), SKIP_BUILD=1 (use BUILD as it is), PACK, MARIO_CUDA_ARCH (90),
# STEP_LIMIT_S (per-step seconds, 120), FIDELITY_LIMIT_S (per partition count, 300),
# DEADLINE_S (seconds from the start after which no step runs on: every step's limit is cut to
# what is left, so a lease's last minutes still pack; default none), and gpu_fidelity.sh's own
# (SCHEMES, PARTITIONS, ITERATIONS, REPEATS …).
# ONLY="refs calibrate sustained profile kappa nccl fidelity" runs only those groups after the node's description
# (and the build, unless SKIP_BUILD=1): a second call on a warm machine, e.g.
#   SKIP_BUILD=1 ONLY=fidelity PARTITIONS=4 bash tests/bench/gpu_node_check.sh DIR
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
results="$(mkdir -p "${1:-$root/gpu-results}" && cd "${1:-$root/gpu-results}" && pwd)"
build="${BUILD:-$root/build-node}"
limit="${STEP_LIMIT_S:-120}"
mario="$build/app/mario"
executor="$build/executor/mario-executor"
log="$results/log.txt"
pack_to="${PACK:-$results/gpu-results.tar.gz}"
: >"$log"
export PYTHONUNBUFFERED=1

# step NAME LIMIT CMD...: runs CMD with its output in RESULTS/NAME.out and the log, and records
# its exit status and seconds in RESULTS/steps.tsv.
step() {
  local name="$1" seconds="$2"; shift 2
  local start=$SECONDS rc
  if [[ -n "${DEADLINE_S:-}" ]]; then
    local left=$((DEADLINE_S - SECONDS))
    if ((left < 15)); then
      echo "== $name: skipped, ${left} s left of DEADLINE_S=$DEADLINE_S" | tee -a "$log"
      printf '%s\tskipped\t0\n' "$name" | tee -a "$results/steps.tsv" "$log"
      return 124
    fi
    ((seconds > left)) && seconds=$left
  fi
  echo "== $name (${seconds} s at most): $*" | tee -a "$log"
  timeout --kill-after=10 "$seconds" "$@" >"$results/$name.out" 2>&1
  rc=$?
  tail -n 40 "$results/$name.out" | tee -a "$log"
  printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - start))" | tee -a "$results/steps.tsv" "$log"
  pack
  return $rc
}
pack() { tar -C "$results" --exclude gpu-results.tar.gz -czf "$pack_to.tmp" . 2>/dev/null && mv "$pack_to.tmp" "$pack_to"; }
# wanted GROUP: whether ONLY (empty: everything) names it.
wanted() { [[ -z "${ONLY:-}" || " $ONLY " == *" $1 "* ]]; }

step node 30 bash -c 'nvidia-smi; nvidia-smi -q -d CLOCK | head -30; nproc; cmake --version | head -1;
  python3 -c "import torch; print(\"torch\", torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0),
  torch.cuda.get_device_properties(0).multi_processor_count, \"SMs\")"'

[[ "${SKIP_BUILD:-0}" == 1 ]] || step build 300 env MARIO_CUDA_ARCH="${MARIO_CUDA_ARCH:-90}" MARIO_NODE_BUILD="$build" \
  bash "$root/packaging/gpu-node.sh" || { echo "build failed; nothing else can run" | tee -a "$log"; exit 1; }

wanted refs && step capabilities 60 "$executor" capabilities

# unit_config FILE SCHEME PP MICROBATCHES: a config of unit costs (what the runs check is the
# executor, not the costs).
unit_config() {
  cat >"$1" <<JSON
{"format": "mario-config", "version": 1, "name": "$2 $3x$4, unit costs", "devices": $3,
 "parallel": {"scheme": "$2", "pp": $3, "dp": 1, "tp": 1, "micro_batch_size": 1},
 "unit_costs": {"forward": 1, "backward": 2, "recompute": 1, "activation_bytes": 1000,
                "checkpoint_bytes": 10, "static_bytes": 0},
 "microbatches": $4}
JSON
}

# Reference-checked partitioned runs: every gradient against a one-device run.
refs() {
unit_config "$results/chimera.config.json" chimera 4 8
"$mario" plan "$root/resources/examples/figure2.config.json" -o "$results/fig2-all.mario.json"
"$mario" plan "$root/resources/examples/figure2.config.json" --passes none -o "$results/fig2-none.mario.json"
"$mario" plan "$results/chimera.config.json" --passes all -o "$results/chimera-all.mario.json"
for dtype in float32 bfloat16; do
  for plan in fig2-none fig2-all chimera-all; do
    step "ref-$plan-$dtype" "$limit" "$executor" run "$results/$plan.mario.json" --backend cuda \
      --partition-sms --reference --dtype "$dtype" --model tiny --iterations 3
  done
done
# The same with a GPT the size of the fidelity table's, so partitions are busy for real.
step ref-fig2-all-big "$limit" "$executor" run "$results/fig2-all.mario.json" --backend cuda \
  --partition-sms --reference --dtype bfloat16 --iterations 3 \
  --model layers=8,hidden=4096,heads=32,seq=2048,vocab=32000
}
# The calibrated preset (docs/calibration.md) and its check: one block on the whole GPU, measured
# as profile measures it, against the block core's model predicts from the new preset and from
# the shipped h100 and h200 presets.
wanted calibrate && step calibrate "$limit" "$executor" calibrate --device cuda:0 \
  --model "${CALIBRATE_MODEL:-layers=3,hidden=4096,heads=32,seq=2048,vocab=32000}" --links-from h100 \
  --name gpu-calibrated --check-against h100,h200 -o "$results/gpu-calibrated.json"

# The GEMM rate the GPU holds over a long run against its first second (docs/cost-model.md,
# hardware presets: what the H100 preset's calibrated gemm_efficiency carries beside the kernels
# calibrate times at the boost clock): one bf16 product back to back, with the SM clock and power.
wanted sustained && step sustained-gemm "$limit" python3 "$root/tests/bench/sustained_gemm.py" \
  --seconds "${SUSTAINED_S:-60}" -o "$results/sustained-gemm.json"

# The whole GPU, unpartitioned: the profile the analytical model's prediction is compared with.
wanted profile && step profile-whole-gpu "$limit" "$executor" profile --model layers=8,hidden=4096,heads=32,seq=2048,vocab=32000 \
  --device cuda:0 --dtype bfloat16 --optimizer adam --max-blocks 4 --repeats 10 -o "$results/whole-gpu.profile.json"

# Contention at each number of busy neighbours (docs/gpu.md, "The two rows outside"): on one of 4
# partitions, beside 1, 2 and 3 of the others running the same blocks. One number per neighbour
# measured under full load over-charged 1F1B 4×8's partly loaded neighbours (+6.6%); these say
# whether contention per neighbour falls with fewer busy, and the optimizer step's beside as many
# stepping (source.contention.optimizer_step), which no profile on a GPU has measured yet.
for n in ${KAPPA_NEIGHBOURS:-1 2 3}; do
  wanted kappa && step "kappa-p4-n$n" "$limit" "$executor" profile \
    --model layers=8,hidden=4096,heads=32,seq=2048,vocab=32000 --device cuda:0 --dtype bfloat16 --optimizer adam \
    --partition-sms 4 --neighbours "$n" --max-blocks 2 --repeats 5 -o "$results/kappa-p4-n$n.profile.json"
done

# NCCL: two ranks, one killed mid-run; the survivor must end and name it (README, "Running a plan").
# NCCL needs a GPU per rank, so each rank gets its own (LOCAL_RANK) and one GPU skips the check.
nccl_kill() {
  local plan="$results/nccl.mario.json" start pid0 pid1 rc0 gpus
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  # One GPU: NCCL refuses two ranks on it, and mario-executor says so before NCCL is touched (the
  # ranks compare their GPUs through the store, ProcessGroupTransport); nothing to learn here.
  if ((gpus < 2)); then echo "skipped: $gpus GPU(s); the kill check needs a GPU per rank"; return 0; fi
  unit_config "$results/nccl.config.json" 1f1b 2 4
  "$mario" plan "$results/nccl.config.json" --passes none -o "$plan" || return 1
  for r in 0 1; do
    RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 \
      "$executor" run "$plan" --backend cuda --iterations 100000 --dtype float32 \
      --model layers=4,hidden=1024,heads=16,seq=512,vocab=1000 >"$results/nccl-rank$r.out" 2>&1 &
    eval "pid$r=$!"
  done
  sleep 15
  echo "rank 0 alive before the kill: $(kill -0 "$pid0" 2>/dev/null && echo yes || echo no)"
  echo "rank 1 alive before the kill: $(kill -0 "$pid1" 2>/dev/null && echo yes || echo no)"
  start=$(date +%s.%N)
  kill -9 "$pid1" 2>/dev/null
  wait "$pid0"; rc0=$?
  echo "rank 0 exit $rc0, $(python3 -c "print(round($(date +%s.%N) - $start, 2))") s after rank 1 was killed"
  echo "--- rank 0:"; tail -n 5 "$results/nccl-rank0.out"
  echo "--- rank 1:"; tail -n 5 "$results/nccl-rank1.out"
}
export -f nccl_kill unit_config
export results mario executor
wanted nccl && step nccl-kill 90 bash -c nccl_kill

# The fidelity table: 1F1B, ZB-H1 and Chimera, without and with the passes, on 2 and 4 partitions,
# one step per partition count so each is packed before the next begins.
for p in ${PARTITIONS:-2 4}; do
  mkdir -p "$results/fidelity-p$p"
  wanted fidelity && step "fidelity-p$p" "${FIDELITY_LIMIT_S:-300}" env BUILD="$build" WORK="$results/fidelity-p$p" \
    PARTITIONS="$p" SCHEMES="${SCHEMES:-1f1b zb-h1 chimera}" ITERATIONS="${ITERATIONS:-10}" \
    REPEATS="${REPEATS:-10}" bash "$root/tests/bench/gpu_fidelity.sh" --skip-build
done
# Last, as a lease's minutes allow: the reference-checked runs (the fidelity runs above already
# ran the same executor paths, without the gradient comparison).
wanted refs && refs
echo "done; results in $results" | tee -a "$log"
pack
